//! 三国暗棋 (variant `anqi`): the hidden-piece game of `shared/RULES-ANQI.md`,
//! on a 9 × 5 board of 45 points, three seats and three teams that are
//! claimed by flipping.
//!
//! The layers, as for the first game:
//! - [`Point`], [`Piece`], [`Role`], [`Team`] and [`Options`]: the board and
//!   the pieces (§1, §2, §9);
//! - [`AnqiPosition`]: a validated position in its full form (every identity
//!   known, the server's) or its viewer form (face-down points unknown, what
//!   everyone sees), built from text through [`Setup`] (§11.3), with legal
//!   actions, settling (§11.4), perft and chance-perft (§12);
//! - [`notation`]: position and action text;
//! - [`AnqiGame`]: the game record (§8, §11.5);
//! - [`deal`]: the shuffle, the commitment and its verification (§10), and the
//!   seat-entropy scheme of ANQI R-21.
//!
//! How a server drives a game (the layout and salt come from its CSPRNG; here a
//! fixed draw stands in):
//!
//! ```
//! use engine::anqi::{AnqiGame, AnqiPosition, Command, Input, Options, Settings, deal, notation};
//!
//! let layout = deal::shuffle(|i| i / 2);
//! let salt = [7u8; 32];
//! let game_id = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";
//! let commitment = deal::commitment(game_id, &deal::layout_text(&layout), &salt);
//! assert_eq!(commitment.len(), 64);
//! let mut game = AnqiGame::new(AnqiPosition::from_layout(&layout, Options::default()), Settings::default());
//! game.set_deal(&deal::layout_text(&layout), &deal::to_hex(&salt));
//! // A client sends "+b2" (never with the identity).
//! let m = notation::parse_move("+b2").unwrap();
//! let events = game.apply(Input { seat: 0, command: Command::Play(m), at: 0 }).unwrap();
//! // The record event carries what the flip revealed; seat 1 claimed that piece's team.
//! assert!(events[0].to_string().starts_with("+b2="));
//! assert!(events[1].to_string().starts_with("claim 1 "));
//! // Everyone sees the viewer form; a bot follows it with `play_flip` or `follow_record`.
//! let mut bot_view = AnqiPosition::initial_viewer(Options::default());
//! engine::anqi::follow_record(&mut bot_view, &game.record_lines()).unwrap();
//! assert_eq!(bot_view, game.viewer());
//! assert!(game.viewer().to_string().starts_with("????1????/????1????/9/?"));
//! ```

pub mod deal;
pub mod explain;
pub mod game;
pub mod notation;
pub mod position;

use std::fmt;

pub use explain::{IllegalAction, Refusal};
pub use game::{
    AnqiGame, Command, DeadlockScoring, EndReason, FollowError, GameError, GameResult, Input, Mode, RecordEvent,
    Settings, StopReason, follow_record,
};
pub use notation::ParseError;
pub use position::{AnqiPosition, Happening, Move, MoveList, Outcome, Setup, chance_perft};

/// The number of points on the board (9 files × 5 ranks).
pub const POINTS: usize = 45;

/// A point of the board, `a1` … `i5`, by its canonical index 9·(rank − 1) + (file − 1) (§1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point(u8);

impl Point {
    /// The point of canonical index `index` (0 … 44), if there is one.
    pub const fn new(index: usize) -> Option<Point> {
        if index < POINTS { Some(Point(index as u8)) } else { None }
    }

    /// The point at `file` (0 = `a` … 8 = `i`) and `rank` (0 = `1` … 4 = `5`).
    pub const fn at(file: i32, rank: i32) -> Option<Point> {
        if file >= 0 && file < 9 && rank >= 0 && rank < 5 {
            Some(Point((rank * 9 + file) as u8))
        } else {
            None
        }
    }

    /// The canonical index (0 … 44).
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The file, 0 (`a`) … 8 (`i`).
    pub const fn file(self) -> i32 {
        (self.0 % 9) as i32
    }

    /// The rank, 0 (`1`) … 4 (`5`).
    pub const fn rank(self) -> i32 {
        (self.0 / 9) as i32
    }

    /// Whether a piece starts here face down (the four 4×2 corner blocks, §1).
    pub const fn is_start_point(self) -> bool {
        self.file() != 4 && self.rank() != 2
    }

    /// Every point in canonical order.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..POINTS as u8).map(Point)
    }

    /// The 32 start points in ascending index (the layout's order, §1).
    pub fn start_points() -> impl Iterator<Item = Point> {
        Point::all().filter(|p| p.is_start_point())
    }

    /// The position k (0 … 31) of this start point in the start-point order, if it is one.
    pub fn start_index(self) -> Option<usize> {
        self.is_start_point()
            .then(|| Point::start_points().position(|q| q == self).unwrap_or(0))
    }

    /// Parses a point name such as `b2`.
    pub fn parse(text: &str) -> Option<Point> {
        let b = text.as_bytes();
        if b.len() != 2 || !(b'a'..=b'i').contains(&b[0]) || !(b'1'..=b'5').contains(&b[1]) {
            return None;
        }
        Point::at((b[0] - b'a') as i32, (b[1] - b'1') as i32)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + (self.0 % 9)) as char, self.0 / 9 + 1)
    }
}

/// A piece type (§2.1, §6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// 将/帅.
    General,
    /// 士/仕.
    Advisor,
    /// 象/相.
    Elephant,
    /// 车/伡.
    Chariot,
    /// 马/㐷.
    Horse,
    /// 包/炮.
    Cannon,
    /// 卒/兵.
    Soldier,
}

