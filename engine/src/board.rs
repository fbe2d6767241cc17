//! The 184-point board (RULES §2), computed from its geometry once.
//!
//! Everything here is derived from the few facts of §2: the point
//! coordinates, the 39 lines and the 147 cells. Directions, grid points,
//! slide rays, diagonal steps, 田 moves and 日 moves are computed from those,
//! never typed in; a test compares them with the independent reference
//! tables in `shared/board/`.

use std::fmt;
use std::sync::LazyLock;

use crate::side::Side;

/// Number of points on the board.
pub const NUM_POINTS: usize = 184;

/// A point of the board, by its canonical index (RULES §2.2): rectangle
/// points `s·54 + (r−1)·9 + (f−1)`, fan points `162 + s·7 + k`
/// (k: M5..M9 = 0..4, Q6 = 5, Q7 = 6), the centre `O` = 183.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(u8);

/// What a point is, in the words of the rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PointKind {
    /// `Xfr`: file `f` (1..9) and rank `r` (1..6) of side X's rectangle.
    Rect { side: Side, file: u8, rank: u8 },
    /// `XMf` (f = 5..9): the midpoint of the arc of X's fan starting at X's file f.
    Mid { side: Side, file: u8 },
    /// `XQf` (f = 6, 7): an end of X's side-axis line.
    Quarter { side: Side, file: u8 },
    /// `O`, the centre point 中轴点.
    Centre,
}

impl Point {
    /// The centre point `O`.
    pub const O: Point = Point(183);

    /// The point with this canonical index, if it is below 184.
    #[inline]
    pub const fn new(index: usize) -> Option<Point> {
        if index < NUM_POINTS {
            Some(Point(index as u8))
        } else {
            None
        }
    }

    /// The point with this index. Panics if `index >= 184`.
    #[inline]
    pub const fn from_index(index: usize) -> Point {
        assert!(index < NUM_POINTS);
        Point(index as u8)
    }

    /// The canonical index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// All points in index order.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..NUM_POINTS).map(|i| Point(i as u8))
    }

    /// The rectangle point `Xfr`. Panics on a file outside 1..9 or rank outside 1..6.
    pub const fn rect(side: Side, file: u8, rank: u8) -> Point {
        assert!(file >= 1 && file <= 9 && rank >= 1 && rank <= 6);
        Point((side as usize * 54 + (rank as usize - 1) * 9 + (file as usize - 1)) as u8)
    }

    /// The fan point `XMf` (f = 5..9).
    pub const fn mid(side: Side, file: u8) -> Point {
        assert!(file >= 5 && file <= 9);
        Point((162 + side as usize * 7 + (file as usize - 5)) as u8)
    }

    /// The fan point `XQf` (f = 6, 7).
    pub const fn quarter(side: Side, file: u8) -> Point {
        assert!(file == 6 || file == 7);
        Point((162 + side as usize * 7 + 5 + (file as usize - 6)) as u8)
    }

    /// What the point is.
    pub const fn kind(self) -> PointKind {
        let i = self.0 as usize;
        if i < 162 {
            let side = Side::from_index(i / 54);
            let j = i % 54;
            PointKind::Rect {
                side,
                file: (j % 9) as u8 + 1,
                rank: (j / 9) as u8 + 1,
            }
        } else if i < 183 {
            let side = Side::from_index((i - 162) / 7);
            let k = (i - 162) % 7;
            if k < 5 {
                PointKind::Mid {
                    side,
                    file: k as u8 + 5,
                }
            } else {
                PointKind::Quarter {
                    side,
                    file: k as u8 + 1,
                }
            }
        } else {
            PointKind::Centre
        }
    }

    /// The side whose rectangle or fan holds this point (`None` for `O`).
    pub const fn owner(self) -> Option<Side> {
        match self.kind() {
            PointKind::Rect { side, .. } | PointKind::Mid { side, .. } | PointKind::Quarter { side, .. } => Some(side),
            PointKind::Centre => None,
        }
    }

    /// Whether the point is in a fan (an `M` or `Q` point).
    #[inline]
    pub const fn is_fan(self) -> bool {
        self.0 >= 162 && self.0 < 183
    }

    /// The point's coordinates (unit = line spacing, origin `O`, RULES §2.1–2.2).
    pub fn coords(self) -> (f64, f64) {
        let h = 2.0 * 3f64.sqrt();
        let (side, x, y) = match self.kind() {
            PointKind::Rect { side, file, rank } => (side, f64::from(file) - 5.0, -(h + 6.0 - f64::from(rank))),
            PointKind::Mid { side, file } => {
                let (x, y) = on_fan_arc(file, 150.0);
                (side, x, y)
            }
            PointKind::Quarter { side, file } => {
                let (x, y) = on_fan_arc(file, 165.0);
                (side, x, y)
            }
            PointKind::Centre => return (0.0, 0.0),
        };
        rotate(x, y, 120.0 * side.index() as f64)
    }

    /// Parses a point name such as `W52`, `BM7`, `YQ6` or `O`.
    pub fn parse(s: &str) -> Option<Point> {
        let b = s.as_bytes();
        if b == b"O" {
            return Some(Point::O);
        }
        if b.len() != 3 {
            return None;
        }
        let side = Side::from_letter(b[0] as char)?;
        let digit = |c: u8| if c.is_ascii_digit() { Some(c - b'0') } else { None };
        match b[1] {
            b'M' => {
                let f = digit(b[2])?;
                (5..=9).contains(&f).then(|| Point::mid(side, f))
            }
            b'Q' => {
                let f = digit(b[2])?;
                (6..=7).contains(&f).then(|| Point::quarter(side, f))
            }
            c => {
                let f = digit(c)?;
                let r = digit(b[2])?;
                ((1..=9).contains(&f) && (1..=6).contains(&r)).then(|| Point::rect(side, f, r))
            }
        }
    }
}

