//! Positions (§11.3), legal actions (§4, §6), settling (§11.4), perft and
//! chance-perft (§12).
//!
//! One type, [`AnqiPosition`], holds both forms of §11.3: in the **full** form
//! every face-down point knows its identity (the server's copy, perft); in the
//! **viewer** form the face-down points are unknown (what every seat and
//! spectator sees, chance-perft, bots). Everything the rules need except what a
//! flip reveals is computed from public data — the hidden pool's counts — so both
//! forms give the same legal actions, eliminations and assignments (§10.1).

use arrayvec::ArrayVec;

use super::explain::{IllegalAction, Refusal};
use super::{Options, POINTS, Piece, Point, Role, SET_COUNTS, Team};

/// A cell of the board: 0 empty, 1 … 14 a face-up identity (index + 1),
/// `DOWN | index` a face-down piece whose identity is known, `UNKNOWN` a face-down
/// piece of the viewer form.
type Cell = u8;
const EMPTY: Cell = 0;
const DOWN: Cell = 0x10;
const UNKNOWN: Cell = 0x1f;
const NONE: u8 = 0xff;

const fn is_down(c: Cell) -> bool {
    c >= DOWN
}
const fn is_up(c: Cell) -> bool {
    c != EMPTY && c < DOWN
}

// ---------------------------------------------------------------------------
// Tables, built once at compile time.

/// Directions: N, S, E, W, NE, NW, SE, SW as (file, rank) steps.
const DIRS: [(i32, i32); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1)];

struct Tables {
    /// `rays[p][d]`: the points from p outwards in direction d (excluding p).
    rays: [[[u8; 8]; 8]; POINTS],
    /// `ray_len[p][d]`.
    ray_len: [[u8; 8]; POINTS],
    /// Horse targets and their legs: `(target, leg)`, ascending by target.
    horse: [[(u8, u8); 8]; POINTS],
    horse_len: [u8; POINTS],
    /// Elephant targets (±2, ±2) and their eyes.
    elephant: [[(u8, u8); 4]; POINTS],
    elephant_len: [u8; POINTS],
    /// One orthogonal step (soldier).
    ortho: [u64; POINTS],
    /// One diagonal step (advisor).
    diag: [u64; POINTS],
}

const fn build_tables() -> Tables {
    let mut t = Tables {
        rays: [[[0; 8]; 8]; POINTS],
        ray_len: [[0; 8]; POINTS],
        horse: [[(0, 0); 8]; POINTS],
        horse_len: [0; POINTS],
        elephant: [[(0, 0); 4]; POINTS],
        elephant_len: [0; POINTS],
        ortho: [0; POINTS],
        diag: [0; POINTS],
    };
    let mut p = 0;
    while p < POINTS {
        let f = (p % 9) as i32;
        let r = (p / 9) as i32;
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRS[d];
            let mut n = 0;
            let (mut x, mut y) = (f + df, r + dr);
            while x >= 0 && x < 9 && y >= 0 && y < 5 {
                t.rays[p][d][n] = (y * 9 + x) as u8;
                n += 1;
                x += df;
                y += dr;
            }
            t.ray_len[p][d] = n as u8;
            if n > 0 {
                let q = t.rays[p][d][0] as u64;
                if d < 4 {
                    t.ortho[p] |= 1 << q;
                } else {
                    t.diag[p] |= 1 << q;
                }
            }
            d += 1;
        }
        // Horse: in ascending target order (by rank, then file).
        let mut n = 0;
        let mut dy = -2;
        while dy <= 2 {
            let mut dx = -2;
            while dx <= 2 {
                let ax = if dx < 0 { -dx } else { dx };
                let ay = if dy < 0 { -dy } else { dy };
                if ax + ay == 3 && ax > 0 && ay > 0 {
                    let (x, y) = (f + dx, r + dy);
                    if x >= 0 && x < 9 && y >= 0 && y < 5 {
                        // The leg: one step along the longer direction.
                        let (lx, ly) = if ax == 2 { (f + dx / 2, r) } else { (f, r + dy / 2) };
                        t.horse[p][n] = ((y * 9 + x) as u8, (ly * 9 + lx) as u8);
                        n += 1;
                    }
                }
                dx += 1;
            }
            dy += 1;
        }
        t.horse_len[p] = n as u8;
        let mut n = 0;
        let mut dy = -2;
        while dy <= 2 {
            let mut dx = -2;
            while dx <= 2 {
                let (x, y) = (f + dx, r + dy);
                if x >= 0 && x < 9 && y >= 0 && y < 5 {
                    t.elephant[p][n] = ((y * 9 + x) as u8, ((r + dy / 2) * 9 + f + dx / 2) as u8);
                    n += 1;
                }
                dx += 4;
            }
            dy += 4;
        }
        t.elephant_len[p] = n as u8;
        p += 1;
    }
    t
}

static TABLES: Tables = build_tables();

// ---------------------------------------------------------------------------
// Actions.

/// An action of a seat (§4, §11.2). A pass is not an action: settling makes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Move {
    /// Turn the face-down piece on the point face up (`+b2`).
    Flip(Point),
    /// Move a face-up piece of the seat's team to an empty point (`b2-b4`).
    Move {
        /// From.
        from: Point,
        /// To (empty).
        to: Point,
    },
    /// Capture a face-up piece of another team (`b2xb4`).
    Capture {
        /// From.
        from: Point,
        /// The captured piece's point.
        to: Point,
    },
}

impl Move {
    /// The listing key of §11.2: (from, to), a flip at p counting as (p, p).
    pub fn key(self) -> (Point, Point) {
        match self {
            Move::Flip(p) => (p, p),
            Move::Move { from, to } | Move::Capture { from, to } => (from, to),
        }
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Move::Flip(p) => write!(f, "+{p}"),
            Move::Move { from, to } => write!(f, "{from}-{to}"),
            Move::Capture { from, to } => write!(f, "{from}x{to}"),
        }
    }
}

