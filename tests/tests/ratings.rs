//! Ratings over real sockets (issue 16): three accounts play rated games and
//! their ratings move exactly as `skillratings`' multi-team Weng-Lin function
//! computes; a casual game and an aborted game leave them untouched; a
//! restart loses none; guests and bots are refused at rated games.

use engine::{Action, Direction, Event, Game};
use protocol::players::{PlayerProfile, TimeClass};
use protocol::{ClientMsg, CreateGame, Ending, ErrorCode, GameEvent, GameResult, Session, Side};
use sanguo_tests::harness::{Api, Client, Table, TestDb, TestServer};
use sanguo_tests::{Lcg, pick};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// `n` quiet plies (no capture): all three sides stay in the game.
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
    assert_eq!(game.position().live().count(), 3);
    out
}

/// A game created by `accounts[0]` with `settings`, the three accounts
/// seated W, B, Y and connected.
async fn table(server: &TestServer, api: &Api, accounts: &[Session], settings: &CreateGame) -> Table {
    let game = api.create_game(&accounts[0].token, settings).await.id;
    for (s, side) in accounts.iter().zip(Side::ALL) {
        api.join(&s.token, &game, Some(side)).await.expect("join");
    }
    let mut players = Vec::new();
    for s in accounts {
        players.push(Client::connect(server.addr, &game, Some(&s.token), None).await);
    }
    let mut t = Table {
        api: api.clone(),
        sessions: accounts.to_vec(),
        game,
        players,
    };
    t.sync().await;
    t
}

async fn finished(c: &mut Client) -> GameResult {
    match c.until(|e| matches!(e, GameEvent::Finished { .. })).await {
        GameEvent::Finished { result } => result,
        _ => unreachable!(),
    }
}

/// Plays 45 quiet plies (to round 15), then W offers a draw.
async fn to_the_offer(t: &mut Table) {
    for mv in quiet_line(3, 45) {
        t.play(&mv, &mut []).await;
    }
    t.players[0].send(&ClientMsg::OfferDraw).await;
    for c in &mut t.players {
        c.until(|e| matches!(e, GameEvent::DrawOffered { .. })).await;
    }
}

/// B answers, then Y: both accept (a draw of all three), or B accepts and Y
/// declines (the draw-offer rule: Y wins, W and B lose together).
async fn answers(t: &mut Table, y_accepts: bool) -> GameResult {
    t.players[1].send(&ClientMsg::AnswerDraw { accept: true }).await;
    for c in &mut t.players {
        c.until(|e| matches!(e, GameEvent::DrawAnswered { by: Side::B, .. }))
            .await;
    }
    t.players[2].send(&ClientMsg::AnswerDraw { accept: y_accepts }).await;
    finished(&mut t.players[0]).await
}

async fn profile(api: &Api, player: &str) -> PlayerProfile {
    api.get(&format!("/api/players/{player}")).await.expect("profile")
}

/// The one rating of a profile (rapid 三国象棋: 10 min + 5 s), as (μ, σ).
fn rapid(p: &PlayerProfile) -> Option<WengLinRating> {
    let r = p.ratings.iter().find(|r| r.class == TimeClass::Rapid)?;
    Some(WengLinRating {
        rating: r.current.mu,
        uncertainty: r.current.sigma,
    })
}

/// What the crate computes for three players placed `ranks`.
fn expected(before: [WengLinRating; 3], ranks: [usize; 3]) -> Vec<WengLinRating> {
    let teams = before.map(|r| vec![r]);
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(ranks)
        .map(|(t, r)| (&t[..], MultiTeamOutcome::new(r)))
        .collect();
    weng_lin_multi_team(&input, &WengLinConfig::new())
        .into_iter()
        .map(|t| t[0])
        .collect()
}

/// Equal up to JSON's float text (serde_json may read the last bit differently).
fn close(got: Option<WengLinRating>, want: WengLinRating) -> bool {
    got.is_some_and(|g| (g.rating - want.rating).abs() < 1e-9 && (g.uncertainty - want.uncertainty).abs() < 1e-9)
}

