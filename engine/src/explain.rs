//! Why a move is illegal, in the game's own words, so that players new to
//! Three Kingdoms chess learn the rules from the refusals.

use std::fmt;

use crate::board::{Point, board};
use crate::piece::{Piece, Role};
use crate::position::{Move, MoveList, Position};
use crate::side::Side;

/// The reason a move was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Only one side is left.
    GameOver,
    /// There is no piece on the starting point.
    NoPiece(Point),
    /// The piece belongs to another side.
    NotYourPiece {
        /// The piece.
        piece: Piece,
        /// Whose turn it is.
        turn: Side,
    },
    /// The destination holds a piece of the mover.
    OwnPiece(Piece),
    /// The piece does not move that way at all.
    NotThisPiecesMove(Piece),
    /// The eye 相眼 of the 田 move is occupied.
    EyeBlocked(Point),
    /// The eye of the 田 move is not a grid point (a deformed cell).
    EyeNotGrid(Point),
    /// The leg 马腿 of the 日 move is occupied.
    LegBlocked(Point),
    /// A piece stands in the way.
    PathBlocked(Point),
    /// A cannon captures only by jumping exactly one piece; this many stand between.
    CannonScreen(usize),
    /// The piece may not leave its region.
    OutsideRegion {
        /// The piece.
        piece: Piece,
        /// The rule, in words.
        rule: &'static str,
    },
    /// Capturing the upstream side without the retaliation right (先击后攻).
    NoRetaliationRight {
        /// The side moving.
        mover: Side,
        /// The upstream side whose piece would be captured.
        upstream: Side,
    },
    /// After an elimination that was not a mate, no king may be captured this turn.
    NoKingCaptureThisTurn,
    /// The mover's king would stand attacked by this side.
    KingAttacked {
        /// The attacking side.
        by: Side,
        /// Why that attack matters (it is always fatal from the upstream side).
        why: Attack,
    },
    /// The mover's king would face another king (照面).
    KingsFace(Side),
}

/// Why an attack on the mover's king makes a move illegal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Attack {
    /// From the upstream side (or the only opponent in phase 2).
    Upstream,
    /// The move captures or checks the downstream side, which could then strike back.
    Provoked,
    /// The downstream side has a standing retaliation check that must be escaped.
    Standing,
}

/// An illegal move and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {mv}: {reason}")]
pub struct IllegalMove {
    /// The move as given.
    pub mv: Move,
    /// Why it was refused.
    pub reason: Reason,
}

fn side_name(s: Side) -> String {
    format!("{} ({} {})", s.letter(), s.colour(), s.kingdom())
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::GameOver => write!(f, "the game is over"),
            Reason::NoPiece(p) => write!(f, "there is no piece on {p}"),
            Reason::NotYourPiece { piece, turn } => {
                write!(
                    f,
                    "not your piece: {piece} belongs to {}, and it is {}'s turn",
                    side_name(piece.side),
                    side_name(*turn)
                )
            }
            Reason::OwnPiece(pc) => write!(f, "you cannot capture your own {}", pc.role.name()),
            Reason::NotThisPiecesMove(pc) => {
                let how = match pc.role {
                    Role::King => "a king steps one point along a line (and takes a king it faces)",
                    Role::Consort => "a consort steps one point along a line or a drawn palace diagonal",
                    Role::Advisor => "an advisor steps one point along a drawn palace diagonal",
                    Role::Prince => "a prince steps one point along a line or across a cell",
                    Role::Elephant => "an elephant moves one 田: across two cells in a straight diagonal",
                    Role::Horse => "a horse moves one 日: one step along a line, then across a cell",
                    Role::Chariot => "a chariot slides along a line",
                    Role::Cannon => "a cannon slides along a line and captures by jumping one piece",
                    Role::Soldier => "a soldier steps along a line (forward only inside its own no-soldier zone)",
                };
                write!(f, "not this piece's move: {how}")
            }
            Reason::EyeBlocked(p) => write!(f, "blocked: the elephant's eye {p} is occupied"),
            Reason::EyeNotGrid(p) => write!(f, "not this piece's move: the elephant's eye {p} is not a grid point"),
            Reason::LegBlocked(p) => write!(f, "blocked: the horse's leg {p} is occupied"),
            Reason::PathBlocked(p) => write!(f, "blocked: a piece on {p} is in the way"),
            Reason::CannonScreen(0) => write!(
                f,
                "a cannon captures only by jumping exactly one piece, and none stands between"
            ),
            Reason::CannonScreen(n) => write!(
                f,
                "a cannon captures only by jumping exactly one piece, and {n} stand between"
            ),
            Reason::OutsideRegion { rule, .. } => write!(f, "outside its region: {rule}"),
            Reason::NoRetaliationRight { mover, upstream } => write!(
                f,
                "{} may not capture the upstream side {} without the retaliation right (先击后攻: only right after {} captured a piece of {} or checked it)",
                mover.letter(),
                upstream.letter(),
                upstream.letter(),
                mover.letter()
            ),
            Reason::NoKingCaptureThisTurn => {
                write!(
                    f,
                    "no king may be captured on the turn right after a side left by resignation, time or penalty"
                )
            }
            Reason::KingAttacked { by, why } => {
                write!(f, "would leave your king attacked by {}", side_name(*by))?;
                match why {
                    Attack::Upstream => Ok(()),
                    Attack::Provoked => write!(
                        f,
                        ", which this move provokes (a capture or check of {} gives it the right to strike back)",
                        by.letter()
                    ),
                    Attack::Standing => write!(f, ", whose retaliation check still stands and must be escaped"),
                }
            }
            Reason::KingsFace(s) => write!(f, "kings would face: your king would see the king of {}", side_name(*s)),
        }
    }
}

