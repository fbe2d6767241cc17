//! The legal-move listing a server makes after every move, for counting its
//! instructions under callgrind (stable on a shared machine, unlike time):
//! the ~6,000 positions of the `legal_moves/playouts` bench (random
//! playouts, a fixed seed), each listed N times (argument; 5 by default).
//!
//! ```text
//! cargo build --release -p engine --example listing_instructions
//! valgrind --tool=callgrind target/release/examples/listing_instructions 0   # the playouts alone
//! valgrind --tool=callgrind target/release/examples/listing_instructions 5
//! ```
//! (the difference of the two totals) / (5 × positions) = instructions a listing.

#[path = "../benches/common/mod.rs"]
mod common;
use common::playouts::playout_positions;

fn main() {
    let positions = playout_positions(40, 150);
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(5, |a| a.parse().expect("a number of rounds"));
    let mut moves = 0;
    for _ in 0..rounds {
        for p in &positions {
            moves += std::hint::black_box(p).legal_moves().len();
        }
    }
    println!("{} positions, {} moves listed", positions.len(), moves);
}
