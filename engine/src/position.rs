//! Positions, move generation and legality (RULES §3–§5).

use std::fmt;

use arrayvec::ArrayVec;

use crate::board::{NUM_POINTS, Point, PointKind, PointSet, board};
use crate::piece::{Piece, Role, SETUP};
use crate::side::{Direction, Side, Sides};

/// A move: from a point to a point. Which piece moves and what it captures
/// follow from the position it is played in.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Move {
    /// Where the piece stands.
    pub from: Point,
    /// Where it goes.
    pub to: Point,
}

impl Move {
    /// A move from `from` to `to`.
    pub const fn new(from: Point, to: Point) -> Move {
        Move { from, to }
    }

    /// The move's text (`W72-W54`, as [`fmt::Display`] writes it), made
    /// without the formatting machinery: a server lists every legal move
    /// after every move. [`Move::parts`] gives its pieces without a string.
    pub fn text(&self) -> String {
        self.parts().concat()
    }

    /// The move's text in three pieces (`W72`, `-`, `W54`), each from the
    /// points' small table of names: a list of moves is written from them
    /// without a string per move. (A table of every (from, to) text, ~390 KB,
    /// took as many instructions but missed the caches: 3.8 % of a busy
    /// server's CPU against 0.8 % this way; docs/CAPACITY.md, issue 15's
    /// sixth pass.)
    #[inline]
    pub fn parts(&self) -> [&'static str; 3] {
        [self.from.name(), "-", self.to.name()]
    }
}

impl fmt::Display for Move {
    /// `W72-W54`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.from.name())?;
        f.write_str("-")?;
        f.write_str(self.to.name())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Upper bound on the moves of one side in any position (18 pieces; the
/// sliders dominate). Checked by a debug assertion in the generator.
pub const MAX_MOVES: usize = 512;

/// A fixed-capacity list of moves: move generation never allocates.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

/// Why a side left the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// No legal move at its turn; `in_check` tells 将死 (true) from 困毙 (false).
    Mate {
        /// Whether the side was in check.
        in_check: bool,
    },
    /// Its king was captured (猝死).
    SuddenDeath,
}

/// A side leaving the game during a move or a removal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Elimination {
    /// Who left.
    pub side: Side,
    /// Why.
    pub cause: Cause,
}

/// What a move did, beyond moving a piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The side that moved.
    pub mover: Side,
    /// The piece that moved.
    pub piece: Piece,
    /// The piece captured, if any.
    pub captured: Option<Piece>,
    /// The sides this move gave check to (RULES §4).
    pub checks: Sides,
    /// Whether the move provoked the mover's target (capture of its piece or check).
    pub provoked: bool,
    /// Sides eliminated as a consequence, in order: a captured king, then
    /// sides left without a legal move at their turn.
    pub eliminated: ArrayVec<Elimination, 2>,
}

#[inline]
const fn pair_bit(a: Side, b: Side) -> u16 {
    1 << (a as u16 * 3 + b as u16)
}

const KING_CODE: u8 = Role::King as u8 + 1;
const CHARIOT_CODE: u8 = Role::Chariot as u8 + 1;
const CANNON_CODE: u8 = Role::Cannon as u8 + 1;
const SOLDIER_CODE: u8 = Role::Soldier as u8 + 1;

/// An unvalidated position: anything that parses. It becomes a [`Position`]
/// only through [`Position::from_setup`], which checks the invariants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The piece on each point, by point index.
    pub board: [Option<Piece>; NUM_POINTS],
    /// The side to move.
    pub turn: Side,
    /// The sides still in the game.
    pub live: Sides,
    /// `(a, b)`: a holds the retaliation right against b (`R:ab`).
    pub retaliation: Vec<(Side, Side)>,
    /// `(a, b)`: a standing retaliation check by a on b (`S:ab`).
    pub standing: Vec<(Side, Side)>,
    /// No king may be captured this turn (`N`).
    pub no_king_capture: bool,
    /// The direction of play.
    pub direction: Direction,
}

impl Setup {
    /// The initial position (RULES §3) with the given direction of play.
    pub fn initial(direction: Direction) -> Setup {
        let mut board = [None; NUM_POINTS];
        for side in Side::ALL {
            for (role, file, rank) in SETUP {
                board[Point::rect(side, file, rank).index()] = Some(Piece { side, role });
            }
        }
        Setup {
            board,
            turn: Side::W,
            live: Sides::ALL,
            retaliation: Vec::new(),
            standing: Vec::new(),
            no_king_capture: false,
            direction,
        }
    }
}

/// Why a [`Setup`] is not a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// No side is live.
    #[error("no side is live")]
    NoLiveSide,
    /// The side to move has been eliminated.
    #[error("side to move {0} is not live")]
    TurnNotLive(Side),
    /// An eliminated side still has pieces.
    #[error("eliminated side {side} has a piece on {point}")]
    PieceOfEliminatedSide {
        /// The eliminated side.
        side: Side,
        /// Where its piece stands.
        point: Point,
    },
    /// A live side has no king or more than one.
    #[error("live side {side} has {count} kings")]
    KingCount {
        /// The side.
        side: Side,
        /// How many kings it has.
        count: usize,
    },
    /// A retaliation flag that cannot arise.
    #[error("flag {flag}: {reason}")]
    BadFlag {
        /// The flag as written.
        flag: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A legal game position: placement, side to move, live sides, the
/// retaliation right, standing checks, the no-king-capture flag and the
/// direction of play.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    squares: [u8; NUM_POINTS],
    by_side: [PointSet; 3],
    kings: [Option<Point>; 3],
    turn: Side,
    live: Sides,
    retaliation: u16,
    standing: u16,
    no_king_capture: bool,
    direction: Direction,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", crate::notation::format_position(self))
    }
}

impl Default for Position {
    fn default() -> Self {
        Position::initial(Direction::Ccw)
    }
}

impl Position {
    /// The initial position (RULES §3) with the given direction of play.
    pub fn initial(direction: Direction) -> Position {
        Position::from_setup(&Setup::initial(direction)).expect("the initial position is valid")
    }

