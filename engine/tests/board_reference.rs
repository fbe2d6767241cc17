//! The computed board equals the independent reference tables in `shared/board/`
//! (RULES §2): coordinates to 1e-6; lines, cells, diagonals, 田, 日 and grid points as sets.

use std::collections::BTreeSet;
use std::path::PathBuf;

use engine::{Point, tables};

fn reference(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/board")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Non-empty, non-comment lines.
fn rows(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn as_set(text: &str) -> BTreeSet<String> {
    rows(text).into_iter().collect()
}

/// A cell in a canonical form: the lexicographically least rotation of either orientation.
fn canonical_cell(line: &str) -> Vec<String> {
    let c: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    assert_eq!(c.len(), 4, "{line}");
    let mut best: Option<Vec<String>> = None;
    for mut v in [c.clone(), c.iter().rev().cloned().collect()] {
        for _ in 0..4 {
            v.rotate_left(1);
            if best.as_ref().is_none_or(|b| v < *b) {
                best = Some(v.clone());
            }
        }
    }
    best.unwrap()
}

fn assert_same(name: &str, ours: BTreeSet<String>, theirs: BTreeSet<String>) {
    let missing: Vec<_> = theirs.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&theirs).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{name}: missing {missing:?}, extra {extra:?}"
    );
}

#[test]
fn points_match_to_1e_6() {
    let theirs = rows(&reference("points.tsv"));
    let ours = rows(&tables::points());
    assert_eq!(theirs.len(), 184);
    assert_eq!(ours.len(), 184);
    for (o, t) in ours.iter().zip(&theirs) {
        let o: Vec<&str> = o.split('\t').collect();
        let t: Vec<&str> = t.split('\t').collect();
        assert_eq!(o[..2], t[..2], "index and name");
        for k in 2..4 {
            let a: f64 = o[k].parse().unwrap();
            let b: f64 = t[k].parse().unwrap();
            assert!((a - b).abs() < 1e-6, "{} coordinate {k}: {a} vs {b}", o[1]);
        }
        assert_eq!(Point::parse(o[1]).unwrap().index().to_string(), o[0]);
    }
}

#[test]
fn lines_match() {
    // Lines as sets of point sequences; a line read backwards is the same line.
    let norm = |text: &str| -> BTreeSet<String> {
        rows(text)
            .into_iter()
            .map(|l| {
                let fwd: Vec<&str> = l.split_whitespace().collect();
                let back: Vec<&str> = fwd.iter().rev().copied().collect();
                fwd.join(" ").min(back.join(" "))
            })
            .collect()
    };
    let ours = norm(&tables::lines());
    assert_eq!(ours.len(), 39);
    assert_same("lines", ours, norm(&reference("lines.txt")));
    // Our text is also in the reference's order, line for line.
    assert_eq!(rows(&tables::lines()), rows(&reference("lines.txt")));
}

#[test]
fn cells_match() {
    let norm = |text: &str| -> BTreeSet<String> { rows(text).iter().map(|l| canonical_cell(l).join(" ")).collect() };
    let ours = norm(&tables::cells());
    assert_eq!(ours.len(), 147);
    assert_same("cells", ours, norm(&reference("cells.txt")));
    assert_eq!(
        rows(&tables::cells()),
        rows(&reference("cells.txt")),
        "same text, same order"
    );
}

#[test]
fn diagonals_match() {
    let ours = as_set(&tables::diagonals());
    assert_eq!(ours.len(), 294);
    assert_same("diagonals", ours, as_set(&reference("diagonals.txt")));
}

#[test]
fn tian_moves_match() {
    let ours = as_set(&tables::tian());
    assert_eq!(ours.len(), 456);
    assert_same("tian", ours, as_set(&reference("tian.txt")));
}

#[test]
fn ri_moves_match() {
    let ours = as_set(&tables::ri());
    assert_eq!(ours.len(), 1056);
    assert_same("ri", ours, as_set(&reference("ri.txt")));
}

#[test]
fn grid_points_match() {
    let ours = as_set(&tables::grid());
    assert_eq!(ours.len(), 114);
    assert_same("grid", ours, as_set(&reference("grid.txt")));
}

#[test]
fn directions_match() {
    // `NAME: a@deg b@deg {c,d,e}@deg` in counterclockwise order of tangent angle.
    for line in rows(&reference("directions.txt")) {
        let (name, rest) = line.split_once(':').unwrap();
        let p = Point::parse(name).unwrap();
        let theirs: Vec<(Vec<String>, f64)> = rest
            .split_whitespace()
            .map(|d| {
                let (pts, deg) = d.rsplit_once('@').unwrap();
                let mut pts: Vec<String> = pts
                    .trim_matches(|c| c == '{' || c == '}')
                    .split(',')
                    .map(str::to_owned)
                    .collect();
                pts.sort();
                (pts, deg.parse().unwrap())
            })
            .collect();
        let mut ours: Vec<(Vec<String>, f64)> = engine::board()
            .directions(p)
            .iter()
            .map(|d| {
                let mut pts: Vec<String> = d.iter().map(Point::to_string).collect();
                pts.sort();
                (pts, engine::board::direction_angle(p, d[0]))
            })
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{name}: {ours:?} vs {theirs:?}");
        // The order is cyclic: start where the reference starts.
        if let Some(k) = ours.iter().position(|(p, _)| *p == theirs[0].0) {
            ours.rotate_left(k);
        }
        for ((op, oa), (tp, ta)) in ours.iter().zip(&theirs) {
            assert_eq!(op, tp, "{name}: {ours:?} vs {theirs:?}");
            assert!(
                (oa - ta).abs() < 0.05 || (oa - ta).abs() > 359.95,
                "{name}: {oa} vs {ta}"
            );
        }
    }
}
