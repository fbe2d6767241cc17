//! Prints a short self-play game with each search's depth, value and nodes.
//!
//! `cargo run --release -p bot --example trace -- [level] [plies]`

use engine::{Action, Direction, Event, Game};

fn main() {
    let mut args = std::env::args().skip(1);
    let level = args
        .next()
        .and_then(|v| v.parse().ok())
        .and_then(bot::Level::from_number)
        .unwrap_or(bot::Level::Two);
    let plies: u32 = args.next().and_then(|v| v.parse().ok()).unwrap_or(30);
    let mut game = Game::new(Direction::Ccw);
    while !game.is_finished() && game.plies() < plies {
        let pos = *game.position();
        let moves = bot::allowed_moves(&game);
        let r = bot::search::search(&pos, &moves, &level.config(), u64::from(game.plies()), &mut |_| false);
        let mv = r.best.expect("a move");
        let side = pos.turn();
        let eff = game
            .apply(Event {
                side,
                action: Action::Move(mv),
                at: 0,
            })
            .expect("legal");
        let cap = eff.iter().find_map(|e| match e {
            engine::Effect::Moved { outcome, .. } => outcome.captured.map(|c| c.to_string()),
            _ => None,
        });
        println!(
            "{:3} {side} {mv} depth {} value {} nodes {} {}",
            game.plies(),
            r.depth,
            r.value,
            r.nodes,
            cap.unwrap_or_default()
        );
    }
    println!("{:?}", game.result().map(|r| &r.ending));
}
