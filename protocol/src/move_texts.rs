//! [`MoveTexts`]: a status's legal moves, listed after every move.

use std::fmt;

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether `b` may be in a move text: printable ASCII that JSON writes as
/// itself (not `"` nor `\\`). Every variant's move texts are made of such bytes.
const fn plain(b: u8) -> bool {
    matches!(b, b' '..=b'~') && b != b'"' && b != b'\\'
}

/// [`plain`] of every byte, looked up: a room checks ~350 bytes of move
/// texts after every move.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = plain(b as u8);
        b += 1;
    }
    t
};

/// Whether every byte of `text` is [`plain`].
fn all_plain(text: &str) -> bool {
    text.bytes().all(|b| PLAIN[usize::from(b)])
}

/// Move texts in canonical order (`status.legal_moves`), kept in one string
/// as the JSON they are sent as: a room lists the side to move's ~50 moves
/// after every move, and this costs one allocation for the list instead of
/// one per move, and one copy where the list is written into a message
/// ([`MoveTexts::write_json`]) instead of one JSON string at a time; a Rust
/// client reading it also makes one string, not one per move.
///
/// On the wire, and in the API document, exactly a JSON array of strings
/// (`["W51-W41","W51-W61"]`), as a `Vec<String>` is. A text is never empty
/// and is printable ASCII without `"` or `\\` (every variant's move texts
/// are); a list with any other text is refused when read.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct MoveTexts {
    /// Each text in quotes, followed by a comma: `"W51-W41","W51-W61",`.
    joined: String,
    len: usize,
}

/// A piece of a move text (a point's name: `W51`, `BM7`, `O`) of one to
/// three bytes, each printable ASCII without `"` or `\\`, checked once when
/// it is made: texts written from such pieces ([`MoveTexts::from_pairs`])
/// need no check of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextPiece {
    /// The piece, padded with zeros to three bytes.
    bytes: [u8; 3],
    len: u8,
}

impl TextPiece {
    /// The piece made of `bytes[..len]`, or `None` unless `len` is 1 to 3
    /// and those bytes are plain (what a move text may hold) and the rest
    /// are zeros.
    pub const fn new(bytes: [u8; 3], len: usize) -> Option<TextPiece> {
        if len == 0 || len > 3 {
            return None;
        }
        let mut i = 0;
        while i < 3 {
            let ok = if i < len { plain(bytes[i]) } else { bytes[i] == 0 };
            if !ok {
                return None;
            }
            i += 1;
        }
        Some(TextPiece { bytes, len: len as u8 })
    }
}

impl MoveTexts {
    /// No moves.
    pub const fn new() -> MoveTexts {
        MoveTexts {
            joined: String::new(),
            len: 0,
        }
    }

    /// No moves yet, with room for `moves` texts of ~8 bytes.
    pub fn with_capacity(moves: usize) -> MoveTexts {
        MoveTexts {
            joined: String::with_capacity(moves * 11),
            len: 0,
        }
    }

    /// Whether `text` may be listed: not empty, printable ASCII without `"`
    /// or `\\`.
    pub fn is_move_text(text: &str) -> bool {
        !text.is_empty() && all_plain(text)
    }

    /// Adds `text` at the end.
    ///
    /// # Panics
    /// When `text` is not a move text ([`MoveTexts::is_move_text`]).
    pub fn push(&mut self, text: &str) {
        self.push_concat([text]);
    }

