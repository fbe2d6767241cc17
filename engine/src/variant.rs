//! Game systems, as shakmaty keeps chess variants: each variant is its own
//! position type implementing one [`Position`] trait, and [`VariantPosition`]
//! is an enum with one arm per variant that forwards every call. Code for any
//! variant takes the trait or the enum; code for one variant takes its own
//! type — no `if variant` inside shared rules code.
//!
//! Adding a variant: a module with its position type, an arm in [`Variant`]
//! (key, title, default position) and an arm in [`VariantPosition`] and its
//! forwarding macro. Nothing else in the engine changes.

use std::fmt;
use std::str::FromStr;

use crate::side::Direction;

/// A game system. With the `serde` feature it is written as its key
/// (`"sanguo"`, …), the name used in APIs and storage.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Variant {
    /// 三国象棋: the 184-point board of RULES.md.
    #[default]
    Sanguo,
    /// 三国暗棋: the 45-point hidden-piece game of RULES-ANQI.md.
    Anqi,
    /// 三国演弈棋: the 225-point board of RULES-YANYI.md.
    Yanyi,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Sanguo, Variant::Anqi, Variant::Yanyi];

    /// The name used in APIs and storage.
    pub const fn key(self) -> &'static str {
        match self {
            Variant::Sanguo => "sanguo",
            Variant::Anqi => "anqi",
            Variant::Yanyi => "yanyi",
        }
    }

    /// The Chinese name.
    pub const fn title(self) -> &'static str {
        match self {
            Variant::Sanguo => "三国象棋",
            Variant::Anqi => "三国暗棋",
            Variant::Yanyi => "三国演弈棋",
        }
    }

    /// The variant's initial position (for 三国象棋, in the given direction of play;
    /// 三国暗棋 has none and gives its default position; 三国演弈棋 has one direction
    /// of play and ignores `direction`).
    pub fn initial(self, direction: Direction) -> VariantPosition {
        match self {
            Variant::Sanguo => VariantPosition::Sanguo(crate::position::Position::initial(direction)),
            Variant::Anqi => self.default_position(),
            Variant::Yanyi => VariantPosition::Yanyi(crate::yanyi::Position::initial()),
        }
    }

    /// The position the command-line tools start from when given none (三国暗棋: the
    /// initial full position of the sample layout of RULES-ANQI §10.4, split 1).
    pub fn default_position(self) -> VariantPosition {
        match self {
            Variant::Sanguo => self.initial(Direction::Ccw),
            Variant::Anqi => VariantPosition::Anqi(crate::anqi::AnqiPosition::sample()),
            Variant::Yanyi => self.initial(Direction::Ccw),
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
#[error("unknown variant '{0}' (known: {known})", known = known_keys())]
pub struct UnknownVariant(pub String);

fn known_keys() -> String {
    Variant::ALL.map(Variant::key).join(", ")
}

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.key() == s)
            .ok_or_else(|| UnknownVariant(s.to_owned()))
    }
}

