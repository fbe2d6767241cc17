//! The game record's rules (RULES §6), driven through `Game::apply`.

use engine::game::{DrawReason, Ending, Limits, Request};
use engine::{Action, Effect, EliminationReason, Event, Game, GameError, Outcome, Side, parse_move, parse_position};

const W: Side = Side::W;
const B: Side = Side::B;
const Y: Side = Side::Y;

/// Kings that can shuffle X42 ↔ X43 forever without check or capture; each
/// side's soldier on X46 closes the file-4 line toward the neighbouring fan.
const QUIET3: &str = "WK@W42,WP@W46,BK@B42,BP@B46,YK@Y42,YP@Y46 W WBY - ccw";
const QUIET2: &str = "WK@W42,WP@W46,BK@B42,BP@B46 W WB - ccw";

struct T {
    g: Game,
    now: u64,
}

impl T {
    fn new(text: &str) -> T {
        T::with_limits(text, Limits::default())
    }

    fn with_limits(text: &str, limits: Limits) -> T {
        T {
            g: Game::from_position(parse_position(text).unwrap(), limits),
            now: 0,
        }
    }

    fn act(&mut self, side: Side, action: Action) -> Result<Vec<Effect>, GameError> {
        self.now += 1000;
        self.g.apply(Event {
            side,
            action,
            at: self.now,
        })
    }

    fn mv(&mut self, m: &str) -> Vec<Effect> {
        let side = self.g.position().turn();
        self.act(side, Action::Move(parse_move(m).unwrap()))
            .unwrap_or_else(|e| panic!("{m}: {e}"))
    }

    /// The side to move steps its king between X42 and X43.
    fn shuffle(&mut self, plies: u32) {
        for _ in 0..plies {
            let s = self.g.position().turn();
            let k = self.g.position().king(s).unwrap().to_string();
            let to = if k.ends_with("42") {
                format!("{s}43")
            } else {
                format!("{s}42")
            };
            self.mv(&format!("{k}-{to}"));
        }
    }

    fn outcomes(&self) -> [Option<Outcome>; 3] {
        self.g.result().expect("finished").outcomes
    }
}

fn eliminated(effects: &[Effect]) -> Vec<(Side, EliminationReason)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Eliminated(d) => Some((d.side, d.reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn rounds_count_plies_per_phase() {
    let mut t = T::new(QUIET3);
    t.shuffle(8);
    assert_eq!(t.g.plies(), 8);
    assert_eq!(t.g.rounds_completed(), 2);
    t.shuffle(1);
    assert_eq!(t.g.rounds_completed(), 3);
    let mut t = T::new(QUIET2);
    t.shuffle(7);
    assert_eq!(t.g.rounds_completed(), 3);
}

#[test]
fn premature_resign_warns_then_loses() {
    let mut t = T::new(QUIET3);
    let eff = t.act(W, Action::Resign).unwrap();
    assert_eq!(
        eff,
        [Effect::Warned {
            side: W,
            request: Request::Resign
        }]
    );
    assert_eq!(
        t.g.position().live().count(),
        3,
        "a warning changes nothing on the board"
    );
    // The draw offer counts as a request too: the second premature request loses.
    let eff = t.act(W, Action::OfferDraw).unwrap();
    assert_eq!(eliminated(&eff), [(W, EliminationReason::PrematureRequest)]);
    let text = engine::format_position(t.g.position());
    assert!(
        text.ends_with(" B BY N ccw"),
        "W removed out of turn order; B moves; no king capture: {text}"
    );
    assert_eq!(t.g.draw_offers_made(W), 0);
}

#[test]
fn resignations_in_phase_3_then_phase_2() {
    let mut t = T::new(QUIET3);
    t.shuffle(45);
    assert!(t.g.requests_allowed());
    // B resigns while W is to move: W keeps the move.
    let eff = t.act(B, Action::Resign).unwrap();
    assert_eq!(eliminated(&eff), [(B, EliminationReason::Resign)]);
    assert_eq!(t.g.position().turn(), W);
    assert!(t.g.position().no_king_capture());
    assert!(
        t.g.position().pieces_of(B).is_empty(),
        "an eliminated side's pieces leave at once"
    );
    // Second resignation ends the game: both resigners lose, the third wins.
    let eff = t.act(W, Action::Resign).unwrap();
    assert_eq!(eliminated(&eff), [(W, EliminationReason::Resign)]);
    assert!(matches!(eff.last(), Some(Effect::Finished(_))));
    assert_eq!(
        t.outcomes(),
        [Some(Outcome::Loss), Some(Outcome::Loss), Some(Outcome::Win)]
    );
    let order: Vec<Side> = t.g.result().unwrap().eliminations.iter().map(|d| d.side).collect();
    assert_eq!(order, [B, W]);
    assert_eq!(t.act(Y, Action::Resign), Err(GameError::Finished));
}

fn after_15_rounds() -> T {
    let mut t = T::new(QUIET3);
    t.shuffle(45);
    t
}

#[test]
fn draw_vote_both_accept_all_draw() {
    let mut t = after_15_rounds();
    let eff = t.act(W, Action::OfferDraw).unwrap();
    assert!(matches!(eff[0], Effect::DrawOffered { by: W, .. }));
    t.act(B, Action::AnswerDraw { accept: true }).unwrap();
    assert!(!t.g.is_finished());
    t.act(Y, Action::AnswerDraw { accept: true }).unwrap();
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::Agreement));
    assert_eq!(t.outcomes(), [Some(Outcome::Draw); 3]);
}

