//! The deal (stub).
use super::Piece;
/// Parses a layout.
pub fn parse_layout(text: &str) -> Option<[Piece; 32]> {
    let v: Vec<Piece> = text.chars().map(Piece::from_char).collect::<Option<_>>()?;
    v.try_into().ok()
}
