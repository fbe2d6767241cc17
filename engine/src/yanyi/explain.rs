//! Why a move is refused, in the words of 三国演弈棋 (RULES-YANYI §4–§6), so
//! that the refusal teaches the rule.

use std::fmt;

use super::board::{Point, camp, depth, is_point, tables};
use super::piece::{Colour, Piece, Player, Players, Role};
use super::position::{Move, Position};

/// The reason a move was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Only one player is left.
    GameOver,
    /// The player asking is not the one to move (被将先走 may have given the turn to another).
    NotYourTurn {
        /// Who asked.
        player: Player,
        /// Whose turn it is.
        turn: Player,
    },
    /// There is no piece on the starting point.
    NoPiece(Point),
    /// The static 汉 force never moves by itself.
    HanNeverMoves(Piece),
    /// The piece belongs to another player.
    NotYourPiece {
        /// The piece.
        piece: Piece,
        /// Whose turn it is.
        turn: Player,
    },
    /// The piece does not move that way at all.
    NotThisPiecesMove(Piece),
    /// A king stays in its own palace.
    KingOutsidePalace,
    /// An advisor stays on the diagonals of its palace.
    AdvisorOutsidePalace,
    /// An elephant stays inside its camp.
    ElephantOutsideCamp,
    /// The 日 of the horse is not wholly on the board (a notch is in it, [R-1]).
    HorseOffBoard,
    /// A soldier may retreat only from beyond its 国境线.
    SoldierNoRetreat {
        /// The soldier's depth (4 = on its 防线, 5 = on its 国境线).
        depth: i32,
    },
    /// A piece stands in the way of a slider.
    PathBlocked(Point),
    /// A cannon captures only by jumping exactly one piece; this many stand between.
    CannonScreen(usize),
    /// On a player's first move a cannon must stay inside its camp.
    CannonFirstMove,
    /// The destination holds one of the mover's own pieces.
    OwnPiece(Piece),
    /// The destination holds a piece of the mover's ally.
    AllyPiece {
        /// The piece.
        piece: Piece,
        /// The ally.
        ally: Player,
    },
    /// Static 汉 chariots and cannon cannot be taken.
    HanCannotBeTaken(Piece),
    /// The emperor can be taken by a horse only.
    EmperorOnlyByHorse,
    /// Kings are never captured ([R-11]).
    KingNeverCaptured(Piece),
    /// The mover's king would stand in check by these players.
    KingAttacked(Players),
    /// The mover's king would face the other king (见面).
    KingsFace(Player),
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

fn player_name(p: Player) -> String {
    format!("{} ({})", p.letter(), p.colour().kingdom())
}

fn names(ps: Players) -> String {
    ps.iter().map(player_name).collect::<Vec<_>>().join(" and ")
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::GameOver => write!(f, "the game is over"),
            Reason::NotYourTurn { player, turn } => write!(
                f,
                "not your turn: {} is to move, not {}",
                player_name(*turn),
                player_name(*player)
            ),
            Reason::NoPiece(p) => write!(f, "there is no piece on {p}"),
            Reason::HanNeverMoves(pc) => {
                write!(f, "the static 汉 force never moves by itself ({pc} belongs to nobody)")
            }
            Reason::NotYourPiece { piece, turn } => write!(
                f,
                "not your piece: {piece} belongs to {}, and it is {}'s turn",
                piece.colour.player().map(player_name).unwrap_or_default(),
                player_name(*turn)
            ),
            Reason::NotThisPiecesMove(pc) => {
                let how = match pc.role {
                    Role::King => "a king steps one point along a line inside its palace",
                    Role::Advisor => "an advisor steps one point along a palace diagonal",
                    Role::Elephant => "an elephant moves one 田, two points diagonally (nothing blocks its eye)",
                    Role::Horse => "a horse moves one 日 (no leg can block it)",
                    Role::Chariot => "a chariot slides along a line",
                    Role::Cannon => "a cannon slides along a line and captures by jumping one piece",
                    Role::Soldier => "a soldier steps one point forward or sideways (backward only beyond its 国境线)",
                };
                write!(f, "not this piece's move: {how}")
            }
            Reason::KingOutsidePalace => write!(f, "a king may not leave its palace"),
            Reason::AdvisorOutsidePalace => write!(f, "an advisor may not leave the diagonals of its palace"),
            Reason::ElephantOutsideCamp => write!(f, "an elephant may not leave its camp (本国)"),
            Reason::HorseOffBoard => write!(
                f,
                "the horse's 日 must lie wholly on the board, and a corner notch cuts it (no leg blocks a horse, but the board does)"
            ),
            Reason::SoldierNoRetreat { depth } => match depth {
                4 => write!(f, "a soldier on its 防线 may move forward or sideways, never back"),
                5 => write!(
                    f,
                    "a soldier on its 国境线 may not retreat: it retreats at most onto its 国境线"
                ),
                _ => write!(f, "a soldier may not retreat behind its 国境线"),
            },
            Reason::PathBlocked(p) => write!(f, "blocked: a piece on {p} is in the way"),
            Reason::CannonScreen(0) => write!(
                f,
                "a cannon captures only by jumping exactly one piece, and none stands between"
            ),
            Reason::CannonScreen(n) => write!(
                f,
                "a cannon captures only by jumping exactly one piece, and {n} stand between"
            ),
            Reason::CannonFirstMove => write!(
                f,
                "on a player's first move a cannon may not leave its camp: it must stay inside the 国境线"
            ),
            Reason::OwnPiece(pc) => write!(f, "you cannot capture your own {}", pc.role.name()),
            Reason::AllyPiece { piece, ally } => write!(
                f,
                "allies may not capture each other: the {} belongs to your ally {}",
                piece.role.name(),
                player_name(*ally)
            ),
            Reason::HanCannotBeTaken(pc) => {
                write!(f, "the static 汉 {} cannot be taken", pc.role.name())
            }
            Reason::EmperorOnlyByHorse => write!(f, "the emperor 汉 can be taken only by a horse"),
            Reason::KingNeverCaptured(pc) => write!(
                f,
                "kings are never captured: the king of {} loses by 将死 or 困毙 at its turn",
                pc.colour.player().map(player_name).unwrap_or_default()
            ),
            Reason::KingAttacked(by) => write!(f, "would leave your king in check by {}", names(*by)),
            Reason::KingsFace(p) => write!(f, "would make your king face the king of {}", player_name(*p)),
        }
    }
}

