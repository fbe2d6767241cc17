//! Bots in seats, over real sockets: a real server, a fresh Postgres
//! database per test, people played by tokio-tungstenite clients.

use engine::Game;
use protocol::{
    ClientMsg, CreateGame, EliminationReason, Ending, ErrorCode, GameEvent, GameSummary, Outcome, Phase, ServerMsg,
    Side, Snapshot, TimeControl,
};
use sanguo_tests::harness::{Api, Client, TestDb, TestServer, persons_move};

async fn pg_server() -> (TestDb, TestServer) {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    (db, server)
}

fn bots(seats: &[(Side, u8)]) -> Option<std::collections::BTreeMap<Side, u8>> {
    Some(seats.iter().copied().collect())
}

/// A game of `me` and the bots at `seats` (level each), created and joined by
/// `me` (in the seat left free), and `me`'s socket on it.
async fn person_and_bots(server: &TestServer, api: &Api, token: &str, seats: &[(Side, u8)]) -> (Snapshot, Client) {
    let created = api
        .create_game(
            token,
            &CreateGame {
                bots: bots(seats),
                ..CreateGame::default()
            },
        )
        .await;
    api.join(token, &created.id, None).await.unwrap();
    let c = Client::connect(server.addr, &created.id, Some(token), None).await;
    (created, c)
}

/// `side` (a person on `c`) plays `n` moves, each as soon as its turn comes;
/// false if it left the game (or the game ended) first.
async fn person_plays(c: &mut Client, side: Side, n: usize) -> bool {
    for i in 0..n {
        if !c.until_turn(side).await {
            return false;
        }
        let st = c.status.clone().unwrap();
        c.send(&ClientMsg::Move {
            ply: st.ply,
            mv: persons_move(&st, i as u64),
        })
        .await;
        let ply = st.ply;
        c.until(|e| matches!(e, GameEvent::Moved { ply: p, .. } if *p == ply))
            .await;
    }
    true
}

/// The bots' moves a client saw: (side, time charged).
fn moves_by(c: &Client, sides: &[Side]) -> Vec<(Side, u64)> {
    c.events
        .iter()
        .filter_map(|(_, e)| match e {
            GameEvent::Moved { side, spent_ms, .. } if sides.contains(side) => Some((*side, *spent_ms)),
            _ => None,
        })
        .collect()
}

