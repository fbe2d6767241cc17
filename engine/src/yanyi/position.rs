//! Positions, move generation, legality and the move procedure of
//! 三国演弈棋 (RULES-YANYI §4–§8).

use std::fmt;

use arrayvec::ArrayVec;

use super::board::{NONE, NUM_POINTS, Point, PointSet, alliance_point, tables};
use super::piece::{Colour, Piece, Player, Players, Role};

/// A move: from a point to a point. Alliances, activation, absorption and
/// eliminations follow from the position it is played in (§10.1).
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
}

impl fmt::Display for Move {
    /// `q12-o13`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.from, self.to)
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Upper bound on the moves of one player in any position a text can give (no
/// piece counts are limited there): a move uses one horse edge (704 pairs), one
/// neighbour pair (416, soldiers and kings), one elephant or advisor pair (< 40)
/// or, per target point and direction, the nearest slider or the cannon behind
/// the screen (225 × 4 × 2): fewer than 3,000. Real games stay under 500.
pub const MAX_MOVES: usize = 4096;

/// A fixed-capacity list of moves: move generation never allocates.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

/// Why a player left the board during a move (§7.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// 将死: no legal move at its turn while in check.
    Mate,
    /// 困毙: no legal move at its turn, not in check.
    Stalemate,
    /// 见面: its king faced another king after a third player's move.
    Facing,
}

impl Cause {
    /// Lowercase words.
    pub const fn as_str(self) -> &'static str {
        match self {
            Cause::Mate => "mate",
            Cause::Stalemate => "stalemate",
            Cause::Facing => "facing kings",
        }
    }
}

/// A player leaving the board inside a move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Elimination {
    /// Who left.
    pub player: Player,
    /// Why.
    pub cause: Cause,
    /// Who absorbed its pieces (兵力收编, §8): only on the game's first elimination.
    pub absorbed_by: Option<Player>,
}

/// Why the player to move is the one it is (§7.1 step 6, 被将先走).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TurnReason {
    /// Exactly one player other than the mover is in check: it answers (被将先走).
    Check,
    /// Nobody or two players in check: the next live player in the cycle.
    Cycle,
    /// Only two players are left: the other one.
    Other,
    /// The game is over: the last player left.
    Over,
}

/// What a move did, beyond moving a piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The player that moved.
    pub mover: Player,
    /// The piece that moved.
    pub piece: Piece,
    /// The piece captured, if any (the emperor too).
    pub captured: Option<Piece>,
    /// The alliance formed by this move (结盟 or, after 杀汉, the other two), in cycle order.
    pub alliance: Option<(Player, Player)>,
    /// Who received the 汉 chariots and cannon (activation), if this move activated them.
    pub han_to: Option<Player>,
    /// Whether the emperor was killed (杀汉).
    pub emperor_killed: bool,
    /// Live players other than the mover in check right after the move, before eliminations.
    pub checked: Players,
    /// Players eliminated as a consequence, in order.
    pub eliminated: ArrayVec<Elimination, 2>,
    /// Who moves next, and why.
    pub next: Player,
    /// Why `next` moves.
    pub turn_reason: TurnReason,
}

/// An unvalidated position: anything that parses. It becomes a [`Position`]
/// only through [`Position::from_setup`], which checks the invariants of §10.3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The piece on each point, by canonical index.
    pub board: [Option<Piece>; NUM_POINTS],
    /// The player to move.
    pub turn: Player,
    /// The allied pair, if any.
    pub alliance: Option<(Player, Player)>,
    /// The players that have not yet made a move.
    pub pending: Players,
}

/// The setup of §3.
pub const INITIAL_PLACEMENT: &str = "RR@e1,RN@f1,RE@g1,RA@h1,RK@i1,RA@j1,RE@k1,RN@l1,RR@m1,RC@f3,RC@l3,RP@e4,RP@g4,RP@i4,RP@k4,RP@m4,GP@n5,GR@q5,GC@o6,GN@q6,YR@d7,GP@n7,GE@q7,GA@q8,YK@a9,YC@c9,YR@d9,GP@n9,GK@q9,GA@q10,YR@d11,GP@n11,GE@q11,GC@o12,GN@q12,GP@n13,GR@q13,BP@e14,BP@g14,BP@i14,BP@k14,BP@m14,BC@f15,BC@l15,BR@e17,BN@f17,BE@g17,BA@h17,BK@i17,BA@j17,BE@k17,BN@l17,BR@m17";

