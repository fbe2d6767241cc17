//! The 225-point board of 三国演弈棋 (RULES-YANYI §2): points, lines, camps,
//! 防线, 国境线, palaces, the 汉 palace and the three 结盟点, with every move
//! table the position needs, built once.

use std::fmt;
use std::sync::OnceLock;

use super::piece::{Colour, Player};

/// Number of board points.
pub const NUM_POINTS: usize = 225;

/// A board point, by its canonical index (§2.1: rank, then file).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(u8);

/// `(x, y)` of each canonical index.
const fn xy_of(i: usize) -> (u8, u8) {
    // rank r = 17 - y
    if i < 36 {
        let r = i / 9 + 1;
        ((i % 9 + 4) as u8, (17 - r) as u8)
    } else if i < 189 {
        let j = i - 36;
        let r = j / 17 + 5;
        ((j % 17) as u8, (17 - r) as u8)
    } else {
        let j = i - 189;
        let r = j / 9 + 14;
        ((j % 9 + 4) as u8, (17 - r) as u8)
    }
}

/// Whether `(x, y)` is a board point.
pub const fn is_point(x: i32, y: i32) -> bool {
    x >= 0 && y >= 0 && x <= 16 && y <= 16 && ((4 <= x && x <= 12) || (4 <= y && y <= 12))
}

impl Point {
    /// The point with canonical index `i` (`i < 225`).
    pub const fn new(i: usize) -> Point {
        assert!(i < NUM_POINTS);
        Point(i as u8)
    }

    /// The canonical index, 0..225.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The point at `(x, y)` (x west→east, y north→south), if it is one.
    pub const fn from_xy(x: i32, y: i32) -> Option<Point> {
        if !is_point(x, y) {
            return None;
        }
        let r = 17 - y;
        let i = if r <= 4 {
            9 * (r - 1) + (x - 4)
        } else if r <= 13 {
            36 + 17 * (r - 5) + x
        } else {
            189 + 9 * (r - 14) + (x - 4)
        };
        Some(Point(i as u8))
    }

    /// `(x, y)`: x = 0..16 west to east, y = 0..16 north to south.
    #[inline]
    pub const fn xy(self) -> (u8, u8) {
        xy_of(self.0 as usize)
    }

    /// The file letter's index (x).
    pub const fn x(self) -> u8 {
        self.xy().0
    }

    /// y, north to south.
    pub const fn y(self) -> u8 {
        self.xy().1
    }

    /// Rank 1..17 (17 − y).
    pub const fn rank(self) -> u8 {
        17 - self.xy().1
    }

    /// The file letter `a`..`q`.
    pub const fn file(self) -> char {
        (b'a' + self.xy().0) as char
    }

    /// Every point, in canonical order.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..NUM_POINTS).map(|i| Point(i as u8))
    }

    /// Parses a point name such as `a9` or `q13`.
    pub fn parse(s: &str) -> Option<Point> {
        let b = s.as_bytes();
        if b.len() < 2 || b.len() > 3 || !(b'a'..=b'q').contains(&b[0]) {
            return None;
        }
        let digits = &s[1..];
        if digits.starts_with('0') || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let r: i32 = digits.parse().ok()?;
        if !(1..=17).contains(&r) {
            return None;
        }
        Point::from_xy(i32::from(b[0] - b'a'), 17 - r)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file(), self.rank())
    }
}

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A set of points as a 256-bit mask.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct PointSet(pub(crate) [u64; 4]);

impl PointSet {
    /// The empty set.
    pub const EMPTY: PointSet = PointSet([0; 4]);

    /// Whether `p` is in the set.
    #[inline]
    pub const fn contains(&self, p: Point) -> bool {
        let i = p.0 as usize;
        self.0[i >> 6] & (1u64 << (i & 63)) != 0
    }

    /// Adds `p`.
    #[inline]
    pub fn insert(&mut self, p: Point) {
        let i = p.0 as usize;
        self.0[i >> 6] |= 1u64 << (i & 63);
    }

