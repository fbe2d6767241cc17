//! The `sanguo` engine commands, checked from outside as other tools use them.

use std::path::PathBuf;
use std::process::{Command, Output};

fn sanguo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sanguo"))
        .args(args)
        .output()
        .expect("run sanguo")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

const START: &str = "WR@W12,WN@W22,WE@W32,WA@W42,WK@W52,WA@W62,WE@W72,WN@W82,WR@W92,WZ@W73,WC@W24,WC@W84,WP@W15,WP@W35,WP@W55,WP@W75,WP@W95,WF@W51,BF@B51,BR@B12,BN@B22,BE@B32,BA@B42,BK@B52,BA@B62,BE@B72,BN@B82,BR@B92,BZ@B73,BC@B24,BC@B84,BP@B15,BP@B35,BP@B55,BP@B75,BP@B95,YF@Y51,YR@Y12,YN@Y22,YE@Y32,YA@Y42,YK@Y52,YA@Y62,YE@Y72,YN@Y82,YR@Y92,YZ@Y73,YC@Y24,YC@Y84,YP@Y15,YP@Y35,YP@Y55,YP@Y75,YP@Y95 W WBY - ccw";

#[test]
fn moves_of_the_start_position() {
    let o = sanguo(&["moves"]);
    assert!(o.status.success());
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 53);
    assert_eq!(lines[0], "W51-W41", "canonical order: by from index, then to index");
    // The same with the position given explicitly, in any token order.
    let o2 = sanguo(&["moves", "--position", START]);
    assert_eq!(stdout(&o2), stdout(&o));
}

