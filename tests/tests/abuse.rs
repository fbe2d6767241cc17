//! A hostile population (issue 18): what one address may take, what an
//! anonymous client may read, and that bad input is refused in words. A real
//! server on 127.0.0.1:0 over a fresh Postgres database; "other addresses"
//! are loopback addresses of their own (127.0.0.2 and up).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use protocol::{Channel, ClientMsg, CreateGame, ErrorCode, GameRecord, Phase, ServerMsg, Session, Side, Snapshot};
use sanguo_tests::harness::{Api, Client, Table, TestDb, TestServer};
use server::limits::RateConfig;
use server::ws::close_code;

/// A server with the product's limits, changed by `f`.
async fn limited(f: impl FnOnce(&mut server::Config)) -> (TestDb, TestServer) {
    let db = TestDb::create().await;
    let mut c = TestServer::config(Some(db.url.clone()));
    c.rates = RateConfig::default();
    c.max_sockets_per_address = server::Config::default().max_sockets_per_address;
    c.max_silent_sockets_per_address = server::Config::default().max_silent_sockets_per_address;
    c.max_bot_games_per_address = server::Config::default().max_bot_games_per_address;
    c.max_bot_only_games = server::Config::default().max_bot_only_games;
    f(&mut c);
    (db, TestServer::start(c))
}