    /// Removes `p`.
    #[inline]
    pub fn remove(&mut self, p: Point) {
        let i = p.0 as usize;
        self.0[i >> 6] &= !(1u64 << (i & 63));
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.0[0] | self.0[1] | self.0[2] | self.0[3] == 0
    }

    /// Number of points in the set.
    #[inline]
    pub const fn len(&self) -> usize {
        (self.0[0].count_ones() + self.0[1].count_ones() + self.0[2].count_ones() + self.0[3].count_ones()) as usize
    }

    /// The points in index order.
    #[inline]
    pub fn iter(self) -> PointSetIter {
        PointSetIter { words: self.0, word: 0 }
    }
}

impl fmt::Debug for PointSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<Point> for PointSet {
    fn from_iter<I: IntoIterator<Item = Point>>(iter: I) -> Self {
        let mut s = PointSet::EMPTY;
        for p in iter {
            s.insert(p);
        }
        s
    }
}

/// Iterator over a [`PointSet`] in index order.
#[derive(Clone, Debug)]
pub struct PointSetIter {
    words: [u64; 4],
    word: usize,
}

impl Iterator for PointSetIter {
    type Item = Point;

    #[inline]
    fn next(&mut self) -> Option<Point> {
        while self.word < 4 {
            let w = self.words[self.word];
            if w != 0 {
                let bit = w.trailing_zeros() as usize;
                self.words[self.word] = w & (w - 1);
                return Some(Point((self.word * 64 + bit) as u8));
            }
            self.word += 1;
        }
        None
    }
}

/// The four line directions. `North` is toward rank 17 (魏).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Toward rank 17.
    North = 0,
    /// Toward file q.
    East = 1,
    /// Toward rank 1.
    South = 2,
    /// Toward file a.
    West = 3,
}

impl Dir {
    /// All four.
    pub const ALL: [Dir; 4] = [Dir::North, Dir::East, Dir::South, Dir::West];

    /// `(dx, dy)` in board coordinates (y grows southward).
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Dir::North => (0, -1),
            Dir::East => (1, 0),
            Dir::South => (0, 1),
            Dir::West => (-1, 0),
        }
    }
}

/// No point (in the step tables).
pub(crate) const NONE: u8 = 255;

/// A short list of points (at most 8) in a table.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Short {
    pub(crate) len: u8,
    pub(crate) pts: [u8; 8],
}

impl Short {
    fn push(&mut self, p: Point) {
        self.pts[self.len as usize] = p.0;
        self.len += 1;
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.pts[..self.len as usize]
    }
}

/// The depth `d_S(p)` of a point for a colour (§2.3): 1 = its back line.
pub const fn depth(c: Colour, p: Point) -> i32 {
    let (x, y) = p.xy();
    let rank = 17 - y as i32;
    match c {
        Colour::R => rank,
        Colour::B => 18 - rank,
        Colour::G => 17 - x as i32,
        Colour::Y => x as i32 + 1,
    }
}

/// The forward direction `F_S` of a colour.
pub const fn forward(c: Colour) -> Dir {
    match c {
        Colour::R => Dir::North,
        Colour::B => Dir::South,
        Colour::G => Dir::West,
        Colour::Y => Dir::East,
    }
}

fn in_camp_xy(c: Colour, x: i32, y: i32) -> bool {
    let Some(p) = Point::from_xy(x, y) else { return false };
    let middle = match c {
        Colour::R | Colour::B => (4..=12).contains(&x),
        Colour::G | Colour::Y => (4..=12).contains(&y),
    };
    middle && depth(c, p) <= 5
}

fn in_palace_xy(c: Colour, x: i32, y: i32) -> bool {
    let (xs, ys) = palace_ranges(c);
    xs.contains(&x) && ys.contains(&y)
}

fn palace_ranges(c: Colour) -> (std::ops::RangeInclusive<i32>, std::ops::RangeInclusive<i32>) {
    match c {
        Colour::R => (7..=9, 14..=16),
        Colour::B => (7..=9, 0..=2),
        Colour::G => (14..=16, 7..=9),
        Colour::Y => (0..=2, 7..=9),
    }
}

