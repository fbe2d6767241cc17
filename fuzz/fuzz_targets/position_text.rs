//! Position text of every variant (RULES §7, RULES-ANQI §11.3, RULES-YANYI
//! §10.3): any text is refused with an error or accepted as a position whose
//! own text is canonical — it parses again to the same text — and whose
//! generated moves the position accepts (move generation and `play` agree).
#![no_main]

use engine::variant::VariantPosition;
use engine::Variant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let variant = [Variant::Sanguo, Variant::Anqi, Variant::Yanyi][usize::from(which) % 3];
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let Ok(pos) = VariantPosition::from_text(variant, text) else { return };
    let canonical = pos.to_text();
    let again = VariantPosition::from_text(variant, &canonical)
        .unwrap_or_else(|e| panic!("{variant:?}: its own text {canonical:?} is refused: {e}"));
    assert_eq!(again.to_text(), canonical, "{variant:?}: the text is not canonical");
    for mv in pos.legal_move_texts() {
        let mut p = pos.clone();
        p.play_text(&mv)
            .unwrap_or_else(|e| panic!("{variant:?} {canonical:?}: generated {mv} is refused: {e}"));
    }
});