/// Why `m` is not legal in `pos` (for a legal move: a generic answer).
pub fn explain(pos: &Position, m: Move) -> Reason {
    if pos.is_over() {
        return Reason::GameOver;
    }
    let s = pos.turn();
    let Some(pc) = pos.piece_at(m.from) else {
        return Reason::NoPiece(m.from);
    };
    if pc.colour == Colour::Y {
        return Reason::HanNeverMoves(pc);
    }
    if pc.colour != s.colour() {
        return Reason::NotYourPiece { piece: pc, turn: s };
    }
    if let Some(r) = geometry(pos, s, pc, m) {
        // A slider that could not get there anyway: if the point holds its own piece, say that.
        if let (Reason::PathBlocked(_) | Reason::CannonScreen(_), Some(t)) = (&r, pos.piece_at(m.to))
            && t.colour == s.colour()
        {
            return Reason::OwnPiece(t);
        }
        return r;
    }
    if let Some(t) = pos.piece_at(m.to) {
        if t.colour == s.colour() {
            return Reason::OwnPiece(t);
        }
        if t == Piece::EMPEROR {
            if pc.role != Role::Horse {
                return Reason::EmperorOnlyByHorse;
            }
        } else if t.colour == Colour::Y {
            return Reason::HanCannotBeTaken(t);
        } else if t.role == Role::King {
            return Reason::KingNeverCaptured(t);
        } else if let Some(ally) = t.colour.player().filter(|a| pos.allied(s, *a)) {
            return Reason::AllyPiece { piece: t, ally };
        }
    }
    if pc.role == Role::Cannon && pos.pending().contains(s) && !camp(s.colour()).contains(m.to) {
        return Reason::CannonFirstMove;
    }
    let mut after = *pos;
    after.apply_steps_1_to_3(s, m);
    if after.kings_face() && s != Player::G {
        let other = if s == Player::B { Player::R } else { Player::B };
        return Reason::KingsFace(other);
    }
    if !after.kings_face() && after.in_check(s) {
        let k = after.king(s).unwrap();
        let by: Players = after.enemies(s).iter().filter(|p| after.attacks(*p, k)).collect();
        return Reason::KingAttacked(by);
    }
    Reason::NotThisPiecesMove(pc)
}

/// The geometric part: is `m` a move of this piece at all, path included.
fn geometry(pos: &Position, s: Player, pc: Piece, m: Move) -> Option<Reason> {
    let t = tables();
    let (fx, fy) = m.from.xy();
    let (tx, ty) = m.to.xy();
    let (dx, dy) = (i32::from(tx) - i32::from(fx), i32::from(ty) - i32::from(fy));
    let has = |list: &[u8]| list.contains(&(m.to.index() as u8));
    let fi = m.from.index();
    let no = Some(Reason::NotThisPiecesMove(pc));
    match pc.role {
        Role::King => {
            if has(t.king[s.index()][fi].as_slice()) {
                None
            } else if dx.abs() + dy.abs() == 1 {
                Some(Reason::KingOutsidePalace)
            } else {
                no
            }
        }
        Role::Advisor => {
            if has(t.advisor[fi].as_slice()) {
                None
            } else if dx.abs() == 1 && dy.abs() == 1 {
                Some(Reason::AdvisorOutsidePalace)
            } else {
                no
            }
        }
        Role::Elephant => {
            if has(t.elephant[fi].as_slice()) {
                None
            } else if dx.abs() == 2 && dy.abs() == 2 {
                Some(Reason::ElephantOutsideCamp)
            } else {
                no
            }
        }
        Role::Horse => {
            if has(t.horse[fi].as_slice()) {
                None
            } else if (dx.abs() == 1 && dy.abs() == 2) || (dx.abs() == 2 && dy.abs() == 1) {
                Some(Reason::HorseOffBoard)
            } else {
                no
            }
        }
        Role::Soldier => {
            if has(t.soldier[s.index()][fi].as_slice()) {
                None
            } else if dx.abs() + dy.abs() == 1 {
                Some(Reason::SoldierNoRetreat {
                    depth: depth(s.colour(), m.from),
                })
            } else {
                no
            }
        }
        Role::Chariot | Role::Cannon => {
            if (dx != 0 && dy != 0) || (dx == 0 && dy == 0) {
                return no;
            }
            let (sx, sy) = (dx.signum(), dy.signum());
            let mut between = Vec::new();
            let (mut x, mut y) = (i32::from(fx) + sx, i32::from(fy) + sy);
            while (x, y) != (i32::from(tx), i32::from(ty)) {
                if !is_point(x, y) {
                    return no;
                }
                let p = Point::from_xy(x, y).unwrap();
                if pos.piece_at(p).is_some() {
                    between.push(p);
                }
                x += sx;
                y += sy;
            }
            let target = pos.piece_at(m.to);
            if pc.role == Role::Chariot || target.is_none() {
                between.first().map(|p| Reason::PathBlocked(*p))
            } else if between.len() != 1 {
                Some(Reason::CannonScreen(between.len()))
            } else {
                None
            }
        }
    }
}
