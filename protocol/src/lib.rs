//! The messages between the Sanguo game server and its clients (browser,
//! tests, tools), as JSON with a `type` tag. `protocol/README.md` shows an
//! example of every message.
//!
//! Engine types never cross the wire: moves, points and positions travel as
//! the engine's notation (RULES §7), and this crate converts.
//!
//! Every game event a client may see carries the game's version `v`, which
//! grows by one per event, gap-free for every viewer: an event a viewer may
//! not see (the other channel's chat) still reaches it as a bare `{type:
//! "event", v}`. A client that (re)connects says the last `v` it holds and
//! receives exactly what it missed, or a snapshot when that is no longer kept.

use std::fmt;

use serde::{Deserialize, Serialize};

pub mod anqi;
mod client_json;
mod event_json;
mod move_texts;
pub mod players;
pub mod tournament;
pub mod yanyi;

/// The protocol version. A client says which one it speaks in `hello`; the
/// server refuses any other with `unsupported_protocol`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest text frame a client may send (bytes). Larger frames get
/// `frame_too_large` and are ignored.
pub const MAX_FRAME_BYTES: usize = 8 * 1024;

/// The longest chat line (characters).
pub const MAX_CHAT_CHARS: usize = 500;

// ---------------------------------------------------------------------------
// Small value types
// ---------------------------------------------------------------------------

/// A side: `"W"`, `"B"` or `"Y"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Side {
    /// 魏, white.
    W,
    /// 蜀, black.
    B,
    /// 吴, yellow.
    Y,
}

impl Side {
    /// The three sides in index order.
    pub const ALL: [Side; 3] = [Side::W, Side::B, Side::Y];

    /// The index (W = 0, B = 1, Y = 2).
    pub fn index(self) -> usize {
        engine::Side::from(self).index()
    }

    /// The letter, as in notation.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::W => "W",
            Side::B => "B",
            Side::Y => "Y",
        }
    }

    /// Parses `W`, `B` or `Y`.
    pub fn parse(s: &str) -> Option<Side> {
        match s {
            "W" => Some(Side::W),
            "B" => Some(Side::B),
            "Y" => Some(Side::Y),
            _ => None,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<engine::Side> for Side {
    fn from(s: engine::Side) -> Side {
        match s {
            engine::Side::W => Side::W,
            engine::Side::B => Side::B,
            engine::Side::Y => Side::Y,
        }
    }
}

impl From<Side> for engine::Side {
    fn from(s: Side) -> engine::Side {
        match s {
            Side::W => engine::Side::W,
            Side::B => engine::Side::B,
            Side::Y => engine::Side::Y,
        }
    }
}

/// Sides in index order, e.g. `["B", "Y"]`.
pub fn sides(s: engine::Sides) -> Vec<Side> {
    s.iter().map(Side::from).collect()
}

pub use client_json::client_msg;
/// A game system, on the wire by its key: `"sanguo"` (三国象棋, the default;
/// settings without the field are sanguo games), and the variants added since.
pub use engine::Variant;
pub use event_json::event_json;
pub use move_texts::{MoveTexts, TextPiece};

/// The direction of play: `"ccw"` (W → B → Y, the default) or `"cw"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// W → B → Y → W.
    #[default]
    Ccw,
    /// W → Y → B → W.
    Cw,
}

impl Direction {
    /// `ccw` or `cw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Ccw => "ccw",
            Direction::Cw => "cw",
        }
    }

    /// Parses `ccw` or `cw`.
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "ccw" => Some(Direction::Ccw),
            "cw" => Some(Direction::Cw),
            _ => None,
        }
    }
}

impl From<Direction> for engine::Direction {
    fn from(d: Direction) -> engine::Direction {
        match d {
            Direction::Ccw => engine::Direction::Ccw,
            Direction::Cw => engine::Direction::Cw,
        }
    }
}

impl From<engine::Direction> for Direction {
    fn from(d: engine::Direction) -> Direction {
        match d {
            engine::Direction::Ccw => Direction::Ccw,
            engine::Direction::Cw => Direction::Cw,
        }
    }
}

/// Byo-yomi (读秒): periods after main time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Byoyomi {
    /// Number of periods.
    pub periods: u32,
    /// Length of each period, ms.
    pub period_ms: u64,
}

/// A time control: base time + Fischer increment, an optional per-move limit
/// (步时) and optional byo-yomi (读秒).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TimeControl {
    /// Main time per side (局时), ms.
    pub base_ms: u64,
    /// Added after each move made within main time, ms.
    #[serde(default)]
    pub increment_ms: u64,
    /// Limit for any single move, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_move_ms: Option<u64>,
    /// Periods after main time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byoyomi: Option<Byoyomi>,
}

impl Default for TimeControl {
    /// 10 minutes + 5 seconds.
    fn default() -> Self {
        TimeControl {
            base_ms: 600_000,
            increment_ms: 5_000,
            per_move_ms: None,
            byoyomi: None,
        }
    }
}

impl From<TimeControl> for engine::clock::TimeControl {
    fn from(t: TimeControl) -> Self {
        engine::clock::TimeControl {
            base_ms: t.base_ms,
            increment_ms: t.increment_ms,
            per_move_ms: t.per_move_ms,
            byoyomi: t.byoyomi.map(|b| engine::clock::Byoyomi {
                periods: b.periods,
                period_ms: b.period_ms,
            }),
        }
    }
}

/// One side's clock as the server sees it when it sends the message.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Clock {
    /// Main time left, ms.
    pub remaining_ms: u64,
    /// Byo-yomi periods left.
    pub periods_left: u32,
    /// Time left in the current byo-yomi period, when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_left_ms: Option<u64>,
    /// Time left for this move under the per-move limit, when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_left_ms: Option<u64>,
    /// Whether this clock is running.
    pub running: bool,
    /// Whether main time is spent.
    pub in_byoyomi: bool,
}