#[test]
fn play_prints_the_position_and_refuses_illegal_moves() {
    let o = sanguo(&["play", "W55-W56", "B55-B56"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("WP@W56") && text.contains("BP@B56"), "{text}");
    assert!(text.trim_end().ends_with(" Y WBY - ccw"), "{text}");

    let o = sanguo(&["play", "W55-W56", "W56-W57"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("W56-W57"), "{}", stderr(&o));

    let o = sanguo(&["play", "W12-W16"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("W12-W16") && err.contains("blocked: a piece on W15"),
        "{err}"
    );

    let o = sanguo(&["play", "B55-B56"]);
    assert!(stderr(&o).contains("not your piece"), "{}", stderr(&o));
}

#[test]
fn perft_total_is_the_last_line() {
    let o = sanguo(&["perft", "2"]);
    assert_eq!(stdout(&o).trim(), "2758");
    let o = sanguo(&[
        "perft",
        "--position",
        &START.replace("WBY - ccw", "WYB - cw"),
        "2",
        "--divide",
    ]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 54);
    assert_eq!(*lines.last().unwrap(), "2759");
    let sum: u64 = lines[..53]
        .iter()
        .map(|l| l.rsplit_once(": ").unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 2759);
}

#[test]
fn bad_position_text_names_the_token() {
    let o = sanguo(&["moves", "--position", &START.replace("BK@B52", "BK@B59")]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("BK@B59"), "{}", stderr(&o));
}

#[test]
fn tables_equal_the_reference_files() {
    let dir = std::env::temp_dir().join(format!("sanguo-tables-{}", std::process::id()));
    let o = sanguo(&["tables", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/board");
    for name in [
        "points.tsv",
        "lines.txt",
        "cells.txt",
        "diagonals.txt",
        "tian.txt",
        "ri.txt",
    ] {
        let ours = std::fs::read_to_string(dir.join(name)).unwrap();
        let theirs = std::fs::read_to_string(reference.join(name)).unwrap();
        assert_eq!(ours, theirs, "{name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn yanyi_moves_of_the_start_position() {
    let o = sanguo(&["moves", "--variant", "yanyi"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 48);
    assert_eq!(lines[0], "n5-m5", "canonical order: by from index, then to index");
    assert_eq!(lines[47], "q13-p13");
}

#[test]
fn yanyi_play_prints_the_position_and_refuses_illegal_moves() {
    let o = sanguo(&["play", "--variant", "yanyi", "q12-o13", "e14-e13"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("GN@o13") && text.contains("BP@e13"), "{text}");
    assert!(text.trim_end().ends_with(" R - R"), "{text}");

    let o = sanguo(&["play", "--variant", "yanyi", "q12-o13", "q13-o13"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("q13-o13") && err.contains("not your piece"), "{err}");

    let o = sanguo(&["play", "--variant", "yanyi", "o12-l12"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("o12-l12") && err.contains("first move"), "{err}");

    let o = sanguo(&["play", "--variant", "yanyi", "o12-o5"]);
    let err = stderr(&o);
    assert!(
        err.contains("o12-o5") && err.contains("blocked: a piece on o6"),
        "{err}"
    );
}

#[test]
fn yanyi_perft_totals() {
    let o = sanguo(&["perft", "--variant", "yanyi", "3"]);
    assert_eq!(stdout(&o).trim(), "110208", "{}", stderr(&o));
    let o = sanguo(&["perft", "--variant", "yanyi", "2", "--divide"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 49);
    assert_eq!(*lines.last().unwrap(), "2304");
    // Scenario 1 of RULES-YANYI §11, given as text.
    let pos = "RK@h1,RP@i4,GP@n9,GK@q9,RC@i10,BP@i14,BA@h17,BK@i17,BA@j17,YR@d7,YK@a9,YC@c9,YR@d9,YR@d11 B - -";
    let o = sanguo(&["perft", "--variant", "yanyi", "--position", pos, "1"]);
    assert_eq!(stdout(&o).trim(), "4", "{}", stderr(&o));
}

// --- 三国暗棋 (--variant anqi, RULES-ANQI.md) -------------------------------------

/// The initial full position of the sample layout (RULES-ANQI §10.4, §11.3).
const ANQI_START: &str =
    "*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1*r*A*C*K/*N*R*P*c1*p*A*R*n 1 --- 123 -/-/- 1 split1";

#[test]
fn anqi_moves_of_the_initial_position() {
    let o = sanguo(&["moves", "--variant", "anqi"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 32, "32 flips");
    assert_eq!(lines[0], "+a1");
    assert_eq!(lines[31], "+i5");
    let o2 = sanguo(&["moves", "--variant", "anqi", "--position", ANQI_START]);
    assert_eq!(stdout(&o2), stdout(&o));
}

#[test]
fn anqi_play_prints_the_full_position_and_refuses_illegal_actions() {
    // The §11.3 example line; `play` prints the full form (what --position takes).
    let o = sanguo(&["play", "--variant", "anqi", "+g2", "+i2", "+f2", "+h2", "i2xh2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim_end(),
        "*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1rAK1/*N*R*P*c1*p*A*R*n 3 213 123 -/C/- 6 split1"
    );
    let after = stdout(&o).trim_end().to_owned();
    let o = sanguo(&["moves", "--variant", "anqi", "--position", &after]);
    assert_eq!(stdout(&o).lines().count(), 31);
    assert!(stdout(&o).contains("f2xg2\n"));

    let o = sanguo(&[
        "play",
        "--variant",
        "anqi",
        "+g2",
        "+i2",
        "+f2",
        "+h2",
        "i2xh2",
        "f2xf1",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("f2xf1") && err.contains("only face-up pieces can be captured"),
        "{err}"
    );
    let o = sanguo(&["play", "--variant", "anqi", "+g2", "g2-f3"]);
    assert!(
        stderr(&o).contains("a seat without a team can only flip"),
        "{}",
        stderr(&o)
    );
    let o = sanguo(&["play", "--variant", "anqi", "+g2=A"]);
    assert!(stderr(&o).contains("may not name"), "{}", stderr(&o));
}

#[test]
fn anqi_perft_and_chance_totals() {
    let o = sanguo(&["perft", "--variant", "anqi", "4"]);
    assert_eq!(stdout(&o).trim(), "914746");
    let o = sanguo(&["perft", "--variant", "anqi", "2", "--divide"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 33);
    assert_eq!(lines[0], "+a1: 31");
    assert_eq!(*lines.last().unwrap(), "992");
    let o = sanguo(&["perft", "--variant", "anqi", "2", "--chance"]);
    assert_eq!(stdout(&o).trim(), "192448");
    let assigned = ANQI_START.replace(" --- ", " 123 ");
    let o = sanguo(&["perft", "--variant", "anqi", "--position", &assigned, "3"]);
    assert_eq!(stdout(&o).trim(), "30999");
}

#[test]
fn anqi_bad_position_text_names_the_rule() {
    let o = sanguo(&[
        "moves",
        "--variant",
        "anqi",
        "--position",
        &ANQI_START.replace("*n 1", "*R 1"),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("(V4)"), "{}", stderr(&o));
}