/// What every variant's position offers: the game-independent face of a
/// rules engine, as shakmaty's `Position` trait. Generic code (perft, the
/// command-line tools, a bot's search) is written against it.
///
/// Seats are numbered 0, 1, 2 in the variant's own seat order (三国象棋:
/// W, B, Y; 三国暗棋: seats 1, 2, 3; 三国演弈棋: the players in their order);
/// clocks, connections and results of the platform are kept per seat index.
pub trait Position: Clone + fmt::Debug + Send + Sync + 'static {
    /// An action of this variant (a move, a flip, …).
    type Move: Copy + Eq + fmt::Debug + fmt::Display + Send + Sync + 'static;
    /// The legal actions: a fixed-capacity list, so generation never allocates.
    type MoveList: AsRef<[Self::Move]> + IntoIterator<Item = Self::Move>;
    /// Why a text is not a position or an action of this variant.
    type ParseError: std::error::Error + Send + Sync + 'static;
    /// Why an action was refused, in the game's own terms.
    type PlayError: std::error::Error + Send + Sync + 'static;

    /// Which variant this is.
    const VARIANT: Variant;

    /// Parses the variant's position text (the full form where there is hidden
    /// information); validates it as the variant's setup rules say.
    fn from_text(text: &str) -> Result<Self, Self::ParseError>;
    /// The variant's position text, canonical (round-trips with [`Position::from_text`]).
    fn to_text(&self) -> String;
    /// Settles what is automatic at the start of a turn, for a position read
    /// from text that may not be settled (三国象棋: a side to move without a
    /// legal move is mated). Positions that `play` produced are settled.
    fn settle(&mut self) {}
    /// Parses an action as a client writes it.
    fn parse_move(&self, text: &str) -> Result<Self::Move, Self::ParseError>;
    /// The action's canonical text in this position (events and records may
    /// add what the action revealed; that is the variant's own business).
    fn move_text(&self, m: Self::Move) -> String {
        m.to_string()
    }

    /// The legal actions of the seat to move, in the variant's canonical order.
    fn legal_moves(&self) -> Self::MoveList;
    /// Plays a legal action and settles everything automatic after it; an
    /// illegal one is refused with the reason and the position is untouched.
    fn play(&mut self, m: Self::Move) -> Result<(), Self::PlayError>;
    /// Plays `m` without checking it. `m` must be one of
    /// [`Position::legal_moves`]; anything else breaks the position's invariants.
    fn play_unchecked(&mut self, m: Self::Move);

    /// The seat to move (0, 1 or 2), or `None` when the position is over.
    fn seat_to_move(&self) -> Option<usize>;
    /// Whether the position itself is over (no seat is to move).
    fn is_over(&self) -> bool {
        self.seat_to_move().is_none()
    }

    /// Counts the action sequences of length `depth`, as the variant's perft
    /// section defines them (everything automatic uses no depth).
    fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let moves = self.legal_moves();
        if depth == 1 {
            return moves.as_ref().len() as u64;
        }
        moves
            .into_iter()
            .map(|m| {
                let mut next = self.clone();
                next.play_unchecked(m);
                next.perft(depth - 1)
            })
            .sum()
    }

    /// perft per root action: `(action, count)` in canonical order.
    fn perft_divide(&self, depth: u32) -> Vec<(Self::Move, u64)> {
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
}

impl Position for crate::position::Position {
    type Move = crate::position::Move;
    type MoveList = crate::position::MoveList;
    type ParseError = crate::notation::ParseError;
    type PlayError = crate::explain::IllegalMove;
    const VARIANT: Variant = Variant::Sanguo;

    fn from_text(text: &str) -> Result<Self, Self::ParseError> {
        crate::notation::parse_position(text)
    }
    fn settle(&mut self) {
        // A side to move without a legal move is mated at the start of its turn (RULES §5).
        self.resolve_turn();
    }
    fn to_text(&self) -> String {
        crate::notation::format_position(self)
    }
    fn parse_move(&self, text: &str) -> Result<Self::Move, Self::ParseError> {
        crate::notation::parse_move(text)
    }
    fn legal_moves(&self) -> Self::MoveList {
        crate::position::Position::legal_moves(self)
    }
    fn play(&mut self, m: Self::Move) -> Result<(), Self::PlayError> {
        crate::position::Position::play(self, m).map(drop)
    }
    fn play_unchecked(&mut self, m: Self::Move) {
        crate::position::Position::play_unchecked(self, m);
    }
    fn seat_to_move(&self) -> Option<usize> {
        (!crate::position::Position::is_over(self)).then(|| self.turn().index())
    }
    fn perft(&self, depth: u32) -> u64 {
        crate::position::perft(self, depth)
    }
    fn perft_divide(&self, depth: u32) -> Vec<(Self::Move, u64)> {
        crate::position::perft_divide(self, depth)
    }
}