/// The palace centre of a colour (`i2`, `i16`, `p9`, `b9`).
pub fn palace_centre(c: Colour) -> Point {
    let (xs, ys) = palace_ranges(c);
    Point::from_xy(*xs.start() + 1, *ys.start() + 1).unwrap()
}

/// The 结盟点 of a player: 吴 `b9`, 魏 `a8`, 蜀 `a10` (§6.2).
pub fn alliance_point(p: Player) -> Point {
    match p {
        Player::G => Point::from_xy(1, 8).unwrap(),
        Player::B => Point::from_xy(0, 9).unwrap(),
        Player::R => Point::from_xy(0, 7).unwrap(),
    }
}

/// Every move table, built once.
#[derive(Debug)]
pub(crate) struct Tables {
    /// One step along a line, per direction, or [`NONE`].
    pub(crate) step: [[u8; 4]; NUM_POINTS],
    /// Horse destinations (symmetric, so also the horse sources).
    pub(crate) horse: [Short; NUM_POINTS],
    /// Elephant destinations inside the camp it stands in (symmetric).
    pub(crate) elephant: [Short; NUM_POINTS],
    /// Advisor destinations along palace diagonals (symmetric).
    pub(crate) advisor: [Short; NUM_POINTS],
    /// King destinations inside the player's own palace, per player.
    pub(crate) king: [[Short; NUM_POINTS]; 3],
    /// Soldier destinations per colour G, B, R.
    pub(crate) soldier: [[Short; NUM_POINTS]; 3],
    /// Soldier sources per colour: the points from which that colour's soldier reaches the point.
    pub(crate) soldier_src: [[Short; NUM_POINTS]; 3],
    /// Camp per colour G, B, R, Y.
    pub(crate) camp: [PointSet; 4],
    /// Palace per colour G, B, R, Y.
    pub(crate) palace: [PointSet; 4],
    /// The points from which a piece of each colour G, B, R, Y has the
    /// board: the 21 elephant points.
    pub(crate) elephant_points: PointSet,
    /// The 15 advisor points (palace corners and centres, not 汉's).
    pub(crate) advisor_points: PointSet,
}

