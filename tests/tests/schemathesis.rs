//! schemathesis (PyPI, pinned in `.ci/setup`) against a running server's own
//! generated OpenAPI document: generated and mutated requests on every
//! operation, each answer checked for a server error, a status or a content
//! type the document does not list, or a body that does not match its
//! schema. Any finding fails the test, with schemathesis's report.
//!
//! The server runs with the product's clock minimums (the document's
//! bounds) on a fresh Postgres database; the per-address rate limits are off
//! so that the run reaches past `POST /api/sessions` (a 429 is documented
//! and would end most operations early). Authenticated routes get an
//! account's token (a guest may not organize tournaments); the two
//! operations that end a session (log out, revoke) are left out, as they
//! would end that token for the rest of the run.

use std::process::Command;
use std::time::Duration;

use sanguo_tests::harness::{Api, TestDb, TestServer};

/// The schemathesis that `.ci/setup` installs.
const SCHEMATHESIS: &str = "schemathesis";

/// The checks run on every answer.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_in_the_served_openapi() {
    let version = Command::new(SCHEMATHESIS).arg("--version").output();
    let version = match version {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        other => panic!(
            "schemathesis is needed for this test and was not found or failed ({other:?}): \
             run `bash .ci/setup` (it installs the pinned version with pip)"
        ),
    };
    eprintln!("{version}");
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.clock_minimums = server::http::ClockMinimums::default();
    let server = TestServer::start(config);
    let api = Api::new(server.base());
    let account = api.account().await;
    let url = format!("{}/api/openapi.json", server.base());
    // Its reports and cache go to a directory of its own, removed after.
    let report = std::env::temp_dir().join(format!("sanguo-schemathesis-{}", std::process::id()));
    std::fs::create_dir_all(&report).unwrap();
    let cwd = report.clone();
    let args: Vec<String> = vec![
        "run".into(),
        url,
        "--checks".into(),
        CHECKS.into(),
        "--max-examples".into(),
        "12".into(),
        "--seed".into(),
        "18".into(),
        "--workers".into(),
        "2".into(),
        "--max-time".into(),
        "150".into(),
        "--request-timeout".into(),
        "20".into(),
        "--header".into(),
        format!("Authorization: Bearer {}", account.token),
        // Logging out or revoking would end the token every other operation uses.
        "--exclude-path-regex".into(),
        r"^/api/(logout|sessions/\{id\})$".into(),
        "--suppress-health-check".into(),
        "all".into(),
        "--report-dir".into(),
        report.display().to_string(),
    ];
    let run = || {
        let (args, cwd) = (args.clone(), cwd.clone());
        async move {
            tokio::time::timeout(
                Duration::from_secs(300),
                tokio::task::spawn_blocking(move || Command::new(SCHEMATHESIS).args(&args).current_dir(&cwd).output()),
            )
            .await
            .expect("schemathesis ends within 5 minutes")
            .unwrap()
            .expect("schemathesis runs")
        }
    };
    let mut out = run().await;
    if !out.status.success() && tool_crashed_alone(&String::from_utf8_lossy(&out.stdout)) {
        // Seen once in CI: CPython's `ast.parse` failing inside hypothesis
        // ("SystemError: AST constructor recursion depth mismatch") while it
        // named a lambda, with every check passed. A crash of the tool is
        // not a finding: one more run decides (a problem of the spec or the
        // server comes back in it).
        eprintln!(
            "schemathesis crashed on its own; once more:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        out = run().await;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The summary, for the log of a passing run too.
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "schemathesis found problems (exit {:?}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    // It really ran: operations were tested and passed.
    assert!(stdout.contains("passed"), "no operation tested:\n{stdout}\n{stderr}");
    server.stop().await;
    let _ = std::fs::remove_dir_all(report);
}

/// Whether a failed schemathesis run reported nothing but its own crashes:
/// no failed check, and every error a Python `Runtime Error` raised inside
/// the installed tool (its traceback in `site-packages`).
fn tool_crashed_alone(stdout: &str) -> bool {
    let errors = stdout.matches("Runtime Error").count();
    !stdout.contains("FAILURES")
        && errors > 0
        && stdout.matches("Traceback (most recent call last)").count() >= errors
        && stdout.contains("site-packages/")
}