impl Position for crate::anqi::AnqiPosition {
    type Move = crate::anqi::Move;
    type MoveList = crate::anqi::MoveList;
    type ParseError = crate::anqi::ParseError;
    type PlayError = crate::anqi::IllegalAction;
    const VARIANT: Variant = Variant::Anqi;

    /// The full form only (`*X` tokens): a viewer position cannot play flips without
    /// being told identities (use `AnqiPosition::play_flip` and `chance_perft`).
    fn from_text(text: &str) -> Result<Self, Self::ParseError> {
        let p = crate::anqi::notation::parse_position(text)?;
        if p.is_viewer() && p.face_down_count() > 0 {
            return Err(crate::anqi::ParseError::Invalid {
                rule: "full form",
                detail: "this is the viewer form (?): give the full form (*X) to play or count".to_owned(),
            });
        }
        Ok(p)
    }
    fn to_text(&self) -> String {
        crate::anqi::notation::format_position(self)
    }
    fn parse_move(&self, text: &str) -> Result<Self::Move, Self::ParseError> {
        crate::anqi::notation::parse_move(text)
    }
    fn legal_moves(&self) -> Self::MoveList {
        crate::anqi::AnqiPosition::legal_moves(self)
    }
    fn play(&mut self, m: Self::Move) -> Result<(), Self::PlayError> {
        crate::anqi::AnqiPosition::play(self, m).map(drop)
    }
    fn play_unchecked(&mut self, m: Self::Move) {
        crate::anqi::AnqiPosition::play_unchecked(self, m);
    }
    fn seat_to_move(&self) -> Option<usize> {
        crate::anqi::AnqiPosition::seat_to_move(self)
    }
    fn perft(&self, depth: u32) -> u64 {
        crate::anqi::AnqiPosition::perft(self, depth)
    }
    fn perft_divide(&self, depth: u32) -> Vec<(Self::Move, u64)> {
        crate::anqi::AnqiPosition::perft_divide(self, depth)
    }
}

impl Position for crate::yanyi::Position {
    type Move = crate::yanyi::Move;
    type MoveList = crate::yanyi::MoveList;
    type ParseError = crate::yanyi::ParseError;
    type PlayError = crate::yanyi::IllegalMove;
    const VARIANT: Variant = Variant::Yanyi;

    fn from_text(text: &str) -> Result<Self, Self::ParseError> {
        crate::yanyi::parse_position(text)
    }
    fn to_text(&self) -> String {
        crate::yanyi::format_position(self)
    }
    fn parse_move(&self, text: &str) -> Result<Self::Move, Self::ParseError> {
        crate::yanyi::parse_move(text)
    }
    fn legal_moves(&self) -> Self::MoveList {
        crate::yanyi::Position::legal_moves(self)
    }
    fn play(&mut self, m: Self::Move) -> Result<(), Self::PlayError> {
        crate::yanyi::Position::play(self, m).map(drop)
    }
    fn play_unchecked(&mut self, m: Self::Move) {
        crate::yanyi::Position::play_unchecked(self, m);
    }
    /// The player to move (G, B, R = 0, 1, 2); 汉 never moves, and the next
    /// player comes from §7.1 step 6 (被将先走), not a fixed cycle.
    fn seat_to_move(&self) -> Option<usize> {
        (!crate::yanyi::Position::is_over(self)).then(|| self.turn().index())
    }
    fn perft(&self, depth: u32) -> u64 {
        crate::yanyi::perft(self, depth)
    }
    fn perft_divide(&self, depth: u32) -> Vec<(Self::Move, u64)> {
        crate::yanyi::perft_divide(self, depth)
    }
}

/// A position of some variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VariantPosition {
    /// 三国象棋.
    Sanguo(crate::position::Position),
    /// 三国暗棋 (the full form).
    Anqi(crate::anqi::AnqiPosition),
    /// 三国演弈棋.
    Yanyi(crate::yanyi::Position),
}