impl From<engine::clock::ClockView> for Clock {
    fn from(c: engine::clock::ClockView) -> Clock {
        Clock {
            remaining_ms: c.remaining_ms,
            periods_left: c.periods_left,
            period_left_ms: c.period_left_ms,
            move_left_ms: c.move_left_ms,
            running: c.running,
            in_byoyomi: c.in_byoyomi,
        }
    }
}

/// The counters of RULES §6. Pair tables are indexed `[by][on]` with side
/// indices W = 0, B = 1, Y = 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Counters {
    /// Plies since the last capture or check.
    pub plies_without_progress: u32,
    /// Plies played in phase 2 (two sides left).
    pub phase2_plies: u32,
    /// Consecutive checks by one side on another.
    pub consecutive_checks: [[u32; 3]; 3],
    /// Checks in all by one side on another.
    pub cumulative_checks: [[u32; 3]; 3],
    /// Warnings for premature requests, per side.
    pub warnings: [u8; 3],
    /// Draw offers made, per side.
    pub draw_offers_made: [u8; 3],
}

/// The §6 limits a game is played under (so that a client can say how near a counter is to its
/// limit without knowing the rules). Index 0 is phase 3 (three sides), index 1 phase 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Limits {
    /// Completed rounds before resigning or offering a draw is allowed.
    pub min_rounds_for_requests: u32,
    /// Draw offers per side over the whole game.
    pub draw_offers_per_side: u8,
    /// Plies without capture or check that draw the game.
    pub no_progress_plies: [u32; 2],
    /// Plies of phase 2 that draw the game.
    pub phase2_plies: u32,
    /// Consecutive checks by one side on another that are allowed.
    pub consecutive_checks: [u32; 2],
    /// Checks in all by one side on another that lose (phase 3) or draw (phase 2).
    pub cumulative_checks: [u32; 2],
    /// How often the same checking position may be repeated by a side.
    pub repetitions: u32,
    /// Completed rounds before which abandonment aborts the game.
    pub abort_rounds: u32,
}

impl From<&engine::Limits> for Limits {
    fn from(l: &engine::Limits) -> Self {
        Limits {
            min_rounds_for_requests: l.min_rounds_for_requests,
            draw_offers_per_side: l.draw_offers_per_side,
            no_progress_plies: l.no_progress_plies,
            phase2_plies: l.phase2_plies,
            consecutive_checks: l.consecutive_checks,
            cumulative_checks: l.cumulative_checks,
            repetitions: l.repetitions,
            abort_rounds: l.abort_rounds,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from(&engine::Limits::default())
    }
}

impl Counters {
    /// The counters of a game.
    pub fn of(game: &engine::Game) -> Counters {
        let pair = |f: &dyn Fn(engine::Side, engine::Side) -> u32| {
            engine::Side::ALL.map(|by| engine::Side::ALL.map(|on| if by == on { 0 } else { f(by, on) }))
        };
        Counters {
            plies_without_progress: game.plies_without_progress(),
            phase2_plies: game.phase2_plies(),
            consecutive_checks: pair(&|a, b| game.consecutive_checks(a, b)),
            cumulative_checks: pair(&|a, b| game.cumulative_checks(a, b)),
            warnings: engine::Side::ALL.map(|s| game.warnings(s)),
            draw_offers_made: engine::Side::ALL.map(|s| game.draw_offers_made(s)),
        }
    }
}

/// A pending draw offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PendingOffer {
    /// Who offered.
    pub by: Side,
    /// Who has yet to answer.
    pub waiting: Vec<Side>,
}

/// Where a game is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for three players.
    Open,
    /// Being played.
    Live,
    /// Over (a result, or aborted).
    Finished,
}

impl Phase {
    /// `open`, `live` or `finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Open => "open",
            Phase::Live => "live",
            Phase::Finished => "finished",
        }
    }

    /// Parses `open`, `live` or `finished`.
    pub fn parse(s: &str) -> Option<Phase> {
        match s {
            "open" => Some(Phase::Open),
            "live" => Some(Phase::Live),
            "finished" => Some(Phase::Finished),
            _ => None,
        }
    }
}

/// The state of play after an event: what a client needs to draw the board
/// and let the side to move pick a move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Status {
    /// The position (RULES §7 text).
    pub position: String,
    /// Whose turn it is.
    pub turn: Side,
    /// Live sides in turn order from W.
    pub live: Vec<Side>,
    /// Moves played so far; a move message must carry this number.
    pub ply: u32,
    /// Completed rounds (§6).
    pub round: u32,
    /// The side to move's legal moves, canonical order (empty when the game is not live).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub legal_moves: MoveTexts,
    /// Clocks of W, B, Y.
    pub clocks: [Clock; 3],
    /// The §6 counters (三国象棋 only; absent in the other variants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Counters>,
    /// The live sides whose king is in check now (empty: none), so that a
    /// snapshot shows a check as the move event did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_check: Vec<Side>,
    /// The pending draw offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_offer: Option<PendingOffer>,
    /// An arbiter stopped the clocks; moves wait until they run again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// 三国暗棋's own state of play (absent in the other variants). Boxed,
    /// as 三国演弈棋's: each is several hundred bytes, and every status of
    /// every variant (a room keeps its last events', each with its status)
    /// would otherwise carry the room for both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anqi: Option<Box<anqi::AnqiStatus>>,
    /// 三国演弈棋's own state of play (absent in the other variants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yanyi: Option<Box<yanyi::YanyiStatus>>,
}

/// Why a side left the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EliminationReason {
    /// 将死.
    Mate,
    /// 困毙.
    Stalemate,
    /// 猝死: king captured.
    SuddenDeath,
    /// Resigned.
    Resign,
    /// Clock ran out.
    Time,
    /// Disconnected past the grace period.
    Abandon,
    /// Too many consecutive checks.
    PerpetualCheck,
    /// Too many checks in all.
    CumulativeChecks,
    /// The same checking position too often.
    Repetition,
    /// A second request before round 15.
    PrematureRequest,
    /// Offered or accepted a draw another side declined.
    DrawOfferRule,
    /// 三国暗棋 全灭: no piece of its team is left on the board.
    Annihilated,
    /// 三国暗棋 收军: it recovered its army (a finish, not a loss).
    Recovered,
    /// 见面 (三国演弈棋): its king faced another after a third player's move.
    Facing,
}