/// The most actions a seat can have: 32 flips, or at most 12 pieces of one team with at
/// most 20 destinations each, mixed with flips on the remaining points.
pub const MAX_ACTIONS: usize = 288;

/// The legal actions, in canonical order, in a fixed-capacity list (no allocation).
pub type MoveList = ArrayVec<Move, MAX_ACTIONS>;

/// Something automatic that settling did (§11.4, §11.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Happening {
    /// C1: a teamless seat (0 … 2) claimed a team by flipping.
    Claim {
        /// The seat, 0 … 2.
        seat: usize,
        /// The team.
        team: Team,
    },
    /// C2 or C3: a seat was given a team.
    Assign {
        /// The seat, 0 … 2.
        seat: usize,
        /// The team.
        team: Team,
    },
    /// The seat had no legal action at the start of its turn and passed (§4).
    Pass {
        /// The seat, 0 … 2.
        seat: usize,
        /// The turn number the pass used.
        turn: u32,
    },
    /// The seat holds a team with no piece left on the board (§7).
    Annihilated {
        /// The seat, 0 … 2.
        seat: usize,
    },
}

/// What an action did: what it revealed or captured, and what settling did after it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The identity a flip revealed.
    pub revealed: Option<Piece>,
    /// The identity a capture took.
    pub captured: Option<Piece>,
    /// The point a flip turned over.
    pub flipped: Option<Point>,
    /// The automatic events, in the order they happened.
    pub happenings: ArrayVec<Happening, 24>,
}

// ---------------------------------------------------------------------------
// The position.

/// A validated 三国暗棋 position, full or viewer form (§11.3).
///
/// It is a compact value (about 160 bytes, no heap): clone it to explore.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AnqiPosition {
    pub(crate) board: [Cell; POINTS],
    pub(crate) options: Options,
    /// The seat to move (0 … 2), or `NONE` when over.
    pub(crate) to_move: u8,
    /// Actions left in the current turn (1 or 2).
    pub(crate) left: u8,
    /// The point flipped by the first action of this double turn (not capturable now), or `NONE`.
    pub(crate) no_capture: u8,
    /// Team held by each seat, 0 for teamless.
    pub(crate) teams: [u8; 3],
    /// Bit s set while seat s is live.
    pub(crate) live: u8,
    pub(crate) turn: u32,
    /// The hidden pool: identities not face up, not captured, not removed.
    pub(crate) hidden: [u8; 14],
    /// Face-down pieces on the board.
    pub(crate) down: u8,
    /// Pieces on the board (face up and face down) per team (index team − 1).
    pub(crate) on_board: [u8; 3],
    /// Identities captured by each seat.
    pub(crate) captured: [[u8; 14]; 3],
    /// Identities removed by 收军.
    pub(crate) removed: [u8; 14],
}

/// An unvalidated position: anything parsed from text (§11.3). It becomes an
/// [`AnqiPosition`] only through [`AnqiPosition::from_setup`], which checks V1–V9.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    /// Each point: `None` empty, `Some((face_up, identity))`; a face-down piece of the
    /// viewer form has identity `None`.
    pub board: [Option<(bool, Option<Piece>)>; POINTS],
    /// The seat to move (0 … 2), `None` when over.
    pub to_move: Option<usize>,
    /// Actions left (the `k` of `s:k`); `None` when the text gave a bare seat digit.
    pub actions_left: Option<u8>,
    /// The `p` of `s:1:p`.
    pub no_capture: Option<Point>,
    /// Team held by each seat.
    pub teams: [Option<Team>; 3],
    /// Live seats.
    pub live: [bool; 3],
    /// Captured identities per seat (any order).
    pub captured: [Vec<Piece>; 3],
    /// Identities removed by 收军.
    pub removed: Vec<Piece>,
    /// Turn number (≥ 1).
    pub turn: u32,
    /// The options.
    pub options: Options,
}

impl AnqiPosition {
    /// The initial full position of a layout (§10.3: 32 letters, one per start point in
    /// the start-point order), teams claimed by flipping.
    pub fn from_layout(layout: &[Piece; 32], options: Options) -> AnqiPosition {
        let mut p = AnqiPosition::empty(options);
        for (k, point) in Point::start_points().enumerate() {
            let id = layout[k];
            p.board[point.index()] = DOWN | id.0;
        }
        p.hidden = SET_COUNTS;
        p.down = 32;
        p.on_board = p.team_counts_of_set();
        p
    }

    /// The initial viewer position (every start point face down and unknown).
    pub fn initial_viewer(options: Options) -> AnqiPosition {
        let mut p = AnqiPosition::empty(options);
        for point in Point::start_points() {
            p.board[point.index()] = UNKNOWN;
        }
        p.hidden = SET_COUNTS;
        p.down = 32;
        p.on_board = p.team_counts_of_set();
        p
    }

    /// The initial full position with teams assigned (§9.2): `teams[s]` is seat s's team.
    /// `None` if the three teams are not distinct.
    pub fn from_layout_assigned(layout: &[Piece; 32], options: Options, teams: [Team; 3]) -> Option<AnqiPosition> {
        if teams[0] == teams[1] || teams[1] == teams[2] || teams[0] == teams[2] {
            return None;
        }
        let mut p = AnqiPosition::from_layout(layout, options);
        p.teams = teams.map(|t| t.0);
        Some(p)
    }

    /// The initial full position of the sample layout (§10.4), split 1, no options.
    pub fn sample() -> AnqiPosition {
        let layout = super::deal::parse_layout(super::SAMPLE_LAYOUT).expect("the sample layout is a layout");
        AnqiPosition::from_layout(&layout, Options::default())
    }

    fn empty(options: Options) -> AnqiPosition {
        AnqiPosition {
            board: [EMPTY; POINTS],
            options,
            to_move: 0,
            left: 1,
            no_capture: NONE,
            teams: [0; 3],
            live: 0b111,
            turn: 1,
            hidden: [0; 14],
            down: 0,
            on_board: [0; 3],
            captured: [[0; 14]; 3],
            removed: [0; 14],
        }
    }

