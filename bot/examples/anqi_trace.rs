//! Prints a self-play 三国暗棋 game at one level with each search's depth,
//! value and nodes: `cargo run --release -p bot --example anqi_trace -- 3 40`
//! (level, number of turns).

use bot::anqi::{self, AnqiBotContext, AnqiConfig};
use bot::rng::Rng;
use engine::anqi::{AnqiPosition, Options, deal};

fn main() {
    let mut args = std::env::args().skip(1);
    let level = args
        .next()
        .and_then(|s| s.parse().ok())
        .and_then(bot::Level::from_number)
        .unwrap_or(bot::Level::Three);
    let turns: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(40);
    let mut rng = Rng::new(7);
    let layout = deal::shuffle(|i| rng.below(i as usize + 1) as u32);
    let mut full = AnqiPosition::from_layout(&layout, Options::default());
    let ctx = AnqiBotContext::default();
    for n in 0..turns {
        if full.is_over() {
            break;
        }
        let v = full.viewer();
        let r = anqi::search(&v, &ctx, &AnqiConfig::of(level), u64::from(n), &mut |_| false);
        let m = r.best.expect("an action");
        println!("{v}  {m}  value {} depth {} nodes {}", r.value, r.depth, r.nodes);
        full.play_unchecked(m);
    }
    println!("{full}");
}