    /// Adds the text made of `parts`, one after the other (`["W51", "-",
    /// "W41"]`), without a string of its own.
    ///
    /// # Panics
    /// When the text is not a move text ([`MoveTexts::is_move_text`]).
    #[inline]
    pub fn push_concat<const N: usize>(&mut self, parts: [&str; N]) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let plain = parts.iter().all(|p| all_plain(p));
        assert!(len > 0 && plain, "not a move text: {:?}", parts.concat());
        self.joined.reserve(len + 3);
        self.joined.push('"');
        for part in parts {
            self.joined.push_str(part);
        }
        self.joined.push_str("\",");
        self.len += 1;
    }

    /// The texts `a-b` of `pairs` (`W51-W41` from the points' names `W51`
    /// and `W41`), written into one string with copies of a fixed size and
    /// no check of their bytes: each piece was checked once, when it was
    /// made ([`TextPiece::new`]), and `-` is plain. A room lists the side to
    /// move's ~50 moves after every move; pushed text by text, part by part,
    /// they cost ~200 instructions each, and a check of the written list
    /// another ~50.
    pub fn from_pairs<I>(pairs: I) -> MoveTexts
    where
        I: IntoIterator<Item = (TextPiece, TextPiece)>,
    {
        let pairs = pairs.into_iter();
        // Most texts take 10 bytes (`"W51-W41",`); each is written 16 bytes
        // wide, then cut: room for the last one's spare bytes too.
        let mut joined = Vec::with_capacity(pairs.size_hint().0 * 10 + 16);
        let mut len = 0;
        for (a, b) in pairs {
            // `"` a `-` b `",`, and spare bytes cut off below.
            let mut text = [0u8; 16];
            text[0] = b'"';
            text[1..4].copy_from_slice(&a.bytes);
            let n = 1 + usize::from(a.len);
            text[n] = b'-';
            text[n + 1..n + 4].copy_from_slice(&b.bytes);
            let n = n + 1 + usize::from(b.len);
            text[n] = b'"';
            text[n + 1] = b',';
            let start = joined.len();
            joined.extend_from_slice(&text);
            joined.truncate(start + n + 2);
            len += 1;
        }
        // Pieces are printable ASCII: this cannot fail.
        let joined = String::from_utf8(joined).unwrap_or_default();
        MoveTexts { joined, len }
    }

    /// The [`fmt::Display`] texts of `items` (a variant's moves), each
    /// written in place, with no string of its own.
    ///
    /// # Panics
    /// When a text is not a move text ([`MoveTexts::is_move_text`]).
    pub fn displayed<I>(items: I) -> MoveTexts
    where
        I: IntoIterator,
        I::Item: fmt::Display,
    {
        use fmt::Write;
        let items = items.into_iter();
        let mut texts = MoveTexts::with_capacity(items.size_hint().0);
        for item in items {
            let start = texts.joined.len();
            texts.joined.push('"');
            // Writing to a `String` cannot fail.
            let _ = write!(texts.joined, "{item}");
            let text = &texts.joined[start + 1..];
            assert!(MoveTexts::is_move_text(text), "not a move text: {text:?}");
            texts.joined.push_str("\",");
            texts.len += 1;
        }
        texts
    }

    /// The length of [`MoveTexts::write_json`]'s text, in bytes.
    pub fn json_len(&self) -> usize {
        // The brackets, and no comma after the last text.
        self.joined.len().max(1) + 1
    }

    /// Appends the list as JSON (`["W51-W41","W51-W61"]`, what serialising
    /// it with `serde_json` writes) to `out`: one copy.
    pub fn write_json(&self, out: &mut String) {
        out.push('[');
        out.push_str(self.joined.strip_suffix(',').unwrap_or_default());
        out.push(']');
    }

    /// How many texts.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The texts in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            rest: &self.joined,
            left: self.len,
        }
    }

    /// Whether `text` is one of them.
    pub fn contains(&self, text: &str) -> bool {
        self.iter().any(|t| t == text)
    }

    /// The `i`-th text.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.iter().nth(i)
    }

    /// Removes every text.
    pub fn clear(&mut self) {
        self.joined.clear();
        self.len = 0;
    }

    /// The texts as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for MoveTexts {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> MoveTexts {
        let iter = iter.into_iter();
        let mut texts = MoveTexts::with_capacity(iter.size_hint().0);
        texts.extend(iter);
        texts
    }
}

impl<S: AsRef<str>> Extend<S> for MoveTexts {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for text in iter {
            self.push(text.as_ref());
        }
    }
}

impl std::ops::Index<usize> for MoveTexts {
    type Output = str;