fn on_fan_arc(file: u8, degrees: f64) -> (f64, f64) {
    // White's fan centre P_W = (√3·h, −h) = (6, −2√3); radius ρ_f = 11 − f.
    let h = 2.0 * 3f64.sqrt();
    let rho = 11.0 - f64::from(file);
    let a = degrees.to_radians();
    (3f64.sqrt() * h + rho * a.cos(), -h + rho * a.sin())
}

fn rotate(x: f64, y: f64, degrees: f64) -> (f64, f64) {
    let a = degrees.to_radians();
    let (s, c) = a.sin_cos();
    (x * c - y * s, x * s + y * c)
}

/// Each point's name as bytes, padded to 3, and its length (`W52`, `BM7`,
/// `YQ6`; `O` alone is one byte), made at compile time from
/// [`Point::kind`]: the one place the names are spelled.
const NAME_BYTES: [([u8; 3], usize); NUM_POINTS] = {
    let mut names = [([0; 3], 0); NUM_POINTS];
    let mut i = 0;
    while i < NUM_POINTS {
        names[i] = match Point(i as u8).kind() {
            PointKind::Rect { side, file, rank } => ([side.letter() as u8, b'0' + file, b'0' + rank], 3),
            PointKind::Mid { side, file } => ([side.letter() as u8, b'M', b'0' + file], 3),
            PointKind::Quarter { side, file } => ([side.letter() as u8, b'Q', b'0' + file], 3),
            PointKind::Centre => ([b'O', 0, 0], 1),
        };
        i += 1;
    }
    names
};

