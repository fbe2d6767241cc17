//! 三国暗棋's own messages (`shared/RULES-ANQI.md`): the settings a game of it
//! is created with ([`AnqiOptions`], in [`crate::GameSettings`]`.anqi`) and the
//! block it adds to every status ([`AnqiStatus`], in [`crate::Status`]`.anqi`).
//!
//! Everything here is public: a status carries no face-down identity. The
//! layout and salt appear only once the game is over (finished or aborted),
//! with the full record, so that anyone can verify the deal (RULES-ANQI §10.5).

use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};

use crate::Side;

/// The race target when none is set (§8.4, R-17).
pub const DEFAULT_TARGET: u32 = 200;
/// The no-progress limit in rounds when none is set (§8.5, R-14).
pub const DEFAULT_NO_PROGRESS_ROUNDS: u32 = 30;
/// The no-progress limits a game may set (§8).
pub const NO_PROGRESS_ROUNDS: RangeInclusive<u32> = 10..=100;
/// The largest race target a game may set (every piece of the set is worth 1,060, or 1,380 enhanced).
pub const MAX_TARGET: u32 = 2_000;

/// How the game is won (§8).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// 全灭: play until one seat is left or a deadlock (the default).
    #[default]
    Annihilation,
    /// 收军 (§8.3): a seat that captured as many pieces as its team's size recovers its army.
    Shoujun,
    /// 先得 N 分 (§8.4): the first seat to capture `target` points wins.
    Race,
}

/// How live seats are ordered at a deadlock (§8.5).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AnqiScoring))]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// 得失分: team total − lost + captured (the default).
    #[default]
    Net,
    /// 残存分: the value of the team's pieces on the board.
    RemainingPoints,
    /// 残存数: the number of the team's pieces on the board.
    RemainingCount,
}

/// 三国暗棋's settings in [`crate::GameSettings`]: mode, scoring and the §9
/// options; every field optional (absent: the default). Checked by
/// [`AnqiOptions::check`] when the game is created.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AnqiOptions {
    /// The mode (default `annihilation`).
    #[serde(default)]
    pub mode: Mode,
    /// The race target N (mode `race` only; default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// The deadlock scoring (default `net`).
    #[serde(default)]
    pub scoring: Scoring,
    /// The no-progress limit in rounds, 10–100 (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_progress_rounds: Option<u32>,
    /// The second team split (§9.1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split2: bool,
    /// 强化将士象 (§9.3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enhanced: bool,
    /// 二连: two actions a turn from turn 4 (§9.4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub double: bool,
    /// 翻吃: with `double`, the second action may capture the piece the first revealed (R-19).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fanchi: bool,
    /// With `double`, horse legs and elephant eyes block as in xiangqi (R-22).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub xqlegs: bool,
    /// Assigned teams (§9.2): the team (1–3) of seats W, B, Y, each once; flips then never claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<[u8; 3]>,
    /// Keep the seats as the players took them (default: the server draws the
    /// seating at random when the table is full, §3 R-2).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixed_seats: bool,
}

impl AnqiOptions {
    /// Why these options cannot make a game, in words (`None`: they can).
    pub fn check(&self) -> Result<(), String> {
        if let Some(n) = self.target {
            if self.mode != Mode::Race {
                return Err("a target is set only in mode race".to_owned());
            }
            if !(1..=MAX_TARGET).contains(&n) {
                return Err(format!("the race target must be 1 to {MAX_TARGET} points, not {n}"));
            }
        }
        if let Some(n) = self.no_progress_rounds {
            if !NO_PROGRESS_ROUNDS.contains(&n) {
                return Err(format!(
                    "the no-progress limit must be {} to {} rounds, not {n}",
                    NO_PROGRESS_ROUNDS.start(),
                    NO_PROGRESS_ROUNDS.end()
                ));
            }
        }
        if (self.fanchi || self.xqlegs) && !self.double {
            return Err("fanchi and xqlegs are options of double (二连)".to_owned());
        }
        if let Some(t) = self.teams {
            let mut sorted = t;
            sorted.sort_unstable();
            if sorted != [1, 2, 3] {
                return Err(format!(
                    "assigned teams give each of teams 1, 2, 3 to one seat, not {t:?}"
                ));
            }
        }
        Ok(())
    }

    /// The race target (mode `race`), default applied.
    pub fn race_target(&self) -> Option<u32> {
        (self.mode == Mode::Race).then(|| self.target.unwrap_or(DEFAULT_TARGET))
    }

    /// The no-progress limit in rounds, default applied.
    pub fn rounds(&self) -> u32 {
        self.no_progress_rounds.unwrap_or(DEFAULT_NO_PROGRESS_ROUNDS)
    }
}