impl From<engine::EliminationReason> for EliminationReason {
    fn from(r: engine::EliminationReason) -> Self {
        use engine::EliminationReason as E;
        match r {
            E::Mate => Self::Mate,
            E::Stalemate => Self::Stalemate,
            E::SuddenDeath => Self::SuddenDeath,
            E::Resign => Self::Resign,
            E::Time => Self::Time,
            E::Abandon => Self::Abandon,
            E::PerpetualCheck => Self::PerpetualCheck,
            E::CumulativeChecks => Self::CumulativeChecks,
            E::Repetition => Self::Repetition,
            E::PrematureRequest => Self::PrematureRequest,
            E::DrawOfferRule => Self::DrawOfferRule,
        }
    }
}

/// A side's elimination.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Departure {
    /// Who left.
    pub side: Side,
    /// Why.
    pub reason: EliminationReason,
    /// After how many moves of the game.
    pub ply: u32,
    /// Who absorbed its pieces (三国演弈棋's 兵力收编, on the first elimination
    /// on the board); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absorbed_by: Option<Side>,
}

impl From<engine::game::Departure> for Departure {
    fn from(d: engine::game::Departure) -> Self {
        Departure {
            side: d.side.into(),
            reason: d.reason.into(),
            ply: d.ply,
            absorbed_by: None,
        }
    }
}

/// Why a game was drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DrawReason {
    /// Every live side accepted.
    Agreement,
    /// No capture and no check for too long.
    NoProgress,
    /// Phase 2 went on too long.
    Length,
    /// Too many checks in phase 2.
    CumulativeChecks,
    /// 三国演弈棋: a position occurred for the third time without a single perpetual checker.
    Repetition,
    /// 三国演弈棋: no live player owns a chariot, horse, cannon or soldier.
    DeadPosition,
}

/// How a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// One side is left and wins.
    LastStanding {
        /// The winner.
        winner: Side,
    },
    /// A draw by a §6 rule.
    Draw {
        /// Which rule.
        reason: DrawReason,
    },
    /// The draw-offer rule: offerer and accepter lose, the decliner wins.
    DrawOfferRule {
        /// The decliner.
        winner: Side,
    },
    /// Abandoned before 3 completed rounds: no result.
    Aborted {
        /// Who left.
        by: Side,
    },
    /// A tournament arbiter decided the outcomes (`outcomes`) of an unfinished game.
    Adjudicated,
    /// A tournament arbiter aborted the game: no result (the table plays a new game).
    Annulled,
    /// 三国暗棋: the game ended with a placing (`placing`, `scores`), for this reason.
    Anqi {
        /// Why (RULES-ANQI §11.5).
        reason: anqi::EndReason,
    },
}

/// A side's result.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Won.
    Win,
    /// Drew.
    Draw,
    /// Lost.
    Loss,
}

/// The final result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameResult {
    /// How it ended.
    pub ending: Ending,
    /// Each side's outcome, W, B, Y (`null` for all when aborted).
    pub outcomes: [Option<Outcome>; 3],
    /// Eliminations in order.
    pub eliminations: Vec<Departure>,
    /// An aborted game (`aborted`): every side that had not come — its
    /// disconnection grace over — when the game was aborted, `by` first.
    /// Absent when only `by` was missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_shows: Vec<Side>,
    /// Each seat's place, W, B, Y (1 = first; equal places share a number),
    /// in variants that rank the players (absent in 三国象棋).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placing: Option<[u8; 3]>,
    /// Each seat's score, W, B, Y, in variants that score (absent in 三国象棋).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<[u32; 3]>,
}

impl From<&engine::GameResult> for GameResult {
    fn from(r: &engine::GameResult) -> Self {
        use engine::game::{DrawReason as D, Ending as E};
        let ending = match r.ending {
            E::LastStanding(w) => Ending::LastStanding { winner: w.into() },
            E::Draw(d) => Ending::Draw {
                reason: match d {
                    D::Agreement => DrawReason::Agreement,
                    D::NoProgress => DrawReason::NoProgress,
                    D::Length => DrawReason::Length,
                    D::CumulativeChecks => DrawReason::CumulativeChecks,
                },
            },
            E::DrawOfferRule { winner } => Ending::DrawOfferRule { winner: winner.into() },
            E::Aborted { by } => Ending::Aborted { by: by.into() },
        };
        let outcome = |o: Option<engine::Outcome>| {
            o.map(|o| match o {
                engine::Outcome::Win => Outcome::Win,
                engine::Outcome::Draw => Outcome::Draw,
                engine::Outcome::Loss => Outcome::Loss,
            })
        };
        GameResult {
            ending,
            outcomes: r.outcomes.map(outcome),
            eliminations: r.eliminations.iter().map(|&d| d.into()).collect(),
            no_shows: Vec::new(),
            placing: None,
            scores: None,
        }
    }
}

/// `POST /api/games/{id}/explain`: a move the client would refuse (not in
/// `status.legal_moves`), to learn why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ExplainMove {
    /// The move (`W24-Y82`).
    pub mv: String,
}

/// Why the engine refuses a move, as a code a client translates, with its
/// parameters: points (`W24`), pieces (`WC`: side and piece letter), sides
/// (`W`), counts; `message` is the engine's English sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Refusal {
    /// `game_over`, `no_piece`, `not_your_piece`, `own_piece`, `not_this_pieces_move`,
    /// `eye_blocked`, `eye_not_grid`, `leg_blocked`, `path_blocked`, `cannon_screen`,
    /// `outside_region`, `no_retaliation_right`, `no_king_capture_this_turn`,
    /// `king_attacked`, `kings_face`.
    pub code: String,
    /// The parameters of the sentence (see protocol/README.md, "Explain").
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, String>,
    /// The engine's explanation in English.
    pub message: String,
}

