//! Players, colours and pieces of 三国演弈棋 (RULES-YANYI §1, §3).

use std::fmt;

/// A player, in the turn cycle's order G → B → R (seat index 0, 1, 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Player {
    /// 吴 Wu, green, east; moves first.
    G = 0,
    /// 魏 Wei, black, north.
    B = 1,
    /// 蜀 Shu, red, south.
    R = 2,
}

impl Player {
    /// The three players in cycle order.
    pub const ALL: [Player; 3] = [Player::G, Player::B, Player::R];

    /// Seat index 0, 1, 2.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The player of a seat index (mod 3).
    #[inline]
    pub const fn from_index(i: usize) -> Player {
        match i % 3 {
            0 => Player::G,
            1 => Player::B,
            _ => Player::R,
        }
    }

    /// The next player in the cycle G → B → R → G (live or not).
    #[inline]
    pub const fn cycle_next(self) -> Player {
        Player::from_index(self as usize + 1)
    }

    /// The player's piece colour.
    #[inline]
    pub const fn colour(self) -> Colour {
        match self {
            Player::G => Colour::G,
            Player::B => Colour::B,
            Player::R => Colour::R,
        }
    }

    /// `G`, `B` or `R`.
    pub const fn letter(self) -> char {
        self.colour().letter()
    }

    /// Parses `G`, `B` or `R`.
    pub fn from_letter(c: char) -> Option<Player> {
        match c {
            'G' => Some(Player::G),
            'B' => Some(Player::B),
            'R' => Some(Player::R),
            _ => None,
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A piece colour: the three players' and the 汉 force's yellow.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Colour {
    /// 吴, green.
    G = 0,
    /// 魏, black.
    B = 1,
    /// 蜀, red.
    R = 2,
    /// The 汉 force (献帝), yellow: not a player.
    Y = 3,
}

impl Colour {
    /// All four.
    pub const ALL: [Colour; 4] = [Colour::G, Colour::B, Colour::R, Colour::Y];

    /// The player of this colour (`None` for 汉).
    #[inline]
    pub const fn player(self) -> Option<Player> {
        match self {
            Colour::G => Some(Player::G),
            Colour::B => Some(Player::B),
            Colour::R => Some(Player::R),
            Colour::Y => None,
        }
    }

    /// The colour letter.
    pub const fn letter(self) -> char {
        match self {
            Colour::G => 'G',
            Colour::B => 'B',
            Colour::R => 'R',
            Colour::Y => 'Y',
        }
    }

    /// Parses a colour letter.
    pub fn from_letter(c: char) -> Option<Colour> {
        match c {
            'G' => Some(Colour::G),
            'B' => Some(Colour::B),
            'R' => Some(Colour::R),
            'Y' => Some(Colour::Y),
            _ => None,
        }
    }

    /// The kingdom's name: 吴, 魏, 蜀, 汉.
    pub const fn kingdom(self) -> &'static str {
        match self {
            Colour::G => "吴",
            Colour::B => "魏",
            Colour::R => "蜀",
            Colour::Y => "汉",
        }
    }

    /// The colour's name in words.
    pub const fn name(self) -> &'static str {
        match self {
            Colour::G => "green",
            Colour::B => "black",
            Colour::R => "red",
            Colour::Y => "yellow",
        }
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A kind of piece (§3).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// 帅 (for 汉: the emperor).
    King = 0,
    /// 士.
    Advisor = 1,
    /// 相.
    Elephant = 2,
    /// 马.
    Horse = 3,
    /// 车.
    Chariot = 4,
    /// 炮.
    Cannon = 5,
    /// 兵.
    Soldier = 6,
}

impl Role {
    /// All seven.
    pub const ALL: [Role; 7] = [
        Role::King,
        Role::Advisor,
        Role::Elephant,
        Role::Horse,
        Role::Chariot,
        Role::Cannon,
        Role::Soldier,
    ];

    /// The piece letter K A E N R C P.
    pub const fn letter(self) -> char {
        match self {
            Role::King => 'K',
            Role::Advisor => 'A',
            Role::Elephant => 'E',
            Role::Horse => 'N',
            Role::Chariot => 'R',
            Role::Cannon => 'C',
            Role::Soldier => 'P',
        }
    }

    /// Parses a piece letter.
    pub fn from_letter(c: char) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.letter() == c)
    }

    /// The piece's name in words.
    pub const fn name(self) -> &'static str {
        match self {
            Role::King => "king",
            Role::Advisor => "advisor",
            Role::Elephant => "elephant",
            Role::Horse => "horse",
            Role::Chariot => "chariot",
            Role::Cannon => "cannon",
            Role::Soldier => "soldier",
        }
    }

    #[inline]
    pub(crate) const fn from_u8(v: u8) -> Role {
        match v {
            0 => Role::King,
            1 => Role::Advisor,
            2 => Role::Elephant,
            3 => Role::Horse,
            4 => Role::Chariot,
            5 => Role::Cannon,
            _ => Role::Soldier,
        }
    }
}

/// A piece: colour and role.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Whose (yellow: the 汉 force).
    pub colour: Colour,
    /// What.
    pub role: Role,
}

impl Piece {
    /// A piece.
    pub const fn new(colour: Colour, role: Role) -> Piece {
        Piece { colour, role }
    }

    /// The emperor 汉 (`YK`).
    pub const EMPEROR: Piece = Piece::new(Colour::Y, Role::King);

    /// The board code: 0 is empty, else `colour * 8 + role + 1`.
    #[inline]
    pub(crate) const fn code(self) -> u8 {
        (self.colour as u8) * 8 + self.role as u8 + 1
    }

    /// The piece of a nonzero board code.
    #[inline]
    pub(crate) const fn from_code(c: u8) -> Piece {
        let v = c - 1;
        let colour = match v >> 3 {
            0 => Colour::G,
            1 => Colour::B,
            2 => Colour::R,
            _ => Colour::Y,
        };
        Piece {
            colour,
            role: Role::from_u8(v & 7),
        }
    }
}

impl fmt::Display for Piece {
    /// `GK`, `YR`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.colour.letter(), self.role.letter())
    }
}

/// A set of players as a 3-bit mask.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Players(pub(crate) u8);

impl Players {
    /// Nobody.
    pub const EMPTY: Players = Players(0);
    /// All three.
    pub const ALL: Players = Players(7);

    /// Whether `p` is in the set.
    #[inline]
    pub const fn contains(self, p: Player) -> bool {
        self.0 & (1 << p as u8) != 0
    }

    /// Adds `p`.
    #[inline]
    pub fn insert(&mut self, p: Player) {
        self.0 |= 1 << p as u8;
    }

    /// Removes `p`.
    #[inline]
    pub fn remove(&mut self, p: Player) {
        self.0 &= !(1 << p as u8);
    }

    /// How many.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The players in cycle order.
    pub fn iter(self) -> impl Iterator<Item = Player> {
        Player::ALL.into_iter().filter(move |p| self.contains(*p))
    }

    /// The letters in cycle order (`GBR`), or `-` when empty.
    pub fn letters(self) -> String {
        if self.is_empty() {
            "-".to_owned()
        } else {
            self.iter().map(Player::letter).collect()
        }
    }
}

impl fmt::Debug for Players {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Players({})", self.letters())
    }
}

impl FromIterator<Player> for Players {
    fn from_iter<I: IntoIterator<Item = Player>>(iter: I) -> Self {
        let mut s = Players::EMPTY;
        for p in iter {
            s.insert(p);
        }
        s
    }
}
