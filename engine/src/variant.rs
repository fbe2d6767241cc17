//! Game systems. Three Kingdoms chess (三国象棋, seed `000`) is the one
//! implemented; 三国演弈棋 (a 17×17 board with a neutral fourth force) and
//! 三国暗棋 (hidden pieces on half a xiangqi board) will be further variants,
//! each with its own board, pieces and position type behind this enum, as
//! shakmaty keeps one position type per chess variant.

use std::fmt;
use std::str::FromStr;

use crate::position::Position;
use crate::side::Direction;

/// A game system.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Variant {
    /// 三国象棋: the 184-point board of RULES.md.
    #[default]
    Sanguo,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 1] = [Variant::Sanguo];

    /// The name used in APIs and storage.
    pub const fn key(self) -> &'static str {
        match self {
            Variant::Sanguo => "sanguo",
        }
    }

    /// The Chinese name.
    pub const fn title(self) -> &'static str {
        match self {
            Variant::Sanguo => "三国象棋",
        }
    }

    /// The variant's initial position.
    pub fn initial(self, direction: Direction) -> VariantPosition {
        match self {
            Variant::Sanguo => VariantPosition::Sanguo(Position::initial(direction)),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Not a known variant name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{0}' (known: sanguo)")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.key() == s)
            .ok_or_else(|| UnknownVariant(s.to_owned()))
    }
}

/// A position of some variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VariantPosition {
    /// 三国象棋.
    Sanguo(Position),
}

impl VariantPosition {
    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        match self {
            VariantPosition::Sanguo(_) => Variant::Sanguo,
        }
    }

    /// The position text of the variant's notation.
    pub fn to_text(&self) -> String {
        match self {
            VariantPosition::Sanguo(p) => crate::notation::format_position(p),
        }
    }

    /// Parses position text of `variant`.
    pub fn from_text(variant: Variant, text: &str) -> Result<VariantPosition, crate::notation::ParseError> {
        match variant {
            Variant::Sanguo => Ok(VariantPosition::Sanguo(crate::notation::parse_position(text)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_round_trip() {
        assert_eq!("sanguo".parse::<Variant>(), Ok(Variant::Sanguo));
        assert!("xiangqi".parse::<Variant>().is_err());
        let p = Variant::Sanguo.initial(Direction::Cw);
        assert_eq!(VariantPosition::from_text(p.variant(), &p.to_text()), Ok(p));
    }
}
