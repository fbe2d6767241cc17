//! The restore at start, on Postgres and on SQLite: every unfinished game
//! loaded in one go equals the game loaded on its own, comes back as the
//! live room had it (bots, chat, a pending draw offer, an elimination,
//! arbiter actions, an end the store did not mark, an open game), and the
//! server holds exactly those rooms with their `restored` versions stored.

use protocol::tournament::ArbiterAction;
use protocol::{Channel, GameSettings, Phase, Side, Status};
use sanguo_tests::harness::{TestDb, TestServer};
use server::metrics::Metrics;
use server::room::core::{Act, Room, Step};
use server::store::{Op, Player, Store};

fn settings() -> GameSettings {
    sanguo_tests::hour_game_settings(3_600_000)
}

/// Builds games through the room code and commits their writes as the
/// server would; keeps each room as it was last.
struct Seeder<'a> {
    store: &'a Store,
    now: u64,
    /// Deterministic move choice.
    rng: u64,
}

impl Seeder<'_> {
    async fn person(&self, id: &str) -> Player {
        self.store
            .create_player(id, &format!("name of {id}"), None, &format!("token-{id}"))
            .await
            .unwrap();
        Player {
            id: id.into(),
            name: format!("name of {id}"),
            account: false,
            bot: None,
        }
    }

    /// A game with a person in each seat but those given to bots.
    async fn game(&mut self, id: &str, bots: &[Side], seats: usize) -> Room {
        let creator = self.person(&format!("{id}-creator")).await;
        let mut room = Room::new(id.into(), settings()).unwrap();
        let initial = room.initial_position();
        let secret = room.take_secret();
        self.store
            .create_game(id, &creator.id, &settings(), &initial, secret.as_deref())
            .await
            .unwrap();
        for side in Side::ALL.into_iter().take(seats) {
            let (_, step) = if bots.contains(&side) {
                room.add_bot(
                    format!("{id}-bot-{side}"),
                    bot::Level::from_number(1).unwrap(),
                    Some(side),
                    self.now,
                    0,
                )
            } else {
                let p = self.person(&format!("{id}-{side}")).await;
                room.join(p, Some(side), self.now, 0)
            }
            .unwrap();
            self.commit(&room, step).await;
        }
        room
    }

    async fn commit(&self, room: &Room, step: Step) {
        self.store.commit(&room.id, room.v(), &step.ops).await.unwrap();
    }

    /// Plays `plies` moves (no check, when a quiet one exists, so that no
    /// §6 limit ends the game).
    async fn play(&mut self, room: &mut Room, plies: u32) {
        for _ in 0..plies {
            self.now += 700;
            let pos = engine::parse_position(&room.game().status(false).position).unwrap();
            let moves = pos.legal_moves();
            assert!(room.phase == Phase::Live && !moves.is_empty(), "{} still live", room.id);
            let quiet: Vec<_> = moves
                .iter()
                .filter(|m| {
                    let mut after = pos;
                    after
                        .play(**m)
                        .is_ok_and(|o| o.checks.is_empty() && o.captured.is_none())
                })
                .collect();
            self.rng = self
                .rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (self.rng >> 33) as usize;
            let mv = if quiet.is_empty() {
                moves[pick % moves.len()]
            } else {
                *quiet[pick % quiet.len()]
            };
            let side: Side = pos.turn().into();
            let ply = room.game().plies();
            let step = room
                .act(
                    side,
                    Act::Move {
                        ply,
                        mv: mv.to_string(),
                    },
                    0,
                    self.now,
                    0,
                )
                .unwrap();
            self.commit(room, step).await;
        }
    }

    async fn act(&mut self, room: &mut Room, side: Side, act: Act) -> Step {
        self.now += 300;
        room.act(side, act, 0, self.now, 0).unwrap()
    }
}

