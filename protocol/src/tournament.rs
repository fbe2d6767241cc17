//! Tournaments over HTTP: the organizer's settings, registration, rounds,
//! pairings, standings and the arbiter's actions (docs/TOURNAMENTS.md).

use serde::{Deserialize, Serialize};

use crate::{Direction, GameResult, Outcome, Side, TimeControl, Variant};

/// How tables are formed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PairingSystem {
    /// Swiss for tables of three: near scores, no repeated opponents while
    /// avoidable, W/B/Y balanced.
    Swiss,
    /// Groups of `group_size` in which every trio meets once.
    RoundRobin {
        /// Players per group (3 to 8); the last groups may be one smaller.
        group_size: u32,
    },
}

/// Points per result. Integers; the defaults are win 3, draw 1, loss 0.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Scoring {
    /// A win.
    pub win: u32,
    /// A draw.
    pub draw: u32,
    /// A loss.
    pub loss: u32,
    /// A bye (no table this round).
    pub bye: u32,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            win: 3,
            draw: 1,
            loss: 0,
            bye: 1,
        }
    }
}

/// What fills the empty seats when the players do not divide by three.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ByeFill {
    /// The players left over sit out and score `scoring.bye`.
    #[default]
    Points,
    /// The players left over play at tables of one or two people, the
    /// other seats taken by bots of this level (docs/TOURNAMENTS.md).
    Bot {
        /// The bots' level (1 to 3).
        level: u8,
    },
}

/// `POST /api/tournaments`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTournament {
    /// 1 to 80 characters.
    pub name: String,
    /// The game system of every game. Default: `sanguo`.
    #[serde(default)]
    pub variant: Option<Variant>,
    /// The clock of every game (default 10 min + 5 s).
    #[serde(default)]
    pub time_control: Option<TimeControl>,
    /// Default: ccw.
    #[serde(default)]
    pub direction: Option<Direction>,
    /// Swiss: 1 to 30 rounds. Round robin: ignored (the schedule sets it).
    #[serde(default)]
    pub rounds: Option<u32>,
    /// Default: Swiss.
    #[serde(default)]
    pub pairing: Option<PairingSystem>,
    /// Default: win 3, draw 1, loss 0, bye 1.
    #[serde(default)]
    pub scoring: Option<Scoring>,
    /// Default: byes score points.
    #[serde(default)]
    pub byes: Option<ByeFill>,
    /// Registration opens (ms since the epoch; default: now).
    #[serde(default)]
    pub registration_opens_ms: Option<i64>,
    /// Registration closes (default: never; late entry until then).
    #[serde(default)]
    pub registration_closes_ms: Option<i64>,
    /// Round 1 may not start before this (default: any time).
    #[serde(default)]
    pub starts_ms: Option<i64>,
    /// Disconnection grace of the games (default: the server's).
    #[serde(default)]
    pub grace_ms: Option<u64>,
    /// A rated tournament: accounts only, its games rated (a game at a bot
    /// table stays casual). Default: false.
    #[serde(default)]
    pub rated: Option<bool>,
}

/// A tournament's fixed settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TournamentSettings {
    /// The name.
    pub name: String,
    /// The game system of every game (absent in events stored before variants: `sanguo`).
    #[serde(default)]
    pub variant: Variant,
    /// The clock of every game.
    pub time_control: TimeControl,
    /// The direction of play.
    pub direction: Direction,
    /// Rounds planned (round robin: set when round 1 is paired).
    pub rounds: u32,
    /// The pairing system.
    pub pairing: PairingSystem,
    /// Points.
    pub scoring: Scoring,
    /// What byes are.
    pub byes: ByeFill,
    /// Registration opens, ms since the epoch.
    pub registration_opens_ms: i64,
    /// Registration closes, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_closes_ms: Option<i64>,
    /// Round 1 not before, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_ms: Option<i64>,
    /// Disconnection grace of the games, ms.
    pub grace_ms: u64,
    /// A rated tournament: accounts only; its games are rated games (a game
    /// at a bot table stays casual). Absent: casual.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

/// Where a tournament is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TournamentStatus {
    /// Before round 1.
    Registration,
    /// Rounds are played.
    Running,
    /// The last round is over.
    Finished,
}

/// A registered player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Entrant {
    /// Player id.
    pub player: String,
    /// Display name.
    pub name: String,
    /// Registration order, from 1.
    pub seed: u32,
    /// Checked in (only checked-in players are paired).
    pub checked_in: bool,
    /// The round after which the player withdrew (0: before round 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn_after: Option<u32>,
    /// Round robin: the group, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

/// `GET /api/tournaments/{id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tournament {
    /// The id.
    pub id: String,
    /// The organizer's player id.
    pub organizer: String,
    /// The organizer's name.
    pub organizer_name: String,
    /// Settings.
    pub settings: TournamentSettings,
    /// Status.
    pub status: TournamentStatus,
    /// The last round paired (0: none yet).
    pub round: u32,
    /// Whether every game of that round is over (the next may be paired).
    pub round_over: bool,
    /// Registered players.
    pub players: Vec<Entrant>,
    /// The registration code (only shown to the organizer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A table of a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pairing {
    /// Table number, from 1.
    pub table: u32,
    /// The game played there now.
    pub game: String,
    /// Player ids at W, B, Y.
    pub seats: [String; 3],
    /// Names at W, B, Y.
    pub names: [String; 3],
    /// The result once the game is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    /// Games aborted at this table by the arbiter (replaced by `game`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aborted: Vec<String>,
}

/// A player without a table in a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bye {
    /// Player id.
    pub player: String,
    /// Name.
    pub name: String,
    /// Points scored.
    pub points: u32,
}

