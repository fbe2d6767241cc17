//! The deal (§10.3–10.5) and the seat-entropy scheme (ANQI R-21, `docs/ANQI-DEAL.md`).
//!
//! Pure functions only: the engine has no randomness. The server supplies uniform
//! draws from its CSPRNG ([`shuffle`]) or the seats' seeds ([`seat_entropy_deal`]).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::game::{AnqiGame, Command, Input, RecordEvent, Settings};
use super::notation::parse_move;
use super::position::AnqiPosition;
use super::{FULL_SET, Options, Piece, SET_COUNTS, Team};

type HmacSha256 = Hmac<Sha256>;

/// A layout: the identity on each start point, in the start-point order (§1, §10.3).
pub type Layout = [Piece; 32];

/// Parses a layout string (32 piece letters). `None` unless it is a permutation of the
/// full set.
pub fn parse_layout(text: &str) -> Option<Layout> {
    let v: Vec<Piece> = text.chars().map(Piece::from_char).collect::<Option<_>>()?;
    let layout: Layout = v.try_into().ok()?;
    is_permutation(&layout).then_some(layout)
}

/// Whether a layout holds exactly the full set.
pub fn is_permutation(layout: &Layout) -> bool {
    let mut c = [0u8; 14];
    for p in layout {
        c[p.index()] += 1;
    }
    c == SET_COUNTS
}

/// The layout string (§10.3).
pub fn layout_text(layout: &Layout) -> String {
    layout.iter().map(|p| p.char()).collect()
}

/// Lowercase hex of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses lowercase hex of exactly 32 bytes.
pub fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The Fisher–Yates shuffle of §10.3 over the full set in canonical order: for i = 31
/// down to 1, `j = draw(i)` and items i and j swap.
///
/// Contract: `draw(i)` returns a value uniform in `0..=i` without modulo bias (the
/// server's CSPRNG, e.g. `rng.random_range(0..=i)`). A value above `i` is clamped to `i`.
pub fn shuffle(mut draw: impl FnMut(u32) -> u32) -> Layout {
    let mut items: Vec<Piece> = FULL_SET.chars().filter_map(Piece::from_char).collect();
    for i in (1..32usize).rev() {
        let j = (draw(i as u32) as usize).min(i);
        items.swap(i, j);
    }
    items.try_into().unwrap_or_else(|_| unreachable!("32 pieces"))
}

/// The commitment preimage of §10.4.
pub fn preimage(game_id: &str, layout: &str, salt_hex: &str) -> String {
    format!("sanguo-anqi/1\n{game_id}\n{layout}\n{salt_hex}\n")
}

/// The commitment of §10.4: lowercase hex of SHA-256 of the preimage.
pub fn commitment(game_id: &str, layout: &str, salt: &[u8; 32]) -> String {
    commitment_hex(game_id, layout, &to_hex(salt))
}

/// The commitment with the salt given as its 64 hex digits.
pub fn commitment_hex(game_id: &str, layout: &str, salt_hex: &str) -> String {
    to_hex(&Sha256::digest(preimage(game_id, layout, salt_hex).as_bytes()))
}

/// Why a published game does not verify (§10.5).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// Step 1: the commitment does not match the revealed layout and salt.
    #[error("the commitment does not match the revealed layout and salt")]
    Commitment,
    /// The salt is not 64 lowercase hex digits.
    #[error("the salt is not 64 lowercase hex digits")]
    Salt,
    /// Step 2: the layout is not a permutation of the full set.
    #[error("the layout is not a permutation of the full set")]
    Layout,
    /// Step 3: a record line cannot be read.
    #[error("record line {line}: cannot read '{text}'")]
    Unreadable {
        /// 1-based line.
        line: usize,
        /// The text.
        text: String,
    },
    /// Step 3: an action or input of the record is refused.
    #[error("record line {line}: '{text}' is refused: {why}")]
    Refused {
        /// 1-based line.
        line: usize,
        /// The text.
        text: String,
        /// Why.
        why: String,
    },
    /// Step 3: the replay writes a different record (a flip revealed another identity, a
    /// 收军 removal or an automatic event differs, or the result does not follow).
    #[error("record line {line}: the replay gives '{expected}', the record says '{found}'")]
    Mismatch {
        /// 1-based line.
        line: usize,
        /// What the replay writes.
        expected: String,
        /// What the record says.
        found: String,
    },
}

/// What a verifier must know of a game besides its deal: its options, its assigned teams
/// (§9.2) if any, and its settings (mode, scoring, no-progress limit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct GameConfig {
    /// The variant options.
    pub options: Options,
    /// Assigned teams of seats 1, 2, 3, if the game had them.
    pub teams: Option<[Team; 3]>,
    /// The record's settings.
    pub settings: Settings,
}

