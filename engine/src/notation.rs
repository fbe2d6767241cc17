//! Notation (RULES §7): points, moves and position text.
//!
//! Input accepts tokens, live sides and flags in any order; output is
//! canonical. A parse error names the token that is wrong.

use std::str::FromStr;

use crate::board::{NUM_POINTS, Point, PointSet};
use crate::piece::{Piece, Role};
use crate::position::{Move, Position, PositionError, Setup};
use crate::side::{Direction, Side, Sides};

/// Why a piece of text is not a point, a move or a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not a point name.
    #[error("invalid point '{0}' (expected e.g. W52, BM7, YQ6 or O)")]
    Point(String),
    /// Not a move.
    #[error("invalid move '{0}' (expected from-to, e.g. W72-W54)")]
    Move(String),
    /// The position text does not have five space-separated fields.
    #[error("position text has {0} fields, expected 5: placement, side to move, live sides, flags, direction")]
    FieldCount(usize),
    /// A piece token is malformed.
    #[error("invalid piece token '{token}': {reason}")]
    PieceToken {
        /// The token.
        token: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// Two pieces on one point.
    #[error("two pieces on {0}")]
    DuplicatePoint(String),
    /// The side-to-move field.
    #[error("invalid side to move '{0}' (expected W, B or Y)")]
    Turn(String),
    /// The live-sides field.
    #[error("invalid live sides '{0}' (expected e.g. WBY, WY)")]
    Live(String),
    /// A flag.
    #[error("invalid flag '{0}' (expected -, R:XY, S:XY or N)")]
    Flag(String),
    /// The direction field.
    #[error("invalid direction '{0}' (expected ccw or cw)")]
    Direction(String),
    /// The text parses but is not a legal position.
    #[error("impossible position: {0}")]
    Invalid(#[from] PositionError),
}

/// Parses a point name.
pub fn parse_point(s: &str) -> Result<Point, ParseError> {
    Point::parse(s).ok_or_else(|| ParseError::Point(s.to_owned()))
}

impl FromStr for Point {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Point, ParseError> {
        parse_point(s)
    }
}

/// Parses a move `from-to`.
pub fn parse_move(s: &str) -> Result<Move, ParseError> {
    let (a, b) = s.split_once('-').ok_or_else(|| ParseError::Move(s.to_owned()))?;
    let from = Point::parse(a).ok_or_else(|| ParseError::Move(s.to_owned()))?;
    let to = Point::parse(b).ok_or_else(|| ParseError::Move(s.to_owned()))?;
    Ok(Move { from, to })
}

impl FromStr for Move {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Move, ParseError> {
        parse_move(s)
    }
}

/// Parses position text into an unvalidated setup.
pub fn parse_setup(text: &str) -> Result<Setup, ParseError> {
    let fields: Vec<&str> = text.trim().split(' ').collect();
    if fields.len() != 5 {
        return Err(ParseError::FieldCount(fields.len()));
    }
    let mut board: [Option<Piece>; NUM_POINTS] = [None; NUM_POINTS];
    for token in fields[0].split(',') {
        let bad = |reason| ParseError::PieceToken {
            token: token.to_owned(),
            reason,
        };
        let (pc, at) = token
            .split_once('@')
            .ok_or_else(|| bad("expected side, piece letter, @, point"))?;
        let mut chars = pc.chars();
        let (Some(s), Some(r), None) = (chars.next(), chars.next(), chars.next()) else {
            return Err(bad("expected a side letter and a piece letter before @"));
        };
        let side = Side::from_letter(s).ok_or_else(|| bad("side must be W, B or Y"))?;
        let role = Role::from_letter(r).ok_or_else(|| bad("piece must be one of K Z F A E R N C P"))?;
        let p = Point::parse(at).ok_or_else(|| bad("not a point"))?;
        if board[p.index()].is_some() {
            return Err(ParseError::DuplicatePoint(at.to_owned()));
        }
        board[p.index()] = Some(Piece { side, role });
    }
    let turn = match fields[1] {
        t if t.len() == 1 => Side::from_letter(t.chars().next().unwrap()),
        _ => None,
    }
    .ok_or_else(|| ParseError::Turn(fields[1].to_owned()))?;
    let mut live = Sides::EMPTY;
    if fields[2].is_empty() {
        return Err(ParseError::Live(String::new()));
    }
    for c in fields[2].chars() {
        match Side::from_letter(c) {
            Some(s) if !live.contains(s) => live.insert(s),
            _ => return Err(ParseError::Live(fields[2].to_owned())),
        }
    }
    let mut retaliation = Vec::new();
    let mut standing = Vec::new();
    let mut no_king_capture = false;
    if fields[3] != "-" {
        for flag in fields[3].split(';') {
            let bad = || ParseError::Flag(flag.to_owned());
            if flag == "N" {
                if no_king_capture {
                    return Err(bad());
                }
                no_king_capture = true;
                continue;
            }
            let (kind, pair) = flag.split_once(':').ok_or_else(bad)?;
            let mut cs = pair.chars();
            let (Some(a), Some(b), None) = (cs.next(), cs.next(), cs.next()) else {
                return Err(bad());
            };
            let (a, b) = (
                Side::from_letter(a).ok_or_else(bad)?,
                Side::from_letter(b).ok_or_else(bad)?,
            );
            if a == b {
                return Err(bad());
            }
            let list = match kind {
                "R" => &mut retaliation,
                "S" => &mut standing,
                _ => return Err(bad()),
            };
            if list.contains(&(a, b)) {
                return Err(bad());
            }
            list.push((a, b));
        }
    }
    let direction = match fields[4] {
        "ccw" => Direction::Ccw,
        "cw" => Direction::Cw,
        d => return Err(ParseError::Direction(d.to_owned())),
    };
    Ok(Setup {
        board,
        turn,
        live,
        retaliation,
        standing,
        no_king_capture,
        direction,
    })
}

/// Parses and validates position text.
pub fn parse_position(text: &str) -> Result<Position, ParseError> {
    Ok(Position::from_setup(&parse_setup(text)?)?)
}

impl FromStr for Position {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Position, ParseError> {
        parse_position(s)
    }
}

/// Canonical position text (RULES §7).
///
/// A server makes this text after every move and keeps it (in every logged
/// status), so it is written byte by byte from tables of ASCII texts into a
/// buffer on the stack, then copied once into a string of exactly its
/// length: no formatting machinery, no growth, no shrinking reallocation
/// (those took ~7,600 instructions a position, this ~1,300;
/// `examples/per_move_cost.rs`).
pub fn format_position(pos: &Position) -> String {
    let mut t = TextBuf {
        buf: [0; MAX_TEXT_LEN],
        len: 0,
    };
    let occupied = Side::ALL
        .into_iter()
        .fold(PointSet::EMPTY, |all, s| all.union(pos.pieces_of(s)));
    // Each piece as one 8-byte store, `XY@W52,` and a byte the next one
    // overwrites; O's token (`XY@O,`) is 2 shorter, and O is the last point.
    occupied.iter().for_each(|p| {
        let token = u64::from(PIECE_LETTERS[pos.code_at(p) as usize]) | POINT_TOKENS[p.index()];
        t.put(&token.to_le_bytes());
        t.len -= 1;
    });
    if occupied.contains(Point::O) {
        t.len -= 2;
    }
    // The last comma is the space before the side to move.
    match t.len.checked_sub(1) {
        Some(last) => t.buf[last] = b' ',
        None => t.put(b" "),
    }
    t.put(&[pos.turn().letter() as u8, b' ']);
    for side in pos.live_in_order() {
        t.put(&[side.letter() as u8]);
    }
    t.put(b" ");
    let flags_at = t.len;
    for (a, b) in PAIRS {
        if pos.has_retaliation_right(a, b) {
            t.put(&[b'R', b':', a.letter() as u8, b.letter() as u8, b';']);
        }
    }
    for (a, b) in PAIRS {
        if pos.has_standing_check(a, b) {
            t.put(&[b'S', b':', a.letter() as u8, b.letter() as u8, b';']);
        }
    }
    if pos.no_king_capture() {
        t.put(b"N;");
    }
    if t.len == flags_at {
        t.put(b"-;");
    }
    // The last flag's `;` is the space before the direction.
    t.buf[t.len - 1] = b' ';
    t.put(pos.direction().as_str().as_bytes());
    // Safe conversion: checking ~400 ASCII bytes costs ~230 instructions.
    String::from_utf8(t.buf[..t.len].to_vec()).expect("position text is ASCII")
}

/// [`format_position`]'s buffer and how much of it is written.
struct TextBuf {
    buf: [u8; MAX_TEXT_LEN],
    len: usize,
}

impl TextBuf {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
}

/// The ordered pairs of sides, in the order flags are written (holder, then victim).
const PAIRS: [(Side, Side); 6] = [
    (Side::W, Side::B),
    (Side::W, Side::Y),
    (Side::B, Side::W),
    (Side::B, Side::Y),
    (Side::Y, Side::W),
    (Side::Y, Side::B),
];

/// Room for the longest text: 54 pieces of 7 bytes (the last written 8
/// wide), the side to move and three live sides with their spaces, six
/// `R:XY;`, six `S:XY;` and `N;`, and a direction.
const MAX_TEXT_LEN: usize = 54 * 7 + 1 + 2 + 4 + 12 * 5 + 2 + 3;

/// Each point's piece token without the piece, `@W52,` (`@O,` for O), as
/// bytes 2..7 of a little-endian `u64`: the piece's letters go in bytes 0
/// and 1 ([`PIECE_LETTERS`]). Made at compile time from
/// [`Point::name_bytes`].
const POINT_TOKENS: [u64; NUM_POINTS] = {
    let mut tokens = [0; NUM_POINTS];
    let mut i = 0;
    while i < NUM_POINTS {
        let (name, len) = Point::from_index(i).name_bytes();
        let mut bytes = [0u8; 8];
        bytes[2] = b'@';
        let mut k = 0;
        while k < len {
            bytes[3 + k] = name[k];
            k += 1;
        }
        bytes[3 + len] = b',';
        tokens[i] = u64::from_le_bytes(bytes);
        i += 1;
    }
    tokens
};

/// The side and piece letters of each square code ([`Piece::code`]) as a
/// little-endian `u16`; codes that are no piece are never looked up.
const PIECE_LETTERS: [u16; 64] = {
    let mut letters = [0; 64];
    let mut s = 0;
    while s < 3 {
        let mut r = 0;
        while r < Role::ALL.len() {
            let piece = Piece {
                side: Side::from_index(s),
                role: Role::ALL[r],
            };
            letters[piece.code() as usize] = u16::from_le_bytes([piece.side.letter() as u8, piece.role.letter() as u8]);
            r += 1;
        }
        s += 1;
    }
    letters
};

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_position(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_text() {
        let text = format_position(&Position::initial(Direction::Ccw));
        assert!(text.starts_with("WF@W51,WR@W12,WN@W22,WE@W32,WA@W42,WK@W52,"), "{text}");
        assert!(text.ends_with(" W WBY - ccw"), "{text}");
        assert_eq!(parse_position(&text).unwrap(), Position::initial(Direction::Ccw));
        let cw = format_position(&Position::initial(Direction::Cw));
        assert!(cw.ends_with(" W WYB - cw"), "{cw}");
    }

    #[test]
    fn any_order_in_canonical_out() {
        let text = "YK@Y52,WK@W52,BK@B52 B YWB R:BW;N ccw";
        let pos = parse_position(text).unwrap();
        assert_eq!(format_position(&pos), "WK@W52,BK@B52,YK@Y52 B WBY R:BW;N ccw");
    }

    #[test]
    fn every_flag_and_a_piece_on_o() {
        // O is the last point, and the only one whose name is one letter.
        for text in [
            "WK@W52,BK@B52,YK@Y52,WR@O W WYB R:WB;R:YW;S:BY;N cw",
            "WK@W52,YK@Y52 Y WY N ccw",
            "BK@B52,YC@Y33,YK@O B BY - ccw",
        ] {
            let pos = parse_position(text).unwrap();
            let out = format_position(&pos);
            assert_eq!(out, text);
            assert_eq!(out.capacity(), out.len(), "{text}");
        }
    }

    #[test]
    fn errors_name_the_token() {
        let cases = [
            ("WK@W52,BK@B52,YK@Y52 W WBY -", "5"),
            ("WK@W52,BX@B52,YK@Y52 W WBY - ccw", "BX@B52"),
            ("WK@W52,BK@B99,YK@Y52 W WBY - ccw", "BK@B99"),
            ("WK@W52,BK@B52,YK@Y52 Q WBY - ccw", "'Q'"),
            ("WK@W52,BK@B52,YK@Y52 W WBW - ccw", "WBW"),
            ("WK@W52,BK@B52,YK@Y52 W WBY R:XW ccw", "R:XW"),
            ("WK@W52,BK@B52,YK@Y52 W WBY - up", "'up'"),
            ("WK@W52,BK@B52,YK@W52 W WBY - ccw", "W52"),
            ("WK@W52,BK@B52 W WBY - ccw", "Y has 0 kings"),
        ];
        for (text, needle) in cases {
            let err = parse_position(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn moves_parse() {
        assert_eq!(parse_move("W72-W54").unwrap().to_string(), "W72-W54");
        assert!(parse_move("W72W54").is_err());
        assert!(parse_move("W72-W5").is_err());
    }
}