    fn team_counts_of_set(&self) -> [u8; 3] {
        let mut c = [0u8; 3];
        for id in Piece::all() {
            c[self.team_index(id)] += SET_COUNTS[id.index()];
        }
        c
    }

    /// Builds a position from a setup, checking V1–V9 of §11.3 in order.
    pub fn from_setup(setup: &Setup) -> Result<AnqiPosition, super::ParseError> {
        super::notation::validate(setup)
    }

    /// The setup of this position (what its text says).
    pub fn to_setup(&self) -> Setup {
        let mut board = [None; POINTS];
        for (i, &c) in self.board.iter().enumerate() {
            board[i] = match c {
                EMPTY => None,
                UNKNOWN => Some((false, None)),
                c if is_down(c) => Some((false, Some(Piece(c & 0x0f)))),
                c => Some((true, Some(Piece(c - 1)))),
            };
        }
        let list = |counts: &[u8; 14]| -> Vec<Piece> {
            Piece::all()
                .flat_map(|id| std::iter::repeat_n(id, counts[id.index()] as usize))
                .collect()
        };
        Setup {
            board,
            to_move: self.seat_to_move(),
            actions_left: (self.options.double && !self.is_over()).then_some(self.left),
            no_capture: self.no_capture_point(),
            teams: self.teams.map(Team::new),
            live: [0, 1, 2].map(|s| self.is_live(s)),
            captured: [0, 1, 2].map(|s| list(&self.captured[s])),
            removed: list(&self.removed),
            turn: self.turn,
            options: self.options,
        }
    }

    // --- Reading the position -------------------------------------------------

    /// The options (variant field).
    pub fn options(&self) -> Options {
        self.options
    }

    /// Whether this is the viewer form: some face-down identity is unknown. (With no
    /// face-down piece left, both forms are the same position.)
    pub fn is_viewer(&self) -> bool {
        self.board.contains(&UNKNOWN)
    }

    /// The viewer form of this position: every face-down identity forgotten (§10.1).
    pub fn viewer(&self) -> AnqiPosition {
        let mut v = self.clone();
        for c in v.board.iter_mut() {
            if is_down(*c) {
                *c = UNKNOWN;
            }
        }
        v
    }

    /// What stands on a point: `None` empty, else `(face_up, identity)`; the identity of a
    /// face-down piece is `None` in the viewer form.
    pub fn piece_at(&self, p: Point) -> Option<(bool, Option<Piece>)> {
        match self.board[p.index()] {
            EMPTY => None,
            UNKNOWN => Some((false, None)),
            c if is_down(c) => Some((false, Some(Piece(c & 0x0f)))),
            c => Some((true, Some(Piece(c - 1)))),
        }
    }

    /// The seat to move (0 … 2), `None` when the position is over.
    pub fn seat_to_move(&self) -> Option<usize> {
        (self.to_move != NONE).then_some(self.to_move as usize)
    }

    /// Whether the position is over (§11.4 steps 4 and 7).
    pub fn is_over(&self) -> bool {
        self.to_move == NONE
    }

    /// Actions left in the current turn (1, or 2 in `double` games from turn 4).
    pub fn actions_left(&self) -> u8 {
        self.left
    }

    /// The point whose piece the first action of this double turn revealed and which may
    /// not be captured this turn (`s:1:p`, R-19).
    pub fn no_capture_point(&self) -> Option<Point> {
        (self.no_capture != NONE).then_some(Point(self.no_capture))
    }

    /// The team seat s holds, if any.
    pub fn team_of_seat(&self, seat: usize) -> Option<Team> {
        Team::new(self.teams[seat])
    }

    /// The seat that holds team t, if it was claimed.
    pub fn seat_of_team(&self, t: Team) -> Option<usize> {
        self.teams.iter().position(|&x| x == t.0)
    }

    /// Whether seat s is still playing.
    pub fn is_live(&self, seat: usize) -> bool {
        self.live & (1 << seat) != 0
    }

    /// How many seats are live.
    pub fn live_count(&self) -> u32 {
        self.live.count_ones()
    }

    /// The current turn number (passes use turn numbers; when over, the next one's).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// How many of identity `id` seat s captured.
    pub fn captured_count(&self, seat: usize, id: Piece) -> u32 {
        self.captured[seat][id.index()] as u32
    }

    /// How many pieces seat s captured (of any team).
    pub fn captured_total(&self, seat: usize) -> u32 {
        self.captured[seat].iter().map(|&n| n as u32).sum()
    }

    /// The value of the pieces seat s captured (its race score, §8.4).
    pub fn captured_points(&self, seat: usize) -> u32 {
        Piece::all()
            .map(|id| id.value(self.options.enhanced) * self.captured[seat][id.index()] as u32)
            .sum()
    }

    /// How many of identity `id` are in the hidden pool (face down on the board).
    pub fn hidden_count(&self, id: Piece) -> u32 {
        self.hidden[id.index()] as u32
    }

    /// The number of face-down pieces.
    pub fn face_down_count(&self) -> u32 {
        self.down as u32
    }

    /// How many pieces of team t are on the board, face up or face down.
    pub fn pieces_on_board(&self, t: Team) -> u32 {
        self.on_board[t.0 as usize - 1] as u32
    }

    /// The value of team t's pieces on the board, face up and face down (the face-down
    /// ones counted from the pool, which is public).
    pub fn value_on_board(&self, t: Team) -> u32 {
        let mut v = 0;
        for (i, &c) in self.board.iter().enumerate() {
            let _ = i;
            if is_up(c) {
                let id = Piece(c - 1);
                if id.team(self.options.split2) == t {
                    v += id.value(self.options.enhanced);
                }
            }
        }
        for id in Piece::all() {
            if id.team(self.options.split2) == t {
                v += id.value(self.options.enhanced) * self.hidden[id.index()] as u32;
            }
        }
        v
    }

