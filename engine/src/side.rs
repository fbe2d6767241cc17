//! The three sides and the turn order (RULES §1).

use std::fmt;

/// One of the three sides. The discriminant is the side's index in the
/// canonical point numbering (W = 0, B = 1, Y = 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Side {
    /// 魏, white, moves first.
    W = 0,
    /// 蜀, black.
    B = 1,
    /// 吴, yellow.
    Y = 2,
}

impl Side {
    /// All sides in index order.
    pub const ALL: [Side; 3] = [Side::W, Side::B, Side::Y];

    /// The side's index (0, 1, 2).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The side with this index; panics on an index above 2.
    #[inline]
    pub const fn from_index(i: usize) -> Side {
        match i {
            0 => Side::W,
            1 => Side::B,
            2 => Side::Y,
            _ => panic!("side index out of range"),
        }
    }

    /// The side's letter in notation: `W`, `B` or `Y`.
    pub const fn letter(self) -> char {
        match self {
            Side::W => 'W',
            Side::B => 'B',
            Side::Y => 'Y',
        }
    }

    /// Parses a side letter.
    pub const fn from_letter(c: char) -> Option<Side> {
        match c {
            'W' => Some(Side::W),
            'B' => Some(Side::B),
            'Y' => Some(Side::Y),
            _ => None,
        }
    }

    /// The kingdom's character: 魏, 蜀 or 吴.
    pub const fn kingdom(self) -> char {
        match self {
            Side::W => '魏',
            Side::B => '蜀',
            Side::Y => '吴',
        }
    }

    /// English name of the side's colour.
    pub const fn colour(self) -> &'static str {
        match self {
            Side::W => "white",
            Side::B => "black",
            Side::Y => "yellow",
        }
    }

    /// The side whose rectangle lies next counterclockwise on the board
    /// (W → B → Y → W). This is geometry and never changes with the
    /// direction of play: it is the `N` of RULES §2.2.
    #[inline]
    pub const fn ccw_neighbour(self) -> Side {
        Side::from_index((self as usize + 1) % 3)
    }

    /// The side whose counterclockwise neighbour is this side (the `L` of RULES §2.4).
    #[inline]
    pub const fn cw_neighbour(self) -> Side {
        Side::from_index((self as usize + 2) % 3)
    }

    /// The side that is neither `self` nor `other`; `other` must differ from `self`.
    #[inline]
    pub const fn third(self, other: Side) -> Side {
        Side::from_index(3 - self as usize - other as usize)
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// The direction of play, chosen when the game is created (备注7).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Direction {
    /// W → B → Y → W (the default).
    #[default]
    Ccw,
    /// W → Y → B → W.
    Cw,
}

impl Direction {
    /// The side that moves right after `s` among all three sides: `target(s)`.
    #[inline]
    pub const fn next(self, s: Side) -> Side {
        match self {
            Direction::Ccw => s.ccw_neighbour(),
            Direction::Cw => s.cw_neighbour(),
        }
    }

    /// The side that moves right before `s` among all three sides: `threat(s)`.
    #[inline]
    pub const fn prev(self, s: Side) -> Side {
        match self {
            Direction::Ccw => s.cw_neighbour(),
            Direction::Cw => s.ccw_neighbour(),
        }
    }

    /// Notation: `ccw` or `cw`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::Ccw => "ccw",
            Direction::Cw => "cw",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of sides, as a 3-bit mask.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sides(u8);

impl Sides {
    /// No side.
    pub const EMPTY: Sides = Sides(0);
    /// All three sides.
    pub const ALL: Sides = Sides(0b111);

    /// Whether `s` is in the set.
    #[inline]
    pub const fn contains(self, s: Side) -> bool {
        self.0 & (1 << s as u8) != 0
    }

    /// Adds `s`.
    #[inline]
    pub fn insert(&mut self, s: Side) {
        self.0 |= 1 << s as u8;
    }

    /// Removes `s`.
    #[inline]
    pub fn remove(&mut self, s: Side) {
        self.0 &= !(1 << s as u8);
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many sides are in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The sides in index order.
    pub fn iter(self) -> impl Iterator<Item = Side> {
        Side::ALL.into_iter().filter(move |&s| self.contains(s))
    }

    /// The raw mask (bit i = side with index i).
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl FromIterator<Side> for Sides {
    fn from_iter<I: IntoIterator<Item = Side>>(iter: I) -> Self {
        let mut s = Sides::EMPTY;
        for side in iter {
            s.insert(side);
        }
        s
    }
}