/// Explains why `m` is illegal in `pos`. If `m` is in fact legal the
/// answer is meaningless; callers ask only after `is_legal` said no.
pub fn explain(pos: &Position, m: Move) -> IllegalMove {
    IllegalMove {
        mv: m,
        reason: reason(pos, m),
    }
}

fn reason(pos: &Position, m: Move) -> Reason {
    if pos.is_over() {
        return Reason::GameOver;
    }
    let Some(piece) = pos.piece_at(m.from) else {
        return Reason::NoPiece(m.from);
    };
    let s = pos.turn();
    if piece.side != s {
        return Reason::NotYourPiece { piece, turn: s };
    }
    let dest = pos.piece_at(m.to);
    if let Some(d) = dest
        && d.side == s
    {
        return Reason::OwnPiece(d);
    }
    let mut pseudo = MoveList::new();
    pos.pseudo_legal_moves(&mut pseudo);
    if !pseudo.contains(&m) {
        if let Some(r) = geometry_reason(pos, piece, m) {
            return r;
        }
        if let Some(d) = dest {
            if d.role == Role::King && pos.no_king_capture() {
                return Reason::NoKingCaptureThisTurn;
            }
            if !pos.hostile(s, d.side) {
                return Reason::NoRetaliationRight {
                    mover: s,
                    upstream: d.side,
                };
            }
        }
        return Reason::NotThisPiecesMove(piece);
    }
    legality_reason(pos, m)
}

/// Why the piece cannot go there by its own rules (shape, blocking, region).
fn geometry_reason(pos: &Position, piece: Piece, m: Move) -> Option<Reason> {
    let b = board();
    let (from, to) = (m.from, m.to);
    let s = piece.side;
    let empty = |p: Point| pos.piece_at(p).is_none();
    let region = |rule| Some(Reason::OutsideRegion { piece, rule });
    match piece.role {
        Role::King => {
            if b.neighbours(from).contains(&to) {
                return (!b.king_region(s).contains(to)).then_some(()).and(region(
                    "a king stays in its palace and rear palace (files 4–6, ranks 1–4)",
                ));
            }
            if pos.piece_at(to).is_some_and(|d| d.role == Role::King) {
                if let Some(r) = first_blocker_on_line(pos, from, to) {
                    return Some(r);
                }
                return None;
            }
            Some(Reason::NotThisPiecesMove(piece))
        }
        Role::Consort => {
            if b.neighbours(from).contains(&to) || b.drawn_diagonals(from).contains(&to) {
                return region("a consort stays in its palace and rear palace (files 4–6, ranks 1–4)");
            }
            Some(Reason::NotThisPiecesMove(piece))
        }
        Role::Advisor => {
            if b.drawn_diagonals(from).contains(&to) {
                return region("an advisor stays in its palace (files 4–6, ranks 2–4)");
            }
            Some(Reason::NotThisPiecesMove(piece))
        }
        Role::Prince => {
            if b.neighbours(from).contains(&to) || b.diagonals(from).contains(&to) {
                return None;
            }
            Some(Reason::NotThisPiecesMove(piece))
        }
        Role::Elephant => {
            if let Some(t) = b.tian_from(from).iter().find(|t| t.to == to) {
                if !empty(t.eye) {
                    return Some(Reason::EyeBlocked(t.eye));
                }
                return region(if pos.live().count() == 3 {
                    "while three sides play, an elephant stays in its own rectangle"
                } else {
                    "an elephant may go to its own rectangle, the opponent's rectangle and the fans, never the eliminated side's rectangle"
                });
            }
            // A 田 shape whose eye is not a grid point.
            for c in b.diagonals(from) {
                if b.diagonals(*c).contains(&to) && !b.is_grid(*c) {
                    return Some(Reason::EyeNotGrid(*c));
                }
            }
            Some(Reason::NotThisPiecesMove(piece))
        }
        Role::Horse => {
            let legs: Vec<Point> = b.ri_from(from).iter().filter(|r| r.to == to).map(|r| r.leg).collect();
            if legs.is_empty() {
                return Some(Reason::NotThisPiecesMove(piece));
            }
            legs.into_iter().find(|&l| !empty(l)).map(Reason::LegBlocked)
        }
        Role::Chariot => {
            if !on_a_line(from, to) {
                return Some(Reason::NotThisPiecesMove(piece));
            }
            first_blocker_on_line(pos, from, to)
        }
        Role::Cannon => {
            if !on_a_line(from, to) {
                return Some(Reason::NotThisPiecesMove(piece));
            }
            if empty(to) {
                return first_blocker_on_line(pos, from, to);
            }
            // Fewest pieces between over the paths to `to`.
            let between = b
                .rays(from)
                .iter()
                .map(|r| b.ray_points(r))
                .filter_map(|pts| {
                    pts.iter()
                        .position(|&q| q == to)
                        .map(|i| pts[..i].iter().filter(|&&q| !empty(q)).count())
                })
                .min()
                .unwrap_or(0);
            (between != 1).then_some(Reason::CannonScreen(between))
        }
        Role::Soldier => {
            let zone = b.no_soldier_zone(s);
            let phase2 = pos.live().count() < 3;
            let adjacent = b.neighbours(from).contains(&to);
            let two = phase2
                && b.rays(from).iter().any(|r| {
                    let pts = b.ray_points(r);
                    pts.len() > 1 && pts[1] == to
                });
            if !adjacent && !two {
                return Some(Reason::NotThisPiecesMove(piece));
            }
            if zone.contains(to) {
                return region("a soldier never enters its own no-soldier zone (its ranks 1–5)");
            }
            if zone.contains(from) {
                let fwd = b.forward(from, s);
                let along_file = b.rays(from).iter().any(|r| {
                    let pts = b.ray_points(r);
                    Some(pts[0]) == fwd && (pts[0] == to || (phase2 && pts.len() > 1 && pts[1] == to))
                });
                if !along_file {
                    return region("inside its own zone a soldier only steps forward along its file");
                }
            }
            if !adjacent {
                // A double step: the first point must be empty and outside the zone.
                let mids: Vec<Point> = b
                    .rays(from)
                    .iter()
                    .map(|r| b.ray_points(r))
                    .filter(|pts| pts.len() > 1 && pts[1] == to)
                    .map(|pts| pts[0])
                    .collect();
                if let Some(&mid) = mids.iter().find(|&&q| !empty(q)) {
                    return Some(Reason::PathBlocked(mid));
                }
                if mids.iter().all(|&q| zone.contains(q)) {
                    return region("a soldier never passes through its own no-soldier zone");
                }
            }
            None
        }
    }
}