#[test]
fn draw_vote_accept_and_decline_offerer_and_accepter_lose() {
    let mut t = after_15_rounds();
    t.act(W, Action::OfferDraw).unwrap();
    t.act(Y, Action::AnswerDraw { accept: true }).unwrap();
    t.act(B, Action::AnswerDraw { accept: false }).unwrap();
    let r = t.g.result().unwrap();
    assert_eq!(r.ending, Ending::DrawOfferRule { winner: B });
    assert_eq!(
        t.outcomes(),
        [Some(Outcome::Loss), Some(Outcome::Win), Some(Outcome::Loss)]
    );
    assert!(
        r.eliminations
            .iter()
            .all(|d| d.reason == EliminationReason::DrawOfferRule)
    );
}

#[test]
fn draw_vote_both_decline_play_on() {
    let mut t = after_15_rounds();
    t.act(W, Action::OfferDraw).unwrap();
    t.act(B, Action::AnswerDraw { accept: false }).unwrap();
    let eff = t.act(Y, Action::AnswerDraw { accept: false }).unwrap();
    assert!(eff.contains(&Effect::DrawOfferLapsed { by: W }));
    assert!(!t.g.is_finished());
    assert_eq!(t.g.pending_offer(), None);
    assert_eq!(t.g.draw_offers_made(W), 1);
    t.shuffle(3);
}

#[test]
fn draw_vote_unanswered_counts_as_declined_at_lapse() {
    // One accepts, the other never answers: at the offerer's next turn the
    // silence is a decline, so the offerer and the accepter lose.
    let mut t = after_15_rounds();
    assert_eq!(t.g.position().turn(), W);
    t.act(W, Action::OfferDraw).unwrap();
    t.act(B, Action::AnswerDraw { accept: true }).unwrap();
    t.shuffle(2); // W, B
    assert!(!t.g.is_finished());
    assert_eq!(t.g.pending_offer(), Some((W, [Y].into_iter().collect())));
    t.shuffle(1); // Y moves; W's turn begins: the offer lapses.
    assert_eq!(t.g.result().unwrap().ending, Ending::DrawOfferRule { winner: Y });

    // Nobody answers: play on.
    let mut t = after_15_rounds();
    t.act(W, Action::OfferDraw).unwrap();
    t.shuffle(3);
    assert!(!t.g.is_finished());
    assert_eq!(t.g.pending_offer(), None);
}

