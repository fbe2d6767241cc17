//! RULES-YANYI §11: the board counts, the first moves, the scenarios and the
//! piece checks, one test each; plus the examples of §4–§8.

use engine::yanyi::{
    Cause, Colour, Move, Player, Position, Reason, TurnReason, format_position, parse_move, parse_position, perft,
};

const Y: &str = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";

/// A position of §11's scenario table: placement without Y, side to move, `- -`.
fn scenario(placement: &str, turn: &str) -> Position {
    let text = format!("{placement},{Y} {turn} - -");
    parse_position(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(s: &str) -> Move {
    parse_move(s).unwrap()
}

fn texts(moves: &[Move]) -> Vec<String> {
    moves.iter().map(|m| m.to_string()).collect()
}

fn placement(pos: &Position) -> String {
    format_position(pos).split(' ').next().unwrap().to_owned()
}

fn has(pos: &Position, tokens: &str) -> bool {
    let p = placement(pos);
    tokens.split(',').all(|t| p.split(',').any(|x| x == t))
}

#[test]
fn initial_perft() {
    let p = Position::initial();
    assert_eq!(perft(&p, 1), 48);
    assert_eq!(perft(&p, 2), 2_304);
    assert_eq!(perft(&p, 3), 110_208);
}

#[test]
fn initial_first_moves() {
    let want = "n5-m5 n5-n6 q5-o5 q5-p5 o6-o5 o6-m6 o6-n6 o6-p6 o6-o7 o6-o8 o6-o9 o6-o10 o6-o11 q6-o5 q6-o7 q6-p8 n7-n6 n7-m7 n7-n8 q7-o5 q7-o9 q8-p9 n9-n8 n9-m9 n9-n10 q9-p9 q10-p9 n11-n10 n11-m11 n11-n12 q11-o9 q11-o13 o12-o7 o12-o8 o12-o9 o12-o10 o12-o11 o12-m12 o12-n12 o12-p12 o12-o13 q12-p10 q12-o11 q12-o13 n13-n12 n13-m13 q13-o13 q13-p13";
    assert_eq!(texts(&Position::initial().legal_moves()).join(" "), want);
}

#[test]
fn scenario_1_check_answers_first() {
    let mut p = scenario("RK@h1,RP@i4,GP@n9,GK@q9,RC@e10,BP@i14,BA@h17,BK@i17,BA@j17", "R");
    let o = p.play(mv("e10-i10")).unwrap();
    assert!(p.in_check(Player::B));
    assert_eq!(p.turn(), Player::B);
    assert_eq!(o.turn_reason, TurnReason::Check);
    assert_eq!(p.legal_moves().len(), 4);
    p.play(mv("h17-i16")).unwrap();
    assert_eq!(p.turn(), Player::R);
}

#[test]
fn scenario_2_two_checks_keep_the_cycle() {
    let mut p = scenario("RK@h1,RR@i5,RC@e9,GK@q9,RN@i10,BK@i17", "R");
    let o = p.play(mv("i10-k9")).unwrap();
    assert!(p.in_check(Player::G) && p.in_check(Player::B));
    assert_eq!(p.turn(), Player::G);
    assert_eq!(o.turn_reason, TurnReason::Cycle);
}

#[test]
fn scenario_3_and_4_absorption_by_the_last_mover() {
    let start = "RK@h1,GC@m5,RC@i9,GK@q9,GC@m12,BA@h17,BK@i17,BA@j17";
    let mut p = scenario(start, "G");
    let o = p.play(mv("m5-i5")).unwrap();
    assert_eq!(o.eliminated.len(), 1);
    assert_eq!(o.eliminated[0].player, Player::B);
    assert_eq!(o.eliminated[0].cause, Cause::Mate);
    assert_eq!(o.eliminated[0].absorbed_by, Some(Player::G));
    assert!(has(&p, "GA@h17,GA@j17"), "{}", format_position(&p));
    assert_eq!(p.turn(), Player::R);

    let mut p = scenario(start, "G");
    let o = p.play(mv("m12-i12")).unwrap();
    assert_eq!(o.eliminated[0].player, Player::B);
    assert_eq!(o.eliminated[0].absorbed_by, Some(Player::R));
    assert!(has(&p, "RA@h17,RA@j17"), "{}", format_position(&p));
    assert_eq!(p.turn(), Player::R);
}

#[test]
fn scenario_5_alliance_answers_the_check() {
    let mut p = scenario("RK@i1,RP@i4,GN@c7,GP@n9,GK@q9,BR@q12,BP@i14,BK@i17", "G");
    assert!(p.in_check(Player::G));
    let o = p.play(mv("c7-a8")).unwrap();
    assert_eq!(p.alliance(), Some((Player::G, Player::B)));
    assert_eq!(o.han_to, Some(Player::R));
    assert!(has(&p, "RR@d7,RC@c9,RR@d9,RR@d11"), "{}", format_position(&p));
    assert!(p.piece_at(engine::yanyi::Point::parse("a9").unwrap()).is_none());
    assert_eq!(p.turn(), Player::B);
    assert!(format_position(&p).ends_with(" B GB -"), "{}", format_position(&p));
}

#[test]
fn scenario_6_activated_chariot_checks() {
    let p = scenario("RK@i1,RP@i4,GN@c7,GK@q9,BP@i14,BK@i17", "G");
    assert!(!p.is_legal(mv("c7-a8")));
    let mut q = p;
    let e = q.play(mv("c7-a8")).unwrap_err();
    assert_eq!(e.reason, Reason::KingAttacked([Player::R].into_iter().collect()));
    assert_eq!(q, p);
}

#[test]
fn scenario_7_killing_the_emperor() {
    let mut p = scenario("RK@i1,RP@i4,GN@b7,GP@n9,GK@q9,BP@i14,BK@i17", "G");
    let o = p.play(mv("b7-a9")).unwrap();
    assert!(o.emperor_killed);
    assert!(has(&p, "GR@d7,GC@c9,GR@d9,GR@d11,GN@a9"), "{}", format_position(&p));
    assert_eq!(p.alliance(), Some((Player::B, Player::R)));
    assert_eq!(p.turn(), Player::B);
}

#[test]
fn scenario_8_facing_eliminates_both() {
    let mut p = scenario("RK@i1,GR@i9,GK@q9,BA@h17,BK@i17", "G");
    let o = p.play(mv("i9-j9")).unwrap();
    assert_eq!(o.eliminated.len(), 2);
    assert!(o.eliminated.iter().all(|e| e.cause == Cause::Facing));
    assert!(p.is_over());
    assert_eq!(p.winner(), Some(Player::G));
    assert_eq!(placement(&p), "YR@d7,YK@a9,YC@c9,YR@d9,GR@j9,GK@q9,YR@d11");
    assert_eq!(p.legal_moves().len(), 0);
}

#[test]
fn scenario_9_own_facing_is_illegal() {
    let mut p = scenario("RK@i1,BR@i9,GK@q9,BA@h17,BK@i17", "B");
    let e = p.play(mv("i9-j9")).unwrap_err();
    assert_eq!(e.reason, Reason::KingsFace(Player::R));
}

#[test]
fn scenario_10_double_cannon_mate_out_of_turn() {
    let mut p = scenario("RA@h1,RK@i1,RA@j1,GC@m6,GC@i7,GK@q9,BP@i14,BA@i16,BK@i17", "G");
    let o = p.play(mv("m6-i6")).unwrap();
    assert_eq!(o.checked, [Player::R].into_iter().collect());
    assert_eq!(o.eliminated[0].player, Player::R);
    assert_eq!(o.eliminated[0].cause, Cause::Mate);
    assert_eq!(o.eliminated[0].absorbed_by, Some(Player::G));
    assert!(has(&p, "GA@h1,GA@j1"));
    assert_eq!(p.turn(), Player::B);
}

#[test]
fn soldier_check() {
    let p = scenario("RK@i1,RP@e4,RP@k5,RP@m5,RP@i6,GK@q9,BP@i14,BK@i17", "R");
    let mut got: Vec<String> = p
        .legal_moves()
        .iter()
        .filter(|m| p.piece_at(m.from).unwrap().role == engine::yanyi::Role::Soldier)
        .map(|m| m.to_string())
        .collect();
    let mut want: Vec<String> = "e4-e5 e4-f4 k5-k6 k5-j5 k5-l5 m5-m6 m5-l5 m5-n5 i6-i7 i6-h6 i6-j6 i6-i5"
        .split(' ')
        .map(str::to_owned)
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn horse_check() {
    let p = scenario("RK@i1,RN@e4,RN@e14,GK@q9,GN@n5,BP@i14,BK@i17", "R");
    let got: Vec<String> = p
        .legal_moves()
        .iter()
        .filter(|m| p.piece_at(m.from).unwrap().role == engine::yanyi::Role::Horse)
        .map(|m| m.to_string())
        .collect();
    let mut want: Vec<&str> = "e4-f2 e4-f6 e4-g3 e4-g5 e14-f12 e14-f16 e14-g13 e14-g15"
        .split(' ')
        .collect();
    let mut got2 = got.clone();
    got2.sort();
    want.sort();
    assert_eq!(got2, want);
}

#[test]
fn first_move_cannon_check() {
    let text = format!("RK@i1,RC@f3,RC@l3,RP@i4,GK@q9,BP@i14,BK@i17,{Y} R - R");
    let p = parse_position(&text).unwrap();
    let got: Vec<String> = p
        .legal_moves()
        .iter()
        .filter(|m| m.from == engine::yanyi::Point::parse("f3").unwrap())
        .map(|m| m.to_string())
        .collect();
    let mut got = got;
    got.sort();
    // §11 lists them alphabetically; the engine lists them in canonical order.
    assert_eq!(
        got.join(" "),
        "f3-e3 f3-f1 f3-f2 f3-f4 f3-f5 f3-g3 f3-h3 f3-i3 f3-j3 f3-k3"
    );
    let e = p.clone().play(mv("f3-f6")).unwrap_err();
    assert_eq!(e.reason, Reason::CannonFirstMove);
}

#[test]
fn colours_are_the_texts() {
    assert_eq!(Colour::Y.kingdom(), "汉");
}

#[test]
fn initial_depth_3_out_of_turn_and_depth_4() {
    let p = Position::initial();
    let mut out_of_turn = 0;
    for a in p.legal_moves() {
        let mut p1 = p;
        p1.play_unchecked(a);
        for b in p1.legal_moves() {
            let mut p2 = p1;
            p2.play_unchecked(b);
            for c in p2.legal_moves() {
                let mut p3 = p2;
                p3.play_unchecked(c);
                if p3.turn() == Player::B {
                    out_of_turn += 1;
                }
            }
        }
    }
    assert_eq!(out_of_turn, 192);
    assert_eq!(perft(&p, 4), 7_475_436);
}

#[test]
fn stalemate_is_absorbed_by_the_last_mover() {
    let mut p = scenario("RK@i1,RA@i2,BR@c5,GR@h9,GR@j9,GK@q9,BP@i14,BK@i17", "B");
    let o = p.play(mv("c5-i5")).unwrap();
    assert_eq!(o.eliminated.len(), 1);
    let e = o.eliminated[0];
    assert_eq!(
        (e.player, e.cause, e.absorbed_by),
        (Player::R, Cause::Stalemate, Some(Player::B))
    );
    assert!(has(&p, "BA@i2"), "{}", format_position(&p));
    assert_eq!(p.turn(), Player::G);
    assert_eq!(o.turn_reason, TurnReason::Other);
}

#[test]
fn killing_the_emperor_in_phase_2_takes_the_force_without_alliance() {
    let mut p = scenario("RK@i1,RP@i4,GN@b7,GK@q9", "G");
    let o = p.play(mv("b7-a9")).unwrap();
    assert!(o.emperor_killed);
    assert_eq!(o.alliance, None);
    assert_eq!(p.alliance(), None);
    assert!(has(&p, "GR@d7,GC@c9,GR@d9,GR@d11"));
    assert_eq!(p.turn(), Player::R);
}

#[test]
fn alliance_points_by_horse() {
    // 蜀's horse on the 魏 point allies 蜀 and 魏; the 汉 force goes to 吴.
    let base = scenario("RK@i1,RP@i4,RN@c7,GP@n9,GK@q9,BN@c11,BP@i14,BK@i17", "R");
    let mut p = base;
    let o = p.play(mv("c7-a8")).unwrap();
    assert_eq!((o.alliance, o.han_to), (Some((Player::B, Player::R)), Some(Player::G)));
    // ... or on the 吴 point b9: 吴 and 蜀, the force to 魏.
    let mut p = base;
    let o = p.play(mv("c7-b9")).unwrap();
    assert_eq!((o.alliance, o.han_to), (Some((Player::G, Player::R)), Some(Player::B)));
    // Allies may not capture each other afterwards; the alliance is written in the text.
    assert!(format_position(&p).contains(" GR "), "{}", format_position(&p));
    // 吴's horse on its own point does nothing.
    let mut p = scenario("RK@i1,RP@i4,GN@c7,GN@c11,GP@n9,GK@q9,BP@i14,BK@i17", "G");
    let o = p.play(mv("c7-b9")).unwrap();
    assert_eq!(o.alliance, None);
    assert!(p.han_static());
    // On a10 (蜀's point) 吴 allies with 蜀 and the chariot d9, now 魏's, does not reach q9 (n9 blocks).
    let mut p = scenario("RK@i1,RP@i4,GN@c7,GN@c11,GP@n9,GK@q9,BP@i14,BK@i17", "G");
    let o = p.play(mv("c11-a10")).unwrap();
    assert_eq!((o.alliance, o.han_to), (Some((Player::G, Player::R)), Some(Player::B)));
}

#[test]
fn allies_cannot_capture_each_other_and_never_check() {
    // 吴 and 魏 allied; 魏's chariot stands on q12 in line with 吴's king: no check.
    let text = "RK@i1,RP@i4,RR@d7,GN@a8,RC@c9,RR@d9,GP@n9,GK@q9,RR@d11,BR@q12,BP@i14,BK@i17 B GB -";
    let p = parse_position(text).unwrap();
    assert!(!p.in_check(Player::G));
    let e = p.clone().play(mv("q12-q9")).unwrap_err();
    assert_eq!(
        e.reason,
        Reason::KingNeverCaptured(engine::yanyi::Piece::new(Colour::G, engine::yanyi::Role::King))
    );
    let text = "RK@i1,RP@i4,RR@d7,GN@a8,RC@c9,RR@d9,GP@n9,GK@q9,RR@d11,BR@q12,GP@q11,BP@i14,BK@i17 B GB -";
    let p = parse_position(text).unwrap();
    let e = p.clone().play(mv("q12-q11")).unwrap_err();
    assert!(
        matches!(e.reason, Reason::AllyPiece { ally: Player::G, .. }),
        "{:?}",
        e.reason
    );
    assert!(e.to_string().contains("allies may not capture each other"), "{e}");
}

/// The seed's example of 被将先走 (§7.2): 蜀 checks 魏, 魏 answers, 蜀 again; only a
/// non-checking move of 蜀 gives 吴 the turn.
#[test]
fn seed_example_checks_keep_the_turn_between_two() {
    let mut p = scenario("RK@h1,GP@n9,GK@q9,RR@e15,BK@i17", "R");
    p.play(mv("e15-e17")).unwrap();
    assert_eq!(p.turn(), Player::B);
    assert_eq!(texts(&p.legal_moves()), ["i17-i16"]);
    let o = p.play(mv("i17-i16")).unwrap();
    assert_eq!((o.next, o.turn_reason), (Player::R, TurnReason::Cycle));
    let o = p.play(mv("e17-e16")).unwrap();
    assert_eq!((o.next, o.turn_reason), (Player::B, TurnReason::Check));
    p.play(mv("i16-i15")).unwrap();
    assert_eq!(p.turn(), Player::R);
    let o = p.play(mv("h1-h2")).unwrap();
    assert_eq!((o.next, o.turn_reason), (Player::G, TurnReason::Cycle));
}

/// Every refusal names the rule in the game's words.
#[test]
fn refusals_are_explained() {
    let start = Position::initial();
    let custom = scenario("RK@i1,RN@e4,GR@a5,GR@d5,GE@m7,GK@o9,GC@o11,GP@o13,BP@i14,BK@i17", "G");
    let red = scenario("RK@i1,RN@e4,GC@m5,GK@q9,BP@i14,BK@i17", "R");
    let cases: [(&Position, &str, &str); 14] = [
        (&start, "i9-i10", "there is no piece on i9"),
        (&start, "e14-e13", "not your piece"),
        (&start, "d7-d6", "the static 汉 force never moves by itself"),
        (&start, "q9-q10", "you cannot capture your own advisor"),
        (
            &start,
            "n9-o9",
            "a soldier on its 防线 may move forward or sideways, never back",
        ),
        (&start, "o12-o5", "blocked: a piece on o6"),
        (
            &start,
            "o12-l12",
            "on a player's first move a cannon may not leave its camp",
        ),
        (&custom, "m7-k5", "an elephant may not leave its camp"),
        (&custom, "o9-n9", "a king may not leave its palace"),
        (&custom, "a5-a9", "the emperor 汉 can be taken only by a horse"),
        (&custom, "d5-d7", "the static 汉 chariot cannot be taken"),
        (&custom, "o11-o13", "you cannot capture your own soldier"),
        (&red, "e4-d6", "the horse's 日 must lie wholly on the board"),
        (
            &red,
            "e4-e5",
            "not this piece's move: a horse moves one 日 (no leg can block it)",
        ),
    ];
    for (pos, m, words) in cases {
        let mut q = *pos;
        let e = q.play(mv(m)).expect_err(m);
        let text = e.to_string();
        assert!(text.starts_with(&format!("illegal move {m}: ")), "{text}");
        assert!(text.contains(words), "{m}: {text}");
        assert_eq!(q, *pos);
    }
    let e = start.clone().play_as(Player::B, mv("e14-e13")).unwrap_err();
    assert_eq!(
        e.reason,
        Reason::NotYourTurn {
            player: Player::B,
            turn: Player::G
        }
    );
    assert!(e.to_string().contains("not your turn"), "{e}");
    // A cannon capture needs exactly one screen; kings are never captured.
    let p = scenario("RK@i1,RC@e9,GK@q9,GP@p9,GR@o9,BP@i14,BK@i17", "R");
    let e = p.clone().play(mv("e9-q9")).unwrap_err();
    assert_eq!(e.reason, Reason::CannonScreen(2));
    assert!(p.is_legal(mv("e9-p9")), "o9 screens p9");
    let p = scenario("RK@i1,RC@e9,GK@q9,GR@o9,BP@i14,BK@i17", "R");
    let e = p.clone().play(mv("e9-q9")).unwrap_err();
    assert!(e.to_string().contains("kings are never captured"), "{e}");
}