/// §10.5 steps 1–3: checks the commitment, the layout, and replays `record` (the §11.5
/// tokens, one per line; `layout`/`salt` lines are ignored) from the full initial
/// position of the layout under `config`. Every flip must reveal the layout's identity,
/// every automatic event and the end must be what the rules give. Returns the replayed
/// game.
pub fn verify(
    game_id: &str,
    commitment: &str,
    layout: &str,
    salt_hex: &str,
    record: &[String],
    config: &GameConfig,
) -> Result<AnqiGame, VerifyError> {
    let GameConfig {
        options,
        teams,
        settings,
    } = *config;
    if parse_hex32(salt_hex).is_none() {
        return Err(VerifyError::Salt);
    }
    if commitment_hex(game_id, layout, salt_hex) != commitment {
        return Err(VerifyError::Commitment);
    }
    let layout = parse_layout(layout).ok_or(VerifyError::Layout)?;
    let initial = match teams {
        Some(t) => AnqiPosition::from_layout_assigned(&layout, options, t).ok_or(VerifyError::Layout)?,
        None => AnqiPosition::from_layout(&layout, options),
    };
    let lines: Vec<&String> = record
        .iter()
        .filter(|l| !l.starts_with("layout ") && !l.starts_with("salt "))
        .collect();
    let mut game = AnqiGame::new(initial, settings);
    // The record of a game with assigned teams opens with their `assign` events.
    let mut produced: Vec<String> = game.record_lines();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let unreadable = || VerifyError::Unreadable {
            line: n,
            text: line.to_string(),
        };
        let words: Vec<&str> = line.split(' ').collect();
        let seat_of = |w: Option<&&str>| -> Option<usize> {
            match w.copied() {
                Some("1") => Some(0),
                Some("2") => Some(1),
                Some("3") => Some(2),
                _ => None,
            }
        };
        let command = match words[0] {
            "claim" | "assign" | "pass" | "shoujun" | "end" => None,
            "out" => match words.get(2).copied() {
                Some("annihilated") => None,
                Some("resigned") => Some((seat_of(words.get(1)).ok_or_else(unreadable)?, Command::Resign)),
                Some("timeout") => Some((seat_of(words.get(1)).ok_or_else(unreadable)?, Command::Timeout)),
                Some("abandoned") => Some((seat_of(words.get(1)).ok_or_else(unreadable)?, Command::Abandon)),
                _ => return Err(unreadable()),
            },
            "propose" => Some((seat_of(words.get(1)).ok_or_else(unreadable)?, Command::Propose)),
            "accept" => Some((
                seat_of(words.get(1)).ok_or_else(unreadable)?,
                Command::Answer { accept: true },
            )),
            "decline" => Some((
                seat_of(words.get(1)).ok_or_else(unreadable)?,
                Command::Answer { accept: false },
            )),
            action => {
                let text = action.split('=').next().unwrap_or(action);
                let m = parse_move(text).map_err(|_| unreadable())?;
                let seat = game.position().seat_to_move().ok_or_else(|| VerifyError::Refused {
                    line: n,
                    text: line.to_string(),
                    why: "the game is over".into(),
                })?;
                Some((seat, Command::Play(m)))
            }
        };
        if let Some((seat, command)) = command {
            if produced.len() < i {
                // The replay has not written the automatic events the record claims.
                return Err(VerifyError::Mismatch {
                    line: produced.len() + 1,
                    expected: "(nothing)".into(),
                    found: lines[produced.len()].to_string(),
                });
            }
            let events = game
                .apply(Input { seat, command, at: 0 })
                .map_err(|e| VerifyError::Refused {
                    line: n,
                    text: line.to_string(),
                    why: e.to_string(),
                })?;
            produced.extend(events.iter().map(RecordEvent::to_string));
        }
    }
    for (i, line) in lines.iter().enumerate() {
        match produced.get(i) {
            Some(p) if p == *line => {}
            other => {
                return Err(VerifyError::Mismatch {
                    line: i + 1,
                    expected: other.cloned().unwrap_or_else(|| "(nothing)".into()),
                    found: line.to_string(),
                });
            }
        }
    }
    if produced.len() > lines.len() {
        return Err(VerifyError::Mismatch {
            line: lines.len() + 1,
            expected: produced[lines.len()].clone(),
            found: "(nothing)".into(),
        });
    }
    Ok(game)
}

// --- The seat-entropy scheme (R-21) --------------------------------------------------

/// The domain tag of the seat-entropy key.
pub const SEATS_TAG: &str = "sanguo-anqi-seats/1\n";

/// The server's published commitment to its seed: lowercase hex of SHA-256(server_seed).
pub fn server_seed_hash(server_seed: &[u8; 32]) -> String {
    to_hex(&Sha256::digest(server_seed))
}

/// The deal key K = HMAC-SHA-256(key = server_seed, message = `sanguo-anqi-seats/1\n` ‖
/// game_id ‖ `\n` ‖ hex(seed1) ‖ `\n` ‖ hex(seed2) ‖ `\n` ‖ hex(seed3) ‖ `\n`).
pub fn seat_key(server_seed: &[u8; 32], game_id: &str, seat_seeds: &[[u8; 32]; 3]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(server_seed).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
    mac.update(SEATS_TAG.as_bytes());
    mac.update(game_id.as_bytes());
    mac.update(b"\n");
    for s in seat_seeds {
        mac.update(to_hex(s).as_bytes());
        mac.update(b"\n");
    }
    mac.finalize().into_bytes().into()
}

