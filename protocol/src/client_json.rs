//! A client's message read from its JSON: serde's derived reader, with the
//! one message every move brings read by hand first. serde reads an
//! internally tagged enum (`"type"`) by buffering the whole object into a
//! tree of its own (a string allocated for each key and value) and then
//! reading the variant out of that tree: ~2,700 instructions for a
//! `{"type":"move","ply":12,"mv":"W12-W13"}`. The hand-written reader takes
//! only that message in its plain shapes (no whitespace, the three keys once
//! each, `ply` before or after `mv`, a move text without escapes) and answers
//! exactly what serde answers for them; anything else goes to serde, whose
//! answer (a value or an error) stands. Tests hold the two equal on generated
//! texts near the plain shapes: bent in their parts, and cut into pieces and
//! edited.

use crate::ClientMsg;

/// [`ClientMsg`] from a frame's text: what `serde_json::from_str` answers.
pub fn client_msg(text: &str) -> serde_json::Result<ClientMsg> {
    match plain_move(text) {
        Some(msg) => Ok(msg),
        None => serde_json::from_str(text),
    }
}

/// `{"type":"move",…}` with `"ply":N` and `"mv":"…"` in either order and
/// nothing else, no whitespace: the move; `None` for any other text,
/// including every text serde would refuse.
fn plain_move(text: &str) -> Option<ClientMsg> {
    let rest = text.strip_prefix(r#"{"type":"move","#)?;
    let (ply, mv) = if let Some(r) = rest.strip_prefix(r#""ply":"#) {
        let (ply, r) = number(r)?;
        let r = r.strip_prefix(r#","mv":""#)?;
        let (mv, r) = string(r)?;
        (r == "}").then_some((ply, mv))?
    } else {
        let r = rest.strip_prefix(r#""mv":""#)?;
        let (mv, r) = string(r)?;
        let r = r.strip_prefix(r#","ply":"#)?;
        let (ply, r) = number(r)?;
        (r == "}").then_some((ply, mv))?
    };
    Some(ClientMsg::Move { ply, mv: mv.to_owned() })
}

/// A JSON number that is a `u32` written plainly (`0` or digits not
/// starting with 0), then the rest from the next `,` or `}`: anything else
/// (a sign, a fraction, an exponent, too large) is left to serde.
fn number(s: &str) -> Option<(u32, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (n, rest) = s.split_at(digits);
    if digits == 0 || digits > 10 || (digits > 1 && n.starts_with('0')) {
        return None;
    }
    if !rest.starts_with([',', '}']) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

/// A JSON string's body up to its closing quote, when it holds no escape
/// and no control character (those go to serde), then the rest after it.
fn string(s: &str) -> Option<(&str, &str)> {
    let end = s.bytes().position(|b| b == b'"' || b == b'\\' || b < 0x20)?;
    if s.as_bytes()[end] != b'"' {
        return None;
    }
    Some((&s[..end], &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn serde(text: &str) -> Option<ClientMsg> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn the_plain_shapes_are_read_by_hand_as_serde_reads_them() {
        for text in [
            r#"{"type":"move","ply":12,"mv":"W12-W13"}"#,
            r#"{"type":"move","mv":"W12-W13","ply":12}"#,
            r#"{"type":"move","ply":0,"mv":""}"#,
            r#"{"type":"move","ply":4294967295,"mv":"e14-e13"}"#,
            r#"{"type":"move","ply":7,"mv":"+g2"}"#,
            r#"{"type":"move","ply":7,"mv":"汉 a1"}"#,
        ] {
            let fast = plain_move(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, serde(text), "{text}");
        }
        // What serde writes for a move is a plain shape.
        let msg = ClientMsg::Move {
            ply: 41,
            mv: "W51-W41".into(),
        };
        assert_eq!(plain_move(&serde_json::to_string(&msg).unwrap()), Some(msg));
    }

    #[test]
    fn other_texts_are_left_to_serde() {
        for text in [
            r#"{"type":"move","ply":12,"mv":"W12-W13"} "#,
            r#"{"type":"move", "ply":12,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":012,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":-1,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":1.0,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":1e2,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":4294967296,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":99999999999,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":12,"mv":"W12\u002dW13"}"#,
            r#"{"type":"move","ply":12,"mv":"W12"W13"}"#,
            "{\"type\":\"move\",\"ply\":12,\"mv\":\"W12\tW13\"}",
            r#"{"type":"move","ply":12,"mv":"W12-W13","ply":12}"#,
            r#"{"type":"move","ply":12,"mv":"W12-W13","x":1}"#,
            r#"{"type":"move","ply":12}"#,
            r#"{"type":"move","ply":,"mv":"W12-W13"}"#,
            r#"{"type":"move","ply":12,"mv":"W12-W13"}}"#,
            r#"{"type":"move","ply":12,"mv":"W12-W13""#,
            r#"{"type":"resign"}"#,
        ] {
            assert_eq!(plain_move(text), None, "{text}");
            assert_eq!(client_msg(text).ok(), serde(text), "{text}");
        }
    }

    /// Texts near the plain shapes: the parts of a move message, each
    /// sometimes bent (spaces, signs, fractions, escapes, quotes, controls,
    /// other keys, repeats), joined in a random order.
    fn near_move() -> impl Strategy<Value = String> {
        // Each part is plain most of the time, so that a good share of the texts
        // (about a tenth; a third are messages serde accepts) is read by hand.
        let key_ws = prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("\n")];
        let number = prop_oneof![
            6 => any::<u32>().prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            1 => "-?[0-9]{0,12}(\\.[0-9]{1,2})?([eE][+-]?[0-9]{1,2})?",
            1 => Just("null".to_string()),
            1 => Just("\"3\"".to_string()),
        ];
        let text = prop_oneof![
            6 => "[A-Za-z0-9+@ -]{0,9}",
            2 => "[\\PC]{0,6}",
            2 => "[\\x00-\\x7f]{0,6}",
            1 => Just("W12\\\"W13".to_string()),
            1 => Just("\\u0057".to_string()),
        ];
        let ply = (number, key_ws.clone()).prop_map(|(n, w)| format!("\"ply\":{w}{n}"));
        let mv = (text, key_ws.clone()).prop_map(|(t, w)| format!("\"mv\":{w}\"{t}\""));
        let ty = prop_oneof![
            8 => Just(r#""type":"move""#),
            1 => Just(r#""type":"resign""#),
            1 => Just(r#""type": "move""#),
            1 => Just(r#""type":"Move""#),
        ];
        let extra = prop_oneof![8 => Just(""), 1 => Just(r#""x":1"#), 1 => Just(r#""accept":true"#)];
        (
            ty,
            ply.clone(),
            mv,
            prop::option::weighted(0.1, ply),
            extra,
            any::<bool>(),
            key_ws,
            0..12u8,
        )
            .prop_map(|(ty, ply, mv, again, extra, swap, ws, end)| {
                let mut parts = vec![ty.to_string()];
                if swap {
                    parts.extend([mv, ply]);
                } else {
                    parts.extend([ply, mv]);
                }
                parts.extend(again);
                if !extra.is_empty() {
                    parts.push(extra.to_string());
                }
                let tail = match end {
                    0 => "} ",
                    1 => "",
                    2 => "}x",
                    _ => "}",
                };
                format!("{{{}{ws}{tail}", parts.join(","))
            })
    }

    /// A plain shape cut into its pieces (keys, values, commas, quotes, the
    /// closing brace), then up to three edits: a piece taken out, or one of
    /// the pieces below (those of the shapes and of what bends them: escapes,
    /// numbers not plain, another opening) put in or in its place. Arbitrary
    /// text would almost never reach the hand reader; these often do (a test
    /// below holds that).
    fn own_pieces() -> impl Strategy<Value = String> {
        const PIECES: [&str; 24] = [
            r#""ply":"#,
            r#""mv":""#,
            r#"""#,
            ",",
            "}",
            "{",
            r"\",
            r"\u0041",
            "0",
            "7",
            "12",
            "01",
            "4294967295",
            "4294967296",
            "-1",
            ".5",
            "e1",
            "W12-W13",
            " ",
            "\t",
            "\u{1}",
            r#""type":"move""#,
            "null",
            "",
        ];
        let edit = (
            0..3u8,
            any::<prop::sample::Index>(),
            prop::sample::select(PIECES.to_vec()),
        );
        (any::<bool>(), prop::collection::vec(edit, 0..4)).prop_map(|(swap, edits)| {
            let mut p = if swap {
                vec![r#""mv":""#, "W12-W13", r#"""#, ",", r#""ply":"#, "12", "}"]
            } else {
                vec![r#""ply":"#, "12", ",", r#""mv":""#, "W12-W13", r#"""#, "}"]
            };
            for (kind, at, piece) in edits {
                let i = at.index(p.len() + 1);
                match kind {
                    0 if i < p.len() => {
                        p.remove(i);
                    }
                    1 if i < p.len() => p[i] = piece,
                    _ => p.insert(i, piece),
                }
            }
            format!(r#"{{"type":"move",{}"#, p.concat())
        })
    }

    #[test]
    fn the_generated_texts_reach_the_hand_reader() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let mut share = |strategy: &dyn Fn() -> BoxedStrategy<String>| {
            let n = 20_000;
            let read = (0..n)
                .filter(|_| plain_move(&strategy().new_tree(&mut runner).unwrap().current()).is_some())
                .count();
            read as f64 / n as f64
        };
        let near = share(&|| near_move().boxed());
        let own = share(&|| own_pieces().boxed());
        assert!(near > 0.05, "texts near the plain shapes read by hand: {near}");
        assert!(own > 0.05, "texts of the plain shapes' pieces read by hand: {own}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_hand_reader_answers_as_serde_near_the_plain_shapes(text in near_move()) {
            if let Some(fast) = plain_move(&text) {
                prop_assert_eq!(Some(fast), serde(&text));
            }
            prop_assert_eq!(client_msg(&text).ok(), serde(&text));
        }

        #[test]
        fn the_hand_reader_answers_as_serde_on_texts_of_its_own_pieces(text in own_pieces()) {
            if let Some(fast) = plain_move(&text) {
                prop_assert_eq!(Some(fast), serde(&text));
            }
        }

        #[test]
        fn every_move_serde_writes_is_read_by_hand(ply in any::<u32>(), mv in "[^\"\\\\\\p{Cc}]{0,12}") {
            let msg = ClientMsg::Move { ply, mv };
            let text = serde_json::to_string(&msg).unwrap();
            prop_assert_eq!(plain_move(&text), Some(msg));
        }
    }
}