#[test]
fn draw_offers_are_limited_and_answers_checked() {
    let mut t = after_15_rounds();
    assert_eq!(
        t.act(B, Action::AnswerDraw { accept: true }),
        Err(GameError::NothingToAnswer(B))
    );
    for _ in 0..3 {
        t.act(W, Action::OfferDraw).unwrap();
        assert_eq!(t.act(Y, Action::OfferDraw), Err(GameError::OfferPending(W)));
        assert_eq!(
            t.act(W, Action::AnswerDraw { accept: true }),
            Err(GameError::NothingToAnswer(W))
        );
        t.act(B, Action::AnswerDraw { accept: false }).unwrap();
        assert_eq!(
            t.act(B, Action::AnswerDraw { accept: false }),
            Err(GameError::NothingToAnswer(B))
        );
        t.act(Y, Action::AnswerDraw { accept: false }).unwrap();
    }
    assert_eq!(t.act(W, Action::OfferDraw), Err(GameError::NoOffersLeft(W, 3)));
    assert_eq!(t.g.draw_offers_made(W), 3);
}

#[test]
fn draw_offer_in_phase_2() {
    let mut t = T::new(QUIET2);
    t.shuffle(30);
    t.act(B, Action::OfferDraw).unwrap();
    t.act(W, Action::AnswerDraw { accept: false }).unwrap();
    assert!(!t.g.is_finished());
    t.shuffle(1);
    t.act(W, Action::OfferDraw).unwrap();
    t.act(B, Action::AnswerDraw { accept: true }).unwrap();
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::Agreement));
    // Y was never live in this game: it has lost.
    assert_eq!(
        t.outcomes(),
        [Some(Outcome::Draw), Some(Outcome::Draw), Some(Outcome::Loss)]
    );
}

#[test]
fn abandonment_before_and_after_three_rounds() {
    let mut t = T::new(QUIET3);
    t.shuffle(8);
    t.act(Y, Action::Abandon).unwrap();
    assert_eq!(t.g.result().unwrap().ending, Ending::Aborted { by: Y });
    assert_eq!(t.outcomes(), [None; 3]);

    let mut t = T::new(QUIET3);
    t.shuffle(9);
    let eff = t.act(Y, Action::Abandon).unwrap();
    assert_eq!(
        eliminated(&eff),
        [(Y, EliminationReason::Abandon)],
        "a resignation, whatever the 15-round limit"
    );
    assert!(!t.g.is_finished());
}

#[test]
fn loss_on_time() {
    let mut t = T::new(QUIET3);
    t.shuffle(2);
    let eff = t.act(Y, Action::Timeout).unwrap();
    assert_eq!(eliminated(&eff), [(Y, EliminationReason::Time)]);
    assert_eq!(t.g.position().turn(), W, "Y was to move: the next live side moves");
    t.act(W, Action::Timeout).unwrap();
    assert_eq!(
        t.outcomes(),
        [Some(Outcome::Loss), Some(Outcome::Win), Some(Outcome::Loss)]
    );
}

#[test]
fn no_progress_draw_phase_3_after_90_plies() {
    let mut t = T::new(QUIET3);
    t.shuffle(89);
    assert!(!t.g.is_finished());
    assert_eq!(t.g.plies_without_progress(), 89);
    t.shuffle(1);
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::NoProgress));
    assert_eq!(t.outcomes(), [Some(Outcome::Draw); 3]);
}

#[test]
fn no_progress_draw_phase_2_after_40_plies() {
    let mut t = T::new(QUIET2);
    t.shuffle(39);
    assert!(!t.g.is_finished());
    t.shuffle(1);
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::NoProgress));
}

#[test]
fn phase_2_length_draw() {
    // With the no-progress limit out of the way, phase 2's length rule ends it at 80 plies.
    let limits = Limits {
        no_progress_plies: [90, 1000],
        ..Limits::default()
    };
    let mut t = T::with_limits(QUIET2, limits);
    t.shuffle(79);
    assert!(!t.g.is_finished());
    t.shuffle(1);
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::Length));
}

