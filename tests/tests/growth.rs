//! Bounded growth (issue 18): what only grew is swept. Expired sessions are
//! deleted, and guests that nobody can use or see any more (no session, no
//! game, no trace) after `guest_max_age`; guests with a game and accounts
//! stay. Short intervals here; the defaults are in the README.

use std::time::{Duration, Instant};

use protocol::CreateGame;
use sanguo_tests::harness::{Api, TestDb, TestServer};
use sqlx::{Connection, PgConnection, Row};

async fn count(db: &TestDb, sql: &str) -> i64 {
    let mut c = PgConnection::connect(&db.url).await.unwrap();
    let n: i64 = sqlx::query(sql).fetch_one(&mut c).await.unwrap().get(0);
    let _ = c.close().await;
    n
}

/// Waits (up to 15 s) until `sql` counts `want`.
async fn until_count(db: &TestDb, sql: &str, want: i64) {
    let start = Instant::now();
    loop {
        let n = count(db, sql).await;
        if n == want {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "{sql}: {n}, not {want}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_sessions_and_abandoned_guests_are_swept() {
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.session_ttl = Duration::from_secs(2);
    config.guest_max_age = Duration::from_secs(2);
    config.sweep_interval = Duration::from_millis(200);
    let server = TestServer::start(config);
    let api = Api::new(server.base());
    let idle = api.guest().await;
    let player = api.guest().await;
    let game = api.create_game(&player.token, &CreateGame::default()).await;
    let account = api.account().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sessions").await, 3);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM players").await, 3);

    // Past the time to live: every session row is gone (the tokens were refused already).
    until_count(&db, "SELECT COUNT(*) FROM sessions", 0).await;
    // The idle guest (no session left, nothing made) goes; the guest with a
    // game and the account stay.
    until_count(&db, "SELECT COUNT(*) FROM players", 2).await;
    let left = |id: &str| format!("SELECT COUNT(*) FROM players WHERE id = '{id}'");
    assert_eq!(count(&db, &left(&idle.player)).await, 0);
    assert_eq!(count(&db, &left(&player.player)).await, 1);
    assert_eq!(count(&db, &left(&account.player)).await, 1);
    // The game is intact.
    assert_eq!(api.state(&game.id).await.id, game.id);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn young_guests_and_live_sessions_are_kept() {
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.sweep_interval = Duration::from_millis(100);
    config.guest_max_age = Duration::from_secs(3600);
    let server = TestServer::start(config);
    let api = Api::new(server.base());
    let g = api.guest().await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sessions").await, 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM players").await, 1);
    let me: serde_json::Value = api.get_as("/api/me", &g.token).await.unwrap();
    assert_eq!(me["player"], g.player.as_str());
    server.stop().await;
}

/// Open files are kept in reserve: game sockets stop at the open-file limit
/// less `fd_reserve` whatever `max_sockets` says, refused with 503 before the
/// upgrade, and health checks still answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_sockets_leave_open_files_in_reserve() {
    let limit = server::limits::fd_limit().expect("an open-file limit") as usize;
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.max_sockets = 1_000_000;
    config.fd_reserve = limit - 2;
    let server = TestServer::start(config);
    let api = Api::new(server.base());
    let s = api.guest().await;
    let game = api.create_game(&s.token, &CreateGame::default()).await.id;
    let _a = sanguo_tests::harness::Client::connect(server.addr, &game, None, None).await;
    let _b = sanguo_tests::harness::Client::connect(server.addr, &game, None, None).await;
    let (status, body) = sanguo_tests::harness::Client::refused(server.addr, &game).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "busy");
    assert_eq!(api.get_text("/healthz").await, (200, "ok\n".to_owned()));
    server.stop().await;
}
