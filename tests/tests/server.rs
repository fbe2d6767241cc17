//! The server over real sockets: a real server on 127.0.0.1:0, a fresh
//! Postgres database per test (they fail, never skip, without Postgres),
//! tokio-tungstenite clients.

use std::time::Duration;

use engine::{Action, Direction, Event, Game};
use protocol::{
    Byoyomi, Channel, ClientMsg, CreateGame, DrawReason, EliminationReason, Ending, ErrorCode, GameEvent, GameRecord,
    GameResult, LegalMovesFor, Phase, Request, ServerMsg, Side, TimeControl,
};
use sanguo_tests::harness::{Api, Client, Table, TestDb, TestServer};
use sanguo_tests::{Lcg, pick, scripted_game};

/// The scripted game: seed 15 of the capture-first policy — W is mated at
/// ply 60, then B and Y play on until the phase-2 length draw at ply 140.
const SEED: u64 = 15;

async fn pg_server() -> (TestDb, TestServer) {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    (db, server)
}

/// `n` quiet plies (no capture) on which all three sides stay in the game.
fn quiet_line(seed: u64, n: usize) -> Vec<String> {
    let mut game = Game::new(Direction::Ccw);
    let mut rng = Lcg(seed);
    let mut out = Vec::new();
    for at in 0..n as u64 {
        let side = game.position().turn();
        let m = pick(&game, &mut rng, true);
        game.apply(Event {
            side,
            action: Action::Move(m),
            at,
        })
        .unwrap();
        out.push(m.to_string());
    }
    assert_eq!(game.position().live().count(), 3, "the quiet line keeps everyone in");
    assert!(!game.is_finished());
    out
}

/// Plays the scripted game from ply `from` to `to` (exclusive).
async fn play_scripted(t: &mut Table, from: usize, to: usize, others: &mut [&mut Client]) {
    let (moves, _) = scripted_game(SEED);
    for (side, m) in &moves[from..to] {
        assert_eq!(t.turn(), Side::from(*side));
        t.play(&m.to_string(), others).await;
    }
}

