//! 三国演弈棋 (variant key `yanyi`): the 225-point three-player game with the
//! 汉 force, alliances and 被将先走, as `shared/RULES-YANYI.md` reads it.
//!
//! Its own board, pieces, position, notation, explanations and game record;
//! nothing here is shared with the first game system's rules.

pub mod board;
pub mod explain;
pub mod game;
pub mod notation;
pub mod piece;
pub mod position;

pub use board::{BoardDescription, Point, PointSet, description};
pub use explain::{IllegalMove, Reason};
pub use game::{
    Action, Departure, DrawReason, Effect, EliminationReason, Ending, Event, GameError, GameResult, Outcome, YanyiGame,
};
pub use notation::{ParseError, chinese_move, format_position, parse_move, parse_position};
pub use piece::{Colour, Piece, Player, Players, Role};
pub use position::{
    Cause, Elimination, MAX_MOVES, Move, MoveList, MoveOutcome, Position, PositionError, Setup, TurnReason, perft,
    perft_divide,
};

/// The position type of this variant, by its variant name.
pub type YanyiPosition = Position;
