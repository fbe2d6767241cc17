//! Prints a 三国演弈棋 self-play game at one level with the depth, value and
//! nodes of every search: `cargo run --release -p bot --example yanyi_trace -- 3 40`.

use bot::Level;
use engine::yanyi::{Action, Event, YanyiGame};

fn main() {
    let mut args = std::env::args().skip(1);
    let level = args
        .next()
        .and_then(|a| a.parse().ok())
        .and_then(Level::from_number)
        .unwrap_or(Level::Two);
    let plies: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);
    let mut game = YanyiGame::new();
    while !game.is_finished() && game.plies() < plies {
        let pos = *game.position();
        let player = pos.turn();
        let moves = pos.legal_moves();
        let found = bot::yanyi::search(&pos, &moves, &[], level, u64::from(game.plies()), &mut |_| false);
        let Some(m) = bot::yanyi::choose_game_move(&game, level, u64::from(game.plies()), &mut |_| false) else {
            break;
        };
        println!(
            "{:3} {} {m} (search: {:?} value {} depth {} nodes {})",
            game.plies(),
            player.letter(),
            found.best,
            found.value,
            found.depth,
            found.nodes
        );
        let at = u64::from(game.plies());
        game.apply(Event {
            player,
            action: Action::Move(m),
            at,
        })
        .expect("legal");
    }
    println!("{:?}", game.result().map(|r| r.ending));
}