async fn scripted_game_to_the_end(server: &TestServer) {
    let (moves, finished) = scripted_game(SEED);
    let mut t = Table::new(server, &CreateGame::default()).await;
    let watcher_session = t.api.guest().await;
    let mut spectator = Client::connect(server.addr, &t.game, Some(&watcher_session.token), None).await;
    assert_eq!(spectator.side, None);
    spectator.until_v(t.players[0].v).await;
    let before_chat = t.players[0].v;

    // Chat: each channel reaches its audience; the others get bare versions. The two messages come
    // from two connections, so the server may take them in either order.
    t.players[0]
        .send(&ClientMsg::Chat {
            channel: Channel::Players,
            text: "good luck".into(),
        })
        .await;
    spectator
        .send(&ClientMsg::Chat {
            channel: Channel::Spectators,
            text: "hello from the stands".into(),
        })
        .await;
    let chat = |e: &GameEvent| matches!(e, GameEvent::Chat { .. });
    for p in &mut t.players {
        let e = p.until(chat).await;
        assert!(matches!(
            e,
            GameEvent::Chat {
                channel: Channel::Players,
                side: Some(Side::W),
                ..
            }
        ));
    }
    let e = spectator.until(chat).await;
    assert!(matches!(
        e,
        GameEvent::Chat {
            channel: Channel::Spectators,
            ..
        }
    ));
    // Two chat events, one version each, whatever their order.
    let v = before_chat + 2;
    for c in t.players.iter_mut().chain([&mut spectator]) {
        c.until_v(v).await;
    }

    play_scripted(&mut t, 0, moves.len(), &mut [&mut spectator]).await;
    let expected = GameResult::from(finished.result().unwrap());
    let ended = |e: &GameEvent| matches!(e, GameEvent::Finished { .. });
    for c in t.players.iter_mut().chain([&mut spectator]) {
        match c.until(ended).await {
            GameEvent::Finished { result } => assert_eq!(result, expected),
            _ => unreachable!(),
        }
    }
    assert!(
        expected
            .eliminations
            .iter()
            .any(|d| d.reason == EliminationReason::Mate),
        "the script goes through an elimination"
    );
    // Everyone holds the same versions, every one of them.
    let final_v = t.players[0].v;
    for c in &t.players {
        assert_eq!(c.v, final_v);
    }
    assert_eq!(spectator.v, final_v);
    assert_eq!(spectator.versions.last(), t.players[0].versions.last());
    let seen: Vec<u64> = spectator.versions.clone();
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1));

    // The record read back equals what was played.
    let record = t.api.record(&t.game).await;
    assert_eq!(record.phase, Phase::Finished);
    let played: Vec<String> = moves.iter().map(|(_, m)| m.to_string()).collect();
    let stored: Vec<String> = record.moves.iter().map(|m| m.mv.clone()).collect();
    assert_eq!(stored, played);
    assert_eq!(record.result, Some(expected));
    // Anyone reads the spectators' chat, never the players'; the players read both once it is over.
    assert_eq!(record.chat.len(), 1);
    assert_eq!(record.chat[0].channel, Channel::Spectators);
    let theirs: GameRecord = t
        .api
        .get_as(&format!("/api/games/{}/record", t.game), &t.sessions[0].token)
        .await
        .unwrap();
    assert_eq!(theirs.chat.len(), 2);
    assert_eq!(record.events.len(), played.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_players_and_a_spectator_play_a_scripted_game_on_postgres() {
    let (_db, server) = pg_server().await;
    scripted_game_to_the_end(&server).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_default_runs_the_same_game() {
    let path = std::env::temp_dir().join(format!("sanguo-test-{}.sqlite", rand::random::<u64>()));
    let mut config = TestServer::config(None);
    config.sqlite_path = path.clone();
    let server = TestServer::start(config);
    scripted_game_to_the_end(&server).await;
    server.stop().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// `hello` with `legal_moves: own`: over the socket, a seat gets the legal
/// moves only when it is to move and a spectator never does; the rest of
/// each status is the same as everyone else's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_asking_for_its_own_moves_gets_the_list_only_on_its_turn() {
    let (_db, server) = pg_server().await;
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let b_token = t.sessions[1].token.clone();
    let mut b = Client::connect_with(server.addr, &t.game, Some(&b_token), None, LegalMovesFor::Own).await;
    let mut watcher = Client::connect_with(server.addr, &t.game, None, None, LegalMovesFor::Own).await;
    assert_eq!((b.side, watcher.side), (Some(Side::B), None));
    let line = quiet_line(3, 6);
    for mv in &line {
        t.play(mv, &mut [&mut b, &mut watcher]).await;
        let everyone = t.players[0].status.clone().expect("a status");
        assert!(!everyone.legal_moves.is_empty(), "W took the default: always the list");
        let mut lean = everyone.clone();
        lean.legal_moves.clear();
        let b_status = b.status.clone().expect("a status");
        if everyone.turn == Side::B {
            assert_eq!(b_status, everyone, "B to move gets its moves");
        } else {
            assert_eq!(b_status, lean, "B waiting for its turn gets no list");
        }
        assert_eq!(
            watcher.status.clone().expect("a status"),
            lean,
            "a spectator gets no list"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_answered_and_changes_nothing() {
    let db = TestDb::create().await;
    // The product's message rate (the harness raises it for scripted games).
    let server = TestServer::start(server::Config {
        messages_per_second: 20,
        message_burst: 40,
        ..TestServer::config(Some(db.url.clone()))
    });
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let (moves, _) = scripted_game(SEED);
    let first = moves[0].1.to_string();
    let second = moves[1].1.to_string();

    // Garbage, unknown messages, binary and oversized frames.
    let w = &mut t.players[0];
    w.send_text("{not json".into()).await;
    assert_eq!(w.error().await, ErrorCode::BadMessage);
    w.send_text(r#"{"type":"fly"}"#.into()).await;
    assert_eq!(w.error().await, ErrorCode::BadMessage);
    w.send_text(format!(
        r#"{{"type":"chat","channel":"players","text":"{}"}}"#,
        "x".repeat(9000)
    ))
    .await;
    assert_eq!(w.error().await, ErrorCode::FrameTooLarge);
    w.anonymous_hello().await;
    assert_eq!(w.error().await, ErrorCode::HelloFirst);
    // Unparseable, illegal, out of turn.
    w.send(&ClientMsg::Move {
        ply: 0,
        mv: "nowhere".into(),
    })
    .await;
    assert_eq!(w.error().await, ErrorCode::BadMove);
    w.send(&ClientMsg::Move {
        ply: 0,
        mv: "W52-O".into(),
    })
    .await;
    assert_eq!(w.error().await, ErrorCode::IllegalMove);
    t.players[1]
        .send(&ClientMsg::Move {
            ply: 0,
            mv: second.clone(),
        })
        .await;
    assert_eq!(t.players[1].error().await, ErrorCode::NotYourTurn);
    // A draw answer with no offer, a premature draw offer is a warning (not an error).
    t.players[2].send(&ClientMsg::AnswerDraw { accept: true }).await;
    assert_eq!(t.players[2].error().await, ErrorCode::NothingToAnswer);

    // Spectators cannot act, with or without a session.
    let mut anonymous = Client::connect(server.addr, &t.game, None, None).await;
    anonymous
        .send(&ClientMsg::Move {
            ply: 0,
            mv: first.clone(),
        })
        .await;
    assert_eq!(anonymous.error().await, ErrorCode::NotAPlayer);
    anonymous.send(&ClientMsg::Resign).await;
    assert_eq!(anonymous.error().await, ErrorCode::NotAPlayer);
    anonymous
        .send(&ClientMsg::Chat {
            channel: Channel::Spectators,
            text: "hi".into(),
        })
        .await;
    assert_eq!(anonymous.error().await, ErrorCode::Unauthorized);
    let stranger = t.api.guest().await;
    let mut other = Client::connect(server.addr, &t.game, Some(&stranger.token), None).await;
    other
        .send(&ClientMsg::Move {
            ply: 0,
            mv: first.clone(),
        })
        .await;
    assert_eq!(other.error().await, ErrorCode::NotAPlayer);
    other
        .send(&ClientMsg::Chat {
            channel: Channel::Players,
            text: "psst".into(),
        })
        .await;
    assert_eq!(other.error().await, ErrorCode::NotAPlayer);

    // Nothing changed.
    let state = t.api.state(&t.game).await;
    assert_eq!(state.status.ply, 0);
    assert_eq!(state.v, t.players[0].v);

    // Stale and duplicated moves are answered, never applied twice.
    t.play(&first, &mut []).await;
    t.players[0]
        .send(&ClientMsg::Move {
            ply: 0,
            mv: first.clone(),
        })
        .await;
    assert_eq!(t.players[0].error().await, ErrorCode::DuplicateMove);
    t.players[1]
        .send(&ClientMsg::Move {
            ply: 0,
            mv: second.clone(),
        })
        .await;
    assert_eq!(t.players[1].error().await, ErrorCode::StaleMove);
    t.players[1]
        .send(&ClientMsg::Move {
            ply: 7,
            mv: second.clone(),
        })
        .await;
    assert_eq!(t.players[1].error().await, ErrorCode::StaleMove);
    let state = t.api.state(&t.game).await;
    assert_eq!(state.status.ply, 1);
    assert_eq!(state.moves, vec![first.clone()]);
    assert_eq!(state.v, t.players[0].v);
    t.play(&second, &mut []).await;

    // Too many messages.
    let y = &mut t.players[2];
    for n in 0..60 {
        y.send(&ClientMsg::Ping { n }).await;
    }
    assert_eq!(y.error().await, ErrorCode::RateLimited);

    // Hello: wrong protocol, unknown token, something else first.
    let mut c = Client::connect_raw(server.addr, &t.game).await;
    c.send(&ClientMsg::Hello {
        protocol: 99,
        token: None,
        v: None,
        legal_moves: Default::default(),
    })
    .await;
    assert_eq!(c.error().await, ErrorCode::UnsupportedProtocol);
    c.closed().await;
    let mut c = Client::connect_raw(server.addr, &t.game).await;
    c.send(&ClientMsg::Hello {
        protocol: 1,
        token: Some("0".repeat(64)),
        v: None,
        legal_moves: Default::default(),
    })
    .await;
    assert_eq!(c.error().await, ErrorCode::Unauthorized);
    c.closed().await;
    let mut c = Client::connect_raw(server.addr, &t.game).await;
    // Not a protocol message at all: bad_message (another message first is hello_first).
    c.send_text("garbage".into()).await;
    assert_eq!(c.error().await, ErrorCode::BadMessage);
    c.closed().await;

    // HTTP: errors as {code, message} with their statuses.
    let api = &t.api;
    let e = api
        .join(&t.sessions[0].token, &t.game, Some(Side::B))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::NotOpen));
    let e = api
        .post::<serde_json::Value>(&format!("/api/games/{}/join", t.game), None, &serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (401, ErrorCode::Unauthorized));
    let e = api
        .get::<serde_json::Value>("/api/games/doesnotexist")
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (404, ErrorCode::NotFound));
    let e = api
        .post::<serde_json::Value>(
            "/api/games",
            Some(&stranger.token),
            &serde_json::json!({"direction": "up"}),
        )
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    for tc in [
        serde_json::json!({"base_ms": u64::MAX}),
        serde_json::json!({"base_ms": 0}),
        serde_json::json!({"base_ms": 1000, "per_move_ms": 0}),
        serde_json::json!({"base_ms": 1000, "byoyomi": {"periods": u32::MAX, "period_ms": u64::MAX}}),
    ] {
        let e = api
            .post::<serde_json::Value>(
                "/api/games",
                Some(&stranger.token),
                &serde_json::json!({"time_control": tc}),
            )
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest), "{tc}");
    }
    let fresh = api.create_game(&stranger.token, &CreateGame::default()).await;
    api.join(&stranger.token, &fresh.id, Some(Side::Y)).await.unwrap();
    let e = api
        .join(&t.sessions[0].token, &fresh.id, Some(Side::Y))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::SeatTaken));
    let e = api.join(&stranger.token, &fresh.id, None).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::AlreadySeated));

    // A foreign Origin may not open a game socket.
    let req = tokio_tungstenite::tungstenite::http::Request::builder()
        .uri(format!("ws://{}/api/games/{}/ws", server.addr, t.game))
        .header("Host", server.addr.to_string())
        .header("Origin", "https://evil.example")
        .header("Connection", "Upgrade")
        .header("Upgrade", "websocket")
        .header("Sec-WebSocket-Version", "13")
        .header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
        .body(())
        .unwrap();
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status().as_u16(), 403),
        other => panic!("expected 403, got {other:?}"),
    }

    let state = t.api.state(&t.game).await;
    assert_eq!(state.status.ply, 2);
    server.stop().await;
}