/// Why a 三国暗棋 game ended with a placing (§11.5; an abort is
/// [`crate::Ending::Aborted`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// At most one seat is live.
    LastSeat,
    /// 收军 left at most one seat live.
    Shoujun,
    /// A seat reached the race target.
    Race,
    /// The no-progress limit (deadlock scoring).
    NoProgress,
    /// No live seat has a legal action (deadlock scoring).
    NoAction,
    /// Every live seat accepted a scoring proposal (deadlock scoring).
    Agreement,
}

/// A pending scoring proposal (申请计分, §8.5 R-15).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Proposal {
    /// The seat that proposed.
    pub by: Side,
    /// The seats that accepted so far (the proposer included).
    pub accepted: Vec<Side>,
}

/// 三国暗棋's block of [`crate::Status`]: public by construction (the room
/// never puts a face-down identity here). Arrays are seats W, B, Y (1, 2, 3).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnqiStatus {
    /// The team (1–3) each seat holds, or `null` while it has none.
    pub teams: [Option<u8>; 3],
    /// The identities each seat captured, canonical order (`K A E R N C P k a e r n c p`).
    pub captured: [Vec<String>; 3],
    /// The points each seat captured (§8.4).
    pub captured_points: [u32; 3],
    /// Each seat's score by the mode now: its deadlock score (§8.5), or its
    /// captured points in `race`.
    pub scores: [u32; 3],
    /// Face-down pieces on the board.
    pub hidden: u32,
    /// The §10.4 commitment to the layout and salt, announced when turn 1
    /// begins (absent before the deal of a seat-entropy game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitment: Option<String>,
    /// The seat-entropy deal (docs/ANQI-DEAL.md §4): `hex(SHA256(server_seed))`,
    /// 64 lowercase hex digits, published from the game's creation. Absent in a
    /// game dealt by the plain deal (games stored before the scheme).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_hash: Option<String>,
    /// The seat-entropy deal: the seed each seat (W, B, Y) contributed, 64
    /// lowercase hex digits, published as it arrives; `null` while a seat has
    /// sent none (it counts as 32 zero bytes at the deal). Absent with the plain deal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<[Option<String>; 3]>,
    /// Once the game is over (seat-entropy deal): the server seed, 64 lowercase hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_seed: Option<String>,
    /// The mode.
    pub mode: Mode,
    /// The race target (mode `race`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// The deadlock scoring.
    pub scoring: Scoring,
    /// Completed turns in a row without a flip, capture or stop (§8.5).
    pub no_progress: u32,
    /// The turns without progress that end the game now (rounds × live seats).
    pub no_progress_limit: u32,
    /// Scoring proposals each seat may still make (3 per game).
    pub proposals_left: [u8; 3],
    /// The pending scoring proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
    /// Once the game is over (finished or aborted): the layout (§10.3), 32 letters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Once the game is over: the salt, 64 lowercase hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt: Option<String>,
    /// Once the game is over: the full record (§11.5 lines, `+b2=R`, `claim 1 2`, …, `end …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_with_clear_words() {
        let ok = |o: AnqiOptions| o.check().is_ok();
        assert!(ok(AnqiOptions::default()));
        let race = |t| AnqiOptions {
            mode: Mode::Race,
            target: Some(t),
            ..AnqiOptions::default()
        };
        assert!(ok(race(60)));
        for (o, words) in [
            (race(0), "race target"),
            (
                AnqiOptions {
                    target: Some(100),
                    ..AnqiOptions::default()
                },
                "only in mode race",
            ),
            (
                AnqiOptions {
                    no_progress_rounds: Some(9),
                    ..AnqiOptions::default()
                },
                "no-progress limit",
            ),
            (
                AnqiOptions {
                    fanchi: true,
                    ..AnqiOptions::default()
                },
                "options of double",
            ),
            (
                AnqiOptions {
                    teams: Some([1, 1, 3]),
                    ..AnqiOptions::default()
                },
                "assigned teams",
            ),
        ] {
            let e = o.check().unwrap_err();
            assert!(e.contains(words), "{e}");
        }
    }

    #[test]
    fn defaults_are_absent_on_the_wire_and_unknown_fields_refused() {
        assert_eq!(
            serde_json::to_string(&AnqiOptions::default()).unwrap(),
            r#"{"mode":"annihilation","scoring":"net"}"#
        );
        let o: AnqiOptions = serde_json::from_str(r#"{"mode":"race","target":60,"double":true}"#).unwrap();
        assert_eq!(o.race_target(), Some(60));
        assert_eq!(o.rounds(), 30);
        assert!(serde_json::from_str::<AnqiOptions>(r#"{"mode":"race","tagret":60}"#).is_err());
        assert!(serde_json::from_str::<AnqiOptions>(r#"{"mode":"blitz"}"#).is_err());
    }
}
