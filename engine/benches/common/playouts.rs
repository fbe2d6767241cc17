//! The positions of the `legal_moves/playouts` bench, shared with
//! `examples/per_move_cost.rs` (which includes this file by path), so that
//! both count over the same positions.

use engine::{Direction, Position};

/// The positions of `games` random playouts of at most `plies` plies each
/// (xorshift, fixed seed), before each move.
pub fn playout_positions(games: usize, plies: usize) -> Vec<Position> {
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
