//! Every move rule and example of RULES.md §2.3–§5, each as a concrete
//! position in §7 position text.
//!
//! The expected answers were derived by hand from RULES.md (with the
//! independent tables of `shared/board/` as a check on the geometry), not
//! from what the engine prints. Each test names the rule it checks.
//!
//! Positions carry only the pieces a rule needs. Kings stand on `X41` or `X42`
//! unless the rule is about kings: two kings there never face each other. Mind
//! that X's file 4 runs over a fan into another side's file 6 (W4x–Y6x,
//! B4x–W6x, Y4x–B6x), so a piece on W6x does see B's king on B4x.

use std::collections::BTreeSet;

use engine::explain::Attack;
use engine::notation::parse_point;
use engine::{
    Cause, Elimination, Move, MoveOutcome, Point, Position, Reason, Role, Side, format_position, parse_move,
    parse_position,
};

// ---------------------------------------------------------------- helpers

#[track_caller]
fn pos(text: &str) -> Position {
    parse_position(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[track_caller]
fn point(name: &str) -> Point {
    parse_point(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[track_caller]
fn mv(text: &str) -> Move {
    parse_move(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn names(list: &str) -> BTreeSet<String> {
    list.split_whitespace().map(str::to_owned).collect()
}

/// The destinations of the legal moves of the piece on `from`.
fn destinations(p: &Position, from: &str) -> BTreeSet<String> {
    let from = point(from);
    p.legal_moves()
        .iter()
        .filter(|m| m.from == from)
        .map(|m| m.to.to_string())
        .collect()
}

/// The piece on `from` in position `text` goes exactly to `expected`; every
/// such move is listed once and `is_legal` agrees with the list.
#[track_caller]
fn assert_destinations(text: &str, from: &str, expected: &str) {
    let p = pos(text);
    let got = destinations(&p, from);
    let want = names(expected);
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{text}\n  piece on {from}: missing {missing:?}, unexpected {extra:?}"
    );
    let moves = p.legal_moves();
    let listed = moves.iter().filter(|m| m.from.to_string() == from).count();
    assert_eq!(listed, want.len(), "{text}: a move from {from} is listed twice");
    for to in &want {
        assert!(p.is_legal(mv(&format!("{from}-{to}"))), "{text}: is_legal({from}-{to})");
    }
}

/// The legal moves of position `text`, as `from-to` strings.
fn legal(text: &str) -> BTreeSet<String> {
    pos(text).legal_moves().iter().map(|m| m.to_string()).collect()
}

/// Plays `m` expecting it to be legal.
#[track_caller]
fn play(p: &mut Position, m: &str) -> MoveOutcome {
    let before = *p;
    p.play(mv(m))
        .unwrap_or_else(|e| panic!("{}: {m} refused: {e}", format_position(&before)))
}

/// Plays `m` expecting a refusal; checks `is_legal` agrees and the position
/// is untouched; returns the reason.
#[track_caller]
fn refused(text: &str, m: &str) -> Reason {
    let mut p = pos(text);
    let before = p;
    assert!(!p.is_legal(mv(m)), "{text}: {m} should be illegal");
    let err = p.play(mv(m)).expect_err(m);
    assert_eq!(err.mv, mv(m));
    assert_eq!(p, before, "a refused move changed the position");
    err.reason
}

#[track_caller]
fn assert_legal(text: &str, m: &str) {
    let p = pos(text);
    assert!(p.is_legal(mv(m)), "{text}: {m} should be legal");
}

/// `p` is the position of `expected` (compared on canonical text).
#[track_caller]
fn assert_position(p: &Position, expected: &str) {
    assert_eq!(format_position(p), format_position(&pos(expected)));
}

fn mate(side: Side, in_check: bool) -> Elimination {
    Elimination {
        side,
        cause: Cause::Mate { in_check },
    }
}

fn sudden_death(side: Side) -> Elimination {
    Elimination {
        side,
        cause: Cause::SuddenDeath,
    }
}

/// Kings of the three sides where they disturb nothing.
const KINGS41: &str = "WK@W41,BK@B41,YK@Y41";
const KINGS42: &str = "WK@W42,BK@B42,YK@Y42";

fn w3(pieces: &str) -> String {
    format!("{pieces},{KINGS41} W WBY - ccw")
}

// ---------------------------------------------------------------- §2.3 lines

/// §2.3: a chariot on W51 with an empty file 5 takes all three branches at
/// W56 (WM5/B56…, O/BM5…, YM5/Y56…), each (from, to) once.
#[test]
fn s2_3_chariot_on_w51_takes_the_three_branches_at_w56() {
    let text = format!("WR@W51,{KINGS42} W WBY - ccw");
    assert_destinations(
        &text,
        "W51",
        "W11 W21 W31 W41 W61 W71 W81 W91 \
         W52 W53 W54 W55 W56 \
         WM5 B56 B55 B54 B53 B52 B51 \
         O BM5 BM6 BM7 BM8 BM9 \
         YM5 Y56 Y55 Y54 Y53 Y52 Y51",
    );
    // The king's moves W41 W43 W52 complete the list: 33 + 3, no duplicate.
    let p = pos(&text);
    let moves = p.legal_moves();
    assert_eq!(moves.len(), 36);
    let unique: BTreeSet<Move> = moves.iter().copied().collect();
    assert_eq!(unique.len(), moves.len(), "a move listed twice");
    // §7: moves are listed in ascending (from index, to index) order.
    let keys: Vec<(usize, usize)> = moves.iter().map(|m| (m.from.index(), m.to.index())).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "not in canonical order");
}

/// §2.3: no line bends at O. With WM5 and YM5 occupied, a chariot coming up
/// W's file 5 reaches O and goes on into B's fan (BM5…BM9) only.
#[test]
fn s2_3_no_line_bends_at_o() {
    let text = format!("WR@W53,WP@WM5,WP@YM5,{KINGS42} W WBY - ccw");
    assert_destinations(
        &text,
        "W53",
        "W13 W23 W33 W43 W63 W73 W83 W93 W52 W51 W54 W55 W56 O BM5 BM6 BM7 BM8 BM9",
    );
    for to in ["B56", "B55", "B51", "Y56", "Y55", "Y51", "WM6", "YM6"] {
        let r = refused(&text, &format!("W53-{to}"));
        assert!(
            matches!(r, Reason::NotThisPiecesMove(_) | Reason::PathBlocked(_)),
            "W53-{to}: {r:?}"
        );
    }
}

/// §2.3: the six lines through O are straight: a chariot on O reaches the
/// six rays (each side's file 5 and each fan's midpoints).
#[test]
fn s2_3_chariot_on_o_has_six_rays() {
    assert_destinations(
        &format!("WR@O,{KINGS42} W WBY - ccw"),
        "O",
        "W56 W55 W54 W53 W52 W51 BM5 BM6 BM7 BM8 BM9 \
         Y56 Y55 Y54 Y53 Y52 Y51 WM5 WM6 WM7 WM8 WM9 \
         B56 B55 B54 B53 B52 B51 YM5 YM6 YM7 YM8 YM9",
    );
}

/// §2.3: WM5 lies on W's 顶弧 line (W5x, WM5, B5x) and on Y's axis
/// (Y5x, O, WM5…WM9); past W56 it continues down W's file 5, never to YM5.
#[test]
fn s2_3_chariot_on_wm5_follows_its_two_lines() {
    let text = format!("WR@WM5,{KINGS42} W WBY - ccw");
    assert_destinations(
        &text,
        "WM5",
        "W56 W55 W54 W53 W52 W51 B56 B55 B54 B53 B52 B51 O Y56 Y55 Y54 Y53 Y52 Y51 WM6 WM7 WM8 WM9",
    );
    assert!(!pos(&text).is_legal(mv("WM5-YM5")));
    assert!(!pos(&text).is_legal(mv("WM5-BM5")));
}

/// §2.3 item 5 and: the side-axis line WQ6–WQ7 and the arcs are lines
/// for the chariot; WQ7 is on W's file-7 line over the fan into B's file 3.
#[test]
fn s2_3_chariot_on_the_side_axis() {
    assert_destinations(
        &format!("WR@WQ7,{KINGS42} W WBY - ccw"),
        "WQ7",
        "W76 W75 W74 W73 W72 W71 WM7 B36 B35 B34 B33 B32 B31 WQ6",
    );
}

// ---------------------------------------------------------------- §2.4 cells (as moves)

/// §2.4: `W54` → eye `W65` → `W76`; the elephant's four 田 in its rectangle.
#[test]
fn s2_4_elephant_w54_over_eye_w65_to_w76() {
    let text = w3("WE@W54");
    assert_destinations(&text, "W54", "W32 W36 W72 W76");
    // The eye blocked (by any side's piece): that move is refused, naming the eye.
    let blocked = w3("WE@W54,BP@W65");
    assert_destinations(&blocked, "W54", "W32 W36 W72");
    let r = refused(&blocked, "W54-W76");
    assert_eq!(r, Reason::EyeBlocked(point("W65")));
    assert!(r.to_string().contains("eye"), "{r}");
}

/// §2.4 + §3 E: `W76` → eye `WM8` → `B16`. B16 is outside W's rectangle, so
/// the move needs phase 2 with B as the opponent.
#[test]
fn s2_4_elephant_w76_over_wm8_to_b16_needs_phase_2() {
    // Phase 3: own rectangle only.
    let p3 = w3("WE@W76");
    assert_destinations(&p3, "W76", "W54 W94");
    assert!(matches!(refused(&p3, "W76-B16"), Reason::OutsideRegion { .. }));
    // Phase 2 against B: the opponent's rectangle opens.
    let wb = "WE@W76,WK@W41,BK@B41 W WB - ccw";
    assert_destinations(wb, "W76", "W54 W94 B16");
    // …unless the eye WM8 is occupied.
    let wb_blocked = "WE@W76,WP@WM8,WK@W41,BK@B41 W WB - ccw";
    assert_destinations(wb_blocked, "W76", "W54 W94");
    let r = refused(wb_blocked, "W76-B16");
    assert_eq!(r, Reason::EyeBlocked(point("WM8")));
    assert!(r.to_string().contains("eye"), "{r}");
    // Phase 2 against Y: B was eliminated and its rectangle stays closed.
    let wy = "WE@W76,WK@W41,YK@Y41 W WY - ccw";
    assert_destinations(wy, "W76", "W54 W94");
    assert!(matches!(refused(wy, "W76-B16"), Reason::OutsideRegion { .. }));
}

/// §2.4: `W36` → eye `YM8` → `Y96` (and `W36` → eye `YM6` → `Y56`): Y's
/// rectangle, so only in phase 2 against Y.
#[test]
fn s2_4_elephant_w36_over_ym8_to_y96() {
    assert_destinations(&w3("WE@W36"), "W36", "W14 W54");
    assert_destinations("WE@W36,WK@W41,YK@Y41 W WY - ccw", "W36", "W14 W54 Y56 Y96");
    assert_destinations("WE@W36,WK@W41,BK@B41 W WB - ccw", "W36", "W14 W54");
}

/// §2.4: `WM6` → eye `W56` → `W45` (the eye at the cusp point W56 is a grid
/// point); an elephant on a fan point got there in phase 2.
#[test]
fn s2_4_elephant_wm6_over_w56_to_w45() {
    assert_destinations("WE@WM6,WK@W41,BK@B41 W WB - ccw", "WM6", "W45 B25 B65");
    assert_destinations("WE@WM6,WK@W41,YK@Y41 W WY - ccw", "WM6", "W45");
    assert_destinations(&w3("WE@WM6"), "WM6", "W45");
    let blocked = "WE@WM6,BP@W56,WK@W41,BK@B41 W WB - ccw";
    assert_eq!(refused(blocked, "WM6-W45"), Reason::EyeBlocked(point("W56")));
}

/// §3 E: in phase 2 every fan point is open, even the eliminated side's
/// fan; the eliminated side's rectangle is not.
#[test]
fn s3_elephant_reaches_fan_points_in_phase_2_only() {
    assert_destinations(&w3("WE@W75"), "W75", "W53 W93");
    assert_destinations("WE@W75,WK@W41,BK@B41 W WB - ccw", "W75", "W53 W93 WM5 WM9");
    assert_destinations("WE@W75,WK@W41,YK@Y41 W WY - ccw", "W75", "W53 W93 WM5 WM9");
    // W35 → YM9 (eye W26) and → YM5 (eye W46): Y's fan, open although Y is out.
    assert_destinations(&w3("WE@W35"), "W35", "W13 W53");
    assert_destinations("WE@W35,WK@W41,BK@B41 W WB - ccw", "W35", "W13 W53 YM9 YM5");
}

/// §2.4: `WQ7` → leg `WM7` → `B26` or `B46` (plus W65, W85 over leg W76; the
/// leg WQ6 gives nothing: both its cells border the direction back to WQ7).
#[test]
fn s2_4_horse_wq7_over_wm7_to_b26_b46() {
    assert_destinations(&w3("WN@WQ7"), "WQ7", "W65 W85 B26 B46");
    let blocked = w3("WN@WQ7,BP@WM7");
    assert_destinations(&blocked, "WQ7", "W65 W85");
    for to in ["B26", "B46"] {
        let r = refused(&blocked, &format!("WQ7-{to}"));
        assert_eq!(r, Reason::LegBlocked(point("WM7")));
        assert!(r.to_string().contains("leg"), "{r}");
    }
}

/// §2.4: `W55` → leg `W56` → `WM6` or `YM6`, among the horse's 8 moves.
#[test]
fn s2_4_horse_w55_over_w56_to_wm6_ym6() {
    assert_destinations(&w3("WN@W55"), "W55", "W43 W63 W34 W36 W74 W76 WM6 YM6");
    let blocked = w3("WN@W55,YP@W56");
    assert_destinations(&blocked, "W55", "W43 W63 W34 W36 W74 W76");
    for to in ["WM6", "YM6"] {
        let r = refused(&blocked, &format!("W55-{to}"));
        assert_eq!(r, Reason::LegBlocked(point("W56")));
        assert!(r.to_string().contains("leg"), "{r}");
    }
}

/// §2.4: `WM5` → leg `W56` → `W45` or `W65`.
#[test]
fn s2_4_horse_wm5_over_w56_to_w45_w65() {
    assert_destinations(&w3("WN@WM5"), "WM5", "W45 W65 B45 B65 B36 WQ7");
    let blocked = w3("WN@WM5,WP@W56");
    assert_destinations(&blocked, "WM5", "B45 B65 B36 WQ7");
    assert_eq!(refused(&blocked, "WM5-W45"), Reason::LegBlocked(point("W56")));
}

/// §2.4: `W76` → leg `WQ7` → `WM6`.
#[test]
fn s2_4_horse_w76_over_wq7_to_wm6() {
    assert_destinations(&w3("WN@W76"), "W76", "W64 W84 W55 WM5 W95 WM9 WM6");
    let blocked = w3("WN@W76,YP@WQ7");
    assert_destinations(&blocked, "W76", "W64 W84 W55 WM5 W95 WM9");
    assert_eq!(refused(&blocked, "W76-WM6"), Reason::LegBlocked(point("WQ7")));
}

/// §3 N: a horse never lands on O, and a leg at O has no cell. From W56 the
/// leg O gives nothing and the leg WM5 only B46 (its other side is a
/// triangle); from O itself the six legs give twelve moves.
#[test]
fn s3_horse_and_the_centre() {
    assert_destinations(&w3("WN@W56"), "W56", "W44 W64 W35 YM7 W75 WQ7 B46 Y66");
    assert_destinations(&w3("WN@O"), "O", "W45 W65 B45 B65 Y45 Y65 W66 B46 B66 Y46 W46 Y66");
    for from in ["W56", "B56", "Y56", "WM5", "BM5", "YM5"] {
        let p = pos(&w3(&format!("WN@{from}")));
        assert!(!destinations(&p, from).contains("O"), "horse {from} reaches O");
    }
}

// ---------------------------------------------------------------- §3 pieces and regions

/// §3 K: one orthogonal step, staying in palace ∪ rear palace (files 4–6, ranks 1–4).
#[test]
fn s3_king_steps_inside_palace_and_rear_palace() {
    let others = "BK@B41,YK@Y41 W WBY - ccw";
    // W62 is on W's file-6 line, which runs over W's fan into B's file 4:
    // there W's king would face B's king on B41 (照面).
    let k52 = format!("WK@W52,{others}");
    assert_destinations(&k52, "W52", "W42 W51 W53");
    assert_eq!(refused(&k52, "W52-W62"), Reason::KingsFace(Side::B));
    let edge = format!("WK@W44,{others}");
    assert_destinations(&edge, "W44", "W43 W54");
    for to in ["W45", "W34"] {
        assert!(matches!(
            refused(&edge, &format!("W44-{to}")),
            Reason::OutsideRegion { .. }
        ));
    }
    assert_destinations(&format!("WK@W61,YP@WQ6,{others}"), "W61", "W51 W62");
    // Unshielded, W61 already faces B41: the king may leave the line or fly
    // to take the target's king (§4, §5); staying on the line is illegal.
    let facing = format!("WK@W61,{others}");
    assert_destinations(&facing, "W61", "W51 B41");
    assert_eq!(refused(&facing, "W61-W62"), Reason::KingsFace(Side::B));
    // Diagonal steps are not king moves.
    assert!(matches!(
        refused(&format!("WK@W52,{others}"), "W52-W43"),
        Reason::NotThisPiecesMove(_)
    ));
}

/// §3 F + §2.5: orthogonal steps or drawn diagonals only, in palace ∪ rear palace.
#[test]
fn s3_consort_uses_drawn_diagonals_only() {
    let k41 = "WK@W41,BK@B41,YK@Y41 W WBY - ccw";
    // W53: the palace centre, both long diagonals drawn.
    assert_destinations(&format!("WF@W53,{k41}"), "W53", "W43 W63 W52 W54 W42 W64 W62 W44");
    // W43: no drawn diagonal passes through it.
    let f43 = format!("WF@W43,{k41}");
    assert_destinations(&f43, "W43", "W42 W44 W53");
    for to in ["W52", "W54"] {
        assert!(matches!(
            refused(&f43, &format!("W43-{to}")),
            Reason::NotThisPiecesMove(_)
        ));
    }
    assert!(matches!(refused(&f43, "W43-W33"), Reason::OutsideRegion { .. }));
    // W52: the rear palace diagonals X41–X52, X52–X61 are drawn; W43/W63 are not.
    assert_destinations(
        "WF@W52,WK@W44,BK@B41,YK@Y41 W WBY - ccw",
        "W52",
        "W42 W62 W51 W53 W41 W61",
    );
    // W44: on the long diagonal X62–X53–X44 only; W35 is outside anyway.
    assert_destinations(&format!("WF@W44,{k41}"), "W44", "W43 W54 W53");
}

/// §3 A + §2.5: drawn diagonals, staying in the palace (ranks 2–4): the rear
/// palace diagonals lead out of it.
#[test]
fn s3_advisor_stays_in_the_palace() {
    let k41 = "WK@W41,BK@B41,YK@Y41 W WBY - ccw";
    assert_destinations(&format!("WA@W53,{k41}"), "W53", "W42 W44 W62 W64");
    let a42 = format!("WA@W42,{k41}");
    assert_destinations(&a42, "W42", "W53");
    assert!(matches!(refused(&a42, "W42-W51"), Reason::OutsideRegion { .. }));
    assert!(matches!(refused(&a42, "W42-W43"), Reason::NotThisPiecesMove(_)));
    assert_destinations("WA@W52,WK@W44,BK@B41,YK@Y41 W WBY - ccw", "W52", "");
}

/// §3 Z + §2.3/§2.4: one orthogonal or diagonal step anywhere, O included.
/// W56 has 6 orthogonal neighbours (the cusp) and 4 cells; O has 6
/// neighbours and no cell; WQ7/WQ6 are corners of two cells each.
#[test]
fn s3_prince_steps_anywhere() {
    assert_destinations(&w3("WZ@W56"), "W56", "W46 W66 W55 WM5 YM5 O WM6 YM6 W45 W65");
    assert_destinations(&w3("WZ@O"), "O", "W56 B56 Y56 WM5 BM5 YM5");
    assert_destinations(&w3("WZ@WM5"), "WM5", "W56 B56 O WM6 W66 B46");
    assert_destinations(&w3("WZ@WQ7"), "WQ7", "W76 WM7 WQ6 W66 WM6");
    assert_destinations(&w3("WZ@WQ6"), "WQ6", "W66 WM6 WQ7 W76 WM7");
    // the triangles around O have no opposite corners.
    let r = refused(&w3("WZ@W56"), "W56-B56");
    assert!(matches!(r, Reason::NotThisPiecesMove(_)), "{r:?}");
}

/// §3 C: moves like a chariot; captures by jumping exactly one piece of any
/// side, taking the first piece beyond it (hostility permitting).
#[test]
fn s3_cannon_jumps_exactly_one_piece_of_any_side() {
    // Screens are soldiers here: a horse on W33 would attack W41.
    // Own screen, target's piece beyond.
    let own = w3("WC@W13,WN@W33,BP@W63");
    assert_legal(&own, "W13-W63");
    assert_legal(&own, "W13-W23");
    for to in ["W43", "W53"] {
        assert!(
            matches!(refused(&own, &format!("W13-{to}")), Reason::PathBlocked(_)),
            "W13-{to}"
        );
    }
    // A screen of the threat's or the target's side works the same.
    assert_legal(&w3("WC@W13,YP@W33,BP@W63"), "W13-W63");
    assert_legal(&w3("WC@W13,BP@W33,BP@W63"), "W13-W63");
    // Two screens: no capture.
    assert_eq!(
        refused(&w3("WC@W13,BP@W33,YP@W43,BP@W63"), "W13-W63"),
        Reason::CannonScreen(2)
    );
    // No screen: no capture.
    assert_eq!(refused(&w3("WC@W13,BP@W23"), "W13-W23"), Reason::CannonScreen(0));
    // A cannon cannot take the threat's piece without the right (§4)…
    let threat = w3("WC@W13,BP@W33,YP@W63");
    assert_eq!(
        refused(&threat, "W13-W63"),
        Reason::NoRetaliationRight {
            mover: Side::W,
            upstream: Side::Y
        }
    );
    // …but can with it.
    assert_legal(&format!("WC@W13,BP@W33,YP@W63,{KINGS41} W WBY R:WY ccw"), "W13-W63");
}

/// §3 C + §2.3: one screen on W56 serves all three branches of file 5.
#[test]
fn s3_cannon_screen_at_the_fork() {
    let text = w3("WC@W53,WP@W56,BP@B56,BP@BM5,YP@Y56");
    assert_destinations(&text, "W53", "W43 W33 W23 W13 W63 W73 W83 W93 W52 W51 W54 W55 B56 BM5");
    assert!(matches!(refused(&text, "W53-Y56"), Reason::NoRetaliationRight { .. }));
}

/// §3 P, phase 3: inside its zone only forward along its file; outside, one
/// orthogonal step in any direction; never onto its own no-soldier zone.
#[test]
fn s3_soldier_phase_3() {
    let start = w3("WP@W55");
    assert_destinations(&start, "W55", "W56");
    assert!(matches!(refused(&start, "W55-W45"), Reason::OutsideRegion { .. }));
    assert!(matches!(refused(&start, "W55-W54"), Reason::OutsideRegion { .. }));
    assert_destinations(&w3("WP@W45"), "W45", "W46");
    // Rank 6: sideways, and up any of the three branches, but not back.
    let top = w3("WP@W56");
    assert_destinations(&top, "W56", "W46 W66 WM5 YM5 O");
    assert!(matches!(refused(&top, "W56-W55"), Reason::OutsideRegion { .. }));
    // W16 continues over Y's fan (Y's file 9 line) to YM9.
    assert_destinations(&w3("WP@W16"), "W16", "W26 YM9");
    assert_destinations(&w3("WP@WM5"), "WM5", "W56 B56 O WM6");
    // Another side's zone is no obstacle.
    assert_destinations(&w3("WP@B55"), "B55", "B54 B56 B45 B65");
    // B's soldiers go forward toward B's rank 6, and may enter W's zone.
    assert_destinations(&format!("BP@B35,{KINGS41} B WBY - ccw"), "B35", "B36");
    assert_destinations(&format!("BP@W35,{KINGS41} B WBY - ccw"), "W35", "W25 W45 W34 W36");
}

/// §3 P, phase 2: 1 or 2 steps along one line in one direction, the first
/// point empty and not in its own zone.
#[test]
fn s3_soldier_phase_2() {
    let wb = |pieces: &str| format!("{pieces},WK@W41,BK@B41 W WB - ccw");
    // From the start rank: forward to W56, then on along each of the three branches.
    assert_destinations(&wb("WP@W55"), "W55", "W56 WM5 O YM5");
    assert_destinations(&wb("WP@W45"), "W45", "W46 YM6");
    assert_destinations(&wb("WP@W56"), "W56", "W46 W66 WM5 YM5 O W36 W76 B56 BM5 Y56");
    // The first point occupied: capture there (phase 2: always hostile), no step beyond.
    assert_destinations(&wb("WP@W56,BP@W66"), "W56", "W46 W66 WM5 YM5 O W36 B56 BM5 Y56");
    let own = wb("WP@W56,WN@W66");
    assert_destinations(&own, "W56", "W46 WM5 YM5 O W36 B56 BM5 Y56");
    assert_eq!(refused(&own, "W56-W76"), Reason::PathBlocked(point("W66")));
    assert_destinations(&wb("WP@W55,BP@W56"), "W55", "W56");
    assert_destinations(&wb("WP@WM5"), "WM5", "W56 B56 O WM6 B55 Y56 WM7");
}

// ---------------------------------------------------------------- §4 先击后攻

/// §4 hostile, phase 3: the target's pieces always, the threat's never
/// without the retaliation right (ccw: target(W)=B, threat(W)=Y).
#[test]
fn s4_phase_3_captures_target_not_threat() {
    let text = w3("WR@W53,BP@W73,YP@W33");
    assert_legal(&text, "W53-W73");
    assert_eq!(
        refused(&text, "W53-W33"),
        Reason::NoRetaliationRight {
            mover: Side::W,
            upstream: Side::Y
        }
    );
    let with_right = format!("WR@W53,BP@W73,YP@W33,{KINGS41} W WBY R:WY ccw");
    assert_legal(&with_right, "W53-W73");
    assert_legal(&with_right, "W53-W33");
    // B to move: B's target is Y, its threat W.
    let b = format!("BR@W53,WP@W73,YP@W33,{KINGS41} B WBY - ccw");
    assert_legal(&b, "W53-W33");
    assert_eq!(
        refused(&b, "W53-W73"),
        Reason::NoRetaliationRight {
            mover: Side::B,
            upstream: Side::W
        }
    );
}

/// §1 + §4: clockwise, target(W)=Y and threat(W)=B.
#[test]
fn s4_clockwise_swaps_target_and_threat() {
    let text = format!("WR@W53,BP@W73,YP@W33,{KINGS41} W WYB - cw");
    assert_legal(&text, "W53-W33");
    assert_eq!(
        refused(&text, "W53-W73"),
        Reason::NoRetaliationRight {
            mover: Side::W,
            upstream: Side::B
        }
    );
    assert_legal(&format!("WR@W53,BP@W73,YP@W33,{KINGS41} W WYB R:WB cw"), "W53-W73");
}

/// §4 hostile, phase 2: always, both ways.
#[test]
fn s4_phase_2_captures_both_ways() {
    let text = "WR@W53,YP@W73,YP@W33,WK@W41,YK@Y41 W WY - ccw";
    assert_legal(text, "W53-W73");
    assert_legal(text, "W53-W33");
    let b = "BR@W53,WP@W73,WP@W33,WK@W41,BK@B41 B WB - ccw";
    assert_legal(b, "W53-W73");
    assert_legal(b, "W53-W33");
}

/// §4: the right is gained when the move just before captured a piece of the
/// mover, and lasts that one move only.
#[test]
fn s4_retaliation_right_from_a_capture_lasts_one_move() {
    let start = "WK@W41,WR@W56,WN@W26,BK@B41,YK@Y41,YR@W23 Y WBY - ccw";
    // Y (W's threat) captures W's horse: W now holds R:WY.
    let mut p = pos(start);
    let out = play(&mut p, "W23-W26");
    assert_eq!(out.captured.map(|c| (c.side, c.role)), Some((Side::W, Role::Horse)));
    assert!(out.provoked);
    assert!(out.checks.is_empty());
    assert_position(&p, "WK@W41,WR@W56,BK@B41,YK@Y41,YR@W26 W WBY R:WY ccw");
    assert!(format_position(&p).ends_with(" W WBY R:WY ccw"));
    assert!(p.has_retaliation_right(Side::W, Side::Y));

    // Used at once: W takes the Y chariot back. Taking the threat's piece
    // provokes nobody, so no flag remains.
    let mut used = p;
    let out = play(&mut used, "W56-W26");
    assert!(!out.provoked);
    assert_position(&used, "WK@W41,WR@W26,BK@B41,YK@Y41 B WBY - ccw");

    // Not used: after W's quiet move the right is gone.
    let mut lapsed = p;
    play(&mut lapsed, "W41-W42");
    assert_position(&lapsed, "WK@W42,WR@W56,BK@B41,YK@Y41,YR@W26 B WBY - ccw");
    play(&mut lapsed, "B41-B42");
    play(&mut lapsed, "Y41-Y42");
    let text = format_position(&lapsed);
    assert_eq!(
        refused(&text, "W56-W26"),
        Reason::NoRetaliationRight {
            mover: Side::W,
            upstream: Side::Y
        }
    );
}

/// §4: the right is gained when the move just before gave check to the mover.
#[test]
fn s4_retaliation_right_from_a_check() {
    let mut p = pos("WK@W41,WR@W56,BK@B41,YK@Y41,YR@W36 Y WBY - ccw");
    let out = play(&mut p, "W36-W46");
    assert!(out.checks.contains(Side::W));
    assert!(out.provoked);
    assert_position(&p, "WK@W41,WR@W56,YR@W46,BK@B41,YK@Y41 W WBY R:WY ccw");
    assert!(p.is_check());
    // W must escape Y's attack: step out of the file, or take the checker
    // (which the right allows). Nothing else.
    assert_eq!(
        p.legal_moves().iter().map(|m| m.to_string()).collect::<BTreeSet<_>>(),
        names("W41-W51 W56-W46")
    );
    let r = refused(&format_position(&p), "W41-W42");
    assert_eq!(
        r,
        Reason::KingAttacked {
            by: Side::Y,
            why: Attack::Upstream
        }
    );
    let out = play(&mut p, "W56-W46");
    assert_eq!(out.captured.map(|c| c.side), Some(Side::Y));
    assert_position(&p, "WK@W41,WR@W46,BK@B41,YK@Y41 B WBY - ccw");
}

/// §4: W's capture of a B piece (its target) gives B the right against W,
/// which B may then use on W's piece; without it B may not.
#[test]
fn s4_capturing_the_target_hands_it_the_right() {
    let start = "WK@W42,WR@W11,WN@W16,BN@W81,BR@W36,BK@B41,YK@Y41 W WBY - ccw";
    let mut p = pos(start);
    let out = play(&mut p, "W11-W81");
    assert!(out.provoked);
    assert_position(&p, "WK@W42,WR@W81,WN@W16,BR@W36,BK@B41,YK@Y41 B WBY R:BW ccw");
    let out = play(&mut p, "W36-W16");
    assert_eq!(out.captured.map(|c| c.side), Some(Side::W));
    assert_position(&p, "WK@W42,WR@W81,BR@W16,BK@B41,YK@Y41 Y WBY - ccw");

    let mut quiet = pos(start);
    play(&mut quiet, "W11-W21");
    assert_eq!(
        refused(&format_position(&quiet), "W36-W16"),
        Reason::NoRetaliationRight {
            mover: Side::B,
            upstream: Side::W
        }
    );
}

/// §4 attack: "a piece attacks a point if it could capture there by its move
/// rule". A prince attacks across a cell; a cannon through one screen, here
/// the mover's own horse.
#[test]
fn s4_attacks_follow_the_move_rules() {
    // Y's prince on W53 attacks W42 diagonally: W is in check.
    let prince = "WK@W42,YZ@W53,BK@B41,YK@Y41 W WBY - ccw";
    assert!(pos(prince).is_check());
    assert_eq!(legal(prince), names("W42-W41"));
    // Y's cannon on W46 attacks W42 over W's horse on W44.
    let cannon = "WK@W52,WN@W44,YC@W46,BK@B41,YK@Y41 W WBY - ccw";
    assert!(matches!(
        refused(cannon, "W52-W42"),
        Reason::KingAttacked { by: Side::Y, .. }
    ));
    assert_legal(cannon, "W52-W53");
}

/// §4 attack + §3: in phase 2 a soldier attacks two steps away (first point
/// empty) and an elephant attacks the opponent's rectangle; in phase 3 not.
#[test]
fn s4_phase_2_soldier_and_elephant_attacks() {
    // Y's soldier on W45: W44 then W43 in phase 2.
    assert_destinations("WK@W42,YP@W45,YK@Y41 W WY - ccw", "W42", "W41 W52");
    assert_destinations("WK@W42,YP@W45,BK@B41,YK@Y41 W WBY - ccw", "W42", "W41 W43 W52");
    // Y's elephant on W64: W64 → eye W53 → W42 lands in W's rectangle only in phase 2.
    assert_destinations("WK@W52,YE@W64,YK@Y41 W WY - ccw", "W52", "W51 W53 W62");
    // (W62 is safe from B41 here: the elephant on W64 blocks the file-6 line.)
    assert_destinations("WK@W52,YE@W64,BK@B41,YK@Y41 W WBY - ccw", "W52", "W42 W51 W53 W62");
}

/// §4 legality 1: after the move the mover's king must not be attacked by
/// its threat (phase 3) — a pinned piece cannot leave the line.
#[test]
fn s4_legality_1_attacked_by_threat() {
    let text = "WK@W42,WN@W44,YR@W46,BK@B41,YK@Y41 W WBY - ccw";
    assert!(!pos(text).is_check());
    assert_destinations(text, "W44", "");
    assert_eq!(
        refused(text, "W44-W63"),
        Reason::KingAttacked {
            by: Side::Y,
            why: Attack::Upstream
        }
    );
    // The king may walk along the shielded file.
    assert_destinations(text, "W42", "W41 W43 W52");
}

/// §4 legality 1 in phase 2: the only opponent counts, whichever way it sits
/// in turn order; in phase 3 the same attack by the target is latent.
#[test]
fn s4_legality_1_phase_2_opponent() {
    let phase2 = "WK@W42,WN@W44,BR@W46,BK@B41 W WB - ccw";
    assert_destinations(phase2, "W44", "");
    assert!(matches!(
        refused(phase2, "W44-W63"),
        Reason::KingAttacked { by: Side::B, .. }
    ));
    let phase3 = "WK@W42,WN@W44,BR@W46,BK@B41,YK@Y41 W WBY - ccw";
    assert_destinations(phase3, "W44", "W32 W52 W23 W25 W63 W65 W36 W56");
}

/// §4 legality 2: a move that provokes the target (captures its piece or
/// checks it) may not leave the king attacked by the target. Quiet moves may.
#[test]
fn s4_legality_2_provoking_the_target() {
    let text = "WK@W42,WR@W11,WR@B13,BN@W81,BR@W46,BK@B41,YK@Y41 W WBY - ccw";
    let p = pos(text);
    assert!(!p.is_check(), "an attack by the target is not a check");
    let provoked = Reason::KingAttacked {
        by: Side::B,
        why: Attack::Provoked,
    };
    // Capturing B's horse.
    assert_eq!(refused(text, "W11-W81"), provoked);
    // Checking B's king (B43 sees B41 along B's file 4).
    assert_eq!(refused(text, "B13-B43"), provoked);
    // Quiet moves, even by the king along the attacked file.
    for m in ["W11-W71", "W11-W21", "B13-B33", "W42-W41", "W42-W43", "W42-W52"] {
        assert_legal(text, m);
    }
}

/// §4: making a piece attack the threat's king without the right is
/// legal and is not a check; the threat may then leave its king attacked
/// (no check to escape), but may not provoke the attacker.
#[test]
fn s4_latent_attack_is_legal_and_not_a_check() {
    let mut p = pos("WK@W41,WR@Y13,BK@B41,YK@Y42 W WBY - ccw");
    let out = play(&mut p, "Y13-Y12");
    assert!(out.checks.is_empty(), "a latent attack is not a check");
    assert!(!out.provoked);
    assert_position(&p, "WK@W41,BK@B41,YK@Y42,WR@Y12 B WBY - ccw");
    play(&mut p, "B41-B42");
    assert!(!p.is_check());
    // Y52 stays on the attacked rank: legal.
    assert_eq!(
        p.legal_moves().iter().map(|m| m.to_string()).collect::<BTreeSet<_>>(),
        names("Y42-Y41 Y42-Y43 Y42-Y52")
    );
    // W may not take Y's king either: the latent attack gives no right.
    let w_turn = "WK@W41,WR@Y12,BK@B41,YK@Y42 W WBY - ccw";
    assert_eq!(
        refused(w_turn, "Y12-Y42"),
        Reason::NoRetaliationRight {
            mover: Side::W,
            upstream: Side::Y
        }
    );
    // The restriction on Y: no capture of a W piece while W attacks its king.
    let y_turn = "WK@W41,WR@Y12,WN@W26,BK@B42,YK@Y42,YR@W16 Y WBY - ccw";
    assert_eq!(
        refused(y_turn, "W16-W26"),
        Reason::KingAttacked {
            by: Side::W,
            why: Attack::Provoked
        }
    );
    assert_legal(y_turn, "W16-W15");
}

/// §4 legality 3: a retaliation move that checks the threat sets a standing
/// check (S:WY); it survives B's move; at Y's turn Y must escape W's attack.
#[test]
fn s4_standing_retaliation_check() {
    let mut p = pos("WK@W41,WR@B13,BK@B42,YK@Y41 W WBY R:WY ccw");
    let out = play(&mut p, "B13-B63");
    assert!(out.checks.contains(Side::Y), "a retaliation move checks the threat");
    assert!(!out.checks.contains(Side::B));
    assert!(!out.provoked);
    assert_position(&p, "WK@W41,WR@B63,BK@B42,YK@Y41 B WBY S:WY ccw");
    play(&mut p, "B42-B41");
    assert_position(&p, "WK@W41,WR@B63,BK@B41,YK@Y41 Y WBY S:WY ccw");
    assert!(p.is_check(), "a standing check is a check");
    let text = format_position(&p);
    assert_eq!(legal(&text), names("Y41-Y51"));
    assert_eq!(
        refused(&text, "Y41-Y42"),
        Reason::KingAttacked {
            by: Side::W,
            why: Attack::Standing
        }
    );
    // Without the flag the same attack is latent: Y42 is legal.
    let latent = "WK@W41,WR@B63,BK@B41,YK@Y41 Y WBY - ccw";
    assert!(!pos(latent).is_check());
    assert_eq!(legal(latent), names("Y41-Y42 Y41-Y51"));
    // The standing check ends with Y's move.
    play(&mut p, "Y41-Y51");
    assert_position(&p, "WK@W41,WR@B63,BK@B41,YK@Y51 W WBY - ccw");
}

/// §4 (下家反攻一步把上家将死): the standing check can mate the threat at
/// its turn; the mated side's target (W) moves next.
#[test]
fn s4_standing_check_mates() {
    let mut p = pos("WK@W41,WR@B13,WR@Y53,BK@B42,YK@Y41 W WBY R:WY ccw");
    play(&mut p, "B13-B63");
    // B's only move: B43 is on W's rank-3 line, B52 on Y53's file-5 line.
    assert_eq!(
        p.legal_moves().iter().map(|m| m.to_string()).collect::<BTreeSet<_>>(),
        names("B42-B41")
    );
    let out = play(&mut p, "B42-B41");
    assert_eq!(out.eliminated.as_slice(), &[mate(Side::Y, true)]);
    assert_position(&p, "WK@W41,WR@B63,WR@Y53,BK@B41 W WB - ccw");
}

/// §7 flags: a retaliation check of the threat that also checks the target
/// leaves both R:BW and S:WY, written R first.
#[test]
fn s4_double_check_sets_both_flags() {
    let mut p = pos("WK@W41,WR@W36,WP@O,WP@BM5,BK@B51,YK@Y51 W WBY R:WY ccw");
    let out = play(&mut p, "W36-W56");
    assert!(out.checks.contains(Side::B) && out.checks.contains(Side::Y));
    assert!(out.provoked);
    assert_eq!(
        format_position(&p),
        "WK@W41,WR@W56,BK@B51,YK@Y51,WP@BM5,WP@O B WBY R:BW;S:WY ccw"
    );
    assert!(p.is_check());
}

/// §4: kings facing (照面) along a line: W's file 4 runs over Y's fan into
/// Y's file 6. The king that sees another stands attacked by it.
#[test]
fn s4_kings_face_along_a_line() {
    let text = "WK@W52,BK@B41,YK@Y63 W WBY - ccw";
    assert_eq!(refused(text, "W52-W42"), Reason::KingsFace(Side::Y));
    // Through W's 顶弧 into B's file 5.
    let text = "WK@W42,BK@B52,YK@Y41 W WBY - ccw";
    assert_eq!(refused(text, "W42-W52"), Reason::KingsFace(Side::B));
    assert_destinations(text, "W42", "W41 W43");
    // Facing the threat's king is a check, and W may not take it without the right.
    let text = "WK@W42,BK@B41,YK@Y62 W WBY - ccw";
    assert!(pos(text).is_check());
    assert_eq!(legal(text), names("W42-W52"));
    assert!(matches!(refused(text, "W42-Y62"), Reason::NoRetaliationRight { .. }));
}

/// §4 枢轴线: two kings on their own file 5 see each other through an empty O.
#[test]
fn s4_kings_face_through_o() {
    // WM5 blocked: only the pivot through O joins W52 and B52.
    let text = "WK@W42,BK@B52,YK@Y41,YP@WM5 W WBY - ccw";
    assert_eq!(refused(text, "W42-W52"), Reason::KingsFace(Side::B));
    assert_destinations(text, "W42", "W41 W43");
    // A piece on O breaks the pivot.
    assert_destinations("WK@W42,BK@B52,YK@Y41,YP@WM5,YP@O W WBY - ccw", "W42", "W41 W43 W52");
    // A piece between a king and O breaks it too.
    assert_destinations("WK@W42,BK@B52,YK@Y41,YP@WM5,YP@B54 W WBY - ccw", "W42", "W41 W43 W52");
}

/// §4: pair by pair: W–B face through O when their two pivot lines are
/// clear, whatever Y's file 5 holds.
#[test]
fn s4_kings_face_pair_by_pair() {
    // Y's king on its file 5 but its pivot line blocked (Y55); YM5 and WM5 blocked.
    let text = "WK@W42,BK@B52,YK@Y52,YP@WM5,WP@YM5,YP@Y55 W WBY - ccw";
    assert_eq!(refused(text, "W42-W52"), Reason::KingsFace(Side::B));
    // B's pivot line blocked as well: nobody faces.
    let text = "WK@W42,BK@B52,YK@Y52,YP@WM5,WP@YM5,YP@Y55,BP@B55 W WBY - ccw";
    assert_legal(text, "W42-W52");
}

/// §4: a king "captures" a king it sees by flying to it, here through O; it
/// is sudden death (§5) for the target.
#[test]
fn s4_king_flies_through_o_to_capture() {
    let text = "WK@W52,BK@B52,YK@Y41,YP@WM5 W WBY - ccw";
    assert_eq!(legal(text), names("W52-W42 W52-W62 W52-B52"));
    let mut p = pos(text);
    let out = play(&mut p, "W52-B52");
    assert_eq!(out.eliminated.as_slice(), &[sudden_death(Side::B)]);
    assert_eq!(p.turn(), Side::Y);
    assert_eq!(p.king(Side::W), Some(point("B52")));
    assert_eq!(format_position(&p), "WK@B52,YK@Y41,YP@WM5 Y WY - ccw");
}

/// §7: every position reachable by play can be written and read back, even
/// one where a king that flew to capture stands outside its palace.
#[test]
fn s7_flown_king_position_round_trips() {
    let mut p = pos("WK@W52,BK@B52,YK@Y41,YP@WM5 W WBY - ccw");
    play(&mut p, "W52-B52");
    let text = format_position(&p);
    assert_eq!(parse_position(&text).map(|q| q == p), Ok(true), "{text}");
}

// ---------------------------------------------------------------- §5 ending a side

/// §5 stalemate (困毙): a side with no legal move at its turn is removed, not
/// in check; its pieces leave; its target moves next; phase 2 begins.
#[test]
fn s5_stalemate_eliminates() {
    let mut p = pos("WK@W41,WR@W63,WR@B12,BK@B41,YK@Y41 W WBY - ccw");
    let out = play(&mut p, "W63-W53");
    assert!(out.checks.is_empty());
    assert_eq!(out.eliminated.as_slice(), &[mate(Side::B, false)]);
    assert_position(&p, "WK@W41,WR@W53,WR@B12,YK@Y41 Y WY - ccw");
    assert_eq!(p.live().count(), 2);
    // Y51 is on W53's file-5 line through YM5.
    assert_eq!(
        p.legal_moves().iter().map(|m| m.to_string()).collect::<BTreeSet<_>>(),
        names("Y41-Y42")
    );
}

/// §5 mate (将死) in check; the R flag the check would give B ends with the
/// phase change.
#[test]
fn s5_mate_eliminates_and_clears_flags() {
    let mut p = pos("WK@W41,WR@B12,WR@B93,BK@B41,YK@Y41 W WBY - ccw");
    let out = play(&mut p, "B93-B91");
    assert!(out.checks.contains(Side::B));
    assert_eq!(out.eliminated.as_slice(), &[mate(Side::B, true)]);
    assert_position(&p, "WK@W41,WR@B12,WR@B91,YK@Y41 Y WY - ccw");
}

/// §5 clockwise: the mated side's target is the next to move (W → Y → B).
#[test]
fn s5_mate_clockwise_target_moves_next() {
    let mut p = pos("WK@W41,WR@Y12,WR@Y93,BK@B41,YK@Y41 W WYB - cw");
    let out = play(&mut p, "Y93-Y91");
    assert_eq!(out.eliminated.as_slice(), &[mate(Side::Y, true)]);
    assert_position(&p, "WK@W41,WR@Y12,WR@Y91,BK@B41 B WB - cw");
}

/// §5: two sides can be left without a move in a row; the last one wins.
#[test]
fn s5_two_stalemates_end_the_game() {
    let mut p = pos("WK@W41,WR@W63,WR@B12,WR@Y12,BK@B41,YK@Y41 W WBY - ccw");
    let out = play(&mut p, "W63-W53");
    assert_eq!(out.eliminated.as_slice(), &[mate(Side::B, false), mate(Side::Y, false)]);
    assert!(p.is_over());
    assert_position(&p, "WK@W41,WR@W53,WR@B12,WR@Y12 W W - ccw");
    assert!(p.legal_moves().is_empty());
}

/// §5 sudden death (猝死): a third side's move exposes the target's king;
/// capturing it eliminates the target; its pieces leave; flags end.
#[test]
fn s5_sudden_death_after_a_third_sides_move() {
    let mut p = pos("WK@W41,WR@B44,YP@B43,BP@W33,BK@B41,YK@Y41 Y WBY - ccw");
    play(&mut p, "B43-B33");
    assert_position(&p, "WK@W41,WR@B44,YP@B33,BP@W33,BK@B41,YK@Y41 W WBY - ccw");
    let out = play(&mut p, "B44-B41");
    assert_eq!(out.captured.map(|c| (c.side, c.role)), Some((Side::B, Role::King)));
    assert_eq!(out.eliminated.as_slice(), &[sudden_death(Side::B)]);
    assert_position(&p, "WK@W41,WR@B41,YP@B33,YK@Y41 Y WY - ccw");
}

/// §5: the threat's king may be taken only with the right.
#[test]
fn s5_sudden_death_of_the_threat_needs_the_right() {
    let text = "WK@W41,WR@Y44,BK@B41,YK@Y41 W WBY - ccw";
    assert!(matches!(refused(text, "Y44-Y41"), Reason::NoRetaliationRight { .. }));
    let mut p = pos("WK@W41,WR@Y44,BK@B41,YK@Y41 W WBY R:WY ccw");
    let out = play(&mut p, "Y44-Y41");
    assert_eq!(out.eliminated.as_slice(), &[sudden_death(Side::Y)]);
    assert_position(&p, "WK@W41,WR@Y41,BK@B41 B WB - ccw");
}

/// §5: sudden death is judged after the victim's pieces leave: here B's
/// soldier shields W's king from Y's chariot, so taking B's king is illegal.
#[test]
fn s5_sudden_death_judged_after_removal() {
    let text = "WK@W42,BP@W44,YR@W46,WR@B44,BK@B41,YK@Y41 W WBY - ccw";
    assert!(!pos(text).is_check());
    assert!(matches!(
        refused(text, "B44-B41"),
        Reason::KingAttacked { by: Side::Y, .. }
    ));
    assert_legal(text, "B44-B45");
    // With W's king off file 4 the same capture is legal.
    assert_legal("WK@W52,BP@W44,YR@W46,WR@B44,BK@B41,YK@Y41 W WBY - ccw", "B44-B41");
}

/// §5 N: after a removal that is not a mate, the side to move keeps the move
/// but may not capture a king this turn; the exposed king must escape.
#[test]
fn s5_removal_sets_no_king_capture() {
    let mut p = pos("WK@W41,WR@B44,YP@B43,BK@B41,YK@Y41 W WBY R:WY ccw");
    let out = p.remove(Side::Y);
    assert!(out.is_empty(), "nobody is mated: {out:?}");
    // Y's pieces leave, W keeps the move, the R flag ends with phase 3.
    assert_position(&p, "WK@W41,WR@B44,BK@B41 W WB N ccw");
    assert!(p.no_king_capture());
    let text = format_position(&p);
    assert_eq!(refused(&text, "B44-B41"), Reason::NoKingCaptureThisTurn);
    assert_legal(&text, "B44-B42");
    assert_eq!(pos(&text).legal_moves().len(), 22);
    play(&mut p, "W41-W42");
    assert!(!p.no_king_capture());
    assert!(p.is_check());
    assert_eq!(
        p.legal_moves().iter().map(|m| m.to_string()).collect::<BTreeSet<_>>(),
        names("B41-B51")
    );
}

/// §5: a side removed at its own turn passes the move to the next live side.
#[test]
fn s5_removal_of_the_side_to_move() {
    let mut p = pos(&format!("WR@W53,{KINGS41} W WBY - ccw"));
    p.remove(Side::W);
    assert_position(&p, "BK@B41,YK@Y41 B BY N ccw");
    let mut p = pos(&format!("WR@W53,{KINGS41} B WBY - ccw"));
    p.remove(Side::W);
    assert_position(&p, "BK@B41,YK@Y41 B BY N ccw");
}

/// §7 perft / §5: a side to move without a legal move is mated first and the
/// next side moves without using up depth.
#[test]
fn s5_perft_resolves_a_mated_side_to_move() {
    let p = pos("WK@W41,WR@B12,WR@B91,BK@B41,YK@Y41 B WBY - ccw");
    assert_eq!(engine::perft(&p, 1), 2, "Y41-Y42 and Y41-Y51 after B is mated");
}
