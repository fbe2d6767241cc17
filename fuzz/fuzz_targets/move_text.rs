//! Move text against a live game: from each variant's initial position, the
//! fuzzer's bytes are a line of move texts (one per line, as a client sends
//! them). Each is refused or played, never a panic; a refused one leaves the
//! position as it was, and an accepted one is among the legal moves.
#![no_main]

use engine::variant::VariantPosition;
use engine::{Direction, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let variant = [Variant::Sanguo, Variant::Anqi, Variant::Yanyi][usize::from(which) % 3];
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let mut pos: VariantPosition = variant.initial(Direction::Ccw);
    for line in text.lines().take(64) {
        let start = pos.clone();
        let before = pos.to_text();
        match pos.play_text(line) {
            Ok(()) => {
                // Some legal move leads to the same position (the text may be
                // another spelling of it, but never a move that is not legal).
                let after = pos.to_text();
                let reached = start.legal_move_texts().into_iter().any(|m| {
                    let mut p = start.clone();
                    p.play_text(&m).is_ok() && p.to_text() == after
                });
                assert!(reached, "{variant:?} {before:?}: {line:?} was played but no legal move does that");
            }
            Err(_) => assert_eq!(pos.to_text(), before, "{variant:?}: a refused {line:?} changed the position"),
        }
        if pos.seat_to_move().is_none() {
            break;
        }
    }
});
