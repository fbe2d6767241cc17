//! Text formats (§11): action text, position text in both forms, and the
//! validity rules V1–V9 that make a parsed [`Setup`] a position.

use std::fmt;

use super::position::{AnqiPosition, Move, Outcome, Setup};
use super::{FULL_SET, Options, POINTS, Piece, Point, SET_COUNTS, Team};

/// Why a text is not a position or an action.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The position text does not have seven fields separated by single spaces.
    #[error("a position text has seven fields separated by single spaces, this one has {0}")]
    Fields(usize),
    /// A field other than the placement cannot be read.
    #[error("cannot read the {field} field '{text}'")]
    Field {
        /// The field's name.
        field: &'static str,
        /// What was given.
        text: String,
    },
    /// A validity condition of §11.3 fails (the first one that does).
    #[error("invalid position ({rule}): {detail}")]
    Invalid {
        /// V1 … V9.
        rule: &'static str,
        /// What is wrong, in words.
        detail: String,
    },
    /// An action text cannot be read.
    #[error("cannot read the action '{text}': {why}")]
    Action {
        /// What was given.
        text: String,
        /// Why, in words.
        why: &'static str,
    },
}

fn invalid(rule: &'static str, detail: impl Into<String>) -> ParseError {
    ParseError::Invalid {
        rule,
        detail: detail.into(),
    }
}

fn field(field: &'static str, text: &str) -> ParseError {
    ParseError::Field {
        field,
        text: text.to_owned(),
    }
}

// --- Actions -----------------------------------------------------------------

/// Parses an action as a client sends it (§11.2): `+b2`, `b2-b4`, `b2xb4`. `+b2=R` is
/// refused: a client never names the identity it flips. Whether `b2-b4` is a move or a
/// capture is settled by the position ([`AnqiPosition::check`]).
pub fn parse_move(text: &str) -> Result<Move, ParseError> {
    let bad = |why| ParseError::Action {
        text: text.to_owned(),
        why,
    };
    if let Some(rest) = text.strip_prefix('+') {
        if rest.contains('=') {
            return Err(bad("a flip may not name the identity it reveals"));
        }
        return Point::parse(rest)
            .map(Move::Flip)
            .ok_or_else(|| bad("expected a point such as b2 after '+'"));
    }
    if text == "pass" {
        return Err(bad("a pass is automatic, never sent"));
    }
    if text.len() == 5 && text.is_ascii() {
        let (from, sep, to) = (&text[0..2], &text[2..3], &text[3..5]);
        let (Some(from), Some(to)) = (Point::parse(from), Point::parse(to)) else {
            return Err(bad("expected points a1 … i5"));
        };
        return match sep {
            "-" => Ok(Move::Move { from, to }),
            "x" => Ok(Move::Capture { from, to }),
            _ => Err(bad("expected '-' or 'x' between the points")),
        };
    }
    Err(bad("expected +b2, b2-b4 or b2xb4"))
}

/// The action as the record and events write it (§11.2): a flip carries what it revealed
/// (`+b2=R`); moves and captures are canonical.
pub fn record_text(m: Move, outcome: &Outcome) -> String {
    match (m, outcome.revealed) {
        (Move::Flip(p), Some(id)) => format!("+{p}={id}"),
        _ => m.to_string(),
    }
}

// --- Positions ------------------------------------------------------------------

fn write_list(out: &mut String, list: &[Piece]) {
    if list.is_empty() {
        out.push('-');
    } else {
        let mut sorted = list.to_vec();
        sorted.sort();
        out.extend(sorted.iter().map(|p| p.char()));
    }
}