impl Setup {
    /// The initial position (§3, §10.3).
    pub fn initial() -> Setup {
        super::notation::parse_setup(&format!("{INITIAL_PLACEMENT} G - GBR")).expect("the initial position parses")
    }
}

/// Why a [`Setup`] is not a position (§10.3).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// No player has a king.
    #[error("no player is live (no king on the board)")]
    NoLivePlayer,
    /// A player has more than one king.
    #[error("player {0} has more than one king")]
    KingCount(Player),
    /// A king outside its own palace.
    #[error("the king of {player} on {point} is outside its palace")]
    KingOutsidePalace {
        /// Whose.
        player: Player,
        /// Where.
        point: Point,
    },
    /// A piece of a player without a king.
    #[error("{piece} on {point} belongs to {player}, who has no king")]
    PieceOfEliminated {
        /// The piece.
        piece: Piece,
        /// Where.
        point: Point,
        /// Its player.
        player: Player,
    },
    /// An advisor or elephant off its points.
    #[error("{piece} on {point} is not on one of its points")]
    OffItsPoints {
        /// The piece.
        piece: Piece,
        /// Where.
        point: Point,
    },
    /// A yellow piece that is not one of the static 汉 force on its point.
    #[error("{piece} on {point} is not a static 汉 piece on its point")]
    BadHanPiece {
        /// The piece.
        piece: Piece,
        /// Where.
        point: Point,
    },
    /// 汉 pieces without the emperor.
    #[error("汉 pieces are on the board without the emperor on a9")]
    HanWithoutEmperor,
    /// The alliance field disagrees with the 汉 force.
    #[error("alliance: {0}")]
    Alliance(&'static str),
    /// A pending player that is not live.
    #[error("first move pending for {0}, who is not live")]
    PendingNotLive(Player),
    /// Two kings face each other with three players live.
    #[error("the kings of 魏 and 蜀 face each other while three players are live")]
    KingsFace,
    /// The side to move is not live.
    #[error("the player to move {0} is not live")]
    TurnNotLive(Player),
    /// The side to move has no legal move (it would have been eliminated).
    #[error("the player to move {0} has no legal move")]
    NoLegalMove(Player),
}

/// A legal position: placement, player to move, alliance, first-move flags.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    board: [u8; NUM_POINTS],
    by_colour: [PointSet; 4],
    kings: [u8; 3],
    turn: Player,
    live: Players,
    alliance: Players,
    pending: Players,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", super::notation::format_position(self))
    }
}

impl Default for Position {
    fn default() -> Self {
        Position::initial()
    }
}

const EMPEROR_CODE: u8 = Piece::EMPEROR.code();

#[inline]
const fn code_colour(c: u8) -> usize {
    ((c - 1) >> 3) as usize
}

#[inline]
const fn code_role(c: u8) -> u8 {
    (c - 1) & 7
}

#[inline]
const fn code(colour: usize, role: Role) -> u8 {
    (colour as u8) * 8 + role as u8 + 1
}

/// The third player of a pair.
#[inline]
fn third(a: Player, b: Player) -> Player {
    Player::from_index(3 - a.index() - b.index())
}

fn pair(a: Player, b: Player) -> (Player, Player) {
    if a < b { (a, b) } else { (b, a) }
}

impl Position {
    /// The initial position (§3).
    pub fn initial() -> Position {
        Position::from_setup(&Setup::initial()).expect("the initial position is legal")
    }

    fn empty(turn: Player) -> Position {
        Position {
            board: [0; NUM_POINTS],
            by_colour: [PointSet::EMPTY; 4],
            kings: [NONE; 3],
            turn,
            live: Players::EMPTY,
            alliance: Players::EMPTY,
            pending: Players::EMPTY,
        }
    }

