//! The text formats of 三国演弈棋 (RULES-YANYI §10): points, moves and the
//! four-field position text. Canonical output, any token order on input.

use super::board::{NUM_POINTS, Point};
use super::piece::{Colour, Piece, Player, Players, Role};
use super::position::{Move, Position, PositionError, Setup};

/// Why a text is not a move or a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not a point name.
    #[error("'{0}' is not a point (a point is a file a..q and a rank 1..17 on the board, e.g. a9)")]
    Point(String),
    /// Not a move.
    #[error("'{0}' is not a move (a move is from-to, e.g. q12-o13)")]
    Move(String),
    /// Not a piece token.
    #[error("'{0}' is not a piece token (colour G/B/R/Y, piece K/A/E/N/R/C/P, '@', point: e.g. GK@q9)")]
    Token(String),
    /// Two pieces on one point.
    #[error("two pieces on {0}")]
    Occupied(Point),
    /// Wrong number of fields.
    #[error("a position has four fields (placement, side to move, alliance, first move pending), got {0}")]
    Fields(usize),
    /// Bad side to move.
    #[error("'{0}' is not a player to move (G, B or R)")]
    Turn(String),
    /// Bad alliance field.
    #[error("'{0}' is not an alliance field ('-', GB, GR or BR)")]
    Alliance(String),
    /// Bad pending field.
    #[error("'{0}' is not a first-move field ('-' or players in cycle order, e.g. GBR)")]
    Pending(String),
    /// Parses but is not a legal position.
    #[error("not a legal position: {0}")]
    Invalid(#[from] PositionError),
}

/// Parses a point name.
pub fn parse_point(s: &str) -> Result<Point, ParseError> {
    Point::parse(s).ok_or_else(|| ParseError::Point(s.to_owned()))
}

/// Parses a move `from-to`.
pub fn parse_move(s: &str) -> Result<Move, ParseError> {
    let (a, b) = s.split_once('-').ok_or_else(|| ParseError::Move(s.to_owned()))?;
    let (Some(from), Some(to)) = (Point::parse(a), Point::parse(b)) else {
        return Err(ParseError::Move(s.to_owned()));
    };
    Ok(Move::new(from, to))
}

/// Parses a piece token `GK@q9`.
pub fn parse_token(s: &str) -> Result<(Piece, Point), ParseError> {
    let bad = || ParseError::Token(s.to_owned());
    let mut chars = s.chars();
    let colour = chars.next().and_then(Colour::from_letter).ok_or_else(bad)?;
    let role = chars.next().and_then(Role::from_letter).ok_or_else(bad)?;
    if chars.next() != Some('@') {
        return Err(bad());
    }
    let point = Point::parse(chars.as_str()).ok_or_else(bad)?;
    Ok((Piece::new(colour, role), point))
}

fn parse_players(s: &str) -> Option<Players> {
    if s == "-" {
        return Some(Players::EMPTY);
    }
    let mut out = Players::EMPTY;
    let mut last: Option<Player> = None;
    for c in s.chars() {
        let p = Player::from_letter(c)?;
        if last.is_some_and(|l| l >= p) {
            return None;
        }
        out.insert(p);
        last = Some(p);
    }
    (!out.is_empty()).then_some(out)
}

/// Parses the position text into an unvalidated [`Setup`].
pub fn parse_setup(text: &str) -> Result<Setup, ParseError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 4 {
        return Err(ParseError::Fields(fields.len()));
    }
    let mut board = [None; NUM_POINTS];
    if !fields[0].is_empty() {
        for tok in fields[0].split(',') {
            let (pc, p) = parse_token(tok)?;
            if board[p.index()].is_some() {
                return Err(ParseError::Occupied(p));
            }
            board[p.index()] = Some(pc);
        }
    }
    let turn = match fields[1] {
        "G" => Player::G,
        "B" => Player::B,
        "R" => Player::R,
        t => return Err(ParseError::Turn(t.to_owned())),
    };
    let alliance = match fields[2] {
        "-" => None,
        a => {
            let ps = parse_players(a)
                .filter(|p| p.count() == 2)
                .ok_or_else(|| ParseError::Alliance(a.to_owned()))?;
            let mut it = ps.iter();
            Some((it.next().unwrap(), it.next().unwrap()))
        }
    };
    let pending = parse_players(fields[3]).ok_or_else(|| ParseError::Pending(fields[3].to_owned()))?;
    Ok(Setup {
        board,
        turn,
        alliance,
        pending,
    })
}

/// Parses and validates a position text (§10.3).
pub fn parse_position(text: &str) -> Result<Position, ParseError> {
    Ok(Position::from_setup(&parse_setup(text)?)?)
}

