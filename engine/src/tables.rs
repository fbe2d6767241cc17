//! The board's tables as text, in the formats of `shared/board/` (its README).
//!
//! These are what `sanguo tables DIR` writes and what the reference test
//! compares; they are derived from [`crate::board()`], never stored.

use std::fmt::Write;

use crate::board::{Point, board};

/// The six table files: `(file name, contents)`.
pub fn all() -> [(&'static str, String); 6] {
    [
        ("points.tsv", points()),
        ("lines.txt", lines()),
        ("cells.txt", cells()),
        ("diagonals.txt", diagonals()),
        ("tian.txt", tian()),
        ("ri.txt", ri()),
    ]
}

/// `index<TAB>name<TAB>x<TAB>y`, one point per line, coordinates to 9 decimals.
pub fn points() -> String {
    let mut s = String::new();
    for p in Point::all() {
        let (x, y) = p.coords();
        // Avoid printing "-0.000000000".
        let fix = |v: f64| if v.abs() < 5e-10 { 0.0 } else { v };
        writeln!(s, "{}\t{}\t{:.9}\t{:.9}", p.index(), p, fix(x), fix(y)).unwrap();
    }
    s
}

/// The 39 lines, point names along each, in the order of RULES §2.3.
pub fn lines() -> String {
    board().lines().iter().map(|l| join(l) + "\n").collect()
}

/// The 147 cells: corners counterclockwise by real coordinates, starting at
/// the lowest-index corner; lines sorted by corner indices.
pub fn cells() -> String {
    let mut cells: Vec<[Point; 4]> = board()
        .cells()
        .iter()
        .map(|c| {
            let mut c = *c;
            if signed_area(&c) < 0.0 {
                c.reverse();
            }
            let lowest = (0..4).min_by_key(|&i| c[i]).unwrap();
            c.rotate_left(lowest);
            c
        })
        .collect();
    cells.sort();
    cells.iter().map(|c| join(c) + "\n").collect()
}

/// The 294 diagonal pairs `a b` with index(a) < index(b), sorted.
pub fn diagonals() -> String {
    let mut s = String::new();
    for a in Point::all() {
        for &b in board().diagonals(a) {
            if a < b {
                writeln!(s, "{a} {b}").unwrap();
            }
        }
    }
    s
}

/// The 田 moves `from eye to`, sorted by index.
pub fn tian() -> String {
    let mut v: Vec<[Point; 3]> = Point::all()
        .flat_map(|p| board().tian_from(p).iter().map(|t| [t.from, t.eye, t.to]))
        .collect();
    v.sort();
    v.iter().map(|t| join(t) + "\n").collect()
}

/// The 日 moves `from leg to`, sorted by index.
pub fn ri() -> String {
    let mut v: Vec<[Point; 3]> = Point::all()
        .flat_map(|p| board().ri_from(p).iter().map(|r| [r.from, r.leg, r.to]))
        .collect();
    v.sort();
    v.iter().map(|t| join(t) + "\n").collect()
}

/// The grid points, one name per line, by index.
pub fn grid() -> String {
    Point::all()
        .filter(|&p| board().is_grid(p))
        .map(|p| format!("{p}\n"))
        .collect()
}

fn join(ps: &[Point]) -> String {
    ps.iter().map(Point::to_string).collect::<Vec<_>>().join(" ")
}

fn signed_area(c: &[Point; 4]) -> f64 {
    (0..4)
        .map(|i| {
            let (x1, y1) = c[i].coords();
            let (x2, y2) = c[(i + 1) % 4].coords();
            x1 * y2 - x2 * y1
        })
        .sum()
}