fn build() -> Tables {
    let mut t = Tables {
        step: [[NONE; 4]; NUM_POINTS],
        horse: [Short::default(); NUM_POINTS],
        elephant: [Short::default(); NUM_POINTS],
        advisor: [Short::default(); NUM_POINTS],
        king: [[Short::default(); NUM_POINTS]; 3],
        soldier: [[Short::default(); NUM_POINTS]; 3],
        soldier_src: [[Short::default(); NUM_POINTS]; 3],
        camp: [PointSet::EMPTY; 4],
        palace: [PointSet::EMPTY; 4],
        elephant_points: PointSet::EMPTY,
        advisor_points: PointSet::EMPTY,
    };
    for p in Point::all() {
        let (x, y) = p.xy();
        let (x, y) = (i32::from(x), i32::from(y));
        for d in Dir::ALL {
            let (dx, dy) = d.delta();
            if let Some(q) = Point::from_xy(x + dx, y + dy) {
                t.step[p.index()][d as usize] = q.0;
            }
        }
        // Horse: the whole 2 × 3 block spanned by start and destination is on the board.
        for (dx, dy) in [(1, -2), (2, -1), (2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2)] {
            let (tx, ty) = (x + dx, y + dy);
            let Some(q) = Point::from_xy(tx, ty) else { continue };
            let mut ok = true;
            for bx in x.min(tx)..=x.max(tx) {
                for by in y.min(ty)..=y.max(ty) {
                    ok &= is_point(bx, by);
                }
            }
            if ok {
                t.horse[p.index()].push(q);
            }
        }
        for c in Colour::ALL {
            if in_camp_xy(c, x, y) {
                t.camp[c as usize].insert(p);
            }
            if in_palace_xy(c, x, y) {
                t.palace[c as usize].insert(p);
            }
        }
    }
    // Elephant points: from the back-line elephants, all (±2, ±2) reachable in the camp.
    for c in [Colour::G, Colour::B, Colour::R] {
        let camp = t.camp[c as usize];
        // The seven 田 points: depth 1 at the 3rd/7th middle lines, depth 3 at the 1st/5th/9th, depth 5 like depth 1.
        let pts: Vec<Point> = camp
            .iter()
            .filter(|p| {
                let d = depth(c, *p);
                let (x, y) = p.xy();
                let along = match c {
                    Colour::R | Colour::B => i32::from(x) - 4,
                    _ => i32::from(y) - 4,
                };
                matches!((d, along), (1, 2) | (1, 6) | (3, 0) | (3, 4) | (3, 8) | (5, 2) | (5, 6))
            })
            .collect();
        for p in pts {
            t.elephant_points.insert(p);
        }
    }
    for p in t.elephant_points.iter() {
        let (x, y) = p.xy();
        let (x, y) = (i32::from(x), i32::from(y));
        let camps: Vec<usize> = (0..3).filter(|&c| t.camp[c].contains(p)).collect();
        for (dx, dy) in [(2, -2), (2, 2), (-2, 2), (-2, -2)] {
            if let Some(q) = Point::from_xy(x + dx, y + dy)
                && camps.iter().any(|&c| t.camp[c].contains(q))
            {
                t.elephant[p.index()].push(q);
            }
        }
    }
    // Palaces: kings (own palace), advisors (diagonals, not the 汉 palace: no piece uses it).
    for c in Colour::ALL {
        let centre = palace_centre(c);
        let (cx, cy) = centre.xy();
        let (cx, cy) = (i32::from(cx), i32::from(cy));
        if c != Colour::Y {
            t.advisor_points.insert(centre);
            for (dx, dy) in [(1, -1), (1, 1), (-1, 1), (-1, -1)] {
                let q = Point::from_xy(cx + dx, cy + dy).unwrap();
                t.advisor_points.insert(q);
                t.advisor[centre.index()].push(q);
                t.advisor[q.index()].push(centre);
            }
        }
    }
    for pl in Player::ALL {
        let c = pl.colour();
        let palace = t.palace[c as usize];
        for p in palace.iter() {
            for d in Dir::ALL {
                let q = t.step[p.index()][d as usize];
                if q != NONE && palace.contains(Point(q)) {
                    t.king[pl as usize][p.index()].push(Point(q));
                }
            }
        }
        // Soldiers: forward or sideways; backward only at depth ≥ 6 (§4).
        let fwd = forward(c);
        for p in Point::all() {
            let dep = depth(c, p);
            for d in Dir::ALL {
                let back = (d as usize + 2) % 4 == fwd as usize;
                if back && dep < 6 {
                    continue;
                }
                let q = t.step[p.index()][d as usize];
                if q != NONE {
                    t.soldier[pl as usize][p.index()].push(Point(q));
                    t.soldier_src[pl as usize][q as usize].push(p);
                }
            }
        }
    }
    // Sort every short list by index so generation order is stable.
    for s in t
        .horse
        .iter_mut()
        .chain(t.elephant.iter_mut())
        .chain(t.advisor.iter_mut())
    {
        let n = s.len as usize;
        s.pts[..n].sort_unstable();
    }
    t
}

/// The tables, built on first use.
#[inline]
pub(crate) fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

/// The camp (本国) of a colour: 45 points (§2.3).
pub fn camp(c: Colour) -> PointSet {
    tables().camp[c as usize]
}

/// The palace of a colour (九宫, §2.4).
pub fn palace(c: Colour) -> PointSet {
    tables().palace[c as usize]
}

/// The points at depth `d` on the nine middle lines of a colour's camp
/// (`d` = 1 back line, 4 防线, 5 国境线).
pub fn camp_line(c: Colour, d: i32) -> Vec<Point> {
    camp(c).iter().filter(|p| depth(c, *p) == d).collect()
}

/// The 21 elephant points.
pub fn elephant_points() -> PointSet {
    tables().elephant_points
}

/// The 15 advisor points.
pub fn advisor_points() -> PointSet {
    tables().advisor_points
}

/// The one-step neighbour of `p` in direction `d`.
pub fn step(p: Point, d: Dir) -> Option<Point> {
    let q = tables().step[p.index()][d as usize];
    (q != NONE).then_some(Point(q))
}

