//! The room task with paused tokio time: real timers, real messages, writes
//! kept in memory. Time moves only when every task waits, to the next timer.

use std::time::Duration;

use super::*;
use protocol::{Byoyomi, Direction, EliminationReason, Ending, GameEvent, GameSettings, TimeControl};

struct Harness {
    handle: RoomHandle,
    journal: MemoryJournal,
    /// W's connection.
    inbox: Inbox,
    shutdown: CancellationToken,
    tracker: TaskTracker,
}

fn player(i: usize) -> Player {
    Player::guest(format!("p{i}"), format!("player {i}"))
}

/// A room whose three seats are taken at time 0, with W connected.
async fn started(tc: TimeControl, grace_ms: u64) -> Harness {
    let journal = Arc::new(Mutex::new(Vec::new()));
    let shutdown = CancellationToken::new();
    let tracker = TaskTracker::new();
    let rooms = Rooms::new(RoomContext {
        store: Journal::Memory(journal.clone()),
        metrics: Metrics::default(),
        tracker: tracker.clone(),
        shutdown: shutdown.clone(),
        log_keep: 64,
        chat_lines: super::core::CHAT_LINES_PER_CHANNEL,
        bots: bots::BotPool::new(1),
        cluster: None,
    });
    let settings = GameSettings {
        variant: Default::default(),
        time_control: tc,
        direction: Direction::Ccw,
        public: true,
        players_chat: true,
        grace_ms,
        rated: false,
        anqi: None,
    };
    let handle = rooms
        .start(Room::new("g".into(), settings).unwrap(), Step::default(), 0)
        .await
        .unwrap();
    let (w, inbox) = outbox(1024);
    handle.connect(1, Some(player(0)), None, false, w).await.unwrap();
    for (i, side) in Side::ALL.into_iter().enumerate() {
        assert_eq!(handle.join(player(i), Some(side)).await.unwrap(), side);
    }
    Harness {
        handle,
        journal,
        inbox,
        shutdown,
        tracker,
    }
}

impl Harness {
    /// Every event W's connection has received so far.
    fn events(&mut self) -> Vec<GameEvent> {
        let mut out = Vec::new();
        while let Some(m) = self.inbox.try_recv() {
            if let Ok(ServerMsg::Event { event: Some(e), .. }) = serde_json::from_str::<ServerMsg>(&m) {
                out.push(*e);
            }
        }
        out
    }

    /// The side to move's first legal move, from the room's snapshot (an
    /// event lists the legal moves only to the seat to move, and the harness
    /// reads W's connection).
    async fn legal_move(&self) -> (u32, String) {
        let snap = self.handle.snapshot().await.expect("a snapshot");
        (snap.status.ply, snap.status.legal_moves[0].to_owned())
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

fn eliminations(events: &[GameEvent]) -> Vec<(Side, EliminationReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            GameEvent::Eliminated(d) => Some((d.side, d.reason)),
            _ => None,
        })
        .collect()
}

