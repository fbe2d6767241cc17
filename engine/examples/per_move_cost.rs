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

use engine::{Position, format_position};

#[path = "../benches/common/playouts.rs"]
mod playouts;
use playouts::playout_positions;

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