/// The position text of §11.3 (full form for a full position, viewer form for a viewer one).
pub fn format_position(pos: &AnqiPosition) -> String {
    let s = pos.to_setup();
    let mut out = String::with_capacity(96);
    for rank in (0..5).rev() {
        let mut empty = 0;
        for file in 0..9 {
            let i = rank * 9 + file;
            match s.board[i] {
                None => empty += 1,
                Some(cell) => {
                    if empty > 0 {
                        out.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    match cell {
                        (true, Some(id)) => out.push(id.char()),
                        (_, None) => out.push('?'),
                        (false, Some(id)) => {
                            out.push('*');
                            out.push(id.char());
                        }
                    }
                }
            }
        }
        if empty > 0 {
            out.push((b'0' + empty) as char);
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out.push(' ');
    match s.to_move {
        None => out.push('-'),
        Some(seat) => {
            out.push((b'1' + seat as u8) as char);
            if let Some(k) = s.actions_left {
                out.push(':');
                out.push((b'0' + k) as char);
                if let Some(p) = s.no_capture {
                    out.push(':');
                    out.push_str(&p.to_string());
                }
            }
        }
    }
    out.push(' ');
    for t in s.teams {
        out.push(t.map_or('-', |t| (b'0' + t.number()) as char));
    }
    out.push(' ');
    if s.live.iter().any(|&l| l) {
        for (i, &l) in s.live.iter().enumerate() {
            if l {
                out.push((b'1' + i as u8) as char);
            }
        }
    } else {
        out.push('-');
    }
    out.push(' ');
    for (i, list) in s.captured.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        write_list(&mut out, list);
    }
    if !s.removed.is_empty() {
        out.push('/');
        write_list(&mut out, &s.removed);
    }
    out.push(' ');
    out.push_str(&s.turn.to_string());
    out.push(' ');
    out.push_str(&s.options.to_string());
    out
}

fn parse_list(text: &str) -> Result<Vec<Piece>, ParseError> {
    if text == "-" {
        return Ok(Vec::new());
    }
    text.chars()
        .map(|c| Piece::from_char(c).ok_or_else(|| field("captured", text)))
        .collect()
}

fn parse_options(text: &str) -> Result<Options, ParseError> {
    let bad = || field("variant", text);
    let (split, mut rest) = if let Some(r) = text.strip_prefix("split1") {
        (false, r)
    } else if let Some(r) = text.strip_prefix("split2") {
        (true, r)
    } else {
        return Err(bad());
    };
    let mut o = Options {
        split2: split,
        ..Options::default()
    };
    for (name, flag) in [("+enhanced", 0), ("+double", 1), ("+fanchi", 2), ("+xqlegs", 3)] {
        if let Some(r) = rest.strip_prefix(name) {
            rest = r;
            match flag {
                0 => o.enhanced = true,
                1 => o.double = true,
                2 => o.fanchi = true,
                _ => o.xqlegs = true,
            }
        }
    }
    if !rest.is_empty() || !o.is_valid() {
        return Err(bad());
    }
    Ok(o)
}

/// Parses position text into a setup. Only the placement's V1 (ranks of nine points, piece
/// letters) is checked here; [`validate`] checks the rest.
pub fn parse_setup(text: &str) -> Result<Setup, ParseError> {
    let fields: Vec<&str> = text.split(' ').collect();
    if fields.len() != 7 {
        return Err(ParseError::Fields(fields.len()));
    }
    // Field 1.
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 5 {
        return Err(invalid("V1", format!("the placement has {} ranks, not 5", ranks.len())));
    }
    let mut board = [None; POINTS];
    for (r, rank_text) in ranks.iter().enumerate() {
        let rank = 4 - r;
        let mut file = 0usize;
        let mut chars = rank_text.chars();
        while let Some(c) = chars.next() {
            let cell = match c {
                '1'..='9' => {
                    file += c as usize - '0' as usize;
                    continue;
                }
                '?' => (false, None),
                '*' => match chars.next().and_then(Piece::from_char) {
                    Some(id) => (false, Some(id)),
                    None => {
                        return Err(invalid(
                            "V1",
                            format!("rank {}: '*' must be followed by a piece letter", rank + 1),
                        ));
                    }
                },
                c => match Piece::from_char(c) {
                    Some(id) => (true, Some(id)),
                    None => return Err(invalid("V1", format!("rank {}: '{c}' is not a piece letter", rank + 1))),
                },
            };
            if file < 9 {
                board[rank * 9 + file] = Some(cell);
            }
            file += 1;
        }
        if file != 9 {
            return Err(invalid("V1", format!("rank {} covers {file} points, not 9", rank + 1)));
        }
    }
    // Field 2.
    let f2 = fields[1];
    let (to_move, actions_left, no_capture) = if f2 == "-" {
        (None, None, None)
    } else {
        let parts: Vec<&str> = f2.split(':').collect();
        let seat = match parts[0] {
            "1" => 0,
            "2" => 1,
            "3" => 2,
            _ => return Err(field("to-move", f2)),
        };
        let k = match parts.get(1) {
            None => None,
            Some(&"1") => Some(1),
            Some(&"2") => Some(2),
            Some(_) => return Err(field("to-move", f2)),
        };
        let p = match parts.get(2) {
            None => None,
            Some(p) if k == Some(1) => Some(Point::parse(p).ok_or_else(|| field("to-move", f2))?),
            Some(_) => return Err(field("to-move", f2)),
        };
        if parts.len() > 3 {
            return Err(field("to-move", f2));
        }
        (Some(seat), k, p)
    };
    // Field 3.
    let f3 = fields[2];
    if f3.chars().count() != 3 {
        return Err(field("teams", f3));
    }
    let mut teams = [None; 3];
    for (i, c) in f3.chars().enumerate() {
        teams[i] = match c {
            '-' => None,
            '1'..='3' => Team::new(c as u8 - b'0'),
            _ => return Err(field("teams", f3)),
        };
    }
    // Field 4.
    let f4 = fields[3];
    let mut live = [false; 3];
    if f4 != "-" {
        let mut last = 0;
        for c in f4.chars() {
            let n = match c {
                '1'..='3' => c as usize - '0' as usize,
                _ => return Err(field("live", f4)),
            };
            if n <= last {
                return Err(field("live", f4));
            }
            last = n;
            live[n - 1] = true;
        }
    }
    // Field 5.
    let f5 = fields[4];
    let lists: Vec<&str> = f5.split('/').collect();
    if lists.len() != 3 && lists.len() != 4 {
        return Err(field("captured", f5));
    }
    let captured = [parse_list(lists[0])?, parse_list(lists[1])?, parse_list(lists[2])?];
    let removed = match lists.get(3) {
        Some(&"-") | Some(&"") => return Err(field("captured", f5)),
        Some(l) => parse_list(l)?,
        None => Vec::new(),
    };
    // Field 6.
    let f6 = fields[5];
    let turn: u32 = match f6.parse() {
        Ok(n) if n >= 1 && !f6.starts_with('0') && !f6.starts_with('+') => n,
        _ => return Err(field("turn", f6)),
    };
    let options = parse_options(fields[6])?;
    Ok(Setup {
        board,
        to_move,
        actions_left,
        no_capture,
        teams,
        live,
        captured,
        removed,
        turn,
        options,
    })
}

/// Parses position text (either form) and validates it (V1–V9).
pub fn parse_position(text: &str) -> Result<AnqiPosition, ParseError> {
    validate(&parse_setup(text)?)
}

fn counts(list: &[Piece]) -> [u8; 14] {
    let mut c = [0u8; 14];
    for p in list {
        c[p.index()] += 1;
    }
    c
}

fn letters(c: &[u8; 14]) -> String {
    Piece::all()
        .flat_map(|id| std::iter::repeat_n(id.char(), c[id.index()] as usize))
        .collect()
}

/// Checks V1–V9 of §11.3 in order and builds the position; the error names the first
/// condition that fails.
pub fn validate(s: &Setup) -> Result<AnqiPosition, ParseError> {
    let o = s.options;
    if !o.is_valid() {
        return Err(field("variant", &o.to_string()));
    }
    // V2.
    for (i, cell) in s.board.iter().enumerate() {
        let p = Point::new(i).expect("a point");
        if let Some((false, _)) = cell {
            if !p.is_start_point() {
                return Err(invalid(
                    "V2",
                    format!("a face-down piece stands on {p}, which is not a start point"),
                ));
            }
        }
    }
    // V3.
    let full = s.board.iter().any(|c| matches!(c, Some((false, Some(_)))));
    let viewer = s.board.iter().any(|c| matches!(c, Some((false, None))));
    if full && viewer {
        return Err(invalid(
            "V3",
            "the placement mixes the full form (*X) and the viewer form (?)",
        ));
    }
    // V4.
    let mut up = [0u8; 14];
    let mut down = [0u8; 14];
    let mut unknown = 0usize;
    for cell in s.board.iter().flatten() {
        match *cell {
            (true, Some(id)) => up[id.index()] += 1,
            (false, Some(id)) => down[id.index()] += 1,
            _ => unknown += 1,
        }
    }
    let mut known = up;
    for list in s.captured.iter().chain([&s.removed]) {
        for p in list {
            known[p.index()] += 1;
        }
    }
    let total_known: usize = known.iter().map(|&n| n as usize).sum();
    if viewer {
        if let Some(id) = Piece::all().find(|id| known[id.index()] > SET_COUNTS[id.index()]) {
            return Err(invalid(
                "V4",
                format!(
                    "face-up, captured and removed pieces hold more {id} than the set ({})",
                    SET_COUNTS[id.index()]
                ),
            ));
        }
        if total_known + unknown != 32 {
            return Err(invalid(
                "V4",
                format!(
                    "{unknown} face-down pieces, but 32 − {total_known} known pieces leaves {}",
                    32usize.saturating_sub(total_known)
                ),
            ));
        }
    } else {
        let mut all = known;
        for i in 0..14 {
            all[i] += down[i];
        }
        if all != SET_COUNTS {
            return Err(invalid(
                "V4",
                format!(
                    "face-up, face-down, captured and removed pieces are {} , not the full set {FULL_SET}",
                    letters(&all)
                ),
            ));
        }
    }
    // V5.
    for a in 0..3 {
        for b in a + 1..3 {
            if s.teams[a].is_some() && s.teams[a] == s.teams[b] {
                return Err(invalid(
                    "V5",
                    format!(
                        "seats {} and {} both hold team {}",
                        a + 1,
                        b + 1,
                        s.teams[a].unwrap_or(Team(1))
                    ),
                ));
            }
        }
    }
    let unclaimed = (1..=3).filter(|&t| !s.teams.contains(&Team::new(t))).count();
    let teamless_live = (0..3).filter(|&i| s.live[i] && s.teams[i].is_none()).count();
    if unclaimed == 1 && teamless_live == 1 {
        return Err(invalid(
            "V5",
            "exactly one team is unclaimed and exactly one live seat is teamless: C2 would have given it",
        ));
    }
    // V6.
    for seat in 0..3 {
        let list = &s.captured[seat];
        match s.teams[seat] {
            None if !list.is_empty() => {
                return Err(invalid(
                    "V6",
                    format!("seat {} holds no team but has captured pieces", seat + 1),
                ));
            }
            Some(t) => {
                if let Some(p) = list.iter().find(|p| p.team(o.split2) == t) {
                    return Err(invalid(
                        "V6",
                        format!("seat {} captured {p}, a piece of its own team {t}", seat + 1),
                    ));
                }
            }
            None => {}
        }
    }
    // Build the position (counts derived).
    let mut pos = AnqiPosition::initial_viewer(o);
    for (i, cell) in s.board.iter().enumerate() {
        pos.board[i] = match *cell {
            None => 0,
            Some((true, Some(id))) => id.index() as u8 + 1,
            Some((false, Some(id))) => 0x10 | id.index() as u8,
            Some(_) => 0x1f,
        };
    }
    pos.teams = s.teams.map(|t| t.map_or(0, |t| t.number()));
    pos.live = (0..3).filter(|&i| s.live[i]).map(|i| 1u8 << i).sum();
    pos.captured = [counts(&s.captured[0]), counts(&s.captured[1]), counts(&s.captured[2])];
    pos.removed = counts(&s.removed);
    pos.turn = s.turn;
    pos.to_move = s.to_move.map_or(0xff, |x| x as u8);
    pos.left = s.actions_left.unwrap_or(1);
    pos.no_capture = s.no_capture.map_or(0xff, |p| p.index() as u8);
    pos.recount();
    // V7.
    for seat in 0..3 {
        if let (true, Some(t)) = (s.live[seat], s.teams[seat]) {
            if pos.pieces_on_board(t) == 0 {
                return Err(invalid(
                    "V7",
                    format!("seat {} is live but its team {t} has no piece on the board", seat + 1),
                ));
            }
        }
    }
    // V8.
    match s.to_move {
        Some(seat) => {
            if pos.live_count() < 2 {
                return Err(invalid("V8", "the game is not over but fewer than two seats are live"));
            }
            if !s.live[seat] {
                return Err(invalid("V8", format!("seat {} is to move but is not live", seat + 1)));
            }
            if pos.count_legal() == 0 {
                return Err(invalid(
                    "V8",
                    format!("seat {} is to move but has no legal action", seat + 1),
                ));
            }
            if pos.c3_applies(seat) {
                return Err(invalid(
                    "V8",
                    format!(
                        "seat {} is teamless with nothing left to claim: C3 would have given it a team",
                        seat + 1
                    ),
                ));
            }
        }
        None => {
            let ended = pos.live_count() <= 1
                || (pos.face_down_count() == 0
                    && (0..3).all(|i| !s.live[i] || s.teams[i].is_some())
                    && (0..3).all(|i| {
                        !s.live[i] || {
                            let mut q = pos.clone();
                            q.to_move = i as u8;
                            q.no_capture = 0xff;
                            q.count_legal() == 0
                        }
                    }));
            if !ended {
                return Err(invalid(
                    "V8",
                    "the game is marked over, but two or more seats are live and one can act",
                ));
            }
        }
    }
    // V9.
    if let Some(_seat) = s.to_move {
        match (o.double, s.actions_left) {
            (false, Some(_)) => {
                return Err(invalid(
                    "V9",
                    "the seat to move is written s:k, but the game is not double",
                ));
            }
            (true, None) => return Err(invalid("V9", "a double game writes the seat to move as s:k")),
            (true, Some(k)) => {
                if s.turn <= 3 && k != 1 {
                    return Err(invalid("V9", "turns 1 to 3 of a double game have one action"));
                }
                if let Some(p) = s.no_capture {
                    if o.fanchi {
                        return Err(invalid("V9", "s:1:p is not used with fanchi"));
                    }
                    if !matches!(s.board[p.index()], Some((true, _))) {
                        return Err(invalid("V9", format!("s:1:{p}, but {p} holds no face-up piece")));
                    }
                }
            }
            (false, None) => {}
        }
    }
    Ok(pos)
}

impl fmt::Display for AnqiPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_position(self))
    }
}

impl std::str::FromStr for AnqiPosition {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<AnqiPosition, ParseError> {
        parse_position(s)
    }
}
