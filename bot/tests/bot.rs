//! The bot's contract: legal, deterministic, sees one-move tactics, knows
//! when the game is over, and votes on draws without colluding.

use bot::{Config, Level, allowed_moves, analyse, answer_draw, choose_move, choose_move_with, random_move};
use engine::game::Limits;
use engine::{Action, Direction, Event, Game, Move, Position, Side, parse_move, parse_position};

fn pos(text: &str) -> Position {
    parse_position(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(text: &str) -> Move {
    parse_move(text).unwrap()
}

fn game_at(text: &str) -> Game {
    Game::from_position(pos(text), Limits::default())
}

fn play(game: &mut Game, m: Move) {
    let side = game.position().turn();
    game.apply(Event {
        side,
        action: Action::Move(m),
        at: 0,
    })
    .unwrap();
}

/// Positions where the side to move can eliminate a side at once, with the
/// moves that do (found in self-play).
const MATES: [(&str, &[&str]); 3] = [
    (
        "WF@W61,WA@W42,WK@W52,YC@W92,WA@W44,WE@W54,BC@W85,YR@W95,YP@W16,YC@W26,BC@W46,WP@W66,WE@W76,BF@B51,\
         BE@B32,BA@B42,BK@B52,BA@B53,BZ@B73,BN@B14,BE@B54,BN@B66,BP@B96,BR@Y51,YA@Y42,BR@Y52,YE@Y72,YN@Y82,\
         YK@Y63,YZ@Y74,YP@Y55,YR@Y95,BP@Y46,YP@Y76,BP@WM7,YP@BM7,YP@BM8,YN@BQ7,BP@O B WBY - ccw",
        &["Y51-Y61"],
    ),
    (
        "YR@W11,YC@W51,WN@W61,WA@W42,WK@W52,WA@W62,WN@W33,YC@W53,WZ@W83,BC@W55,WP@W75,WP@W95,YR@W26,WP@W56,\
         WE@W76,BF@B51,BE@B32,BK@B42,BA@B62,BE@B72,BN@B82,BA@B53,BZ@B73,BC@B75,BR@B56,YF@Y51,YE@Y32,YA@Y42,\
         YK@Y52,YA@Y62,BP@Y23,BR@Y43,YN@Y53,YZ@Y54,YN@Y74,YP@Y55,BP@Y26,YE@Y36,YP@Y96,BP@WM5,BP@WM8,BP@WQ6,\
         YP@BM9,YP@BQ6,WP@YM7,WP@YM9 B WBY - ccw",
        &["B75-Y32"],
    ),
    (
        "WR@W11,YR@W12,WF@W42,WK@W52,WA@W62,WA@W53,WZ@W63,WN@W74,WE@W94,YC@W45,WP@W75,WP@W95,YP@W36,BC@W56,\
         BF@B51,BN@B22,BA@B42,BK@B52,BE@B72,BA@B53,BZ@B73,BE@B36,BP@B76,YF@Y41,BC@Y51,YK@Y61,YA@Y42,YA@Y62,\
         YN@Y63,YZ@Y73,BR@Y64,BR@Y85,YP@Y66,BP@WM6,BP@WM8,YP@BM5,YN@BM6,BN@BM8,BP@O B WBY - ccw",
        &["Y85-Y81"],
    ),
];

/// Positions where most moves let the two others eliminate the mover
/// within their next two moves, but some do not (found in self-play).
const THREATS: [&str; 3] = [
    "WF@W41,WE@W32,WA@W62,WK@W54,BR@W65,YP@W26,WE@W36,BN@W56,BP@W86,BF@B51,BK@B52,BA@B62,BA@B53,BZ@B73,\
     WP@B14,BE@B54,BE@B94,YZ@B65,BN@B95,BP@B86,YF@Y41,YK@Y51,YN@Y61,BR@Y71,YE@Y32,YA@Y62,YN@Y33,BC@Y43,\
     BC@Y53,YR@Y34,YR@Y54,YA@Y64,BP@Y36,YP@Y66,BP@WM7,YP@BM8 W WBY - ccw",
    "YR@W42,YP@W62,WK@W53,WN@W63,YP@W24,BP@W95,WP@W66,WP@W86,BF@B51,BA@B42,BK@B52,BA@B62,BE@B72,BR@B53,\
     BE@B14,BN@B66,BZ@B86,YR@Y11,YF@Y61,YA@Y42,BR@Y82,BP@Y33,YN@Y43,YK@Y63,YA@Y44,YE@Y54,YC@Y64,YE@Y94,\
     BC@Y15,YZ@Y65,BP@Y36,BP@WM6,BP@WQ7 W WBY - ccw",
    "WF@W41,WA@W42,BR@W83,BN@W24,WK@W54,BC@W55,YP@W46,BP@W66,WP@W96,BR@B11,BE@B32,BA@B42,BF@B52,BE@B72,\
     BA@B53,BK@B63,BZ@B93,WZ@B14,BN@B74,YF@Y51,YR@Y12,YE@Y32,YK@Y62,YN@Y82,YA@Y53,YZ@Y73,YC@Y93,BP@Y44,\
     YE@Y54,BC@Y55,YP@Y26,YN@Y46,YP@Y76,WP@WQ7,YP@BM7,YP@BM8,BP@BQ7 W WBY - ccw",
];

/// Whether the two sides after `x` can eliminate it within their next two moves.
fn coalition_eliminates(pos: &Position, x: Side) -> bool {
    pos.legal_moves().into_iter().any(|m1| {
        let mut p1 = *pos;
        p1.play_unchecked(m1);
        !p1.live().contains(x)
            || (p1.turn() != x
                && p1.legal_moves().into_iter().any(|m2| {
                    let mut p2 = p1;
                    p2.play_unchecked(m2);
                    !p2.live().contains(x)
                }))
    })
}

#[test]
fn the_same_seed_gives_the_same_move_and_another_seed_may_not() {
    let game = Game::new(Direction::Ccw);
    for level in Level::ALL {
        // Level 3's features on a smaller budget, to keep the test quick.
        let cfg = Config {
            nodes: level.config().nodes.min(30_000),
            ..level.config()
        };
        let a = choose_move_with(&game, &cfg, 7, &mut |_| false);
        assert_eq!(a, choose_move_with(&game, &cfg, 7, &mut |_| false), "{level:?}");
        assert!(a.is_some());
    }
    // The stop callback ends the search early, still with a move.
    let mut asked = 0;
    let cfg = Level::Three.config();
    let m = choose_move_with(&game, &cfg, 7, &mut |nodes| {
        asked += 1;
        nodes >= 2048
    });
    assert!(m.is_some());
    assert_eq!(asked, 2);
    // Self-play at level 1 is a pure function of the seeds.
    let run = |seed: u64| {
        let mut game = Game::new(Direction::Ccw);
        let mut moves = Vec::new();
        for ply in 0..15 {
            let m = choose_move(&game, Level::One, seed + ply).unwrap();
            moves.push(m);
            play(&mut game, m);
        }
        moves
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(1000), "level 1 varies with the seed");
}

#[test]
fn every_move_is_legal_until_the_game_ends() {
    for seed in 0..2u64 {
        let mut game = Game::new(if seed == 1 { Direction::Cw } else { Direction::Ccw });
        for ply in 0..120u64 {
            if game.is_finished() {
                assert_eq!(choose_move(&game, Level::One, seed), None);
                break;
            }
            let m = if ply % 3 == 0 {
                random_move(game.position(), seed * 1000 + ply).unwrap()
            } else {
                choose_move(&game, Level::One, seed * 1000 + ply).unwrap()
            };
            assert!(
                game.position().legal_moves().contains(&m),
                "{m} in {:?}",
                game.position()
            );
            play(&mut game, m);
        }
    }
    // The stronger levels too, for a few moves each.
    let mut game = Game::new(Direction::Ccw);
    for (ply, level) in [Level::Two, Level::Two, Level::Two].into_iter().enumerate() {
        let m = choose_move(&game, level, ply as u64).unwrap();
        assert!(game.position().legal_moves().contains(&m));
        play(&mut game, m);
    }
}

#[test]
fn it_takes_a_free_piece_of_its_target() {
    // W's chariot can take B's undefended chariot over W's fan.
    let game = game_at("WK@W42,WR@W92,BK@B42,BR@B13,YK@Y42 W WBY - ccw");
    for level in Level::ALL {
        assert_eq!(choose_move(&game, level, 3), Some(mv("W92-B13")), "{level:?}");
    }
}

#[test]
fn it_delivers_a_mate_in_one() {
    for (i, (text, winning)) in MATES.into_iter().enumerate() {
        let game = game_at(text);
        let winning: Vec<Move> = winning.iter().map(|m| mv(m)).collect();
        let levels: &[Level] = if i == 0 { &Level::ALL } else { &[Level::One, Level::Two] };
        for &level in levels {
            let m = choose_move(&game, level, 5).unwrap();
            assert!(winning.contains(&m), "{level:?} played {m} in {text}");
        }
    }
}

#[test]
fn it_escapes_a_threat_of_elimination() {
    for (i, text) in THREATS.into_iter().enumerate() {
        let p = pos(text);
        let x = p.turn();
        // Level 2's budget does not always finish the 3 plies that see it.
        let levels: &[Level] = if i == 0 {
            &[Level::Two, Level::Three]
        } else {
            &[Level::Three]
        };
        for &level in levels {
            let m = analyse(&p, &level.config(), 9).best.unwrap();
            let mut after = p;
            after.play_unchecked(m);
            assert!(!coalition_eliminates(&after, x), "{level:?} played {m} in {text}");
        }
    }
}

#[test]
fn no_move_once_the_game_is_over() {
    let game = game_at("WK@W52,WR@W92 W W - ccw");
    assert!(game.is_finished());
    for level in Level::ALL {
        assert_eq!(choose_move(&game, level, 0), None);
    }
    assert_eq!(random_move(game.position(), 0), None);
    assert_eq!(analyse(game.position(), &Level::Two.config(), 0).best, None);
    assert!(allowed_moves(&game).is_empty());
}

#[test]
fn it_never_gives_the_check_that_would_lose_by_the_check_limit() {
    // With no consecutive check allowed, any check loses: the bot avoids the
    // chariot check W92-B12 (over W's fan, then along B's rank 2).
    let text = "WK@W42,WR@W92,BK@B42,YK@Y42 W WBY - ccw";
    let limits = Limits {
        consecutive_checks: [0, 0],
        ..Limits::default()
    };
    let game = Game::from_position(pos(text), limits);
    let all = game.position().legal_moves();
    let allowed = allowed_moves(&game);
    let checking = |m: &Move| {
        let mut p = *game.position();
        !p.play_unchecked(*m).checks.is_empty()
    };
    assert!(all.iter().any(checking), "the position offers a check");
    assert!(!allowed.iter().any(checking));
    let m = choose_move(&game, Level::Two, 0).unwrap();
    assert!(!checking(&m), "{m}");
}

#[test]
fn it_never_repeats_a_checking_position_a_fourth_time() {
    // W's chariot checks B's king B12/B11 while B steps B42/B41 and Y Y42/Y43:
    // the checking positions recur every second check. After 6 checks each
    // was seen 3 times; the 7th check (B11-B12) would repeat one a 4th time
    // and lose (备注6), while the consecutive limit (7) still allows it.
    let mut game = game_at("WK@W42,WP@W46,WR@B13,BK@B42,YK@Y42,YP@Y46 W WBY - ccw");
    let play = |game: &mut Game, text: &str| {
        let side = game.position().turn();
        game.apply(Event {
            side,
            action: Action::Move(parse_move(text).unwrap()),
            at: 0,
        })
        .unwrap();
    };
    play(&mut game, "B13-B12");
    for i in 0..5 {
        let (k, y) = if i % 2 == 0 {
            ("B42-B41", "Y42-Y43")
        } else {
            ("B41-B42", "Y43-Y42")
        };
        play(&mut game, k);
        play(&mut game, y);
        play(&mut game, if i % 2 == 0 { "B12-B11" } else { "B11-B12" });
    }
    play(&mut game, "B41-B42");
    play(&mut game, "Y43-Y42");
    assert_eq!(game.consecutive_checks(Side::W, Side::B), 6);
    let repeat = parse_move("B11-B12").unwrap();
    assert!(game.position().legal_moves().contains(&repeat));
    let mut next = *game.position();
    assert!(!next.play_unchecked(repeat).checks.is_empty(), "B11-B12 gives check");
    assert_eq!(game.checking_repetitions(Side::W, Side::B, &next), 3);
    assert!(!allowed_moves(&game).contains(&repeat));
    for level in Level::ALL {
        assert_ne!(choose_move(&game, level, 1), Some(repeat), "{level:?}");
    }
}

#[test]
fn draw_votes_never_accept_in_phase_three_and_follow_the_evaluation_in_phase_two() {
    let limits = Limits {
        min_rounds_for_requests: 0,
        ..Limits::default()
    };
    let offer = |text: &str| {
        let mut g = Game::from_position(pos(text), limits);
        let by = g.position().turn();
        g.apply(Event {
            side: by,
            action: Action::OfferDraw,
            at: 0,
        })
        .unwrap();
        g
    };
    // Phase 3: B is far ahead or far behind; it declines either way, as does Y.
    let g = offer("WK@W42,WR@W92,WR@W12,BK@B42,YK@Y42 W WBY - ccw");
    for level in Level::ALL {
        assert!(!answer_draw(&g, Side::B, level));
        assert!(!answer_draw(&g, Side::Y, level));
    }
    // Phase 2: W offers. B with two chariots against a bare king declines;
    // B with a bare king against two chariots accepts.
    let ahead = offer("WK@W42,BK@B42,BR@B12,BR@B92 W WB - ccw");
    let behind = offer("WK@W42,WR@W12,WR@W92,BK@B42 W WB - ccw");
    for level in Level::ALL {
        assert!(!answer_draw(&ahead, Side::B, level));
        assert!(answer_draw(&behind, Side::B, level));
    }
    // No offer, nothing to accept.
    let none = Game::from_position(pos("WK@W42,BK@B42 W WB - ccw"), limits);
    assert!(!answer_draw(&none, Side::B, Level::Two));
}
