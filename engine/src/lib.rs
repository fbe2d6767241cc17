//! The rules of Three Kingdoms chess (三国象棋) as `shared/RULES.md` reads them,
//! and of its other game systems: [`anqi`] (三国暗棋, `shared/RULES-ANQI.md`) and
//! [`yanyi`] (三国演弈棋, `shared/RULES-YANYI.md`).
//!
//! A pure crate: no IO, no async, no clock, no randomness. Time and
//! disconnections reach [`game::Game`] as events with timestamps.

pub mod anqi;
pub mod board;
pub mod clock;
pub mod explain;
pub mod game;
pub mod notation;
pub mod piece;
pub mod position;
pub mod side;
pub mod tables;
pub mod variant;
pub mod yanyi;

pub use board::{Point, PointSet, board};
pub use explain::{IllegalMove, Reason};
pub use game::{
    Action, Departure, DrawReason, Effect, EliminationReason, Ending, Event, Game, GameError, GameResult, Limits,
    Listing, Outcome, Request,
};
pub use notation::{ParseError, format_position, parse_move, parse_position};
pub use piece::{Piece, Role};
pub use position::{
    Cause, Elimination, Move, MoveList, MoveOutcome, Position, PositionError, Setup, perft, perft_divide,
};
pub use side::{Direction, Side, Sides};
pub use variant::{Variant, VariantPosition};