/// A game names its variant: `sanguo` when the creator says nothing (every
/// existing client), stored and shown in the lobby, record and state, and the
/// lobby filters by it; unknown or unplayable variants are refused and create nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_name_their_variant_and_the_lobby_filters_by_it() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let s = api.guest().await;
    let plain = api.create_game(&s.token, &CreateGame::default()).await;
    assert_eq!(plain.settings.variant, protocol::Variant::Sanguo);
    let named: serde_json::Value = api
        .post("/api/games", Some(&s.token), &serde_json::json!({"variant": "sanguo"}))
        .await
        .unwrap();
    assert_eq!(named["settings"]["variant"], "sanguo", "{named}");
    let named_id = named["id"].as_str().unwrap().to_owned();
    assert_eq!(api.record(&named_id).await.settings.variant, protocol::Variant::Sanguo);
    assert_eq!(api.state(&named_id).await.settings.variant, protocol::Variant::Sanguo);

    let all: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    let sanguo: Vec<protocol::GameSummary> = api.get("/api/games?phase=open&variant=sanguo").await.unwrap();
    for id in [&plain.id, &named_id] {
        assert!(all.iter().any(|g| &g.id == id) && sanguo.iter().any(|g| &g.id == id));
    }
    assert!(sanguo.iter().all(|g| g.settings.variant == protocol::Variant::Sanguo));
    let e = api
        .get::<serde_json::Value>("/api/games?variant=chess")
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    assert!(e.body.message.contains("chess"), "{}", e.body.message);

    let before: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    let e = api
        .post::<serde_json::Value>("/api/games", Some(&s.token), &serde_json::json!({"variant": "chess"}))
        .await
        .unwrap_err();
    assert_eq!(e.status, 400, "{:?}", e.body);
    assert!(e.body.message.contains("chess"), "{}", e.body.message);
    for v in protocol::Variant::ALL
        .into_iter()
        .filter(|&v| server::room::check_playable(v).is_err())
    {
        let e = api
            .post::<serde_json::Value>("/api/games", Some(&s.token), &serde_json::json!({"variant": v}))
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (422, ErrorCode::VariantUnavailable), "{v}");
    }
    let after: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    assert_eq!(before.len(), after.len(), "a refused game is not created");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_sessions_lobby_and_operations() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let creds = serde_json::json!({"username": "zhuge_liang", "password": "eastwind208"});
    let s: protocol::Session = api.post("/api/accounts", None, &creds).await.unwrap();
    assert!(s.account);
    assert_eq!(s.token.len(), 64, "256-bit tokens");
    let e = api
        .post::<protocol::Session>("/api/accounts", None, &creds)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::UsernameTaken));
    let again: protocol::Session = api.post("/api/login", None, &creds).await.unwrap();
    assert_eq!(again.player, s.player);
    assert_ne!(again.token, s.token);
    let wrong = serde_json::json!({"username": "zhuge_liang", "password": "westwind208"});
    let e = api
        .post::<protocol::Session>("/api/login", None, &wrong)
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (401, ErrorCode::BadCredentials));
    let short = serde_json::json!({"username": "zl", "password": "x"});
    let e = api
        .post::<protocol::Session>("/api/accounts", None, &short)
        .await
        .unwrap_err();
    assert_eq!(e.status, 400);

    // The lobby lists public open games only.
    let public = api.create_game(&s.token, &CreateGame::default()).await;
    let private = api
        .create_game(
            &s.token,
            &CreateGame {
                public: Some(false),
                ..CreateGame::default()
            },
        )
        .await;
    let open: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    assert!(open.iter().any(|g| g.id == public.id));
    assert!(!open.iter().any(|g| g.id == private.id));
    assert_eq!(api.state(&private.id).await.id, private.id, "private games open by id");

    // Games per session.
    for _ in 0..8 {
        api.create_game(&s.token, &CreateGame::default()).await;
    }
    let e = api
        .post::<serde_json::Value>("/api/games", Some(&s.token), &serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (429, ErrorCode::TooManyGames));

    assert_eq!(api.get_text("/healthz").await, (200, "ok\n".into()));
    let (status, metrics) = api.get_text("/metrics").await;
    assert_eq!(status, 200);
    assert!(metrics.contains("sanguo_moves_total"));
    assert!(metrics.contains("sanguo_store_commit_seconds_bucket"));
    let (status, openapi) = api.get_text("/api/openapi.json").await;
    assert_eq!(status, 200);
    let doc: serde_json::Value = serde_json::from_str(&openapi).unwrap();
    assert!(doc["paths"]["/api/games"].is_object());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_clients_get_what_they_missed_or_a_snapshot() {
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.event_log = 8;
    let server = TestServer::start(config);
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let line = quiet_line(1, 12);
    t.play(&line[0], &mut []).await;
    t.play(&line[1], &mut []).await;

    // B leaves; the others see it at once.
    let b = t.players.remove(1);
    let last_v = b.v;
    b.close().await;
    let off = |e: &GameEvent| {
        matches!(
            e,
            GameEvent::Presence {
                side: Side::B,
                online: false,
                ..
            }
        )
    };
    t.players[0].until(off).await;
    t.players[1].until(off).await;
    // Two moves while B is away: Y, then W.
    for (idx, mv) in [(1, &line[2]), (0, &line[3])] {
        let ply = t.players[0].status.as_ref().unwrap().ply;
        t.players[idx].play(mv).await;
        for c in &mut t.players {
            c.until(|e| matches!(e, GameEvent::Moved { ply: p, .. } if *p == ply))
                .await;
        }
    }
    let mut b = Client::connect(server.addr, &t.game, Some(&t.sessions[1].token), Some(last_v)).await;
    assert_eq!(b.side, Some(Side::B));
    b.until(|e| {
        matches!(
            e,
            GameEvent::Presence {
                side: Side::B,
                online: true,
                ..
            }
        )
    })
    .await;
    assert_eq!(b.snapshots, 0, "missed events replayed, no snapshot");
    let kinds: Vec<&str> = b
        .events
        .iter()
        .map(|(_, e)| match e {
            GameEvent::Presence { .. } => "presence",
            GameEvent::Moved { .. } => "moved",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["presence", "moved", "moved", "presence"]);
    assert_eq!(b.events[0].0, last_v + 1);
    assert_eq!(b.status.as_ref().unwrap().ply, 4);
    assert_eq!(b.status.as_ref().unwrap().turn, Side::B);

    // A version no longer kept, or one from the future: a snapshot.
    let mut old = Client::connect(server.addr, &t.game, Some(&t.sessions[1].token), Some(1)).await;
    match old.next().await {
        ServerMsg::Snapshot { game } => {
            assert_eq!(game.status.ply, 4);
            assert_eq!(game.moves.len(), 4);
        }
        other => panic!("expected a snapshot, got {other:?}"),
    }
    let mut future = Client::connect(server.addr, &t.game, None, Some(10_000)).await;
    assert!(matches!(future.next().await, ServerMsg::Snapshot { .. }));
    server.stop().await;
}

async fn flag_test(tc: TimeControl, w_moves_after: Duration) -> (Table, TestServer, TestDb) {
    let (db, server) = pg_server().await;
    let mut t = Table::new(
        &server,
        &CreateGame {
            time_control: Some(tc),
            ..CreateGame::default()
        },
    )
    .await;
    let line = quiet_line(2, 3);
    tokio::time::sleep(w_moves_after).await;
    t.play(&line[0], &mut []).await;
    // B never moves: its flag falls by the server's timer.
    for c in &mut t.players {
        let e = c.until(|e| matches!(e, GameEvent::Eliminated(_))).await;
        assert_eq!(
            e,
            GameEvent::Eliminated(protocol::Departure {
                side: Side::B,
                reason: EliminationReason::Time,
                ply: 1,
                absorbed_by: None,
            })
        );
        c.until(|e| matches!(e, GameEvent::State { .. })).await;
    }
    // Play goes on: Y is to move (phase 2), its clock running.
    let status = t.players[0].status.clone().unwrap();
    assert_eq!(status.turn, Side::Y);
    assert_eq!(status.live, vec![Side::W, Side::Y]);
    assert!(status.clocks[2].running);
    (t, server, db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fischer_clock_increment_then_flag_eliminates() {
    let tc = TimeControl {
        base_ms: 600,
        increment_ms: 1_000,
        per_move_ms: None,
        byoyomi: None,
    };
    let (t, server, _db) = flag_test(tc, Duration::from_millis(50)).await;
    let record = t.api.record(&t.game).await;
    let m = &record.moves[0];
    assert!(m.spent_ms >= 40 && m.spent_ms < 600, "spent {}", m.spent_ms);
    assert_eq!(m.clocks_ms[0], 600 - m.spent_ms + 1_000, "Fischer increment");
    assert_eq!(record.events.last().unwrap().action, "timeout");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_move_limit_flags() {
    let tc = TimeControl {
        base_ms: 3_600_000,
        increment_ms: 0,
        per_move_ms: Some(700),
        byoyomi: None,
    };
    let (t, server, _db) = flag_test(tc, Duration::ZERO).await;
    let clocks = &t.players[0].status.as_ref().unwrap().clocks;
    assert!(clocks[1].remaining_ms > 3_500_000, "main time was not what flagged");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byoyomi_periods_run_out() {
    let tc = TimeControl {
        base_ms: 200,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: Some(Byoyomi {
            periods: 2,
            period_ms: 300,
        }),
    };
    let started = tokio::time::Instant::now();
    let (t, server, _db) = flag_test(tc, Duration::ZERO).await;
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "main time and both periods were used"
    );
    let clocks = &t.players[0].status.as_ref().unwrap().clocks;
    // The flagged side is charged its running turn (issue 14): no main time and no period left.
    assert_eq!(
        (clocks[1].remaining_ms, clocks[1].periods_left),
        (0, 0),
        "a flag is charged: no main time and no period left (not the clock of the turn's start)"
    );
    server.stop().await;
}

async fn drawn_table(server: &TestServer) -> Table {
    let mut t = Table::new(server, &CreateGame::default()).await;
    for mv in quiet_line(3, 45) {
        t.play(&mv, &mut []).await;
    }
    assert_eq!(t.players[0].status.as_ref().unwrap().round, 15);
    t
}

async fn offer(t: &mut Table) {
    t.players[0].send(&ClientMsg::OfferDraw).await;
    for c in &mut t.players {
        let e = c.until(|e| matches!(e, GameEvent::DrawOffered { .. })).await;
        assert_eq!(
            e,
            GameEvent::DrawOffered {
                by: Side::W,
                to: vec![Side::B, Side::Y]
            }
        );
    }
}

async fn answer(t: &mut Table, idx: usize, accept: bool) {
    t.players[idx].send(&ClientMsg::AnswerDraw { accept }).await;
    let side = Side::ALL[idx];
    for c in &mut t.players {
        c.until(|e| matches!(e, GameEvent::DrawAnswered { by, .. } if *by == side))
            .await;
    }
}

async fn finished(c: &mut Client) -> GameResult {
    match c.until(|e| matches!(e, GameEvent::Finished { .. })).await {
        GameEvent::Finished { result } => result,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_outcomes_of_a_draw_vote() {
    let (_db, server) = pg_server().await;
    let line = quiet_line(3, 48);

    // Both accept: all three draw.
    let mut t = drawn_table(&server).await;
    offer(&mut t).await;
    answer(&mut t, 1, true).await;
    t.players[2].send(&ClientMsg::AnswerDraw { accept: true }).await;
    let r = finished(&mut t.players[0]).await;
    assert_eq!(
        r.ending,
        Ending::Draw {
            reason: DrawReason::Agreement
        }
    );
    assert_eq!(r.outcomes, [Some(protocol::Outcome::Draw); 3]);

    // One accepts, the other declines: offerer and accepter lose.
    let mut t = drawn_table(&server).await;
    offer(&mut t).await;
    answer(&mut t, 1, true).await;
    t.players[2].send(&ClientMsg::AnswerDraw { accept: false }).await;
    let r = finished(&mut t.players[0]).await;
    assert_eq!(r.ending, Ending::DrawOfferRule { winner: Side::Y });
    assert_eq!(
        r.outcomes,
        [
            Some(protocol::Outcome::Loss),
            Some(protocol::Outcome::Loss),
            Some(protocol::Outcome::Win)
        ]
    );

    // Both decline: play on.
    let mut t = drawn_table(&server).await;
    offer(&mut t).await;
    answer(&mut t, 1, false).await;
    t.players[2].send(&ClientMsg::AnswerDraw { accept: false }).await;
    for c in &mut t.players {
        c.until(|e| matches!(e, GameEvent::DrawOfferLapsed { by: Side::W }))
            .await;
    }
    t.play(&line[45], &mut []).await;

    // Unanswered: it lapses when the offerer's next turn begins.
    let mut t = drawn_table(&server).await;
    offer(&mut t).await;
    t.play(&line[45], &mut []).await;
    t.play(&line[46], &mut []).await;
    assert!(t.players[0].status.as_ref().unwrap().pending_offer.is_some());
    t.play(&line[47], &mut []).await;
    t.players[0]
        .until(|e| matches!(e, GameEvent::DrawOfferLapsed { by: Side::W }))
        .await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn premature_resignation_warns_then_loses() {
    let (_db, server) = pg_server().await;
    let mut t = Table::new(&server, &CreateGame::default()).await;
    t.players[1].send(&ClientMsg::Resign).await;
    let e = t.players[0].until(|e| matches!(e, GameEvent::Warned { .. })).await;
    assert_eq!(
        e,
        GameEvent::Warned {
            side: Side::B,
            request: Request::Resign
        }
    );
    t.players[1].send(&ClientMsg::Resign).await;
    let e = t.players[0].until(|e| matches!(e, GameEvent::Eliminated(_))).await;
    assert!(matches!(
        e,
        GameEvent::Eliminated(protocol::Departure {
            side: Side::B,
            reason: EliminationReason::PrematureRequest,
            ..
        })
    ));
    t.players[0].until(|e| matches!(e, GameEvent::State { .. })).await;
    assert_eq!(t.players[0].status.as_ref().unwrap().live, vec![Side::W, Side::Y]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandonment_aborts_early_and_resigns_later() {
    let (_db, server) = pg_server().await;
    let settings = CreateGame {
        grace_ms: Some(300),
        ..CreateGame::default()
    };
    // Before 3 completed rounds: the game is aborted.
    let mut t = Table::new(&server, &settings).await;
    let b = t.players.remove(1);
    b.close().await;
    let e = t.players[0]
        .until(|e| {
            matches!(
                e,
                GameEvent::Presence {
                    side: Side::B,
                    online: false,
                    ..
                }
            )
        })
        .await;
    assert!(matches!(
        e,
        GameEvent::Presence {
            grace_ms: Some(300),
            ..
        }
    ));
    let r = finished(&mut t.players[0]).await;
    assert_eq!(r.ending, Ending::Aborted { by: Side::B });
    assert_eq!(r.outcomes, [None, None, None]);

    // After 3 rounds: it counts as a resignation and play goes on.
    let mut t = Table::new(&server, &settings).await;
    for mv in quiet_line(5, 9) {
        t.play(&mv, &mut []).await;
    }
    let b = t.players.remove(1);
    b.close().await;
    let e = t.players[0].until(|e| matches!(e, GameEvent::Eliminated(_))).await;
    assert!(matches!(
        e,
        GameEvent::Eliminated(protocol::Departure {
            side: Side::B,
            reason: EliminationReason::Abandon,
            ..
        })
    ));
    t.players[0].until(|e| matches!(e, GameEvent::State { .. })).await;
    let status = t.players[0].status.clone().unwrap();
    assert_eq!(status.live, vec![Side::W, Side::Y]);
    assert!(!status.legal_moves.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_loses_no_acknowledged_move() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let (moves, finished_game) = scripted_game(SEED);
    let half = 75;
    play_scripted(&mut t, 0, half, &mut []).await;
    let game = t.game.clone();
    let held: Vec<u64> = t.players.iter().map(|c| c.v).collect();
    // Kill it: no shutdown, nothing flushed.
    server.crash();
    drop(t.players);

    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let state = api.state(&game).await;
    assert_eq!(state.phase, Phase::Live);
    assert_eq!(state.status.ply as usize, half, "every acknowledged move is there");
    let mut players = Vec::new();
    for (i, s) in t.sessions.iter().enumerate() {
        let mut c = Client::connect(server.addr, &game, Some(&s.token), Some(held[i])).await;
        c.until(|e| matches!(e, GameEvent::Restored { .. })).await;
        players.push(c);
    }
    let mut t = Table {
        api,
        sessions: t.sessions,
        game,
        players,
    };
    t.sync().await;
    play_scripted(&mut t, half, moves.len(), &mut []).await;
    let r = finished(&mut t.players[0]).await;
    assert_eq!(r, GameResult::from(finished_game.result().unwrap()));
    let record = t.api.record(&t.game).await;
    let played: Vec<String> = moves.iter().map(|(_, m)| m.to_string()).collect();
    assert_eq!(record.moves.iter().map(|m| m.mv.clone()).collect::<Vec<_>>(), played);
    server.stop().await;
}

/// Random frames: every one is answered (or ignored), nothing panics, the
/// game is unchanged and the server still serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_panics_the_server() {
    let db = TestDb::create().await;
    let mut config = TestServer::config(Some(db.url.clone()));
    config.messages_per_second = 10_000;
    config.message_burst = 10_000;
    let server = TestServer::start(config);
    let mut t = Table::new(&server, &CreateGame::default()).await;
    let mut rng = Lcg(99);
    let pieces = [
        r#"{"type":"move","ply":"#,
        r#"{"type":"move","ply":0,"mv":""#,
        r#"{"type":"chat","channel":"players","text":""#,
        r#"{"type":"answer_draw","accept":"#,
        r#"{"type":"hello","protocol":"#,
        r#"{"type":"ping","n":-"#,
        "W52-O",
        "\u{0}\u{ffff}",
        "999999999999999999999999",
        "null",
        "\"}",
        "[[[[[[",
        "{}",
        "🐎",
    ];
    let before = t.api.state(&t.game).await;
    for i in 0..300 {
        let mut text = String::new();
        for _ in 0..1 + rng.below(4) {
            text.push_str(pieces[rng.below(pieces.len())]);
        }
        let c = &mut t.players[i % 3];
        c.send_text(text).await;
    }
    // Each connection still answers, and the game did not move.
    for (i, c) in t.players.iter_mut().enumerate() {
        c.send(&ClientMsg::Ping { n: 4242 + i as u64 }).await;
        loop {
            if let ServerMsg::Pong { n, .. } = c.next().await {
                assert_eq!(n, 4242 + i as u64);
                break;
            }
        }
    }
    let after = t.api.state(&t.game).await;
    assert_eq!(after.status.ply, before.status.ply);
    assert_eq!(after.moves, before.moves);
    assert_eq!(t.api.get_text("/healthz").await.0, 200);
    server.stop().await;
}