/// The answer to [`ExplainMove`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Explanation {
    /// The move asked about.
    pub mv: String,
    /// Whether it is legal now (then there is no refusal).
    pub legal: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
}

impl From<&engine::IllegalMove> for Refusal {
    fn from(m: &engine::IllegalMove) -> Refusal {
        use engine::explain::{Attack, Reason as R};
        let side = |s: engine::Side| s.letter().to_string();
        let piece = |p: engine::Piece| p.to_string();
        let (code, params): (&str, Vec<(&str, String)>) = match &m.reason {
            R::GameOver => ("game_over", vec![]),
            R::NoPiece(p) => ("no_piece", vec![("point", p.to_string())]),
            R::NotYourPiece { piece: pc, turn } => (
                "not_your_piece",
                vec![("piece", piece(*pc)), ("owner", side(pc.side)), ("turn", side(*turn))],
            ),
            R::OwnPiece(pc) => ("own_piece", vec![("piece", piece(*pc))]),
            R::NotThisPiecesMove(pc) => ("not_this_pieces_move", vec![("piece", piece(*pc))]),
            R::EyeBlocked(p) => ("eye_blocked", vec![("point", p.to_string())]),
            R::EyeNotGrid(p) => ("eye_not_grid", vec![("point", p.to_string())]),
            R::LegBlocked(p) => ("leg_blocked", vec![("point", p.to_string())]),
            R::PathBlocked(p) => ("path_blocked", vec![("point", p.to_string())]),
            R::CannonScreen(n) => ("cannon_screen", vec![("count", n.to_string())]),
            R::OutsideRegion { piece: pc, rule } => {
                // The engine words its region rules; a client translates them by key.
                let key = [
                    ("a king stays", "king_palace"),
                    ("a consort stays", "consort_palace"),
                    ("an advisor stays", "advisor_palace"),
                    ("while three sides play, an elephant", "elephant_own"),
                    ("an elephant may go", "elephant_phase2"),
                    ("a soldier never enters", "soldier_zone"),
                    ("inside its own zone", "soldier_forward"),
                    ("a soldier never passes", "soldier_through"),
                ]
                .into_iter()
                .find(|(prefix, _)| rule.starts_with(prefix))
                .map_or("other", |(_, k)| k);
                ("outside_region", vec![("piece", piece(*pc)), ("rule", key.to_owned())])
            }
            R::NoRetaliationRight { mover, upstream } => (
                "no_retaliation_right",
                vec![("mover", side(*mover)), ("upstream", side(*upstream))],
            ),
            R::NoKingCaptureThisTurn => ("no_king_capture_this_turn", vec![]),
            R::KingAttacked { by, why } => (
                "king_attacked",
                vec![
                    ("by", side(*by)),
                    (
                        "why",
                        match why {
                            Attack::Upstream => "upstream",
                            Attack::Provoked => "provoked",
                            Attack::Standing => "standing",
                        }
                        .to_owned(),
                    ),
                ],
            ),
            R::KingsFace(s) => ("kings_face", vec![("side", side(*s))]),
        };
        Refusal {
            code: code.to_owned(),
            params: params.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            message: m.reason.to_string(),
        }
    }
}

/// What a premature request asked.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// A resignation.
    Resign,
    /// A draw offer.
    Draw,
}

/// A chat channel of a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// The seated players (can be switched off per game).
    Players,
    /// Everyone watching.
    Spectators,
}

impl Channel {
    /// `players` or `spectators`.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Players => "players",
            Channel::Spectators => "spectators",
        }
    }
}

/// A seat and who holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatInfo {
    /// The player's id.
    pub player: String,
    /// The player's display name.
    pub name: String,
    /// Whether the player has a live connection to the game (a bot always has).
    pub online: bool,
    /// A computer player: its level (1 to 3). Absent for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<u8>,
}

/// A game's settings, fixed at creation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameSettings {
    /// The game system (absent in games stored before variants: `sanguo`).
    #[serde(default)]
    pub variant: Variant,
    /// The clock.
    pub time_control: TimeControl,
    /// The direction of play.
    pub direction: Direction,
    /// Listed in the lobby and open to anyone with the id (private games are not listed).
    pub public: bool,
    /// Whether the players' chat channel is on.
    pub players_chat: bool,
    /// How long a disconnected player may stay away before it has abandoned, ms.
    pub grace_ms: u64,
    /// A rated game: its result moves the players' ratings (accounts only;
    /// absent: casual).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
    /// 三国暗棋's mode, scoring and options (absent: the defaults; only in anqi games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anqi: Option<anqi::AnqiOptions>,
}

// ---------------------------------------------------------------------------
// Game events (versioned)
// ---------------------------------------------------------------------------