/// Fills a store; the rooms the server must bring back, and a finished game it must not.
async fn seed(store: &Store) -> (Vec<Room>, String) {
    let mut s = Seeder { store, now: 0, rng: 7 };
    let mut rooms = Vec::new();

    let mut plain = s.game("plain", &[], 3).await;
    s.play(&mut plain, 12).await;
    let w = Player {
        id: "plain-W".into(),
        name: "name of plain-W".into(),
        account: false,
        bot: None,
    };
    let step = plain
        .chat(&w, Some(Side::W), Channel::Players, "hello", s.now, 0)
        .unwrap();
    s.commit(&plain, step).await;
    let watcher = s.person("plain-watcher").await;
    let step = plain
        .chat(&watcher, None, Channel::Spectators, "hi all", s.now, 0)
        .unwrap();
    s.commit(&plain, step).await;
    rooms.push(plain);

    let mut bots = s.game("bots", &[Side::B, Side::Y], 3).await;
    s.play(&mut bots, 9).await;
    rooms.push(bots);

    // Past 15 rounds: a side resigns (phase 2), then a draw offer waits for its answer.
    let mut offer = s.game("offer", &[], 3).await;
    s.play(&mut offer, 46).await;
    let step = s.act(&mut offer, Side::Y, Act::Resign).await;
    s.commit(&offer, step).await;
    s.play(&mut offer, 2).await;
    let turn: Side = offer.game().to_move().unwrap();
    let step = s.act(&mut offer, turn, Act::OfferDraw).await;
    s.commit(&offer, step).await;
    assert!(!offer.game().pending_offer_waiting().is_empty());
    assert_eq!(offer.game().live().len(), 2);
    rooms.push(offer);

    let mut arbiter = s.game("arbiter", &[], 3).await;
    s.play(&mut arbiter, 6).await;
    let by = s.person("arbiter-by").await;
    for action in [
        ArbiterAction::AddTime {
            side: Side::B,
            ms: 60_000,
        },
        ArbiterAction::Pause,
    ] {
        s.now += 100;
        let step = arbiter.arbiter(&by, action, "a reason", s.now, 0).unwrap();
        s.commit(&arbiter, step).await;
    }
    rooms.push(arbiter);

    // Two resignations end the game, but the store never heard of the end
    // (the phase write is left out): the restore finds it finished anyway.
    let mut unmarked = s.game("unmarked", &[], 3).await;
    s.play(&mut unmarked, 46).await;
    for side in [Side::W, Side::B] {
        let mut step = s.act(&mut unmarked, side, Act::Resign).await;
        step.ops.retain(|o| !matches!(o, Op::Phase { .. }));
        s.commit(&unmarked, step).await;
    }
    assert!(unmarked.game().is_finished());
    rooms.push(unmarked);

    let open = s.game("open", &[], 1).await;
    rooms.push(open);

    let mut finished = s.game("finished", &[], 3).await;
    s.play(&mut finished, 46).await;
    for side in [Side::W, Side::B] {
        let step = s.act(&mut finished, side, Act::Resign).await;
        s.commit(&finished, step).await;
    }
    assert_eq!(finished.phase, Phase::Finished);
    (rooms, finished.id.clone())
}

/// Asserts two statuses equal but for the clocks (the side to move's turn
/// restarts at a restore).
fn assert_same_but_clocks(back: Status, was: Status, what: &str) {
    assert_eq!(
        Status {
            clocks: was.clocks,
            ..back
        },
        was,
        "{what}"
    );
}