    /// How many pieces of team t are face down (from the pool).
    pub fn hidden_of_team(&self, t: Team) -> u32 {
        Piece::all()
            .filter(|id| id.team(self.options.split2) == t)
            .map(|id| self.hidden[id.index()] as u32)
            .sum()
    }

    /// Whether team t is claimed (some seat, live or not, holds it).
    pub fn is_claimed(&self, t: Team) -> bool {
        self.teams.contains(&t.0)
    }

    #[inline]
    fn team_index(&self, id: Piece) -> usize {
        id.team(self.options.split2).0 as usize - 1
    }

    #[inline]
    fn team_of_cell(&self, c: Cell) -> u8 {
        super::TEAM_OF[self.options.split2 as usize][(c - 1) as usize]
    }

    // --- Legal actions ------------------------------------------------------------

    /// The destinations of the face-up piece on `from` for a mover of team `team`,
    /// as a bit set of point indices (captures excluded at `no_capture`).
    #[inline]
    fn targets(&self, from: usize, c: Cell, team: u8) -> u64 {
        let b = &self.board;
        let t = &TABLES;
        let capturable = |q: usize| -> bool {
            let x = b[q];
            is_up(x) && self.team_of_cell(x) != team && q as u8 != self.no_capture
        };
        let mut mask = 0u64;
        let role = (c - 1) % 7;
        let slide = |dirs: std::ops::Range<usize>, mask: &mut u64| {
            for d in dirs {
                let ray = &t.rays[from][d];
                for &q in &ray[..t.ray_len[from][d] as usize] {
                    let q = q as usize;
                    if b[q] == EMPTY {
                        *mask |= 1 << q;
                    } else {
                        if capturable(q) {
                            *mask |= 1 << q;
                        }
                        break;
                    }
                }
            }
        };
        let enhanced = self.options.enhanced;
        match role {
            // General: chariot, or queen when enhanced.
            0 => slide(0..if enhanced { 8 } else { 4 }, &mut mask),
            // Advisor: one diagonal step, or a king's step when enhanced.
            1 => {
                let steps = if enhanced {
                    t.diag[from] | t.ortho[from]
                } else {
                    t.diag[from]
                };
                mask = self.step_mask(steps, &capturable);
            }
            // Elephant: (±2, ±2) jumping the eye, or a bishop when enhanced.
            2 => {
                if enhanced {
                    slide(4..8, &mut mask);
                } else {
                    for &(q, eye) in &t.elephant[from][..t.elephant_len[from] as usize] {
                        let q = q as usize;
                        if self.options.xqlegs && b[eye as usize] != EMPTY {
                            continue;
                        }
                        if b[q] == EMPTY || capturable(q) {
                            mask |= 1 << q;
                        }
                    }
                }
            }
            3 => slide(0..4, &mut mask),
            4 => {
                for &(q, leg) in &t.horse[from][..t.horse_len[from] as usize] {
                    let q = q as usize;
                    if self.options.xqlegs && b[leg as usize] != EMPTY {
                        continue;
                    }
                    if b[q] == EMPTY || capturable(q) {
                        mask |= 1 << q;
                    }
                }
            }
            5 => {
                for d in 0..4 {
                    let ray = &t.rays[from][d][..t.ray_len[from][d] as usize];
                    let mut i = 0;
                    while i < ray.len() && b[ray[i] as usize] == EMPTY {
                        mask |= 1 << ray[i];
                        i += 1;
                    }
                    i += 1; // the screen
                    while i < ray.len() && b[ray[i] as usize] == EMPTY {
                        i += 1;
                    }
                    if i < ray.len() && capturable(ray[i] as usize) {
                        mask |= 1 << ray[i];
                    }
                }
            }
            _ => mask = self.step_mask(t.ortho[from], &capturable),
        }
        mask
    }

    #[inline]
    fn step_mask(&self, mut steps: u64, capturable: &impl Fn(usize) -> bool) -> u64 {
        let mut mask = 0;
        while steps != 0 {
            let q = steps.trailing_zeros() as usize;
            steps &= steps - 1;
            if self.board[q] == EMPTY || capturable(q) {
                mask |= 1 << q;
            }
        }
        mask
    }

