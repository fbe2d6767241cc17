//! The crash harness, short: a few SIGKILLs of a server process under load,
//! then every stored game is checked against every acknowledged move (the
//! full run is `cargo run --release -p sanguo-tests --bin crashtest -- --kills 50`).

use std::process::Command;

#[test]
fn a_killed_server_loses_no_acknowledged_move_and_charges_no_downtime() {
    let out = Command::new(env!("CARGO_BIN_EXE_crashtest"))
        .args([
            "--server",
            "self",
            "--kills",
            "3",
            "--games",
            "4",
            "--think-ms",
            "50",
            "--up-ms",
            "800,1500",
            "--down-ms",
            "300",
            "--settle-ms",
            "1500",
            "--seed",
            "7",
        ])
        .output()
        .expect("run crashtest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "crashtest failed:\n{stdout}\n{stderr}");
    let field = |name: &str| -> u64 {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{stdout}"));
        line[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    assert_eq!(field("violations"), 0, "{stdout}");
    assert_eq!(field("kills"), 3);
    assert!(
        field("moves_acknowledged") > 0,
        "the games must have been played:\n{stdout}"
    );
    assert!(
        field("restored_events") > 0,
        "clients must have seen games restored:\n{stdout}"
    );
}