async fn ratings_of(api: &Api, accounts: &[Session]) -> [Option<WengLinRating>; 3] {
    let mut out = [None; 3];
    for (k, s) in accounts.iter().enumerate() {
        out[k] = rapid(&profile(api, &s.player).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rated_games_move_ratings_casual_and_aborted_ones_do_not_and_a_restart_keeps_them() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let accounts = vec![api.account().await, api.account().await, api.account().await];
    let rated = CreateGame {
        rated: Some(true),
        ..CreateGame::default()
    };

    // Guests and bots are refused at rated games, with words.
    let guest = api.guest().await;
    let e = api
        .post::<serde_json::Value>("/api/games", Some(&guest.token), &serde_json::json!({"rated": true}))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    let e = api
        .post::<serde_json::Value>(
            "/api/games",
            Some(&accounts[0].token),
            &serde_json::json!({"rated": true, "bots": {"Y": 1}}),
        )
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    let open = api.create_game(&accounts[0].token, &rated).await;
    assert!(open.settings.rated);
    let e = api.join(&guest.token, &open.id, None).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    let e = api.add_bot(&accounts[0].token, &open.id, None, 1).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    assert!(
        api.state(&open.id).await.seats.iter().all(Option::is_none),
        "the refusals seated nobody"
    );

    // A rated game: the draw-offer rule (Y first, W and B tied second).
    assert_eq!(
        ratings_of(&api, &accounts).await,
        [None; 3],
        "no rating before a rated game"
    );
    let mut t = table(&server, &api, &accounts, &rated).await;
    to_the_offer(&mut t).await;
    let r = answers(&mut t, false).await;
    assert_eq!(r.ending, Ending::DrawOfferRule { winner: Side::Y });
    let start = WengLinRating::new();
    let want = expected([start; 3], [2, 2, 1]);
    let record = api.record(&t.game).await;
    assert_eq!(record.rating_changes.len(), 3, "the record shows the changes");
    for (k, c) in record.rating_changes.iter().enumerate() {
        assert_eq!((c.side, c.player.as_str()), (Side::ALL[k], accounts[k].player.as_str()));
        assert_eq!(c.rank, [2, 2, 1][k]);
        assert_eq!(c.class, TimeClass::Rapid);
        assert_eq!((c.before.mu, c.before.sigma), (start.rating, start.uncertainty));
        let after = WengLinRating {
            rating: c.after.mu,
            uncertainty: c.after.sigma,
        };
        assert!(
            close(Some(after), want[k]),
            "{after:?} is what the crate computes: {:?}",
            want[k]
        );
        assert_eq!(c.before.rating, 1500);
    }
    assert!(want[2].rating > 25.0 && want[0].rating < 25.0);
    let after_first = ratings_of(&api, &accounts).await;
    assert!((0..3).all(|k| close(after_first[k], want[k])), "{after_first:?}");
    let p = profile(&api, &accounts[2].player).await;
    assert_eq!(p.ratings[0].history.len(), 1);
    assert_eq!(p.ratings[0].history[0].game, t.game);
    assert_eq!(p.games[0].game, t.game);
    assert!(p.games[0].rated && p.games[0].rating_change.is_some_and(|d| d > 0));
    assert_eq!(p.seats[Side::Y.index()].win, 1);

    // A casual game and an aborted rated game leave every rating as it was.
    let mut t = table(&server, &api, &accounts, &CreateGame::default()).await;
    to_the_offer(&mut t).await;
    answers(&mut t, false).await;
    assert!(api.record(&t.game).await.rating_changes.is_empty());
    let mut t = table(
        &server,
        &api,
        &accounts,
        &CreateGame {
            grace_ms: Some(300),
            ..rated.clone()
        },
    )
    .await;
    t.players.remove(1).close().await;
    let r = finished(&mut t.players[0]).await;
    assert_eq!(r.ending, Ending::Aborted { by: Side::B });
    assert!(api.record(&t.game).await.rating_changes.is_empty());
    assert_eq!(ratings_of(&api, &accounts).await, after_first);

    // A rated game goes on across a restart and is rated once, from the
    // ratings the restart kept.
    let mut t = table(&server, &api, &accounts, &rated).await;
    for mv in quiet_line(3, 45) {
        t.play(&mv, &mut []).await;
    }
    let game = t.game.clone();
    drop(t);
    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    assert_eq!(ratings_of(&api, &accounts).await, after_first, "a restart keeps them");
    let mut players = Vec::new();
    for s in &accounts {
        players.push(Client::connect(server.addr, &game, Some(&s.token), None).await);
    }
    let mut t = Table {
        api: api.clone(),
        sessions: accounts.clone(),
        game,
        players,
    };
    t.sync().await;
    t.players[0].send(&ClientMsg::OfferDraw).await;
    for c in &mut t.players {
        c.until(|e| matches!(e, GameEvent::DrawOffered { .. })).await;
    }
    let r = answers(&mut t, true).await;
    assert_eq!(r.outcomes, [Some(protocol::Outcome::Draw); 3]);
    let before = after_first.map(Option::unwrap);
    let want = expected(before, [1, 1, 1]);
    let now = ratings_of(&api, &accounts).await;
    assert!((0..3).all(|k| close(now[k], want[k])), "{now:?}");
    assert!(
        now != after_first,
        "the draw moved them (sigma shrinks, unequal mu move)"
    );
    assert_eq!(profile(&api, &accounts[0].player).await.ratings[0].games, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_accounts_pressing_the_same_tile_land_in_one_game() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let accounts = [api.account().await, api.account().await, api.account().await];
    let seek = |token: &str, tile: &str| {
        let api = api.clone();
        let token = token.to_owned();
        let tile = tile.to_owned();
        async move {
            api.post::<serde_json::Value>("/api/pairing", Some(&token), &serde_json::json!({ "tile": tile }))
                .await
        }
    };
    // A tile that does not exist is refused with words.
    let e = seek(&accounts[0].token, "7+7").await.unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    // A guest at the same tile waits in the casual pool: never with accounts.
    let guest = api.guest().await;
    assert_eq!(seek(&guest.token, "3+2").await.unwrap()["state"], "waiting");

    let first = seek(&accounts[0].token, "3+2").await.unwrap();
    assert_eq!(
        (first["state"].as_str(), first["rated"].as_bool()),
        (Some("waiting"), Some(true))
    );
    assert_eq!(seek(&accounts[1].token, "3+2").await.unwrap()["state"], "waiting");
    // Someone at another tile does not count.
    let other = api.account().await;
    assert_eq!(seek(&other.token, "10+5").await.unwrap()["state"], "waiting");
    let tiles: serde_json::Value = api.get("/api/pairing/tiles").await.unwrap();
    let waiting_at = |key: &str| tiles.as_array().unwrap().iter().find(|t| t["key"] == key).unwrap()["waiting"].clone();
    assert_eq!((waiting_at("3+2"), waiting_at("10+5")), (3.into(), 1.into()));

    // The third: a game for the three, seats at random, rated, 3+2, started.
    let third = seek(&accounts[2].token, "3+2").await.unwrap();
    assert_eq!(third["state"], "matched", "{third}");
    let game = third["game"].as_str().unwrap().to_owned();
    let mut sides = Vec::new();
    for s in &accounts {
        let st: serde_json::Value = api.get_as("/api/pairing", &s.token).await.unwrap();
        assert_eq!(
            (st["state"].as_str(), st["game"].as_str()),
            (Some("matched"), Some(game.as_str()))
        );
        sides.push(Side::parse(st["side"].as_str().unwrap()).unwrap());
    }
    sides.sort();
    assert_eq!(sides, Side::ALL.to_vec());
    let snap = api.state(&game).await;
    assert!(snap.settings.rated);
    assert_eq!(
        (
            snap.settings.time_control.base_ms,
            snap.settings.time_control.increment_ms
        ),
        (180_000, 2_000)
    );
    assert_eq!(snap.phase, protocol::Phase::Live);
    for s in &accounts {
        assert!(snap.seats.iter().flatten().any(|seat| seat.player == s.player));
    }
    // The guest and the 10+5 seeker still wait; leaving empties the pool.
    let st: serde_json::Value = api.get_as("/api/pairing", &guest.token).await.unwrap();
    assert_eq!(st["state"], "waiting");
    let left = api
        .send(
            reqwest::Method::DELETE,
            "/api/pairing",
            Some(&guest.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(left.0, 204);
    let st: serde_json::Value = api.get_as("/api/pairing", &guest.token).await.unwrap();
    assert_eq!(st["state"], "idle");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_becomes_an_account_with_its_games_and_sessions_are_listed_and_revoked() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let guest = api.guest().await;
    let game = api.create_game(&guest.token, &CreateGame::default()).await.id;
    api.join(&guest.token, &game, Some(Side::B)).await.expect("join");

    // The password policy, with its own codes.
    for (body, code) in [
        (
            serde_json::json!({"username": "cao_cao", "password": "seven77"}),
            ErrorCode::BadPassword,
        ),
        (
            serde_json::json!({"username": "cao_cao", "password": "x".repeat(129)}),
            ErrorCode::BadPassword,
        ),
        (
            serde_json::json!({"username": "c!", "password": "long enough"}),
            ErrorCode::BadUsername,
        ),
    ] {
        let e = api
            .post::<Session>("/api/accounts", Some(&guest.token), &body)
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (400, code), "{body}");
    }
    let long = "长".repeat(64);
    let account: Session = api
        .post(
            "/api/accounts",
            Some(&guest.token),
            &serde_json::json!({"username": "cao_cao", "password": long}),
        )
        .await
        .expect("a 64-character password is taken");
    assert_eq!(
        (account.player.as_str(), account.account),
        (guest.player.as_str(), true)
    );
    // The guest's game is the account's; its old token now speaks for the account.
    let p = profile(&api, &account.player).await;
    assert_eq!((p.name.as_str(), p.account), ("cao_cao", true));
    assert_eq!(p.games.len(), 1);
    assert_eq!((p.games[0].game.as_str(), p.games[0].side), (game.as_str(), Side::B));
    let me: serde_json::Value = api.get_as("/api/me", &guest.token).await.unwrap();
    assert_eq!(me["account"], true);
    // An account cannot sign up again; the name is taken for others.
    let e = api
        .post::<Session>(
            "/api/accounts",
            Some(&account.token),
            &serde_json::json!({"username": "cao_cao2", "password": "long enough"}),
        )
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    let other = api.guest().await;
    let e = api
        .post::<Session>(
            "/api/accounts",
            Some(&other.token),
            &serde_json::json!({"username": "cao_cao", "password": "long enough"}),
        )
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (409, ErrorCode::UsernameTaken));
    let me: serde_json::Value = api.get_as("/api/me", &other.token).await.unwrap();
    assert_eq!(me["account"], false, "a refused sign-up changes nothing");

    // Sessions: both listed, the current one marked; revoking the guest's old one.
    let list: Vec<protocol::players::SessionInfo> = api.get_as("/api/sessions", &account.token).await.unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list.iter().filter(|s| s.current).count(), 1);
    let old = list.iter().find(|s| !s.current).unwrap().id.clone();
    let (status, _) = api
        .send(
            reqwest::Method::DELETE,
            &format!("/api/sessions/{old}"),
            Some(&other.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(status, 404, "only one's own sessions");
    let (status, _) = api
        .send(
            reqwest::Method::DELETE,
            &format!("/api/sessions/{old}"),
            Some(&account.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(status, 204);
    let e = api
        .get_as::<serde_json::Value>("/api/me", &guest.token)
        .await
        .unwrap_err();
    assert_eq!(e.status, 401);
    // Logging out ends the current one.
    let (status, _) = api
        .send(
            reqwest::Method::POST,
            "/api/logout",
            Some(&account.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(status, 204);
    let e = api
        .get_as::<serde_json::Value>("/api/me", &account.token)
        .await
        .unwrap_err();
    assert_eq!(e.status, 401);
    let again: Session = api
        .post(
            "/api/login",
            None,
            &serde_json::json!({"username": "cao_cao", "password": long}),
        )
        .await
        .unwrap();
    assert_eq!(again.player, guest.player);
    // The leaderboard: nobody rated yet; a bad class is refused.
    let board: Vec<serde_json::Value> = api.get("/api/leaderboard?class=rapid").await.unwrap();
    assert!(board.is_empty());
    let e = api
        .get::<serde_json::Value>("/api/leaderboard?class=hyper")
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    let e = api.get::<serde_json::Value>("/api/players/nobody").await.unwrap_err();
    assert_eq!((e.status, e.body.code), (404, ErrorCode::NotFound));
    server.stop().await;
}