/// W's chariot checks B's king on B's ranks 1 and 2 while the king steps
/// between B41 and B42.
fn chariot_checks(t: &mut T, n: usize, between: &mut dyn FnMut(&mut T)) -> Vec<Effect> {
    let mut last = Vec::new();
    for _ in 0..n {
        let from = t.g.position().pieces().find(|(_, p)| p.to_string() == "WR").unwrap().0;
        let kb = t.g.position().king(B).unwrap().to_string();
        let rook_to = if from.to_string() == "B12" { "B11" } else { "B12" };
        let king_to = if kb == "B42" { "B41" } else { "B42" };
        last = t.mv(&format!("{from}-{rook_to}"));
        if t.g.is_finished() || t.g.position().live().count() < t.g.initial_position().live().count() {
            return last;
        }
        t.mv(&format!("{kb}-{king_to}"));
        between(t);
    }
    last
}

#[test]
fn consecutive_checks_phase_2_sixth_loses() {
    let mut t = T::new("WK@W52,WR@B13,BK@B42 W WB - ccw");
    chariot_checks(&mut t, 5, &mut |_| {});
    assert_eq!(t.g.consecutive_checks(W, B), 5);
    assert!(!t.g.is_finished());
    let eff = chariot_checks(&mut t, 1, &mut |_| {});
    assert_eq!(eliminated(&eff), [(W, EliminationReason::PerpetualCheck)]);
    assert_eq!(
        t.outcomes(),
        [Some(Outcome::Loss), Some(Outcome::Win), Some(Outcome::Loss)]
    );
}

#[test]
fn consecutive_checks_phase_3_eighth_loses() {
    // Y walks its king Y42 → Y43 → Y44 → Y43 → … so that no checking position repeats 4 times.
    let mut t = T::new("WK@W42,WP@W46,WR@B13,BK@B42,YK@Y42,YP@Y46 W WBY - ccw");
    let ys = ["Y42-Y43", "Y43-Y44", "Y44-Y43", "Y43-Y42"];
    let mut k = 0;
    let mut y = |t: &mut T| {
        t.mv(ys[k % 4]);
        k += 1;
    };
    chariot_checks(&mut t, 7, &mut y);
    assert_eq!(t.g.consecutive_checks(W, B), 7);
    assert_eq!(t.g.cumulative_checks(W, B), 7);
    let eff = chariot_checks(&mut t, 1, &mut y);
    assert_eq!(eliminated(&eff), [(W, EliminationReason::PerpetualCheck)]);
    assert!(!t.g.is_finished(), "phase 2 goes on between B and Y");
    assert!(t.g.position().no_king_capture());
    assert_eq!(t.g.consecutive_checks(W, B), 0, "check counters restart in phase 2");
}

#[test]
fn repeated_checking_position_fourth_loses() {
    // Y steps Y42 ↔ Y43: W's checking positions recur every second check.
    let mut t = T::new("WK@W42,WP@W46,WR@B13,BK@B42,YK@Y42,YP@Y46 W WBY - ccw");
    let mut y = |t: &mut T| t.shuffle(1);
    chariot_checks(&mut t, 6, &mut y);
    assert!(t.g.position().live().contains(W));
    // The accessor sees what the next check would repeat: its position has been seen 3 times.
    let from = t.g.position().pieces().find(|(_, p)| p.to_string() == "WR").unwrap().0;
    let rook_to = if from.to_string() == "B12" { "B11" } else { "B12" };
    let mut next = *t.g.position();
    next.play(parse_move(&format!("{from}-{rook_to}")).unwrap()).unwrap();
    assert_eq!(t.g.checking_repetitions(W, B, &next), 3);
    assert_eq!(t.g.checking_repetitions(B, W, &next), 0);
    assert_eq!(t.g.checking_repetitions(W, B, t.g.initial_position()), 0);
    let eff = chariot_checks(&mut t, 1, &mut y);
    assert_eq!(eliminated(&eff), [(W, EliminationReason::Repetition)]);
}