    /// The `i`-th text.
    ///
    /// # Panics
    /// When there are not `i + 1` texts.
    fn index(&self, i: usize) -> &str {
        self.get(i).unwrap_or_else(|| panic!("move text {i} of {}", self.len))
    }
}

/// The texts of a [`MoveTexts`], in order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    rest: &'a str,
    /// How many texts `rest` holds.
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        // `rest` is `"text",…`: a text has no quote of its own.
        let inner = self.rest.get(1..)?;
        let end = inner.bytes().position(|b| b == b'"')?;
        self.rest = &inner[end + 2..];
        self.left -= 1;
        Some(&inner[..end])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a MoveTexts {
    type Item = &'a str;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for MoveTexts {
    fn eq(&self, other: &[S]) -> bool {
        self.len == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for MoveTexts {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for MoveTexts {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl fmt::Debug for MoveTexts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for MoveTexts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for MoveTexts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MoveTexts, D::Error> {
        deserializer.deserialize_seq(TextsVisitor)
    }
}

struct TextsVisitor;

impl<'de> Visitor<'de> for TextsVisitor {
    type Value = MoveTexts;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of move texts")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MoveTexts, A::Error> {
        let mut texts = MoveTexts::with_capacity(seq.size_hint().unwrap_or(0));
        while seq.next_element_seed(Append(&mut texts))?.is_some() {}
        Ok(texts)
    }
}

/// Reads one text of the list straight into the joined string (no string of
/// its own).
struct Append<'a>(&'a mut MoveTexts);

impl<'de> DeserializeSeed<'de> for Append<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Append<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a move text (printable ASCII without quotes or backslashes)")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if !MoveTexts::is_move_text(text) {
            return Err(E::invalid_value(de::Unexpected::Str(text), &self));
        }
        self.0.push(text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_a_list_of_strings_on_the_wire() {
        let texts: MoveTexts = ["W51-W41", "+a1", "b2xc3"].into_iter().collect();
        let json = serde_json::to_string(&texts).unwrap();
        assert_eq!(json, r#"["W51-W41","+a1","b2xc3"]"#);
        assert_eq!(json, serde_json::to_string(&texts.to_vec()).unwrap());
        let back: MoveTexts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, texts);
        assert_eq!(back.len(), 3);
        assert_eq!(back, ["W51-W41", "+a1", "b2xc3"]);
        assert_eq!(back.get(1), Some("+a1"));
        assert_eq!(
            (back.iter().next(), back.iter().last()),
            (Some("W51-W41"), Some("b2xc3"))
        );
        assert_eq!(back.iter().len(), 3);
        assert!(back.contains("b2xc3") && !back.contains("b2x") && !back.contains(""));
        assert_eq!(format!("{back:?}"), r#"["W51-W41", "+a1", "b2xc3"]"#);
        // Escaped text reads as its value.
        let escaped: MoveTexts = serde_json::from_str(r#"["W51\u002dW41"]"#).unwrap();
        assert_eq!(escaped, ["W51-W41"]);
    }

    #[test]
    fn an_empty_list_is_empty() {
        let texts = MoveTexts::new();
        assert!(texts.is_empty() && texts.iter().next().is_none());
        assert_eq!(serde_json::to_string(&texts).unwrap(), "[]");
        let back: MoveTexts = serde_json::from_str("[]").unwrap();
        assert_eq!(back, texts);
        assert_eq!(back, Vec::<String>::new());
    }

    #[test]
    fn what_is_not_a_move_text_is_refused() {
        for bad in [
            r#"["a\"b"]"#,
            r#"["a\\b"]"#,
            r#"["é"]"#,
            r#"["a\nb"]"#,
            r#"[""]"#,
            r#"[1]"#,
            r#""W51-W41""#,
        ] {
            assert!(serde_json::from_str::<MoveTexts>(bad).is_err(), "{bad} was read");
        }
        let mut texts = MoveTexts::new();
        for bad in ["a\"b", "a\\b", "é", "\n"] {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| texts.push(bad)));
            assert!(caught.is_err(), "{bad:?} was listed");
        }
        assert!(
            texts.is_empty() && texts == MoveTexts::new(),
            "a refused text leaves nothing"
        );
        assert!(std::panic::catch_unwind(|| MoveTexts::new().push("")).is_err());
    }

    #[test]
    fn texts_pushed_are_the_texts_listed() {
        let mut texts = MoveTexts::with_capacity(2);
        texts.push("W72-W54");
        texts.extend(MoveTexts::displayed([format_args!("{}x{}", "a1", "b2")]).iter());
        assert_eq!(texts, ["W72-W54", "a1xb2"]);
        let mut json = String::new();
        texts.write_json(&mut json);
        assert_eq!(json, serde_json::to_string(&texts).unwrap());
        assert_eq!(json.len(), texts.json_len());
        json.clear();
        MoveTexts::new().write_json(&mut json);
        assert_eq!(json, "[]");
        assert_eq!(json.len(), MoveTexts::new().json_len());
        let caught = std::panic::catch_unwind(|| MoveTexts::displayed(["a1", "b\"b"]));
        assert!(caught.is_err(), "a written text is checked too");
    }

    #[test]
    fn a_text_pushed_in_parts_is_the_text_pushed_whole() {
        let mut parts = MoveTexts::new();
        parts.push_concat(["W72", "-", "W54"]);
        parts.push_concat(["", "O", ""]);
        let long = "a".repeat(40);
        parts.push_concat([&long[..20], "-", &long[20..]]);
        let long_text = format!("{}-{}", &long[..20], &long[20..]);
        assert_eq!(parts, ["W72-W54", "O", &long_text[..]]);
        let mut whole = MoveTexts::new();
        whole.extend(["W72-W54", "O", &long_text[..]]);
        assert_eq!(parts, whole);
        let bad: [fn(&mut MoveTexts); 4] = [
            |t| t.push_concat(["", ""]),
            |t| t.push_concat([]),
            |t| t.push_concat(["a", "\"", "b"]),
            |t| t.push_concat(["W72", "é"]),
        ];
        for (i, push) in bad.into_iter().enumerate() {
            let caught = std::panic::catch_unwind(|| push(&mut MoveTexts::new()));
            assert!(caught.is_err(), "bad text {i} was listed");
        }
        // Texts written from pieces are the texts pushed whole, and only
        // plain pieces of one to three bytes are made.
        let piece = |s: &str| {
            let mut bytes = [0; 3];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            TextPiece::new(bytes, s.len()).unwrap_or_else(|| panic!("{s:?} is a piece"))
        };
        let pairs = [("W72", "W54"), ("O", "BM7"), ("YQ6", "O"), ("a", "bc")];
        let from_pairs = MoveTexts::from_pairs(pairs.map(|(a, b)| (piece(a), piece(b))));
        assert_eq!(from_pairs, ["W72-W54", "O-BM7", "YQ6-O", "a-bc"]);
        assert_eq!(from_pairs.len(), 4);
        let one = |a: &str, b: &str| MoveTexts::from_pairs([(piece(a), piece(b))]);
        assert_eq!(one("BM7", "O"), ["BM7-O"]);
        assert_eq!(MoveTexts::from_pairs([]), MoveTexts::new());
        for (bytes, len) in [
            (*b"W72", 0),
            (*b"W72", 4),
            (*b"W\\2", 3),
            (*b"W\\2", 1), // the bytes after the piece must be zeros
            (*b"W\"2", 3),
            ([b'W', 0x7f, b'2'], 3),
            ([b'W', 0xc3, 0xa9], 3),
            ([b'W', b'\n', b'2'], 3),
            ([b'O', 0, 0], 2),
        ] {
            assert_eq!(TextPiece::new(bytes, len), None, "{bytes:?} {len} was made");
        }
        // Every byte is judged alike by the table and the rule.
        for b in 0..=255u8 {
            assert_eq!(PLAIN[usize::from(b)], plain(b), "byte {b}");
        }
    }
}