    /// Checks a setup's invariants and builds the position.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        if setup.live.count() == 0 {
            return Err(PositionError::NoLiveSide);
        }
        if !setup.live.contains(setup.turn) {
            return Err(PositionError::TurnNotLive(setup.turn));
        }
        let mut pos = Position {
            squares: [0; NUM_POINTS],
            by_side: [PointSet::EMPTY; 3],
            kings: [None; 3],
            turn: setup.turn,
            live: setup.live,
            retaliation: 0,
            standing: 0,
            no_king_capture: setup.no_king_capture,
            direction: setup.direction,
        };
        let mut king_count = [0usize; 3];
        for p in Point::all() {
            if let Some(piece) = setup.board[p.index()] {
                if !setup.live.contains(piece.side) {
                    return Err(PositionError::PieceOfEliminatedSide {
                        side: piece.side,
                        point: p,
                    });
                }
                // A king may stand outside its palace: it got there by a flying capture (照面).
                if piece.role == Role::King {
                    king_count[piece.side.index()] += 1;
                    pos.kings[piece.side.index()] = Some(p);
                }
                pos.squares[p.index()] = piece.code();
                pos.by_side[piece.side.index()].insert(p);
            }
        }
        for s in setup.live.iter() {
            if king_count[s.index()] != 1 {
                return Err(PositionError::KingCount {
                    side: s,
                    count: king_count[s.index()],
                });
            }
        }
        let check_pair = |kind: char, a: Side, b: Side| -> Result<u16, PositionError> {
            let flag = format!("{kind}:{a}{b}");
            let bad = |reason| {
                Err(PositionError::BadFlag {
                    flag: flag.clone(),
                    reason,
                })
            };
            if setup.live.count() != 3 {
                return bad("retaliation exists only while three sides are live");
            }
            if setup.direction.prev(a) != b {
                return bad("it holds only against the side that moves just before");
            }
            Ok(pair_bit(a, b))
        };
        for &(a, b) in &setup.retaliation {
            pos.retaliation |= check_pair('R', a, b)?;
        }
        for &(a, b) in &setup.standing {
            pos.standing |= check_pair('S', a, b)?;
        }
        if setup.live.count() == 1 {
            pos.turn = setup.live.iter().next().unwrap();
        }
        Ok(pos)
    }

    /// The position as an unvalidated setup.
    pub fn to_setup(&self) -> Setup {
        let mut board = [None; NUM_POINTS];
        for p in Point::all() {
            board[p.index()] = self.piece_at(p);
        }
        Setup {
            board,
            turn: self.turn,
            live: self.live,
            retaliation: self.retaliation_pairs().collect(),
            standing: self.standing_pairs().collect(),
            no_king_capture: self.no_king_capture,
            direction: self.direction,
        }
    }

    /// The piece on `p`.
    #[inline]
    pub fn piece_at(&self, p: Point) -> Option<Piece> {
        let c = self.squares[p.index()];
        (c != 0).then(|| Piece::from_code(c))
    }

    /// The code of the piece on `p` ([`Piece::code`]; 0 for none).
    #[inline]
    pub(crate) fn code_at(&self, p: Point) -> u8 {
        self.squares[p.index()]
    }

    /// The points holding pieces of `side`.
    #[inline]
    pub fn pieces_of(&self, side: Side) -> PointSet {
        self.by_side[side.index()]
    }

    /// All pieces, by point index.
    pub fn pieces(&self) -> impl Iterator<Item = (Point, Piece)> + '_ {
        Point::all().filter_map(|p| self.piece_at(p).map(|pc| (p, pc)))
    }

    /// Where `side`'s king stands (`None` once eliminated).
    #[inline]
    pub fn king(&self, side: Side) -> Option<Point> {
        self.kings[side.index()]
    }

    /// The side to move.
    #[inline]
    pub fn turn(&self) -> Side {
        self.turn
    }

    /// The sides still in the game.
    #[inline]
    pub fn live(&self) -> Sides {
        self.live
    }

    /// The live sides in turn order starting from W (notation field 3).
    pub fn live_in_order(&self) -> impl Iterator<Item = Side> + '_ {
        let d = self.direction;
        [Side::W, d.next(Side::W), d.next(d.next(Side::W))]
            .into_iter()
            .filter(move |s| self.live.contains(*s))
    }

    /// The direction of play.
    #[inline]
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Whether the game is over on the board (at most one side live).
    #[inline]
    pub fn is_over(&self) -> bool {
        self.live.count() <= 1
    }

    /// `target(s)` among the live sides: the live side that moves right after `s`.
    pub fn next_live_after(&self, s: Side) -> Side {
        let d = self.direction;
        let a = d.next(s);
        if self.live.contains(a) {
            return a;
        }
        let b = d.next(a);
        if self.live.contains(b) { b } else { s }
    }

    /// Whether `a` holds the retaliation right against `b` (`R:ab`).
    #[inline]
    pub fn has_retaliation_right(&self, a: Side, b: Side) -> bool {
        self.retaliation & pair_bit(a, b) != 0
    }

    /// Whether `a` has a standing retaliation check on `b` (`S:ab`).
    #[inline]
    pub fn has_standing_check(&self, a: Side, b: Side) -> bool {
        self.standing & pair_bit(a, b) != 0
    }

    /// Whether capturing a king is forbidden this turn (`N`).
    #[inline]
    pub fn no_king_capture(&self) -> bool {
        self.no_king_capture
    }

    /// The retaliation rights `(holder, against)`, ordered by holder then victim.
    pub fn retaliation_pairs(&self) -> impl Iterator<Item = (Side, Side)> + '_ {
        all_pairs().filter(|&(a, b)| self.has_retaliation_right(a, b))
    }

    /// The standing checks `(by, on)`, ordered.
    pub fn standing_pairs(&self) -> impl Iterator<Item = (Side, Side)> + '_ {
        all_pairs().filter(|&(a, b)| self.has_standing_check(a, b))
    }

    /// hostile(s → t) for the side to move `s` (RULES §4).
    #[inline]
    pub fn hostile(&self, s: Side, t: Side) -> bool {
        if s == t || !self.live.contains(t) {
            return false;
        }
        if self.live.count() < 3 {
            return true;
        }
        t == self.direction.next(s) || self.has_retaliation_right(s, t)
    }

    /// Whether the side to move is in check (RULES §4): attacked by its
    /// threat (phase 3) or the opponent (phase 2), or under a standing
    /// retaliation check.
    pub fn is_check(&self) -> bool {
        self.in_check(self.turn)
    }

    /// The live sides in check now (each by [`Position::is_check`]'s rule,
    /// as if it were to move): what a board shows after any move or reload.
    pub fn checked(&self) -> Sides {
        let mut out = Sides::EMPTY;
        for s in self.live.iter() {
            if self.in_check(s) {
                out.insert(s);
            }
        }
        out
    }

    fn in_check(&self, s: Side) -> bool {
        let Some(k) = self.king(s) else { return false };
        if self.live.count() == 3 {
            let thr = self.direction.prev(s);
            let tgt = self.direction.next(s);
            self.attacked_by(k, thr) || self.has_standing_check(tgt, s)
        } else {
            self.live.iter().any(|o| o != s && self.attacked_by(k, o))
        }
    }

    /// Whether a piece of `by` attacks point `k`: could capture there by its
    /// move rule, hostility aside; a king also attacks a king it sees (照面).
    ///
    /// Every attacker is a piece of `by`: a ray, the starts of the horse and
    /// elephant moves onto `k`, or the points a step away that hold none of
    /// `by`'s pieces attack with nothing, and a test of sets says so without
    /// reading the squares.
    pub fn attacked_by(&self, k: Point, by: Side) -> bool {
        let fast = self.attacked_by_with(k, by, true);
        // Every test run checks the sets' shortcut against reading every square.
        debug_assert_eq!(fast, self.attacked_by_with(k, by, false), "{self:?}: {k} by {by}");
        fast
    }

    /// [`Position::attacked_by`]; `sets: false` reads every square, without
    /// the shortcut of the sets.
    #[inline]
    fn attacked_by_with(&self, k: Point, by: Side, sets: bool) -> bool {
        let b = board();
        let sq = &self.squares;
        let theirs = self.by_side[by.index()];
        let may = |set: &PointSet| !sets || theirs.intersects(set);
        let a = RayAttackers::new(self, k, by);
        for (ray, set) in b.rays(k).iter().zip(b.ray_sets(k)) {
            if may(set) && self.ray_attacks(&a, b.ray_points(ray)) {
                return true;
            }
        }
        if may(b.step_sources(k)) && self.steps_attack(k, by, None) {
            return true;
        }
        if !may(b.adjacent(k)) {
            return self.pivot_attack(k, by);
        }
        let code = |r: Role| Piece { side: by, role: r }.code();
        let prince = code(Role::Prince);
        for &q in b.neighbours(k).iter().chain(b.diagonals(k)) {
            if sq[q.index()] == prince {
                return true;
            }
        }
        if b.king_region(by).contains(k) {
            let king = a.king;
            let (consort, advisor) = (code(Role::Consort), code(Role::Advisor));
            for &q in b.neighbours(k) {
                let c = sq[q.index()];
                if (c == consort || c == king) && b.king_region(by).contains(q) {
                    return true;
                }
            }
            let in_palace = b.palace(by).contains(k);
            for &q in b.drawn_diagonals(k) {
                let c = sq[q.index()];
                if (c == consort && b.king_region(by).contains(q)) || (c == advisor && in_palace) {
                    return true;
                }
            }
        }
        self.pivot_attack(k, by)
    }

    /// [`Position::attacked_by`] after a move `m` (played on `self`) that
    /// neither moved nor took a king, when `a.by` did not attack `a.k` before
    /// it. Only what the move can have opened is looked at: the rays from
    /// `a.k` it `touched` (bit `i`: the `i`-th of `board().rays(k)`, see
    /// [`Safety::touched`]), a horse's leg or an elephant's eye it emptied
    /// ([`STEPS_OPENED`]), and the kings' view through O when it emptied a
    /// point that can open it ([`PIVOT_OPENED`]; filling one only closes
    /// views). Pieces of `by` did not move; on an untouched ray the first two
    /// pieces, and what lies before them, are as they were.
    fn attacked_after(&self, a: &RayAttackers, m: Move, touched: u8) -> bool {
        let b = board();
        // As in `attacked_by`: only where `by` has a piece.
        let theirs = self.by_side[a.by.index()];
        if touched & RAY_BITS != 0 {
            for (i, (ray, set)) in b.rays(a.k).iter().zip(b.ray_sets(a.k)).enumerate() {
                if touched & (1 << i) != 0 && theirs.intersects(set) && self.ray_attacks(a, b.ray_points(ray)) {
                    return true;
                }
            }
        }
        (touched & STEPS_OPENED != 0
            && theirs.intersects(b.step_sources(a.k))
            && self.steps_attack(a.k, a.by, Some(m.from)))
            || (touched & PIVOT_OPENED != 0 && self.pivot_attack(a.k, a.by))
    }

    /// Whether a horse of `by` attacks `k` over an empty leg, or an elephant
    /// over an empty eye; with `opened`, only through that leg or eye.
    #[inline]
    fn steps_attack(&self, k: Point, by: Side, opened: Option<Point>) -> bool {
        if opened.is_some_and(|o| !board().king_steps(k).contains(o)) {
            return false;
        }
        let sq = &self.squares;
        self.steps_attack_through(k, by, |p| opened.is_none_or(|o| o == p) && sq[p.index()] == 0)
    }

    /// Whether emptying the leg or eye `p` toward `k` lets a horse or an
    /// elephant of `by` attack `k` (whatever now stands on `p`).
    fn steps_attack_without(&self, k: Point, by: Side, p: Point) -> bool {
        self.steps_attack_through(k, by, |q| q == p)
    }

    /// Whether a horse or an elephant of `by` attacks `k` through a leg or
    /// an eye that `through` lets pass.
    #[inline]
    fn steps_attack_through(&self, k: Point, by: Side, through: impl Fn(Point) -> bool) -> bool {
        let b = board();
        let sq = &self.squares;
        let horse = Piece {
            side: by,
            role: Role::Horse,
        }
        .code();
        if b.ri_to(k).iter().any(|r| through(r.leg) && sq[r.from.index()] == horse) {
            return true;
        }
        let elephant = Piece {
            side: by,
            role: Role::Elephant,
        }
        .code();
        self.elephant_region(by).contains(k)
            && b.tian_to(k)
                .iter()
                .any(|t| through(t.eye) && sq[t.from.index()] == elephant)
    }

    /// For a calm node (see [`Safety::calm`]): the points of the mover's
    /// pieces whose leaving may open an attack on its king `k` (a first or
    /// second piece of a ray from `k` that something stands behind, a leg or
    /// eye toward `k` a horse or elephant waits at, and every point that can
    /// open the view through O), and the points whose filling puts a screen
    /// before a cannon of another side that is first on its ray. A move that
    /// leaves none of the first, fills none of the second and does not touch
    /// one ray at both ends opens nothing (see [`Position::is_legal_in`]).
    fn openings(
        &self,
        k: Point,
        rays: &[PointSet; MAX_RAYS],
        (thr, tgt): (&RayAttackers, &RayAttackers),
        steps: PointSet,
        pivot_lines: PointSet,
    ) -> (PointSet, PointSet) {
        let b = board();
        let sq = &self.squares;
        let own = sq[k.index()] >> 4;
        let mut opening = pivot_lines;
        let mut screens = PointSet::EMPTY;
        for (ray, stretch) in b.rays(k).iter().zip(rays) {
            if stretch.is_empty() {
                continue;
            }
            let pts = b.ray_points(ray);
            // The first three pieces on the ray: (index, code).
            let mut first = [(usize::MAX, 0u8); 3];
            let mut n = 0;
            for (j, &q) in pts.iter().enumerate() {
                let c = sq[q.index()];
                if c != 0 {
                    first[n] = (j, c);
                    n += 1;
                    if n == 3 {
                        break;
                    }
                }
            }
            let theirs = |c: u8| c != 0 && c >> 4 != own;
            let role = |c: u8| c & 15;
            let cannon_behind = |i: usize| i < n && theirs(first[i].1) && role(first[i].1) == CANNON_CODE;
            if n == 0 {
                continue;
            }
            let (j1, c1) = first[0];
            if theirs(c1) {
                if role(c1) == CANNON_CODE {
                    pts[..j1].iter().for_each(|&e| screens.insert(e));
                }
            } else {
                // Leaving the first piece: the second acts first (a
                // soldier's step is left to the ray's own test), the third
                // as a cannon.
                let c2 = first[1].1;
                let opens = n > 1
                    && theirs(c2)
                    && match role(c2) {
                        KING_CODE | CHARIOT_CODE => true,
                        SOLDIER_CODE => {
                            self.ray_attacks_without(thr, pts, pts[j1]) || self.ray_attacks_without(tgt, pts, pts[j1])
                        }
                        _ => false,
                    };
                if opens || cannon_behind(2) {
                    opening.insert(pts[j1]);
                }
            }
            // Leaving the second piece: the third becomes the cannon's place.
            if n > 1 && !theirs(first[1].1) && cannon_behind(2) {
                opening.insert(pts[first[1].0]);
            }
        }
        for p in steps.iter() {
            let c = sq[p.index()];
            if c != 0
                && c >> 4 == own
                && (self.steps_attack_without(k, thr.by, p) || self.steps_attack_without(k, tgt.by, p))
            {
                opening.insert(p);
            }
        }
        (opening, screens)
    }

    /// Whether a piece of `by` on the ray `pts` (from `k` outward) attacks
    /// `k`: a chariot or king (照面) first, a soldier a step away (two, across
    /// an empty point, in phase 2), a cannon second.
    #[inline]
    fn ray_attacks(&self, a: &RayAttackers, pts: &[Point]) -> bool {
        let sq = &self.squares;
        Self::ray_attacks_on(a, pts, |q| sq[q.index()])
    }

    /// [`Position::ray_attacks`] were the point `gone` empty.
    fn ray_attacks_without(&self, a: &RayAttackers, pts: &[Point], gone: Point) -> bool {
        let sq = &self.squares;
        Self::ray_attacks_on(a, pts, |q| if q == gone { 0 } else { sq[q.index()] })
    }

    /// [`Position::ray_attacks`] on the squares `at` gives.
    #[inline]
    fn ray_attacks_on(a: &RayAttackers, pts: &[Point], at: impl Fn(Point) -> u8) -> bool {
        let b = board();
        let by = a.by;
        let (chariot, cannon, soldier, king, zone, k_in_zone, phase2) =
            (a.chariot, a.cannon, a.soldier, a.king, a.zone, a.k_in_zone, a.phase2);
        let k = a.k;
        let mut i = 0;
        // First piece: chariot, king (facing), soldier one step away.
        while i < pts.len() && at(pts[i]) == 0 {
            i += 1;
        }
        if i == pts.len() {
            return false;
        }
        let c = at(pts[i]);
        if c == chariot || c == king {
            return true;
        }
        if c == soldier && !k_in_zone {
            let s = pts[i];
            if i == 0 {
                if !zone.contains(s) || b.forward(s, by) == Some(k) {
                    return true;
                }
            } else if i == 1 && phase2 {
                let mid = pts[0];
                if !zone.contains(mid) && (!zone.contains(s) || b.forward(s, by) == Some(mid)) {
                    return true;
                }
            }
        }
        // Second piece: cannon.
        i += 1;
        while i < pts.len() && at(pts[i]) == 0 {
            i += 1;
        }
        i < pts.len() && at(pts[i]) == cannon
    }

    /// Kings facing through O (枢轴线): the king of `by` sees a king on `k`.
    fn pivot_attack(&self, k: Point, by: Side) -> bool {
        let sq = &self.squares;
        if let Some(kb) = self.king(by)
            && sq[k.index()] != 0
            && Piece::from_code(sq[k.index()]).role == Role::King
        {
            let owner = Piece::from_code(sq[k.index()]).side;
            if self.pivot_clear(k, owner) && self.pivot_clear(kb, by) {
                return true;
            }
        }
        false
    }

    /// Whether the king of `side` on `k` stands on its own file 5 with every
    /// point between it and `O`, and `O` itself, empty.
    fn pivot_clear(&self, k: Point, side: Side) -> bool {
        let PointKind::Rect { side: s, file: 5, rank } = k.kind() else {
            return false;
        };
        if s != side || self.squares[Point::O.index()] != 0 {
            return false;
        }
        (rank + 1..=6).all(|r| self.squares[Point::rect(s, 5, r).index()] == 0)
    }

    /// The points whose emptying can open a view through O from `side`'s
    /// king on `k` (the moves of any piece but that king): none when the
    /// king is off its file 5 or two pieces stand between it and O (or on
    /// O), the one piece when one does, and else every file 5 (the other
    /// king's line).
    fn pivot_openers(&self, k: Point, side: Side) -> PointSet {
        let PointKind::Rect { side: s, file: 5, rank } = k.kind() else {
            return PointSet::EMPTY;
        };
        if s != side {
            return PointSet::EMPTY;
        }
        let mut between = (rank + 1..=6)
            .map(|r| Point::rect(s, 5, r))
            .chain([Point::O])
            .filter(|p| self.squares[p.index()] != 0);
        match (between.next(), between.next()) {
            (None, _) => board().pivot_lines(),
            (Some(p), None) => [p].into_iter().collect(),
            (Some(_), Some(_)) => PointSet::EMPTY,
        }
    }

    /// Whether `side`'s king sees another king (照面): along a clear line, or
    /// both on their own file 5 through an empty `O`.
    fn king_faces_any(&self, side: Side) -> bool {
        self.king(side).is_some_and(|k| self.faces_along(side, k, u8::MAX))
    }

    /// Whether `side`'s king on `k` sees a king first along one of the rays
    /// from `k` that `rays` names (bit `i`: the `i`-th of `board().rays(k)`),
    /// or through O.
    fn faces_along(&self, side: Side, k: Point, rays: u8) -> bool {
        let b = board();
        for (i, ray) in b.rays(k).iter().enumerate() {
            if rays & (1 << i) != 0
                && let Some(&q) = b.ray_points(ray).iter().find(|q| self.squares[q.index()] != 0)
                && self.squares[q.index()] & 15 == KING_CODE
            {
                return true;
            }
        }
        self.pivot_clear(k, side)
            && self
                .live
                .iter()
                .any(|o| o != side && self.pivot_clear(self.kings[o.index()].unwrap(), o))
    }

    /// Whether the kings of `a` and `b` see each other (照面).
    pub(crate) fn faces(&self, a: Side, b: Side) -> bool {
        let (Some(ka), Some(kb)) = (self.king(a), self.king(b)) else {
            return false;
        };
        let bd = board();
        for ray in bd.rays(ka) {
            for &q in bd.ray_points(ray) {
                if self.squares[q.index()] != 0 {
                    if q == kb {
                        return true;
                    }
                    break;
                }
            }
        }
        self.pivot_clear(ka, a) && self.pivot_clear(kb, b)
    }

    /// Where `side`'s elephants may land (RULES §3): own rectangle in phase 3;
    /// in phase 2 also the opponent's rectangle and every fan point.
    #[inline]
    fn elephant_region(&self, side: Side) -> PointSet {
        let b = board();
        let own = b.rectangle(side);
        if self.live.count() < 3 {
            let mut r = own.union(b.fans());
            for o in self.live.iter() {
                r = r.union(b.rectangle(o));
            }
            r
        } else {
            own
        }
    }

    /// Pseudo-legal moves of the side to move: by the piece rules of §3 and
    /// hostility of §4, before the king-safety conditions; in canonical
    /// order (ascending from index, then to index).
    pub fn pseudo_legal_moves(&self, moves: &mut MoveList) {
        moves.clear();
        if self.is_over() {
            return;
        }
        let s = self.turn;
        let b = board();
        let sq = &self.squares;
        let mut hostile_mask = 0u8;
        for t in Side::ALL {
            if self.hostile(s, t) {
                hostile_mask |= 1 << t as u8;
            }
        }
        let kings_ok = !self.no_king_capture;
        let target_ok = |q: Point| -> bool {
            let c = sq[q.index()];
            c == 0 || (hostile_mask & (1 << (c >> 4)) != 0 && (kings_ok || c & 15 != KING_CODE))
        };
        let capturable = |c: u8| hostile_mask & (1 << (c >> 4)) != 0 && (kings_ok || c & 15 != KING_CODE);
        // The points no move of `s` may end on: its own pieces, those of the
        // sides it may not take, and the kings when no king may be taken.
        let mut barred = PointSet::EMPTY;
        for t in Side::ALL {
            if hostile_mask & (1 << t as u8) == 0 {
                barred = barred.union(self.by_side[t.index()]);
            } else if !kings_ok && let Some(k) = self.kings[t.index()] {
                barred.insert(k);
            }
        }
        let open = |q: Point| -> bool {
            let ok = !barred.contains(q);
            debug_assert_eq!(ok, target_ok(q), "{self:?}: {q}");
            ok
        };
        let phase2 = self.live.count() < 3;

        for from in self.by_side[s.index()].iter() {
            let role = Piece::from_code(sq[from.index()]).role;
            // A piece's destinations gathered as a set come out by index:
            // the list is in canonical order as it is made.
            let mut dests = PointSet::EMPTY;
            let mut push = |to: Point| dests.insert(to);
            match role {
                Role::King => dests = b.step_dests(0, s, from).difference(barred),
                Role::Consort => dests = b.step_dests(1, s, from).difference(barred),
                Role::Advisor => dests = b.step_dests(2, s, from).difference(barred),
                Role::Prince => dests = b.step_dests(3, s, from).difference(barred),
                Role::Elephant => {
                    let region = self.elephant_region(s);
                    for t in b.tian_from(from) {
                        if sq[t.eye.index()] == 0 && region.contains(t.to) && open(t.to) {
                            push(t.to);
                        }
                    }
                }
                Role::Horse => {
                    for r in b.ri_from(from) {
                        if sq[r.leg.index()] == 0 && r.to != Point::O && open(r.to) {
                            push(r.to);
                        }
                    }
                }
                Role::Chariot => {
                    for ray in b.rays(from) {
                        let nf = ray.new_from();
                        for (i, &q) in b.ray_points(ray).iter().enumerate() {
                            let c = sq[q.index()];
                            if c == 0 {
                                if i >= nf {
                                    push(q);
                                }
                            } else {
                                if i >= nf && open(q) {
                                    push(q);
                                }
                                break;
                            }
                        }
                    }
                }
                Role::Cannon => {
                    for ray in b.rays(from) {
                        let nf = ray.new_from();
                        let mut screened = false;
                        for (i, &q) in b.ray_points(ray).iter().enumerate() {
                            let c = sq[q.index()];
                            if !screened {
                                if c == 0 {
                                    if i >= nf {
                                        push(q);
                                    }
                                } else {
                                    screened = true;
                                }
                            } else if c != 0 {
                                if i >= nf && open(q) {
                                    push(q);
                                }
                                break;
                            }
                        }
                    }
                }
                Role::Soldier if !phase2 => dests = b.soldier_steps(s, from).difference(barred),
                Role::Soldier => {
                    let zone = b.no_soldier_zone(s);
                    let fwd = if zone.contains(from) { b.forward(from, s) } else { None };
                    let in_zone = zone.contains(from);
                    for ray in b.rays(from) {
                        let pts = b.ray_points(ray);
                        let q1 = pts[0];
                        if (in_zone && Some(q1) != fwd) || zone.contains(q1) {
                            continue;
                        }
                        let nf = ray.new_from();
                        if nf == 0 && open(q1) {
                            push(q1);
                        }
                        if phase2 && sq[q1.index()] == 0 && pts.len() > 1 && nf <= 1 {
                            let q2 = pts[1];
                            if !zone.contains(q2) && open(q2) {
                                push(q2);
                            }
                        }
                    }
                }
            }
            dests.iter().for_each(|to| moves.push(Move { from, to }));
        }

        // Flying king captures (照面): the king takes a king it sees. Each
        // goes in its place in the order (a capture along a line is listed
        // even if it is also a step, as it always was; one through O only
        // if it is not listed yet). Seldom any.
        if kings_ok && let Some(k) = self.king(s) {
            // Only a ray holding a king it may take can give one.
            let mut prey = PointSet::EMPTY;
            for t in Side::ALL {
                if hostile_mask & (1 << t as u8) != 0
                    && let Some(kt) = self.kings[t.index()]
                {
                    prey.insert(kt);
                }
            }
            for (ray, set) in b.rays(k).iter().zip(b.ray_sets(k)) {
                if !set.intersects(&prey) {
                    continue;
                }
                let nf = ray.new_from();
                for (i, &q) in b.ray_points(ray).iter().enumerate() {
                    let c = sq[q.index()];
                    if c != 0 {
                        if i >= nf && c & 15 == KING_CODE && capturable(c) {
                            insert_in_order(moves, Move { from: k, to: q });
                        }
                        break;
                    }
                }
            }
            if self.pivot_clear(k, s) {
                for t in self.live.iter() {
                    if t != s && self.hostile(s, t) {
                        let kt = self.kings[t.index()].unwrap();
                        let m = Move { from: k, to: kt };
                        if self.pivot_clear(kt, t) && !moves.contains(&m) {
                            insert_in_order(moves, m);
                        }
                    }
                }
            }
        }
        debug_assert!(moves.is_sorted(), "{self:?}: {moves:?}");
    }

    /// Legal moves of the side to move, in canonical order (ascending from
    /// index, then to index).
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::new();
        self.pseudo_legal_moves(&mut moves);
        let ctx = self.safety();
        // In canonical order as generated; `retain` keeps the order.
        moves.retain(|m| self.is_legal_in(*m, &ctx));
        moves
    }

    /// [`Position::legal_moves`] written into `out` (cleared first), a
    /// buffer the caller keeps, so that no list of [`MAX_MOVES`] moves is
    /// copied on its way there; `known`, see [`Position::safety`].
    fn legal_moves_into(&self, known: Option<bool>, out: &mut Vec<Move>) {
        let mut moves = MoveList::new();
        self.pseudo_legal_moves(&mut moves);
        let ctx = self.safety_knowing(known);
        out.clear();
        // In canonical order as generated.
        out.extend(moves.iter().copied().filter(|m| self.is_legal_in(*m, &ctx)));
    }

    /// Number of legal moves of the side to move.
    pub fn count_legal_moves(&self) -> usize {
        let mut moves = MoveList::new();
        self.pseudo_legal_moves(&mut moves);
        let ctx = self.safety();
        moves.iter().filter(|m| self.is_legal_in(**m, &ctx)).count()
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        let mut moves = MoveList::new();
        self.pseudo_legal_moves(&mut moves);
        let ctx = self.safety();
        moves.iter().any(|m| self.is_legal_in(*m, &ctx))
    }

    /// Whether `m` is legal for the side to move.
    pub fn is_legal(&self, m: Move) -> bool {
        let Some(piece) = self.piece_at(m.from) else {
            return false;
        };
        if piece.side != self.turn || self.is_over() {
            return false;
        }
        let mut moves = MoveList::new();
        self.pseudo_legal_moves(&mut moves);
        moves.contains(&m) && self.is_pseudo_legal_move_legal(m)
    }

    /// What the king-safety test of every move of this node shares: the
    /// mover's king and whether it is attacked or facing before any move.
    fn safety(&self) -> Safety {
        self.safety_knowing(None)
    }

    /// [`Position::safety`], with whether the king is attacked by its threat
    /// when the caller knows it (`known`; a debug assertion checks it).
    fn safety_knowing(&self, known: Option<bool>) -> Safety {
        let s = self.turn;
        let king = self.kings[s.index()].unwrap_or(Point::O);
        let d = self.direction;
        let (thr, tgt) = if self.live.count() == 3 {
            (d.prev(s), d.next(s))
        } else {
            let o = self.next_live_after(s);
            (o, o)
        };
        let live = self.kings[s.index()].is_some() && self.live.count() >= 2;
        let (sensitive, rays) = if live {
            self.king_sensitive(king)
        } else {
            (PointSet::EMPTY, [PointSet::EMPTY; MAX_RAYS])
        };
        let steps = *board().king_steps(king);
        let pivot_lines = self.pivot_openers(king, s);
        let mut touch = [0; NUM_POINTS];
        for (i, set) in rays.iter().enumerate() {
            set.iter().for_each(|p| touch[p.index()] |= 1 << i);
        }
        steps.iter().for_each(|p| touch[p.index()] |= STEPS_OPENED);
        pivot_lines.iter().for_each(|p| touch[p.index()] |= PIVOT_OPENED);
        let attacked_thr = live
            && match known {
                Some(k) => {
                    debug_assert_eq!(k, self.attacked_by(king, thr), "{self:?}");
                    k
                }
                None => self.attacked_by(king, thr),
            };
        let attacked_tgt = live && self.attacked_by(king, tgt);
        let facing = live && self.king_faces_any(s);
        // (As everywhere in the shortcut, a king on O, which no play
        // reaches, is left to the full computation.)
        let calm = live && king != Point::O && !attacked_thr && !attacked_tgt && !facing;
        let ray_thr = RayAttackers::new(self, king, thr);
        let ray_tgt = RayAttackers::new(self, king, tgt);
        let (opening, screens) = if calm {
            self.openings(king, &rays, (&ray_thr, &ray_tgt), steps, pivot_lines)
        } else {
            (PointSet::EMPTY, PointSet::EMPTY)
        };
        // Attacked by its target alone: see `TargetOnly`. (A king on O is
        // left to the full computation.)
        let tgt_only = (live && king != Point::O && self.live.count() == 3 && attacked_tgt && !attacked_thr && !facing)
            .then(|| {
                let kt = self.kings[tgt.index()].unwrap();
                TargetOnly {
                    standing: self.has_standing_check(tgt, s),
                    stake: self.attack_stake(kt, s),
                    checks: self.attacked_by(kt, s),
                }
            });
        Safety {
            king,
            tgt,
            attacked_thr,
            attacked_tgt,
            facing,
            calm,
            sensitive,
            opening,
            screens,
            rays,
            steps,
            pivot_lines,
            touch,
            ray_thr,
            ray_tgt,
            tgt_only,
        }
    }

    /// The points whose emptying or filling, by a move of `by` that neither
    /// moves nor takes a king, can change whether `by` attacks the king on
    /// `k`: along each ray from `k` every point up to its second piece (a
    /// chariot, king or soldier acts as the first piece, a cannon as the
    /// second, and one landing further has two pieces before it), the legs
    /// and eyes toward `k` and the starts of the horse and elephant moves
    /// onto it, the points a step away, and every file 5 and O when both
    /// kings stand on their own file 5 (the view through O). A move whose
    /// two points are outside them leaves that attack as it was.
    fn attack_stake(&self, k: Point, by: Side) -> PointSet {
        let b = board();
        let sq = &self.squares;
        let mut stake = b.king_steps(k).union(*b.step_sources(k)).union(*b.adjacent(k));
        for ray in b.rays(k) {
            let mut pieces = 0;
            for &q in b.ray_points(ray) {
                stake.insert(q);
                if sq[q.index()] != 0 {
                    pieces += 1;
                    if pieces == 2 {
                        break;
                    }
                }
            }
        }
        let on_own_file_5 =
            |p: Point, side: Side| matches!(p.kind(), PointKind::Rect { side: s, file: 5, .. } if s == side);
        let owner = Side::from_index((sq[k.index()] >> 4) as usize);
        if on_own_file_5(k, owner) && self.king(by).is_some_and(|kb| on_own_file_5(kb, by)) {
            stake = stake.union(b.pivot_lines());
        }
        stake
    }

    /// The points whose emptying or filling can open or close an attack on
    /// (or a king's view from) `k` in this placement: the legs and eyes
    /// toward it, and along each ray from it the points up to its second
    /// piece (one set per ray, in the order of `board().rays(k)`). Past a
    /// ray's second piece nothing counts: a chariot, king or soldier acts
    /// from the first piece, a cannon from the second, and a move that
    /// changes neither of them (nor the empty points before them) leaves what
    /// that ray sees as it was.
    ///
    /// A ray with no piece of another side that acts along a line (chariot,
    /// cannon, king, soldier) anywhere on it, and that does not pass O,
    /// counts for nothing: the mover's move adds no piece of another side,
    /// so nothing on that ray can attack or face `k` after it either.
    fn king_sensitive(&self, k: Point) -> (PointSet, [PointSet; MAX_RAYS]) {
        const LINE: u16 = 1 << (Role::King as u8 + 1)
            | 1 << (Role::Chariot as u8 + 1)
            | 1 << (Role::Cannon as u8 + 1)
            | 1 << (Role::Soldier as u8 + 1);
        let b = board();
        let own = self.squares[k.index()] >> 4;
        let others = (0..3)
            .filter(|&i| i != own as usize)
            .fold(PointSet::EMPTY, |all, i| all.union(self.by_side[i]));
        let mut all = *b.king_steps(k);
        let mut rays = [PointSet::EMPTY; MAX_RAYS];
        debug_assert!(b.rays(k).len() <= MAX_RAYS);
        for ((ray, ray_set), set) in b.rays(k).iter().zip(b.ray_sets(k)).zip(&mut rays) {
            let armed = ray_set.contains(Point::O)
                || (others.intersects(ray_set)
                    && b.ray_points(ray).iter().any(|&q| {
                        let c = self.squares[q.index()];
                        c != 0 && c >> 4 != own && LINE & (1 << (c & 15)) != 0
                    }));
            if !armed {
                continue;
            }
            let mut pieces = 0;
            for &q in b.ray_points(ray) {
                set.insert(q);
                if self.squares[q.index()] != 0 {
                    pieces += 1;
                    if pieces == 2 {
                        break;
                    }
                }
            }
            all = all.union(*set);
        }
        (all, rays)
    }

    /// Whether a pseudo-legal move is legal (§4): after it, the mover's king
    /// is not attacked by its threat (phase 3) or the opponent (phase 2), nor
    /// by its target when the move provokes it or under a standing
    /// retaliation check, and does not face another king.
    ///
    /// A move that neither moves the king, nor eliminates a side, nor touches
    /// a point that can open or close an attack on the king (a point of a
    /// line through it, a horse's leg or an elephant's eye toward it) cannot
    /// create an attack or a facing: then a "no" computed before the move
    /// for the whole node stands (`ctx`).
    ///
    /// That case, most moves of most nodes, is decided here inline; the rest
    /// in [`Position::is_legal_with`].
    #[inline]
    fn is_legal_in(&self, m: Move, ctx: &Safety) -> bool {
        // Calm, a move that neither moves nor takes a king: quiet when it
        // touches nothing sensitive, or when it leaves no point that opens
        // an attack, fills no cannon's screen and does not both leave and
        // fill points of one ray (a piece moving along a ray toward the
        // king could be the screen of a cannon behind where it was).
        let quiet = ctx.calm
            && m.from != ctx.king
            && self.squares[m.to.index()] & 15 != KING_CODE
            && ((!ctx.sensitive.contains(m.from) && !ctx.sensitive.contains(m.to))
                || (!ctx.opening.contains(m.from)
                    && !ctx.screens.contains(m.to)
                    && ctx.touch[m.from.index()] & ctx.touch[m.to.index()] & RAY_BITS == 0));
        let fast = quiet || self.is_legal_with(m, Some(ctx));
        // Every test run checks the shortcut against the full computation.
        debug_assert_eq!(fast, self.is_legal_with(m, None), "{self:?}: {m}");
        fast
    }

    /// `ctx: None` computes every condition in full, without the shortcut.
    #[inline(never)]
    fn is_legal_with(&self, m: Move, ctx: Option<&Safety>) -> bool {
        let full;
        let ctx = match ctx {
            Some(c) => c,
            None => {
                full = Safety {
                    king: Point::O,
                    calm: false,
                    ..self.safety()
                };
                &full
            }
        };
        let s = self.turn;
        // A move that neither moves nor takes a king: what was not attacked
        // before it can only be opened where it touched (`attacked_after`);
        // touching nothing sensitive (`quiet`), it opens nothing. With `king`
        // = O (never a king's point) the shortcuts are off.
        let inc = ctx.king != Point::O && m.from != ctx.king && self.squares[m.to.index()] & 15 != KING_CODE;
        let quiet = inc && !ctx.sensitive.contains(m.from) && !ctx.sensitive.contains(m.to);
        if quiet && !ctx.attacked_thr && !ctx.attacked_tgt && !ctx.facing {
            return true;
        }
        // Attacked by its threat, whose attack no move may leave standing:
        // a quiet move that takes none of the threat's pieces leaves every
        // such attack as it was (the attackers, the lines and legs they act
        // through are where they were). A view through O that can reach the
        // king or be opened toward it (`pivot_lines`) changes only with a
        // move from or to a file 5 or O (`Safety::may_change_a_view`).
        if quiet && ctx.attacked_thr && !ctx.may_change_a_view(m) {
            let c = self.squares[m.to.index()];
            if c == 0 || c >> 4 != ctx.ray_thr.by as u8 {
                return false;
            }
        }
        // Attacked by its target alone (`TargetOnly`): a quiet move that
        // takes none of the target's pieces, stays off the stake and changes
        // no view through O leaves that attack as it was, as above (and a
        // king that faced none faces none). It is then forbidden under the
        // target's standing check, and else exactly when it checks the
        // target's king (it provokes), which such a move does not change.
        if quiet && let Some(t) = &ctx.tgt_only {
            let c = self.squares[m.to.index()];
            if (c == 0 || c >> 4 != ctx.tgt as u8)
                && !t.stake.contains(m.from)
                && !t.stake.contains(m.to)
                && !ctx.may_change_a_view(m)
            {
                return !t.standing && !t.checks;
            }
        }
        let mut after = *self;
        let captured = after.apply_raw(m);
        let live = after.live.count();
        if live == 1 {
            return true;
        }
        let k = after.kings[s.index()].unwrap();
        let touched = if inc { ctx.touched(m) } else { 0 };
        let attacked = |a: &RayAttackers, before: bool| {
            if inc && !before {
                after.attacked_after(a, m, touched)
            } else {
                after.attacked_by(k, a.by)
            }
        };
        // Whether target attacks the king after the move without that
        // being forbidden: then the king may still face another king.
        let mut tgt_attacks = false;
        if live == 3 {
            let tgt = ctx.tgt;
            if (!quiet || ctx.attacked_thr) && attacked(&ctx.ray_thr, ctx.attacked_thr) {
                return false;
            }
            if (!quiet || ctx.attacked_tgt) && attacked(&ctx.ray_tgt, ctx.attacked_tgt) {
                // Only forbidden when target holds (or will hold) a right to hit back.
                if self.has_standing_check(tgt, s) {
                    return false;
                }
                if captured != 0 && Piece::from_code(captured).side == tgt {
                    return false;
                }
                if after.attacked_by(after.kings[tgt.index()].unwrap(), s) {
                    return false;
                }
                tgt_attacks = true;
            }
        } else if inc {
            // Two sides live before and after: `thr` is the other one.
            if (!quiet || ctx.attacked_thr) && attacked(&ctx.ray_thr, ctx.attacked_thr) {
                return false;
            }
        } else {
            for o in after.live.iter() {
                if o != s && after.attacked_by(k, o) {
                    return false;
                }
            }
        }
        // A king that faces another king attacks it (照面), along a line or
        // through O, and so is attacked by it: with no other side attacking
        // the king after the move (a quiet move attacks with nothing it did
        // not attack with before), it faces none.
        if !tgt_attacks {
            debug_assert!(!after.faces_along(s, k, u8::MAX), "{self:?}: {m}");
            return true;
        }
        // As for attacks: what faced nothing before can only face through
        // the rays the move touched, or through O.
        let rays = if inc && !ctx.facing { touched } else { u8::MAX };
        !after.faces_along(s, k, rays)
    }

    fn is_pseudo_legal_move_legal(&self, m: Move) -> bool {
        self.is_legal_in(m, &self.safety())
    }

    /// Moves the piece and removes a captured piece; a captured king takes
    /// its whole side off the board. Returns the captured piece's code (0 if none).
    pub(crate) fn apply_raw(&mut self, m: Move) -> u8 {
        let code = self.squares[m.from.index()];
        let captured = self.squares[m.to.index()];
        let side = (code >> 4) as usize;
        self.squares[m.from.index()] = 0;
        self.squares[m.to.index()] = code;
        self.by_side[side].remove(m.from);
        self.by_side[side].insert(m.to);
        if code & 15 == KING_CODE {
            self.kings[side] = Some(m.to);
        }
        if captured != 0 {
            let victim = Side::from_index((captured >> 4) as usize);
            self.by_side[victim.index()].remove(m.to);
            if captured & 15 == KING_CODE {
                self.remove_side(victim);
            }
        }
        captured
    }

    fn remove_side(&mut self, side: Side) {
        for p in self.by_side[side.index()].iter() {
            self.squares[p.index()] = 0;
        }
        self.by_side[side.index()] = PointSet::EMPTY;
        self.kings[side.index()] = None;
        self.live.remove(side);
        // Retaliation rights and standing checks end when the phase changes.
        self.retaliation = 0;
        self.standing = 0;
    }

    /// Plays a legal move; an illegal one is refused with the reason and
    /// the position is left untouched.
    pub fn play(&mut self, m: Move) -> Result<MoveOutcome, crate::explain::IllegalMove> {
        if !self.is_legal(m) {
            return Err(crate::explain::explain(self, m));
        }
        Ok(self.play_unchecked(m))
    }

    /// Plays `m` without checking it. `m` must be one of [`Position::legal_moves`]:
    /// anything else breaks the position's invariants (a king left capturable,
    /// a piece where its rules forbid it, a side without its king).
    pub fn play_unchecked(&mut self, m: Move) -> MoveOutcome {
        let mut out = self.play_unresolved(m);
        self.resolve_mates(&mut out.eliminated, None, None);
        out
    }

    /// [`Position::play_unchecked`], leaving in `legal` the legal moves of
    /// the side to move after it: the test for a mated side lists them
    /// instead of looking for one (empty when one side is left). Returns
    /// with the outcome the sides in check after it ([`Position::checked`]).
    ///
    /// In phase 3, when no side leaves, what the move's outcome found out
    /// is not looked for again: the side to move next has the mover as its
    /// threat, and the mover checks it or not (`checks`); the mover's own
    /// king is not attacked by its threat (the move is legal).
    pub fn play_listing(&mut self, m: Move, legal: &mut Vec<Move>) -> (MoveOutcome, Sides) {
        let mover = self.turn;
        let mut out = self.play_unresolved(m);
        let known = (out.eliminated.is_empty() && self.live.count() == 3).then(|| out.checks.contains(self.turn));
        self.resolve_mates(&mut out.eliminated, Some(legal), known);
        let checked = match known {
            Some(attacked) if out.eliminated.is_empty() => self.checked_after(mover, attacked),
            _ => self.checked(),
        };
        (out, checked)
    }

    /// [`Position::checked`] after a legal move of `mover` in phase 3 that
    /// took no king and mated no side, when its target (now to move) is
    /// attacked by it iff `target_attacked`: of the three kings only the
    /// mover's threat's needs looking at (the mover's is not in check).
    fn checked_after(&self, mover: Side, target_attacked: bool) -> Sides {
        let d = self.direction;
        let (tgt, thr) = (d.next(mover), d.prev(mover));
        let mut out = Sides::EMPTY;
        // Each side's threat is the one before it, its target the one after.
        // The mover is not in check: its king is not attacked by its threat
        // (the move is legal), and no standing check on it outlasts its move.
        if target_attacked || self.has_standing_check(thr, tgt) {
            out.insert(tgt);
        }
        if self.attacked_by(self.kings[thr.index()].unwrap(), tgt) || self.has_standing_check(mover, thr) {
            out.insert(thr);
        }
        debug_assert_eq!(out, self.checked(), "{self:?}: after {mover}");
        out
    }

    /// [`Position::play_unchecked`] without looking whether the next side
    /// has a legal move (perft finds that out while counting).
    fn play_unresolved(&mut self, m: Move) -> MoveOutcome {
        let s = self.turn;
        let d = self.direction;
        let three = self.live.count() == 3;
        let (thr, tgt) = (d.prev(s), d.next(s));
        let had_right = three && self.has_retaliation_right(s, thr);
        let piece = Piece::from_code(self.squares[m.from.index()]);
        let captured = self.apply_raw(m);
        let captured = (captured != 0).then(|| Piece::from_code(captured));
        let mut out = MoveOutcome {
            mover: s,
            piece,
            captured,
            checks: Sides::EMPTY,
            provoked: false,
            eliminated: ArrayVec::new(),
        };
        if let Some(c) = captured
            && c.role == Role::King
        {
            out.eliminated.push(Elimination {
                side: c.side,
                cause: Cause::SuddenDeath,
            });
            for o in self.live.iter() {
                if o != s && self.attacked_by(self.kings[o.index()].unwrap(), s) {
                    out.checks.insert(o);
                }
            }
        } else if three {
            let check_tgt = self.attacked_by(self.kings[tgt.index()].unwrap(), s);
            let check_thr = had_right && self.attacked_by(self.kings[thr.index()].unwrap(), s);
            if check_tgt {
                out.checks.insert(tgt);
            }
            if check_thr {
                out.checks.insert(thr);
            }
            out.provoked = check_tgt || captured.is_some_and(|c| c.side == tgt);
            self.retaliation = if out.provoked { pair_bit(tgt, s) } else { 0 };
            // A standing check lasts until its victim has moved; the mover's own escapes now.
            for o in Side::ALL {
                self.standing &= !(pair_bit(o, s) | pair_bit(s, o));
            }
            if check_thr {
                self.standing |= pair_bit(s, thr);
            }
        } else {
            for o in self.live.iter() {
                if o != s && self.attacked_by(self.kings[o.index()].unwrap(), s) {
                    out.checks.insert(o);
                }
            }
            self.retaliation = 0;
            self.standing = 0;
        }
        self.no_king_capture = false;
        self.turn = self.next_live_after(s);
        if self.live.count() == 1 {
            self.turn = s;
        }
        out
    }

    /// At the start of a turn, a side without a legal move is mated and
    /// leaves; its target moves next. Repeats while that happens.
    /// With `legal`, the legal moves of the side left to move are listed there.
    /// `known`: whether the side to move now is attacked by its threat, when
    /// the caller knows it (see [`Position::safety`]).
    fn resolve_mates(
        &mut self,
        eliminated: &mut ArrayVec<Elimination, 2>,
        mut legal: Option<&mut Vec<Move>>,
        mut known: Option<bool>,
    ) {
        loop {
            if self.live.count() <= 1 {
                if let Some(last) = self.live.iter().next() {
                    self.turn = last;
                }
                if let Some(l) = legal {
                    l.clear();
                }
                return;
            }
            let has_move = match legal.as_deref_mut() {
                Some(l) => {
                    self.legal_moves_into(known, l);
                    !l.is_empty()
                }
                None => self.has_legal_move(),
            };
            if has_move {
                return;
            }
            // Another side moves next.
            known = None;
            let side = self.turn;
            let in_check = self.in_check(side);
            self.remove_side(side);
            if !eliminated.is_full() {
                eliminated.push(Elimination {
                    side,
                    cause: Cause::Mate { in_check },
                });
            }
            self.turn = self.next_live_after(side);
        }
    }

    /// Removes a live side for a reason other than mate (resignation, time,
    /// abandonment, a penalty: RULES §5–§6). Its pieces leave at once; the
    /// side to move keeps the move unless it is the one removed; the next
    /// turn may not capture a king. Returns the sides then found mated.
    pub fn remove(&mut self, side: Side) -> ArrayVec<Elimination, 2> {
        let mut out = ArrayVec::new();
        if !self.live.contains(side) {
            return out;
        }
        let to_move = self.turn;
        self.remove_side(side);
        if to_move == side {
            self.turn = self.next_live_after(side);
        }
        self.no_king_capture = self.live.count() >= 2;
        self.resolve_mates(&mut out, None, None);
        out
    }

    /// The side to move has no legal move but the game is not over: it is
    /// mated (perft treats such positions this way). Returns the position
    /// with it removed and the next side to move.
    pub fn resolve_turn(&mut self) -> ArrayVec<Elimination, 2> {
        let mut out = ArrayVec::new();
        self.resolve_mates(&mut out, None, None);
        out
    }
}