/// The horse destinations of `p` on the empty board ([R-1]).
pub fn horse_moves(p: Point) -> Vec<Point> {
    tables().horse[p.index()].as_slice().iter().map(|&q| Point(q)).collect()
}

/// The central block 中原: files e–m × ranks 5–13.
pub fn central_block() -> PointSet {
    Point::all()
        .filter(|p| (4..=12).contains(&p.x()) && (4..=12).contains(&p.y()))
        .collect()
}

/// A drawn segment between two points.
pub type Segment = (Point, Point);

/// A region of the board for drawing, with a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// What it is, e.g. `camp`, `defence line`, `border line`, `palace`.
    pub kind: &'static str,
    /// Whose (a colour letter), or `None` for the central block.
    pub colour: Option<Colour>,
    /// Its label in the game's words, e.g. `蜀 防线`.
    pub label: String,
    /// Its points in canonical order.
    pub points: Vec<Point>,
}

/// One point of the board description.
#[derive(Clone, Debug, PartialEq)]
pub struct PointInfo {
    /// The point.
    pub point: Point,
    /// Its name, e.g. `a9`.
    pub name: String,
    /// Drawing coordinates: x from west to east, y from north to south, one unit per line.
    pub coords: (f64, f64),
}

/// Everything a client needs to draw the board (§2).
#[derive(Clone, Debug, PartialEq)]
pub struct BoardDescription {
    /// The variant key.
    pub variant: &'static str,
    /// Width and height of the grid in units (16 × 16 between the outer lines).
    pub size: (f64, f64),
    /// The 225 points in canonical order.
    pub points: Vec<PointInfo>,
    /// The line segments (416 orthogonal neighbour pairs).
    pub lines: Vec<Segment>,
    /// The palace diagonals (4 palaces × 4 segments, the 汉 palace included).
    pub diagonals: Vec<Segment>,
    /// Camps, 防线, 国境线, palaces (the 汉 palace included) and the central block.
    pub regions: Vec<Region>,
    /// The three 结盟点 with their labels (`吴`, `魏`, `蜀`) and the player each stands for.
    pub alliance_points: Vec<(Point, Player, &'static str)>,
    /// Decorative corner labels with the centre of the empty corner, in drawing coordinates.
    pub corners: Vec<(&'static str, (f64, f64))>,
}

/// The board description for a client that draws any board from data.
pub fn description() -> BoardDescription {
    let t = tables();
    let points = Point::all()
        .map(|p| PointInfo {
            point: p,
            name: p.to_string(),
            coords: (f64::from(p.x()), f64::from(p.y())),
        })
        .collect();
    let mut lines = Vec::new();
    for p in Point::all() {
        for d in [Dir::East, Dir::South] {
            let q = t.step[p.index()][d as usize];
            if q != NONE {
                lines.push((p, Point(q)));
            }
        }
    }
    let mut diagonals = Vec::new();
    for c in Colour::ALL {
        let centre = palace_centre(c);
        let (cx, cy) = centre.xy();
        for (dx, dy) in [(-1, -1), (1, -1), (-1, 1), (1, 1)] {
            let q = Point::from_xy(i32::from(cx) + dx, i32::from(cy) + dy).unwrap();
            diagonals.push((centre, q));
        }
    }
    let mut regions = Vec::new();
    for c in Colour::ALL {
        let name = c.kingdom();
        regions.push(Region {
            kind: "camp",
            colour: Some(c),
            label: format!("{name} 本国"),
            points: camp(c).iter().collect(),
        });
        regions.push(Region {
            kind: "defence line",
            colour: Some(c),
            label: format!("{name} 防线"),
            points: camp_line(c, 4),
        });
        regions.push(Region {
            kind: "border line",
            colour: Some(c),
            label: format!("{name} 国境线"),
            points: camp_line(c, 5),
        });
        regions.push(Region {
            kind: "palace",
            colour: Some(c),
            label: format!("{name} 九宫"),
            points: palace(c).iter().collect(),
        });
    }
    regions.push(Region {
        kind: "central block",
        colour: None,
        label: "中原".to_owned(),
        points: central_block().iter().collect(),
    });
    BoardDescription {
        variant: "yanyi",
        size: (16.0, 16.0),
        points,
        lines,
        diagonals,
        regions,
        alliance_points: Player::ALL
            .into_iter()
            .map(|p| (alliance_point(p), p, p.colour().kingdom()))
            .collect(),
        corners: vec![
            ("羌族", (1.5, 1.5)),
            ("乌丸", (14.5, 1.5)),
            ("南蛮", (1.5, 14.5)),
            ("山越", (14.5, 14.5)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(Point::all().count(), 225);
        let t = tables();
        let pairs: usize = Point::all()
            .map(|p| t.step[p.index()].iter().filter(|&&q| q != NONE).count())
            .sum();
        assert_eq!(pairs / 2, 416);
        let horse: usize = t.horse.iter().map(|s| s.len as usize).sum();
        assert_eq!(horse, 1408);
        // §11: 1,440 with a destination-only horse.
        let dest_only: usize = Point::all()
            .map(|p| {
                let (x, y) = (i32::from(p.x()), i32::from(p.y()));
                [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
                    .iter()
                    .filter(|(dx, dy)| is_point(x + dx, y + dy))
                    .count()
            })
            .sum();
        assert_eq!(dest_only, 1440);
        assert_eq!(t.elephant_points.len(), 21);
        assert_eq!(t.advisor_points.len(), 15);
        for p in Point::all() {
            assert_eq!(Point::parse(&p.to_string()), Some(p));
            let (x, y) = p.xy();
            assert_eq!(Point::from_xy(i32::from(x), i32::from(y)), Some(p));
        }
        for (name, i) in [
            ("e1", 0),
            ("i1", 4),
            ("a5", 36),
            ("a9", 104),
            ("i9", 112),
            ("q9", 120),
            ("i17", 220),
            ("m17", 224),
        ] {
            assert_eq!(Point::parse(name).unwrap().index(), i, "{name}");
        }
        assert_eq!(Point::parse("a1"), None);
        assert_eq!(Point::parse("a09"), None);
    }

    #[test]
    fn elephant_points_are_the_texts() {
        let names = |v: &[&str]| -> Vec<Point> {
            let mut v: Vec<Point> = v.iter().map(|s| Point::parse(s).unwrap()).collect();
            v.sort();
            v
        };
        let all = names(&[
            "g1", "k1", "e3", "i3", "m3", "g5", "k5", "g17", "k17", "e15", "i15", "m15", "g13", "k13", "q11", "q7",
            "o13", "o9", "o5", "m11", "m7",
        ]);
        assert_eq!(elephant_points().iter().collect::<Vec<_>>(), all);
        // m7 → o5, o9, k5? no (k5 is 蜀's camp only).
        let m7 = Point::parse("m7").unwrap();
        let got: Vec<String> = tables().elephant[m7.index()]
            .as_slice()
            .iter()
            .map(|&q| Point(q).to_string())
            .collect();
        assert_eq!(got, ["o5", "o9"]);
    }

    #[test]
    fn excluded_horse_pairs() {
        for pair in "e3-d5 e4-c5 e4-d6 f4-d5 m3-n5 m4-o5 m4-n6 l4-n5 c13-e14 d12-e14 d13-e15 d13-f14 o13-m14 n12-m14 n13-m15 n13-l14"
            .split(' ')
        {
            let (a, b) = pair.split_once('-').unwrap();
            let (a, b) = (Point::parse(a).unwrap(), Point::parse(b).unwrap());
            assert!(!horse_moves(a).contains(&b), "{pair}");
            assert!(!horse_moves(b).contains(&a), "{pair}");
        }
    }

    #[test]
    fn description_is_complete() {
        let d = description();
        assert_eq!(d.points.len(), 225);
        assert_eq!(d.lines.len(), 416);
        assert_eq!(d.diagonals.len(), 16);
        assert_eq!(d.alliance_points.len(), 3);
        assert_eq!(
            d.regions
                .iter()
                .filter(|r| r.kind == "camp")
                .map(|r| r.points.len())
                .sum::<usize>(),
            180
        );
    }
}