impl Point {
    /// The point's name (`W52`, `BM7`, `YQ6`, `O`), from a table made once:
    /// a server writes hundreds of names per move (legal moves, positions),
    /// and the formatting machinery costs more than the move itself.
    #[inline]
    pub fn name(self) -> &'static str {
        static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
            NAME_BYTES
                .iter()
                .map(|(bytes, len)| String::from_utf8(bytes[..*len].to_vec()).expect("names are ASCII"))
                .collect()
        });
        &NAMES[self.index()]
    }

    /// [`Point::name`]'s bytes padded to 3, and how many of them are the
    /// name: for writers that copy a fixed size and cut the rest off.
    #[inline]
    pub const fn name_bytes(self) -> ([u8; 3], usize) {
        NAME_BYTES[self.index()]
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A set of points as a 192-bit mask.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct PointSet([u64; 3]);

impl PointSet {
    /// The empty set.
    pub const EMPTY: PointSet = PointSet([0; 3]);

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

    /// Whether the two sets have a point in common.
    #[inline]
    pub const fn intersects(&self, other: &PointSet) -> bool {
        (self.0[0] & other.0[0]) | (self.0[1] & other.0[1]) | (self.0[2] & other.0[2]) != 0
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.0[0] | self.0[1] | self.0[2] == 0
    }

    /// Number of points in the set.
    #[inline]
    pub const fn len(&self) -> usize {
        (self.0[0].count_ones() + self.0[1].count_ones() + self.0[2].count_ones()) as usize
    }

    /// The union of two sets.
    #[inline]
    pub const fn union(self, other: PointSet) -> PointSet {
        PointSet([self.0[0] | other.0[0], self.0[1] | other.0[1], self.0[2] | other.0[2]])
    }

    /// The points of `self` not in `other`.
    #[inline]
    pub const fn difference(self, other: PointSet) -> PointSet {
        PointSet([
            self.0[0] & !other.0[0],
            self.0[1] & !other.0[1],
            self.0[2] & !other.0[2],
        ])
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
    words: [u64; 3],
    word: usize,
}

impl Iterator for PointSetIter {
    type Item = Point;

    #[inline]
    fn next(&mut self) -> Option<Point> {
        while self.word < 3 {
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

    /// Word by word, without the iterator's state between points: what
    /// `for_each` (and every adaptor that folds) runs.
    #[inline]
    fn fold<B, F: FnMut(B, Point) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        for (i, &word) in self.words.iter().enumerate().skip(self.word) {
            let mut w = word;
            while w != 0 {
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                acc = f(acc, Point((i * 64 + bit) as u8));
            }
        }
        acc
    }
}

/// A slide ray: the points met going from a point along one line in one
/// direction, nearest first.
///
/// Lines can share a stretch (the three lines through `X56` share `X51…X56`),
/// so several rays from one point can start alike. `new_from` is the first
/// index of this ray that no earlier ray of the same point reaches by the same
/// path: a move generator emits destinations only from there on, so that each
/// `(from, to)` is listed once, while blocking and cannon screens still look at
/// the whole ray.
#[derive(Copy, Clone, Debug)]
pub struct Ray {
    start: u16,
    len: u8,
    new_from: u8,
}

impl Ray {
    /// Index of the first point not already reached by an earlier ray.
    #[inline]
    pub fn new_from(&self) -> usize {
        self.new_from as usize
    }
}

/// Rows of variable length stored flat: one allocation, one index step.
#[derive(Clone, Debug)]
struct Rows<T> {
    starts: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> Rows<T> {
    fn from_nested(rows: &[Vec<T>]) -> Rows<T> {
        let mut starts = Vec::with_capacity(rows.len() + 1);
        let mut items = Vec::new();
        starts.push(0);
        for r in rows {
            items.extend_from_slice(r);
            starts.push(items.len() as u32);
        }
        Rows { starts, items }
    }

    #[inline]
    fn row(&self, i: usize) -> &[T] {
        &self.items[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// A 田 move (RULES §2.4): from a point over the eye to the destination.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tian {
    /// Where the piece starts.
    pub from: Point,
    /// The eye 相眼, which must be empty.
    pub eye: Point,
    /// Where the piece lands.
    pub to: Point,
}

/// A 日 move (RULES §2.4): from a point over the leg to the destination.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ri {
    /// Where the piece starts.
    pub from: Point,
    /// The leg 马腿, which must be empty.
    pub leg: Point,
    /// Where the piece lands.
    pub to: Point,
}

/// The whole board with everything precomputed. Get it with [`board()`].
#[derive(Debug)]
pub struct Board {
    lines: Vec<Vec<Point>>,
    cells: Vec<[Point; 4]>,
    edge_points: Vec<(Point, Point, Point, usize)>,
    neighbours: Rows<Point>,
    directions: Vec<Vec<Vec<Point>>>,
    grid: PointSet,
    rays: Rows<Ray>,
    ray_points: Vec<Point>,
    diagonals: Rows<Point>,
    drawn: Rows<Point>,
    tian: Rows<Tian>,
    tian_to: Rows<Tian>,
    ri: Rows<Ri>,
    ri_to: Rows<Ri>,
    rect: [PointSet; 3],
    palace: [PointSet; 3],
    king_region: [PointSet; 3],
    no_soldier: [PointSet; 3],
    fans: PointSet,
    forward: Vec<[Option<Point>; 3]>,
    king_steps: Vec<PointSet>,
    pivot_lines: PointSet,
    ray_sets: Rows<PointSet>,
    step_sources: Vec<PointSet>,
    adjacent: Vec<PointSet>,
    step_dests: Vec<[[PointSet; 3]; 4]>,
    soldier_steps: Vec<[PointSet; 3]>,
}

static BOARD: LazyLock<Board> = LazyLock::new(Board::build);

/// The board, built on first use.
#[inline]
pub fn board() -> &'static Board {
    &BOARD
}

impl Board {
    /// The 39 lines in the order of RULES §2.3 (ranks, files over the fans,
    /// file 5 over the 顶弧, axis lines, side-axis lines), side by side.
    pub fn lines(&self) -> &[Vec<Point>] {
        &self.lines
    }

    /// The 147 quadrilateral cells, corners in cyclic order as RULES §2.4 lists them.
    pub fn cells(&self) -> &[[Point; 4]] {
        &self.cells
    }

    /// The points lying inside a cell's edge: `(point, edge end, edge end, cell index)`.
    pub fn edge_points(&self) -> &[(Point, Point, Point, usize)] {
        &self.edge_points
    }

    /// Orthogonal neighbours of `p` (consecutive points of some line), by index.
    #[inline]
    pub fn neighbours(&self, p: Point) -> &[Point] {
        self.neighbours.row(p.index())
    }

    /// The directions of `p` in cyclic order around it (counterclockwise);
    /// each is the set of neighbours that leave `p` that way (three at a cusp
    /// `X56`, one elsewhere).
    pub fn directions(&self, p: Point) -> &[Vec<Point>] {
        &self.directions[p.index()]
    }

    /// Whether `p` is a grid point (four directions, a cell between each pair).
    #[inline]
    pub fn is_grid(&self, p: Point) -> bool {
        self.grid.contains(p)
    }

    /// The slide rays leaving `p` (see [`Ray`]).
    #[inline]
    pub fn rays(&self, p: Point) -> &[Ray] {
        self.rays.row(p.index())
    }

    /// The points of a ray, nearest first.
    #[inline]
    pub fn ray_points(&self, ray: &Ray) -> &[Point] {
        &self.ray_points[ray.start as usize..ray.start as usize + ray.len as usize]
    }

    /// Diagonal steps from `p`: opposite corners of the cells having `p` as a corner.
    #[inline]
    pub fn diagonals(&self, p: Point) -> &[Point] {
        self.diagonals.row(p.index())
    }

    /// Steps along the drawn (dashed) palace diagonals from `p` (RULES §2.5).
    #[inline]
    pub fn drawn_diagonals(&self, p: Point) -> &[Point] {
        self.drawn.row(p.index())
    }

    /// 田 moves starting at `p` (geometry only).
    #[inline]
    pub fn tian_from(&self, p: Point) -> &[Tian] {
        self.tian.row(p.index())
    }

    /// 田 moves ending at `p` (geometry only).
    #[inline]
    pub fn tian_to(&self, p: Point) -> &[Tian] {
        self.tian_to.row(p.index())
    }

    /// 日 moves starting at `p` (geometry only).
    #[inline]
    pub fn ri_from(&self, p: Point) -> &[Ri] {
        self.ri.row(p.index())
    }

    /// 日 moves ending at `p` (geometry only).
    #[inline]
    pub fn ri_to(&self, p: Point) -> &[Ri] {
        self.ri_to.row(p.index())
    }

    /// Side `s`'s rectangle (54 points).
    #[inline]
    pub fn rectangle(&self, s: Side) -> PointSet {
        self.rect[s.index()]
    }

    /// Side `s`'s palace 王宫: files 4..6 × ranks 2..4.
    #[inline]
    pub fn palace(&self, s: Side) -> PointSet {
        self.palace[s.index()]
    }

    /// Palace ∪ rear palace of `s`: files 4..6 × ranks 1..4 (king and consort).
    #[inline]
    pub fn king_region(&self, s: Side) -> PointSet {
        self.king_region[s.index()]
    }

    /// Side `s`'s no-soldier zone 非兵区: ranks 1..5.
    #[inline]
    pub fn no_soldier_zone(&self, s: Side) -> PointSet {
        self.no_soldier[s.index()]
    }

    /// The 21 fan points.
    #[inline]
    pub fn fans(&self) -> PointSet {
        self.fans
    }

    /// The points off the lines whose emptying can open an attack on `p`:
    /// the legs of 日 moves and the eyes of 田 moves ending on `p`.
    #[inline]
    pub fn king_steps(&self, p: Point) -> &PointSet {
        &self.king_steps[p.index()]
    }

    /// Where a stepping piece standing on `p` may go on an empty board, as a
    /// set: `kind` 0 king (neighbours in its king region), 1 consort
    /// (neighbours and drawn diagonals in its king region), 2 advisor
    /// (drawn diagonals in its palace), 3 prince (neighbours and diagonals,
    /// any side).
    #[inline]
    pub fn step_dests(&self, kind: usize, s: Side, p: Point) -> PointSet {
        self.step_dests[p.index()][kind][s.index()]
    }

    /// Where a soldier of `s` standing on `p` may step on an empty board
    /// (one point along a ray, forward only inside its no-soldier zone,
    /// never into it): the single steps of move generation.
    #[inline]
    pub fn soldier_steps(&self, s: Side, p: Point) -> PointSet {
        self.soldier_steps[p.index()][s.index()]
    }

    /// The points of each ray leaving `p`, as sets, in the order of
    /// [`Board::rays`]: a piece acting along a ray (chariot, cannon, king,
    /// soldier) can act on `p` only if one of them holds it.
    #[inline]
    pub fn ray_sets(&self, p: Point) -> &[PointSet] {
        self.ray_sets.row(p.index())
    }

    /// Where a horse or an elephant can stand to move onto `p` (the starts
    /// of the 日 and 田 moves ending on it, legs and eyes aside).
    #[inline]
    pub fn step_sources(&self, p: Point) -> &PointSet {
        &self.step_sources[p.index()]
    }

    /// The points one step from `p`: its neighbours, diagonals and drawn
    /// diagonals (where a king, prince, consort or advisor attacks from).
    #[inline]
    pub fn adjacent(&self, p: Point) -> &PointSet {
        &self.adjacent[p.index()]
    }

    /// Every side's file 5 and `O`: the points whose emptying can open a view
    /// between two kings through `O` (the 枢轴线 rule, RULES §4).
    #[inline]
    pub fn pivot_lines(&self) -> PointSet {
        self.pivot_lines
    }

    /// For a rectangle point `Xfr` with r ≤ 5, the point one rank forward on
    /// the same file, `Xf(r+1)`, as seen by side X; `None` elsewhere. Only the
    /// owner's soldiers use it, so it is keyed by the point's own side.
    #[inline]
    pub fn forward(&self, p: Point, side: Side) -> Option<Point> {
        self.forward[p.index()][side.index()]
    }

    fn build() -> Board {
        let lines = build_lines();
        let (cells, edge_points) = build_cells();

        // Orthogonal neighbours: consecutive points of some line.
        let mut nb: Vec<Vec<Point>> = vec![Vec::new(); NUM_POINTS];
        for line in &lines {
            for w in line.windows(2) {
                add_unique(&mut nb[w[0].index()], w[1]);
                add_unique(&mut nb[w[1].index()], w[0]);
            }
        }
        for n in &mut nb {
            n.sort();
        }

        // Directions: neighbour groups, the three tangent lines at each X56
        // merged (the cusp), ordered by angle around the point.
        let directions: Vec<Vec<Vec<Point>>> = Point::all().map(|p| point_directions(p, &nb[p.index()])).collect();
        let dir_of = |p: Point, q: Point| -> usize {
            directions[p.index()]
                .iter()
                .position(|d| d.contains(&q))
                .expect("neighbour has a direction")
        };

        // The direction in which each edge of each cell leaves each of its corners.
        let edge_dir = |a: Point, b: Point| -> usize {
            if nb[a.index()].contains(&b) {
                return dir_of(a, b);
            }
            // A subdivided edge: the point lying inside it is a neighbour of both ends.
            let e = edge_points
                .iter()
                .find(|&&(_, x, y, _)| (x == a && y == b) || (x == b && y == a))
                .map(|&(e, ..)| e)
                .expect("a cell edge is a line segment or a subdivided one");
            dir_of(a, e)
        };
        // For each point: (cell index, corner position, the two directions it spans).
        let mut corner_cells: Vec<Vec<(usize, usize, [usize; 2])>> = vec![Vec::new(); NUM_POINTS];
        for (ci, c) in cells.iter().enumerate() {
            for k in 0..4 {
                let p = c[k];
                let d1 = edge_dir(p, c[(k + 3) % 4]);
                let d2 = edge_dir(p, c[(k + 1) % 4]);
                corner_cells[p.index()].push((ci, k, [d1, d2]));
            }
        }

        // Grid points: four directions, and a quadrilateral cell between each
        // cyclically consecutive pair.
        let mut grid = PointSet::EMPTY;
        for p in Point::all() {
            let dirs = &directions[p.index()];
            if dirs.len() != 4 {
                continue;
            }
            let spans = |i: usize, j: usize| {
                corner_cells[p.index()]
                    .iter()
                    .any(|&(_, _, d)| (d[0] == i && d[1] == j) || (d[0] == j && d[1] == i))
            };
            if (0..4).all(|i| spans(i, (i + 1) % 4)) {
                grid.insert(p);
            }
        }

        // Diagonal steps.
        let mut diagonals: Vec<Vec<Point>> = vec![Vec::new(); NUM_POINTS];
        for c in &cells {
            for k in 0..4 {
                add_unique(&mut diagonals[c[k].index()], c[(k + 2) % 4]);
            }
        }
        for d in &mut diagonals {
            d.sort();
        }

        // 田: a → across C1 to its opposite corner e (a grid point) → across the
        // cell C2 at e that borders neither of C1's directions at e → its corner opposite e.
        let mut tian: Vec<Vec<Tian>> = vec![Vec::new(); NUM_POINTS];
        for (ci, c) in cells.iter().enumerate() {
            for k in 0..4 {
                let from = c[k];
                let eye = c[(k + 2) % 4];
                if !grid.contains(eye) {
                    continue;
                }
                let c1_dirs = corner_cells[eye.index()]
                    .iter()
                    .find(|&&(cj, ..)| cj == ci)
                    .map(|&(_, _, d)| d)
                    .expect("eye is a corner of C1");
                let c2 = corner_cells[eye.index()]
                    .iter()
                    .find(|&&(_, _, d)| !d.contains(&c1_dirs[0]) && !d.contains(&c1_dirs[1]));
                if let Some(&(cj, kk, _)) = c2 {
                    let to = cells[cj][(kk + 2) % 4];
                    tian[from.index()].push(Tian { from, eye, to });
                }
            }
        }

        // 日: a → one orthogonal step to the leg b → across each cell having b
        // as a corner that does not border b's direction toward a → its corner opposite b.
        let mut ri: Vec<Vec<Ri>> = vec![Vec::new(); NUM_POINTS];
        for a in Point::all() {
            for &leg in &nb[a.index()] {
                let back = dir_of(leg, a);
                for &(cj, kk, d) in &corner_cells[leg.index()] {
                    if d.contains(&back) {
                        continue;
                    }
                    let to = cells[cj][(kk + 2) % 4];
                    if !ri[a.index()].iter().any(|r: &Ri| r.to == to && r.leg == leg) {
                        ri[a.index()].push(Ri { from: a, leg, to });
                    }
                }
            }
        }
        for t in &mut tian {
            t.sort_by_key(|m| (m.to, m.eye));
        }
        for r in &mut ri {
            r.sort_by_key(|m| (m.to, m.leg));
        }
        let mut tian_to: Vec<Vec<Tian>> = vec![Vec::new(); NUM_POINTS];
        for m in tian.iter().flatten() {
            tian_to[m.to.index()].push(*m);
        }
        let mut ri_to: Vec<Vec<Ri>> = vec![Vec::new(); NUM_POINTS];
        for m in ri.iter().flatten() {
            ri_to[m.to.index()].push(*m);
        }

        // Drawn diagonals: the palace's long diagonals and the rear palace's squares.
        let mut drawn: Vec<Vec<Point>> = vec![Vec::new(); NUM_POINTS];
        for s in Side::ALL {
            let r = |f, k| Point::rect(s, f, k);
            let pairs = [
                (r(4, 2), r(5, 3)),
                (r(5, 3), r(6, 4)),
                (r(6, 2), r(5, 3)),
                (r(5, 3), r(4, 4)),
                (r(4, 1), r(5, 2)),
                (r(4, 2), r(5, 1)),
                (r(5, 1), r(6, 2)),
                (r(5, 2), r(6, 1)),
            ];
            for (a, b) in pairs {
                add_unique(&mut drawn[a.index()], b);
                add_unique(&mut drawn[b.index()], a);
            }
        }
        for d in &mut drawn {
            d.sort();
        }

        // Slide rays, with shared stretches marked (see `Ray`).
        let mut rays_nested: Vec<Vec<Vec<Point>>> = vec![Vec::new(); NUM_POINTS];
        for line in &lines {
            for (i, &p) in line.iter().enumerate() {
                let fwd: Vec<Point> = line[i + 1..].to_vec();
                let back: Vec<Point> = line[..i].iter().rev().copied().collect();
                for r in [fwd, back] {
                    if !r.is_empty() && !rays_nested[p.index()].contains(&r) {
                        rays_nested[p.index()].push(r);
                    }
                }
            }
        }
        let mut ray_points = Vec::new();
        let mut rays: Vec<Vec<Ray>> = vec![Vec::new(); NUM_POINTS];
        for p in Point::all() {
            let rs = &mut rays_nested[p.index()];
            // Longest first, so that a ray contained in another is the one marked as shared.
            rs.sort_by_key(|r| std::cmp::Reverse(r.len()));
            let mut reached: Vec<Point> = Vec::new();
            for (j, r) in rs.iter().enumerate() {
                let shared = rs[..j]
                    .iter()
                    .map(|q| q.iter().zip(r).take_while(|(a, b)| a == b).count())
                    .max()
                    .unwrap_or(0);
                for &q in &r[shared..] {
                    assert!(!reached.contains(&q), "two different paths from {p} reach {q}");
                    reached.push(q);
                }
                let start = ray_points.len() as u16;
                ray_points.extend_from_slice(r);
                rays[p.index()].push(Ray {
                    start,
                    len: r.len() as u8,
                    new_from: shared as u8,
                });
            }
        }

        // Regions.
        let mut rect = [PointSet::EMPTY; 3];
        let mut palace = [PointSet::EMPTY; 3];
        let mut king_region = [PointSet::EMPTY; 3];
        let mut no_soldier = [PointSet::EMPTY; 3];
        let mut fans = PointSet::EMPTY;
        let mut forward = vec![[None; 3]; NUM_POINTS];
        for p in Point::all() {
            match p.kind() {
                PointKind::Rect { side, file, rank } => {
                    let s = side.index();
                    rect[s].insert(p);
                    if (4..=6).contains(&file) && (2..=4).contains(&rank) {
                        palace[s].insert(p);
                    }
                    if (4..=6).contains(&file) && rank <= 4 {
                        king_region[s].insert(p);
                    }
                    if rank <= 5 {
                        no_soldier[s].insert(p);
                        forward[p.index()][s] = Some(Point::rect(side, file, rank + 1));
                    }
                }
                PointKind::Mid { .. } | PointKind::Quarter { .. } => fans.insert(p),
                PointKind::Centre => {}
            }
        }

        let king_steps: Vec<PointSet> = Point::all()
            .map(|p| {
                let mut set = PointSet::EMPTY;
                for r in &ri_to[p.index()] {
                    set.insert(r.leg);
                }
                for t in &tian_to[p.index()] {
                    set.insert(t.eye);
                }
                set
            })
            .collect();
        let ray_sets: Vec<Vec<PointSet>> = rays
            .iter()
            .map(|rs| {
                rs.iter()
                    .map(|r| {
                        ray_points[r.start as usize..][..r.len as usize]
                            .iter()
                            .copied()
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let step_sources: Vec<PointSet> = Point::all()
            .map(|p| {
                let ri = ri_to[p.index()].iter().map(|r| r.from);
                ri.chain(tian_to[p.index()].iter().map(|t| t.from)).collect()
            })
            .collect();
        let adjacent: Vec<PointSet> = Point::all()
            .map(|p| {
                let i = p.index();
                nb[i].iter().chain(&diagonals[i]).chain(&drawn[i]).copied().collect()
            })
            .collect();
        let step_dests: Vec<[[PointSet; 3]; 4]> = Point::all()
            .map(|p| {
                let i = p.index();
                let in_set = |pts: &[&[Point]], region: Option<PointSet>| -> PointSet {
                    pts.iter()
                        .flat_map(|v| v.iter())
                        .copied()
                        .filter(|q| region.is_none_or(|r| r.contains(*q)))
                        .collect()
                };
                let per_side = |f: &dyn Fn(usize) -> PointSet| [f(0), f(1), f(2)];
                [
                    per_side(&|s| in_set(&[&nb[i]], Some(king_region[s]))),
                    per_side(&|s| in_set(&[&nb[i], &drawn[i]], Some(king_region[s]))),
                    per_side(&|s| in_set(&[&drawn[i]], Some(palace[s]))),
                    per_side(&|_| in_set(&[&nb[i], &diagonals[i]], None)),
                ]
            })
            .collect();
        let soldier_steps: Vec<[PointSet; 3]> = Point::all()
            .map(|from| {
                let per_side = |s: usize| -> PointSet {
                    let zone = no_soldier[s];
                    let in_zone = zone.contains(from);
                    let fwd = if in_zone { forward[from.index()][s] } else { None };
                    let mut set = PointSet::EMPTY;
                    for ray in &rays[from.index()] {
                        let q1 = ray_points[ray.start as usize];
                        if (in_zone && Some(q1) != fwd) || zone.contains(q1) {
                            continue;
                        }
                        if ray.new_from() == 0 {
                            set.insert(q1);
                        }
                    }
                    set
                };
                [per_side(0), per_side(1), per_side(2)]
            })
            .collect();
        let mut pivot_lines: PointSet = Side::ALL
            .into_iter()
            .flat_map(|s| (1..=6).map(move |r| Point::rect(s, 5, r)))
            .collect();
        pivot_lines.insert(Point::O);
        Board {
            king_steps,
            pivot_lines,
            ray_sets: Rows::from_nested(&ray_sets),
            step_sources,
            adjacent,
            step_dests,
            soldier_steps,
            lines,
            cells,
            edge_points,
            neighbours: Rows::from_nested(&nb),
            directions,
            grid,
            rays: Rows::from_nested(&rays),
            ray_points,
            diagonals: Rows::from_nested(&diagonals),
            drawn: Rows::from_nested(&drawn),
            tian: Rows::from_nested(&tian),
            tian_to: Rows::from_nested(&tian_to),
            ri: Rows::from_nested(&ri),
            ri_to: Rows::from_nested(&ri_to),
            rect,
            palace,
            king_region,
            no_soldier,
            fans,
            forward,
        }
    }
}

fn add_unique(v: &mut Vec<Point>, p: Point) {
    if !v.contains(&p) {
        v.push(p);
    }
}

/// The 39 lines of RULES §2.3.
fn build_lines() -> Vec<Vec<Point>> {
    let mut lines = Vec::with_capacity(39);
    for x in Side::ALL {
        let n = x.ccw_neighbour();
        // 1. Ranks.
        for r in 1..=6 {
            lines.push((1..=9).map(|f| Point::rect(x, f, r)).collect());
        }
        // 2. Files 6..9 over X's fan into N's files 4..1.
        for f in 6..=9u8 {
            let mut l: Vec<Point> = (1..=6).map(|r| Point::rect(x, f, r)).collect();
            if f <= 7 {
                l.push(Point::quarter(x, f));
            }
            l.push(Point::mid(x, f));
            l.extend((1..=6).rev().map(|r| Point::rect(n, 10 - f, r)));
            lines.push(l);
        }
        // 3. File 5 over the 顶弧 into N's file 5.
        let mut l: Vec<Point> = (1..=6).map(|r| Point::rect(x, 5, r)).collect();
        l.push(Point::mid(x, 5));
        l.extend((1..=6).rev().map(|r| Point::rect(n, 5, r)));
        lines.push(l);
    }
    // 4. Axis lines: A's file 5, through O, across X's fan to its 底弧.
    for x in Side::ALL {
        let a = x.third(x.ccw_neighbour());
        let mut l: Vec<Point> = (1..=6).map(|r| Point::rect(a, 5, r)).collect();
        l.push(Point::O);
        l.extend((5..=9).map(|f| Point::mid(x, f)));
        lines.push(l);
    }
    // 5. Side-axis lines.
    for x in Side::ALL {
        lines.push(vec![Point::quarter(x, 6), Point::quarter(x, 7)]);
    }
    lines
}

/// The 147 cells of RULES §2.4 and the two points lying inside cell edges per fan.
#[allow(clippy::type_complexity)]
fn build_cells() -> (Vec<[Point; 4]>, Vec<(Point, Point, Point, usize)>) {
    let mut cells = Vec::with_capacity(147);
    let mut edge_points = Vec::new();
    for x in Side::ALL {
        for r in 1..=5 {
            for f in 1..=8 {
                cells.push([
                    Point::rect(x, f, r),
                    Point::rect(x, f + 1, r),
                    Point::rect(x, f + 1, r + 1),
                    Point::rect(x, f, r + 1),
                ]);
            }
        }
    }
    for x in Side::ALL {
        let n = x.ccw_neighbour();
        let r = |f| Point::rect(x, f, 6);
        let m = |f| Point::mid(x, f);
        let q = |f| Point::quarter(x, f);
        let nr = |f| Point::rect(n, f, 6);
        cells.push([r(9), r(8), m(8), m(9)]);
        edge_points.push((q(7), r(7), m(7), cells.len()));
        cells.push([r(8), r(7), m(7), m(8)]);
        cells.push([r(7), r(6), q(6), q(7)]);
        cells.push([q(7), q(6), m(6), m(7)]);
        edge_points.push((q(6), r(6), m(6), cells.len()));
        cells.push([r(6), r(5), m(5), m(6)]);
        cells.push([m(9), m(8), nr(2), nr(1)]);
        cells.push([m(8), m(7), nr(3), nr(2)]);
        cells.push([m(7), m(6), nr(4), nr(3)]);
        cells.push([m(6), m(5), nr(5), nr(4)]);
    }
    (cells, edge_points)
}

/// The directions of `p`: its neighbours grouped (the cusp at `X56` merges
/// the lines to `XM5`, `O` and `LM5`), in counterclockwise order of their
/// tangent angle, starting from the smallest angle in [0°, 360°).
fn point_directions(p: Point, neighbours: &[Point]) -> Vec<Vec<Point>> {
    let mut groups: Vec<(f64, Vec<Point>)> = Vec::new();
    let cusp = match p.kind() {
        PointKind::Rect { side, file: 5, rank: 6 } => {
            Some([Point::mid(side, 5), Point::O, Point::mid(side.cw_neighbour(), 5)])
        }
        _ => None,
    };
    for &q in neighbours {
        if let Some(c) = cusp
            && c.contains(&q)
        {
            if let Some(g) = groups.iter_mut().find(|(_, g)| c.contains(&g[0])) {
                g.1.push(q);
                continue;
            }
            // The cusp's common tangent is the direction of the straight axis line to O.
            groups.push((tangent_angle(p, Point::O), vec![q]));
            continue;
        }
        groups.push((tangent_angle(p, q), vec![q]));
    }
    groups.sort_by(|a, b| a.0.total_cmp(&b.0));
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort();
            g
        })
        .collect()
}

/// The angle (degrees, [0, 360)) of the direction in which `p`'s neighbour
/// `q` lies (the cusp's common tangent at `X56`).
pub fn direction_angle(p: Point, q: Point) -> f64 {
    match p.kind() {
        PointKind::Rect { side, file: 5, rank: 6 }
            if [Point::mid(side, 5), Point::O, Point::mid(side.cw_neighbour(), 5)].contains(&q) =>
        {
            tangent_angle(p, Point::O)
        }
        _ => tangent_angle(p, q),
    }
}

/// The angle (degrees, [0, 360)) at which the line from `p` to its neighbour
/// `q` leaves `p`: along the chord for straight segments, along the tangent for arcs.
fn tangent_angle(p: Point, q: Point) -> f64 {
    let (px, py) = p.coords();
    let (qx, qy) = q.coords();
    let mut angle = (qy - py).atan2(qx - px);
    if let Some(centre) = arc_centre(p, q) {
        // On a circle, the tangent at p toward q deviates from the chord by half the arc angle.
        let (cx, cy) = centre;
        let a1 = (py - cy).atan2(px - cx);
        let a2 = (qy - cy).atan2(qx - cx);
        let mut d = a2 - a1;
        while d > std::f64::consts::PI {
            d -= 2.0 * std::f64::consts::PI;
        }
        while d < -std::f64::consts::PI {
            d += 2.0 * std::f64::consts::PI;
        }
        angle -= d / 2.0;
    }
    let mut deg = angle.to_degrees().rem_euclid(360.0);
    if (deg - 360.0).abs() < 1e-9 {
        deg = 0.0;
    }
    deg
}

/// The centre of the arc joining neighbours `p` and `q`, when the segment is part of an arc.
fn arc_centre(p: Point, q: Point) -> Option<(f64, f64)> {
    // Both points on arcs of the same fan with the same radius: arc segment.
    let fan_and_radius = |x: Point| -> Option<(Side, u8)> {
        match x.kind() {
            PointKind::Mid { side, file } | PointKind::Quarter { side, file } => Some((side, file)),
            _ => None,
        }
    };
    let (fp, fq) = (fan_and_radius(p), fan_and_radius(q));
    let fan_side = match (fp, fq) {
        (Some((s1, f1)), Some((s2, f2))) if s1 == s2 && f1 == f2 => s1,
        (Some((s, f)), None) | (None, Some((s, f))) => {
            // A fan point and a rectangle rank-6 point on the same arc.
            let other = if fp.is_some() { q } else { p };
            match other.kind() {
                PointKind::Rect { side, file, rank: 6 }
                    if (side == s && file == f) || (side == s.ccw_neighbour() && file == 10 - f) =>
                {
                    s
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    let h = 2.0 * 3f64.sqrt();
    Some(rotate(3f64.sqrt() * h, -h, 120.0 * fan_side.index() as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let b = board();
        assert_eq!(b.lines().len(), 39);
        assert_eq!(b.cells().len(), 147);
        assert_eq!(Point::all().filter(|&p| b.is_grid(p)).count(), 114);
        let tian: usize = Point::all().map(|p| b.tian_from(p).len()).sum();
        let ri: usize = Point::all().map(|p| b.ri_from(p).len()).sum();
        assert_eq!(tian, 456);
        assert_eq!(ri, 1056);
    }

    #[test]
    fn names_round_trip() {
        for p in Point::all() {
            assert_eq!(Point::parse(&p.to_string()), Some(p));
        }
        assert_eq!(Point::parse("W52"), Some(Point::from_index(13)));
        assert_eq!(Point::parse("O"), Some(Point::O));
        for bad in ["", "W", "W5", "W50", "W57", "WM4", "WQ5", "X52", "W522", "o"] {
            assert_eq!(Point::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn w56_neighbours_and_directions() {
        let b = board();
        let names = |ps: &[Point]| ps.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let w56 = Point::parse("W56").unwrap();
        assert_eq!(names(b.neighbours(w56)), ["W55", "W46", "W66", "WM5", "YM5", "O"]);
        assert_eq!(b.neighbours(Point::O).len(), 6);
        assert_eq!(b.directions(w56).len(), 4);
        assert!(b.is_grid(w56));
    }

    #[test]
    fn rule_examples_tian_and_ri() {
        let b = board();
        let p = |s| Point::parse(s).unwrap();
        let has_tian = |a, e, t| {
            b.tian_from(p(a)).contains(&Tian {
                from: p(a),
                eye: p(e),
                to: p(t),
            })
        };
        assert!(has_tian("W54", "W65", "W76"));
        assert!(has_tian("W76", "WM8", "B16"));
        assert!(has_tian("W36", "YM8", "Y96"));
        assert!(has_tian("WM6", "W56", "W45"));
        let ri = |a, l| {
            let mut v: Vec<String> = b
                .ri_from(p(a))
                .iter()
                .filter(|r| r.leg == p(l))
                .map(|r| r.to.to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(ri("WQ7", "WM7"), ["B26", "B46"]);
        assert_eq!(ri("W55", "W56"), ["WM6", "YM6"]);
        assert_eq!(ri("WM5", "W56"), ["W45", "W65"]);
        assert_eq!(ri("W76", "WQ7"), ["WM6"]);
    }

    #[test]
    fn no_line_bends_at_o() {
        // A chariot on W's file 5 passing O continues into B's fan, never onto B's or Y's file 5.
        let b = board();
        let w51 = Point::parse("W51").unwrap();
        let through_o: Vec<String> = b
            .rays(w51)
            .iter()
            .map(|r| b.ray_points(r))
            .filter(|r| r.contains(&Point::O))
            .map(|r| r.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(through_o, ["W52 W53 W54 W55 W56 O BM5 BM6 BM7 BM8 BM9"]);
    }
}
