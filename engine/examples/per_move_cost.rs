//! What the server computes after every move of a 三国象棋 game, over the
//! positions of the `legal_moves/playouts` bench (same playouts, same seed),
//! in separate functions so that callgrind counts each alone:
//!
//! ```text
//! cargo build -p engine --release --example per_move_cost
//! valgrind --tool=callgrind --toggle-collect='*measure_legal_moves*' \
//!     target/release/examples/per_move_cost legal 10
//! ```
//!
//! The arguments: what to run (`legal`, `format`, `checked`) and how many
//! times over all positions. It prints the number of positions, to divide
//! the instruction count by (times the repetitions).

use std::hint::black_box;

use engine::{Direction, Position, format_position};

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "legal".to_owned());
    let reps: usize = args.next().map_or(1, |n| n.parse().expect("a number of repetitions"));
    let positions = playout_positions(40, 150);
    let sum = match what.as_str() {
        "legal" => measure_legal_moves(&positions, reps),
        "format" => measure_format_position(&positions, reps),
        "checked" => measure_checked(&positions, reps),
        other => panic!("unknown measurement {other} (legal, format, checked)"),
    };
    println!("{} positions x {reps}: {what} (checksum {sum})", positions.len());
}

#[inline(never)]
fn measure_legal_moves(positions: &[Position], reps: usize) -> usize {
    let mut sum = 0;
    for _ in 0..reps {
        for p in positions {
            sum += black_box(p).legal_moves().len();
        }
    }
    sum
}

#[inline(never)]
fn measure_format_position(positions: &[Position], reps: usize) -> usize {
    let mut sum = 0;
    for _ in 0..reps {
        for p in positions {
            sum += format_position(black_box(p)).len();
        }
    }
    sum
}

#[inline(never)]
fn measure_checked(positions: &[Position], reps: usize) -> usize {
    let mut sum = 0;
    for _ in 0..reps {
        for p in positions {
            sum += black_box(p).checked().count() as usize;
        }
    }
    sum
}

/// The positions of `games` random playouts of at most `plies` plies each
/// (xorshift, fixed seed), before each move: as `playout_positions` in
/// `benches/perft.rs`.
fn playout_positions(games: usize, plies: usize) -> Vec<Position> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    for g in 0..games {
        let mut p = Position::initial(if g % 2 == 0 { Direction::Ccw } else { Direction::Cw });
        for _ in 0..plies {
            if p.is_over() {
                break;
            }
            let moves = p.legal_moves();
            if moves.is_empty() {
                let _ = p.resolve_turn();
                continue;
            }
            out.push(p);
            p.play_unchecked(moves[(next() % moves.len() as u64) as usize]);
        }
    }
    out
}
