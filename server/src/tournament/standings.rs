//! Scores and standings: points, then survival points, opponents' points
//! and wins (docs/TOURNAMENTS.md has the formulas). Pure.

use protocol::tournament::Scoring;
use protocol::{Ending, GameResult, Outcome};

/// One side's score in one game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SideScore {
    /// Win, draw or loss.
    pub outcome: Outcome,
    /// Survival points: the sides that left the game before this one (all
    /// that left, for a side still in at the end), plus, for a side still in,
    /// the other sides still in with a worse outcome.
    pub survival: u32,
}

fn rank(o: Outcome) -> u8 {
    match o {
        Outcome::Win => 2,
        Outcome::Draw => 1,
        Outcome::Loss => 0,
    }
}

/// What a finished game counts for W, B, Y; `None` for a game that counts
/// for nothing (annulled by the arbiter, or not over).
///
/// A game aborted under the normal rules (a side left before 3 completed
/// rounds — a no-show) counts as a loss with 0 survival for every no-show
/// (the side that left, and any other whose grace was over too) and a draw
/// with 1 survival for each side that came: whoever came never scores less
/// than whoever did not.
pub fn score_game(r: &GameResult) -> Option<[SideScore; 3]> {
    let order: Vec<usize> = r.eliminations.iter().map(|d| d.side.index()).collect();
    let outcomes: [Outcome; 3] = match (r.ending, r.outcomes) {
        (Ending::Annulled, _) => return None,
        (_, [Some(w), Some(b), Some(y)]) => [w, b, y],
        (Ending::Aborted { by }, _) => {
            let mut s = [SideScore {
                outcome: Outcome::Draw,
                survival: 1,
            }; 3];
            for absent in r.no_shows.iter().chain([&by]) {
                s[absent.index()] = SideScore {
                    outcome: Outcome::Loss,
                    survival: 0,
                };
            }
            return Some(s);
        }
        _ => return None,
    };
    // The draw-offer rule's two losers leave together.
    let together = matches!(r.ending, Ending::DrawOfferRule { .. }) && order.len() >= 2;
    Some(std::array::from_fn(|i| {
        let survival = match order.iter().position(|&s| s == i) {
            Some(k) if together && k == order.len() - 1 => (k - 1) as u32,
            Some(k) => k as u32,
            None => {
                let worse = (0..3)
                    .filter(|&j| j != i && !order.contains(&j) && rank(outcomes[j]) < rank(outcomes[i]))
                    .count();
                (order.len() + worse) as u32
            }
        };
        SideScore {
            outcome: outcomes[i],
            survival,
        }
    }))
}

/// A game for the standings: the players at W, B, Y (indices) and its result.
#[derive(Clone, Debug)]
pub struct Played {
    /// Players at W, B, Y; `None` for a bot (a bye filled by a bot).
    pub seats: [Option<usize>; 3],
    /// The result (`None`: not over, counts for nothing yet).
    pub result: Option<GameResult>,
}

/// One player's totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Points.
    pub points: u32,
    /// Survival points.
    pub survival: u32,
    /// Sum over counted games of each opponent's points.
    pub opponents: u32,
    /// Wins.
    pub wins: u32,
    /// Games counted.
    pub games: u32,
    /// Byes (real ones: a round without a table).
    pub byes: u32,
    /// Games paired at a table with a bot (over or not). Not a column of the
    /// standings: pairing counts them like byes, so that nobody gets a second
    /// bot table before everyone has had one.
    pub bot_games: u32,
    /// Games at W, B, Y (every game paired, over or not).
    pub seats: [u32; 3],
}

impl Totals {
    /// The sort key: bigger is better.
    pub fn key(&self) -> (u32, u32, u32, u32) {
        (self.points, self.survival, self.opponents, self.wins)
    }
}

/// Every player's totals from the games and byes (`byes`: player, points).
///
/// Bots have no totals: a person's result against bots counts like any
/// other, and a bot counts 0 in its opponents' points.
pub fn totals(n: usize, games: &[Played], byes: &[(usize, u32)], scoring: &Scoring) -> Vec<Totals> {
    let mut t = vec![Totals::default(); n];
    let mut counted: Vec<([Option<usize>; 3], [SideScore; 3])> = Vec::new();
    for g in games {
        let with_bot = g.seats.contains(&None);
        for (s, p) in g.seats.iter().enumerate() {
            let Some(p) = *p else { continue };
            t[p].seats[s] += 1;
            t[p].bot_games += u32::from(with_bot);
        }
        if let Some(sc) = g.result.as_ref().and_then(score_game) {
            counted.push((g.seats, sc));
        }
    }
    for (seats, sc) in &counted {
        for (s, p) in seats.iter().enumerate() {
            let Some(p) = *p else { continue };
            t[p].points += match sc[s].outcome {
                Outcome::Win => scoring.win,
                Outcome::Draw => scoring.draw,
                Outcome::Loss => scoring.loss,
            };
            t[p].survival += sc[s].survival;
            t[p].wins += u32::from(sc[s].outcome == Outcome::Win);
            t[p].games += 1;
        }
    }
    for &(p, pts) in byes {
        t[p].points += pts;
        t[p].byes += 1;
    }
    let points: Vec<u32> = t.iter().map(|x| x.points).collect();
    for (seats, _) in &counted {
        for &p in seats.iter().flatten() {
            t[p].opponents += seats
                .iter()
                .flatten()
                .filter(|&&q| q != p)
                .map(|&q| points[q])
                .sum::<u32>();
        }
    }
    t
}