    /// Validates a setup (§10.3).
    pub fn from_setup(s: &Setup) -> Result<Position, PositionError> {
        let t = tables();
        let mut pos = Position::empty(s.turn);
        for (i, pc) in s.board.iter().enumerate() {
            let Some(pc) = *pc else { continue };
            let p = Point::new(i);
            if pc.role == Role::King
                && let Some(pl) = pc.colour.player()
            {
                if pos.kings[pl.index()] != NONE {
                    return Err(PositionError::KingCount(pl));
                }
                if !t.palace[pl.colour() as usize].contains(p) {
                    return Err(PositionError::KingOutsidePalace { player: pl, point: p });
                }
                pos.kings[pl.index()] = i as u8;
                pos.live.insert(pl);
            }
            pos.put(p, pc.code());
        }
        if pos.live.is_empty() {
            return Err(PositionError::NoLivePlayer);
        }
        let han = [
            ("a9", Role::King),
            ("d7", Role::Chariot),
            ("d9", Role::Chariot),
            ("d11", Role::Chariot),
            ("c9", Role::Cannon),
        ];
        for p in Point::all() {
            let c = pos.board[p.index()];
            if c == 0 {
                continue;
            }
            let pc = Piece::from_code(c);
            match pc.colour.player() {
                Some(pl) if !pos.live.contains(pl) => {
                    return Err(PositionError::PieceOfEliminated {
                        piece: pc,
                        point: p,
                        player: pl,
                    });
                }
                None if !han.iter().any(|(n, r)| Point::parse(n) == Some(p) && *r == pc.role) => {
                    return Err(PositionError::BadHanPiece { piece: pc, point: p });
                }
                _ => {}
            }
            let ok = match pc.role {
                Role::Advisor => t.advisor_points.contains(p),
                Role::Elephant => t.elephant_points.contains(p),
                _ => true,
            };
            if !ok {
                return Err(PositionError::OffItsPoints { piece: pc, point: p });
            }
        }
        let static_han = !pos.by_colour[3].is_empty();
        if static_han && pos.board[Point::parse("a9").unwrap().index()] != EMPEROR_CODE {
            return Err(PositionError::HanWithoutEmperor);
        }
        match s.alliance {
            Some((a, b)) => {
                if a == b {
                    return Err(PositionError::Alliance("a player cannot ally with itself"));
                }
                if pos.live.count() < 3 {
                    return Err(PositionError::Alliance(
                        "there is no alliance with fewer than three players",
                    ));
                }
                if static_han {
                    return Err(PositionError::Alliance(
                        "the 汉 force is still static, so no alliance has formed",
                    ));
                }
                pos.alliance.insert(a);
                pos.alliance.insert(b);
            }
            None => {
                if pos.live.count() == 3 && !static_han {
                    return Err(PositionError::Alliance(
                        "three players are live and the 汉 force is activated, so two are allied",
                    ));
                }
            }
        }
        for pl in s.pending.iter() {
            if !pos.live.contains(pl) {
                return Err(PositionError::PendingNotLive(pl));
            }
        }
        pos.pending = s.pending;
        if pos.live.count() == 3 && pos.kings_face() {
            return Err(PositionError::KingsFace);
        }
        if !pos.live.contains(s.turn) {
            return Err(PositionError::TurnNotLive(s.turn));
        }
        // With one player left it is the one to move (the turn is live) and has no moves.
        if pos.live.count() >= 2 && !pos.has_legal_move(s.turn) {
            return Err(PositionError::NoLegalMove(s.turn));
        }
        Ok(pos)
    }

    /// The setup of this position.
    pub fn to_setup(&self) -> Setup {
        let mut board = [None; NUM_POINTS];
        for (i, &c) in self.board.iter().enumerate() {
            if c != 0 {
                board[i] = Some(Piece::from_code(c));
            }
        }
        Setup {
            board,
            turn: self.turn,
            alliance: self.alliance(),
            pending: self.pending,
        }
    }

    #[inline]
    fn put(&mut self, p: Point, c: u8) {
        self.board[p.index()] = c;
        self.by_colour[code_colour(c)].insert(p);
    }

    #[inline]
    fn take(&mut self, p: Point) -> u8 {
        let c = self.board[p.index()];
        if c != 0 {
            self.board[p.index()] = 0;
            self.by_colour[code_colour(c)].remove(p);
        }
        c
    }

    /// The piece on `p`.
    #[inline]
    pub fn piece_at(&self, p: Point) -> Option<Piece> {
        let c = self.board[p.index()];
        (c != 0).then(|| Piece::from_code(c))
    }

    /// The points of a colour's pieces.
    pub fn pieces_of(&self, c: Colour) -> PointSet {
        self.by_colour[c as usize]
    }

    /// The player to move (when over: the winner).
    pub fn turn(&self) -> Player {
        self.turn
    }

    /// The players still in the game.
    pub fn live(&self) -> Players {
        self.live
    }

    /// The king of a player, if live.
    pub fn king(&self, p: Player) -> Option<Point> {
        let k = self.kings[p.index()];
        (k != NONE).then(|| Point::new(k as usize))
    }