fn no_flag_fell(c: &Client) {
    for (_, e) in &c.events {
        if let GameEvent::Eliminated(d) = e {
            assert_ne!(d.reason, EliminationReason::Time, "{} flagged", d.side);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_and_two_bots_play_and_the_bots_keep_their_clock() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let me = api.guest().await;
    // 2 s per move (步时): level 3 would search longer than that unbounded on a
    // loaded machine, so its deadline is what ends its search.
    let tc = TimeControl {
        base_ms: 600_000,
        increment_ms: 0,
        per_move_ms: Some(2_000),
        byoyomi: None,
    };
    let created = api
        .create_game(
            &me.token,
            &CreateGame {
                time_control: Some(tc),
                bots: bots(&[(Side::B, 3), (Side::Y, 2)]),
                ..CreateGame::default()
            },
        )
        .await;
    assert_eq!(created.phase, Phase::Open);
    assert!(created.seats[0].is_none());
    for (i, level) in [(1, 3), (2, 2)] {
        let seat = created.seats[i].as_ref().expect("a bot sits there");
        assert_eq!(seat.bot, Some(level));
        assert!(seat.online, "a bot is always there");
        assert_eq!(seat.name, format!("Bot (level {level})"));
    }
    // The lobby shows them as bots.
    let open: Vec<GameSummary> = api.get("/api/games").await.unwrap();
    let line = open.iter().find(|g| g.id == created.id).expect("listed");
    assert_eq!(
        line.seats.each_ref().map(|s| s.as_ref().and_then(|s| s.bot)),
        [None, Some(3), Some(2)]
    );

    api.join(&me.token, &created.id, None)
        .await
        .expect("the free seat is W's");
    let mut w = Client::connect(server.addr, &created.id, Some(&me.token), None).await;
    assert_eq!(w.side, Some(Side::W));
    let rounds = 6;
    let stayed = person_plays(&mut w, Side::W, rounds).await;
    assert!(stayed, "W kept its king for {rounds} rounds");
    // Each of W's moves was answered by both bots.
    let bot_moves = moves_by(&w, &[Side::B, Side::Y]);
    assert!(bot_moves.len() >= 2 * (rounds - 1), "{bot_moves:?}");
    for (side, spent) in &bot_moves {
        assert!(*spent <= 2_000, "{side} spent {spent} ms of its 2000");
    }
    no_flag_fell(&w);
    let state = api.state(&created.id).await;
    assert_eq!(state.phase, Phase::Live, "the game goes on");
    // W's last move was at ply 3 × (rounds − 1).
    assert!(state.status.ply as usize > 3 * (rounds - 1), "ply {}", state.status.ply);
    let live: Vec<GameSummary> = api.get("/api/games?phase=live").await.unwrap();
    let line = live.iter().find(|g| g.id == created.id).expect("listed");
    assert_eq!(line.seats[1].as_ref().unwrap().bot, Some(3));
    assert_eq!(line.seats[0].as_ref().unwrap().bot, None);
    let metrics = api.get_text("/metrics").await.1;
    let thought: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("sanguo_bot_think_seconds_count "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the bot thinking histogram");
    assert!(
        thought >= bot_moves.len() as u64,
        "{thought} searches for {} moves",
        bot_moves.len()
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_bots_play_a_game_to_its_end_and_it_is_recorded() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let me = api.guest().await;
    let created = api
        .create_game(
            &me.token,
            &CreateGame {
                time_control: Some(TimeControl {
                    base_ms: 120_000,
                    increment_ms: 100,
                    per_move_ms: None,
                    byoyomi: None,
                }),
                bots: bots(&[(Side::W, 1), (Side::B, 1), (Side::Y, 1)]),
                ..CreateGame::default()
            },
        )
        .await;
    assert_eq!(created.phase, Phase::Live, "three bots start at once");
    // A spectator watches to the end (it may already be over when it arrives).
    let mut watcher = Client::connect(server.addr, &created.id, None, None).await;
    let over = match watcher.next().await {
        ServerMsg::Snapshot { game } => game.phase == Phase::Finished,
        other => panic!("expected a snapshot, got {other:?}"),
    };
    if !over {
        watcher.until(|e| matches!(e, GameEvent::Finished { .. })).await;
    }
    no_flag_fell(&watcher);
    let state = api.state(&created.id).await;
    assert_eq!(state.phase, Phase::Finished);
    let result = state.result.clone().expect("a result");
    let record = api.record(&created.id).await;
    assert_eq!(record.phase, Phase::Finished);
    assert_eq!(record.result, Some(result));
    assert_eq!(record.moves.len(), state.moves.len());
    assert!(record.moves.len() > 30, "a real game: {} plies", record.moves.len());
    assert_eq!(
        record.seats.each_ref().map(|s| s.as_ref().and_then(|s| s.bot)),
        [Some(1); 3]
    );
    // The record replays to the same end.
    let mut game = Game::new(engine::Direction::Ccw);
    for (at, e) in record.events.iter().enumerate() {
        let action = match e.action.strip_prefix("move ") {
            Some(mv) => engine::Action::Move(engine::parse_move(mv).unwrap()),
            None => match e.action.as_str() {
                "offer_draw" => engine::Action::OfferDraw,
                "accept_draw" => engine::Action::AnswerDraw { accept: true },
                "decline_draw" => engine::Action::AnswerDraw { accept: false },
                "resign" => engine::Action::Resign,
                other => panic!("a bot game has no {other}"),
            },
        };
        game.apply(engine::Event {
            side: e.side.into(),
            action,
            at: at as u64,
        })
        .unwrap();
    }
    assert!(game.is_finished());
    let finished: Vec<GameSummary> = api.get("/api/games?phase=finished").await.unwrap();
    let line = finished.iter().find(|g| g.id == created.id).expect("listed");
    assert_eq!(line.seats[2].as_ref().unwrap().bot, Some(1));
    server.stop().await;
}

/// W and B people, Y a level-1 bot; both people play 15 rounds, up to W's 16th
/// turn. `None` if a side left the game before.
async fn people_and_a_bot_after_15_rounds(server: &TestServer, api: &Api) -> Option<(Client, Client)> {
    let w_session = api.guest().await;
    let b_session = api.guest().await;
    let created = api
        .create_game(
            &w_session.token,
            &CreateGame {
                bots: bots(&[(Side::Y, 1)]),
                ..CreateGame::default()
            },
        )
        .await;
    api.join(&w_session.token, &created.id, Some(Side::W)).await.unwrap();
    api.join(&b_session.token, &created.id, Some(Side::B)).await.unwrap();
    let mut w = Client::connect(server.addr, &created.id, Some(&w_session.token), None).await;
    let mut b = Client::connect(server.addr, &created.id, Some(&b_session.token), None).await;
    for _ in 0..15 {
        for (c, side) in [(&mut w, Side::W), (&mut b, Side::B)] {
            if !person_plays(c, side, 1).await {
                return None;
            }
        }
    }
    // W's 16th turn, with everyone still in.
    (w.until_turn(Side::W).await && w.status.as_ref().is_some_and(|st| st.live.len() == 3)).then_some((w, b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_will_not_help_two_people_gang_up_on_it() {
    // W and B are people; Y is a bot. After 15 rounds W offers a draw and B
    // accepts: the bot declines (phase 3), so under the one-accepts-one-
    // declines rule W and B lose and the bot wins.
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    // The bot's search has a time budget, so the game differs from run to run: a side can be
    // mated before the 15th round. The premise (all three in after 15 rounds) is then set up
    // again on a new game.
    let mut table = None;
    for _ in 0..5 {
        table = people_and_a_bot_after_15_rounds(&server, &api).await;
        if table.is_some() {
            break;
        }
    }
    let (mut w, mut b) = table.expect("in 5 games, all three sides were still in after 15 rounds once");
    // W's 16th turn: 15 rounds are complete.
    assert!(w.until_turn(Side::W).await);
    assert_eq!(w.status.as_ref().unwrap().round, 15);
    assert_eq!(w.status.as_ref().unwrap().live.len(), 3, "phase 3");
    w.send(&ClientMsg::OfferDraw).await;
    b.until(|e| matches!(e, GameEvent::DrawOffered { by: Side::W, .. }))
        .await;
    b.send(&ClientMsg::AnswerDraw { accept: true }).await;
    let answers = |e: &GameEvent| matches!(e, GameEvent::DrawAnswered { by: Side::Y, .. });
    match w.until(answers).await {
        GameEvent::DrawAnswered { accept, .. } => assert!(!accept, "the bot declines in phase 3"),
        _ => unreachable!(),
    }
    let result = match w.until(|e| matches!(e, GameEvent::Finished { .. })).await {
        GameEvent::Finished { result } => result,
        _ => unreachable!(),
    };
    assert_eq!(result.ending, Ending::DrawOfferRule { winner: Side::Y });
    assert_eq!(
        result.outcomes,
        [Some(Outcome::Loss), Some(Outcome::Loss), Some(Outcome::Win)]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_decline_a_draw_offer_in_phase_three_and_play_on() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let me = api.guest().await;
    // The bots' searches have a time budget, so the game differs from run to run (more so on a
    // busy machine): W can be mated before its 16th turn. The premise (W to move after 15
    // rounds, all three in) is then set up again on a new game.
    let mut table = None;
    for _ in 0..5 {
        let (created, mut w) = person_and_bots(&server, &api, &me.token, &[(Side::B, 1), (Side::Y, 2)]).await;
        if person_plays(&mut w, Side::W, 15).await
            && w.until_turn(Side::W).await
            && w.status.as_ref().is_some_and(|st| st.live.len() == 3)
        {
            table = Some((created, w));
            break;
        }
    }
    let (created, mut w) = table.expect("in 5 games, all three sides were still in after 15 rounds once");
    w.send(&ClientMsg::OfferDraw).await;
    w.until(|e| matches!(e, GameEvent::DrawOffered { by: Side::W, .. }))
        .await;
    for _ in 0..2 {
        match w.until(|e| matches!(e, GameEvent::DrawAnswered { .. })).await {
            GameEvent::DrawAnswered { by, accept } => assert!(!accept, "{by} declines"),
            _ => unreachable!(),
        }
    }
    w.until(|e| matches!(e, GameEvent::DrawOfferLapsed { by: Side::W }))
        .await;
    // Play goes on: W (still to move) moves, and a bot answers with a move.
    assert!(person_plays(&mut w, Side::W, 1).await);
    w.until(|e| matches!(e, GameEvent::Moved { side, .. } if *side != Side::W))
        .await;
    assert_eq!(api.state(&created.id).await.phase, Phase::Live);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_seat_survives_a_server_crash() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let me = api.guest().await;
    let (created, mut b) = person_and_bots(&server, &api, &me.token, &[(Side::W, 2), (Side::Y, 1)]).await;
    assert_eq!(b.side, Some(Side::B));
    assert!(person_plays(&mut b, Side::B, 3).await);
    // Crash right after B's move: W's bot is thinking (or has just moved).
    let held = b.v;
    server.crash();
    drop(b);

    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let state = api.state(&created.id).await;
    assert_eq!(state.phase, Phase::Live);
    assert_eq!(state.seats[0].as_ref().unwrap().bot, Some(2));
    assert_eq!(state.seats[2].as_ref().unwrap().bot, Some(1));
    let before = state.status.ply;
    let mut b = Client::connect(server.addr, &created.id, Some(&me.token), Some(held)).await;
    assert_eq!(b.side, Some(Side::B));
    // The restored bots move on their own, and answer the person's moves.
    assert!(person_plays(&mut b, Side::B, 3).await);
    assert!(b.until_turn(Side::B).await);
    let after = b.status.as_ref().unwrap().ply;
    assert!(
        after >= before + 8,
        "bots moved after the restart: ply {before} → {after}"
    );
    no_flag_fell(&b);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bot_requests_are_refused_and_change_nothing() {
    let (_db, server) = pg_server().await;
    let api = Api::new(server.base());
    let me = api.guest().await;
    let other = api.guest().await;

    // At creation: a level out of range, an unknown side.
    let bad_level = api
        .post::<serde_json::Value>("/api/games", Some(&me.token), &serde_json::json!({"bots": {"B": 4}}))
        .await
        .unwrap_err();
    assert_eq!((bad_level.status, bad_level.body.code), (400, ErrorCode::BadRequest));
    assert!(bad_level.body.message.contains("1 to 3"), "{}", bad_level.body.message);
    let bad_side = api
        .post::<serde_json::Value>("/api/games", Some(&me.token), &serde_json::json!({"bots": {"Q": 1}}))
        .await
        .unwrap_err();
    assert_eq!(bad_side.status, 400);
    let none: Vec<GameSummary> = api.get("/api/games").await.unwrap();
    assert!(none.is_empty(), "no game was created");

    let game = api.create_game(&me.token, &CreateGame::default()).await.id;
    let refused = |r: Result<protocol::Joined, sanguo_tests::harness::ApiFailure>| {
        let f = r.unwrap_err();
        (f.status, f.body.code)
    };
    // Not the creator; a bad level; no token; an unknown game.
    assert_eq!(
        refused(api.add_bot(&other.token, &game, Some(Side::B), 1).await),
        (403, ErrorCode::Forbidden)
    );
    assert_eq!(
        refused(api.add_bot(&me.token, &game, Some(Side::B), 0).await),
        (400, ErrorCode::BadRequest)
    );
    assert_eq!(
        refused(api.add_bot("nope", &game, Some(Side::B), 1).await),
        (401, ErrorCode::Unauthorized)
    );
    assert_eq!(
        refused(api.add_bot(&me.token, "nogame", Some(Side::B), 1).await),
        (404, ErrorCode::NotFound)
    );
    let missing_level = api
        .post::<serde_json::Value>(
            &format!("/api/games/{game}/bots"),
            Some(&me.token),
            &serde_json::json!({"side": "B"}),
        )
        .await
        .unwrap_err();
    assert_eq!(missing_level.status, 400);
    assert!(
        api.state(&game).await.seats.iter().all(Option::is_none),
        "nothing changed"
    );

    // A taken seat; then the last seat starts the game and no more bots fit.
    api.join(&other.token, &game, Some(Side::B)).await.unwrap();
    assert_eq!(
        refused(api.add_bot(&me.token, &game, Some(Side::B), 1).await),
        (409, ErrorCode::SeatTaken)
    );
    let seated = api.add_bot(&me.token, &game, None, 2).await.unwrap();
    assert_eq!(seated.side, Side::W, "the first free seat");
    api.add_bot(&me.token, &game, Some(Side::Y), 1).await.unwrap();
    let state = api.state(&game).await;
    assert_eq!(state.phase, Phase::Live);
    assert_eq!(
        state.seats.each_ref().map(|s| s.as_ref().and_then(|s| s.bot)),
        [Some(2), None, Some(1)]
    );
    assert_eq!(
        refused(api.add_bot(&me.token, &game, None, 1).await),
        (409, ErrorCode::NotOpen)
    );
    server.stop().await;
}
