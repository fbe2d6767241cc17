//! The 三国暗棋 deal on the server: the randomness the pure engine leaves to
//! its caller (RULES-ANQI §10.3). Every draw comes from `rand::rng()`, a
//! ChaCha CSPRNG seeded from the operating system (and reseeded by it) —
//! never a clock, a counter or a non-cryptographic generator — and
//! `random_range` draws without modulo bias. The layout and salt this
//! returns are secrets: whoever holds a `Deal` must not log, send or store
//! it anywhere a client can reach before the game ends (its `Debug` shows
//! only the commitment).

use engine::anqi::deal::{self, Layout};
use rand::Rng;

/// A dealt layout with its salt and commitment.
pub struct Deal {
    /// The identity on each start point, in start-point order (secret).
    pub layout: Layout,
    /// The 32 salt bytes (secret).
    pub salt: [u8; 32],
    /// The §10.4 commitment, published at the start.
    pub commitment: String,
}

impl std::fmt::Debug for Deal {
    /// The commitment only: a deal printed by mistake leaks nothing.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deal")
            .field("commitment", &self.commitment)
            .finish_non_exhaustive()
    }
}

/// Deals game `game_id` (the id exactly as clients see it): the §10.3
/// Fisher–Yates shuffle of the full set, 32 independent salt bytes, and the
/// §10.4 commitment of both.
pub fn deal(game_id: &str) -> Deal {
    let mut rng = rand::rng();
    let layout = deal::shuffle(|i| rng.random_range(0..=i));
    let salt: [u8; 32] = rng.random();
    let commitment = deal::commitment(game_id, &deal::layout_text(&layout), &salt);
    Deal {
        layout,
        salt,
        commitment,
    }
}

/// A server seed for the seat-entropy deal (docs/ANQI-DEAL.md §4): 32 bytes
/// from the same CSPRNG; its SHA-256 is published before the seats send theirs.
pub fn server_seed() -> [u8; 32] {
    rand::rng().random()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deal_is_a_permutation_under_its_commitment_and_deals_differ() {
        let id = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";
        let a = deal(id);
        assert!(deal::is_permutation(&a.layout));
        let text = deal::layout_text(&a.layout);
        assert_eq!(a.commitment, deal::commitment_hex(id, &text, &deal::to_hex(&a.salt)));
        assert_eq!(a.commitment.len(), 64);
        let b = deal(id);
        assert_ne!(
            (a.layout, a.salt),
            (b.layout, b.salt),
            "two deals of 1.8e28 layouts and 2^256 salts"
        );
        assert!(!format!("{a:?}").contains(&text), "Debug shows no layout");
        assert_ne!(server_seed(), server_seed());
    }

    #[test]
    fn every_piece_reaches_every_start_point() {
        // 2,000 deals: each of the 32 start points sees a general (2 of 32
        // identities) about 125 times; none may be never or always.
        let mut generals = [0u32; 32];
        for _ in 0..2_000 {
            let d = deal("g");
            for (k, p) in deal::layout_text(&d.layout).chars().enumerate() {
                if p == 'K' || p == 'k' {
                    generals[k] += 1;
                }
            }
        }
        for (k, &n) in generals.iter().enumerate() {
            assert!((50..250).contains(&n), "start point {k}: {n} generals in 2,000 deals");
        }
    }
}