    /// The allied pair, in cycle order.
    pub fn alliance(&self) -> Option<(Player, Player)> {
        let mut it = self.alliance.iter();
        match (it.next(), it.next()) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        }
    }

    /// The players that have not yet made a move.
    pub fn pending(&self) -> Players {
        self.pending
    }

    /// Whether the 汉 force is static (a yellow piece is on the board).
    pub fn han_static(&self) -> bool {
        !self.by_colour[3].is_empty()
    }

    /// Whether the one alliance is still to come (static 汉, three live).
    pub fn alliance_possible(&self) -> bool {
        self.han_static() && self.live.count() == 3
    }

    /// Whether the game is over (one player left).
    pub fn is_over(&self) -> bool {
        self.live.count() <= 1
    }

    /// The winner, when one player is left.
    pub fn winner(&self) -> Option<Player> {
        (self.live.count() == 1).then_some(self.turn)
    }

    /// The enemies of `p`: the other live players except its ally (§1).
    #[inline]
    pub fn enemies(&self, p: Player) -> Players {
        let mut e = self.live;
        e.remove(p);
        if self.alliance.contains(p) {
            e.0 &= !self.alliance.0;
        }
        e
    }

    /// Whether `a` and `b` are allied.
    pub fn allied(&self, a: Player, b: Player) -> bool {
        a != b && self.alliance.contains(a) && self.alliance.contains(b)
    }

    /// Whether the pieces of the colours in `by` attack `t` (§5): some piece
    /// could move onto `t` if it held a piece they may capture.
    #[inline]
    fn attacked_by(&self, t: Point, by: Players) -> bool {
        let tb = tables();
        let b = &self.board;
        let mine = |c: u8| c != 0 && code_colour(c) < 3 && by.0 & (1 << code_colour(c)) != 0;
        let ti = t.index();
        for d in 0..4 {
            let mut p = tb.step[ti][d];
            while p != NONE && b[p as usize] == 0 {
                p = tb.step[p as usize][d];
            }
            if p == NONE {
                continue;
            }
            let c = b[p as usize];
            if code_role(c) == Role::Chariot as u8 && mine(c) {
                return true;
            }
            p = tb.step[p as usize][d];
            while p != NONE && b[p as usize] == 0 {
                p = tb.step[p as usize][d];
            }
            if p == NONE {
                continue;
            }
            let c = b[p as usize];
            if code_role(c) == Role::Cannon as u8 && mine(c) {
                let col = code_colour(c);
                if self.pending.0 & (1 << col) == 0 || tb.camp[col].contains(t) {
                    return true;
                }
            }
        }
        for &q in tb.horse[ti].as_slice() {
            let c = b[q as usize];
            if c != 0 && code_role(c) == Role::Horse as u8 && mine(c) {
                return true;
            }
        }
        for pl in by.iter() {
            let sc = code(pl.index(), Role::Soldier);
            for &q in tb.soldier_src[pl.index()][ti].as_slice() {
                if b[q as usize] == sc {
                    return true;
                }
            }
        }
        if tb.elephant_points.contains(t) {
            for &q in tb.elephant[ti].as_slice() {
                let c = b[q as usize];
                if c != 0 && code_role(c) == Role::Elephant as u8 && mine(c) {
                    return true;
                }
            }
        }
        if tb.advisor_points.contains(t) {
            for &q in tb.advisor[ti].as_slice() {
                let c = b[q as usize];
                if c != 0 && code_role(c) == Role::Advisor as u8 && mine(c) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether the pieces of `by` attack the point `t` (§5).
    pub fn attacks(&self, by: Player, t: Point) -> bool {
        let mut s = Players::EMPTY;
        s.insert(by);
        self.attacked_by(t, s)
    }

    /// Whether `p` is in check: live and its king attacked by an enemy (§5).
    #[inline]
    pub fn in_check(&self, p: Player) -> bool {
        let k = self.kings[p.index()];
        k != NONE && self.attacked_by(Point::new(k as usize), self.enemies(p))
    }

    /// The live players in check.
    pub fn checked(&self) -> Players {
        self.live.iter().filter(|p| self.in_check(*p)).collect()
    }

    /// Whether 魏's and 蜀's kings face each other (§5, the only pair that can).
    #[inline]
    pub fn kings_face(&self) -> bool {
        let (kb, kr) = (self.kings[Player::B.index()], self.kings[Player::R.index()]);
        if kb == NONE || kr == NONE {
            return false;
        }
        let tb = tables();
        let (pb, pr) = (Point::new(kb as usize), Point::new(kr as usize));
        if pb.x() != pr.x() {
            return false;
        }
        let mut p = tb.step[kb as usize][2];
        while p != kr {
            if self.board[p as usize] != 0 {
                return false;
            }
            p = tb.step[p as usize][2];
        }
        true
    }

    /// Whether the moving colour `s` may capture the piece `c` with a piece of role `role`.
    #[inline]
    fn capturable(&self, enemies: Players, c: u8, horse: bool) -> bool {
        let col = code_colour(c);
        if col == 3 {
            c == EMPEROR_CODE && horse
        } else {
            code_role(c) != Role::King as u8 && enemies.0 & (1 << col) != 0
        }
    }

    /// All pseudo-legal moves of `s` (§4), unsorted.
    fn gen_pseudo(&self, s: Player, out: &mut MoveList) {
        let tb = tables();
        let enemies = self.enemies(s);
        let first = self.pending.contains(s);
        let camp = &tb.camp[s.colour() as usize];
        let b = &self.board;
        for from in self.by_colour[s.index()].iter() {
            let fi = from.index();
            let c = b[fi];
            let role = code_role(c);
            let mut add = |to: u8| out.push(Move::new(from, Point::new(to as usize)));
            match Role::from_u8(role) {
                Role::Chariot => {
                    for d in 0..4 {
                        let mut p = tb.step[fi][d];
                        while p != NONE {
                            let q = b[p as usize];
                            if q == 0 {
                                add(p);
                            } else {
                                if self.capturable(enemies, q, false) {
                                    add(p);
                                }
                                break;
                            }
                            p = tb.step[p as usize][d];
                        }
                    }
                }
                Role::Cannon => {
                    for d in 0..4 {
                        let mut p = tb.step[fi][d];
                        while p != NONE && b[p as usize] == 0 {
                            if !first || camp.contains(Point::new(p as usize)) {
                                add(p);
                            }
                            p = tb.step[p as usize][d];
                        }
                        if p == NONE {
                            continue;
                        }
                        p = tb.step[p as usize][d];
                        while p != NONE && b[p as usize] == 0 {
                            p = tb.step[p as usize][d];
                        }
                        if p != NONE
                            && self.capturable(enemies, b[p as usize], false)
                            && (!first || camp.contains(Point::new(p as usize)))
                        {
                            add(p);
                        }
                    }
                }
                Role::Horse => {
                    for &q in tb.horse[fi].as_slice() {
                        let t = b[q as usize];
                        if t == 0 || self.capturable(enemies, t, true) {
                            add(q);
                        }
                    }
                }
                r => {
                    let list = match r {
                        Role::King => &tb.king[s.index()][fi],
                        Role::Advisor => &tb.advisor[fi],
                        Role::Elephant => &tb.elephant[fi],
                        _ => &tb.soldier[s.index()][fi],
                    };
                    for &q in list.as_slice() {
                        let t = b[q as usize];
                        if t == 0 || self.capturable(enemies, t, false) {
                            add(q);
                        }
                    }
                }
            }
        }
    }

    /// Whether a pseudo-legal move of `s` has consequences beyond moving and
    /// capturing (an alliance or 杀汉), so that legality needs the full procedure.
    #[inline]
    fn is_special(&self, s: Player, m: Move) -> bool {
        let c = self.board[m.from.index()];
        if code_role(c) != Role::Horse as u8 {
            return false;
        }
        if self.board[m.to.index()] == EMPEROR_CODE {
            return true;
        }
        self.alliance_possible()
            && Player::ALL
                .into_iter()
                .any(|l| l != s && self.live.contains(l) && alliance_point(l) == m.to)
    }

    /// Legality of a pseudo-legal move of `s` (§5), on a scratch copy whose board is restored.
    #[inline]
    fn legal_scratch(&mut self, s: Player, m: Move) -> bool {
        if self.is_special(s, m) {
            let mut next = *self;
            next.apply_steps_1_to_3(s, m);
            return next.legal_after_steps(s);
        }
        let (fi, ti) = (m.from.index(), m.to.index());
        let moving = self.board[fi];
        let captured = self.board[ti];
        self.board[ti] = moving;
        self.board[fi] = 0;
        let king_moves = code_role(moving) == Role::King as u8;
        let old_king = self.kings[s.index()];
        if king_moves {
            self.kings[s.index()] = ti as u8;
        }
        let ok = self.legal_after_steps(s);
        self.board[fi] = moving;
        self.board[ti] = captured;
        self.kings[s.index()] = old_king;
        ok
    }

    /// §5 on the position after steps 1–3 of the move of `s` (boards only need to be right).
    #[inline]
    fn legal_after_steps(&self, s: Player) -> bool {
        if self.kings_face() {
            // Facing: illegal if it is the mover's own king; else both others are eliminated (step 4).
            return s == Player::G;
        }
        !self.in_check(s)
    }

    /// Whether `m` is legal for the player to move.
    pub fn is_legal(&self, m: Move) -> bool {
        if self.is_over() {
            return false;
        }
        let mut list = MoveList::new();
        self.gen_pseudo(self.turn, &mut list);
        if !list.contains(&m) {
            return false;
        }
        let mut scratch = *self;
        scratch.legal_scratch(self.turn, m)
    }

    /// The pseudo-legal moves of the player to move (§4 without §5), sorted.
    pub fn pseudo_legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if !self.is_over() {
            self.gen_pseudo(self.turn, &mut list);
        }
        list.sort_unstable();
        list
    }

    /// The legal moves of the player to move, sorted by (from, to) index (§10.1).
    pub fn legal_moves(&self) -> MoveList {
        let mut list = self.legal_moves_unsorted();
        list.sort_unstable();
        list
    }

    fn legal_moves_unsorted(&self) -> MoveList {
        let mut list = MoveList::new();
        if self.is_over() {
            return list;
        }
        let s = self.turn;
        self.gen_pseudo(s, &mut list);
        let mut scratch = *self;
        list.retain(|m| scratch.legal_scratch(s, *m));
        list
    }

    /// Number of legal moves of the player to move.
    pub fn count_legal(&self) -> usize {
        self.legal_moves_unsorted().len()
    }

    /// Whether `p` would have a legal move if it were to move.
    pub fn has_legal_move(&self, p: Player) -> bool {
        let mut list = MoveList::new();
        self.gen_pseudo(p, &mut list);
        let mut scratch = *self;
        list.iter().any(|m| scratch.legal_scratch(p, *m))
    }

    /// Steps 1–3 of §7.1: move and capture, alliance / 杀汉 and activation, the
    /// first-move flag. Returns (moving piece, captured, alliance formed, 汉 to, emperor killed).
    pub(crate) fn apply_steps_1_to_3(
        &mut self,
        s: Player,
        m: Move,
    ) -> (u8, u8, Option<(Player, Player)>, Option<Player>, bool) {
        let moving = self.take(m.from);
        let captured = self.take(m.to);
        self.put(m.to, moving);
        if code_role(moving) == Role::King as u8 {
            self.kings[s.index()] = m.to.index() as u8;
        }
        let mut formed = None;
        let mut han_to = None;
        let mut killed = false;
        if code_role(moving) == Role::Horse as u8 {
            if captured == EMPEROR_CODE {
                killed = true;
                self.transfer_han(s);
                han_to = Some(s);
                if self.live.count() == 3 {
                    let mut others = self.live;
                    others.remove(s);
                    self.alliance = others;
                    formed = self.alliance();
                }
            } else if self.alliance_possible()
                && let Some(l) = Player::ALL
                    .into_iter()
                    .find(|&l| l != s && self.live.contains(l) && alliance_point(l) == m.to)
            {
                self.alliance.insert(s);
                self.alliance.insert(l);
                formed = Some(pair(s, l));
                let z = third(s, l);
                self.transfer_han(z);
                han_to = Some(z);
            }
        }
        self.pending.remove(s);
        (moving, captured, formed, han_to, killed)
    }

    /// The 汉 chariots and cannon become `to`'s; the emperor leaves the board.
    fn transfer_han(&mut self, to: Player) {
        for p in self.by_colour[3].iter() {
            let c = self.take(p);
            if c != EMPEROR_CODE {
                self.put(p, code(to.index(), Role::from_u8(code_role(c))));
            }
        }
    }

    /// Removes all pieces of `p` (its king included).
    fn remove_all(&mut self, p: Player) {
        for q in self.by_colour[p.index()].iter() {
            self.take(q);
        }
        self.kings[p.index()] = NONE;
        self.live.remove(p);
        self.pending.remove(p);
        self.alliance = Players::EMPTY;
    }

    /// The next live player after `s` in the cycle.
    fn next_live(&self, s: Player) -> Player {
        let mut n = s.cycle_next();
        for _ in 0..3 {
            if self.live.contains(n) {
                return n;
            }
            n = n.cycle_next();
        }
        s
    }

    /// The absorber of `n`'s pieces after `s`'s move (§8).
    fn absorber(&self, s: Player, n: Player) -> Player {
        let k = Point::new(self.kings[n.index()] as usize);
        let enemies_of_n = self.enemies(n);
        let u = third(s, n);
        let u_live = self.live.contains(u);
        if enemies_of_n.contains(s) && self.attacks(s, k) {
            return s;
        }
        if u_live && enemies_of_n.contains(u) && self.attacks(u, k) {
            return u;
        }
        if enemies_of_n.contains(s) { s } else { u }
    }

    /// Eliminates `n` at its turn (§7.1 step 7) after `s`'s move.
    fn eliminate_at_turn(&mut self, s: Player, n: Player) -> Elimination {
        let cause = if self.in_check(n) {
            Cause::Mate
        } else {
            Cause::Stalemate
        };
        let first = self.live.count() == 3;
        let absorbed_by = first.then(|| self.absorber(s, n));
        let k = self.kings[n.index()];
        self.take(Point::new(k as usize));
        if let Some(a) = absorbed_by {
            for q in self.by_colour[n.index()].iter() {
                let c = self.take(q);
                self.put(q, code(a.index(), Role::from_u8(code_role(c))));
            }
            self.kings[n.index()] = NONE;
            self.live.remove(n);
            self.pending.remove(n);
            self.alliance = Players::EMPTY;
        } else {
            self.remove_all(n);
        }
        Elimination {
            player: n,
            cause,
            absorbed_by,
        }
    }

    /// Steps 6–8 of §7.1 from the last mover `s`: who moves next, with eliminations.
    fn settle_turn(&mut self, s: Player, out: &mut ArrayVec<Elimination, 2>) -> TurnReason {
        loop {
            if self.live.count() <= 1 {
                self.turn = s;
                return TurnReason::Over;
            }
            let (n, why) = if self.live.count() == 2 {
                (self.next_live(s), TurnReason::Other)
            } else {
                let mut c = Players::EMPTY;
                for p in self.live.iter() {
                    if p != s && self.in_check(p) {
                        c.insert(p);
                    }
                }
                if c.count() == 1 {
                    (c.iter().next().unwrap(), TurnReason::Check)
                } else {
                    (self.next_live(s), TurnReason::Cycle)
                }
            };
            if n == s {
                // Only when the mover alone is left (handled above).
                self.turn = s;
                return TurnReason::Over;
            }
            if self.has_legal_move(n) {
                self.turn = n;
                return why;
            }
            let e = self.eliminate_at_turn(s, n);
            if !out.is_full() {
                out.push(e);
            }
        }
    }

    /// Plays `m` without checking it, with every consequence of §7.1.
    ///
    /// Contract: `m` must be one of [`Position::legal_moves`]. A move that is
    /// not breaks the invariants: it may capture a king or an ally, leave the
    /// mover in check, or move another player's piece.
    pub fn play_unchecked(&mut self, m: Move) -> MoveOutcome {
        let s = self.turn;
        let (moving, captured, formed, han_to, killed) = self.apply_steps_1_to_3(s, m);
        let mut eliminated = ArrayVec::new();
        let checked = self.live.iter().filter(|&p| p != s && self.in_check(p)).collect();
        let turn_reason = if self.kings_face() {
            for p in [Player::B, Player::R] {
                if p != s {
                    self.remove_all(p);
                    eliminated.push(Elimination {
                        player: p,
                        cause: Cause::Facing,
                        absorbed_by: None,
                    });
                }
            }
            self.settle_turn(s, &mut eliminated)
        } else {
            self.settle_turn(s, &mut eliminated)
        };
        MoveOutcome {
            mover: s,
            piece: Piece::from_code(moving),
            captured: (captured != 0).then(|| Piece::from_code(captured)),
            alliance: formed,
            han_to,
            emperor_killed: killed,
            checked,
            eliminated,
            next: self.turn,
            turn_reason,
        }
    }

    /// Plays `m` if it is legal; otherwise says why and leaves the position untouched.
    pub fn play(&mut self, m: Move) -> Result<MoveOutcome, super::explain::IllegalMove> {
        if !self.is_legal(m) {
            return Err(super::explain::IllegalMove {
                mv: m,
                reason: super::explain::explain(self, m),
            });
        }
        Ok(self.play_unchecked(m))
    }

    /// [`Position::play`] on behalf of `player`: refused with
    /// [`Reason::NotYourTurn`](super::explain::Reason::NotYourTurn) when it is not the one to move.
    pub fn play_as(&mut self, player: Player, m: Move) -> Result<MoveOutcome, super::explain::IllegalMove> {
        if !self.is_over() && player != self.turn {
            return Err(super::explain::IllegalMove {
                mv: m,
                reason: super::explain::Reason::NotYourTurn {
                    player,
                    turn: self.turn,
                },
            });
        }
        self.play(m)
    }

    /// Why `m` is refused here (see [`super::explain::explain`]).
    pub fn explain(&self, m: Move) -> super::explain::Reason {
        super::explain::explain(self, m)
    }

    /// Removes a player that resigned, ran out of time or abandoned (§9):
    /// its pieces (and any 汉 pieces it held) leave the board, nobody absorbs
    /// them, the alliance ends. If it was to move, the turn passes by §7.1
    /// steps 6–7 from `last_mover` (or from the leaver itself when `None`);
    /// otherwise the player to move keeps the move, and if it has none it is
    /// eliminated by step 7. Returns the board eliminations that followed.
    pub fn remove_player(&mut self, p: Player, last_mover: Option<Player>) -> ArrayVec<Elimination, 2> {
        let mut out = ArrayVec::new();
        if !self.live.contains(p) {
            return out;
        }
        let was_to_move = self.turn == p;
        self.remove_all(p);
        if self.live.count() <= 1 {
            if let Some(w) = self.live.iter().next() {
                self.turn = w;
            }
            return out;
        }
        if was_to_move {
            let from = match last_mover {
                Some(s) if self.live.contains(s) => s,
                // The last mover is gone or nobody has moved: count from the leaver.
                _ => p,
            };
            if from == p {
                let n = self.next_live(p);
                // Steps 6–7 from the leaver: with two players left the next is the other of n.
                if self.has_legal_move(n) {
                    self.turn = n;
                } else {
                    let other = self.next_live(n);
                    let e = self.eliminate_at_turn(other, n);
                    out.push(e);
                    self.turn = other;
                }
            } else {
                self.settle_turn(from, &mut out);
            }
        } else if !self.has_legal_move(self.turn) {
            let n = self.turn;
            let other = self.next_live(n);
            let e = self.eliminate_at_turn(other, n);
            out.push(e);
            self.turn = other;
        }
        out
    }
}

/// Counts the move sequences of length `depth` (§10.4).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        return pos.count_legal() as u64;
    }
    let moves = pos.legal_moves_unsorted();
    let mut n = 0;
    for m in moves {
        let mut next = *pos;
        next.play_unchecked(m);
        n += perft(&next, depth - 1);
    }
    n
}