/// A game socket from 127.0.0.1 refused before the upgrade with HTTP 429
/// `rate_limited`; the JSON body.
async fn upgrade_refused(server: &TestServer, game: &str) -> serde_json::Value {
    let (status, body) = Client::refused(server.addr, game).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["code"], "rate_limited");
    body
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// A raw POST: status, `Retry-After`, JSON body.
async fn post_raw(
    http: &reqwest::Client,
    url: String,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> (u16, Option<String>, serde_json::Value) {
    let mut req = http.post(url).json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("http");
    let status = r.status().as_u16();
    let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({status}): {text}: {e}"));
    (status, retry, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_minting_is_limited_per_address_and_refused_with_429_json_and_retry_after() {
    let (_db, server) = limited(|c| c.rates.sessions_per_minute = 5).await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/sessions", server.base());
    let json = serde_json::json!({});
    for _ in 0..5 {
        // A forwarded-for header is not believed unless configured: the same client.
        let spoofed = format!("10.0.0.{}", rand::random::<u8>());
        let (status, _, _) = post_raw(&http, url.clone(), &[("x-forwarded-for", &spoofed)], &json).await;
        assert_eq!(status, 201);
    }
    let (status, retry, body) = post_raw(&http, url.clone(), &[("x-forwarded-for", "10.9.9.9")], &json).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["code"], "rate_limited");
    assert!(body["message"].as_str().unwrap().contains("sessions"), "{body}");
    let retry: u64 = retry.expect("a Retry-After header").parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // Another address has its own allowance.
    let other = Api::from_address(server.base(), ip("127.0.0.2"));
    other.guest().await;
    let api = Api::new(server.base());
    assert!(api.metric("sanguo_rate_limited_total").await >= 1.0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_proxy_header_alone_names_the_client() {
    let (_db, server) = limited(|c| {
        c.rates.sessions_per_minute = 2;
        c.trusted_proxy_header = Some("x-real-ip".into());
    })
    .await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/sessions", server.base());
    let json = serde_json::json!({});
    for _ in 0..2 {
        assert_eq!(
            post_raw(&http, url.clone(), &[("x-real-ip", "203.0.113.7")], &json)
                .await
                .0,
            201
        );
    }
    assert_eq!(
        post_raw(&http, url.clone(), &[("x-real-ip", "203.0.113.7")], &json)
            .await
            .0,
        429
    );
    // Another client behind the proxy; and another header is not believed.
    assert_eq!(
        post_raw(&http, url.clone(), &[("x-real-ip", "203.0.113.8")], &json)
            .await
            .0,
        201
    );
    for _ in 0..2 {
        post_raw(&http, url.clone(), &[("x-forwarded-for", "198.51.100.1")], &json).await;
    }
    let (status, _, _) = post_raw(&http, url.clone(), &[("x-forwarded-for", "198.51.100.2")], &json).await;
    assert_eq!(
        status, 429,
        "without x-real-ip the client is the peer, whatever else it says"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_logins_and_games_are_limited_per_address() {
    let (_db, server) = limited(|c| {
        c.rates.accounts_per_minute = 2;
        c.rates.logins_per_minute = 3;
        c.rates.games_per_minute = 2;
    })
    .await;
    let api = Api::new(server.base());
    let creds = |u: &str| serde_json::json!({"username": u, "password": "correct horse battery"});
    api.post::<Session>("/api/accounts", None, &creds("liu_bei"))
        .await
        .unwrap();
    api.post::<Session>("/api/accounts", None, &creds("guan_yu"))
        .await
        .unwrap();
    let e = api
        .post::<Session>("/api/accounts", None, &creds("zhang_fei"))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::RateLimited));
    for _ in 0..3 {
        api.post::<Session>("/api/login", None, &creds("liu_bei"))
            .await
            .unwrap();
    }
    let e = api
        .post::<Session>("/api/login", None, &creds("liu_bei"))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::RateLimited));
    let other = Api::from_address(server.base(), ip("127.0.0.3"));
    other
        .post::<Session>("/api/login", None, &creds("liu_bei"))
        .await
        .unwrap();

    let g = api.guest().await;
    let game = serde_json::json!({});
    api.post::<Snapshot>("/api/games", Some(&g.token), &game).await.unwrap();
    api.post::<Snapshot>("/api/games", Some(&g.token), &game).await.unwrap();
    // A fresh guest from the same address does not start afresh.
    let g2 = api.guest().await;
    let e = api
        .post::<Snapshot>("/api/games", Some(&g2.token), &game)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::RateLimited));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_username_goes_through_the_same_password_verification() {
    let (_db, server) = limited(|_| {}).await;
    let api = Api::new(server.base());
    let creds = |u: &str, p: &str| serde_json::json!({"username": u, "password": p});
    api.post::<Session>("/api/accounts", None, &creds("cao_cao", "correct horse battery"))
        .await
        .unwrap();
    let before = api.metric("sanguo_password_verifications_total").await;
    let wrong = api
        .post::<Session>("/api/login", None, &creds("cao_cao", "wrong password"))
        .await
        .unwrap_err();
    let after_wrong = api.metric("sanguo_password_verifications_total").await;
    let unknown = api
        .post::<Session>("/api/login", None, &creds("nobody_here", "wrong password"))
        .await
        .unwrap_err();
    let after_unknown = api.metric("sanguo_password_verifications_total").await;
    // The same answer, and each through one argon2 verification.
    assert_eq!(wrong, unknown);
    assert_eq!((wrong.status, wrong.body.code), (401, ErrorCode::BadCredentials));
    assert_eq!(after_wrong - before, 1.0, "a wrong password is verified");
    assert_eq!(
        after_unknown - after_wrong,
        1.0,
        "an unknown username is verified too (a dummy hash)"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_flood_waits_in_a_bounded_line_and_the_rest_is_refused() {
    let (_db, server) = limited(|c| {
        c.rates = RateConfig::unlimited();
        c.password_hashes = 1;
        c.password_queue = 2;
    })
    .await;
    let api = Api::new(server.base());
    let creds = serde_json::json!({"username": "sima_yi", "password": "wrong password"});
    let mut tasks = Vec::new();
    for _ in 0..24 {
        let api = api.clone();
        let creds = creds.clone();
        tasks.push(tokio::spawn(async move {
            api.post::<Session>("/api/login", None, &creds).await.unwrap_err()
        }));
    }
    let mut refused = 0;
    let mut verified = 0;
    for t in tasks {
        let e = t.await.unwrap();
        match e.body.code {
            ErrorCode::RateLimited => {
                assert_eq!(e.status, 429);
                refused += 1;
            }
            ErrorCode::BadCredentials => verified += 1,
            other => panic!("{other:?}"),
        }
    }
    assert!(
        refused > 0,
        "24 at once, one hash at a time and two waiting: some are refused"
    );
    assert!(verified >= 1);
    assert_eq!(
        api.metric("sanguo_password_verifications_total").await,
        f64::from(verified),
        "a refused login costs no hash"
    );
    server.stop().await;
}

/// A game that has only a creator (open): enough to connect to.
async fn open_game(api: &Api) -> (Session, String) {
    let s = api.guest().await;
    let id = api.create_game(&s.token, &CreateGame::default()).await.id;
    (s, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_without_hello_is_closed_at_the_deadline_and_a_bad_hello_is_bad_message() {
    let (_db, server) = limited(|c| c.hello_timeout = Duration::from_secs(1)).await;
    let api = Api::new(server.base());
    let (_, game) = open_game(&api).await;
    let began = Instant::now();
    let idle = Client::connect_raw(server.addr, &game).await;
    let (code, reason) = idle.close_frame().await.expect("a Close frame");
    assert_eq!(code, close_code::POLICY, "{reason}");
    assert!(began.elapsed() < Duration::from_secs(4), "{:?}", began.elapsed());

    // A malformed hello: bad_message, not hello_first.
    let mut c = Client::connect_raw(server.addr, &game).await;
    c.send_text(r#"{"type":"hello","protocol":"one"}"#.into()).await;
    assert_eq!(c.error().await, ErrorCode::BadMessage);
    let (code, _) = c.close_frame().await.expect("a Close frame");
    assert_eq!(code, close_code::POLICY);
    // Another message first: hello_first.
    let mut c = Client::connect_raw(server.addr, &game).await;
    c.send(&ClientMsg::Ping { n: 1 }).await;
    assert_eq!(c.error().await, ErrorCode::HelloFirst);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frame_sizes_close_with_1009_or_say_size_not_rate() {
    let (_db, server) = limited(|_| {}).await;
    let api = Api::new(server.base());
    let (s, game) = open_game(&api).await;
    // 70 KB: over the hard limit, closed with 1009 "too big".
    let mut c = Client::connect(server.addr, &game, Some(&s.token), None).await;
    c.send_text(format!(r#"{{"type":"ping","n":1,"pad":"{}"}}"#, "x".repeat(70 * 1024)))
        .await;
    let (code, reason) = c.close_frame().await.expect("a Close frame");
    assert_eq!(code, close_code::TOO_BIG, "{reason}");
    // Many frames of 9 KB: each refused for its size, then closed — for size, not rate.
    let mut c = Client::connect(server.addr, &game, Some(&s.token), None).await;
    let big = format!(r#"{{"type":"ping","n":1,"pad":"{}"}}"#, "x".repeat(9 * 1024));
    for _ in 0..12 {
        c.send_text(big.clone()).await;
    }
    let (code, reason) = c.close_frame().await.expect("a Close frame");
    assert_eq!(
        (code, reason.as_str()),
        (close_code::POLICY, server::ws::OVERSIZED_CLOSE_REASON)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_capped_per_address_and_spectators_per_game() {
    let (_db, server) = limited(|c| {
        c.max_sockets_per_address = 3;
        c.max_spectators = 2;
    })
    .await;
    let api = Api::new(server.base());
    let (s, game) = open_game(&api).await;
    api.join(&s.token, &game, Some(Side::W)).await.unwrap();
    let player = Client::connect(server.addr, &game, Some(&s.token), None).await;
    let w1 = Client::connect(server.addr, &game, None, None).await;
    let w2 = Client::connect(server.addr, &game, None, None).await;
    // A fourth socket from this address: refused before the upgrade.
    upgrade_refused(&server, &game).await;
    // A socket closed gives its place back.
    w2.close().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _w3 = Client::connect(server.addr, &game, None, None).await;
    // Room at the address again, but the game has its two spectators: a third is closed with 4002.
    player.close().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut w4 = Client::connect_raw(server.addr, &game).await;
    w4.anonymous_hello().await;
    assert_eq!(w4.error().await, ErrorCode::RateLimited);
    let (code, reason) = w4.close_frame().await.expect("a Close frame");
    assert_eq!(code, close_code::SPECTATORS_FULL, "{reason}");
    drop(w1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_socket_cap_answers_503() {
    let (_db, server) = limited(|c| c.max_sockets = 2).await;
    let api = Api::new(server.base());
    let (_, game) = open_game(&api).await;
    let _a = Client::connect(server.addr, &game, None, None).await;
    let _b = Client::connect(server.addr, &game, None, None).await;
    let url = format!("ws://{}/api/games/{game}/ws", server.addr);
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
            assert_eq!(r.status().as_u16(), 503);
            assert!(r.headers().contains_key("retry-after"));
            let body: serde_json::Value = serde_json::from_slice(r.body().as_deref().unwrap()).unwrap();
            assert_eq!(body["code"], "busy");
        }
        other => panic!("expected HTTP 503, got {other:?}"),
    }
    // Health checks still answer.
    assert_eq!(api.get_text("/healthz").await.0, 200);
    server.stop().await;
}

/// Plays a game to its end by resignations (W and B resign twice: the
/// first is a warning before 15 rounds, the second loses).
async fn finished_game(server: &TestServer) -> Table {
    use protocol::GameEvent as E;
    let mut t = Table::new(server, &CreateGame::default()).await;
    for i in [0, 1] {
        t.players[i].send(&ClientMsg::Resign).await;
        t.players[2].until(|e| matches!(e, E::Warned { .. })).await;
        t.players[i].send(&ClientMsg::Resign).await;
        t.players[2].until(|e| matches!(e, E::Eliminated(_))).await;
    }
    t.players[2].until(|e| matches!(e, E::Finished { .. })).await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_games_are_served_from_the_store_without_becoming_rooms() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let t = finished_game(&server).await;
    let game = t.game.clone();
    drop(t);
    server.stop().await;
    // A new server: finished games are not restored, and visits do not revive them.
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    assert_eq!(api.metric("sanguo_rooms").await, 0.0);
    for _ in 0..3 {
        let snap: Snapshot = api.get(&format!("/api/games/{game}")).await.unwrap();
        assert_eq!(snap.phase, Phase::Finished);
        let record = api.record(&game).await;
        assert_eq!(record.phase, Phase::Finished);
    }
    let mut w = Client::connect_raw(server.addr, &game).await;
    w.anonymous_hello().await;
    assert!(matches!(w.next().await, ServerMsg::Welcome { .. }));
    match w.next().await {
        ServerMsg::Snapshot { game } => assert_eq!(game.phase, Phase::Finished),
        other => panic!("{other:?}"),
    }
    w.send(&ClientMsg::Resign).await;
    assert_eq!(w.error().await, ErrorCode::GameOver);
    w.send(&ClientMsg::Ping { n: 9 }).await;
    assert!(matches!(w.next().await, ServerMsg::Pong { n: 9, .. }));
    assert_eq!(api.metric("sanguo_rooms").await, 0.0, "no room was made");
    // Joining it is refused in words.
    let g = api.guest().await;
    let e = api.join(&g.token, &game, None).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::NotOpen));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_games_record_keeps_each_chat_channel_to_its_audience() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let api = t.api.clone();
    let watcher = api.guest().await;
    let mut w = Client::connect(server.addr, &t.game, Some(&watcher.token), None).await;
    t.players[0]
        .send(&ClientMsg::Chat {
            channel: Channel::Players,
            text: "secret plan".into(),
        })
        .await;
    w.send(&ClientMsg::Chat {
        channel: Channel::Spectators,
        text: "W is doomed".into(),
    })
    .await;
    w.until_v(t.players[0].v + 2).await;
    let path = format!("/api/games/{}/record", t.game);
    let texts = |r: &GameRecord| r.chat.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    let anonymous = api.record(&t.game).await;
    assert_eq!(texts(&anonymous), ["W is doomed"]);
    let as_watcher: GameRecord = api.get_as(&path, &watcher.token).await.unwrap();
    assert_eq!(texts(&as_watcher), ["W is doomed"]);
    let as_player: GameRecord = api.get_as(&path, &t.sessions[1].token).await.unwrap();
    assert_eq!(
        texts(&as_player),
        ["secret plan"],
        "players read the spectators only after the end"
    );
    server.stop().await;
}

/// A game stores at most `chat_lines` per channel: one more is refused with
/// `chat_full`, and still after a restart (the restored room counts the
/// stored lines); the players' channel has its own count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_games_stored_chat_is_capped_per_channel_across_a_restart() {
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.chat_lines = 3;
    let server = TestServer::start(config.clone());
    let t = Table::new(&server, &CreateGame::default()).await;
    let (api, game, player) = (t.api.clone(), t.game.clone(), t.sessions[0].clone());
    let watcher = api.guest().await;
    let say = |channel, text: &str| ClientMsg::Chat {
        channel,
        text: text.into(),
    };
    let mut w = Client::connect(server.addr, &game, Some(&watcher.token), None).await;
    for i in 0..3 {
        w.send(&say(Channel::Spectators, &format!("line {i}"))).await;
    }
    w.send(&say(Channel::Spectators, "one too many")).await;
    assert_eq!(w.error().await, ErrorCode::ChatFull);
    assert_eq!(
        w.events
            .iter()
            .filter(|(_, e)| matches!(e, protocol::GameEvent::Chat { .. }))
            .count(),
        3
    );
    drop((t, w));
    server.stop().await;

    let server = TestServer::start(config);
    let mut w = Client::connect(server.addr, &game, Some(&watcher.token), None).await;
    w.send(&say(Channel::Spectators, "after the restart")).await;
    assert_eq!(w.error().await, ErrorCode::ChatFull);
    let mut p = Client::connect(server.addr, &game, Some(&player.token), None).await;
    p.send(&say(Channel::Players, "the players' channel is not full")).await;
    p.until(|e| matches!(e, protocol::GameEvent::Chat { .. })).await;
    let record = Api::new(server.base()).record(&game).await;
    assert_eq!(record.chat.len(), 3, "the spectators' lines only (the game is live)");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_games_are_counted_per_address_not_per_guest() {
    let (_db, server) = limited(|c| {
        c.rates = RateConfig::unlimited();
        c.max_bot_games_per_address = 2;
        c.max_bot_only_games = 1;
    })
    .await;
    let api = Api::new(server.base());
    let with_bot = serde_json::json!({"bots": {"B": 1}});
    for _ in 0..2 {
        let g = api.guest().await;
        api.post::<Snapshot>("/api/games", Some(&g.token), &with_bot)
            .await
            .unwrap();
    }
    let g = api.guest().await;
    let e = api
        .post::<Snapshot>("/api/games", Some(&g.token), &with_bot)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::TooManyGames));
    // A game without bots is still fine; seating a bot in it later is counted.
    let mine = api.create_game(&g.token, &CreateGame::default()).await.id;
    let e = api.add_bot(&g.token, &mine, Some(Side::B), 1).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::TooManyGames));
    // Another address; and games of bots alone are capped on the whole server.
    let other = Api::from_address(server.base(), ip("127.0.0.4"));
    let g = other.guest().await;
    let three = serde_json::json!({"bots": {"W": 1, "B": 1, "Y": 1}, "time_control": {"base_ms": 3_600_000, "increment_ms": 0}});
    other
        .post::<Snapshot>("/api/games", Some(&g.token), &three)
        .await
        .unwrap();
    let third = Api::from_address(server.base(), ip("127.0.0.5"));
    let g = third.guest().await;
    let e = third
        .post::<Snapshot>("/api/games", Some(&g.token), &three)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::TooManyGames));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_and_nonsense_clocks_are_refused_as_json() {
    let (_db, server) = limited(|c| {
        c.rates = RateConfig::unlimited();
        c.clock_minimums = server::http::ClockMinimums::default();
    })
    .await;
    let api = Api::new(server.base());
    let g = api.guest().await;
    // NUL in a login name (Postgres cannot hold it): 400, not 500.
    let nul = serde_json::json!({"username": "a\u{0}b", "password": "correct horse battery"});
    let e = api.post::<Session>("/api/login", None, &nul).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    let e = api.post::<Session>("/api/accounts", None, &nul).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    // Unknown fields are refused in every body, as the OpenAPI document says (additionalProperties: false).
    let extra = serde_json::json!({"username": "lu_bu", "password": "correct horse battery", "admin": true});
    let e = api.post::<Session>("/api/accounts", None, &extra).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    let extra = serde_json::json!({"time_control": {"base_ms": 600000, "bonus_ms": 1}});
    let e = api
        .post::<Snapshot>("/api/games", Some(&g.token), &extra)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    // An array is no game-creation body; unknown fields are refused.
    for body in [
        serde_json::json!([]),
        serde_json::json!([null, "cw"]),
        serde_json::json!({"colour": "red"}),
    ] {
        let e = api
            .post::<Snapshot>("/api/games", Some(&g.token), &body)
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest), "{body}");
    }
    // Nonsense clocks.
    for tc in [
        serde_json::json!({"time_control": {"base_ms": 1, "increment_ms": 0}}),
        serde_json::json!({"time_control": {"base_ms": 0, "increment_ms": 0, "byoyomi": {"periods": 3, "period_ms": 0}}}),
        serde_json::json!({"time_control": {"base_ms": 600000, "increment_ms": 0, "byoyomi": {"periods": 3, "period_ms": 10}}}),
        serde_json::json!({"time_control": {"base_ms": 600000, "increment_ms": 0, "per_move_ms": 100}}),
        serde_json::json!({"grace_ms": 0}),
    ] {
        let e = api
            .post::<Snapshot>("/api/games", Some(&g.token), &tc)
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest), "{tc}");
        assert!(
            e.body.message.contains("at least") || e.body.message.contains("no time"),
            "{tc}: {:?}",
            e.body
        );
    }
    // The extractors' own refusals are JSON too.
    let http = reqwest::Client::new();
    for (method, path, body) in [
        ("GET", "/api/games/%FF%FE", None),
        ("PUT", "/api/games", None),
        ("POST", "/api/accounts", Some("not json")),
        ("POST", "/api/login", Some("{\"username\": 1}")),
    ] {
        let mut req = http.request(method.parse().unwrap(), format!("{}{path}", server.base()));
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        assert!((400..500).contains(&status), "{method} {path}: {status}");
        assert_eq!(
            r.headers().get("content-type").unwrap(),
            "application/json",
            "{method} {path}"
        );
        let e: protocol::ErrorBody = r.json().await.unwrap();
        assert!(!e.message.is_empty());
    }
    // NUL in chat is refused in words, and the game goes on.
    let (s, game) = open_game(&api).await;
    let mut c = Client::connect(server.addr, &game, Some(&s.token), None).await;
    c.send(&ClientMsg::Chat {
        channel: Channel::Spectators,
        text: "a\u{0}b".into(),
    })
    .await;
    assert_eq!(c.error().await, ErrorCode::BadChat);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_shows_new_games_at_once_and_who_is_connected() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let (s, game) = open_game(&api).await;
    api.join(&s.token, &game, Some(Side::W)).await.unwrap();
    let list: Vec<protocol::GameSummary> = api.get("/api/games").await.unwrap();
    let row = list.iter().find(|g| g.id == game).expect("listed at once");
    assert!(!row.seats[0].as_ref().unwrap().online);
    let _c = Client::connect(server.addr, &game, Some(&s.token), None).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let list: Vec<protocol::GameSummary> = api.get("/api/games").await.unwrap();
    let row = list.iter().find(|g| g.id == game).unwrap();
    assert!(row.seats[0].as_ref().unwrap().online, "{row:?}");
    server.stop().await;
}

/// One `POST /api/sessions` on a raw connection: the status and whether the
/// answer says `Connection: close`; `None`: the connection was closed with no
/// answer at all.
async fn raw_session(tcp: &mut tokio::net::TcpStream) -> Option<(u16, bool)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request =
        "POST /api/sessions HTTP/1.1\r\nHost: sanguo\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    // Writing into a connection the server already reset may fail: no answer.
    tcp.write_all(request.as_bytes()).await.ok()?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let head_end = got.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(end) = head_end {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if got.len() >= end + 4 + length {
                let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                return Some((status, head.lines().any(|l| l == "connection: close")));
            }
        }
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => {
                assert!(got.is_empty(), "half an answer: {}", String::from_utf8_lossy(&got));
                return None;
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A connection from `from` to the server.
async fn connect_from(server: &TestServer, from: &str) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::new(ip(from), 0)).unwrap();
    socket.connect(server.addr).await
}

