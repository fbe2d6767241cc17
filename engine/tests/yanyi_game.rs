//! The game record of 三国演弈棋 (RULES-YANYI §9).

use engine::yanyi::game::{Action, DrawReason, Effect, EliminationReason, Ending, Event, GameError, Outcome};
use engine::yanyi::{Player, Position, YanyiGame, parse_move, parse_position};

fn at(player: Player, action: Action, t: u64) -> Event {
    Event { player, action, at: t }
}

fn mv(game: &mut YanyiGame, s: &str) -> Vec<Effect> {
    let player = game.position().turn();
    let t = game.events().last().map_or(0, |e| e.at + 1);
    game.apply(at(player, Action::Move(parse_move(s).unwrap()), t))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn opened() -> YanyiGame {
    let mut g = YanyiGame::new();
    for m in ["q12-o13", "e14-e13", "e4-e5"] {
        mv(&mut g, m);
    }
    assert!(g.position().pending().is_empty());
    g
}

#[test]
fn leaving_before_all_three_have_moved_aborts() {
    let mut g = YanyiGame::new();
    mv(&mut g, "q12-o13");
    let eff = g.apply(at(Player::R, Action::Abandon, 10)).unwrap();
    let Some(Effect::Finished(r)) = eff.last() else {
        panic!("{eff:?}")
    };
    assert_eq!(r.ending, Ending::Aborted { by: Player::R });
    assert_eq!(r.outcomes, [None; 3]);
    assert_eq!(g.apply(at(Player::G, Action::Resign, 11)), Err(GameError::Finished));
}

#[test]
fn resignation_off_turn_keeps_the_move() {
    let mut g = opened();
    assert_eq!(g.position().turn(), Player::G);
    let eff = g.apply(at(Player::B, Action::Resign, 100)).unwrap();
    assert!(
        matches!(eff[0], Effect::Eliminated(d) if d.player == Player::B && d.reason == EliminationReason::Resign && d.absorbed_by.is_none())
    );
    assert_eq!(g.position().turn(), Player::G);
    assert!(g.position().pieces_of(engine::yanyi::Colour::B).is_empty());
    assert!(!g.is_finished());
    assert_eq!(
        g.apply(at(Player::B, Action::Resign, 101)),
        Err(GameError::NotLive(Player::B))
    );
    // The last two: one resigns, the other wins.
    let eff = g.apply(at(Player::G, Action::Resign, 102)).unwrap();
    let Some(Effect::Finished(r)) = eff.last() else {
        panic!()
    };
    assert_eq!(r.ending, Ending::LastStanding(Player::R));
    assert_eq!(
        r.outcomes,
        [Some(Outcome::Loss), Some(Outcome::Loss), Some(Outcome::Win)]
    );
    assert_eq!(r.eliminations.len(), 2);
    assert_eq!(r.placing(), [Some(2), Some(3), Some(1)]);
}

#[test]
fn time_forfeit_of_the_player_to_move_passes_from_the_last_mover() {
    let mut g = opened();
    g.apply(at(Player::G, Action::Timeout, 50)).unwrap();
    // The last mover was 蜀: next(蜀) among 魏 and 蜀 is 魏.
    assert_eq!(g.position().turn(), Player::B);
    assert_eq!(g.departures()[0].reason, EliminationReason::Time);
}

#[test]
fn not_your_turn_and_illegal_moves_are_refused() {
    let mut g = YanyiGame::new();
    let e = g
        .apply(at(Player::B, Action::Move(parse_move("e14-e13").unwrap()), 0))
        .unwrap_err();
    assert_eq!(
        e,
        GameError::NotYourTurn {
            player: Player::B,
            turn: Player::G
        }
    );
    assert!(e.to_string().starts_with("not your turn"));
    let e = g
        .apply(at(Player::G, Action::Move(parse_move("o12-o5").unwrap()), 0))
        .unwrap_err();
    assert!(e.to_string().contains("o12-o5"), "{e}");
    assert!(g.events().is_empty());
    mv(&mut g, "q12-o13");
    let eff = g.apply(at(Player::R, Action::Resign, 0)).unwrap();
    assert!(matches!(eff.last(), Some(Effect::Finished(r)) if r.ending == Ending::Aborted { by: Player::R }));
}

#[test]
fn draw_by_agreement_and_lapse() {
    let mut g = opened();
    assert_eq!(
        g.apply(at(Player::B, Action::OfferDraw, 5)),
        Err(GameError::NotYourTurn {
            player: Player::B,
            turn: Player::G
        })
    );
    g.apply(at(Player::G, Action::OfferDraw, 5)).unwrap();
    assert_eq!(
        g.pending_offer(),
        Some((Player::G, [Player::B, Player::R].into_iter().collect()))
    );
    g.apply(at(Player::B, Action::AnswerDraw { accept: true }, 6)).unwrap();
    let eff = g.apply(at(Player::R, Action::AnswerDraw { accept: true }, 7)).unwrap();
    let Some(Effect::Finished(r)) = eff.last() else {
        panic!()
    };
    assert_eq!(r.ending, Ending::Draw(DrawReason::Agreement));
    assert_eq!(r.outcomes, [Some(Outcome::Draw); 3]);

    // Unanswered, it lapses when the offerer's next turn begins; a decline ends it at once.
    let mut g = opened();
    g.apply(at(Player::G, Action::OfferDraw, 5)).unwrap();
    mv(&mut g, "o13-m12");
    mv(&mut g, "e13-e12");
    let eff = mv(&mut g, "e5-e6");
    assert!(eff.contains(&Effect::DrawOfferLapsed { by: Player::G }), "{eff:?}");
    g.apply(at(Player::G, Action::OfferDraw, 100)).unwrap();
    let eff = g
        .apply(at(Player::R, Action::AnswerDraw { accept: false }, 101))
        .unwrap();
    assert!(eff.contains(&Effect::DrawOfferLapsed { by: Player::G }));
    assert_eq!(g.pending_offer(), None);
}

#[test]
fn repetition_with_one_perpetual_checker_loses() {
    // Phase 2: 蜀's chariot checks along ranks 9 and 10, 吴's king steps between q9 and q10.
    let start = parse_position("RK@i1,RR@e10,GK@q9 R - -").unwrap();
    let mut g = YanyiGame::from_position(start);
    for m in ["e10-e9", "q9-q10", "e9-e10", "q10-q9", "e10-e9", "q9-q10", "e9-e10"] {
        mv(&mut g, m);
        assert!(!g.is_finished(), "{m}");
    }
    let eff = mv(&mut g, "q10-q9");
    assert!(eff.iter().any(|e| matches!(e, Effect::Eliminated(d) if d.player == Player::R && d.reason == EliminationReason::PerpetualCheck)), "{eff:?}");
    assert_eq!(g.result().unwrap().ending, Ending::LastStanding(Player::G));
}

#[test]
fn repetition_after_a_capture_counts_from_it() {
    // The game keeps only the positions since the last capture (none
    // before it can occur again). 蜀's chariot takes on e9 with check, then
    // checks along ranks 9 and 10 while 吴's king steps between q9 and q10:
    // the position after the capture occurs a third time at 蜀's fourth
    // move after it, every move of 蜀 since its first occurrence a check.
    let start = parse_position("RK@i1,RR@e10,GK@q9,GP@e9 R - -").unwrap();
    let mut g = YanyiGame::from_position(start);
    let eff = mv(&mut g, "e10-e9");
    assert!(
        eff.iter()
            .any(|e| matches!(e, Effect::Moved { outcome, .. } if outcome.captured.is_some())),
        "{eff:?}"
    );
    for m in ["q9-q10", "e9-e10", "q10-q9", "e10-e9", "q9-q10", "e9-e10", "q10-q9"] {
        mv(&mut g, m);
        assert!(!g.is_finished(), "{m}");
    }
    let eff = mv(&mut g, "e10-e9");
    assert!(eff.iter().any(|e| matches!(e, Effect::Eliminated(d) if d.player == Player::R && d.reason == EliminationReason::PerpetualCheck)), "{eff:?}");
    assert_eq!(g.result().unwrap().ending, Ending::LastStanding(Player::G));
}

#[test]
fn repetition_without_checks_draws() {
    let start = parse_position("RK@i1,RR@a5,GK@q9 R - -").unwrap();
    let mut g = YanyiGame::from_position(start);
    for m in ["i1-h1", "q9-q10", "h1-i1", "q10-q9", "i1-h1", "q9-q10", "h1-i1"] {
        mv(&mut g, m);
    }
    let eff = mv(&mut g, "q10-q9");
    let Some(Effect::Finished(r)) = eff.last() else {
        panic!("{eff:?}")
    };
    assert_eq!(r.ending, Ending::Draw(DrawReason::Repetition));
}

#[test]
fn six_checks_in_a_row_lose_in_phase_2() {
    // 蜀's chariot checks along the files q, p, o and finally rank 9; no position occurs three times.
    let start = parse_position("RK@i1,RR@e12,GK@q9 R - -").unwrap();
    let mut g = YanyiGame::from_position(start);
    let seq = [
        "e12-q12", "q9-p9", "q12-p12", "p9-q9", "p12-q12", "q9-p9", "q12-p12", "p9-o9", "p12-o12", "o9-p9",
    ];
    for m in seq {
        mv(&mut g, m);
        assert!(!g.is_finished(), "{m}");
    }
    assert_eq!(g.consecutive_checks(Player::R, Player::G), 5);
    let eff = mv(&mut g, "o12-o9");
    assert!(eff.iter().any(|e| matches!(e, Effect::Eliminated(d) if d.player == Player::R && d.reason == EliminationReason::PerpetualCheck)), "{eff:?}");
}

#[test]
fn no_progress_draws_after_100_plies_in_phase_2() {
    let start = parse_position("RK@i1,RR@e5,GK@q9 R - -").unwrap();
    let mut g = YanyiGame::from_position(start);
    let mut visited = vec![];
    while !g.is_finished() {
        let pos = *g.position();
        let m = if pos.turn() == Player::R {
            // A chariot move to a new point that gives no check.
            pos.legal_moves()
                .into_iter()
                .find(|m| {
                    let mut q = pos;
                    q.play_unchecked(*m);
                    pos.piece_at(m.from).unwrap().role == engine::yanyi::Role::Chariot
                        && !visited.contains(&m.to)
                        && !q.in_check(Player::G)
                })
                .expect("a fresh chariot point")
        } else {
            let k = pos.king(Player::G).unwrap().to_string();
            parse_move(if k == "q9" { "q9-q10" } else { "q10-q9" }).unwrap()
        };
        if pos.turn() == Player::R {
            visited.push(m.to);
        }
        let t = g.events().len() as u64;
        g.apply(at(pos.turn(), Action::Move(m), t)).unwrap();
        assert!(g.plies() <= 100);
    }
    assert_eq!(g.plies(), 100);
    assert_eq!(g.result().unwrap().ending, Ending::Draw(DrawReason::NoProgress));
}

#[test]
fn dead_position_is_drawn_at_once() {
    let g = YanyiGame::from_position(parse_position("RK@i1,RA@h1,GK@q9 R - -").unwrap());
    assert_eq!(g.result().unwrap().ending, Ending::Draw(DrawReason::DeadPosition));
}

#[test]
fn board_eliminations_are_recorded_with_absorber() {
    let y = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";
    let p = parse_position(&format!(
        "RK@h1,GC@m5,RC@i9,GK@q9,GC@m12,BA@h17,BK@i17,BA@j17,{y} G - -"
    ))
    .unwrap();
    let mut g = YanyiGame::from_position(p);
    let eff = mv(&mut g, "m12-i12");
    assert!(eff.iter().any(|e| matches!(e, Effect::Eliminated(d) if d.player == Player::B && d.reason == EliminationReason::Mate && d.absorbed_by == Some(Player::R))), "{eff:?}");
    assert_eq!(g.position().turn(), Player::R);
}

#[test]
fn replay_rebuilds_the_game() {
    let mut g = opened();
    g.apply(at(Player::G, Action::OfferDraw, 10)).unwrap();
    mv(&mut g, "o13-m12");
    let r = YanyiGame::replay(Position::initial(), g.events()).unwrap();
    assert_eq!(r, g);
}