/// Runs `$body` with `$p` bound to the position of whichever arm `$vp` is.
macro_rules! each {
    ($vp:expr, $p:ident => $body:expr) => {
        match $vp {
            VariantPosition::Sanguo($p) => $body,
            VariantPosition::Anqi($p) => $body,
            VariantPosition::Yanyi($p) => $body,
        }
    };
}

/// An error of some variant, as text (the variant's own error type's words).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VariantError(pub String);

fn err(e: impl fmt::Display) -> VariantError {
    VariantError(e.to_string())
}

impl VariantPosition {
    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        fn of<P: Position>(_: &P) -> Variant {
            P::VARIANT
        }
        each!(self, p => of(p))
    }

    /// The position text of the variant's notation.
    pub fn to_text(&self) -> String {
        each!(self, p => Position::to_text(p))
    }

    /// Parses position text of `variant`.
    pub fn from_text(variant: Variant, text: &str) -> Result<VariantPosition, VariantError> {
        match variant {
            Variant::Sanguo => Ok(VariantPosition::Sanguo(
                <crate::position::Position as Position>::from_text(text).map_err(err)?,
            )),
            Variant::Anqi => Ok(VariantPosition::Anqi(
                <crate::anqi::AnqiPosition as Position>::from_text(text).map_err(err)?,
            )),
            Variant::Yanyi => Ok(VariantPosition::Yanyi(
                <crate::yanyi::Position as Position>::from_text(text).map_err(err)?,
            )),
        }
    }

    /// The legal actions as canonical text, in canonical order.
    pub fn legal_move_texts(&self) -> Vec<String> {
        each!(self, p => Position::legal_moves(p).into_iter().map(|m| p.move_text(m)).collect())
    }

    /// Parses and plays one action given as text.
    pub fn play_text(&mut self, text: &str) -> Result<(), VariantError> {
        each!(self, p => {
            let m = Position::parse_move(p, text).map_err(err)?;
            Position::play(p, m).map_err(err)
        })
    }

    /// Settles what is automatic at the start of a turn ([`Position::settle`]).
    pub fn settle(&mut self) {
        each!(self, p => Position::settle(p))
    }

    /// The seat to move, or `None` when over.
    pub fn seat_to_move(&self) -> Option<usize> {
        each!(self, p => Position::seat_to_move(p))
    }

    /// perft (the variant's definition).
    pub fn perft(&self, depth: u32) -> u64 {
        each!(self, p => Position::perft(p, depth))
    }

    /// perft per root action, the action as text.
    pub fn perft_divide(&self, depth: u32) -> Vec<(String, u64)> {
        each!(self, p => Position::perft_divide(p, depth).into_iter().map(|(m, n)| (p.move_text(m), n)).collect())
    }

    /// chance-perft, for variants with hidden information (None for the others).
    pub fn chance_perft(&self, depth: u32) -> Option<u64> {
        match self {
            VariantPosition::Sanguo(_) | VariantPosition::Yanyi(_) => {
                let _ = depth;
                None
            }
            // RULES-ANQI §12, on the viewer form of the position.
            VariantPosition::Anqi(p) => Some(crate::anqi::chance_perft(p, depth)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_round_trip() {
        assert_eq!("sanguo".parse::<Variant>(), Ok(Variant::Sanguo));
        let e = "xiangqi".parse::<Variant>().unwrap_err();
        assert!(e.to_string().contains("known: sanguo"), "{e}");
        let p = Variant::Sanguo.initial(Direction::Cw);
        assert_eq!(VariantPosition::from_text(p.variant(), &p.to_text()), Ok(p));
    }

    #[test]
    fn the_trait_agrees_with_the_position() {
        let vp = Variant::Sanguo.default_position();
        let VariantPosition::Sanguo(p) = &vp else {
            panic!("the default sanguo position")
        };
        assert_eq!(vp.legal_move_texts().len(), p.legal_moves().len());
        assert_eq!(vp.perft(2), crate::position::perft(p, 2));
        let generic: u64 = {
            fn count<P: Position>(p: &P, d: u32) -> u64 {
                let mut n = 0;
                for m in p.legal_moves() {
                    let mut q = p.clone();
                    q.play_unchecked(m);
                    n += if d <= 1 { 1 } else { count(&q, d - 1) };
                }
                n
            }
            count(p, 2)
        };
        assert_eq!(generic, vp.perft(2));
        let mut q = vp.clone();
        let first = vp.legal_move_texts()[0].clone();
        q.play_text(&first).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(q, vp);
        assert!(q.play_text(&first).is_err(), "the square is empty now");
        assert_eq!(vp.seat_to_move(), Some(0));
    }

    #[test]
    fn anqi_is_a_variant() {
        assert_eq!("anqi".parse::<Variant>(), Ok(Variant::Anqi));
        assert_eq!(Variant::Anqi.title(), "三国暗棋");
        let e = "xiangqi".parse::<Variant>().unwrap_err();
        assert!(e.to_string().contains("known: sanguo, anqi, yanyi"), "{e}");
        let vp = Variant::Anqi.default_position();
        assert_eq!(vp.variant(), Variant::Anqi);
        assert_eq!(
            vp.to_text(),
            "*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1*r*A*C*K/*N*R*P*c1*p*A*R*n 1 --- 123 -/-/- 1 split1"
        );
        assert_eq!(VariantPosition::from_text(Variant::Anqi, &vp.to_text()), Ok(vp.clone()));
        assert_eq!(Variant::Anqi.initial(Direction::Ccw), vp);
        assert_eq!(vp.legal_move_texts().len(), 32);
        assert_eq!(vp.legal_move_texts()[0], "+a1");
        assert_eq!(vp.perft(3), 29_760);
        assert_eq!(vp.chance_perft(2), Some(192_448));
        assert_eq!(Variant::Sanguo.default_position().chance_perft(1), None);
        assert_eq!(vp.seat_to_move(), Some(0));
        let mut q = vp.clone();
        for a in ["+g2", "+i2", "+f2", "+h2", "i2-h2"] {
            q.play_text(a).unwrap_or_else(|e| panic!("{a}: {e}"));
        }
        assert_eq!(
            q.to_text(),
            "*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1rAK1/*N*R*P*c1*p*A*R*n 3 213 123 -/C/- 6 split1"
        );
        assert_eq!(q.seat_to_move(), Some(2));
        let e = q.play_text("+g2=A").unwrap_err();
        assert!(e.0.contains("may not name"), "{e}");
        let e = q.play_text("f2xe2").unwrap_err();
        assert!(e.0.contains("nothing to capture"), "{e}");
        // The viewer form is refused as a playable text.
        let viewer = "????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1";
        assert!(VariantPosition::from_text(Variant::Anqi, viewer).is_err());
    }

    #[test]
    fn yanyi_through_the_enum() {
        assert_eq!("yanyi".parse::<Variant>(), Ok(Variant::Yanyi));
        assert_eq!(Variant::Yanyi.title(), "三国演弈棋");
        let vp = Variant::Yanyi.default_position();
        assert_eq!(vp.variant(), Variant::Yanyi);
        assert_eq!(
            VariantPosition::from_text(Variant::Yanyi, &vp.to_text()),
            Ok(vp.clone())
        );
        assert_eq!(vp.legal_move_texts().len(), 48);
        assert_eq!(vp.legal_move_texts()[0], "n5-m5");
        assert_eq!(vp.perft(2), 2304);
        assert_eq!(vp.chance_perft(1), None);
        assert_eq!(vp.seat_to_move(), Some(0));
        let mut q = vp.clone();
        q.play_text("q12-o13").unwrap();
        assert_eq!(q.seat_to_move(), Some(1));
        let e = q.play_text("q13-o13").unwrap_err();
        assert!(e.to_string().contains("not your piece"), "{e}");
        let e = VariantPosition::from_text(Variant::Yanyi, "nonsense").unwrap_err();
        assert!(e.to_string().contains("four fields"), "{e}");
    }
}
