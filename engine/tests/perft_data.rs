//! Perft as data (RULES §7): every line of `tests/perft.txt` is
//! `position text ; depth ; nodes`, checked with `engine::perft`.

use std::path::PathBuf;

use engine::{Direction, Position, format_position, parse_position, perft};

struct Case {
    line: usize,
    text: String,
    depth: u32,
    nodes: u64,
}

fn cases() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/perft.txt");
    let data = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, raw) in data.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The flags field may itself hold ';' (e.g. `R:BW;S:WY`): split on the last two.
        let mut fields = line.rsplitn(3, ';').map(str::trim);
        let (Some(nodes), Some(depth), Some(text)) = (fields.next(), fields.next(), fields.next()) else {
            panic!("perft.txt:{}: expected `position ; depth ; nodes`", i + 1);
        };
        out.push(Case {
            line: i + 1,
            text: text.to_owned(),
            depth: depth
                .parse()
                .unwrap_or_else(|e| panic!("perft.txt:{}: depth {depth:?}: {e}", i + 1)),
            nodes: nodes
                .parse()
                .unwrap_or_else(|e| panic!("perft.txt:{}: nodes {nodes:?}: {e}", i + 1)),
        });
    }
    out
}

#[test]
fn perft_file() {
    let cases = cases();
    assert!(cases.len() >= 30, "perft.txt has only {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let pos = parse_position(&c.text).unwrap_or_else(|e| panic!("perft.txt:{}: {e}", c.line));
        let got = perft(&pos, c.depth);
        if got != c.nodes {
            failures.push(format!(
                "perft.txt:{}: depth {}: expected {}, got {got}\n  {}",
                c.line, c.depth, c.nodes, c.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The file covers the initial position in both directions.
#[test]
fn perft_file_covers_the_initial_position() {
    let cases = cases();
    for dir in [Direction::Ccw, Direction::Cw] {
        let start = format_position(&Position::initial(dir));
        let depths: Vec<u32> = cases.iter().filter(|c| c.text == start).map(|c| c.depth).collect();
        assert_eq!(depths, [1, 2, 3], "initial position {dir}");
    }
}