async fn restore_on(url: String) {
    let store = Store::connect(&url, Metrics::default()).await.unwrap();
    let (rooms, finished) = seed(&store).await;
    let loaded = store.load_unfinished().await.unwrap();
    let mut ids: Vec<&str> = loaded.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    let mut want: Vec<&str> = rooms.iter().map(|r| r.id.as_str()).collect();
    want.sort_unstable();
    assert_eq!(ids, want, "every unfinished game, and only those");
    for (id, game) in loaded {
        let game = game.unwrap();
        let alone = store.load_game(&id).await.unwrap().unwrap();
        assert_eq!(
            format!("{game:?}"),
            format!("{alone:?}"),
            "{id}: loaded together = loaded alone"
        );
        let room = rooms.iter().find(|r| r.id == id).unwrap();
        let (back, step, at) = Room::restore(game).unwrap();
        let (a, b) = (back.game(), room.game());
        assert_eq!(a.status(true), b.status(true), "{id}: the game's position and counters");
        assert_eq!(a.moves(), b.moves(), "{id}: the game's moves");
        assert_eq!(a.departures(), b.departures(), "{id}");
        assert_eq!((a.epoch(), a.result()), (b.epoch(), b.result()), "{id}");
        assert_eq!(back.result(), room.result(), "{id}");
        assert_eq!(back.is_paused(), room.is_paused(), "{id}");
        assert_same_but_clocks(back.status(at), room.status(at), &id);
        assert_eq!(
            step.is_empty(),
            room.phase != Phase::Live || room.game().is_finished(),
            "{id}"
        );
    }
    store.close().await;

    // The server at start: the same rooms, their `restored` versions stored.
    let state = server::prepare(TestServer::config(Some(url.clone()))).await.unwrap();
    assert_eq!(
        state.metrics.rooms.load(std::sync::atomic::Ordering::Relaxed),
        rooms.len() as i64,
        "a room per unfinished game"
    );
    for room in &rooms {
        let handle = state.rooms.get(&room.id).await.unwrap().unwrap();
        let snap = handle.snapshot().await.unwrap();
        // The store's phase stays (the unmarked end is still `live` there).
        let phase = if room.id == "unmarked" { Phase::Live } else { room.phase };
        assert_eq!(snap.phase, phase, "{}", room.id);
        assert_same_but_clocks(snap.status, room.status(0), &room.id);
        let announced = room.phase == Phase::Live && !room.game().is_finished();
        let stored = state.store.load_game(&room.id).await.unwrap().unwrap();
        assert_eq!(
            stored.v,
            room.v() + u64::from(announced),
            "{}: the restored version is stored",
            room.id
        );
    }
    assert!(state.store.load_game(&finished).await.unwrap().is_some());
    state.shutdown.cancel();
    state.tracker.close();
    state.tracker.wait().await;
    state.store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_games_come_back_as_they_were_on_postgres() {
    let db = TestDb::create().await;
    restore_on(db.url.clone()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_games_come_back_as_they_were_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("sanguo-restore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.db");
    restore_on(format!("sqlite://{}?mode=rwc", path.display())).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game's secret (`game_secrets`): written with the game or by a step's
/// `Op::Secret` (a newer one replaces it), loaded with the game for its room
/// — alone or with every unfinished game — and in none of what the HTTP API
/// reads (the record, the lobby).
async fn secrets_on(url: String) {
    let store = Store::connect(&url, Metrics::default()).await.unwrap();
    let s = Seeder {
        store: &store,
        now: 0,
        rng: 1,
    };
    let creator = s.person("secret-creator").await;
    let mut plain = settings();
    plain.public = true;
    store
        .create_game("with-secret", &creator.id, &plain, "start-text", Some("SECRET-ONE"))
        .await
        .unwrap();
    store
        .create_game("without", &creator.id, &plain, "start-text", None)
        .await
        .unwrap();
    let loaded = |id: &'static str| {
        let store = &store;
        async move { store.load_game(id).await.unwrap().unwrap().secret }
    };
    assert_eq!(loaded("with-secret").await.as_deref(), Some("SECRET-ONE"));
    assert_eq!(loaded("without").await, None);
    // A step's secret, alone and with other writes: the newer one wins.
    store
        .commit("with-secret", 1, &[Op::Secret("SECRET-TWO".into())])
        .await
        .unwrap();
    assert_eq!(loaded("with-secret").await.as_deref(), Some("SECRET-TWO"));
    let seat = Op::Seat {
        side: Side::W,
        player: creator.id.clone(),
        bot: None,
        wall_ms: 1,
    };
    store
        .commit("without", 2, &[seat, Op::Secret("SECRET-THREE".into())])
        .await
        .unwrap();
    assert_eq!(loaded("without").await.as_deref(), Some("SECRET-THREE"));
    let all = store.load_unfinished().await.unwrap();
    let secret_of = |id: &str| {
        all.iter()
            .find(|(g, _)| g == id)
            .and_then(|(_, r)| r.as_ref().unwrap().secret.clone())
    };
    assert_eq!(secret_of("with-secret").as_deref(), Some("SECRET-TWO"));
    assert_eq!(secret_of("without").as_deref(), Some("SECRET-THREE"));
    // What the HTTP API reads of these games never holds it.
    for id in ["with-secret", "without"] {
        let record = serde_json::to_string(&store.record(id).await.unwrap().unwrap()).unwrap();
        assert!(!record.contains("SECRET"), "{record}");
    }
    let lobby = serde_json::to_string(&store.list_games(Phase::Open, None, 50).await.unwrap()).unwrap();
    assert!(lobby.contains("with-secret") && !lobby.contains("SECRET"), "{lobby}");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_is_kept_for_the_room_only_on_postgres() {
    let db = TestDb::create().await;
    secrets_on(db.url.clone()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_is_kept_for_the_room_only_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("sanguo-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.db");
    secrets_on(format!("sqlite://{}?mode=rwc", path.display())).await;
    let _ = std::fs::remove_dir_all(&dir);
}