/// Players ordered best first: by [`Totals::key`], then by `seed` (lower
/// first); with each one's place (equal keys share a place).
pub fn ranking(totals: &[Totals], seed: &[u32]) -> Vec<(usize, u32)> {
    let mut order: Vec<usize> = (0..totals.len()).collect();
    order.sort_by_key(|&p| (std::cmp::Reverse(totals[p].key()), seed[p]));
    let mut out: Vec<(usize, u32)> = Vec::with_capacity(order.len());
    for (i, &p) in order.iter().enumerate() {
        let place = match out.last() {
            Some(&(q, r)) if totals[q].key() == totals[p].key() => r,
            _ => i as u32 + 1,
        };
        out.push((p, place));
    }
    out
}

#[cfg(test)]
mod tests {
    use protocol::{Departure, DrawReason, EliminationReason, Side};

    use super::*;

    fn dep(side: Side, ply: u32) -> Departure {
        Departure {
            side,
            reason: EliminationReason::Resign,
            absorbed_by: None,
            ply,
        }
    }

    fn last_standing(order: [Side; 2], winner: Side) -> GameResult {
        let mut outcomes = [Some(Outcome::Loss); 3];
        outcomes[winner.index()] = Some(Outcome::Win);
        GameResult {
            ending: Ending::LastStanding { winner },
            outcomes,
            eliminations: vec![dep(order[0], 0), dep(order[1], 4)],
            no_shows: vec![],
            placing: None,
            scores: None,
        }
    }

    #[test]
    fn eliminated_second_beats_eliminated_first() {
        let s = score_game(&last_standing([Side::B, Side::W], Side::Y)).unwrap();
        assert_eq!(s.map(|x| x.survival), [1, 0, 2]);
        assert_eq!(s.map(|x| x.outcome), [Outcome::Loss, Outcome::Loss, Outcome::Win]);
    }