/// perft per root move, in canonical order.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|m| {
            let mut next = *pos;
            next.play_unchecked(m);
            (m, perft(&next, depth - 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attack by forward generation: put a soldier of `t` on the point (so `s` may capture it)
    /// and ask whether one of `s`'s pseudo-legal moves lands there.
    fn attacks_forward(pos: &Position, s: Player, t: Player, point: Point) -> bool {
        let mut q = *pos;
        q.take(point);
        q.put(point, code(t.index(), Role::Soldier));
        let mut list = MoveList::new();
        q.gen_pseudo(s, &mut list);
        list.iter().any(|m| m.to == point)
    }

    #[test]
    fn backward_attacks_agree_with_forward_moves() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut checked = 0;
        for _ in 0..40 {
            let mut pos = Position::initial();
            for _ in 0..250 {
                if pos.is_over() {
                    break;
                }
                for t in pos.live.iter() {
                    let k = pos.king(t).unwrap();
                    for s in pos.enemies(t).iter() {
                        assert_eq!(
                            pos.attacks(s, k),
                            attacks_forward(&pos, s, t, k),
                            "{pos:?}: {s} on {t}'s king {k}"
                        );
                        checked += 1;
                    }
                }
                let moves = pos.legal_moves();
                // The in-place legality test agrees with the full procedure on a copy.
                let mut pseudo = MoveList::new();
                pos.gen_pseudo(pos.turn, &mut pseudo);
                for m in &pseudo {
                    let mut after = pos;
                    after.apply_steps_1_to_3(pos.turn, *m);
                    assert_eq!(after.legal_after_steps(pos.turn), moves.contains(m), "{pos:?}: {m}");
                }
                // Prefer captures to open the board.
                let caps: Vec<Move> = moves.iter().copied().filter(|m| pos.board[m.to.index()] != 0).collect();
                let m = if !caps.is_empty() && rnd(2) == 0 {
                    caps[rnd(caps.len())]
                } else {
                    moves[rnd(moves.len())]
                };
                pos.play_unchecked(m);
            }
        }
        assert!(checked > 10_000, "{checked}");
    }
}