/// What [`Position::attacked_by`] needs of `by` to look along a ray from `k`.
#[derive(Copy, Clone, Debug)]
struct RayAttackers {
    k: Point,
    by: Side,
    chariot: u8,
    cannon: u8,
    soldier: u8,
    king: u8,
    zone: PointSet,
    k_in_zone: bool,
    phase2: bool,
}

impl RayAttackers {
    #[inline]
    fn new(pos: &Position, k: Point, by: Side) -> RayAttackers {
        let code = |r: Role| Piece { side: by, role: r }.code();
        let zone = board().no_soldier_zone(by);
        RayAttackers {
            k,
            by,
            chariot: code(Role::Chariot),
            cannon: code(Role::Cannon),
            soldier: code(Role::Soldier),
            king: code(Role::King),
            zone,
            k_in_zone: zone.contains(k),
            phase2: pos.live.count() < 3,
        }
    }
}

/// See [`Position::safety`].
#[derive(Copy, Clone, Debug)]
struct Safety {
    king: Point,
    tgt: Side,
    attacked_thr: bool,
    attacked_tgt: bool,
    facing: bool,
    /// The king is on the board, not attacked and facing no king: then a
    /// move that touches nothing sensitive is legal.
    calm: bool,
    /// [`Position::king_sensitive`] of `king`: all of it, and per ray.
    sensitive: PointSet,
    /// When calm, [`Position::openings`]: the points whose leaving may open
    /// an attack on `king`, and those whose filling may.
    opening: PointSet,
    screens: PointSet,
    rays: [PointSet; MAX_RAYS],
    /// The legs and eyes toward `king` ([`Board::king_steps`]).
    ///
    /// [`Board::king_steps`]: crate::board::Board::king_steps
    steps: PointSet,
    /// The points a move must leave to open a view through O from `king`
    /// ([`Position::pivot_openers`]).
    pivot_lines: PointSet,
    /// [`Safety::touched`] by point, made once per node: bit `i` if the
    /// point is on the sensitive stretch of the `i`-th ray, and
    /// [`STEPS_OPENED`] and [`PIVOT_OPENED`] if leaving it opens a leg or
    /// eye or can open the view through O. A slow move reads two bytes
    /// instead of testing eight sets.
    touch: [u8; NUM_POINTS],
    /// What `attacked_by` needs of `thr` and of `tgt` along the rays from
    /// `king`: the same after any move that leaves the king where it is and
    /// every side in the game.
    ray_thr: RayAttackers,
    ray_tgt: RayAttackers,
    /// See [`TargetOnly`]; `None` when that is not the case.
    tgt_only: Option<TargetOnly>,
}