#[test]
fn a_quiet_move_resets_consecutive_checks() {
    let mut t = T::new("WK@W42,WP@W46,WR@B13,BK@B42,YK@Y42,YP@Y46 W WBY - ccw");
    let ys = ["Y42-Y43", "Y43-Y44", "Y44-Y43", "Y43-Y42"];
    let mut k = 0;
    let mut y = |t: &mut T| {
        t.mv(ys[k % 4]);
        k += 1;
    };
    chariot_checks(&mut t, 3, &mut y);
    assert_eq!(t.g.consecutive_checks(W, B), 3);
    t.mv("W42-W43"); // W does not check
    t.mv("B41-B51"); // B's king had stepped to B41 after the 3rd check
    y(&mut t);
    assert_eq!(t.g.consecutive_checks(W, B), 0);
    assert_eq!(t.g.cumulative_checks(W, B), 3);
}

#[test]
fn cumulative_checks_phase_3_lose_phase_2_draw() {
    let limits = Limits {
        cumulative_checks: [4, 3],
        ..Limits::default()
    };
    let mut t = T::with_limits("WK@W42,WP@W46,WR@B13,BK@B42,YK@Y42,YP@Y46 W WBY - ccw", limits);
    let ys = ["Y42-Y43", "Y43-Y44", "Y44-Y43", "Y43-Y42"];
    let mut k = 0;
    let mut y = |t: &mut T| {
        t.mv(ys[k % 4]);
        k += 1;
    };
    let eff = chariot_checks(&mut t, 4, &mut y);
    assert_eq!(eliminated(&eff), [(W, EliminationReason::CumulativeChecks)]);

    let mut t = T::with_limits("WK@W52,WR@B13,BK@B42 W WB - ccw", limits);
    chariot_checks(&mut t, 3, &mut |_| {});
    assert_eq!(t.g.result().unwrap().ending, Ending::Draw(DrawReason::CumulativeChecks));
}

#[test]
fn illegal_and_out_of_turn_events_change_nothing() {
    let mut t = T::new(QUIET3);
    let before = t.g.clone();
    let m = parse_move("B42-B43").unwrap();
    assert_eq!(
        t.act(B, Action::Move(m)),
        Err(GameError::NotYourTurn { side: B, turn: W })
    );
    let bad = parse_move("W42-W44").unwrap();
    assert!(matches!(t.act(W, Action::Move(bad)), Err(GameError::Illegal(_))));
    assert_eq!(t.g.events(), before.events());
    assert_eq!(t.g.position(), before.position());
    t.act(W, Action::Resign).unwrap();
    let last = t.g.events().last().unwrap().at;
    assert_eq!(
        t.g.apply(Event {
            side: B,
            action: Action::Resign,
            at: last - 1
        }),
        Err(GameError::TimeWentBack { at: last - 1, last })
    );
}

#[test]
fn replay_rebuilds_the_game() {
    let mut t = after_15_rounds();
    t.act(W, Action::OfferDraw).unwrap();
    t.act(B, Action::AnswerDraw { accept: false }).unwrap();
    t.shuffle(4);
    t.act(Y, Action::Resign).unwrap();
    t.shuffle(3);
    let again = Game::replay(*t.g.initial_position(), *t.g.limits(), t.g.events()).unwrap();
    assert_eq!(again.position(), t.g.position());
    assert_eq!(again.departures(), t.g.departures());
    assert_eq!(again.rounds_completed(), t.g.rounds_completed());
    assert_eq!(again.pending_offer(), t.g.pending_offer());
}

#[test]
fn mate_ends_the_game_and_names_the_reason() {
    // Phase 2: W's chariots close B's king in; the mate eliminates B and W wins.
    let mut t = T::new("WK@W42,WR@B13,WR@B23,BK@B41 W WB - ccw");
    t.mv("B23-B22");
    t.mv("B41-B51");
    let eff = t.mv("B13-B11");
    assert_eq!(eliminated(&eff), [(B, EliminationReason::Mate)]);
    assert_eq!(t.g.result().unwrap().ending, Ending::LastStanding(W));
}