fn on_a_line(from: Point, to: Point) -> bool {
    let b = board();
    b.rays(from).iter().any(|r| b.ray_points(r).contains(&to))
}

/// The first piece between `from` and `to` on a line joining them (the
/// path with the fewest such pieces), or `None` if one path is clear.
fn first_blocker_on_line(pos: &Position, from: Point, to: Point) -> Option<Reason> {
    let b = board();
    let mut blocker = None;
    for r in b.rays(from) {
        let pts = b.ray_points(r);
        if let Some(i) = pts.iter().position(|&q| q == to) {
            match pts[..i].iter().find(|&&q| pos.piece_at(q).is_some()) {
                None => return None,
                Some(&q) => blocker = blocker.or(Some(Reason::PathBlocked(q))),
            }
        }
    }
    blocker.or(Some(Reason::NotThisPiecesMove(pos.piece_at(from).unwrap())))
}

/// Which of the king-safety conditions of §4 a pseudo-legal move breaks.
fn legality_reason(pos: &Position, m: Move) -> Reason {
    let s = pos.turn();
    let d = pos.direction();
    // Judge on the board right after the move (before any further mate resolution).
    let mut board_after = *pos;
    board_after.apply_raw(m);
    let Some(k) = board_after.king(s) else {
        return Reason::GameOver;
    };
    let live = board_after.live();
    if live.count() == 3 {
        let (thr, tgt) = (d.prev(s), d.next(s));
        if board_after.attacked_by(k, thr) && !board_after.faces(s, thr) {
            return Reason::KingAttacked {
                by: thr,
                why: Attack::Upstream,
            };
        }
        if board_after.attacked_by(k, tgt) && !board_after.faces(s, tgt) {
            let why = if pos.has_standing_check(tgt, s) {
                Attack::Standing
            } else {
                Attack::Provoked
            };
            return Reason::KingAttacked { by: tgt, why };
        }
    } else {
        for o in live.iter() {
            if o != s && board_after.attacked_by(k, o) && !board_after.faces(s, o) {
                return Reason::KingAttacked {
                    by: o,
                    why: Attack::Upstream,
                };
            }
        }
    }
    for o in live.iter() {
        if o != s && board_after.faces(s, o) {
            return Reason::KingsFace(o);
        }
    }
    Reason::NotThisPiecesMove(pos.piece_at(m.from).unwrap())
}
