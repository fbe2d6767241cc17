//! The 三国暗棋 deal on the server: the randomness the pure engine leaves to
//! its caller. Rooms deal by the seat-entropy scheme (docs/ANQI-DEAL.md §4,
//! ANQI R-21): the one random value the server draws is the game's
//! `server_seed`, from `rand::rng()` — a ChaCha CSPRNG seeded from the
//! operating system (and reseeded by it), never a clock, a counter or a
//! non-cryptographic generator. The layout and salt are then derived by
//! `engine::anqi::deal::seat_entropy_deal` from it, the game id and the
//! seats' seeds. The server seed is a secret until the game ends: whoever
//! holds one must not log, send or store it anywhere a client can reach.
//!
//! (Games stored before the scheme keep the layout and salt the plain deal
//! of §10.3 drew for them; rooms restore them as they are and deal no new
//! game that way.)

use rand::Rng;

/// A server seed for the seat-entropy deal (docs/ANQI-DEAL.md §4): 32 bytes
/// from the OS-seeded CSPRNG; its SHA-256 is published before the seats send theirs.
pub fn server_seed() -> [u8; 32] {
    rand::rng().random()
}

#[cfg(test)]
mod tests {
    use engine::anqi::deal;

    use super::*;

    #[test]
    fn server_seeds_differ_and_their_deals_are_permutations_under_their_commitment() {
        let id = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";
        let (a, b) = (server_seed(), server_seed());
        assert_ne!(a, b, "two draws of 2^256");
        let seeds = [[0; 32]; 3];
        let (la, sa) = deal::seat_entropy_deal(&a, id, &seeds);
        let (lb, sb) = deal::seat_entropy_deal(&b, id, &seeds);
        assert!(deal::is_permutation(&la) && deal::is_permutation(&lb));
        assert_ne!((la, sa), (lb, sb), "two server seeds, two deals, zero seeds alike");
        let text = deal::layout_text(&la);
        assert_eq!(
            deal::commitment(id, &text, &sa),
            deal::commitment_hex(id, &text, &deal::to_hex(&sa))
        );
    }

    #[test]
    fn every_piece_reaches_every_start_point() {
        // 2,000 deals from fresh server seeds (seats sending nothing): each of
        // the 32 start points sees a general (2 of 32 identities) about 125
        // times; none may be never or always.
        let mut generals = [0u32; 32];
        for _ in 0..2_000 {
            let (layout, _) = deal::seat_entropy_deal(&server_seed(), "g", &[[0; 32]; 3]);
            for (k, p) in deal::layout_text(&layout).chars().enumerate() {
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