/// The placement field: tokens sorted by point index.
pub fn format_placement(pos: &Position) -> String {
    let mut out = String::with_capacity(512);
    for p in Point::all() {
        if let Some(pc) = pos.piece_at(p) {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str(&format!("{pc}@{p}"));
        }
    }
    out
}

/// The canonical position text (§10.3).
pub fn format_position(pos: &Position) -> String {
    let alliance = match pos.alliance() {
        Some((a, b)) => format!("{a}{b}"),
        None => "-".to_owned(),
    };
    format!(
        "{} {} {} {}",
        format_placement(pos),
        pos.turn().letter(),
        alliance,
        pos.pending().letters()
    )
}

/// The line (1–17) a point stands on, as `player` numbers the lines that run
/// toward its front, from its right hand (§10.5): 蜀 q = 1 … a = 17, 魏 a = 1 … q = 17,
/// 吴 rank 17 = 1 … rank 1 = 17.
pub fn chinese_line(player: Player, p: Point) -> u8 {
    match player {
        Player::R => 17 - p.x(),
        Player::B => p.x() + 1,
        Player::G => 18 - p.rank(),
    }
}

/// The Chinese name of a role, a king by its kingdom.
pub fn chinese_name(player: Player, role: Role) -> &'static str {
    match role {
        Role::King => player.colour().kingdom(),
        Role::Advisor => "士",
        Role::Elephant => "相",
        Role::Horse => "马",
        Role::Chariot => "车",
        Role::Cannon => "炮",
        Role::Soldier => "兵",
    }
}

/// The optional Chinese display of a move (§10.5), e.g. `炮12平13`; never on the wire.
/// `None` when no player's piece stands on the move's starting point.
pub fn chinese_move(pos: &Position, m: Move) -> Option<String> {
    let pc = pos.piece_at(m.from)?;
    let player = pc.colour.player()?;
    let c = player.colour();
    let name = chinese_name(player, pc.role);
    let (lf, lt) = (chinese_line(player, m.from), chinese_line(player, m.to));
    let progress = super::board::depth(c, m.to) - super::board::depth(c, m.from);
    // Like pieces on the starting line, the one furthest forward first.
    let mut same: Vec<Point> = pos
        .pieces_of(c)
        .iter()
        .filter(|q| pos.piece_at(*q) == Some(pc) && chinese_line(player, *q) == lf)
        .collect();
    same.sort_by_key(|q| std::cmp::Reverse(super::board::depth(c, *q)));
    let prefix = if same.len() < 2 {
        format!("{name}{lf}")
    } else {
        let i = same.iter().position(|q| *q == m.from).unwrap_or(0);
        let order: &[&str] = match same.len() {
            2 => &["前", "后"],
            3 => &["前", "中", "后"],
            _ => &["一", "二", "三", "四", "五", "六", "七", "八", "九"],
        };
        format!("{}{name}", order.get(i).copied().unwrap_or("后"))
    };
    let by_line = matches!(pc.role, Role::Horse | Role::Elephant | Role::Advisor);
    let (verb, n) = match progress.signum() {
        0 => ("平", i32::from(lt)),
        1 => ("进", if by_line { i32::from(lt) } else { progress }),
        _ => ("退", if by_line { i32::from(lt) } else { -progress }),
    };
    Some(format!("{prefix}{verb}{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_display() {
        let p = Position::initial();
        let m = |s: &str| parse_move(s).unwrap();
        // 吴 faces west: its lines are ranks, rank 17 = 1; forward = west.
        assert_eq!(chinese_move(&p, m("o12-m12")).unwrap(), "炮6进2");
        assert_eq!(chinese_move(&p, m("o12-n12")).unwrap(), "炮6进1");
        assert_eq!(chinese_move(&p, m("q12-o13")).unwrap(), "马6进5");
        assert_eq!(chinese_move(&p, m("n9-m9")).unwrap(), "兵9进1");
        assert_eq!(chinese_move(&p, m("n9-n10")).unwrap(), "兵9平8");
        assert_eq!(chinese_move(&p, m("q9-p9")).unwrap(), "吴9进1");
        assert_eq!(chinese_move(&p, m("o6-o11")).unwrap(), "炮12平7");
        // 蜀 faces north: q = 1 … a = 17.
        let after = parse_position(&format!("{} R - R", super::super::position::INITIAL_PLACEMENT)).unwrap();
        assert_eq!(chinese_move(&after, m("f3-f5")).unwrap(), "炮12进2");
        assert_eq!(chinese_move(&after, m("l1-k3")).unwrap(), "马6进7");
        assert_eq!(chinese_move(&p, m("d7-d6")), None);
    }
}