    #[test]
    fn draws_count_what_went_before() {
        let three = GameResult {
            ending: Ending::Draw {
                reason: DrawReason::Agreement,
            },
            outcomes: [Some(Outcome::Draw); 3],
            eliminations: vec![],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        assert_eq!(score_game(&three).unwrap().map(|x| x.survival), [0, 0, 0]);
        let two = GameResult {
            ending: Ending::Draw {
                reason: DrawReason::Length,
            },
            outcomes: [Some(Outcome::Loss), Some(Outcome::Draw), Some(Outcome::Draw)],
            eliminations: vec![dep(Side::W, 60)],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        assert_eq!(score_game(&two).unwrap().map(|x| x.survival), [0, 1, 1]);
    }

    #[test]
    fn the_draw_offer_rules_losers_leave_together() {
        let r = GameResult {
            ending: Ending::DrawOfferRule { winner: Side::Y },
            outcomes: [Some(Outcome::Loss), Some(Outcome::Loss), Some(Outcome::Win)],
            eliminations: vec![dep(Side::W, 90), dep(Side::B, 90)],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        assert_eq!(score_game(&r).unwrap().map(|x| x.survival), [0, 0, 2]);
    }

    #[test]
    fn adjudication_and_abandonment() {
        let adj = GameResult {
            ending: Ending::Adjudicated,
            outcomes: [Some(Outcome::Win), Some(Outcome::Loss), Some(Outcome::Loss)],
            eliminations: vec![dep(Side::Y, 30)],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        assert_eq!(score_game(&adj).unwrap().map(|x| x.survival), [2, 1, 0]);
        let aborted = GameResult {
            ending: Ending::Aborted { by: Side::B },
            outcomes: [None; 3],
            eliminations: vec![],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        let s = score_game(&aborted).unwrap();
        assert_eq!(s.map(|x| x.survival), [1, 0, 1]);
        assert_eq!(s.map(|x| x.outcome), [Outcome::Draw, Outcome::Loss, Outcome::Draw]);
        // Every no-show loses: one came, or nobody did.
        let (d, l) = (Outcome::Draw, Outcome::Loss);
        for (no_shows, outcomes, survival) in [
            (vec![Side::B, Side::Y], [d, l, l], [1, 0, 0]),
            (vec![Side::B, Side::W, Side::Y], [l, l, l], [0, 0, 0]),
        ] {
            let s = score_game(&GameResult {
                no_shows,
                ..aborted.clone()
            })
            .unwrap();
            assert_eq!((s.map(|x| x.outcome), s.map(|x| x.survival)), (outcomes, survival));
        }
        let annulled = GameResult {
            ending: Ending::Annulled,
            outcomes: [None; 3],
            eliminations: vec![],
            no_shows: vec![],
            placing: None,
            scores: None,
        };
        assert_eq!(score_game(&annulled), None);
    }

    /// A draw of three by agreement.
    fn agreed_draw() -> GameResult {
        GameResult {
            ending: Ending::Draw {
                reason: DrawReason::Agreement,
            },
            outcomes: [Some(Outcome::Draw); 3],
            eliminations: vec![],
            no_shows: vec![],
            placing: None,
            scores: None,
        }
    }

    #[test]
    fn totals_and_places_by_hand() {
        // Players 0..4. Game A: 0 W, 1 B, 2 Y — B out first, W second, Y wins.
        // Game B: 3 W, 0 B, 1 Y — a draw of three. 2 and 3 each have a bye.
        let games = vec![
            Played {
                seats: [Some(0), Some(1), Some(2)],
                result: Some(last_standing([Side::B, Side::W], Side::Y)),
            },
            Played {
                seats: [Some(3), Some(0), Some(1)],
                result: Some(agreed_draw()),
            },
            Played {
                seats: [Some(0), Some(1), Some(2)],
                result: None,
            },
        ];
        let t = totals(4, &games, &[(2, 1), (3, 1)], &Scoring::default());
        // Points: 0: 0+1, 1: 0+1, 2: 3+1, 3: 1+1.
        assert_eq!(t.iter().map(|x| x.points).collect::<Vec<_>>(), vec![1, 1, 4, 2]);
        assert_eq!(t.iter().map(|x| x.survival).collect::<Vec<_>>(), vec![1, 0, 2, 0]);
        // Opponents: 0 met 1, 2 (A) and 3, 1 (B): 1+4 + 2+1 = 8; 1: 1+4 + 2+1 = 8;
        // 2: 1+1 = 2; 3: 1+1 = 2.
        assert_eq!(t.iter().map(|x| x.opponents).collect::<Vec<_>>(), vec![8, 8, 2, 2]);
        assert_eq!(t[0].seats, [2, 1, 0]);
        assert_eq!(t[0].games, 2);
        let r = ranking(&t, &[1, 2, 3, 4]);
        assert_eq!(r, vec![(2, 1), (3, 2), (0, 3), (1, 4)]);
        // Equal on everything: the same place, seed order.
        let same = vec![Totals::default(), Totals::default()];
        assert_eq!(ranking(&same, &[2, 1]), vec![(1, 1), (0, 1)]);
    }

    #[test]
    fn bots_have_no_totals_and_count_nothing_for_their_opponents() {
        // Players 0..3. Game A: 0 alone with two bots (W), 0 wins.
        // Game B: bot W, 1 at B, 2 at Y — W out first, Y out second: 1 wins.
        // Game C: 0 W, 1 B, 2 Y — a draw of three.
        // Game D: 3 with two bots, not over: no points, but a bot game.
        let games = vec![
            Played {
                seats: [Some(0), None, None],
                result: Some(last_standing([Side::Y, Side::B], Side::W)),
            },
            Played {
                seats: [None, Some(1), Some(2)],
                result: Some(last_standing([Side::W, Side::Y], Side::B)),
            },
            Played {
                seats: [Some(0), Some(1), Some(2)],
                result: Some(agreed_draw()),
            },
            Played {
                seats: [None, None, Some(3)],
                result: None,
            },
        ];
        let t = totals(4, &games, &[], &Scoring::default());
        assert_eq!(t.iter().map(|x| x.points).collect::<Vec<_>>(), vec![4, 4, 1, 0]);
        assert_eq!(t.iter().map(|x| x.survival).collect::<Vec<_>>(), vec![2, 2, 1, 0]);
        assert_eq!(t.iter().map(|x| x.wins).collect::<Vec<_>>(), vec![1, 1, 0, 0]);
        assert_eq!(t.iter().map(|x| x.games).collect::<Vec<_>>(), vec![2, 2, 2, 0]);
        // Opponents: bots count 0. 0: (A) 0 + (C) 4+1; 1: (B) 1 + (C) 4+1;
        // 2: (B) 4 + (C) 4+4.
        assert_eq!(t.iter().map(|x| x.opponents).collect::<Vec<_>>(), vec![5, 6, 12, 0]);
        // Bot tables are no byes, but pairing sees them.
        assert_eq!(t.iter().map(|x| x.byes).collect::<Vec<_>>(), vec![0, 0, 0, 0]);
        assert_eq!(t.iter().map(|x| x.bot_games).collect::<Vec<_>>(), vec![1, 1, 1, 1]);
        assert_eq!(t[0].seats, [2, 0, 0]);
        assert_eq!(t[3].seats, [0, 0, 1]);
    }
}
