//! Strength benchmark for 三国演弈棋: full games through
//! `engine::yanyi::YanyiGame` between bot levels and a random mover.
//!
//! A match `A:B` seats one A and two copies of B (each copy with its own
//! seeds) and plays every one of the 6 permutations of the three players
//! over the seats G, B, R, `--rounds` times. A's result is reported:
//! wins, draws, losses and its score (win 1, a draw shared equally by the
//! sides still in the game, loss 0; an even match scores 33%).
//!
//! ```text
//! cargo run --release -p bot --bin yanyi_strength -- --rounds 2 1:random 2:1 3:2
//! ```
//!
//! Each match's seeds depend on `--seed` and its position on the command
//! line; the same command replays the same games. Per-game results go to
//! stderr, the table to stdout. The measured table is in `bot/README.md`.
//! Games stop at `--max-plies` (default 400): the sides still in share a draw.
//!
//! Players: `random`, `1`, `2`, `3` (the levels).

use std::time::{Duration, Instant};

use bot::Level;
use engine::yanyi::{Action, Event, Outcome, Player as Seat, YanyiGame};

#[derive(Copy, Clone, Debug)]
enum Player {
    Random,
    Bot(Level),
}

fn player(name: &str) -> Player {
    match name {
        "random" => Player::Random,
        n => Player::Bot(
            n.parse()
                .ok()
                .and_then(Level::from_number)
                .unwrap_or_else(|| panic!("unknown player {n:?}")),
        ),
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    games: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    score: f64,
    capped: u32,
    plies: u64,
}

#[derive(Default, Clone, Copy)]
struct Clock {
    moves: u64,
    time: Duration,
}

fn mix(a: u64, b: u64) -> u64 {
    let mut r = bot::rng::Rng::new(a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b);
    r.next_u64()
}

/// Plays one game; `seats[i]` is the player index (0 = A, 1/2 = B copies)
/// at side i. Returns each player's score and whether the plies cap ended it.
fn play(
    players: [Player; 3],
    seats: [usize; 3],
    seed: u64,
    max_plies: u32,
    clocks: &mut [Clock; 3],
) -> ([Option<Outcome>; 3], [f64; 3], bool, u32, String) {
    let mut game = YanyiGame::new();
    while !game.is_finished() && game.plies() < max_plies {
        let side = game.position().turn();
        let who = seats[side.index()];
        let move_seed = mix(seed, u64::from(game.plies()) * 3 + who as u64);
        let start = Instant::now();
        let mv = match players[who] {
            Player::Random => {
                let moves = game.position().legal_moves();
                let mut rng = bot::rng::Rng::new(move_seed);
                (!moves.is_empty()).then(|| moves[rng.below(moves.len())])
            }
            Player::Bot(level) => bot::yanyi::choose_game_move(&game, level, move_seed, &mut |_| false),
        };
        clocks[who].time += start.elapsed();
        clocks[who].moves += 1;
        let mv = mv.expect("a live game has a move");
        let at = u64::from(game.plies());
        game.apply(Event {
            player: side,
            action: Action::Move(mv),
            at,
        })
        .expect("the bot's move is legal");
    }
    let mut outcome = [None; 3];
    let mut score = [0.0; 3];
    let capped = !game.is_finished();
    if let Some(result) = game.result() {
        let drawers = result.outcomes.iter().filter(|o| **o == Some(Outcome::Draw)).count();
        for s in Seat::ALL {
            let o = result.outcomes[s.index()];
            outcome[seats[s.index()]] = o;
            score[seats[s.index()]] = match o {
                Some(Outcome::Win) => 1.0,
                Some(Outcome::Draw) => 1.0 / drawers as f64,
                _ => 0.0,
            };
        }
    } else {
        // Capped: the sides still in share a draw.
        let live = game.position().live();
        for s in Seat::ALL {
            let who = seats[s.index()];
            if live.contains(s) {
                outcome[who] = Some(Outcome::Draw);
                score[who] = 1.0 / f64::from(live.count());
            } else {
                outcome[who] = Some(Outcome::Loss);
            }
        }
    }
    let ending = match game.result() {
        Some(r) => format!("{:?}, live {}", r.ending, game.position().live().count()),
        None => "capped".to_string(),
    };
    (outcome, score, capped, game.plies(), ending)
}

const PERMUTATIONS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];

fn main() {
    let mut rounds = 1u32;
    let mut max_plies = 400u32;
    let mut seed = 1u64;
    let mut matches = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N"),
            "--max-plies" => max_plies = args.next().and_then(|v| v.parse().ok()).expect("--max-plies N"),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).expect("--seed N"),
            m => matches.push(m.to_string()),
        }
    }
    if matches.is_empty() {
        matches = ["1:random", "2:1", "3:2"].map(String::from).to_vec();
    }
    println!(
        "| match (one A vs two B) | games | A wins | draws | A losses | A score | capped | avg plies | A ms/move | B ms/move |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (mi, m) in matches.iter().enumerate() {
        let (a, b) = m.split_once(':').expect("a match is A:B");
        let players = [player(a), player(b), player(b)];
        let mut t = Tally::default();
        let mut clocks = [Clock::default(); 3];
        for r in 0..rounds {
            for (pi, perm) in PERMUTATIONS.iter().enumerate() {
                // seats[side] = player index: the permutation says who sits where.
                let game_seed = mix(seed ^ ((mi as u64) << 40), u64::from(r) * 6 + pi as u64);
                let (outcome, score, capped, plies, ending) = play(players, *perm, game_seed, max_plies, &mut clocks);
                t.games += 1;
                t.plies += u64::from(plies);
                t.capped += u32::from(capped);
                t.score += score[0];
                match outcome[0] {
                    Some(Outcome::Win) => t.wins += 1,
                    Some(Outcome::Draw) => t.draws += 1,
                    _ => t.losses += 1,
                }
                eprintln!(
                    "{m} game {}: seats {:?} -> A {:?} ({plies} plies, {ending})",
                    t.games, perm, outcome[0],
                );
            }
        }
        let ms = |c: Clock| c.time.as_secs_f64() * 1000.0 / c.moves.max(1) as f64;
        let b_clock = Clock {
            moves: clocks[1].moves + clocks[2].moves,
            time: clocks[1].time + clocks[2].time,
        };
        println!(
            "| {a} vs 2×{b} | {} | {} ({:.0}%) | {} | {} | {:.0}% | {} | {:.0} | {:.1} | {:.1} |",
            t.games,
            t.wins,
            100.0 * f64::from(t.wins) / f64::from(t.games),
            t.draws,
            t.losses,
            100.0 * t.score / f64::from(t.games),
            t.capped,
            t.plies as f64 / f64::from(t.games),
            ms(clocks[0]),
            ms(b_clock),
        );
    }
}
