//! 三国演弈棋 (variant `yanyi`) over real sockets: three players create,
//! join and play a game whose first round gives 被将先走 (魏 in check moves
//! before 吴), the server restarts in the middle and restores it, players
//! resign until one is left; and a game with a bot seat that answers at its
//! turns, restored too.

use protocol::yanyi::{HanState, TurnReason};
use protocol::{CreateGame, EliminationReason, Ending, GameEvent, Phase, ServerMsg, Side};
use sanguo_tests::harness::{Api, Client, Table, TestDb, TestServer, yanyi_quiet_move};

fn yanyi() -> CreateGame {
    CreateGame {
        variant: Some(protocol::Variant::Yanyi),
        ..CreateGame::default()
    }
}

/// Reads until the restored game reaches the client: the `restored` event,
/// or a snapshot when the versions it missed (the old server's last presence
/// events at shutdown) are no longer kept.
async fn until_restored(c: &mut Client) {
    loop {
        match c.next().await {
            ServerMsg::Snapshot { .. } => return,
            ServerMsg::Event { event: Some(e), .. } if matches!(*e, GameEvent::Restored { .. }) => return,
            _ => {}
        }
    }
}

/// Stops the server gracefully, starts another on the same database and
/// reconnects every player from the version it held: each catches up with
/// the restored game.
async fn restart(server: TestServer, db: &TestDb, t: Table) -> (TestServer, Table) {
    let held: Vec<u64> = t.players.iter().map(|c| c.v).collect();
    server.stop().await;
    drop(t.players);
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let state = api.state(&t.game).await;
    assert_eq!(state.phase, Phase::Live);
    assert_eq!(state.settings.variant, protocol::Variant::Yanyi);
    let mut players = Vec::new();
    for (i, s) in t.sessions.iter().enumerate() {
        let mut c = Client::connect(server.addr, &t.game, Some(&s.token), Some(held[i])).await;
        until_restored(&mut c).await;
        players.push(c);
    }
    let mut t = Table {
        api,
        sessions: t.sessions,
        game: t.game,
        players,
    };
    t.sync().await;
    (server, t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_players_play_yanyi_through_a_restart_until_one_is_left() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut t = Table::new(&server, &yanyi()).await;
    let st = t.players[0].status.clone().unwrap();
    assert_eq!(st.turn, Side::W, "吴 (seat W) moves first");
    assert!(st.position.ends_with(" G - GBR"), "{}", st.position);
    assert_eq!(st.legal_moves.len(), 48, "RULES-YANYI §11: 48 first moves");
    let y = st.yanyi.clone().expect("the yanyi block");
    assert_eq!((y.turn_reason, y.han), (TurnReason::Start, HanState::Static));
    assert!(st.counters.is_none());

    // A move out of turn is refused and changes nothing.
    t.players[1].play("e14-e13").await;
    assert_eq!(t.players[1].error().await, protocol::ErrorCode::NotYourTurn);
    // §11: 魏 steps its i14 soldier aside, 蜀's first cannon move to i3 checks 魏 over i4.
    t.play("q12-o13", &mut []).await;
    t.play("i14-h14", &mut []).await;
    t.play("f3-i3", &mut []).await;
    let st = t.players[0].status.clone().unwrap();
    assert_eq!(st.turn, Side::B, "魏 is in check and moves first (吴 is skipped)");
    assert_eq!(st.in_check, vec![Side::B]);
    let y = st.yanyi.clone().unwrap();
    assert_eq!((y.turn_reason, y.last_mover), (TurnReason::Check, Some(Side::Y)));
    assert!(y.first_move_pending.is_empty());
    let checks = t.players[2]
        .events
        .iter()
        .rev()
        .find_map(|(_, e)| match e {
            GameEvent::Moved { checks, .. } => Some(checks.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(checks, vec![Side::B]);

    // Play on (quiet moves: no capture, no check), restart in the middle.
    for i in 0..6 {
        let st = t.players[0].status.clone().unwrap();
        t.play(&yanyi_quiet_move(&st, i), &mut []).await;
    }
    let before = t.api.state(&t.game).await;
    let (server, mut t) = restart(server, &db, t).await;
    let after = t.players[0].status.clone().unwrap();
    assert_eq!(after.position, before.status.position, "restored exactly");
    assert_eq!(after.turn, before.status.turn);
    assert_eq!(after.yanyi, before.status.yanyi);
    for i in 6..10 {
        let st = t.players[0].status.clone().unwrap();
        if st.legal_moves.is_empty() {
            break;
        }
        t.play(&yanyi_quiet_move(&st, i), &mut []).await;
    }

    // A seat not to move resigns: it is eliminated, nobody absorbs its pieces.
    let st = t.players[0].status.clone().unwrap();
    let resigner = *st.live.iter().find(|s| **s != st.turn).unwrap();
    t.players[resigner.index()].send(&protocol::ClientMsg::Resign).await;
    let e = t.players[0].until(|e| matches!(e, GameEvent::Eliminated(_))).await;
    let GameEvent::Eliminated(d) = e else { unreachable!() };
    assert_eq!(
        (d.side, d.reason, d.absorbed_by),
        (resigner, EliminationReason::Resign, None)
    );
    t.sync().await;
    let st = t.players[0].status.clone().unwrap();
    assert_eq!(st.live.len(), 2);
    assert_eq!(st.yanyi.as_ref().unwrap().turn_reason, TurnReason::Other);
    assert!(
        !st.position
            .contains(&format!("{}K@", ["G", "B", "R"][resigner.index()]))
    );

    // The last two: one resigns, the other wins.
    let loser = st.live[0];
    let winner = st.live[1];
    t.players[loser.index()].send(&protocol::ClientMsg::Resign).await;
    let e = t.players[winner.index()]
        .until(|e| matches!(e, GameEvent::Finished { .. }))
        .await;
    let GameEvent::Finished { result } = e else {
        unreachable!()
    };
    assert_eq!(result.ending, Ending::LastStanding { winner });
    let mut placing = [0u8; 3];
    placing[winner.index()] = 1;
    placing[loser.index()] = 2;
    placing[resigner.index()] = 3;
    assert_eq!(result.placing, Some(placing));
    let record = t.api.record(&t.game).await;
    assert_eq!(record.phase, Phase::Finished);
    assert_eq!(record.moves.len() as u32, st.ply);
    assert_eq!(record.moves[2].mv, "f3-i3");
    assert_eq!(record.moves[3].side, Side::B, "the checked 魏 moved out of turn");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_seat_plays_yanyi_at_its_turns_and_after_a_restore() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut api = Api::new(server.base());
    let people = [api.guest().await, api.guest().await];
    let game = api.create_game(&people[0].token, &yanyi()).await.id;
    api.join(&people[0].token, &game, Some(Side::W)).await.unwrap();
    api.join(&people[1].token, &game, Some(Side::Y)).await.unwrap();
    api.add_bot(&people[0].token, &game, Some(Side::B), 1).await.unwrap();
    let mut w = Client::connect(server.addr, &game, Some(&people[0].token), None).await;
    let mut y = Client::connect(server.addr, &game, Some(&people[1].token), None).await;
    let v = api.state(&game).await.v;
    w.until_v(v).await;
    y.until_v(v).await;
    // The people move whenever it is their turn; the bot (魏, seat B) answers at its own.
    let mut bot_moves = 0;
    let mut restarted = false;
    let mut server = server;
    for i in 0..40u64 {
        if w.status.as_ref().is_some_and(|s| s.ply >= 12) {
            break;
        }
        if i == 3 && !restarted {
            // restart once, mid-game: the bot seat plays on after the restore
            let held = (w.v, y.v);
            server.stop().await;
            drop(w);
            drop(y);
            server = TestServer::start(TestServer::config(Some(db.url.clone())));
            api = Api::new(server.base());
            w = Client::connect(server.addr, &game, Some(&people[0].token), Some(held.0)).await;
            y = Client::connect(server.addr, &game, Some(&people[1].token), Some(held.1)).await;
            until_restored(&mut w).await;
            until_restored(&mut y).await;
            restarted = true;
        }
        let st = w.status.clone().unwrap();
        assert!(!st.legal_moves.is_empty(), "the game goes on at ply {}", st.ply);
        let ply = st.ply;
        match st.turn {
            Side::W => w.play(&yanyi_quiet_move(&st, i)).await,
            Side::Y => y.play(&yanyi_quiet_move(&st, i)).await,
            Side::B => bot_moves += 1,
        }
        let moved = w
            .until(|e| matches!(e, GameEvent::Moved { ply: p, .. } if *p == ply))
            .await;
        if let GameEvent::Moved { side, .. } = moved {
            assert_eq!(side, st.turn);
        }
        let v = w.v;
        y.until_v(v).await;
    }
    assert!(restarted);
    assert!(bot_moves >= 2, "the bot moved at its turns ({bot_moves})");
    let snap = api.state(&game).await;
    assert_eq!(snap.seats[1].as_ref().and_then(|s| s.bot), Some(1));
    // Both people resign: the bot is the last one standing.
    w.send(&protocol::ClientMsg::Resign).await;
    y.send(&protocol::ClientMsg::Resign).await;
    let e = w.until(|e| matches!(e, GameEvent::Finished { .. })).await;
    let GameEvent::Finished { result } = e else {
        unreachable!()
    };
    assert_eq!(result.ending, Ending::LastStanding { winner: Side::B });
    server.stop().await;
}

/// A tournament of 三国演弈棋: its games are yanyi games, played and
/// scored as any other (the winner 3 points, survival by elimination order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yanyi_round_robin_plays_yanyi_games_and_scores_them() {
    use protocol::tournament::{Round, Standings, Tournament};
    use serde_json::json;
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let org = api.account().await;
    let t: Tournament = api
        .post(
            "/api/tournaments",
            Some(&org.token),
            &json!({"name": "Yanyi cup", "variant": "yanyi", "pairing": {"kind": "round_robin", "group_size": 3}}),
        )
        .await
        .expect("create tournament");
    let code = t.code.clone().expect("the organizer sees the code");
    let mut players = Vec::new();
    for _ in 0..3 {
        let p = api.guest().await;
        let _: Tournament = api
            .post("/api/tournaments/register", Some(&p.token), &json!({ "code": code }))
            .await
            .expect("register");
        let _: Tournament = api
            .post(
                &format!("/api/tournaments/{}/check-in", t.id),
                Some(&p.token),
                &json!({}),
            )
            .await
            .expect("check in");
        players.push(p);
    }
    let r: Round = api
        .post(
            &format!("/api/tournaments/{}/rounds", t.id),
            Some(&org.token),
            &json!({}),
        )
        .await
        .expect("pair");
    assert_eq!(r.tables.len(), 1);
    let table = &r.tables[0];
    let snap = api.state(&table.game).await;
    assert_eq!(snap.settings.variant, protocol::Variant::Yanyi);
    let token = |id: &String| players.iter().find(|p| &p.player == id).unwrap().token.clone();
    let mut clients = Vec::new();
    for id in &table.seats {
        clients.push(Client::connect(server.addr, &table.game, Some(&token(id)), None).await);
    }
    let mut t3 = Table {
        api: Api::new(server.base()),
        sessions: Vec::new(),
        game: table.game.clone(),
        players: clients,
    };
    t3.sync().await;
    // Everyone moves once (leaving earlier would abort), then 蜀 and 魏 resign: 吴 wins.
    for i in 0..3 {
        let st = t3.players[0].status.clone().unwrap();
        t3.play(&yanyi_quiet_move(&st, i), &mut []).await;
    }
    for side in [Side::Y, Side::B] {
        let c = &mut t3.players[side.index()];
        c.send(&protocol::ClientMsg::Resign).await;
        c.until(|e| matches!(e, GameEvent::Eliminated(d) if d.side == side))
            .await;
    }
    let e = t3.players[0].until(|e| matches!(e, GameEvent::Finished { .. })).await;
    let GameEvent::Finished { result } = e else {
        unreachable!()
    };
    assert_eq!(result.ending, Ending::LastStanding { winner: Side::W });
    // The standings count it once the tournament has seen the result.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let st = loop {
        let st: Standings = api
            .get(&format!("/api/tournaments/{}/standings", t.id))
            .await
            .expect("standings");
        if st.standings.iter().any(|s| s.games == 1) || std::time::Instant::now() > deadline {
            break st;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let top = &st.standings[0];
    assert_eq!(top.player, table.seats[0], "吴 (seat W) won");
    assert_eq!((top.points, top.wins, top.games), (3, 1, 1));
    server.stop().await;
}

/// The shortest real line from the start to an absorption after an alliance
/// (the browser test `web-client/tests/yanyi.test.mjs` clicks the same one):
/// 蜀's horse allies 蜀 and 魏 on a8 and hands the 汉 force to 吴, then 吴's
/// horse l14-j15 mates 魏, whose king its own horse on i16 and advisors shut
/// in; 吴 absorbs (RULES-YANYI §8 rule 1).
const ABSORPTION_LINE: [&str; 19] = [
    "q12-o13", "l17-k15", "f1-g3", "o13-m12", "k15-i16", "g3-f5", "m12-l14", "e17-e16", "f5-e7", "q9-p9", "e16-e17",
    "e7-d5", "p9-q9", "e17-e16", "d5-c7", "q9-p9", "e16-e17", "c7-a8", "l14-j15",
];

/// The `game_finals` row of a game, read behind the server's back.
async fn stored_final(c: &mut sqlx::PgConnection, game: &str) -> Option<protocol::Snapshot> {
    sqlx::query_as::<_, (String,)>("SELECT snapshot FROM game_finals WHERE game_id = $1")
        .bind(game)
        .fetch_optional(c)
        .await
        .expect("game_finals")
        .map(|(json,)| serde_json::from_str(&json).expect("a snapshot"))
}

/// A finished game's final state, its own record lines included, is kept
/// with its finish; its record and its state are served from it — not by
/// replaying the game — and equal what the room showed live and what a
/// replay shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_games_final_state_is_stored_with_its_finish_and_read_not_replayed() {
    use sqlx::{Connection, PgConnection};
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut t = Table::new(&server, &yanyi()).await;
    for mv in ABSORPTION_LINE {
        t.play(mv, &mut []).await;
    }
    t.sync().await;
    let st = t.players[0].status.clone().unwrap();
    assert_eq!(st.live, vec![Side::W, Side::Y], "魏 is out");
    assert_eq!(st.turn, Side::Y, "蜀 moves after 魏's elimination (R-10)");
    let y = st.yanyi.clone().unwrap();
    assert_eq!(y.alliance, None, "the first elimination ends the alliance");
    assert_eq!(y.han, HanState::AlliedTo { holder: Side::W });
    assert_eq!(
        y.absorptions,
        vec![protocol::yanyi::Absorption {
            absorbed: Side::B,
            by: Side::W
        }]
    );
    let out = t.players[0]
        .events
        .iter()
        .find_map(|(_, e)| match e {
            GameEvent::Eliminated(d) => Some(*d),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (out.side, out.reason, out.absorbed_by),
        (Side::B, EliminationReason::Mate, Some(Side::W))
    );
    // what the room showed live, line by line
    let live: Vec<protocol::Note> = t.api.state(&t.game).await.notes;
    let texts: Vec<&str> = live.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(texts, vec!["alliance B Y", "han W", "absorbed B W"]);
    assert_eq!(live.iter().map(|n| n.ply).collect::<Vec<_>>(), vec![18, 18, 19]);
    // nothing is kept before the finish: the record of a live game asks its room
    let mut c = PgConnection::connect(&db.url).await.expect("db");
    assert_eq!(stored_final(&mut c, &t.game).await, None);
    let record = t.api.record(&t.game).await;
    assert_eq!(record.notes, live);
    assert_eq!(
        record.moves.len(),
        ABSORPTION_LINE.len(),
        "the mating move is in the record"
    );

    // 蜀 resigns: 吴 wins; the finish kept the lines.
    t.players[2].send(&protocol::ClientMsg::Resign).await;
    t.players[0].until(|e| matches!(e, GameEvent::Finished { .. })).await;
    let kept = stored_final(&mut c, &t.game).await.expect("stored with the finish");
    assert_eq!(kept.notes, live);
    assert_eq!(kept.phase, Phase::Finished);
    let record = t.api.record(&t.game).await;
    assert_eq!(record.phase, Phase::Finished);
    assert_eq!(record.notes, live);
    let in_room = t.api.state(&t.game).await;
    assert_eq!(in_room.notes, live, "/state shows the same lines");

    // A server that never held the room: its state and record come from the
    // stored final state, equal to what a replay of the game shows.
    let game = t.game.clone();
    drop(t);
    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let stored = api.state(&game).await;
    assert_eq!(stored.notes, live);
    assert_eq!(stored.status, in_room.status);
    assert_eq!(
        (stored.moves.len(), stored.phase),
        (ABSORPTION_LINE.len(), Phase::Finished)
    );
    // Served from what was stored: a row changed behind the server's back
    // shows (a replay would recompute the original lines).
    let mut marked = kept.clone();
    marked.notes[2].text = "absorbed B W (kept)".into();
    sqlx::query("UPDATE game_finals SET snapshot = $1 WHERE game_id = $2")
        .bind(serde_json::to_string(&marked).unwrap())
        .bind(&game)
        .execute(&mut c)
        .await
        .unwrap();
    assert_eq!(
        api.record(&game).await.notes,
        stored.notes,
        "the first read is kept in memory"
    );
    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    assert_eq!(api.record(&game).await.notes, marked.notes, "read from game_finals");
    // Without the row (a game finished before the table), a replay shows the same state.
    sqlx::query("DELETE FROM game_finals WHERE game_id = $1")
        .bind(&game)
        .execute(&mut c)
        .await
        .unwrap();
    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let replayed = api.state(&game).await;
    assert_eq!(replayed, stored, "the stored final state is what a replay shows");
    assert_eq!(api.record(&game).await.notes, live);
    let _ = c.close().await;
    server.stop().await;
}