/// Something that happened in a game. Clients receive these inside
/// [`ServerMsg::Event`], each with its version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GameEvent {
    /// A player took a seat.
    Joined {
        /// The seat.
        side: Side,
        /// Who sits there.
        seat: SeatInfo,
    },
    /// All three seats are taken: the game starts, W's clock runs.
    Started {
        /// The state of play.
        status: Status,
    },
    /// A move was played. `status` is the state after everything the move caused.
    Moved {
        /// Who moved.
        side: Side,
        /// The move, e.g. `W72-W54`.
        mv: String,
        /// The ply number of this move (0 for the first move).
        ply: u32,
        /// Time charged for it, ms.
        spent_ms: u64,
        /// The captured piece, e.g. `BR`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        captured: Option<String>,
        /// Sides it gave check to.
        checks: Vec<Side>,
        /// The piece a flip turned face up (三国暗棋, e.g. `R` for a red
        /// chariot); absent otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revealed: Option<String>,
        /// The state after the move.
        status: Status,
    },
    /// A public line of the variant's own record that is no other event
    /// (三国暗棋 `claim 1 R`, `pass 2`; 三国演弈棋 an alliance, 汉 activated,
    /// pieces absorbed …).
    Noted {
        /// The seat it concerns, if one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
        /// The line, in the variant's own notation.
        text: String,
    },
    /// A premature request earned a warning; the next one loses.
    Warned {
        /// Who.
        side: Side,
        /// What it asked.
        request: Request,
    },
    /// A side left the game.
    Eliminated(Departure),
    /// A draw was offered; `to` must answer.
    DrawOffered {
        /// The offerer.
        by: Side,
        /// Who must answer.
        to: Vec<Side>,
    },
    /// A side answered the pending offer.
    DrawAnswered {
        /// Who.
        by: Side,
        /// Its answer.
        accept: bool,
    },
    /// The offer came to nothing; play goes on.
    DrawOfferLapsed {
        /// The offerer.
        by: Side,
    },
    /// The state after an event that was not a move (resignation, timeout, …).
    State {
        /// The state of play.
        status: Status,
    },
    /// The game ended.
    Finished {
        /// The result.
        result: GameResult,
    },
    /// A seated player connected or lost its last connection.
    Presence {
        /// The seat.
        side: Side,
        /// Connected now?
        online: bool,
        /// When not online: when the side will have abandoned, ms from now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grace_ms: Option<u64>,
    },
    /// A chat line.
    Chat {
        /// The channel.
        channel: Channel,
        /// The writer's display name.
        from: String,
        /// The writer's seat, if a player.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
        /// The line.
        text: String,
    },
    /// The server restarted and restored the game; clocks were paused meanwhile.
    Restored {
        /// The state of play.
        status: Status,
    },
    /// A tournament arbiter acted on the game (adjudicate and abort are
    /// followed by `finished`).
    Arbiter {
        /// The arbiter's name.
        by: String,
        /// What.
        action: tournament::ArbiterAction,
        /// Why.
        reason: String,
        /// The state of play after it.
        status: Status,
    },
}

/// A public line of a variant's own record that is no move (三国暗棋 `claim 1 R`,
/// `pass 2`; 三国演弈棋 an alliance, 汉 activated, pieces absorbed …), as
/// [`GameEvent::Noted`] said it, with where it came in the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Note {
    /// Moves played before it.
    pub ply: u32,
    /// The seat it concerns, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// The line, in the variant's own notation.
    pub text: String,
}

/// A full description of a game, sent on connect when replaying is not possible,
/// and by `GET /api/games/{id}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Snapshot {
    /// The game id.
    pub id: String,
    /// The version of the last event included in this state.
    pub v: u64,
    /// Open, live or finished.
    pub phase: Phase,
    /// The settings.
    pub settings: GameSettings,
    /// Seats W, B, Y.
    pub seats: [Option<SeatInfo>; 3],
    /// The state of play.
    pub status: Status,
    /// Every move so far, in order.
    pub moves: Vec<String>,
    /// The sides that have left so far, in order, with why and when (so a client that reconnects
    /// from a snapshot can still say why a side's pieces are gone).
    #[serde(default)]
    pub departures: Vec<Departure>,
    /// The §6 limits of this game (三国象棋; absent in the other variants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The variant's own public record lines so far (absent when none; never in 三国象棋).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// The result, once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
}

// ---------------------------------------------------------------------------
// WebSocket messages
// ---------------------------------------------------------------------------

/// Which of the statuses in a connection's `event` messages list the legal
/// moves (`hello`'s `legal_moves`). With `own`, a status reaches the
/// connection with an empty `legal_moves` unless the connection acts for the
/// seat to move: spectators and the seats waiting for their turn skip the
/// list (most of a move's bytes). Snapshots always list them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LegalMovesFor {
    /// Every status lists the side to move's legal moves.
    #[default]
    All,
    /// Only the statuses sent while this connection's seat is to move.
    Own,
}

impl LegalMovesFor {
    /// Whether this is the default, `all`.
    pub fn is_all(&self) -> bool {
        *self == LegalMovesFor::All
    }
}

/// Client → server, over the game's WebSocket (`GET /api/games/{id}/ws`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// Must be the first message. `token` (a session token) makes the
    /// connection act for that player's seat; without it, or for a player
    /// without a seat, the connection watches. `v`: the last version held.
    Hello {
        /// The protocol version spoken.
        protocol: u32,
        /// A session token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// The last version the client holds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        v: Option<u64>,
        /// Which live statuses carry the legal moves for this connection:
        /// `all` (the default) or `own` (only when its seat is to move).
        #[serde(default, skip_serializing_if = "LegalMovesFor::is_all")]
        legal_moves: LegalMovesFor,
    },
    /// Play a move at ply `ply` (the `status.ply` the client saw).
    Move {
        /// The ply the client believes it moves at.
        ply: u32,
        /// The move, e.g. `W72-W54`.
        mv: String,
    },
    /// Resign.
    Resign,
    /// Offer a draw.
    OfferDraw,
    /// Answer the pending draw offer.
    AnswerDraw {
        /// Accept?
        accept: bool,
    },
    /// 三国暗棋: the seat's seed for the seat-entropy deal (docs/ANQI-DEAL.md
    /// §4), 64 lowercase hex digits, once, before the deal.
    Seed {
        /// 32 bytes as 64 lowercase hex digits.
        seed: String,
    },
    /// Write in a chat channel.
    Chat {
        /// The channel.
        channel: Channel,
        /// The line.
        text: String,
    },
    /// Heartbeat from the client; answered with `pong` with the same `n`.
    Ping {
        /// Any number.
        n: u64,
    },
    /// Answer to the server's `ping` (the round trip feeds lag compensation).
    Pong {
        /// The `n` of the server's ping.
        n: u64,
    },
}

