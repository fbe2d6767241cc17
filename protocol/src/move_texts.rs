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

    /// A list from its texts as they are kept and sent: each in quotes and
    /// followed by a comma (`"W51-W41","W51-W61",`), in one string written by
    /// a variant at once (a room lists the side to move's ~50 moves after
    /// every move; text by text, that costs several times more). Checked in
    /// one pass: `None` unless it is exactly that, every text a move text
    /// ([`MoveTexts::is_move_text`]).
    pub fn from_joined(joined: String) -> Option<MoveTexts> {
        let b = joined.as_bytes();
        let mut len = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'"' {
                return None;
            }
            i += 1;
            // A quote is not plain: the text ends at the first one.
            let rest = &b[i..];
            let text = rest.iter().position(|&c| !PLAIN[usize::from(c)]).unwrap_or(rest.len());
            if text == 0 || rest.get(text) != Some(&b'"') || rest.get(text + 1) != Some(&b',') {
                return None;
            }
            i += text + 2;
            len += 1;
        }
        Some(MoveTexts { joined, len })
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
        // A list given whole is the list pushed text by text, and only a
        // well-made one is taken.
        let joined = format!("\"W72-W54\",\"O\",\"{long_text}\",");
        assert_eq!(MoveTexts::from_joined(joined), Some(parts.clone()));
        assert_eq!(MoveTexts::from_joined(String::new()), Some(MoveTexts::new()));
        for bad in [
            "\"W72-W54\"",
            "\"W72-W54\",\"",
            "W72-W54,",
            "\"\",",
            "\"a\"b\",",
            "\"é\",",
            "\"a\nb\",",
            "\"a\\b\",",
            "\"a\";",
            "\"a\",,",
        ] {
            assert_eq!(MoveTexts::from_joined(bad.to_owned()), None, "{bad:?} was taken");
        }
        // Every byte is judged alike by the table and the rule.
        for b in 0..=255u8 {
            assert_eq!(PLAIN[usize::from(b)], plain(b), "byte {b}");
        }
    }
}
