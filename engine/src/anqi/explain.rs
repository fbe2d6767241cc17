//! Why an action is refused, in the game's own terms, so that new players learn
//! 三国暗棋 from the refusals.

use std::fmt;

use super::position::Move;
use super::{Piece, Point, Team};

/// The reason an action was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The position is over: nobody is to move.
    GameOver,
    /// Another seat is to move (the game layer's check).
    NotYourTurn {
        /// The seat (1 … 3) that is to move.
        to_move: usize,
    },
    /// The seat has stopped playing.
    NotPlaying,
    /// A flip of an empty point.
    NothingToFlip(Point),
    /// A flip of a piece that is already face up.
    AlreadyFaceUp(Point, Piece),
    /// A move from an empty point.
    NoPiece(Point),
    /// Face-down pieces never move (§4).
    FaceDownCannotMove(Point),
    /// A seat without a team can only flip (§4, R-3).
    TeamlessCanOnlyFlip,
    /// The piece belongs to another team.
    NotYourTeam {
        /// The piece.
        piece: Piece,
        /// Where it stands.
        at: Point,
        /// The mover's team.
        team: Team,
    },
    /// Only face-up pieces can be captured (只能吃翻开的子).
    CaptureFaceDown(Point),
    /// The destination holds a piece of the mover's own team.
    CaptureOwnTeam(Point, Piece),
    /// `x` was written but the destination is empty.
    NothingToCapture(Point),
    /// The piece was revealed by this turn's first action and `fanchi` is off.
    RevealedThisTurn(Point),
    /// A piece stands in the way of a slide.
    PathBlocked(Point),
    /// A cannon captures over exactly one screen; this many pieces stand between.
    CannonScreen(usize),
    /// The horse's leg is occupied (`xqlegs`).
    LegBlocked(Point),
    /// The elephant's eye is occupied (`xqlegs`).
    EyeBlocked(Point),
    /// The piece does not move that way.
    NotThisPiecesMove(Piece),
    /// A viewer position cannot flip without being told the identity.
    IdentityUnknown(Point),
    /// The told identity is not the one there (full form) or not in the hidden pool.
    NotInPool(Point, Piece),
    /// A client may not name the identity of a flip (§11.2).
    IdentityNamed,
}

fn role_of(p: Piece) -> String {
    format!("{} {}", if p.is_red() { "red" } else { "black" }, p.role().name())
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::GameOver => write!(f, "the game is over"),
            Refusal::NotYourTurn { to_move } => write!(f, "not your turn: seat {to_move} is to move"),
            Refusal::NotPlaying => write!(f, "this seat is no longer playing"),
            Refusal::NothingToFlip(p) => write!(f, "there is no piece on {p} to flip"),
            Refusal::AlreadyFaceUp(p, id) => write!(f, "the piece on {p} ({id}) is already face up"),
            Refusal::NoPiece(p) => write!(f, "there is no piece on {p}"),
            Refusal::FaceDownCannotMove(p) => write!(f, "the piece on {p} is face down: a face-down piece cannot move"),
            Refusal::TeamlessCanOnlyFlip => write!(f, "a seat without a team can only flip"),
            Refusal::NotYourTeam { piece, at, team } => write!(
                f,
                "the {} ({piece}) on {at} is not of your team (you hold team {team})",
                role_of(*piece)
            ),
            Refusal::CaptureFaceDown(p) => {
                write!(f, "the piece on {p} is face down: only face-up pieces can be captured")
            }
            Refusal::CaptureOwnTeam(p, id) => write!(f, "the piece on {p} ({id}) is of your own team"),
            Refusal::NothingToCapture(p) => write!(f, "there is nothing to capture on {p}"),
            Refusal::RevealedThisTurn(p) => {
                write!(
                    f,
                    "the piece on {p} was revealed by this turn's first action and cannot be captured this turn"
                )
            }
            Refusal::PathBlocked(p) => write!(f, "the way is blocked by the piece on {p}"),
            Refusal::CannonScreen(0) => write!(f, "a cannon needs exactly one screen to capture, and there is none"),
            Refusal::CannonScreen(n) => {
                write!(
                    f,
                    "a cannon needs exactly one screen to capture, and there are {n} pieces between"
                )
            }
            Refusal::LegBlocked(p) => write!(f, "the horse's leg on {p} is blocked"),
            Refusal::EyeBlocked(p) => write!(f, "the elephant's eye on {p} is blocked"),
            Refusal::NotThisPiecesMove(id) => write!(f, "a {} ({id}) does not move that way", role_of(*id)),
            Refusal::IdentityUnknown(p) => write!(f, "the identity of the face-down piece on {p} is unknown here"),
            Refusal::NotInPool(p, id) => write!(f, "{id} cannot be the face-down piece on {p}"),
            Refusal::IdentityNamed => write!(f, "a flip may not name the identity it reveals"),
        }
    }
}

/// A refused action and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal action {action}: {reason}")]
pub struct IllegalAction {
    /// The action, as given.
    pub action: Move,
    /// Why it is refused.
    pub reason: Refusal,
}