/// The role of a connection in a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Acts for a seat.
    Player,
    /// Watches.
    Spectator,
}

/// Server → client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    /// The answer to `hello`: who the connection is. Then come either the
    /// missed events or a snapshot.
    Welcome {
        /// The protocol version.
        protocol: u32,
        /// The game id.
        game: String,
        /// Player or spectator.
        role: Role,
        /// The seat acted for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        side: Option<Side>,
        /// The game's current version.
        v: u64,
    },
    /// The whole state; it replaces whatever the client held, including `v`.
    Snapshot {
        /// The state.
        game: Box<Snapshot>,
    },
    /// A game event with its version; `event` is absent when this viewer may not see it.
    Event {
        /// The version.
        v: u64,
        /// The event.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<Box<GameEvent>>,
    },
    /// Something the client sent was refused; nothing changed.
    Error {
        /// Stable code.
        code: ErrorCode,
        /// Human words.
        message: String,
    },
    /// Heartbeat from the server: answer with `pong`.
    Ping {
        /// Echo this.
        n: u64,
    },
    /// Answer to the client's `ping`.
    Pong {
        /// The client's `n`.
        n: u64,
        /// The round trip the server last measured for this connection, ms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rtt_ms: Option<u64>,
    },
    /// The store (the database) stopped answering (`waiting: true`): nothing
    /// can be acknowledged, actions are refused with `storage_unavailable`
    /// and every clock of the game stands still until it is back
    /// (`waiting: false`). Not a game event: it carries no version.
    Storage {
        /// Whether the game waits for its storage.
        waiting: bool,
    },
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Stable error codes, shared by the WebSocket and the HTTP API.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, or not a known message.
    BadMessage,
    /// A frame above 8 KB.
    FrameTooLarge,
    /// Too many messages.
    RateLimited,
    /// `hello` with another protocol version.
    UnsupportedProtocol,
    /// Something other than `hello` first, or a second `hello`.
    HelloFirst,
    /// The token is unknown (or missing where one is required).
    Unauthorized,
    /// Not allowed (e.g. bad Origin).
    Forbidden,
    /// A spectator (or a player without a seat here) tried to act.
    NotAPlayer,
    /// The game has not started.
    NotStarted,
    /// The game is over.
    GameOver,
    /// The seat's side has left the game.
    NotLive,
    /// Not this side's turn.
    NotYourTurn,
    /// The move text does not parse.
    BadMove,
    /// The move is illegal here.
    IllegalMove,
    /// The move's ply is not the current one.
    StaleMove,
    /// This very move was already played at that ply.
    DuplicateMove,
    /// No draw offers left.
    NoOffersLeft,
    /// A draw offer is pending.
    OfferPending,
    /// No offer to answer.
    NothingToAnswer,
    /// The players' chat is switched off for this game.
    ChatDisabled,
    /// Chat text empty or too long, or the wrong channel for this role.
    BadChat,
    /// The game's channel holds as many chat lines as the server keeps per game.
    ChatFull,
    /// No such thing.
    NotFound,
    /// The request is malformed.
    BadRequest,
    /// The seat is taken.
    SeatTaken,
    /// The game has no free seat, or the player already sits in it.
    AlreadySeated,
    /// The username exists.
    UsernameTaken,
    /// Wrong username or password.
    BadCredentials,
    /// Too many unfinished games for this session.
    TooManyGames,
    /// The game is not accepting seats.
    NotOpen,
    /// A server fault (details are logged, not sent).
    Internal,
    /// The server is shutting down.
    ShuttingDown,
    /// The server holds as many game sockets as it takes (HTTP 503); try again soon.
    Busy,
    /// The store does not answer; try again when `storage` says it is back.
    StorageUnavailable,
    /// An arbiter paused the clocks.
    Paused,
    /// The tournament is not in a state that allows this.
    TournamentState,
    /// The game system is known but not playable on this server yet.
    VariantUnavailable,
    /// A rated game takes accounts only: no guest, no bot.
    RatedNeedsAccount,
    /// The password is refused (too short or too long); the message says which.
    BadPassword,
    /// The username is refused (length or characters); the message says which.
    BadUsername,
    /// A seek's rating range does not include the caller's rating.
    OutOfRatingRange,
}

impl ErrorCode {
    /// The code as it appears on the wire.
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// An error body: `{"code": "...", "message": "..."}` (HTTP), and the
/// content of [`ServerMsg::Error`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// Stable code.
    pub code: ErrorCode,
    /// Human words.
    pub message: String,
}

// ---------------------------------------------------------------------------
// HTTP API bodies
// ---------------------------------------------------------------------------

/// `POST /api/accounts` and `POST /api/login`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// 3–32 characters: letters, digits, `_`, `-`.
    pub username: String,
    /// 8–128 characters.
    pub password: String,
}

/// A session (`POST /api/sessions`, `/api/accounts`, `/api/login`). The
/// token goes in `Authorization: Bearer TOKEN` and in `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Session {
    /// The session token (256 random bits, hex).
    pub token: String,
    /// The player's id.
    pub player: String,
    /// The display name.
    pub name: String,
    /// Whether the player has an account (false: guest).
    pub account: bool,
}

/// `POST /api/games`: every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// The game system. Default: `sanguo`.
    #[serde(default)]
    pub variant: Option<Variant>,
    /// Default: 10 min + 5 s.
    #[serde(default)]
    pub time_control: Option<TimeControl>,
    /// Default: ccw.
    #[serde(default)]
    pub direction: Option<Direction>,
    /// Default: true.
    #[serde(default)]
    pub public: Option<bool>,
    /// Default: true.
    #[serde(default)]
    pub players_chat: Option<bool>,
    /// Default: the server's (60 s).
    #[serde(default)]
    pub grace_ms: Option<u64>,
    /// A rated game (accounts only, no bots). Default: false (casual).
    #[serde(default)]
    pub rated: Option<bool>,
    /// 三国暗棋's mode, scoring and options (`variant` `anqi` only). Default: the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anqi: Option<anqi::AnqiOptions>,
    /// Seats filled with computer players at creation: side → level (1 to
    /// 3), e.g. `{"B": 2, "Y": 3}`. Default: none. Three bots start the game at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bots: Option<std::collections::BTreeMap<Side, u8>>,
}