    /// The legal actions of the seat to move, in canonical order (§11.2): ascending
    /// (from, to), a flip at p counting as (p, p). Empty when the position is over.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if self.is_over() {
            return list;
        }
        let team = self.teams[self.to_move as usize];
        for (from, &c) in self.board.iter().enumerate() {
            if is_down(c) {
                list.push(Move::Flip(Point(from as u8)));
            } else if team != 0 && is_up(c) && self.team_of_cell(c) == team {
                let mut mask = self.targets(from, c, team);
                while mask != 0 {
                    let to = mask.trailing_zeros() as u8;
                    mask &= mask - 1;
                    let (from, to_p) = (Point(from as u8), Point(to));
                    list.push(if self.board[to as usize] == EMPTY {
                        Move::Move { from, to: to_p }
                    } else {
                        Move::Capture { from, to: to_p }
                    });
                }
            }
        }
        list
    }

    /// The number of legal actions (what `legal_moves().len()` would be, faster).
    pub fn count_legal(&self) -> usize {
        if self.is_over() {
            return 0;
        }
        self.count_for(self.to_move as usize)
    }

    fn count_for(&self, seat: usize) -> usize {
        let team = self.teams[seat];
        let mut n = self.down as usize;
        if team != 0 {
            for (from, &c) in self.board.iter().enumerate() {
                if is_up(c) && self.team_of_cell(c) == team {
                    n += self.targets(from, c, team).count_ones() as usize;
                }
            }
        }
        n
    }

    /// Whether seat s would have a legal action now.
    fn has_action(&self, seat: usize) -> bool {
        if self.down > 0 {
            return true;
        }
        let team = self.teams[seat];
        if team == 0 {
            return false;
        }
        self.board
            .iter()
            .enumerate()
            .any(|(from, &c)| is_up(c) && self.team_of_cell(c) == team && self.targets(from, c, team) != 0)
    }

    /// Whether `m` is a legal action now.
    pub fn is_legal(&self, m: Move) -> bool {
        self.check(m).is_ok()
    }

    /// Checks an action and says why it is refused (§11.2: `from-to` onto a capturable
    /// piece is read as the capture).
    pub fn check(&self, m: Move) -> Result<Move, IllegalAction> {
        let refuse = |reason| Err(IllegalAction { action: m, reason });
        let Some(seat) = self.seat_to_move() else {
            return refuse(Refusal::GameOver);
        };
        let team = self.teams[seat];
        match m {
            Move::Flip(p) => match self.board[p.index()] {
                EMPTY => refuse(Refusal::NothingToFlip(p)),
                c if is_up(c) => refuse(Refusal::AlreadyFaceUp(p, Piece(c - 1))),
                _ => Ok(m),
            },
            Move::Move { from, to } | Move::Capture { from, to } => {
                let c = self.board[from.index()];
                if c == EMPTY {
                    return refuse(Refusal::NoPiece(from));
                }
                if is_down(c) {
                    return refuse(Refusal::FaceDownCannotMove(from));
                }
                if team == 0 {
                    return refuse(Refusal::TeamlessCanOnlyFlip);
                }
                let id = Piece(c - 1);
                let own = Team(team);
                if self.team_of_cell(c) != team {
                    return refuse(Refusal::NotYourTeam {
                        piece: id,
                        at: from,
                        team: own,
                    });
                }
                let dest = self.board[to.index()];
                if is_down(dest) {
                    return refuse(Refusal::CaptureFaceDown(to));
                }
                if is_up(dest) && self.team_of_cell(dest) == team {
                    return refuse(Refusal::CaptureOwnTeam(to, Piece(dest - 1)));
                }
                if dest == EMPTY && matches!(m, Move::Capture { .. }) {
                    return refuse(Refusal::NothingToCapture(to));
                }
                if is_up(dest) && to.0 == self.no_capture {
                    return refuse(Refusal::RevealedThisTurn(to));
                }
                if self.targets(from.index(), c, team) & (1 << to.0) != 0 {
                    return Ok(if dest == EMPTY {
                        Move::Move { from, to }
                    } else {
                        Move::Capture { from, to }
                    });
                }
                refuse(self.why_unreachable(from, to, id, dest))
            }
        }
    }

    fn why_unreachable(&self, from: Point, to: Point, id: Piece, dest: Cell) -> Refusal {
        let (df, dr) = (to.file() - from.file(), to.rank() - from.rank());
        let straight = (df == 0) != (dr == 0);
        let diagonal = df != 0 && df.abs() == dr.abs();
        let between = |q: Point| -> Vec<Point> {
            let n = df.abs().max(dr.abs());
            (1..n)
                .filter_map(|i| Point::at(from.file() + df.signum() * i, from.rank() + dr.signum() * i))
                .filter(|p| self.board[p.index()] != EMPTY)
                .filter(|p| *p != q)
                .collect()
        };
        let enhanced = self.options.enhanced;
        let role = id.role();
        let slides = match role {
            Role::General => straight || (enhanced && diagonal),
            Role::Chariot => straight,
            Role::Elephant if enhanced => diagonal,
            Role::Cannon => straight,
            _ => false,
        };
        if slides {
            let b = between(to);
            if role == Role::Cannon && dest != EMPTY {
                return Refusal::CannonScreen(b.len());
            }
            if let Some(&first) = b.first() {
                return Refusal::PathBlocked(first);
            }
        }
        if role == Role::Horse && (df.abs(), dr.abs()) != (1, 2) && (df.abs(), dr.abs()) != (2, 1) {
            return Refusal::NotThisPiecesMove(id);
        }
        if role == Role::Horse && self.options.xqlegs {
            let leg = if df.abs() == 2 {
                Point::at(from.file() + df / 2, from.rank())
            } else {
                Point::at(from.file(), from.rank() + dr / 2)
            };
            if let Some(leg) = leg {
                return Refusal::LegBlocked(leg);
            }
        }
        if role == Role::Elephant && !enhanced && df.abs() == 2 && dr.abs() == 2 && self.options.xqlegs {
            if let Some(eye) = Point::at(from.file() + df / 2, from.rank() + dr / 2) {
                return Refusal::EyeBlocked(eye);
            }
        }
        Refusal::NotThisPiecesMove(id)
    }

    // --- Playing ---------------------------------------------------------------------

    /// Plays a legal action and settles (§11.4); refused actions leave the position as it
    /// was. In the viewer form a flip needs the revealed identity: use
    /// [`AnqiPosition::play_flip`].
    pub fn play(&mut self, m: Move) -> Result<Outcome, IllegalAction> {
        let m = self.check(m)?;
        if let Move::Flip(p) = m {
            if self.board[p.index()] == UNKNOWN {
                return Err(IllegalAction {
                    action: m,
                    reason: Refusal::IdentityUnknown(p),
                });
            }
        }
        let mut out = Outcome::default();
        self.act(m, None, &mut out);
        self.advance(&mut out);
        Ok(out)
    }

    /// Plays the flip at `p` revealing `identity`: what a viewer does when the server says
    /// what the flip showed. In the full form the identity must be the one at `p`; in the
    /// viewer form it must be in the hidden pool.
    pub fn play_flip(&mut self, p: Point, identity: Piece) -> Result<Outcome, IllegalAction> {
        let m = self.check(Move::Flip(p))?;
        let c = self.board[p.index()];
        let ok = if c == UNKNOWN {
            self.hidden[identity.index()] > 0
        } else {
            c == DOWN | identity.0
        };
        if !ok {
            return Err(IllegalAction {
                action: m,
                reason: Refusal::NotInPool(p, identity),
            });
        }
        let mut out = Outcome::default();
        self.act(m, Some(identity), &mut out);
        self.advance(&mut out);
        Ok(out)
    }

    /// Plays `m` and settles without checking it.
    ///
    /// Contract: `m` is one of [`AnqiPosition::legal_moves`] (as listed, captures as
    /// [`Move::Capture`]), and a flip is at a point whose identity is known (full form).
    /// Anything else corrupts the position's counts; a flip of an unknown point panics.
    pub fn play_unchecked(&mut self, m: Move) -> Outcome {
        let mut out = Outcome::default();
        self.act(m, None, &mut out);
        self.advance(&mut out);
        out
    }

    /// Plays `m` (revealing `identity` if it is a flip of an unknown point) and runs §11.4
    /// steps 1–2 only: claims, C2 and the annihilation check. The caller then applies its
    /// mode rules (收军: [`AnqiPosition::recover_army`]) and must call
    /// [`AnqiPosition::finish_action`] before anything else reads the position.
    ///
    /// Contract: as [`AnqiPosition::play_unchecked`]; `identity` must be in the pool.
    pub fn act_unchecked(&mut self, m: Move, identity: Option<Piece>) -> Outcome {
        let mut out = Outcome::default();
        self.act(m, identity, &mut out);
        out
    }

    /// §11.4 steps 4–7 after [`AnqiPosition::act_unchecked`]; `out` must carry the
    /// action's `flipped` point (the outcome `act_unchecked` returned, or a fresh one with
    /// that field copied), since a double turn's `s:1:p` depends on it. The automatic
    /// events of these steps are appended to `out`.
    pub fn finish_action(&mut self, out: &mut Outcome) {
        self.advance(out);
    }

    fn act(&mut self, m: Move, identity: Option<Piece>, out: &mut Outcome) {
        let seat = self.to_move as usize;
        match m {
            Move::Flip(p) => {
                let c = self.board[p.index()];
                let id = if c == UNKNOWN {
                    identity.expect("the identity of a flip in the viewer form")
                } else {
                    Piece(c & 0x0f)
                };
                self.board[p.index()] = id.0 + 1;
                self.hidden[id.index()] -= 1;
                self.down -= 1;
                out.revealed = Some(id);
                if self.teams[seat] == 0 {
                    let t = id.team(self.options.split2);
                    if !self.is_claimed(t) {
                        self.teams[seat] = t.0;
                        out.happenings.push(Happening::Claim { seat, team: t });
                    }
                }
            }
            Move::Move { from, to } => {
                self.board[to.index()] = self.board[from.index()];
                self.board[from.index()] = EMPTY;
            }
            Move::Capture { from, to } => {
                let id = Piece(self.board[to.index()] - 1);
                self.captured[seat][id.index()] += 1;
                let ti = self.team_index(id);
                self.on_board[ti] -= 1;
                self.board[to.index()] = self.board[from.index()];
                self.board[from.index()] = EMPTY;
                out.captured = Some(id);
            }
        }
        out.flipped = match m {
            Move::Flip(p) => Some(p),
            _ => None,
        };
        self.c2(out);
        self.annihilation(out);
    }

    fn unclaimed(&self) -> impl Iterator<Item = Team> + '_ {
        (1..=3).map(Team).filter(|&t| !self.is_claimed(t))
    }

    /// C2: exactly one unclaimed team and exactly one live teamless seat.
    fn c2(&mut self, out: &mut Outcome) {
        let team = {
            let mut unclaimed = self.unclaimed();
            let (Some(team), None) = (unclaimed.next(), unclaimed.next()) else {
                return;
            };
            team
        };
        let mut teamless = (0..3).filter(|&s| self.is_live(s) && self.teams[s] == 0);
        if let (Some(seat), None) = (teamless.next(), teamless.next()) {
            self.teams[seat] = team.0;
            out.happenings.push(Happening::Assign { seat, team });
        }
    }

    /// C3 for a live teamless seat at the start of its turn.
    fn c3(&mut self, seat: usize, out: &mut Outcome) {
        if !self.is_live(seat) || self.teams[seat] != 0 {
            return;
        }
        if self.unclaimed().any(|t| self.hidden_of_team(t) > 0) {
            return;
        }
        let mut best: Option<(u32, Team)> = None;
        for t in self.unclaimed() {
            let v = self.value_on_board(t);
            if best.is_none_or(|(bv, _)| v > bv) {
                best = Some((v, t));
            }
        }
        if let Some((_, team)) = best {
            self.teams[seat] = team.0;
            out.happenings.push(Happening::Assign { seat, team });
        }
    }

    /// Whether C3's condition holds for seat s (a live teamless seat with nothing left to claim).
    pub(crate) fn c3_applies(&self, seat: usize) -> bool {
        self.is_live(seat) && self.teams[seat] == 0 && !self.unclaimed().any(|t| self.hidden_of_team(t) > 0)
    }

    /// §7.1: in seat order, a live seat whose team has no piece on the board stops.
    fn annihilation(&mut self, out: &mut Outcome) {
        for seat in 0..3 {
            let t = self.teams[seat];
            if self.is_live(seat) && t != 0 && self.on_board[t as usize - 1] == 0 {
                self.live &= !(1 << seat);
                out.happenings.push(Happening::Annihilated { seat });
            }
        }
    }

    fn set_over(&mut self, used_turn: u32) {
        self.to_move = NONE;
        self.left = 1;
        self.no_capture = NONE;
        self.turn = used_turn + 1;
    }

    /// §11.4 steps 4–7 after the seat to move acted.
    fn advance(&mut self, out: &mut Outcome) {
        let s = self.to_move as usize;
        if self.live_count() <= 1 {
            self.set_over(self.turn);
            return;
        }
        if self.options.double && self.left == 2 && self.is_live(s) {
            self.left = 1;
            self.no_capture = match out.flipped {
                Some(p) if !self.options.fanchi => p.0,
                _ => NONE,
            };
            if self.has_action(s) {
                return;
            }
        }
        self.no_capture = NONE;
        self.next_turn(s, out);
    }

    /// §11.4 step 6 from seat s: the next live seat with a legal action gets a new turn;
    /// seats without one pass; a whole cycle without one ends the position (step 7).
    fn next_turn(&mut self, s: usize, out: &mut Outcome) {
        let mut t = self.turn;
        for i in 1..=3 {
            let seat = (s + i) % 3;
            if !self.is_live(seat) {
                continue;
            }
            self.c3(seat, out);
            self.c2(out);
            self.annihilation(out);
            if self.live_count() <= 1 {
                self.set_over(t);
                return;
            }
            if !self.is_live(seat) {
                continue;
            }
            t += 1;
            if self.has_action(seat) {
                self.to_move = seat as u8;
                self.turn = t;
                self.left = if self.options.double && t > 3 { 2 } else { 1 };
                return;
            }
            out.happenings.push(Happening::Pass { seat, turn: t });
        }
        self.set_over(t);
    }

    /// A seat stops playing out of the action flow: it resigned, lost on time or abandoned
    /// (§7). Its pieces stay, unowned. If it was the seat to move, the turn passes
    /// (§11.4 step 6 from it, the rest of a double turn lost); if at most one seat is left
    /// live, the position is over. Returns the automatic events of the new turn (passes, C3),
    /// or `None` (and changes nothing) if the seat was not live or the position is over.
    pub fn stop_seat(&mut self, seat: usize) -> Option<Outcome> {
        if seat > 2 || !self.is_live(seat) || self.is_over() {
            return None;
        }
        let mut out = Outcome::default();
        self.live &= !(1 << seat);
        if self.live_count() <= 1 {
            self.set_over(self.turn);
        } else if self.to_move as usize == seat {
            self.no_capture = NONE;
            self.next_turn(seat, &mut out);
        }
        Some(out)
    }

    /// 收军 (§8.3): seat s recovers its army. Every piece of its team still on the board is
    /// removed (face-down ones are revealed by the returned list) and s stops playing.
    /// Returns the removed pieces in index order, `(point, identity, was_face_up)`.
    ///
    /// In the viewer form the identities of the seat's face-down pieces must be told
    /// (`told`, as the record's `shoujun` event gives them); the full form ignores `told`.
    /// `None` if the seat is not live or holds no team, or a told identity does not fit.
    pub fn recover_army(&mut self, seat: usize, told: &[(Point, Piece)]) -> Option<ArrayVec<(Point, Piece, bool), 12>> {
        let team = *self.teams.get(seat)?;
        if team == 0 || !self.is_live(seat) {
            return None;
        }
        let mut next = self.clone();
        let mut removed = ArrayVec::new();
        for &(p, id) in told {
            if next.board[p.index()] != UNKNOWN || id.team(self.options.split2).0 != team {
                return None;
            }
            next.board[p.index()] = DOWN | id.0;
        }
        for i in 0..POINTS {
            let c = next.board[i];
            let (id, up) = match c {
                EMPTY | UNKNOWN => continue,
                c if is_down(c) => (Piece(c & 0x0f), false),
                c => (Piece(c - 1), true),
            };
            if id.team(self.options.split2).0 != team {
                continue;
            }
            if !up {
                if next.hidden[id.index()] == 0 {
                    return None;
                }
                next.hidden[id.index()] -= 1;
                next.down -= 1;
            }
            next.removed[id.index()] += 1;
            next.board[i] = EMPTY;
            removed.try_push((Point(i as u8), id, up)).ok()?;
        }
        if next.hidden_of_team(Team(team)) != 0 {
            return None;
        }
        next.on_board[team as usize - 1] = 0;
        next.live &= !(1 << seat);
        *self = next;
        Some(removed)
    }

    /// Recomputes the derived counts from the board and the lists (after text parsing).
    pub(crate) fn recount(&mut self) {
        let mut hidden = SET_COUNTS;
        let mut down = 0;
        let mut on_board = [0u8; 3];
        for &c in &self.board {
            if is_up(c) {
                hidden[(c - 1) as usize] -= 1;
                on_board[self.team_of_cell(c) as usize - 1] += 1;
            } else if is_down(c) {
                down += 1;
            }
        }
        for id in 0..14 {
            hidden[id] -= self.captured.iter().map(|c| c[id]).sum::<u8>() + self.removed[id];
        }
        for id in Piece::all() {
            on_board[self.team_index(id)] += hidden[id.index()];
        }
        self.hidden = hidden;
        self.down = down;
        self.on_board = on_board;
    }

    // --- perft ----------------------------------------------------------------

    /// perft (§12) of a full position: the number of action sequences of length `depth`;
    /// everything automatic uses no depth.
    ///
    /// Contract: the position is in the full form (a viewer flip would panic); use
    /// [`chance_perft`] for viewer positions.
    pub fn perft(&self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => self.count_legal() as u64,
            _ => {
                let mut n = 0;
                for m in self.legal_moves() {
                    let mut next = self.clone();
                    next.play_unchecked(m);
                    n += next.perft(depth - 1);
                }
                n
            }
        }
    }

    /// perft per root action, in canonical order.
    pub fn perft_divide(&self, depth: u32) -> Vec<(Move, u64)> {
        if depth == 0 {
            return Vec::new();
        }
        self.legal_moves()
            .into_iter()
            .map(|m| {
                let mut next = self.clone();
                next.play_unchecked(m);
                (m, next.perft(depth - 1))
            })
            .collect()
    }

    /// The distinct identities of the hidden pool.
    pub fn pool_identities(&self) -> impl Iterator<Item = Piece> + '_ {
        Piece::all().filter(|id| self.hidden[id.index()] > 0)
    }
}

