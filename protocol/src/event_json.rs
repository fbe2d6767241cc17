//! The JSON of a move's event written by hand: the message every seat and
//! spectator gets for every move, where serde's derived serialiser spent
//! ~14,000 instructions a move on a 三国象棋 game's `moved` event (each key
//! and string scanned for escapes a byte at a time, each field through a
//! state machine). Byte for byte what serde writes — tests compare the two on
//! every event of played games and on generated ones — and only for the
//! shape that is hot: any other event, or a status with a part written
//! rarely (a pending offer, 三国暗棋's or 三国演弈棋's own state), is left to serde.

use crate::{Clock, Counters, GameEvent, Side, Status};

/// `{"type":"event","v":…,"event":…}` — what `serde_json` writes for
/// [`crate::ServerMsg::Event`] with this version and event (without `"event"`
/// when it is `None`) — when the event is a move with a status of the hot
/// shape; `None` otherwise (serialise it with serde).
pub fn event_json(v: u64, event: Option<&GameEvent>) -> Option<String> {
    let Some(event) = event else {
        let mut out = String::with_capacity(40);
        out.push_str(r#"{"type":"event","v":"#);
        push_u64(&mut out, v);
        out.push('}');
        return Some(out);
    };
    let GameEvent::Moved {
        side,
        mv,
        ply,
        spent_ms,
        captured,
        checks,
        revealed,
        status,
    } = event
    else {
        return None;
    };
    if status.pending_offer.is_some() || status.anqi.is_some() || status.yanyi.is_some() {
        return None;
    }
    // Besides the move, the position and the list, a few hundred bytes:
    // room for all of it, so that the text is written without growing.
    let mut out = String::with_capacity(800 + mv.len() + status.position.len() + status.legal_moves.json_len());
    out.push_str(r#"{"type":"event","v":"#);
    push_u64(&mut out, v);
    out.push_str(r#","event":{"kind":"moved","side":"#);
    push_side(&mut out, *side);
    out.push_str(r#","mv":"#);
    push_str(&mut out, mv);
    out.push_str(r#","ply":"#);
    push_u64(&mut out, u64::from(*ply));
    out.push_str(r#","spent_ms":"#);
    push_u64(&mut out, *spent_ms);
    if let Some(c) = captured {
        out.push_str(r#","captured":"#);
        push_str(&mut out, c);
    }
    out.push_str(r#","checks":"#);
    push_sides(&mut out, checks);
    if let Some(r) = revealed {
        out.push_str(r#","revealed":"#);
        push_str(&mut out, r);
    }
    out.push_str(r#","status":"#);
    push_status(&mut out, status);
    out.push_str("}}");
    Some(out)
}

/// A status without a pending offer, 三国暗棋's or 三国演弈棋's part.
fn push_status(out: &mut String, s: &Status) {
    out.push_str(r#"{"position":"#);
    push_str(out, &s.position);
    out.push_str(r#","turn":"#);
    push_side(out, s.turn);
    out.push_str(r#","live":"#);
    push_sides(out, &s.live);
    out.push_str(r#","ply":"#);
    push_u64(out, u64::from(s.ply));
    out.push_str(r#","round":"#);
    push_u64(out, u64::from(s.round));
    out.push_str(r#","legal_moves":"#);
    s.legal_moves.write_json(out);
    out.push_str(r#","clocks":["#);
    for (i, c) in s.clocks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_clock(out, c);
    }
    out.push(']');
    if let Some(c) = &s.counters {
        out.push_str(r#","counters":"#);
        push_counters(out, c);
    }
    if !s.in_check.is_empty() {
        out.push_str(r#","in_check":"#);
        push_sides(out, &s.in_check);
    }
    if s.paused {
        out.push_str(r#","paused":true"#);
    }
    out.push('}');
}

fn push_clock(out: &mut String, c: &Clock) {
    out.push_str(r#"{"remaining_ms":"#);
    push_u64(out, c.remaining_ms);
    out.push_str(r#","periods_left":"#);
    push_u64(out, u64::from(c.periods_left));
    if let Some(ms) = c.period_left_ms {
        out.push_str(r#","period_left_ms":"#);
        push_u64(out, ms);
    }
    if let Some(ms) = c.move_left_ms {
        out.push_str(r#","move_left_ms":"#);
        push_u64(out, ms);
    }
    out.push_str(r#","running":"#);
    push_bool(out, c.running);
    out.push_str(r#","in_byoyomi":"#);
    push_bool(out, c.in_byoyomi);
    out.push('}');
}

fn push_counters(out: &mut String, c: &Counters) {
    out.push_str(r#"{"plies_without_progress":"#);
    push_u64(out, u64::from(c.plies_without_progress));
    out.push_str(r#","phase2_plies":"#);
    push_u64(out, u64::from(c.phase2_plies));
    out.push_str(r#","consecutive_checks":"#);
    push_table(out, &c.consecutive_checks);
    out.push_str(r#","cumulative_checks":"#);
    push_table(out, &c.cumulative_checks);
    out.push_str(r#","warnings":"#);
    push_numbers(out, c.warnings.map(u64::from));
    out.push_str(r#","draw_offers_made":"#);
    push_numbers(out, c.draw_offers_made.map(u64::from));
    out.push('}');
}

fn push_table(out: &mut String, t: &[[u32; 3]; 3]) {
    out.push('[');
    for (i, row) in t.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_numbers(out, row.map(u64::from));
    }
    out.push(']');
}

fn push_numbers(out: &mut String, ns: [u64; 3]) {
    out.push('[');
    for (i, n) in ns.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_u64(out, n);
    }
    out.push(']');
}

/// A number as serde writes it. A number of one digit is pushed as it is,
/// not formatted: nearly all of a 三国象棋 move's ~30 numbers are 0–9 (its
/// §6 check tables alone hold 18), and itoa's buffer and the copy from it
/// cost several times a digit's push.
fn push_u64(out: &mut String, n: u64) {
    match u8::try_from(n) {
        Ok(d @ 0..=9) => out.push(char::from(b'0' + d)),
        _ => out.push_str(itoa::Buffer::new().format(n)),
    }
}

fn push_bool(out: &mut String, b: bool) {
    out.push_str(if b { "true" } else { "false" });
}

fn push_side(out: &mut String, side: Side) {
    out.push_str(match side {
        Side::W => r#""W""#,
        Side::B => r#""B""#,
        Side::Y => r#""Y""#,
    });
}

fn push_sides(out: &mut String, sides: &[Side]) {
    out.push('[');
    for (i, &side) in sides.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_side(out, side);
    }
    out.push(']');
}

/// A JSON string: as it is when nothing in it needs an escape (serde_json
/// escapes only the control characters, `"` and `\`), by serde otherwise.
fn push_str(out: &mut String, s: &str) {
    if !needs_escape(s.as_bytes()) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

/// Whether any byte is one JSON escapes: a control character, `"` or `\`.
/// Eight bytes at a time (a position's text is a few hundred bytes, and
/// every move's event carries one).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    /// Whether a byte of `w` is below `n` (exact for `n` ≤ 128).
    fn has_below(w: u64, n: u8) -> bool {
        w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS != 0
    }
    fn has_byte(w: u64, b: u8) -> bool {
        has_below(w ^ (ONES * u64::from(b)), 1)
    }
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    words
        .map(|c| u64::from_ne_bytes(c.try_into().expect("eight bytes")))
        .any(|w| has_below(w, 0x20) || has_byte(w, b'"') || has_byte(w, b'\\'))
        || tail.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    use proptest::array::uniform3;
    use proptest::prelude::*;

    use super::*;
    use crate::{PendingOffer, ServerMsg};

    fn side() -> impl Strategy<Value = Side> {
        prop_oneof![Just(Side::W), Just(Side::B), Just(Side::Y)]
    }

    fn sides() -> impl Strategy<Value = Vec<Side>> {
        proptest::collection::vec(side(), 0..4)
    }

    /// Any text, mostly plain, sometimes with what JSON escapes.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![4 => "[A-Za-z0-9 :/+-]{0,40}", 1 => any::<String>(), 1 => "[\"\\\\\\n\\t\\x01\\x7f 汉]{0,8}"]
    }

    /// Any number, often one of one or two digits (what most of a status's
    /// numbers are, and where a digit alone is written apart: the edges 9
    /// and 10 among them).
    fn number<T: Arbitrary + From<u8>>() -> impl Strategy<Value = T> {
        prop_oneof![2 => (0u8..=12).prop_map(T::from), 1 => any::<T>()]
    }

    fn clock() -> impl Strategy<Value = Clock> {
        (
            number::<u64>(),
            number::<u32>(),
            proptest::option::of(number::<u64>()),
            proptest::option::of(number::<u64>()),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(remaining_ms, periods_left, period_left_ms, move_left_ms, running, in_byoyomi)| Clock {
                    remaining_ms,
                    periods_left,
                    period_left_ms,
                    move_left_ms,
                    running,
                    in_byoyomi,
                },
            )
    }

    fn counters() -> impl Strategy<Value = Counters> {
        (
            number::<u32>(),
            number::<u32>(),
            uniform3(uniform3(number::<u32>())),
            uniform3(uniform3(number::<u32>())),
            uniform3(number::<u8>()),
            uniform3(number::<u8>()),
        )
            .prop_map(
                |(p, q, consecutive_checks, cumulative_checks, warnings, draw_offers_made)| Counters {
                    plies_without_progress: p,
                    phase2_plies: q,
                    consecutive_checks,
                    cumulative_checks,
                    warnings,
                    draw_offers_made,
                },
            )
    }

    fn status() -> impl Strategy<Value = Status> {
        (
            (text(), side(), sides(), number::<u32>(), number::<u32>()),
            proptest::collection::vec("[A-Z][0-9]{2}-[A-Z][0-9]{2}", 0..6),
            [clock(), clock(), clock()],
            proptest::option::of(counters()),
            sides(),
            any::<bool>(),
            proptest::option::of((side(), sides())),
        )
            .prop_map(
                |((position, turn, live, ply, round), moves, clocks, counters, in_check, paused, offer)| Status {
                    position,
                    turn,
                    live,
                    ply,
                    round,
                    legal_moves: moves.iter().map(String::as_str).collect(),
                    clocks,
                    counters,
                    in_check,
                    pending_offer: offer.map(|(by, waiting)| PendingOffer { by, waiting }),
                    paused,
                    anqi: None,
                    yanyi: None,
                },
            )
    }

    fn moved() -> impl Strategy<Value = GameEvent> {
        (
            side(),
            text(),
            number::<u32>(),
            number::<u64>(),
            proptest::option::of(text()),
            sides(),
            proptest::option::of(text()),
            status(),
        )
            .prop_map(
                |(side, mv, ply, spent_ms, captured, checks, revealed, status)| GameEvent::Moved {
                    side,
                    mv,
                    ply,
                    spent_ms,
                    captured,
                    checks,
                    revealed,
                    status,
                },
            )
    }

    fn serde_text(v: u64, event: Option<&GameEvent>) -> String {
        serde_json::to_string(&ServerMsg::Event {
            v,
            event: event.cloned().map(Box::new),
        })
        .unwrap()
    }

    proptest! {
        #[test]
        fn a_move_is_written_as_serde_writes_it(v in number::<u64>(), event in moved()) {
            let by_hand = event_json(v, Some(&event));
            let GameEvent::Moved { status, .. } = &event else { unreachable!() };
            if status.pending_offer.is_some() {
                prop_assert_eq!(by_hand, None, "a pending offer is serde's");
            } else {
                prop_assert_eq!(by_hand, Some(serde_text(v, Some(&event))));
            }
        }
    }

    proptest! {
        #[test]
        fn the_escape_test_finds_what_serde_escapes(
            // Mostly bytes that need no escape, a few of any kind.
            bytes in proptest::collection::vec(prop_oneof![8 => 0x23u8..0x5c, 8 => 0x5du8..=0xff, 1 => any::<u8>()], 0..40)
        ) {
            let slow = bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
            prop_assert_eq!(needs_escape(&bytes), slow);
        }
    }

    #[test]
    fn a_bare_version_is_written_and_other_events_are_left_to_serde() {
        assert_eq!(event_json(7, None).as_deref(), Some(serde_text(7, None).as_str()));
        assert_eq!(event_json(7, None).as_deref(), Some(r#"{"type":"event","v":7}"#));
        let noted = GameEvent::Noted {
            side: None,
            text: "pass 2".into(),
        };
        assert_eq!(event_json(7, Some(&noted)), None);
    }
}