/// `GET /api/tournaments/{id}/rounds/{n}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Round {
    /// The round, from 1.
    pub round: u32,
    /// Tables.
    pub tables: Vec<Pairing>,
    /// Byes.
    pub byes: Vec<Bye>,
}

/// One line of the standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Standing {
    /// Place, from 1; equal on every tiebreak: the same place.
    pub rank: u32,
    /// Player id.
    pub player: String,
    /// Name.
    pub name: String,
    /// Points.
    pub points: u32,
    /// Tiebreak 1: survival points.
    pub survival: u32,
    /// Tiebreak 2: the points of the opponents met.
    pub opponents: u32,
    /// Tiebreak 3: wins.
    pub wins: u32,
    /// Finished games counted.
    pub games: u32,
    /// Byes.
    pub byes: u32,
    /// Games played at W, B, Y.
    pub seats: [u32; 3],
    /// Withdrawn.
    pub withdrawn: bool,
    /// Round robin: the player's group (from 1), within which `rank` counts;
    /// the rows come group by group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

/// `GET /api/tournaments/{id}/standings`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Standings {
    /// The tournament.
    pub tournament: String,
    /// Rounds whose results are in (finished games; running ones count when they end).
    pub round: u32,
    /// Best first.
    pub standings: Vec<Standing>,
}

/// What an arbiter does to a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArbiterAction {
    /// Stop the clocks (moves are refused until resumed).
    Pause,
    /// Start them again.
    Resume,
    /// Give a side more main time.
    AddTime {
        /// The side.
        side: Side,
        /// Milliseconds (1 to one hour).
        ms: u64,
    },
    /// End the game with these outcomes for W, B, Y.
    Adjudicate {
        /// W, B, Y.
        outcomes: [Outcome; 3],
    },
    /// End the game without result and start a new one at the same table.
    Abort,
}

impl ArbiterAction {
    /// A short name: `pause`, `resume`, `add_time`, `adjudicate`, `abort`.
    pub fn name(&self) -> &'static str {
        match self {
            ArbiterAction::Pause => "pause",
            ArbiterAction::Resume => "resume",
            ArbiterAction::AddTime { .. } => "add_time",
            ArbiterAction::Adjudicate { .. } => "adjudicate",
            ArbiterAction::Abort => "abort",
        }
    }
}

/// `POST /api/tournaments/{id}/games/{game}/arbiter`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ArbiterRequest {
    /// What.
    pub action: ArbiterAction,
    /// Why (1 to 500 characters; logged).
    pub reason: String,
}

/// `PATCH /api/tournaments/{id}` (organizer, before round 1): the settings
/// anew, as at creation, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EditTournament {
    /// The new settings (every field as in `POST /api/tournaments`).
    pub settings: CreateTournament,
    /// Why (1 to 500 characters; logged).
    pub reason: String,
}

/// `POST /api/tournaments/{id}/registration` (organizer): when registration
/// closes — the late-entry control. `closes_ms: null` keeps it open (a Swiss
/// event then takes late entries until it is finished); a time in the past
/// closes it now. A round robin takes no entries once round 1 is paired, so
/// it cannot be reopened then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RegistrationWindow {
    /// When registration closes, ms since the epoch (`null`: open until the end).
    pub closes_ms: Option<i64>,
    /// Why (1 to 500 characters; logged).
    pub reason: String,
}

/// `POST /api/tournaments/{id}/finish`, `DELETE /api/tournaments/{id}`: why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct OrganizerReason {
    /// Why (1 to 500 characters; logged).
    pub reason: String,
}

/// What an organizer did to a tournament as a whole.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OrganizerAction {
    /// Ended it before its last round (its last round paired was over).
    Finish,
    /// Changed its settings before round 1.
    Edit,
    /// Deleted it before round 1.
    Delete,
    /// Closed or reopened registration (late entries).
    Registration,
}

/// A line of the organizer log (`GET /api/tournaments/{id}/organizer-log`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrganizerEntry {
    /// The tournament.
    pub tournament: String,
    /// Who (player id).
    pub by: String,
    /// Who (name).
    pub by_name: String,
    /// What.
    pub action: OrganizerAction,
    /// Why.
    pub reason: String,
    /// When, ms since the epoch.
    pub wall_ms: i64,
}

/// A line of the arbiter log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArbiterEntry {
    /// The game.
    pub game: String,
    /// Who (player id).
    pub by: String,
    /// Who (name).
    pub by_name: String,
    /// What.
    pub action: ArbiterAction,
    /// Why.
    pub reason: String,
    /// When, ms since the epoch.
    pub wall_ms: i64,
    /// Abort: the game that replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<String>,
}

/// `POST /api/tournaments/register`: the code from the organizer's link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Register {
    /// The registration code.
    pub code: String,
}

/// `POST /api/tournaments/{id}/withdraw`: the organizer names the player;
/// a player withdraws itself with an empty body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Withdraw {
    /// The player (organizer only).
    #[serde(default)]
    pub player: Option<String>,
}

/// `GET /api/me/boards`: a tournament game the player sits in, not over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Board {
    /// The tournament.
    pub tournament: String,
    /// Its name.
    pub name: String,
    /// The round.
    pub round: u32,
    /// The table.
    pub table: u32,
    /// The game to go to.
    pub game: String,
    /// The player's seat.
    pub side: Side,
}

/// The answer to an arbiter's action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArbiterOutcome {
    /// The game acted on, after the action.
    pub game: crate::Snapshot,
    /// Abort: the table's new game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<String>,
}
