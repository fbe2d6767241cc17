//! Pieces (RULES §3).

use std::fmt;

use crate::side::Side;

/// What a piece is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Role {
    /// 王 (魏/蜀/吴), `K`.
    King = 0,
    /// 子, `Z`.
    Prince = 1,
    /// 妃, `F`.
    Consort = 2,
    /// 仕/士/侍, `A`.
    Advisor = 3,
    /// 相/象/丞, `E`.
    Elephant = 4,
    /// 车, `R`.
    Chariot = 5,
    /// 马, `N`.
    Horse = 6,
    /// 炮, `C`.
    Cannon = 7,
    /// 兵/卒/丁, `P`.
    Soldier = 8,
}

impl Role {
    /// All roles.
    pub const ALL: [Role; 9] = [
        Role::King,
        Role::Prince,
        Role::Consort,
        Role::Advisor,
        Role::Elephant,
        Role::Chariot,
        Role::Horse,
        Role::Cannon,
        Role::Soldier,
    ];

    /// The letter in notation.
    pub const fn letter(self) -> char {
        match self {
            Role::King => 'K',
            Role::Prince => 'Z',
            Role::Consort => 'F',
            Role::Advisor => 'A',
            Role::Elephant => 'E',
            Role::Chariot => 'R',
            Role::Horse => 'N',
            Role::Cannon => 'C',
            Role::Soldier => 'P',
        }
    }

    /// Parses a piece letter.
    pub const fn from_letter(c: char) -> Option<Role> {
        Some(match c {
            'K' => Role::King,
            'Z' => Role::Prince,
            'F' => Role::Consort,
            'A' => Role::Advisor,
            'E' => Role::Elephant,
            'R' => Role::Chariot,
            'N' => Role::Horse,
            'C' => Role::Cannon,
            'P' => Role::Soldier,
            _ => return None,
        })
    }

    /// English name.
    pub const fn name(self) -> &'static str {
        match self {
            Role::King => "king",
            Role::Prince => "prince",
            Role::Consort => "consort",
            Role::Advisor => "advisor",
            Role::Elephant => "elephant",
            Role::Chariot => "chariot",
            Role::Horse => "horse",
            Role::Cannon => "cannon",
            Role::Soldier => "soldier",
        }
    }

    const fn from_index(i: u8) -> Role {
        Role::ALL[i as usize]
    }
}

/// A piece: a side and a role.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Whose piece.
    pub side: Side,
    /// What it is.
    pub role: Role,
}

impl Piece {
    /// The character printed on the piece (each side has its own for some roles).
    pub const fn character(self) -> char {
        match (self.role, self.side) {
            (Role::King, s) => s.kingdom(),
            (Role::Prince, _) => '子',
            (Role::Consort, _) => '妃',
            (Role::Advisor, Side::W) => '仕',
            (Role::Advisor, Side::B) => '士',
            (Role::Advisor, Side::Y) => '侍',
            (Role::Elephant, Side::W) => '相',
            (Role::Elephant, Side::B) => '象',
            (Role::Elephant, Side::Y) => '丞',
            (Role::Chariot, _) => '车',
            (Role::Horse, _) => '马',
            (Role::Cannon, _) => '炮',
            (Role::Soldier, Side::W) => '兵',
            (Role::Soldier, Side::B) => '卒',
            (Role::Soldier, Side::Y) => '丁',
        }
    }

    /// Compact code used in the position's square array: never 0.
    #[inline]
    pub(crate) const fn code(self) -> u8 {
        ((self.side as u8) << 4) | (self.role as u8 + 1)
    }

    /// Inverse of [`Piece::code`] for a non-zero code.
    #[inline]
    pub(crate) const fn from_code(code: u8) -> Piece {
        Piece {
            side: Side::from_index((code >> 4) as usize),
            role: Role::from_index((code & 15) - 1),
        }
    }
}

impl fmt::Display for Piece {
    /// `WK`, `BR`, …: side letter and piece letter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.side.letter(), self.role.letter())
    }
}

/// The 18 pieces of each side at the start: (role, file, rank) in the side's rectangle.
pub const SETUP: [(Role, u8, u8); 18] = [
    (Role::King, 5, 2),
    (Role::Prince, 7, 3),
    (Role::Consort, 5, 1),
    (Role::Advisor, 4, 2),
    (Role::Advisor, 6, 2),
    (Role::Elephant, 3, 2),
    (Role::Elephant, 7, 2),
    (Role::Chariot, 1, 2),
    (Role::Chariot, 9, 2),
    (Role::Horse, 2, 2),
    (Role::Horse, 8, 2),
    (Role::Cannon, 2, 4),
    (Role::Cannon, 8, 4),
    (Role::Soldier, 1, 5),
    (Role::Soldier, 3, 5),
    (Role::Soldier, 5, 5),
    (Role::Soldier, 7, 5),
    (Role::Soldier, 9, 5),
];