impl Role {
    /// The roles in canonical order.
    pub const ALL: [Role; 7] = [
        Role::General,
        Role::Advisor,
        Role::Elephant,
        Role::Chariot,
        Role::Horse,
        Role::Cannon,
        Role::Soldier,
    ];

    /// The word used in explanations.
    pub const fn name(self) -> &'static str {
        match self {
            Role::General => "general",
            Role::Advisor => "advisor",
            Role::Elephant => "elephant",
            Role::Chariot => "chariot",
            Role::Horse => "horse",
            Role::Cannon => "cannon",
            Role::Soldier => "soldier",
        }
    }
}

/// A piece identity: colour and type, written as one letter (upper case red, lower case
/// black, §2.1). The index 0 … 13 follows the canonical order `K A E R N C P k a e r n c p`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece(u8);

/// The piece letters in canonical order.
pub const PIECE_LETTERS: &[u8; 14] = b"KAERNCPkaerncp";

/// The full set in canonical order (§2.1).
pub const FULL_SET: &str = "KAAEERRNNCCPPPPPkaaeerrnnccppppp";

/// How many of each identity the full set holds, in canonical order.
pub const SET_COUNTS: [u8; 14] = [1, 2, 2, 2, 2, 2, 5, 1, 2, 2, 2, 2, 2, 5];

impl Piece {
    /// Every identity in canonical order.
    pub fn all() -> impl Iterator<Item = Piece> {
        (0..14).map(Piece)
    }

    /// The identity of canonical index `index` (0 … 13).
    pub const fn from_index(index: usize) -> Option<Piece> {
        if index < 14 { Some(Piece(index as u8)) } else { None }
    }

    /// The canonical index (0 … 13).
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The identity of a letter.
    pub fn from_char(c: char) -> Option<Piece> {
        PIECE_LETTERS
            .iter()
            .position(|&l| l as char == c)
            .map(|i| Piece(i as u8))
    }

    /// The letter.
    pub const fn char(self) -> char {
        PIECE_LETTERS[self.0 as usize] as char
    }

    /// The type.
    pub const fn role(self) -> Role {
        Role::ALL[(self.0 % 7) as usize]
    }

    /// Whether it is a red character (upper-case letter).
    pub const fn is_red(self) -> bool {
        self.0 < 7
    }

    /// Its team under the given split (§2.2).
    pub const fn team(self, split2: bool) -> Team {
        Team(TEAM_OF[split2 as usize][self.0 as usize])
    }

    /// Its value (§2.1; the enhanced column with `enhanced`).
    pub const fn value(self, enhanced: bool) -> u32 {
        VALUES[enhanced as usize][(self.0 % 7) as usize]
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// Team numbers of each identity, `[split1, split2]`, canonical order.
pub(crate) const TEAM_OF: [[u8; 14]; 2] = [
    // K A E R N C P k a e r n c p
    [1, 2, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 3, 1],
    [2, 2, 2, 3, 3, 3, 1, 2, 2, 2, 3, 3, 3, 1],
];

/// Values by role, `[standard, enhanced]` (§2.1).
const VALUES: [[u32; 7]; 2] = [[50, 15, 15, 50, 35, 35, 20], [90, 35, 35, 50, 35, 35, 20]];

/// A team, 1, 2 or 3, numbered as the seed lists them (§2.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Team(u8);

impl Team {
    /// Team `n` (1 … 3).
    pub const fn new(n: u8) -> Option<Team> {
        if n >= 1 && n <= 3 { Some(Team(n)) } else { None }
    }

    /// The team number, 1 … 3.
    pub const fn number(self) -> u8 {
        self.0
    }

    /// Its size: the starting piece count (§2.2).
    pub const fn size(self, split2: bool) -> u32 {
        if split2 {
            [10, 10, 12][self.0 as usize - 1]
        } else {
            [12, 10, 10][self.0 as usize - 1]
        }
    }

    /// Its total: the sum of its pieces' values (§2.2).
    pub fn total(self, options: Options) -> u32 {
        Piece::all()
            .filter(|p| p.team(options.split2) == self)
            .map(|p| p.value(options.enhanced) * SET_COUNTS[p.index()] as u32)
            .sum()
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The options of §9 that change the legal actions, written in the variant field of the
/// position text. Assigned teams (§9.2) are not an option of the position: they show in
/// its teams field from the start.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Options {
    /// `split2`: the second team split (§9.1).
    pub split2: bool,
    /// `+enhanced`: queen generals, king advisors, bishop elephants (§9.3).
    pub enhanced: bool,
    /// `+double`: two actions a turn from turn 4 (§9.4).
    pub double: bool,
    /// `+fanchi`: the second action may capture the piece the first revealed (§9.4, R-19).
    pub fanchi: bool,
    /// `+xqlegs`: horse legs and elephant eyes block, as in xiangqi (§9.4, R-22).
    pub xqlegs: bool,
}

impl Options {
    /// Whether the combination is allowed (`fanchi` and `xqlegs` only with `double`).
    pub const fn is_valid(self) -> bool {
        self.double || !(self.fanchi || self.xqlegs)
    }
}

impl fmt::Display for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.split2 { "split2" } else { "split1" })?;
        for (on, name) in [
            (self.enhanced, "+enhanced"),
            (self.double, "+double"),
            (self.fanchi, "+fanchi"),
            (self.xqlegs, "+xqlegs"),
        ] {
            if on {
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// The layout of §10.4's test vector, used as the sample in §11 and §12.
pub const SAMPLE_LAYOUT: &str = "NRPcpARnppPErACKcPPraPanepEepkCN";
