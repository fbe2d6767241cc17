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
    t.players[2]
        .send(&ClientMsg::AnswerDraw { accept: y_accepts })
        .await;
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
    assert_eq!(ratings_of(&api, &accounts).await, [None; 3], "no rating before a rated game");
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
        assert_eq!((c.after.mu, c.after.sigma), (want[k].rating, want[k].uncertainty));
        assert_eq!(c.before.rating, 1500);
    }
    assert!(want[2].rating > 25.0 && want[0].rating < 25.0);
    let after_first = ratings_of(&api, &accounts).await;
    assert_eq!(after_first, [Some(want[0]), Some(want[1]), Some(want[2])]);
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
    assert_eq!(
        ratings_of(&api, &accounts).await,
        [Some(want[0]), Some(want[1]), Some(want[2])]
    );
    assert_eq!(profile(&api, &accounts[0].player).await.ratings[0].games, 2);
    server.stop().await;
}
