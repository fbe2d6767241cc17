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

/// Gives `player` a rapid 三国象棋 rating shown as `rating` (σ 5, 5 games),
/// written to the store as a rated history would leave it.
async fn set_rating(db: &TestDb, player: &str, rating: i64) {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&db.url).await.expect("db");
    let mu = 25.0 + (rating - 1500) as f64 / 42.0;
    sqlx::query(
        "INSERT INTO ratings (player_id, variant, class, mu, sigma, rating, deviation, games, updated_ms) \
         VALUES ($1, 'sanguo', 'rapid', $2, '5', $3, 210, 5, 0)",
    )
    .bind(player)
    .bind(mu.to_string())
    .bind(rating)
    .execute(&mut c)
    .await
    .expect("rating");
    let _ = c.close().await;
}

/// `side` leaves the game by resigning twice (before round 15 the first
/// request is only a warning).
async fn resign(clients: &mut [Client], side: Side) {
    let c = &mut clients[side.index()];
    c.send(&ClientMsg::Resign).await;
    c.until(|ev| matches!(ev, GameEvent::Warned { side: s, .. } if *s == side))
        .await;
    c.send(&ClientMsg::Resign).await;
    c.until(|ev| matches!(ev, GameEvent::Eliminated(d) if d.side == side))
        .await;
}

