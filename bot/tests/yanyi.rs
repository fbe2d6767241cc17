//! The 三国演弈棋 bot's contract: legal, deterministic, stoppable, sees
//! one-move tactics, and plays whole games through `YanyiGame`.

use bot::Level;
use bot::yanyi::{choose_game_move, choose_move, search};
use engine::yanyi::{Action, Event, Move, Player, Position, YanyiGame, parse_move, parse_position};

/// The static 汉 force, in every scenario of RULES-YANYI §11.
const HAN: &str = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";

fn pos(placement: &str, turn: char) -> Position {
    let text = format!("{placement},{HAN} {turn} - -");
    parse_position(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(text: &str) -> Move {
    parse_move(text).unwrap()
}

fn never(_: u64) -> bool {
    false
}

/// Positions and levels: every chosen move is legal, and the same seed
/// gives the same move.
#[test]
fn moves_are_legal_and_deterministic() {
    let mut positions = vec![Position::initial()];
    // A few positions reached by level-1 play.
    let mut p = Position::initial();
    for i in 0..30 {
        let m = choose_move(&p, Level::One, i, &mut never).unwrap();
        p.play(m).unwrap();
        if i % 10 == 9 {
            positions.push(p);
        }
    }
    for (i, p) in positions.iter().enumerate() {
        for level in Level::ALL {
            // Level 3 is the slow one: two positions are enough.
            if level == Level::Three && i % 2 == 1 {
                continue;
            }
            for seed in [1, 2] {
                let a = choose_move(p, level, seed, &mut never).unwrap();
                assert!(p.legal_moves().contains(&a), "{a} in {p:?}");
                let b = choose_move(p, level, seed, &mut never).unwrap();
                assert_eq!(a, b, "level {level:?} seed {seed}");
            }
        }
    }
}

/// A free chariot of an enemy on an open file is taken at levels 2 and 3.
#[test]
fn takes_a_free_chariot() {
    let p = pos("RK@i1,RP@i4,RR@e5,GR@e10,GK@q9,BP@i14,BK@i17", 'R');
    for level in [Level::Two, Level::Three] {
        for seed in 0..4 {
            assert_eq!(
                choose_move(&p, level, seed, &mut never),
                Some(mv("e5-e10")),
                "{level:?} {seed}"
            );
        }
    }
    // Level 1 takes it too: it is free.
    assert_eq!(choose_move(&p, Level::One, 7, &mut never), Some(mv("e5-e10")));
}

/// Mate in one (RULES-YANYI §11 scenario 3): both m5-i5 and m12-i12 mate
/// 魏, but only m5-i5 lets 吴 absorb 魏's pieces (§8); levels 2 and 3 see it.
#[test]
fn mates_and_absorbs() {
    let p = pos("RK@h1,GC@m5,RC@i9,GK@q9,GC@m12,BA@h17,BK@i17,BA@j17", 'G');
    for level in [Level::Two, Level::Three] {
        for seed in 0..4 {
            let m = choose_move(&p, level, seed, &mut never).unwrap();
            assert_eq!(m, mv("m5-i5"), "{level:?} {seed}");
            let out = p.clone().play(m).unwrap();
            assert_eq!(out.eliminated[0].player, Player::B);
            assert_eq!(out.eliminated[0].absorbed_by, Some(Player::G));
        }
    }
}

/// The stop callback ends the search at its first call (after 1024 nodes).
#[test]
fn stop_callback_ends_the_search() {
    let p = Position::initial();
    let moves = p.legal_moves();
    let mut calls = 0;
    let found = search(&p, &moves, &[], Level::Three, 3, &mut |_| {
        calls += 1;
        true
    });
    assert_eq!(calls, 1);
    assert!(found.nodes <= 1024, "{} nodes", found.nodes);
    assert!(moves.contains(&found.best.unwrap()));
    // choose_move returns a legal move when stopped at once.
    let m = choose_move(&p, Level::Three, 3, &mut |_| true).unwrap();
    assert!(moves.contains(&m));
    // Without a stop the budget is spent.
    let full = search(&p, &moves, &[], Level::Three, 3, &mut never);
    assert!(full.nodes > 1024);
}

fn play_game(levels: [Level; 3], seed: u64, cap: u32) -> YanyiGame {
    let mut game = YanyiGame::new();
    while !game.is_finished() && game.plies() < cap {
        let player = game.position().turn();
        let level = levels[player.index()];
        let m =
            choose_game_move(&game, level, seed ^ u64::from(game.plies()), &mut never).expect("a live game has a move");
        let at = u64::from(game.plies());
        game.apply(Event {
            player,
            action: Action::Move(m),
            at,
        })
        .unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    game
}

/// Whole games between bots end (or reach the cap) through the record,
/// every move accepted by `YanyiGame`; a finished game has no move.
#[test]
fn whole_games_run() {
    let g = play_game([Level::One; 3], 11, 600);
    assert!(g.is_finished() || g.plies() == 600);
    let g = play_game([Level::Two, Level::One, Level::Three], 5, 45);
    assert!(g.is_finished() || g.plies() == 45);
    let mut finished = 0;
    for seed in 0..4 {
        let g = play_game([Level::One; 3], seed, 1000);
        if let Some(r) = g.result() {
            finished += 1;
            assert!(r.outcomes.iter().all(Option::is_some));
            assert_eq!(choose_game_move(&g, Level::Two, 0, &mut never), None);
        }
    }
    assert!(finished > 0, "no level-1 game ended in 1000 plies");
}