fn hmac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// The deterministic draw stream of the scheme: block n (n = 0, 1, …) is
/// HMAC-SHA-256(K, `layout\n` ‖ n as 8 bytes big-endian); the stream is the blocks
/// concatenated, read 4 bytes at a time as big-endian u32.
#[derive(Clone, Debug)]
pub struct DrawStream {
    key: [u8; 32],
    block: [u8; 32],
    counter: u64,
    used: usize,
}

impl DrawStream {
    /// The stream of key K.
    pub fn new(key: [u8; 32]) -> DrawStream {
        DrawStream {
            key,
            block: [0; 32],
            counter: 0,
            used: 32,
        }
    }

    /// The next u32 of the stream.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 32 {
            self.block = hmac(&self.key, &[b"layout\n", &self.counter.to_be_bytes()]);
            self.counter += 1;
            self.used = 0;
        }
        let b = &self.block[self.used..self.used + 4];
        self.used += 4;
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// A value uniform in `0..=bound` by rejection sampling: with m = bound + 1, draw x
    /// until x < 2³² − (2³² mod m), then return x mod m.
    pub fn draw(&mut self, bound: u32) -> u32 {
        let m = bound as u64 + 1;
        let limit = (1u64 << 32) - (1u64 << 32) % m;
        loop {
            let x = self.next_u32() as u64;
            if x < limit {
                return (x % m) as u32;
            }
        }
    }
}

/// A layout and salt derived from the server seed and the seats' seeds:
/// the layout is [`shuffle`] with draws from [`DrawStream`] of K = [`seat_key`], and the
/// salt is HMAC-SHA-256(K, `salt\n`). The commitment of §10.4 is then computed as usual.
pub fn seat_entropy_deal(server_seed: &[u8; 32], game_id: &str, seat_seeds: &[[u8; 32]; 3]) -> (Layout, [u8; 32]) {
    let key = seat_key(server_seed, game_id, seat_seeds);
    let mut stream = DrawStream::new(key);
    let layout = shuffle(|i| stream.draw(i));
    let salt = hmac(&key, &[b"salt\n"]);
    (layout, salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commitment_test_vector_of_10_4() {
        let salt: [u8; 32] = std::array::from_fn(|i| i as u8);
        let game_id = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";
        let layout = super::super::SAMPLE_LAYOUT;
        assert_eq!(preimage(game_id, layout, &to_hex(&salt)).len(), 149);
        assert_eq!(
            commitment(game_id, layout, &salt),
            "a35cfd40c26e404c87d1541cccdc183ecea1fc70128f2861a9ce725f5d27370c"
        );
    }

    #[test]
    fn the_seat_entropy_test_vector() {
        // docs/ANQI-DEAL.md: server seed 00..1f, seat seeds 20..3f, 40..5f, 60..7f.
        let server: [u8; 32] = std::array::from_fn(|i| i as u8);
        let seeds: [[u8; 32]; 3] = std::array::from_fn(|s| std::array::from_fn(|i| (32 * (s + 1) + i) as u8));
        let game_id = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";
        assert_eq!(
            server_seed_hash(&server),
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
        assert_eq!(
            to_hex(&seat_key(&server, game_id, &seeds)),
            "c0c556062f25ee9e3f6067249e1cacebb528158854ba23a46b4c4701970a167e"
        );
        let (layout, salt) = seat_entropy_deal(&server, game_id, &seeds);
        assert_eq!(layout_text(&layout), "PkePPNnneKprAcCCAPaERpRNcEarpPpp");
        assert_eq!(
            to_hex(&salt),
            "800c06efebd63ea7f5b2c5ccfe8c61196958b8b33c6f625154df19a44452e82e"
        );
        assert_eq!(
            commitment(game_id, &layout_text(&layout), &salt),
            "9ec128c1cfd06cff656a4a67b1a95c96f3e1ff997f750583cb663d60041955aa"
        );
    }

    #[test]
    fn identity_shuffle_and_layout_checks() {
        // draw(i) = i swaps nothing: the canonical full set.
        assert_eq!(layout_text(&shuffle(|i| i)), FULL_SET);
        // draw(i) = 0 rotates.
        let l = shuffle(|_| 0);
        assert!(is_permutation(&l));
        assert!(parse_layout("KAAEERRNNCCPPPPPkaaeerrnnccpppp").is_none(), "31 letters");
        assert!(parse_layout("KKAEERRNNCCPPPPPkaaeerrnnccppppp").is_none(), "two K");
    }

    #[test]
    fn rejection_sampling_is_unbiased_by_construction() {
        let mut s = DrawStream::new([7; 32]);
        for bound in 1..32 {
            for _ in 0..50 {
                assert!(s.draw(bound) <= bound);
            }
        }
    }
}
