//! Perft as data for 三国演弈棋 (RULES-YANYI §10.4): every line of
//! `tests/yanyi_perft.txt` is `position text ; depth ; nodes`, checked with
//! `engine::yanyi::perft`.

use std::path::PathBuf;

use engine::yanyi::{Position, format_position, parse_position, perft};

struct Case {
    line: usize,
    text: String,
    depth: u32,
    nodes: Option<u64>,
}

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/yanyi_perft.txt")
}

fn cases() -> Vec<Case> {
    let data = std::fs::read_to_string(path()).unwrap_or_else(|e| panic!("reading yanyi_perft.txt: {e}"));
    let mut out = Vec::new();
    for (i, raw) in data.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(';').map(str::trim).collect();
        let [text, depth, nodes] = f[..] else {
            panic!("yanyi_perft.txt:{}: expected `position ; depth ; nodes`", i + 1);
        };
        out.push(Case {
            line: i + 1,
            text: text.to_owned(),
            depth: depth
                .parse()
                .unwrap_or_else(|e| panic!("yanyi_perft.txt:{}: depth: {e}", i + 1)),
            nodes: (nodes != "?").then(|| {
                nodes
                    .parse()
                    .unwrap_or_else(|e| panic!("yanyi_perft.txt:{}: nodes: {e}", i + 1))
            }),
        });
    }
    out
}

#[test]
fn yanyi_perft_file() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let pos = parse_position(&c.text).unwrap_or_else(|e| panic!("yanyi_perft.txt:{}: {e}", c.line));
        assert_eq!(
            format_position(&pos),
            c.text,
            "yanyi_perft.txt:{}: positions are canonical",
            c.line
        );
        let got = perft(&pos, c.depth);
        match c.nodes {
            Some(n) if n == got => {}
            n => failures.push(format!(
                "yanyi_perft.txt:{}: depth {}: expected {n:?}, got {got}\n  {}",
                c.line, c.depth, c.text
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The §11 numbers of the initial position are in the file.
#[test]
fn yanyi_perft_file_covers_the_initial_position() {
    let start = format_position(&Position::initial());
    let rows: Vec<(u32, Option<u64>)> = cases()
        .iter()
        .filter(|c| c.text == start)
        .map(|c| (c.depth, c.nodes))
        .collect();
    assert_eq!(
        rows,
        [
            (1, Some(48)),
            (2, Some(2_304)),
            (3, Some(110_208)),
            (4, Some(7_475_436))
        ]
    );
}

/// Prints the file with `?` counts filled in and positions made canonical:
/// `cargo test -p engine --test yanyi_perft_data regenerate -- --ignored --nocapture`.
#[test]
#[ignore]
fn regenerate() {
    let data = std::fs::read_to_string(path()).unwrap();
    for raw in data.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            println!("{raw}");
            continue;
        }
        let f: Vec<&str> = line.split(';').map(str::trim).collect();
        let pos = parse_position(f[0]).unwrap_or_else(|e| panic!("{}: {e}", f[0]));
        let d: u32 = f[1].parse().unwrap();
        println!("{} ; {d} ; {}", format_position(&pos), perft(&pos, d));
    }
}