/// A node whose king is attacked by its target alone (phase 3) and faces no
/// king: what its quiet moves share (see [`Position::is_legal_with`]).
#[derive(Copy, Clone, Debug)]
struct TargetOnly {
    /// The target holds a standing check on the mover.
    standing: bool,
    /// [`Position::attack_stake`] of the target's king by the mover.
    stake: PointSet,
    /// The mover attacks the target's king before the move.
    checks: bool,
}

/// The most rays from one point (a test checks it).
const MAX_RAYS: usize = 6;

/// [`Safety::touched`]'s bits for the rays from the king.
const RAY_BITS: u8 = (1 << MAX_RAYS) - 1;
/// [`Safety::touched`]'s bit for a move from a leg or an eye toward the king.
const STEPS_OPENED: u8 = 1 << MAX_RAYS;
/// [`Safety::touched`]'s bit for a move from a point whose emptying can open
/// the king's view through O ([`Position::pivot_openers`]).
const PIVOT_OPENED: u8 = 1 << (MAX_RAYS + 1);

impl Safety {
    /// Whether `m` may change a view through O toward `king`: never when
    /// none can open (`pivot_lines` empty), else when it moves from or to a
    /// file 5 or O. A move that may not leaves every such view as it was.
    #[inline]
    fn may_change_a_view(&self, m: Move) -> bool {
        let lines = board().pivot_lines();
        !self.pivot_lines.is_empty() && (lines.contains(m.from) || lines.contains(m.to))
    }

