//! Property tests over random playouts: the APIs agree with each other.

use engine::game::EliminationReason;
use engine::position::MoveList;
use engine::{
    Action, Direction, Event, Game, GameError, Listing, Move, Position, Role, Side, format_position, parse_position,
};
use proptest::prelude::*;

/// A small deterministic generator driven by proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn direction(cw: bool) -> Direction {
    if cw { Direction::Cw } else { Direction::Ccw }
}

/// Checks every invariant on one position reached in a playout.
fn check_position(pos: &Position) {
    // Text round-trips, and is what the formatting machinery writes.
    let text = format_position(pos);
    assert_eq!(text, reference_text(pos));
    assert_eq!(text.capacity(), text.len(), "no spare capacity: the text is kept");
    let back = parse_position(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(back, *pos, "{text}");
    // Eliminated sides have no pieces; live sides have their king.
    for s in Side::ALL {
        if pos.live().contains(s) {
            assert!(pos.king(s).is_some(), "{text}");
        } else {
            assert!(pos.pieces_of(s).is_empty(), "{text}");
        }
    }
    // Every generated move is legal and play accepts it; nothing else is legal.
    let moves = pos.legal_moves();
    let mut pseudo = MoveList::new();
    pos.pseudo_legal_moves(&mut pseudo);
    for m in &pseudo {
        assert_eq!(pos.is_legal(*m), moves.contains(m), "{text}: {m}");
    }
    for m in &moves {
        let mut p = *pos;
        assert!(p.play(*m).is_ok(), "{text}: {m}");
    }
    assert!(moves.windows(2).all(|w| w[0] < w[1]), "canonical order, no duplicates");
    if !pos.is_over() {
        assert!(
            !moves.is_empty(),
            "a side to move without a legal move is resolved by play: {text}"
        );
    }
}

/// The position text of RULES §7 written plainly with `format!`: what
/// [`format_position`] writes byte by byte from its tables.
fn reference_text(pos: &Position) -> String {
    let placement: Vec<String> = pos.pieces().map(|(p, pc)| format!("{pc}@{p}")).collect();
    let live: String = pos.live_in_order().map(|s| s.to_string()).collect();
    let mut flags: Vec<String> = Vec::new();
    flags.extend(pos.retaliation_pairs().map(|(a, b)| format!("R:{a}{b}")));
    flags.extend(pos.standing_pairs().map(|(a, b)| format!("S:{a}{b}")));
    if pos.no_king_capture() {
        flags.push("N".to_owned());
    }
    let flags = if flags.is_empty() {
        "-".to_owned()
    } else {
        flags.join(";")
    };
    format!(
        "{} {} {live} {flags} {}",
        placement.join(","),
        pos.turn(),
        pos.direction()
    )
}

/// After a move that eliminated nobody, the side to move cannot capture the mover's king.
fn check_mover_king_safe(after: &Position, mover: Side) {
    let Some(k) = after.king(mover) else { return };
    for m in after.legal_moves() {
        assert!(
            m.to != k,
            "{}: {m} captures the king of {mover}, who just moved",
            format_position(after)
        );
    }
}

fn playout(seed: u64, cw: bool, max_plies: usize) {
    let mut rng = Rng(seed | 1);
    let mut pos = Position::initial(direction(cw));
    for _ in 0..max_plies {
        check_position(&pos);
        if pos.is_over() {
            break;
        }
        let moves = pos.legal_moves();
        // Prefer captures now and then, to reach phase 2 and sudden deaths.
        let captures: Vec<_> = moves.iter().filter(|m| pos.piece_at(m.to).is_some()).collect();
        let m = if !captures.is_empty() && rng.below(3) == 0 {
            *captures[rng.below(captures.len())]
        } else {
            moves[rng.below(moves.len())]
        };
        let mover = pos.turn();
        let out = pos.play(m).unwrap();
        assert_eq!(out.mover, mover);
        if let Some(c) = out.captured {
            assert_ne!(c.side, mover);
        }
        if out.eliminated.is_empty() {
            check_mover_king_safe(&pos, mover);
        }
        for e in &out.eliminated {
            assert!(!pos.live().contains(e.side));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_playouts_keep_every_invariant(seed in any::<u64>(), cw in any::<bool>()) {
        playout(seed, cw, 400);
    }

    #[test]
    fn every_game_ends_under_section_6(seed in any::<u64>(), cw in any::<bool>()) {
        let mut rng = Rng(seed | 1);
        let mut game = Game::new(direction(cw));
        let mut now = 0;
        let mut plies = 0u32;
        // 54 pieces can be captured at most; each capture or check restarts at most
        // 90 plies of no progress; phase 2 lasts at most 80 plies.
        let bound = 55 * 90 + 80;
        while !game.is_finished() {
            prop_assert!(plies <= bound, "no end after {plies} plies");
            now += 1 + rng.below(5000) as u64;
            let pos = *game.position();
            let side = pos.turn();
            // Now and then a side resigns (after round 15) or runs out of time.
            let roll = rng.below(1000);
            let action = if roll == 0 {
                Action::Timeout
            } else if roll == 1 && game.requests_allowed() {
                Action::Resign
            } else {
                let moves = pos.legal_moves();
                Action::Move(moves[rng.below(moves.len())])
            };
            game.apply(Event { side, action, at: now }).unwrap();
            plies = game.plies();
            for s in Side::ALL {
                if !game.position().live().contains(s) {
                    prop_assert!(game.position().pieces_of(s).is_empty());
                }
            }
        }
        let r = game.result().unwrap();
        // Every side that left is listed once, with a reason.
        let mut seen = Vec::new();
        for d in &r.eliminations {
            prop_assert!(!seen.contains(&d.side));
            seen.push(d.side);
            prop_assert!(d.reason != EliminationReason::PrematureRequest);
        }
    }
}

/// A random game of every kind of event (moves, illegal tries, requests,
/// draw votes, time, abandonment) as `Game::apply` accepted them.
fn random_accepted_events(seed: u64, cw: bool, max_events: usize) -> Game {
    let mut rng = Rng(seed | 1);
    let mut game = Game::new(direction(cw));
    let mut now = 0;
    for _ in 0..max_events {
        if game.is_finished() {
            break;
        }
        now += rng.below(3000) as u64;
        let pos = *game.position();
        let live: Vec<Side> = pos.live().iter().collect();
        let side = live[rng.below(live.len())];
        let action = match rng.below(400) {
            0 => Action::Timeout,
            1 => Action::Abandon,
            2..=4 => Action::Resign,
            5..=14 => Action::OfferDraw,
            15..=34 => Action::AnswerDraw {
                accept: rng.below(3) != 0,
            },
            _ => {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    continue;
                }
                Action::Move(moves[rng.below(moves.len())])
            }
        };
        // The side to move plays; anyone else's move is refused and not recorded.
        let _ = game.apply(Event { side, action, at: now });
        if let Action::Move(m) = action {
            let _ = game.apply(Event {
                side: pos.turn(),
                action: Action::Move(m),
                at: now,
            });
        }
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_trusted_replay_builds_the_same_game(seed in any::<u64>(), cw in any::<bool>()) {
        let game = random_accepted_events(seed, cw, 600);
        let checked = Game::replay(*game.initial_position(), *game.limits(), game.events()).unwrap();
        let trusted = Game::replay_trusted(*game.initial_position(), *game.limits(), game.events()).unwrap();
        prop_assert_eq!(&checked, &game);
        prop_assert_eq!(&trusted, &game);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `apply_listed` (a server's: the legal moves and the sides in check
    /// kept between events) accepts, refuses and produces exactly what
    /// `apply` does, and the listing it leaves is the position's legal moves
    /// and sides in check after every event.
    #[test]
    fn a_listing_game_is_the_same_game(seed in any::<u64>(), cw in any::<bool>()) {
        let game = random_accepted_events(seed, cw, 600);
        let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1);
        let mut plain = Game::from_position(*game.initial_position(), *game.limits());
        let mut listing = plain.clone();
        // Known from the start, or only after the first event (a restored room).
        let mut legal = (seed % 2 == 0).then(|| Listing::of(listing.position()));
        for e in game.events() {
            // A refused try first: a move of the side to move that is not legal
            // (a piece onto itself), or any move of a side not to move.
            let turn = listing.position().turn();
            let from = listing.position().pieces_of(turn).iter().next().unwrap();
            let tries = [
                Event { side: turn, action: Action::Move(Move::new(from, from)), at: e.at },
                Event {
                    side: listing.position().live().iter().find(|&s| s != turn).unwrap_or(turn),
                    action: Action::Move(listing.position().legal_moves().first().copied().unwrap_or(Move::new(from, from))),
                    at: e.at,
                },
            ];
            let bad = tries[rng.below(2)];
            let before = (listing.clone(), legal.clone());
            let (a, b) = (plain.apply(bad), listing.apply_listed(bad, &mut legal));
            prop_assert_eq!(a.is_err(), b.is_err());
            if b.is_err() {
                prop_assert_eq!(&listing, &before.0);
                prop_assert_eq!(&legal, &before.1);
            } else {
                prop_assert_eq!(a.unwrap(), b.unwrap());
            }
            if plain.is_finished() {
                break;
            }
            let (a, b) = (plain.apply(*e), listing.apply_listed(*e, &mut legal));
            prop_assert_eq!(a, b);
            prop_assert_eq!(&plain, &listing);
            if listing.is_finished() {
                prop_assert!(legal.is_none());
            } else {
                prop_assert_eq!(&legal, &Some(Listing::of(listing.position())));
            }
        }
    }
}

#[test]
fn a_trusted_replay_still_refuses_a_move_of_no_piece_of_the_mover() {
    let start = Position::initial(Direction::Ccw);
    let first_move = start.legal_moves()[0];
    let mut after = start;
    after.play(first_move).unwrap();
    let next = after.turn();
    let own: Vec<_> = after.pieces_of(next).iter().collect();
    let first = Event {
        side: start.turn(),
        action: Action::Move(first_move),
        at: 0,
    };
    let bad = [
        // From the point the first move left empty.
        Move::new(first_move.from, own[0]),
        // From a piece of the side to move onto another of its pieces.
        Move::new(own[0], own[1]),
    ];
    for m in bad {
        let events = [
            first,
            Event {
                side: next,
                action: Action::Move(m),
                at: 1,
            },
        ];
        let err = Game::replay_trusted(start, Default::default(), &events).unwrap_err();
        assert_eq!(err.0, 1, "{m}");
        assert!(matches!(err.1, GameError::Illegal(_)), "{m}: {:?}", err.1);
    }
}

#[test]
fn kings_are_never_captured_except_by_sudden_death() {
    // Many quick playouts: a king leaves the board only through a capture that
    // eliminates its whole side at once.
    for seed in 1..40u64 {
        let mut rng = Rng(seed * 7919);
        let mut pos = Position::initial(Direction::Ccw);
        for _ in 0..300 {
            if pos.is_over() {
                break;
            }
            let moves = pos.legal_moves();
            let m = moves[rng.below(moves.len())];
            let captured_king = pos.piece_at(m.to).is_some_and(|p| p.role == Role::King);
            let out = pos.play(m).unwrap();
            if captured_king {
                assert_eq!(out.eliminated[0].cause, engine::Cause::SuddenDeath);
            }
        }
    }
}