/// `POST /api/sessions` on a new connection from `from`: as [`raw_session`];
/// `None` also when no answer comes within 300 ms (the server holds the
/// connection unread) or the connection is reset before it is even
/// established on the client's side.
async fn session_from(server: &TestServer, from: &str) -> Option<(u16, bool)> {
    let mut tcp = connect_from(server, from).await.ok()?;
    tokio::time::timeout(Duration::from_millis(300), raw_session(&mut tcp))
        .await
        .ok()
        .flatten()
}

/// A server that grants an address one guest session a minute and cuts it
/// off for `cut_off` after `refusals` refusals.
async fn cutting(refusals: u32, cut_off: Duration) -> (TestDb, TestServer) {
    limited(|c| {
        c.rates.sessions_per_minute = 1;
        c.cut_off_refusals = refusals;
        c.cut_off = cut_off;
    })
    .await
}

/// On one keep-alive connection from `from` to a server that grants one
/// guest session a minute: one guest, then refusals; the `refusals`-th cuts
/// the address off (its answer says `Connection: close`). The connection and
/// when its last request went.
async fn refused_until_cut_off(server: &TestServer, from: &str, refusals: usize) -> (tokio::net::TcpStream, Instant) {
    let mut tcp = connect_from(server, from).await.unwrap();
    assert_eq!(raw_session(&mut tcp).await, Some((201, false)));
    for _ in 1..refusals {
        assert_eq!(raw_session(&mut tcp).await, Some((429, false)));
    }
    let cut = Instant::now();
    assert_eq!(
        raw_session(&mut tcp).await,
        Some((429, true)),
        "refusal {refusals} cuts off and says Connection: close"
    );
    (tcp, cut)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_refused_again_and_again_is_cut_off_at_accept_for_a_while() {
    let (_db, server) = cutting(5, Duration::from_secs(3)).await;
    // The fifth refusal cuts the address off and closes the connection after its answer.
    let (mut tcp, cut) = refused_until_cut_off(&server, "127.0.0.2", 5).await;
    assert_eq!(
        raw_session(&mut tcp).await,
        None,
        "and the server closed the connection"
    );

    // Its next connections are never read: no answer.
    for _ in 0..3 {
        assert_eq!(
            session_from(&server, "127.0.0.2").await,
            None,
            "no answer while cut off"
        );
    }
    // Another address is served as ever.
    assert_eq!(session_from(&server, "127.0.0.3").await, Some((201, false)));
    let api = Api::new(server.base());
    assert!(api.metric("sanguo_cut_off_connections_total").await >= 3.0);

    // The cut-off lifts after its 3 s: answered again (429, by the rate limit).
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(cut.elapsed()) + Duration::from_millis(300)).await;
    assert_eq!(session_from(&server, "127.0.0.2").await, Some((429, false)));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_may_keep_only_a_few_sockets_waiting_for_hello() {
    let (_db, server) = limited(|c| c.max_silent_sockets_per_address = 2).await;
    let api = Api::new(server.base());
    let (_, game) = open_game(&api).await;
    let refused = || async {
        let body = upgrade_refused(&server, &game).await;
        assert!(body["message"].as_str().unwrap().contains("hello"), "{body}");
    };
    // Two sockets that say nothing; a third is refused before the upgrade.
    let mut silent = Client::connect_raw(server.addr, &game).await;
    let _silent2 = Client::connect_raw(server.addr, &game).await;
    refused().await;
    // One says hello: a place is free again, and sockets that said hello
    // are not counted (only the address's whole cap, 100, binds them).
    silent.anonymous_hello().await;
    assert!(matches!(silent.next().await, ServerMsg::Welcome { .. }));
    let watchers = [
        Client::connect(server.addr, &game, None, None).await,
        Client::connect(server.addr, &game, None, None).await,
        Client::connect(server.addr, &game, None, None).await,
    ];
    let _silent3 = Client::connect_raw(server.addr, &game).await;
    refused().await;
    drop(watchers);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_silent_until_the_hello_deadline_count_towards_a_cut_off() {
    let (_db, server) = limited(|c| {
        c.hello_timeout = Duration::from_secs(1);
        // Counted apart from refusals, at a threshold of their own.
        c.cut_off_refusals = 0;
        c.cut_off_silent = 3;
        c.cut_off = Duration::from_secs(30);
    })
    .await;
    let api = Api::new(server.base());
    let (_, game) = open_game(&api).await;
    // Three silent sockets from 127.0.0.1, closed at the deadline.
    let idle = [
        Client::connect_raw(server.addr, &game).await,
        Client::connect_raw(server.addr, &game).await,
        Client::connect_raw(server.addr, &game).await,
    ];
    for c in idle {
        let (code, _) = c.close_frame().await.expect("a Close frame");
        assert_eq!(code, close_code::POLICY);
    }
    // 127.0.0.1 is cut off now; 127.0.0.2 is not.
    assert_eq!(session_from(&server, "127.0.0.1").await, None, "held unread at accept");
    assert_eq!(session_from(&server, "127.0.0.2").await, Some((201, false)));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_held_at_the_door_is_reset_when_its_hold_ends_though_no_other_comes() {
    let (_db, server) = cutting(2, Duration::from_secs(60)).await;
    refused_until_cut_off(&server, "127.0.0.2", 2).await;
    // One connection from it, then nothing from anyone: held unread, then
    // reset at the end of its hold (not at some later accept).
    let mut held = connect_from(&server, "127.0.0.2").await.unwrap();
    let since = Instant::now();
    let ended = tokio::time::timeout(
        server::cutoff::TARPIT_HOLD + Duration::from_secs(3),
        raw_session(&mut held),
    )
    .await;
    assert_eq!(ended, Ok(None), "reset, no answer");
    assert!(
        since.elapsed() >= server::cutoff::TARPIT_HOLD - Duration::from_secs(1),
        "held, not closed at once: {:?}",
        since.elapsed()
    );
    server.stop().await;
}