    /// The rays from `king` (bit `i`: the `i`-th of `board().rays(king)`)
    /// whose sensitive stretch `m` touches, and whether `m` leaves a leg or
    /// an eye toward `king` ([`STEPS_OPENED`]) or a point that can open its
    /// view through O ([`PIVOT_OPENED`]).
    ///
    /// Read from [`Safety::touch`]; the sets say the same (a debug
    /// assertion checks it).
    #[inline]
    fn touched(&self, m: Move) -> u8 {
        let bits = self.touch[m.from.index()] | (self.touch[m.to.index()] & RAY_BITS);
        debug_assert_eq!(bits, self.touched_by_sets(m), "{m}");
        bits
    }

    /// [`Safety::touched`] from the sets, point by point.
    fn touched_by_sets(&self, m: Move) -> u8 {
        let mut bits = 0;
        for (i, set) in self.rays.iter().enumerate() {
            if set.contains(m.from) || set.contains(m.to) {
                bits |= 1 << i;
            }
        }
        if self.steps.contains(m.from) {
            bits |= STEPS_OPENED;
        }
        if self.pivot_lines.contains(m.from) {
            bits |= PIVOT_OPENED;
        }
        bits
    }
}

/// Inserts `m` into the ordered `moves` after the moves not above it.
fn insert_in_order(moves: &mut MoveList, m: Move) {
    let at = moves.partition_point(|x| *x <= m);
    moves.insert(at, m);
}