/// The record's rating changes as (place, μ and σ before, μ and σ after).
fn changes_of(r: &protocol::GameRecord) -> Vec<(u32, WengLinRating, WengLinRating)> {
    r.rating_changes
        .iter()
        .map(|c| {
            (
                c.rank,
                WengLinRating {
                    rating: c.before.mu,
                    uncertainty: c.before.sigma,
                },
                WengLinRating {
                    rating: c.after.mu,
                    uncertainty: c.after.sigma,
                },
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_tournament_takes_accounts_seeds_round_one_by_rating_and_rates_a_correction_anew() {
    use protocol::tournament::{ArbiterAction, Round, Tournament};
    use protocol::{Outcome, Phase};
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let org = api.account().await;
    let t: Tournament = api
        .post(
            "/api/tournaments",
            Some(&org.token),
            &serde_json::json!({ "name": "rated swiss", "rated": true, "rounds": 2 }),
        )
        .await
        .expect("create");
    assert!(t.settings.rated);
    let code = t.code.clone().expect("code");
    let register = |token: String| {
        let api = api.clone();
        let code = code.clone();
        async move {
            api.post::<Tournament>(
                "/api/tournaments/register",
                Some(&token),
                &serde_json::json!({ "code": code }),
            )
            .await
        }
    };
    // A guest is refused, with words; nothing is registered.
    let guest = api.guest().await;
    let e = register(guest.token.clone()).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    assert!(e.body.message.contains("accounts only"), "{}", e.body.message);
    let mut players = Vec::new();
    for _ in 0..6 {
        let p = api.account().await;
        register(p.token.clone()).await.expect("register");
        let _: Tournament = api
            .post(
                &format!("/api/tournaments/{}/check-in", t.id),
                Some(&p.token),
                &serde_json::json!({}),
            )
            .await
            .expect("check in");
        players.push(p);
    }
    let t: Tournament = api.get(&format!("/api/tournaments/{}", t.id)).await.unwrap();
    assert_eq!(t.players.len(), 6);
    // Seeds 1–6; seeds 1 and 6 have no rating. By rating: 3 (1900), 5 (1700),
    // 2 (1600), 4 (1400), then the unrated by seed: 1, 6.
    for (k, r) in [(1, 1600), (2, 1900), (3, 1400), (4, 1700)] {
        set_rating(&db, &players[k].player, r).await;
    }
    let round: Round = api
        .post(
            &format!("/api/tournaments/{}/rounds", t.id),
            Some(&org.token),
            &serde_json::json!({}),
        )
        .await
        .expect("round 1");
    let ids = |ks: [usize; 3]| ks.map(|k| players[k].player.clone());
    // Thirds 3 5 | 2 4 | 1 6: the k-th of each together (by seed: 1 2 3, 4 5 6).
    assert_eq!(
        round.tables.iter().map(|p| p.seats.clone()).collect::<Vec<_>>(),
        vec![ids([2, 1, 0]), ids([4, 3, 5])]
    );
    let game = round.tables[0].game.clone();
    let snap = api.state(&game).await;
    assert!(snap.settings.rated, "a rated tournament's games are rated");

    // Table 1 plays: W and B resign, Y (seed 1, unrated) wins.
    let mut clients = Vec::new();
    for k in [2, 1, 0] {
        clients.push(Client::connect(server.addr, &game, Some(&players[k].token), None).await);
    }
    resign(&mut clients, Side::W).await;
    resign(&mut clients, Side::B).await;
    let result = finished(&mut clients[2]).await;
    assert_eq!(result.ending, Ending::LastStanding { winner: Side::Y });
    let start = WengLinRating::new();
    let rated_at = |r: i64| WengLinRating {
        rating: 25.0 + (r - 1500) as f64 / 42.0,
        uncertainty: 5.0,
    };
    let before = [rated_at(1900), rated_at(1600), start];
    let first = changes_of(&api.record(&game).await);
    // W and B left at the same ply (no move between): they tie second.
    let want = expected(before, [2, 2, 1]);
    assert_eq!(first.iter().map(|c| c.0).collect::<Vec<_>>(), [2, 2, 1]);
    for (k, c) in first.iter().enumerate() {
        assert!(
            close(Some(c.1), before[k]) && close(Some(c.2), want[k]),
            "seat {k}: {c:?}"
        );
    }

    // The arbiter corrects the result: W wins. The game is rated anew in its
    // place: from the same ratings before, with the corrected places.
    let _: serde_json::Value = api
        .post(
            &format!("/api/tournaments/{}/games/{game}/arbiter", t.id),
            Some(&org.token),
            &serde_json::json!({
                "action": ArbiterAction::Adjudicate { outcomes: [Outcome::Win, Outcome::Loss, Outcome::Loss] },
                "reason": "W's flag fell wrongly",
            }),
        )
        .await
        .expect("correction");
    let record = api.record(&game).await;
    assert_eq!(record.phase, Phase::Finished);
    let corrected = changes_of(&record);
    // W wins; of the losers Y never left, B had: Y second, B third.
    let want = expected(before, [1, 3, 2]);
    assert_eq!(corrected.iter().map(|c| c.0).collect::<Vec<_>>(), [1, 3, 2]);
    for (k, c) in corrected.iter().enumerate() {
        assert!(
            close(Some(c.1), before[k]) && close(Some(c.2), want[k]),
            "seat {k}: {c:?}"
        );
    }
    // The current ratings are the corrected ones; each still counts one game
    // more than before the tournament.
    for (k, seat) in [(2, 0), (1, 1), (0, 2)] {
        let p = profile(&api, &players[k].player).await;
        assert!(close(rapid(&p), want[seat]), "player {k}");
        let r = p.ratings.iter().find(|r| r.class == TimeClass::Rapid).unwrap();
        assert_eq!(r.games, if k == 0 { 1 } else { 6 }, "player {k}");
    }
    // The profile filtered by variant: 三国象棋 has the rating and the game
    // (lost at Y, as corrected), 三国暗棋 nothing; an unknown variant is refused.
    let me = &players[0].player;
    let only: PlayerProfile = api.get(&format!("/api/players/{me}?variant=sanguo")).await.unwrap();
    assert_eq!(
        (only.ratings.len(), only.games.len(), only.seats[Side::Y.index()].loss),
        (1, 1, 1)
    );
    let none: PlayerProfile = api.get(&format!("/api/players/{me}?variant=anqi")).await.unwrap();
    assert_eq!(
        (none.ratings.len(), none.games.len(), none.seats[Side::Y.index()].loss),
        (0, 0, 0)
    );
    let e = api
        .get::<PlayerProfile>(&format!("/api/players/{me}?variant=chess"))
        .await
        .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_seek_with_a_rating_range_admits_the_players_in_range_and_starts_with_three() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let [a, b, c, far] = [
        api.account().await,
        api.account().await,
        api.account().await,
        api.account().await,
    ];
    set_rating(&db, &far.player, 2100).await;
    let guest = api.guest().await;
    let post = |token: &str, body: serde_json::Value| {
        let api = api.clone();
        let token = token.to_owned();
        async move { api.post::<serde_json::Value>("/api/seeks", Some(&token), &body).await }
    };
    let join = |token: &str, id: &str| {
        let api = api.clone();
        let token = token.to_owned();
        let path = format!("/api/seeks/{id}/join");
        async move {
            api.post::<serde_json::Value>(&path, Some(&token), &serde_json::json!({}))
                .await
        }
    };
    let rapid_clock = serde_json::json!({ "base_ms": 600_000, "increment_ms": 5_000 });
    // Bad seeks are refused with words: a range too wide, a clock under the
    // minimum, a guest's rated seek.
    let e = post(
        &a.token,
        serde_json::json!({ "time_control": rapid_clock, "range": { "below": 5000, "above": 0 } }),
    )
    .await
    .unwrap_err();
    assert_eq!((e.status, e.body.code), (400, ErrorCode::BadRequest));
    let e = post(
        &a.token,
        serde_json::json!({ "time_control": { "base_ms": 0, "increment_ms": 0 } }),
    )
    .await
    .unwrap_err();
    assert_eq!(e.status, 400);
    let e = post(
        &guest.token,
        serde_json::json!({ "time_control": rapid_clock, "rated": true }),
    )
    .await
    .unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    let list: serde_json::Value = api.get_as("/api/seeks", &a.token).await.unwrap();
    assert_eq!(list["seeks"], serde_json::json!([]), "nothing was posted");

    // A posts a rated rapid seek, −300/+300 around its 1500.
    let posted = post(
        &a.token,
        serde_json::json!({ "time_control": rapid_clock, "rated": true, "range": { "below": 300, "above": 300 } }),
    )
    .await
    .unwrap();
    assert_eq!(posted["state"], "waiting");
    let id = posted["seek"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (
            posted["seek"]["min_rating"].as_i64(),
            posted["seek"]["max_rating"].as_i64()
        ),
        (Some(1200), Some(1800))
    );
    // Every lobby lists it, with what the viewer may do.
    let seen = |token: &str| {
        let api = api.clone();
        let token = token.to_owned();
        let id = id.clone();
        async move {
            let list: serde_json::Value = api.get_as("/api/seeks", &token).await.unwrap();
            list["seeks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| k["id"] == id.as_str())
                .cloned()
        }
    };
    let for_far = seen(&far.token).await.expect("listed");
    assert_eq!(
        (
            for_far["you"]["rating"].as_i64(),
            for_far["you"]["may_join"].as_bool(),
            for_far["you"]["refusal"]["code"].as_str()
        ),
        (Some(2100), Some(false), Some("out_of_rating_range"))
    );
    assert_eq!(
        seen(&guest.token).await.unwrap()["you"]["refusal"]["code"],
        "rated_needs_account"
    );
    assert_eq!(seen(&b.token).await.unwrap()["you"]["may_join"], true);
    assert_eq!(seen(&a.token).await.unwrap()["you"]["member"], true);
    // Outside the range, or a guest: refused with words, nothing changes.
    let e = join(&far.token, &id).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::OutOfRatingRange));
    assert!(e.body.message.contains("1200–1800"), "{}", e.body.message);
    let e = join(&guest.token, &id).await.unwrap_err();
    assert_eq!((e.status, e.body.code), (403, ErrorCode::RatedNeedsAccount));
    let e = join(&a.token, "nosuchseek").await.unwrap_err();
    assert_eq!((e.status, e.body.code), (404, ErrorCode::NotFound));
    assert_eq!(seen(&a.token).await.unwrap()["players"].as_array().unwrap().len(), 1);

    // B takes it and waits; C's take fills it: a rated 10+5 game of the three, seats drawn.
    let st = join(&b.token, &id).await.unwrap();
    assert_eq!(
        (st["state"].as_str(), st["seek"]["players"].as_array().map(Vec::len)),
        (Some("waiting"), Some(2))
    );
    let st = join(&c.token, &id).await.unwrap();
    assert_eq!(st["state"], "matched", "{st}");
    let game = st["game"].as_str().unwrap().to_owned();
    let snap = api.state(&game).await;
    assert!(snap.settings.rated);
    assert_eq!(snap.phase, protocol::Phase::Live);
    assert_eq!(
        (
            snap.settings.time_control.base_ms,
            snap.settings.time_control.increment_ms
        ),
        (600_000, 5_000)
    );
    let mut seated: Vec<&str> = snap.seats.iter().flatten().map(|s| s.player.as_str()).collect();
    seated.sort_unstable();
    let mut want = vec![a.player.as_str(), b.player.as_str(), c.player.as_str()];
    want.sort_unstable();
    assert_eq!(seated, want);
    // A and B learn it from the list (once); the seek is gone.
    for s in [&a, &b] {
        let list: serde_json::Value = api.get_as("/api/seeks", &s.token).await.unwrap();
        assert_eq!(list["matched"]["game"], game.as_str());
        assert!(list["seeks"].as_array().unwrap().is_empty());
        let again: serde_json::Value = api.get_as("/api/seeks", &s.token).await.unwrap();
        assert!(again.get("matched").is_none());
    }

    // A casual seek: the creator cancels it and it is gone; a taker who
    // leaves another leaves only itself.
    let posted = post(&far.token, serde_json::json!({ "time_control": rapid_clock }))
        .await
        .unwrap();
    let id2 = posted["seek"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        join(&guest.token, &id2).await.unwrap()["state"],
        "waiting",
        "a casual seek takes guests"
    );
    let gone = api
        .send(
            reqwest::Method::DELETE,
            &format!("/api/seeks/{id2}"),
            Some(&guest.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(gone.0, 204);
    let list: serde_json::Value = api.get_as("/api/seeks", &far.token).await.unwrap();
    assert_eq!(
        list["seeks"][0]["players"].as_array().unwrap().len(),
        1,
        "the guest left"
    );
    let gone = api
        .send(
            reqwest::Method::DELETE,
            &format!("/api/seeks/{id2}"),
            Some(&far.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(gone.0, 204);
    let list: serde_json::Value = api.get_as("/api/seeks", &far.token).await.unwrap();
    assert!(list["seeks"].as_array().unwrap().is_empty(), "the creator cancelled it");
    let gone = api
        .send(
            reqwest::Method::DELETE,
            &format!("/api/seeks/{id2}"),
            Some(&far.token),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(gone.0, 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_tournaments_bot_table_plays_casual_and_a_registered_guest_keeps_an_event_casual() {
    use protocol::tournament::{Round, Tournament};
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let org = api.account().await;
    let create = |body: serde_json::Value| {
        let api = api.clone();
        let token = org.token.clone();
        async move {
            api.post::<Tournament>("/api/tournaments", Some(&token), &body)
                .await
                .expect("create")
        }
    };
    let enter = |t: Tournament, s: Session| {
        let api = api.clone();
        async move {
            api.post::<Tournament>(
                "/api/tournaments/register",
                Some(&s.token),
                &serde_json::json!({ "code": t.code.clone().unwrap() }),
            )
            .await?;
            api.post::<Tournament>(
                &format!("/api/tournaments/{}/check-in", t.id),
                Some(&s.token),
                &serde_json::json!({}),
            )
            .await
        }
    };
    // A casual event with a guest registered cannot be made rated: refused
    // with the guest's name, the settings unchanged.
    let casual = create(serde_json::json!({ "name": "casual" })).await;
    let guest = api.guest().await;
    enter(casual.clone(), guest.clone())
        .await
        .expect("a guest enters a casual event");
    let e = api
        .send(
            reqwest::Method::PATCH,
            &format!("/api/tournaments/{}", casual.id),
            Some(&org.token),
            &serde_json::json!({ "settings": { "name": "casual", "rated": true }, "reason": "make it count" }),
        )
        .await;
    assert_eq!(e.0, 403, "{}", e.1);
    assert!(
        e.1.contains("rated_needs_account") && e.1.contains(&guest.name),
        "{}",
        e.1
    );
    let t: Tournament = api.get(&format!("/api/tournaments/{}", casual.id)).await.unwrap();
    assert!(!t.settings.rated);

    // A rated event whose byes bots fill: the table of three is rated, the
    // bot table casual.
    let rated =
        create(serde_json::json!({ "name": "rated", "rated": true, "byes": { "kind": "bot", "level": 1 } })).await;
    for _ in 0..4 {
        enter(rated.clone(), api.account().await)
            .await
            .expect("an account enters");
    }
    let round: Round = api
        .post(
            &format!("/api/tournaments/{}/rounds", rated.id),
            Some(&org.token),
            &serde_json::json!({}),
        )
        .await
        .expect("round 1");
    assert_eq!(round.tables.len(), 2);
    for table in &round.tables {
        let bots = api
            .state(&table.game)
            .await
            .seats
            .iter()
            .flatten()
            .filter(|s| s.bot.is_some())
            .count();
        let rated = api.state(&table.game).await.settings.rated;
        assert_eq!(
            (bots, rated),
            if bots == 0 { (0, true) } else { (2, false) },
            "table {}",
            table.table
        );
    }
    server.stop().await;
}