async fn wait(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

#[tokio::test(start_paused = true)]
async fn increment_and_the_flag_timer() {
    let mut h = started(
        TimeControl {
            base_ms: 60_000,
            increment_ms: 2_000,
            per_move_ms: None,
            byoyomi: None,
        },
        3_600_000,
    )
    .await;
    h.events(); // the start
    let (ply, mv) = h.legal_move().await;
    wait(10_000).await;
    h.handle.act(1, Act::Move { ply, mv }, 0).await;
    wait(1).await;
    let events = h.events();
    match &events[0] {
        GameEvent::Moved { spent_ms, status, .. } => {
            assert_eq!(*spent_ms, 10_000);
            assert_eq!(status.clocks[0].remaining_ms, 52_000, "60 s − 10 s + 2 s");
        }
        other => panic!("expected the move, got {other:?}"),
    }
    // B thinks: nothing falls before its 60 s are over…
    wait(59_990).await;
    assert!(eliminations(&h.events()).is_empty());
    // …and its flag falls right after, by the room's own timer.
    wait(20).await;
    let events = h.events();
    assert_eq!(eliminations(&events), [(Side::B, EliminationReason::Time)]);
    let moves = h
        .journal
        .lock()
        .unwrap()
        .iter()
        .flat_map(|(_, _, ops)| ops.clone())
        .filter(|o| matches!(o, Op::Event(_)))
        .count();
    assert_eq!(moves, 2, "the move and the timeout were committed");
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn byoyomi_then_flag() {
    let tc = TimeControl {
        base_ms: 5_000,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: Some(Byoyomi {
            periods: 3,
            period_ms: 10_000,
        }),
    };
    let mut h = started(tc, 3_600_000).await;
    // W's allowance: 5 s of main time and three periods of 10 s.
    wait(34_990).await;
    assert!(eliminations(&h.events()).is_empty());
    wait(20).await;
    assert_eq!(eliminations(&h.events()), [(Side::W, EliminationReason::Time)]);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn per_move_limit() {
    let tc = TimeControl {
        base_ms: 3_600_000,
        increment_ms: 0,
        per_move_ms: Some(30_000),
        byoyomi: None,
    };
    let mut h = started(tc, 3_600_000).await;
    wait(29_990).await;
    assert!(eliminations(&h.events()).is_empty());
    wait(20).await;
    assert_eq!(eliminations(&h.events()), [(Side::W, EliminationReason::Time)]);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_default_grace_of_a_minute_then_abandonment() {
    // W is connected; B and Y never came: after 60 s they have abandoned
    // before 3 rounds, which aborts the game.
    let mut h = started(TimeControl::default(), 60_000).await;
    wait(59_000).await;
    assert!(h.events().iter().all(|e| !matches!(e, GameEvent::Finished { .. })));
    wait(2_000).await;
    let finished = h.events().into_iter().find_map(|e| match e {
        GameEvent::Finished { result } => Some(result.ending),
        _ => None,
    });
    assert_eq!(finished, Some(Ending::Aborted { by: Side::B }));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_slow_connection_is_dropped_and_the_room_goes_on() {
    let h = started(TimeControl::default(), 3_600_000).await;
    // A spectator whose queue holds 4 messages and who never reads.
    let (slow, _never_read) = outbox(4);
    h.handle.connect(2, None, None, false, slow.clone()).await.unwrap();
    for _ in 0..6 {
        let (ply, mv) = h.legal_move().await;
        let side = Side::ALL[ply as usize % 3];
        // The seats' own connections: W is connected; act as whoever is to move.
        let (seat, _rx) = outbox(1024);
        let conn = 100 + u64::from(ply);
        h.handle
            .connect(conn, Some(player(side.index())), Some(u64::MAX), false, seat)
            .await
            .unwrap();
        h.handle.act(conn, Act::Move { ply, mv }, 0).await;
        h.handle.disconnect(conn).await;
        wait(1).await;
    }
    assert!(slow.is_kicked(), "the slow connection was dropped");
    let snap = h.handle.snapshot().await.unwrap();
    assert_eq!(snap.status.ply, 6, "the room never waited for it");
    h.stop().await;
}

/// The status of the last `moved` event in `inbox`, and whether a replay
/// or the live event brought it.
fn last_moved(inbox: &mut Inbox) -> Option<protocol::Status> {
    let mut last = None;
    while let Some(m) = inbox.try_recv() {
        if let Ok(ServerMsg::Event { event: Some(e), .. }) = serde_json::from_str::<ServerMsg>(&m)
            && let GameEvent::Moved { status, .. } = *e
        {
            last = Some(status);
        }
    }
    last
}

#[tokio::test(start_paused = true)]
async fn with_own_moves_a_status_lists_the_legal_moves_only_to_the_seat_to_move() {
    let mut h = started(TimeControl::default(), 3_600_000).await;
    // B and Y ask for their own moves only, and so does one spectator; another
    // spectator (and W, from the harness) takes the default.
    let mut inboxes = Vec::new();
    for (conn, player, own) in [
        (2, Some(player(1)), true),
        (3, Some(player(2)), true),
        (4, None, true),
        (5, None, false),
    ] {
        let (o, i) = outbox(1024);
        h.handle.connect(conn, player, None, own, o).await.unwrap();
        inboxes.push(i);
    }
    let (ply, mv) = h.legal_move().await;
    h.handle.act(1, Act::Move { ply, mv }, 0).await;
    wait(1).await;
    let w = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            GameEvent::Moved { status, .. } => Some(status),
            _ => None,
        })
        .expect("W saw the move");
    assert_eq!(w.turn, Side::B);
    assert!(!w.legal_moves.is_empty(), "the default lists B's moves to everyone");
    let got: Vec<_> = inboxes.iter_mut().map(|i| last_moved(i).expect("the move")).collect();
    let [b, y, own_spectator, spectator] = <[protocol::Status; 4]>::try_from(got).unwrap();
    assert_eq!(b, w, "B is to move: its status lists its moves");
    assert_eq!(spectator, w, "a spectator with the default gets the list");
    let mut lean = w.clone();
    lean.legal_moves.clear();
    assert_eq!(y, lean, "Y is not to move: the same status without the list");
    assert_eq!(own_spectator, lean, "nor is a spectator");

    // A replay after a reconnect follows the same rule.
    let v = h.handle.snapshot().await.unwrap().v;
    for (conn, side, own, listed) in [(6, 1, true, true), (7, 2, true, false), (8, 2, false, true)] {
        let (o, mut i) = outbox(1024);
        h.handle
            .connect(conn, Some(player(side)), Some(v - 1), own, o)
            .await
            .unwrap();
        let replayed = last_moved(&mut i).expect("the replayed move");
        assert_eq!(replayed, if listed { w.clone() } else { lean.clone() }, "conn {conn}");
    }
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_finished_game_nobody_watches_leaves_memory_once_it_has_been_quiet_for_a_while() {
    let mut h = started(TimeControl::default(), 3_600_000).await;
    // B's and Y's connections, their queues kept (a connection whose queue is gone is offline).
    let mut inboxes = Vec::new();
    for (conn, side) in [(2, 1), (3, 2)] {
        let (o, i) = outbox(1024);
        h.handle
            .connect(conn, Some(player(side)), None, false, o)
            .await
            .unwrap();
        inboxes.push(i);
    }
    // W resigns, then B (before 15 rounds the first resignation is a warning): Y wins.
    for conn in [1, 1, 2, 2] {
        h.handle.act(conn, Act::Resign, 0).await;
    }
    wait(1).await;
    let finished = h.events().into_iter().any(|e| matches!(e, GameEvent::Finished { .. }));
    assert!(finished, "the game is over");
    // Watched, it stays.
    wait(FINISHED_IDLE.as_millis() as u64 * 2).await;
    assert!(h.handle.snapshot().await.is_ok(), "a room somebody watches stays");
    for conn in 1..=3 {
        h.handle.disconnect(conn).await;
    }
    // Each message starts the quiet time again (this snapshot too)…
    wait(FINISHED_IDLE.as_millis() as u64 - 1_000).await;
    assert!(h.handle.snapshot().await.is_ok(), "not quiet long enough yet");
    wait(FINISHED_IDLE.as_millis() as u64 - 1_000).await;
    assert!(
        h.handle.snapshot().await.is_ok(),
        "the quiet time counts from the last message"
    );
    // …and after a whole quiet while the room is gone (its record is in the store).
    wait(FINISHED_IDLE.as_millis() as u64 + 1_000).await;
    assert!(h.handle.snapshot().await.is_err(), "the room left memory");
    h.stop().await;
}