/// `POST /api/games/{id}/join`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JoinGame {
    /// The seat wanted; the first free one in W, B, Y order if absent.
    #[serde(default)]
    pub side: Option<Side>,
    /// 三国暗棋: the seat's contribution to the seat-entropy deal
    /// (docs/ANQI-DEAL.md §4), 32 bytes as 64 lowercase hex digits. Absent:
    /// none yet (the seat may send it with the `seed` message before the deal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
}

/// `POST /api/games/{id}/bots`: the game's creator fills a free seat with a
/// computer player before the game starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AddBot {
    /// The seat; the first free one in W, B, Y order if absent.
    #[serde(default)]
    pub side: Option<Side>,
    /// The level, 1 (weakest) to 3.
    pub level: u8,
}

/// The levels a bot may have.
pub const BOT_LEVELS: std::ops::RangeInclusive<u8> = 1..=3;

/// The answer to a join.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Joined {
    /// The game.
    pub game: String,
    /// The seat taken.
    pub side: Side,
}

/// A game system the server knows (`GET /api/variants`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VariantInfo {
    /// The key used in settings and filters, e.g. `sanguo`.
    pub key: Variant,
    /// Its Chinese name, e.g. `三国象棋`.
    pub title: String,
    /// Whether games of it can be created on this server now.
    pub playable: bool,
    /// How to draw its board.
    pub board: BoardDescription,
}

/// A board as a client draws it: data for one renderer, so that a new board
/// is a new description, not new drawing code. Coordinates are in line
/// spacings with the y axis up; a seat's view rotates them by its angle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardDescription {
    /// Every point, in index order.
    pub points: Vec<BoardPoint>,
    /// Straight lines, point to point.
    pub segments: Vec<[String; 2]>,
    /// Dashed lines (palace diagonals), point to point.
    pub dashed: Vec<[String; 2]>,
    /// Circular arcs, point to point.
    pub arcs: Vec<BoardArc>,
    /// Tinted areas (a seat's camp, a palace, …): polygons through points.
    pub areas: Vec<BoardArea>,
    /// Text on the board (a seat's name beyond its edge, a point's label).
    pub labels: Vec<BoardLabel>,
    /// Points drawn with a ring (the centre).
    pub rings: Vec<String>,
    /// Per seat: the rotation that puts that seat at the bottom.
    pub views: Vec<BoardView>,
    /// The box every view fits, in line spacings of the rotated picture
    /// (x to the right, y down, as on screen).
    pub extent: BoardExtent,
    /// The pieces' characters: owner → piece letter → character.
    pub pieces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
}

/// A point of a [`BoardDescription`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardPoint {
    /// Its name in the variant's notation, e.g. `W52`.
    pub name: String,
    /// Its index in the variant's canonical order.
    pub index: u32,
    /// x, line spacings, origin the board's centre.
    pub x: f64,
    /// y, line spacings, up.
    pub y: f64,
}

/// A circular arc of a [`BoardDescription`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardArc {
    /// Where it starts.
    pub from: String,
    /// Where it ends.
    pub to: String,
    /// Its radius, line spacings.
    pub radius: f64,
    /// SVG's sweep flag on screen (y down): 1 for clockwise there.
    pub sweep: u8,
}

/// A tinted area of a [`BoardDescription`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardArea {
    /// What it is, for styling (e.g. `area-W`).
    pub class: String,
    /// Its corners, in order.
    pub points: Vec<String>,
}

/// A text of a [`BoardDescription`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardLabel {
    /// The text.
    pub text: String,
    /// x, line spacings (board coordinates, y up).
    pub x: f64,
    /// y, line spacings.
    pub y: f64,
    /// What it is, for styling (e.g. `side-label label-W`).
    pub class: String,
}

/// A seat's view of a [`BoardDescription`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardView {
    /// The seat, e.g. `W`.
    pub side: String,
    /// Degrees counterclockwise by which the board is turned back for this seat's view.
    pub rotation: f64,
}

/// The box of a [`BoardDescription`]'s views.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardExtent {
    /// Half the width.
    pub half_width: f64,
    /// The top edge (negative: above the centre).
    pub top: f64,
    /// The bottom edge.
    pub bottom: f64,
}

/// A line of the lobby (`GET /api/games`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameSummary {
    /// The game id.
    pub id: String,
    /// Open, live or finished.
    pub phase: Phase,
    /// The settings.
    pub settings: GameSettings,
    /// Seats W, B, Y.
    pub seats: [Option<SeatInfo>; 3],
    /// Moves played.
    pub ply: u32,
}

/// One move of the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordMove {
    /// Ply number, from 0.
    pub ply: u32,
    /// Who moved.
    pub side: Side,
    /// The move.
    pub mv: String,
    /// Time charged, ms.
    pub spent_ms: u64,
    /// Main time left per side after the move, ms.
    pub clocks_ms: [u64; 3],
    /// Byo-yomi periods left per side after the move.
    pub periods: [u32; 3],
}

/// One accepted event of the record (moves, requests, answers, timeouts, abandonment).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordEvent {
    /// Order in the game, from 0.
    pub seq: u64,
    /// Who.
    pub side: Side,
    /// `move W72-W54`, `resign`, `offer_draw`, `accept_draw`, `decline_draw`, `timeout`, `abandon`.
    pub action: String,
    /// Game time, ms (paused while the server was down).
    pub at_ms: u64,
    /// Wall-clock time, ms since the Unix epoch.
    pub wall_ms: i64,
    /// Main time left per side after the event, ms: on moves, and on the
    /// departure (timeout, resign, abandon) or end that stopped a running clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks_ms: Option<[u64; 3]>,
    /// Byo-yomi periods left per side after the event (with `clocks_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periods: Option<[u32; 3]>,
}