fn all_pairs() -> impl Iterator<Item = (Side, Side)> {
    Side::ALL
        .into_iter()
        .flat_map(|a| Side::ALL.into_iter().filter(move |&b| b != a).map(move |b| (a, b)))
}

/// Counts the move sequences of length `depth` (RULES §7): a side to move
/// without a legal move is mated and the next side moves, depth unchanged.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    let mut pos = *pos;
    pos.resolve_turn();
    perft_inner(&pos, depth)
}

fn perft_inner(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = MoveList::new();
    pos.pseudo_legal_moves(&mut moves);
    let ctx = pos.safety();
    let mut legal = 0;
    let mut nodes = 0;
    for &m in &moves {
        if pos.is_legal_in(m, &ctx) {
            legal += 1;
            if depth > 1 {
                let mut next = *pos;
                next.play_unresolved(m);
                nodes += perft_inner(&next, depth - 1);
            }
        }
    }
    if legal == 0 && !pos.is_over() {
        // Mated at its turn: it leaves and its target moves, depth unchanged.
        let mut next = *pos;
        next.resolve_turn();
        return perft_inner(&next, depth);
    }
    if depth == 1 { legal } else { nodes }
}

/// perft per root move: `(move, count)` in canonical order.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let mut pos = *pos;
    pos.resolve_turn();
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut next = pos;
            next.play_unchecked(m);
            (m, perft_inner(&next, depth - 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_text_is_its_display_text() {
        for from in 0..NUM_POINTS {
            for to in 0..NUM_POINTS {
                let m = Move::new(Point::from_index(from), Point::from_index(to));
                let shown = format!("{}-{}", m.from, m.to);
                assert_eq!(m.parts().concat(), shown);
                assert_eq!(m.text(), shown);
                assert_eq!(m.to_string(), shown);
            }
        }
    }

    #[test]
    fn no_point_has_more_rays_than_the_safety_test_keeps() {
        let most = Point::all().map(|p| board().rays(p).len()).max().unwrap();
        assert_eq!(most, MAX_RAYS);
    }
}
