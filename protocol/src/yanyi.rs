//! 三国演弈棋 (variant `yanyi`, `shared/RULES-YANYI.md`) on the wire: the
//! `yanyi` block of [`crate::Status`] and the seat ↔ player mapping.
//!
//! Seats stay `W`, `B`, `Y` in every variant: here W = 吴 (G, moves first),
//! B = 魏 (B), Y = 蜀 (R) — the G → B → R cycle of RULES-YANYI §1. Positions
//! and moves travel in the engine's notation (§10: `q12-o13`, the four-field
//! position text, whose colour letters are G, B, R and Y = the 汉 force).
//!
//! A game's record lines that are neither moves nor eliminations arrive as
//! `noted` events (protocol/README.md, 三国演弈棋) whose text is one of
//! [`noted_alliance`], [`noted_han`], [`noted_emperor_killed`],
//! [`noted_absorbed`].

use std::collections::BTreeMap;

use engine::yanyi::{Player, TurnReason as EngineTurnReason};
use serde::{Deserialize, Serialize};

use crate::Side;

/// The seat of a player: G → `W`, B → `B`, R → `Y`.
pub fn seat(p: Player) -> Side {
    Side::ALL[p.index()]
}

/// The player of a seat: `W` → G (吴), `B` → B (魏), `Y` → R (蜀).
pub fn player(s: Side) -> Player {
    Player::from_index(s.index())
}

/// Seats of a set of players, in seat order.
pub fn seats(ps: engine::yanyi::Players) -> Vec<Side> {
    ps.iter().map(seat).collect()
}

/// Why the seat to move is the one it is (RULES-YANYI §7.1 step 6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TurnReason {
    /// Nobody has moved yet: 吴 (or the position's side to move) begins.
    Start,
    /// The next live player after the last mover in the cycle 吴 → 魏 → 蜀
    /// (nobody, or two players, in check).
    Cycle,
    /// 被将先走: the only player other than the last mover in check moves first.
    Check,
    /// Two players are left: the other one.
    Other,
    /// The game is over.
    Over,
}

impl From<EngineTurnReason> for TurnReason {
    fn from(r: EngineTurnReason) -> Self {
        match r {
            EngineTurnReason::Check => TurnReason::Check,
            EngineTurnReason::Cycle => TurnReason::Cycle,
            EngineTurnReason::Other => TurnReason::Other,
            EngineTurnReason::Over => TurnReason::Over,
        }
    }
}

/// The 汉 force (§6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum HanState {
    /// It stands still, belongs to nobody and cannot be taken (the emperor: by a horse only).
    Static,
    /// An alliance activated it: its chariots and cannon went to `holder`, the
    /// player left out of the alliance; the emperor left the board.
    AlliedTo {
        /// Who received the chariots and cannon.
        holder: Side,
    },
    /// `holder`'s horse killed the emperor (杀汉) and took the chariots and cannon.
    Killed {
        /// The killer.
        holder: Side,
    },
}

/// One absorption (兵力收编, §8): the first eliminated player's pieces changed owner.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Absorption {
    /// Whose pieces.
    pub absorbed: Side,
    /// Who took them.
    pub by: Side,
}

/// The `yanyi` block of a 三国演弈棋 game's [`crate::Status`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct YanyiStatus {
    /// Why `turn` is to move: `start`, `cycle`, `check` (被将先走), `other`, `over`.
    pub turn_reason: TurnReason,
    /// The last seat that moved (absent before the first move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_mover: Option<Side>,
    /// The allied pair, in cycle order (absent: no alliance now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alliance: Option<[Side; 2]>,
    /// The 汉 force.
    pub han: HanState,
    /// Absorptions so far (at most one: only the first elimination absorbs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absorptions: Vec<Absorption>,
    /// Seats that have not made their first move yet (the first-move cannon
    /// rule applies to them; a seat leaving while this is not empty aborts the game).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_move_pending: Vec<Side>,
    /// Pieces held by another owner than the one they started with (activated
    /// 汉 pieces, absorbed pieces): point → the first owner's colour letter
    /// (`G`, `B`, `R`, or `Y` for the 汉 force). The position text writes
    /// them in their holder's colour.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub held: BTreeMap<String, String>,
    /// Plies since the last capture, alliance, 杀汉 or elimination (§9 no progress).
    pub plies_without_progress: u32,
    /// The plies without progress that draw, in the current phase (150, or 100 with two players).
    pub no_progress_limit: u32,
    /// Moves in a row by seat `[by]` that gave check to seat `[on]` (§9 perpetual check).
    pub consecutive_checks: [[u32; 3]; 3],
    /// The number of consecutive checks on one player that loses, in the current phase (8, or 6).
    pub perpetual_check_limit: u32,
}

/// The `noted` text of an alliance: `alliance W B` (seats in cycle order).
pub fn noted_alliance(a: Side, b: Side) -> String {
    format!("alliance {a} {b}")
}

/// The `noted` text of the 汉 force activated for a seat by an alliance: `han Y`.
pub fn noted_han(holder: Side) -> String {
    format!("han {holder}")
}

/// The `noted` text of 杀汉: `emperor_killed W` (the killer takes the force).
pub fn noted_emperor_killed(killer: Side) -> String {
    format!("emperor_killed {killer}")
}

/// The `noted` text of an absorption: `absorbed B W` (B's pieces go to W).
pub fn noted_absorbed(absorbed: Side, by: Side) -> String {
    format!("absorbed {absorbed} {by}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_the_cycle() {
        assert_eq!(seat(Player::G), Side::W);
        assert_eq!(seat(Player::B), Side::B);
        assert_eq!(seat(Player::R), Side::Y);
        for s in Side::ALL {
            assert_eq!(seat(player(s)), s);
        }
    }

    #[test]
    fn status_json_omits_what_is_empty() {
        let st = YanyiStatus {
            turn_reason: TurnReason::Check,
            last_mover: Some(Side::Y),
            alliance: None,
            han: HanState::Static,
            absorptions: Vec::new(),
            first_move_pending: vec![Side::W],
            held: BTreeMap::new(),
            plies_without_progress: 3,
            no_progress_limit: 150,
            consecutive_checks: [[0; 3]; 3],
            perpetual_check_limit: 8,
        };
        let j = serde_json::to_value(&st).unwrap();
        assert_eq!(j["turn_reason"], "check");
        assert_eq!(j["han"], serde_json::json!({"state": "static"}));
        assert!(j.get("alliance").is_none() && j.get("held").is_none());
        let back: YanyiStatus = serde_json::from_value(j).unwrap();
        assert_eq!(back, st);
        let h = serde_json::to_value(HanState::AlliedTo { holder: Side::B }).unwrap();
        assert_eq!(h, serde_json::json!({"state": "allied_to", "holder": "B"}));
    }
}
