//! The web client's browser tests (`web-client/tests/*.test.mjs`: playwright-core driving Debian's
//! Chromium against the real server) as part of `cargo test`, run against this package's own
//! `sanguo` binary. Needs Node.js and `/usr/bin/chromium` (or `CHROMIUM_PATH`): `bash .ci/setup`
//! installs what is missing. `SANGUO_SKIP_BROWSER=1` skips them, loudly, for quick local runs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn web_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("web-client")
}

#[test]
fn web_client_in_chromium() {
    if std::env::var_os("SANGUO_SKIP_BROWSER").is_some_and(|v| v == "1") {
        eprintln!("browser tests SKIPPED: SANGUO_SKIP_BROWSER=1");
        return;
    }
    let chromium = std::env::var("CHROMIUM_PATH").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "no Chromium at {chromium}: run `bash .ci/setup` (apt-get install -y chromium) or set CHROMIUM_PATH"
    );
    let dir = web_client();
    if !dir.join("node_modules").join("playwright-core").exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("npm not found: install Node.js (20 or later)");
        assert!(status.success(), "npm ci in web-client failed");
    }
    let out = Command::new("npm")
        .arg("test")
        .current_dir(&dir)
        .env("SANGUO_BIN", env!("CARGO_BIN_EXE_sanguo"))
        .env("SANGUO_SKIP_BUILD", "1")
        // The servers the browser tests start take every client from 127.0.0.1:
        // the per-address limits (tested in tests/tests/abuse.rs) are off there.
        .env("SANGUO_SESSIONS_PER_MIN", "0")
        .env("SANGUO_ACCOUNTS_PER_MIN", "0")
        .env("SANGUO_LOGINS_PER_MIN", "0")
        .env("SANGUO_GAMES_PER_MIN", "0")
        .env("SANGUO_MAX_SOCKETS_PER_ADDR", "100000")
        .env("SANGUO_MAX_SILENT_SOCKETS_PER_ADDR", "100000")
        .env("SANGUO_MAX_BOT_GAMES_PER_ADDR", "100000")
        .env("CHROMIUM_PATH", &chromium)
        .output()
        .expect("npm not found: install Node.js (20 or later)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser tests failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