/// One chat line of the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordChat {
    /// The channel.
    pub channel: Channel,
    /// The writer's display name.
    pub from: String,
    /// The line.
    pub text: String,
    /// Wall-clock time, ms since the Unix epoch.
    pub wall_ms: i64,
}

/// `GET /api/games/{id}/record`: the complete record, read from the store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameRecord {
    /// The game id.
    pub id: String,
    /// Open, live or finished.
    pub phase: Phase,
    /// The settings.
    pub settings: GameSettings,
    /// The start position (RULES §7 text).
    pub initial_position: String,
    /// Seats W, B, Y.
    pub seats: [Option<SeatInfo>; 3],
    /// Moves with time spent and clocks after each.
    pub moves: Vec<RecordMove>,
    /// Every accepted event.
    pub events: Vec<RecordEvent>,
    /// Chat lines.
    pub chat: Vec<RecordChat>,
    /// The result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    /// A rated game's rating changes, W, B, Y order (absent until rated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rating_changes: Vec<players::RatingChange>,
    /// The variant's own public record lines, as the game's room shows them
    /// (absent when none; never in 三国象棋).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A room keeps its last events, each with its status, and moves a
    /// status and an event through every move: the variants' own states,
    /// several hundred bytes each, are boxed so that a status of any
    /// variant stays small (888 bytes, and an event 1,000, before).
    #[test]
    fn a_status_and_an_event_stay_small() {
        assert!(
            std::mem::size_of::<Status>() <= 400,
            "{}",
            std::mem::size_of::<Status>()
        );
        assert!(
            std::mem::size_of::<GameEvent>() <= 512,
            "{}",
            std::mem::size_of::<GameEvent>()
        );
    }

    #[test]
    fn refusals_carry_a_code_and_params_to_translate() {
        let pos = engine::Position::initial(engine::Direction::Ccw);
        let cases = [
            (
                "W24-Y82",
                "no_retaliation_right",
                vec![("mover", "W"), ("upstream", "Y")],
            ),
            ("W22-W23", "not_this_pieces_move", vec![("piece", "WN")]),
            ("W12-W32", "own_piece", vec![("piece", "WE")]),
            (
                "B24-B23",
                "not_your_piece",
                vec![("owner", "B"), ("piece", "BC"), ("turn", "W")],
            ),
            (
                "W15-W14",
                "outside_region",
                vec![("piece", "WP"), ("rule", "soldier_zone")],
            ),
        ];
        for (mv, code, params) in cases {
            let m = engine::parse_move(mv).unwrap();
            assert!(!pos.is_legal(m), "{mv}");
            let r = Refusal::from(&engine::explain::explain(&pos, m));
            assert_eq!(r.code, code, "{mv}: {}", r.message);
            let want: std::collections::BTreeMap<String, String> =
                params.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
            assert_eq!(r.params, want, "{mv}");
        }
    }

    #[test]
    fn client_messages_round_trip() {
        let cases = [
            (r#"{"type":"hello","protocol":1,"token":"ab","v":3}"#, None),
            (r#"{"type":"move","ply":0,"mv":"W72-W54"}"#, None),
            (r#"{"type":"resign"}"#, None),
            (r#"{"type":"offer_draw"}"#, None),
            (r#"{"type":"answer_draw","accept":true}"#, None),
            (r#"{"type":"chat","channel":"players","text":"hi"}"#, None),
            (r#"{"type":"ping","n":7}"#, None),
            (r#"{"type":"pong","n":7}"#, None),
            (r#"{"type":"seed","seed":"1f1f"}"#, None),
            (r#"{"type":"seed"}"#, Some(())),
            (r#"{"type":"move","ply":0}"#, Some(())),
            (r#"{"type":"fly"}"#, Some(())),
        ];
        for (text, err) in cases {
            let parsed = serde_json::from_str::<ClientMsg>(text);
            assert_eq!(parsed.is_err(), err.is_some(), "{text}");
            if let Ok(m) = parsed {
                let back = serde_json::to_string(&m).unwrap();
                assert_eq!(serde_json::from_str::<ClientMsg>(&back).unwrap(), m);
            }
        }
    }

    #[test]
    fn bots_are_a_map_from_side_to_level() {
        let c: CreateGame = serde_json::from_str(r#"{"bots":{"B":2,"Y":3}}"#).unwrap();
        let bots = c.bots.clone().unwrap();
        assert_eq!(bots.get(&Side::B), Some(&2));
        assert_eq!(bots.get(&Side::Y), Some(&3));
        assert_eq!(bots.len(), 2);
        assert_eq!(serde_json::to_string(&c.bots).unwrap(), r#"{"B":2,"Y":3}"#);
        assert!(serde_json::from_str::<CreateGame>(r#"{"bots":{"X":2}}"#).is_err());
        let seat: SeatInfo = serde_json::from_str(r#"{"player":"p","name":"n","online":true}"#).unwrap();
        assert_eq!(seat.bot, None, "people's seats have no level");
    }

    #[test]
    fn bare_event_has_only_a_version() {
        let m = ServerMsg::Event { v: 12, event: None };
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"type":"event","v":12}"#);
    }

    #[test]
    fn error_codes_are_snake_case() {
        assert_eq!(ErrorCode::NotYourTurn.as_str(), "not_your_turn");
        let e = ServerMsg::Error {
            code: ErrorCode::StaleMove,
            message: "x".into(),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"error","code":"stale_move","message":"x"}"#
        );
    }

    #[test]
    fn sides_convert_both_ways() {
        for s in engine::Side::ALL {
            assert_eq!(engine::Side::from(Side::from(s)), s);
            assert_eq!(Side::parse(Side::from(s).as_str()), Some(Side::from(s)));
        }
    }
}
