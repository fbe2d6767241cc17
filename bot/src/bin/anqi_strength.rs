//! Strength benchmark for the 三国暗棋 bots: full games through
//! `engine::anqi::AnqiGame` between levels (or a uniformly random player).
//!
//! A match `A:B` seats one A and two copies of B (each with its own seeds),
//! A in seat 1, 2 and 3 in turn, for `--games` games. Each game's layout is
//! dealt by a seeded Fisher–Yates shuffle. The harness alone holds the full
//! position (the `AnqiGame`); every bot keeps its own **viewer** copy, which
//! the harness updates after each action with `play` or, for a flip, with
//! `play_flip` and the identity the record revealed, exactly as a client
//! would. Bots are only ever called with their viewer copy.
//!
//! A's score: a sole first place 1, a first place shared by k seats 1/k,
//! anything else 0, so an even match scores 33%. Mode `annihilation`, net
//! deadlock scoring, no-progress limit 30 rounds (the defaults).
//!
//! ```text
//! cargo run --release -p bot --bin anqi_strength -- --games 30 2:1 3:2 1:random
//! ```

use std::time::{Duration, Instant};

use bot::Level;
use bot::anqi::{self, AnqiBotContext};
use bot::rng::Rng;
use engine::anqi::{AnqiGame, AnqiPosition, Command, Input, Move, Options, RecordEvent, Settings, deal};

#[derive(Copy, Clone, Debug)]
enum Player {
    Random,
    Level(Level),
}

fn player(name: &str) -> Player {
    match name {
        "random" => Player::Random,
        n => Player::Level(
            n.parse()
                .ok()
                .and_then(Level::from_number)
                .unwrap_or_else(|| panic!("unknown player {n:?}")),
        ),
    }
}

fn choose(p: Player, view: &AnqiPosition, ctx: &AnqiBotContext, seed: u64) -> Option<Move> {
    match p {
        Player::Random => {
            let moves = view.legal_moves();
            (!moves.is_empty()).then(|| moves[Rng::new(seed).below(moves.len())])
        }
        Player::Level(l) => anqi::choose_action(view, ctx, l, seed, &mut |_| false),
    }
}

#[derive(Default)]
struct Tally {
    games: u32,
    firsts: u32,
    score: f64,
    places: u32,
    turns: u64,
    time: [Duration; 2],
    moves: [u32; 2],
}

/// Plays one game; returns A's placing, how many seats share it, the turns played.
fn play_game(a: Player, b: Player, a_seat: usize, seed: u64, tally: &mut Tally) -> (u8, u32, u32) {
    let mut rng = Rng::new(seed);
    let layout = deal::shuffle(|i| rng.below(i as usize + 1) as u32);
    let settings = Settings::default();
    let ctx = AnqiBotContext { settings };
    let mut game = AnqiGame::new(AnqiPosition::from_layout(&layout, Options::default()), settings);
    let mut views = [0, 1, 2].map(|_| AnqiPosition::initial_viewer(Options::default()));
    let mut n = 0u64;
    while !game.is_over() {
        let Some(seat) = game.position().seat_to_move() else {
            break;
        };
        assert_eq!(views[seat], game.viewer(), "the bot's copy follows the viewer form");
        let who = if seat == a_seat { a } else { b };
        let k = usize::from(seat != a_seat);
        n += 1;
        let start = Instant::now();
        let m = choose(who, &views[seat], &ctx, seed ^ (n << 8) ^ seat as u64).expect("an action");
        tally.time[k] += start.elapsed();
        tally.moves[k] += 1;
        let events = game
            .apply(Input {
                seat,
                command: Command::Play(m),
                at: n,
            })
            .expect("a legal action");
        let revealed = events.iter().find_map(|e| match e {
            RecordEvent::Action { revealed, .. } => *revealed,
            _ => None,
        });
        for v in &mut views {
            match (m, revealed) {
                (Move::Flip(p), Some(id)) => v.play_flip(p, id).map(|_| ()),
                _ => v.play(m).map(|_| ()),
            }
            .expect("the viewer copy follows");
        }
    }
    let result = game.result().expect("over");
    let placing = result.placing.expect("placed");
    let mine = placing[a_seat];
    let shared = placing.iter().filter(|&&p| p == mine).count() as u32;
    (mine, shared, game.position().turn())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut games = 12u32;
    let mut seed = 1u64;
    let mut matches = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--games" => games = args.next().and_then(|s| s.parse().ok()).expect("--games N"),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).expect("--seed N"),
            m => matches.push(m.to_owned()),
        }
    }
    if matches.is_empty() {
        matches = vec!["2:1".into(), "3:2".into()];
    }
    println!("| match (one A vs two B) | games | A 1st | A mean place | A score | A ms/action | B ms/action |");
    println!("|---|---|---|---|---|---|---|");
    for (mi, m) in matches.iter().enumerate() {
        let (an, bn) = m.split_once(':').expect("A:B");
        let (a, b) = (player(an), player(bn));
        let mut t = Tally::default();
        for g in 0..games {
            let gseed = seed.wrapping_mul(1_000_003) ^ ((mi as u64) << 32) ^ u64::from(g);
            let (place, shared, turns) = play_game(a, b, g as usize % 3, gseed, &mut t);
            t.games += 1;
            t.places += u32::from(place);
            t.turns += u64::from(turns);
            if place == 1 {
                t.firsts += 1;
                t.score += 1.0 / f64::from(shared);
            }
            eprintln!(
                "{m} game {g}: A in seat {} placed {place} (shared by {shared}), {turns} turns",
                g % 3 + 1
            );
        }
        let ms = |k: usize| t.time[k].as_secs_f64() * 1000.0 / f64::from(t.moves[k].max(1));
        println!(
            "| {an} vs 2× {bn} | {} | {} | {:.2} | **{:.0}%** | {:.1} | {:.1} |",
            t.games,
            t.firsts,
            f64::from(t.places) / f64::from(t.games),
            100.0 * t.score / f64::from(t.games),
            ms(0),
            ms(1),
        );
        eprintln!("{m}: mean {:.0} turns", t.turns as f64 / f64::from(t.games));
    }
}