/// chance-perft (§12) on the viewer form of `pos`: a flip contributes one branch per
/// distinct identity in the hidden pool.
pub fn chance_perft(pos: &AnqiPosition, depth: u32) -> u64 {
    fn go(v: &AnqiPosition, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let distinct = v.pool_identities().count() as u64;
        if depth == 1 {
            let moves = v.count_legal() as u64;
            let flips = if v.is_over() { 0 } else { v.down as u64 };
            return moves - flips + flips * distinct;
        }
        let mut n = 0;
        for m in v.legal_moves() {
            if let Move::Flip(_) = m {
                for id in v.pool_identities() {
                    let mut next = v.clone();
                    let mut out = Outcome::default();
                    next.act(m, Some(id), &mut out);
                    next.advance(&mut out);
                    n += go(&next, depth - 1);
                }
            } else {
                let mut next = v.clone();
                next.play_unchecked(m);
                n += go(&next, depth - 1);
            }
        }
        n
    }
    go(&pos.viewer(), depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lone(piece: char, at: &str, options: Options) -> u32 {
        let id = Piece::from_char(piece).unwrap();
        let p = Point::parse(at).unwrap();
        let mut pos = AnqiPosition::empty(options);
        pos.board[p.index()] = id.0 + 1;
        let team = id.team(options.split2).0;
        pos.targets(p.index(), id.0 + 1, team).count_ones()
    }

    #[test]
    fn empty_board_counts_of_section_6() {
        let std = Options::default();
        for (piece, counts) in [
            ('R', [12, 12, 12, 12]),
            ('K', [12, 12, 12, 12]),
            ('N', [2, 8, 6, 4]),
            ('E', [1, 4, 2, 1]),
            ('A', [1, 4, 4, 4]),
            ('P', [2, 4, 4, 4]),
            ('C', [12, 12, 12, 12]),
        ] {
            for (at, n) in ["a1", "e3", "c2", "b2"].into_iter().zip(counts) {
                assert_eq!(lone(piece, at, std), n, "{piece} on {at}");
            }
        }
        let enh = Options {
            enhanced: true,
            ..Options::default()
        };
        for (piece, at, n) in [
            ('K', "a1", 16),
            ('K', "e3", 20),
            ('A', "a1", 3),
            ('A', "e3", 8),
            ('E', "a1", 4),
            ('E', "e3", 8),
        ] {
            assert_eq!(lone(piece, at, enh), n, "enhanced {piece} on {at}");
        }
        // Unchanged by enhanced.
        assert_eq!(lone('N', "e3", enh), 8);
        assert_eq!(lone('R', "e3", enh), 12);
    }

    #[test]
    fn elephant_targets_are_the_named_points() {
        let mut pos = AnqiPosition::empty(Options::default());
        let e3 = Point::parse("e3").unwrap();
        pos.board[e3.index()] = 3; // E
        let mut mask = pos.targets(e3.index(), 3, 2);
        let mut names = Vec::new();
        while mask != 0 {
            names.push(Point(mask.trailing_zeros() as u8).to_string());
            mask &= mask - 1;
        }
        assert_eq!(names, ["c1", "g1", "c5", "g5"]);
    }

    #[test]
    fn the_cannon_in_a_corner_controls_ten() {
        // Cannon on a1 with screens on b1 and a2: c1 … i1 and a3 … a5 are attacked.
        let mut pos = AnqiPosition::empty(Options::default());
        let at = |s: &str| Point::parse(s).unwrap().index();
        pos.board[at("a1")] = 6; // C (team 2)
        pos.board[at("b1")] = UNKNOWN;
        pos.board[at("a2")] = DOWN | 13;
        let moves = pos.targets(at("a1"), 6, 2);
        assert_eq!(moves, 0, "no empty neighbour, nothing to capture");
        // Fill the far points with capturable pieces one line at a time.
        let mut control = 0;
        for target in ["c1", "d1", "e1", "f1", "g1", "h1", "i1", "a3", "a4", "a5"] {
            let mut q = pos.clone();
            q.board[at(target)] = 8; // k (team 1)
            control += q.targets(at("a1"), 6, 2).count_ones();
        }
        assert_eq!(control, 10);
    }

    #[test]
    fn the_cannon_example_of_section_6() {
        let at = |s: &str| Point::parse(s).unwrap().index();
        let mut pos = AnqiPosition::empty(Options::default());
        pos.board[at("a1")] = 6; // C, team 2
        pos.board[at("b1")] = UNKNOWN;
        for (f1, can) in [(8u8, true), (4, false), (DOWN | 7, false)] {
            // 8 = k (team 1): capturable; 4 = R (team 2): own; face-down: not capturable.
            let mut q = pos.clone();
            q.board[at("f1")] = f1;
            let t = q.targets(at("a1"), 6, 2);
            assert_eq!(t & (1 << at("f1")) != 0, can, "f1 = {f1}");
            assert_eq!(
                t & ((1 << at("g1")) | (1 << at("h1")) | (1 << at("i1"))),
                0,
                "never beyond a second piece"
            );
        }
    }

    #[test]
    fn xqlegs_blocks_legs_and_eyes() {
        let at = |s: &str| Point::parse(s).unwrap().index();
        let o = Options {
            double: true,
            xqlegs: true,
            ..Options::default()
        };
        let mut pos = AnqiPosition::empty(o);
        pos.board[at("e3")] = 5; // N
        pos.board[at("e4")] = UNKNOWN; // blocks e3-d5 and e3-f5
        assert_eq!(pos.targets(at("e3"), 5, 2).count_ones(), 6);
        let mut pos = AnqiPosition::empty(o);
        pos.board[at("e3")] = 3; // E
        pos.board[at("d4")] = 8; // blocks e3-c5
        assert_eq!(pos.targets(at("e3"), 3, 2).count_ones(), 3);
        // Without xqlegs both jump.
        let mut plain = pos.clone();
        plain.options.xqlegs = false;
        assert_eq!(plain.targets(at("e3"), 3, 2).count_ones(), 4);
    }
}
