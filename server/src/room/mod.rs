//! Rooms: one task owns each game (Alice Ryhl's actor pattern). Everyone
//! else holds a [`RoomHandle`] and sends it messages; nothing locks the game.
//!
//! The task runs a loop: take a message or wake for a timer, ask the
//! synchronous [`core::Room`] what it means, commit the step's writes, and only
//! then send its events to the connections. A connection whose bounded queue
//! is full is dropped (its client reconnects with its last version and
//! catches up); it never stalls the room.

pub mod bots;
pub mod core;
pub mod games;
pub mod mailbox;
pub mod outbox;
pub mod remote;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use protocol::{Channel, ErrorBody, ErrorCode, PROTOCOL_VERSION, Role, ServerMsg, Side, Snapshot};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use self::bots::{BotPool, Job};
use self::core::{Act, Logged, Room, Step, Viewer};
pub use self::outbox::{Inbox, Outbox, Received, outbox};
use crate::cluster::{Claim, Cluster};
use crate::metrics::Metrics;
use crate::store::{Op, Player, Store, StoreError, StoredGame, wall_ms};
use crate::wake::Others;

/// Room mailbox size. Senders wait when it is full (back-pressure on the
/// connection that sends, not on the room).
const MAILBOX: usize = 256;
/// How long a finished game without connections stays in memory.
const FINISHED_IDLE: Duration = Duration::from_secs(30);

/// Serialises a server message once, to be shared by every connection.
pub fn encode(msg: &ServerMsg) -> Utf8Bytes {
    Utf8Bytes::from(serde_json::to_string(msg).unwrap_or_default())
}

/// An event as a connection gets it: [`Logged::encode_view`] for its viewer,
/// and, when the connection asked for its own legal moves only
/// (`own_moves`), without the status's legal moves unless its seat is to move.
fn encode_for(l: &mut Logged, side: Option<Side>, own_moves: bool) -> String {
    let viewer = Viewer::of(side);
    if own_moves && l.lists_moves_for_another(viewer) {
        l.encode_lean(viewer)
    } else {
        l.encode_view(viewer)
    }
}

/// What a connection learns when it joins a room.
#[derive(Debug, Clone, Copy)]
pub struct Welcome {
    /// Player or spectator.
    pub role: Role,
    /// The seat acted for.
    pub side: Option<Side>,
}

/// A message to a room. Players and acts are boxed: tokio's channel
/// allocates its slots 32 at a time for every room, each the size of the
/// largest message, and these are the largest (and rare, or cheap next to
/// what they cause).
#[derive(Debug)]
enum Msg {
    Connect {
        conn: u64,
        player: Option<Box<Player>>,
        last_v: Option<u64>,
        /// Statuses list the legal moves only when this connection's seat is to move.
        own_moves: bool,
        outbox: Outbox,
        reply: oneshot::Sender<Welcome>,
    },
    Disconnect {
        conn: u64,
    },
    Act {
        conn: u64,
        act: Box<Act>,
        lag_ms: u64,
        received: Instant,
    },
    Chat {
        conn: u64,
        channel: Channel,
        text: String,
    },
    Join {
        player: Box<Player>,
        side: Option<Side>,
        seed: Option<String>,
        /// The player asked for the seat (`POST …/join`), rather than the
        /// server placing it: then no seed means none ([`Room::join_seeded`]).
        asked: bool,
        reply: oneshot::Sender<Result<Side, ErrorBody>>,
    },
    Snapshot {
        viewer: Viewer,
        reply: oneshot::Sender<Snapshot>,
    },
    AddBot {
        level: bot::Level,
        side: Option<Side>,
        reply: oneshot::Sender<Result<Side, ErrorBody>>,
    },
    Arbiter {
        by: Box<Player>,
        action: protocol::tournament::ArbiterAction,
        reason: String,
        reply: oneshot::Sender<Result<Snapshot, ErrorBody>>,
    },
}

/// Whether rooms can play `variant`: a variant whose rules engine exists but
/// whose room support does not yet is refused with `variant_unavailable`
/// (creating a game or a tournament of it changes nothing).
pub fn check_playable(variant: protocol::Variant) -> Result<(), ErrorBody> {
    if games::is_playable(variant) {
        Ok(())
    } else {
        Err(games::unavailable(variant))
    }
}

/// A handle to a room's task.
#[derive(Debug, Clone)]
pub struct RoomHandle {
    tx: mailbox::Sender<Msg>,
    generation: u64,
    /// A room of this node, rather than a proxy of another node's ([`remote`]).
    local: bool,
}

fn gone() -> ErrorBody {
    ErrorBody {
        code: ErrorCode::Internal,
        message: "the room is gone; try again".into(),
    }
}

impl RoomHandle {
    /// Registers a connection; the room then sends it the welcome, the missed
    /// events or a snapshot, and everything after (with `own_moves`, events'
    /// statuses list the legal moves only while its seat is to move).
    pub async fn connect(
        &self,
        conn: u64,
        player: Option<Player>,
        last_v: Option<u64>,
        own_moves: bool,
        outbox: Outbox,
    ) -> Result<Welcome, ErrorBody> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Connect {
                conn,
                player: player.map(Box::new),
                last_v,
                own_moves,
                outbox,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }

    /// The connection left.
    pub async fn disconnect(&self, conn: u64) {
        let _ = self.tx.send(Msg::Disconnect { conn }).await;
    }

    /// A player's action; errors go back on the connection's queue.
    pub async fn act(&self, conn: u64, act: Act, lag_ms: u64) -> bool {
        let msg = Msg::Act {
            conn,
            act: Box::new(act),
            lag_ms,
            received: Instant::now(),
        };
        // Every move comes this way: a room with room in its mailbox takes
        // it at once, without the future of an awaited send.
        match self.tx.try_send(msg) {
            Ok(()) => true,
            Err(mailbox::TrySendError::Full(msg)) => self.tx.send(msg).await.is_ok(),
            Err(mailbox::TrySendError::Closed(_)) => false,
        }
    }

    /// A chat line; errors go back on the connection's queue.
    pub async fn chat(&self, conn: u64, channel: Channel, text: String) -> bool {
        self.tx.send(Msg::Chat { conn, channel, text }).await.is_ok()
    }

    /// Takes a seat.
    pub async fn join(&self, player: Player, side: Option<Side>) -> Result<Side, ErrorBody> {
        self.send_join(player, side, None, false).await
    }

    /// Takes a seat, with the seat's seed for 三国暗棋's seat-entropy deal
    /// ([`Room::join_seeded`]).
    pub async fn join_seeded(
        &self,
        player: Player,
        side: Option<Side>,
        seed: Option<String>,
    ) -> Result<Side, ErrorBody> {
        self.send_join(player, side, seed, true).await
    }

    async fn send_join(
        &self,
        player: Player,
        side: Option<Side>,
        seed: Option<String>,
        asked: bool,
    ) -> Result<Side, ErrorBody> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Join {
                player: Box::new(player),
                side,
                seed,
                asked,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Fills a free seat with a bot of `level` (the first free seat in W, B,
    /// Y order if `side` is `None`) before the game starts; the same errors as
    /// [`RoomHandle::join`]. The seat is committed (with the bot's player row)
    /// before this returns; if it was the last free seat the game starts.
    ///
    /// This is the call for anyone holding a room: the HTTP API
    /// (`POST /api/games/{id}/bots`, creator only). A room not started yet
    /// takes bots directly with [`Room::add_bot`] (a tournament's round
    /// filling its byes with bots does).
    pub async fn add_bot(&self, side: Option<Side>, level: bot::Level) -> Result<Side, ErrorBody> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::AddBot { level, side, reply })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// An arbiter's action (the caller checked the right to); the state after it.
    pub async fn arbiter(
        &self,
        by: Player,
        action: protocol::tournament::ArbiterAction,
        reason: String,
    ) -> Result<Snapshot, ErrorBody> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Arbiter {
                by: Box::new(by),
                action,
                reason,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// The current state as a spectator sees it (HTTP readers, the lobby).
    pub async fn snapshot(&self) -> Result<Snapshot, ErrorBody> {
        self.view(Viewer::Spectator).await
    }

    /// The current state as `viewer` may see it ([`Room::view`]).
    pub async fn view(&self, viewer: Viewer) -> Result<Snapshot, ErrorBody> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Snapshot { viewer, reply })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }
}

/// Commits kept in memory: (game, version, writes).
pub type MemoryJournal = Arc<Mutex<Vec<(String, u64, Vec<Op>)>>>;

/// Where rooms write. The server writes to the store; the actor tests write
/// to memory, because a real database round trip would let paused tokio time
/// jump to the next timer while the room waits for its commit.
#[derive(Debug, Clone)]
pub enum Journal {
    /// The store.
    Store(Store),
    /// Commits kept in memory.
    Memory(MemoryJournal),
}

impl Journal {
    async fn commit(&self, game: &str, v: u64, ops: &[Op]) -> Result<(), StoreError> {
        self.commit_owned(game, v, ops.to_vec()).await.0
    }

    /// [`Journal::commit`] of ops given up and handed back with the result
    /// ([`Store::commit_owned`]): a move's are not copied on their way.
    async fn commit_owned(&self, game: &str, v: u64, ops: Vec<Op>) -> (Result<(), StoreError>, Vec<Op>) {
        match self {
            // Not boxed: the store boxes what is large (a transaction of its
            // own when the group commit is not running); a queued commit's
            // future is a few hundred bytes, and it is awaited for every move.
            Journal::Store(s) => s.commit_owned(game, v, ops).await,
            Journal::Memory(m) => {
                m.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((game.to_owned(), v, ops.clone()));
                (Ok(()), ops)
            }
        }
    }

    async fn load_game(&self, id: &str) -> Result<Option<StoredGame>, StoreError> {
        match self {
            Journal::Store(s) => s.load_game(id).await,
            Journal::Memory(_) => Ok(None),
        }
    }

    /// The lease epochs commits are fenced by (a cluster node's store).
    fn fences(&self) -> Option<&Arc<crate::store::Fences>> {
        match self {
            Journal::Store(s) => s.fences(),
            Journal::Memory(_) => None,
        }
    }

    /// The store's health (memory never fails).
    fn health(&self) -> Option<watch::Receiver<bool>> {
        match self {
            Journal::Store(s) => Some(s.health()),
            Journal::Memory(_) => None,
        }
    }

    async fn load_unfinished_each(
        &self,
        each: impl FnMut(String, Result<StoredGame, StoreError>),
    ) -> Result<(), StoreError> {
        match self {
            Journal::Store(s) => s.load_unfinished_each(each).await,
            Journal::Memory(_) => Ok(()),
        }
    }

    async fn commit_many(&self, writes: &[(&str, u64, &[Op])]) -> Result<(), StoreError> {
        match self {
            Journal::Store(s) => s.commit_many(writes).await,
            Journal::Memory(m) => {
                let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                for (game, v, ops) in writes {
                    m.push(((*game).to_owned(), *v, ops.to_vec()));
                }
                Ok(())
            }
        }
    }
}

/// What every room needs from the server.
#[derive(Debug, Clone)]
pub struct RoomContext {
    /// Where the rooms commit.
    pub store: Journal,
    /// Metrics.
    pub metrics: Metrics,
    /// Tracks room tasks for graceful shutdown.
    pub tracker: TaskTracker,
    /// Cancelled at shutdown.
    pub shutdown: CancellationToken,
    /// Events each room keeps for reconnecting clients.
    pub log_keep: usize,
    /// Chat lines each game stores per channel.
    pub chat_lines: u32,
    /// The searches of every room's bots.
    pub bots: BotPool,
    /// Cluster mode: this node, and where its relayed connections' messages
    /// go ([`remote`]); `None` for a single node.
    pub cluster: Option<(Arc<Cluster>, Arc<remote::Deliveries>)>,
}

/// The rooms in memory, by game id.
#[derive(Debug)]
pub struct Rooms {
    /// A std mutex: held only to look up or insert, never across an await.
    map: Mutex<HashMap<String, RoomHandle>>,
    next_generation: AtomicU64,
    ctx: RoomContext,
}

impl Rooms {
    /// An empty registry.
    pub fn new(ctx: RoomContext) -> Arc<Rooms> {
        Arc::new(Rooms {
            map: Mutex::new(HashMap::new()),
            next_generation: AtomicU64::new(1),
            ctx,
        })
    }

    fn lookup(&self, id: &str) -> Option<RoomHandle> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id).filter(|h| !h.tx.is_closed()).cloned()
    }

    /// A room's (or proxy's) task ended: it leaves the registry, unless a
    /// newer task of the same game took its place. Whether it left.
    fn forget(&self, id: &str, generation: u64) -> bool {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let current = map.get(id).is_some_and(|h| h.generation == generation);
        if current {
            map.remove(id);
        }
        current
    }

    /// This node in the cluster, if it runs in one.
    pub fn cluster(&self) -> Option<&(Arc<Cluster>, Arc<remote::Deliveries>)> {
        self.ctx.cluster.as_ref()
    }

    /// The room of a game if it is in memory (nothing is loaded).
    pub fn in_memory(&self, id: &str) -> Option<RoomHandle> {
        self.lookup(id)
    }

    /// The room of a game, restored from the store if it is not in memory.
    /// In a cluster: the game's room if this node owns it or takes it over
    /// (nobody alive owns it), else a proxy of its owner's room.
    pub async fn get(self: &Arc<Self>, id: &str) -> Result<Option<RoomHandle>, StoreError> {
        if let Some(h) = self.lookup(id) {
            return Ok(Some(h));
        }
        if let Some((cluster, deliveries)) = &self.ctx.cluster {
            match cluster.claim(id).await? {
                Claim::None => return Ok(None),
                Claim::Other(owner) => {
                    return Ok(Some(remote::proxy(
                        self,
                        Arc::clone(cluster),
                        Arc::clone(deliveries),
                        id,
                        owner,
                    )));
                }
                Claim::Mine(epoch) => tracing::info!(game = %id, epoch, "taking the game over"),
            }
        }
        let restored = self.restore(id).await;
        if restored.is_err()
            && let Some((cluster, _)) = &self.ctx.cluster
        {
            cluster.release(id).await;
        }
        restored
    }

    /// Restores a game's room from the store (after its claim, in a cluster).
    async fn restore(self: &Arc<Self>, id: &str) -> Result<Option<RoomHandle>, StoreError> {
        let Some(stored) = self.ctx.store.load_game(id).await? else {
            return Ok(None);
        };
        // The same guard as the start-up restore: a replay that panics on
        // rows the store should never hold is an error, not a dead worker.
        let (room, step, now) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Room::restore(stored)))
            .unwrap_or_else(|_| Err("its replay panicked".into()))
            .map_err(StoreError::Corrupt)?;
        Ok(Some(self.start(room, step, now).await?))
    }

    /// Starts the task of a room (a new one, or one just restored with its
    /// announcing step), unless another task got there first.
    pub async fn start(self: &Arc<Self>, mut room: Room, step: Step, base_ms: u64) -> Result<RoomHandle, StoreError> {
        room.set_chat_cap(self.ctx.chat_lines);
        room.set_log_keep(self.ctx.log_keep);
        if let Some(h) = self.lookup(&room.id).filter(|h| h.local) {
            return Ok(h);
        }
        // A cluster node writes only the games it owns: a new game is taken
        // here (nobody owns it yet).
        if let Some((cluster, _)) = &self.ctx.cluster
            && self.ctx.store.fences().and_then(|f| f.get(&room.id)).is_none()
        {
            match cluster.claim(&room.id).await? {
                Claim::Mine(_) => {}
                _ => return Err(StoreError::Fenced(room.id.clone())),
            }
        }
        if !step.is_empty() {
            self.ctx.store.commit_owned(&room.id, room.v(), step.ops).await.0?;
        }
        Ok(self.spawn(room, base_ms))
    }

    /// Starts the task of a room whose step is committed, unless another
    /// task got there first.
    fn spawn(self: &Arc<Self>, room: Room, base_ms: u64) -> RoomHandle {
        let (tx, rx) = mailbox::mailbox(MAILBOX);
        let handle = RoomHandle {
            tx,
            generation: self.next_generation.fetch_add(1, Ordering::Relaxed),
            local: true,
        };
        {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            // A proxy of the game's former owner gives way to the room.
            if let Some(h) = map.get(&room.id).filter(|h| !h.tx.is_closed() && h.local) {
                return h.clone();
            }
            map.insert(room.id.clone(), handle.clone());
        }
        let actor = Actor {
            lost: self.ctx.cluster.as_ref().map(|(c, _)| c.lost_token()),
            live_counted: room.phase == protocol::Phase::Live,
            health: self.ctx.store.health(),
            outage: None,
            room,
            conns: HashMap::new(),
            rx,
            ctx: self.ctx.clone(),
            base_ms,
            epoch: Instant::now(),
            thinking: None,
            last_offer: [None; 3],
            failed_epoch: None,
        };
        let rooms = Arc::clone(self);
        let generation = handle.generation;
        self.ctx.metrics.rooms.fetch_add(1, Ordering::Relaxed);
        // The task's future is `run` itself: an `async` block around it would
        // hold the actor twice (as its capture and inside the awaited future).
        let run = actor.run(rooms, generation);
        self.ctx.tracker.spawn(run);
        handle
    }

    /// Cluster mode: takes over every unfinished game that no live node owns
    /// (its node died, was cut off or stopped), [`ADOPT_BATCH`] at a time, and
    /// restores their rooms; returns how many.
    pub async fn adopt_orphans(self: &Arc<Self>) -> usize {
        use futures_util::StreamExt;
        let Some((cluster, _)) = &self.ctx.cluster else {
            return 0;
        };
        let mut n = 0;
        loop {
            let taken = match cluster.adopt(ADOPT_BATCH).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(error = %e, "looking for games to take over failed");
                    return n;
                }
            };
            let count = taken.len();
            let started = std::time::Instant::now();
            let results: Vec<_> = futures_util::stream::iter(taken)
                .map(|(id, epoch)| async move {
                    let r = self.restore(&id).await;
                    (id, epoch, r)
                })
                .buffer_unordered(8)
                .collect()
                .await;
            for (id, epoch, r) in results {
                match r {
                    Ok(Some(_)) => {
                        n += 1;
                        tracing::info!(game = %id, epoch, ms = started.elapsed().as_millis() as u64, "game taken over");
                    }
                    Ok(None) => cluster.release(&id).await,
                    Err(e) => {
                        tracing::error!(game = %id, error = %e, "could not take the game over");
                        cluster.release(&id).await;
                    }
                }
            }
            if count < ADOPT_BATCH as usize {
                return n;
            }
        }
    }

    /// Cluster mode: looks for games to take over every `every` until shutdown.
    pub async fn keep_adopting(self: Arc<Self>, every: Duration) {
        loop {
            tokio::select! {
                _ = self.ctx.shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            self.adopt_orphans().await;
        }
    }

    /// Restores every unfinished game of the store (at start, before the
    /// server listens): loads them all at once and replays them on every
    /// core as their rows arrive, commits their `restored` versions in one
    /// transaction and starts their tasks. A game that does not load or
    /// replay is logged and left out (a visitor retries it through
    /// [`Rooms::get`]); if the common commit fails, each game commits on its
    /// own. Logs the time of each part as `restore timings`.
    pub async fn restore_all(self: &Arc<Self>) -> Result<usize, StoreError> {
        let started = std::time::Instant::now();
        let mut replayers = Replayers::start();
        let mut part = Vec::with_capacity(REPLAY_PART);
        self.ctx
            .store
            .load_unfinished_each(|id, game| match game {
                Ok(game) => {
                    part.push(game);
                    if part.len() == REPLAY_PART {
                        replayers.send(std::mem::replace(&mut part, Vec::with_capacity(REPLAY_PART)));
                    }
                }
                Err(e) => tracing::error!(game = %id, error = %e, "could not restore game"),
            })
            .await?;
        replayers.send(part);
        let load = started.elapsed();
        let mark = std::time::Instant::now();
        let (restored, replay_busy) = replayers.finish().await;
        let replay = mark.elapsed();
        let mark = std::time::Instant::now();
        let writes: Vec<(&str, u64, &[Op])> = restored
            .iter()
            .filter(|(_, step, _)| !step.is_empty())
            .map(|(room, step, _)| (room.id.as_str(), room.v(), step.ops.as_slice()))
            .collect();
        let failed: std::collections::HashSet<String> = match self.ctx.store.commit_many(&writes).await {
            Ok(()) => Default::default(),
            Err(e) => {
                tracing::warn!(error = %e, "committing the restored games together failed; one by one");
                let mut failed = std::collections::HashSet::new();
                for (id, v, ops) in &writes {
                    if let Err(e) = self.ctx.store.commit(id, *v, ops).await {
                        tracing::error!(game = %id, error = %e, "could not restore game");
                        failed.insert((*id).to_owned());
                    }
                }
                failed
            }
        };
        drop(writes);
        let commit = mark.elapsed();
        let mark = std::time::Instant::now();
        let mut n = 0;
        for (mut room, _, now) in restored {
            if failed.contains(&room.id) {
                continue;
            }
            room.set_log_keep(self.ctx.log_keep);
            room.set_chat_cap(self.ctx.chat_lines);
            self.spawn(room, now);
            n += 1;
        }
        let start = mark.elapsed();
        tracing::info!(
            games = n,
            load_ms = load.as_millis() as u64,
            replay_busy_ms = replay_busy.as_millis() as u64,
            replay_after_load_ms = replay.as_millis() as u64,
            commit_ms = commit.as_millis() as u64,
            start_ms = start.as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            "restore timings"
        );
        Ok(n)
    }
}

/// Games one node takes over in one statement.
const ADOPT_BATCH: i64 = 64;

/// A room rebuilt from the store: its announcing step and its game time.
type Restored = (Room, Step, u64);

/// Stored games handed to a replay thread at once.
const REPLAY_PART: usize = 250;

/// Threads that rebuild the rooms of stored games, one per core, fed parts
/// of games in turn while the store still sends the others.
struct Replayers {
    parts: Vec<std::sync::mpsc::Sender<Vec<StoredGame>>>,
    threads: Vec<tokio::task::JoinHandle<(Vec<Restored>, Duration)>>,
    next: usize,
}

impl Replayers {
    fn start() -> Replayers {
        let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let (mut parts, mut threads) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<StoredGame>>();
            parts.push(tx);
            threads.push(tokio::task::spawn_blocking(move || {
                let (mut rooms, mut busy) = (Vec::new(), Duration::ZERO);
                for part in rx {
                    let started = std::time::Instant::now();
                    rooms.extend(part.into_iter().filter_map(replay));
                    busy += started.elapsed();
                }
                (rooms, busy)
            }));
        }
        Replayers {
            parts,
            threads,
            next: 0,
        }
    }

    fn send(&mut self, part: Vec<StoredGame>) {
        if part.is_empty() {
            return;
        }
        let i = self.next % self.parts.len();
        self.next += 1;
        // A thread that is gone has logged why (see `finish`).
        let _ = self.parts[i].send(part);
    }

    /// Every room rebuilt, and the time the threads spent on them together.
    async fn finish(self) -> (Vec<Restored>, Duration) {
        drop(self.parts);
        let (mut rooms, mut busy) = (Vec::new(), Duration::ZERO);
        for thread in self.threads {
            match thread.await {
                Ok((r, b)) => {
                    rooms.extend(r);
                    busy += b;
                }
                Err(e) => tracing::error!(error = %e, "a replay thread failed"),
            }
        }
        (rooms, busy)
    }
}

/// Rebuilds the room of a stored game; one that does not replay — or panics
/// doing so, on rows the store should never hold — is logged and left out.
fn replay(game: StoredGame) -> Option<Restored> {
    let id = game.id.clone();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Room::restore(game)))
        .unwrap_or_else(|_| Err("its replay panicked".into()))
        .inspect_err(|e| tracing::error!(game = %id, error = %e, "could not restore game"))
        .ok()
}

/// A bot's search in flight. Dropping it (the room stops, or the job is
/// replaced) tells the search to stop.
#[derive(Debug)]
struct Thinking {
    job: Job,
    started: Instant,
    task: tokio::task::JoinHandle<Option<Act>>,
    cancel: Arc<AtomicBool>,
}

impl Drop for Thinking {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct Conn {
    side: Option<Side>,
    player: Option<Player>,
    /// `hello`'s `legal_moves` was `own`.
    own_moves: bool,
    outbox: Outbox,
}

/// A room's state while its store is out.
#[derive(Debug)]
struct Outage {
    /// Game time stands still at this value until the store is back.
    frozen_at: u64,
    /// Steps decided but not yet committed, in order; nothing of them has
    /// been sent. They are committed together when the store is back.
    pending: Vec<Step>,
    /// Messages that need the committed state (connections arriving or
    /// leaving, snapshots), handled in order once `pending` is committed.
    deferred: VecDeque<Msg>,
}

/// Messages deferred at most during an outage; later connections are
/// turned away (they reconnect) and snapshots refused.
const MAX_DEFERRED: usize = 1024;

/// The store's next change of health (true: up), with the receiver to
/// wait for the one after; never, without a receiver or once the store's
/// side is gone.
async fn health_changed(h: Option<watch::Receiver<bool>>) -> (bool, Option<watch::Receiver<bool>>) {
    match h {
        Some(mut h) => {
            if h.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
            let up = *h.borrow_and_update();
            (up, Some(h))
        }
        None => std::future::pending().await,
    }
}

fn storage_unavailable() -> ErrorBody {
    ErrorBody {
        code: ErrorCode::StorageUnavailable,
        message: "the game is waiting for its storage; nothing was changed, try again when it is back".into(),
    }
}

struct Actor {
    room: Room,
    /// Cluster mode: cancelled when this node loses its lease (the game is
    /// someone else's to take over; the room stops without a write). Taken
    /// by [`Actor::run`], which waits on it.
    lost: Option<CancellationToken>,
    /// The store's health, watched to pause the game while it is out. Taken
    /// by [`Actor::run`], which waits on it.
    health: Option<watch::Receiver<bool>>,
    /// Set while the store is out.
    outage: Option<Outage>,
    conns: HashMap<u64, Conn>,
    rx: mailbox::Receiver<Msg>,
    ctx: RoomContext,
    /// Game time at `epoch`.
    base_ms: u64,
    epoch: Instant,
    /// Whether this room counts in the live-games gauge.
    live_counted: bool,
    /// A bot's search in flight (one at a time per room).
    thinking: Option<Thinking>,
    /// The ply at which each bot last weighed offering a draw.
    last_offer: [Option<u32>; 3],
    /// An epoch at which a bot's action was refused: no new job until the game moves on.
    failed_epoch: Option<usize>,
}

impl Actor {
    /// Game time: it stands still while the store is out.
    fn now(&self) -> u64 {
        match &self.outage {
            Some(o) => o.frozen_at,
            None => self.base_ms + self.epoch.elapsed().as_millis() as u64,
        }
    }

    fn instant_of(&self, game_ms: u64) -> Instant {
        self.epoch + Duration::from_millis(game_ms.saturating_sub(self.base_ms))
    }

    /// The room's life; at its end it leaves the registry (unless a newer
    /// task of the same game took its place).
    async fn run(mut self, rooms: Arc<Rooms>, generation: u64) {
        if self.live_counted {
            self.ctx.metrics.live_games.fetch_add(1, Ordering::Relaxed);
        }
        // The signals and the clock's timer are made once and kept across
        // turns of the loop: each registers itself (with the shutdown
        // token, the lease, the store's health, the timer wheel) the first
        // time the room waits, not again after every message. Fresh futures
        // each turn registered and unregistered all of them every time the
        // room slept, in lists shared by every room.
        let shutdown = self.ctx.shutdown.clone().cancelled_owned();
        tokio::pin!(shutdown);
        let lost = self.lost.take();
        let lost = async move {
            match lost {
                Some(lost) => lost.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(lost);
        let health = health_changed(self.health.take());
        tokio::pin!(health);
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        // The deadline `timer` holds, when it is armed.
        let mut armed: Option<Instant> = None;
        // The shutdown, the lease and the store's health are polled only
        // once one of them woke the room, not on every message of its
        // mailbox (each poll of the token's or the watch's future takes a
        // lock shared with every room waiting on it).
        let rare = Others::new();
        loop {
            // A finished game nobody watches leaves memory after a while; the
            // record is in the store and a later visitor restores it.
            let idle = self.room.phase == protocol::Phase::Finished && self.conns.is_empty() && self.outage.is_none();
            // No timer falls and no bot starts thinking while the store is
            // out: game time stands still.
            if self.outage.is_none() {
                self.schedule_bot();
            }
            let wake = match self.outage {
                None => self.room.next_wakeup().map(|ms| self.instant_of(ms)),
                Some(_) => None,
            };
            if let Some(at) = wake
                && armed != Some(at)
            {
                timer.as_mut().reset(at);
            }
            armed = wake;
            let thinking = self.thinking.as_mut().map(|t| &mut t.task);
            let has_thinking = thinking.is_some();
            // In this order: the room's end first, and its clock and its bot
            // before its mailbox, so that a busy mailbox cannot hold back a
            // flag's fall.
            let ok = tokio::select! {
                biased;
                heard = rare.poll(|cx| {
                    if shutdown.as_mut().poll(cx).is_ready() || lost.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(None);
                    }
                    health.as_mut().poll(cx).map(Some)
                }) => match heard {
                    None => break,
                    Some((up, rx)) => {
                        health.set(health_changed(rx));
                        if up {
                            self.recover().await
                        } else {
                            let now = self.now();
                            self.enter_outage(now);
                            true
                        }
                    }
                },
                () = &mut timer, if wake.is_some() => {
                    armed = None;
                    let step = self.room.tick(self.now(), wall_ms());
                    self.commit_and_send(step, None).await
                }
                done = async move { thinking?.await.ok().flatten() }, if has_thinking => {
                    match self.thinking.take() {
                        Some(t) => self.bot_acts(t, done).await,
                        None => true,
                    }
                }
                msg = self.rx.recv() => match msg {
                    Some(msg) => self.dispatch(msg).await,
                    None => break,
                },
                // Made only when the room is idle (a branch's future is made
                // whether or not its condition holds).
                () = async { tokio::time::sleep(FINISHED_IDLE).await }, if idle => break,
            };
            if !ok {
                break;
            }
            self.update_live_gauge();
        }
        if self.live_counted {
            self.ctx.metrics.live_games.fetch_sub(1, Ordering::Relaxed);
        }
        for conn in self.conns.values() {
            conn.outbox.kick();
        }
        let current = rooms.forget(&self.room.id, generation);
        rooms.ctx.metrics.rooms.fetch_sub(1, Ordering::Relaxed);
        // A cluster node gives up a game whose room stopped (idle, or its
        // store refused): anyone may take it over at once. At shutdown the
        // node releases all of its games together, after every room stopped.
        if current
            && !self.ctx.shutdown.is_cancelled()
            && let Some((cluster, _)) = &rooms.ctx.cluster
        {
            cluster.release(&self.room.id).await;
        }
    }

    fn update_live_gauge(&mut self) {
        let live = self.room.phase == protocol::Phase::Live;
        if live != self.live_counted {
            if live {
                tracing::info!(game = %self.room.id, "game started");
            } else {
                let result = self.room.game().result();
                tracing::info!(game = %self.room.id, plies = self.room.game().plies(), ?result, "game finished");
            }
            self.live_counted = live;
            let delta = if live { 1 } else { -1 };
            self.ctx.metrics.live_games.fetch_add(delta, Ordering::Relaxed);
        }
    }

    fn send_to(&self, conn: u64, msg: &ServerMsg) {
        if let Some(c) = self.conns.get(&conn) {
            let _ = c.outbox.send(encode(msg));
        }
    }

    fn send_error(&self, conn: u64, e: ErrorBody) {
        self.ctx.metrics.refused.fetch_add(1, Ordering::Relaxed);
        self.send_to(
            conn,
            &ServerMsg::Error {
                code: e.code,
                message: e.message,
            },
        );
    }

    /// The store went away: game time stops at `frozen_at` and every
    /// connection is told. Nothing is acknowledged until it is back.
    fn enter_outage(&mut self, frozen_at: u64) {
        if self.outage.is_some() {
            return;
        }
        tracing::warn!(game = %self.room.id, "waiting for the store");
        self.outage = Some(Outage {
            frozen_at,
            pending: Vec::new(),
            deferred: VecDeque::new(),
        });
        let msg = encode(&ServerMsg::Storage { waiting: true });
        for c in self.conns.values() {
            let _ = c.outbox.send(msg.clone());
        }
    }

    /// The store answers again: commit what waited, restart game time where
    /// it stood, send what was decided, then handle what was deferred.
    async fn recover(&mut self) -> bool {
        let Some(mut o) = self.outage.take() else { return true };
        if !o.pending.is_empty() {
            // The steps keep their own ops (they are committed again if the
            // store is still out): this collected copy is handed over whole.
            let ops: Vec<Op> = o.pending.iter().flat_map(|s| s.ops.iter().cloned()).collect();
            match self.ctx.store.commit_owned(&self.room.id, self.room.v(), ops).await.0 {
                Ok(()) => {}
                Err(e) if e.is_outage() => {
                    // Still out: wait for the next sign of life.
                    self.outage = Some(o);
                    return true;
                }
                Err(e) => {
                    tracing::error!(game = %self.room.id, error = %e, "store commit failed after an outage; closing the room");
                    return false;
                }
            }
        }
        self.base_ms = o.frozen_at;
        self.epoch = Instant::now();
        tracing::info!(game = %self.room.id, steps = o.pending.len(), "the store is back");
        let msg = encode(&ServerMsg::Storage { waiting: false });
        for c in self.conns.values() {
            let _ = c.outbox.send(msg.clone());
        }
        for step in std::mem::take(&mut o.pending) {
            if !self.sent(step, None).await {
                return false;
            }
        }
        while let Some(msg) = o.deferred.pop_front() {
            if !Box::pin(self.dispatch(msg)).await {
                return false;
            }
            if let Some(again) = &mut self.outage {
                // Out again: the rest waits, in order.
                again.deferred.extend(o.deferred.drain(..));
                break;
            }
        }
        true
    }

    /// Handles a message, or, while the store is out, refuses or defers it.
    async fn dispatch(&mut self, msg: Msg) -> bool {
        let Some(o) = &mut self.outage else {
            return self.handle(msg).await;
        };
        match msg {
            Msg::Act { conn, .. } | Msg::Chat { conn, .. } => {
                self.send_error(conn, storage_unavailable());
                true
            }
            Msg::Join { reply, .. } => {
                let _ = reply.send(Err(storage_unavailable()));
                true
            }
            // With nothing uncommitted, the state in memory is the stored one.
            msg if o.pending.is_empty() => self.handle(msg).await,
            Msg::Connect { outbox, reply, .. } if o.deferred.len() >= MAX_DEFERRED => {
                drop(reply);
                outbox.kick();
                true
            }
            Msg::Snapshot { reply, .. } if o.deferred.len() >= MAX_DEFERRED => {
                drop(reply);
                true
            }
            Msg::Connect {
                conn,
                player,
                last_v,
                own_moves,
                outbox,
                reply,
            } => {
                let _ = outbox.send(encode(&ServerMsg::Storage { waiting: true }));
                o.deferred.push_back(Msg::Connect {
                    conn,
                    player,
                    last_v,
                    own_moves,
                    outbox,
                    reply,
                });
                true
            }
            msg => {
                o.deferred.push_back(msg);
                true
            }
        }
    }

    /// Handles one message; false when the room must stop.
    async fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Connect {
                conn,
                player,
                last_v,
                own_moves,
                outbox,
                reply,
            } => {
                let side = player.as_ref().and_then(|p| self.room.seat_of(&p.id));
                let role = if side.is_some() { Role::Player } else { Role::Spectator };
                let now = self.now();
                let welcome = ServerMsg::Welcome {
                    protocol: PROTOCOL_VERSION,
                    game: self.room.id.clone(),
                    role,
                    side,
                    v: self.room.v(),
                };
                let mut ok = outbox.send(encode(&welcome));
                // A replay longer than half the queue would overflow it: a snapshot is smaller.
                let room_for = outbox.capacity() / 2;
                match last_v
                    .and_then(|v| self.room.missed_since(v))
                    .filter(|missed| missed.len() < room_for)
                {
                    Some(missed) => {
                        for mut l in missed {
                            ok &= outbox.send(Utf8Bytes::from(encode_for(&mut l, side, own_moves)));
                        }
                    }
                    None => {
                        let game = Box::new(self.room.view(Viewer::of(side), now));
                        ok &= outbox.send(encode(&ServerMsg::Snapshot { game }));
                    }
                }
                if !ok {
                    outbox.kick();
                    return true;
                }
                self.conns.insert(
                    conn,
                    Conn {
                        side,
                        player: player.map(|p| *p),
                        own_moves,
                        outbox,
                    },
                );
                if self.outage.is_some() {
                    self.send_to(conn, &ServerMsg::Storage { waiting: true });
                }
                let _ = reply.send(Welcome { role, side });
                let step = self.room.connected(side);
                self.commit_and_send(step, None).await
            }
            Msg::Disconnect { conn } => self.drop_conn(conn).await,
            Msg::Act {
                conn,
                act,
                lag_ms,
                received,
            } => {
                let Some(side) = self.conns.get(&conn).map(|c| c.side) else {
                    return true;
                };
                let Some(side) = side else {
                    self.send_error(
                        conn,
                        ErrorBody {
                            code: ErrorCode::NotAPlayer,
                            message: "spectators cannot act; join a seat to play".into(),
                        },
                    );
                    return true;
                };
                match self.room.act(side, *act, lag_ms, self.now(), wall_ms()) {
                    Ok(step) => self.commit_and_send(step, Some(received)).await,
                    Err(e) => {
                        self.send_error(conn, e);
                        true
                    }
                }
            }
            Msg::Chat { conn, channel, text } => {
                let Some(c) = self.conns.get(&conn) else { return true };
                let Some(player) = c.player.clone() else {
                    self.send_error(
                        conn,
                        ErrorBody {
                            code: ErrorCode::Unauthorized,
                            message: "chat needs a session token in hello".into(),
                        },
                    );
                    return true;
                };
                let side = c.side;
                match self.room.chat(&player, side, channel, &text, self.now(), wall_ms()) {
                    Ok(step) => self.commit_and_send(step, None).await,
                    Err(e) => {
                        self.send_error(conn, e);
                        true
                    }
                }
            }
            Msg::Join {
                player,
                side,
                seed,
                asked,
                reply,
            } => match if asked {
                self.room
                    .join_seeded((*player).clone(), side, seed.as_deref(), self.now(), wall_ms())
            } else {
                self.room.join((*player).clone(), side, self.now(), wall_ms())
            } {
                Ok((side, step)) => {
                    let mut ok = self.commit_and_send(step, None).await;
                    let _ = reply.send(if ok { Ok(side) } else { Err(gone()) });
                    // The player's open connections now act for the seat.
                    let watching: Vec<u64> = self
                        .conns
                        .iter()
                        .filter(|(_, c)| c.side.is_none() && c.player.as_ref().is_some_and(|p| p.id == player.id))
                        .map(|(&id, _)| id)
                        .collect();
                    for id in watching {
                        if let Some(c) = self.conns.get_mut(&id) {
                            c.side = Some(side);
                        }
                        self.send_to(
                            id,
                            &ServerMsg::Welcome {
                                protocol: PROTOCOL_VERSION,
                                game: self.room.id.clone(),
                                role: Role::Player,
                                side: Some(side),
                                v: self.room.v(),
                            },
                        );
                        let step = self.room.connected(Some(side));
                        ok = ok && self.commit_and_send(step, None).await;
                    }
                    ok
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                    true
                }
            },
            Msg::Snapshot { viewer, reply } => {
                let _ = reply.send(self.room.view(viewer, self.now()));
                true
            }
            Msg::Arbiter {
                by,
                action,
                reason,
                reply,
            } => match self.room.arbiter(&by, action, &reason, self.now(), wall_ms()) {
                Ok(step) => {
                    let ok = self.commit_and_send(step, None).await;
                    tracing::info!(game = %self.room.id, by = %by.id, action = action.name(), %reason, "arbiter");
                    let _ = reply.send(if ok {
                        Ok(self.room.snapshot(self.now()))
                    } else {
                        Err(gone())
                    });
                    ok
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                    true
                }
            },
            Msg::AddBot { level, side, reply } => {
                let id = format!("bot-{}", crate::http::random_hex(8));
                match self.room.add_bot(id, level, side, self.now(), wall_ms()) {
                    Ok((side, step)) => {
                        let ok = self.commit_and_send(step, None).await;
                        let _ = reply.send(if ok { Ok(side) } else { Err(gone()) });
                        ok
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                        true
                    }
                }
            }
        }
    }

    /// Starts the search of a bot that has something to decide, unless one
    /// runs already (a running job that has gone stale is dropped, which
    /// stops it, and the new one starts).
    fn schedule_bot(&mut self) {
        let Some(job) = self.room.bot_job(self.now()) else {
            self.thinking = None;
            return;
        };
        if self.thinking.as_ref().is_some_and(|t| t.job.epoch == job.epoch) {
            return;
        }
        if self.failed_epoch == Some(job.epoch) {
            return;
        }
        // Whether to weigh a draw offer before this move: phase 2 only, and
        // once in OFFER_EVERY_PLIES plies (it costs a search of its own).
        let plies = self.room.game().plies();
        let i = job.side.index();
        let offer = matches!(job.task, bots::Task::Move { .. })
            && self.room.game().bot_weighs_offer()
            && self.last_offer[i].is_none_or(|p| plies >= p + bots::OFFER_EVERY_PLIES);
        if offer {
            self.last_offer[i] = Some(plies);
        }
        let seed = bots::seed(&self.room.id, &job);
        let cancel = Arc::new(AtomicBool::new(false));
        let pool = self.ctx.bots.clone();
        // Games with a person are served before games of bots alone.
        let human = self.room.has_person();
        let search = self.room.game().bot_search(job.side, job.level, job.ask(offer), seed);
        let task = self.ctx.tracker.spawn({
            let cancel = Arc::clone(&cancel);
            async move { pool.run(search, job, cancel, human).await }
        });
        self.thinking = Some(Thinking {
            job,
            started: Instant::now(),
            task,
            cancel,
        });
    }

    /// A bot's search ended: its action goes to the room as its seat's,
    /// unless the game moved on meanwhile (then the next job starts).
    async fn bot_acts(&mut self, t: Thinking, act: Option<Act>) -> bool {
        self.ctx.metrics.bot_think.observe(t.started.elapsed());
        let job = t.job;
        drop(t);
        let Some(act) = act else {
            tracing::warn!(game = %self.room.id, side = %job.side, "a bot's search failed");
            self.failed_epoch = Some(job.epoch);
            return true;
        };
        if self.room.epoch() != job.epoch || self.room.phase != protocol::Phase::Live {
            tracing::debug!(game = %self.room.id, side = %job.side, "stale bot answer dropped");
            return true;
        }
        match self.room.act(job.side, act.clone(), 0, self.now(), wall_ms()) {
            Ok(step) => self.commit_and_send(step, None).await,
            Err(e) => {
                // Never expected (the bot plays legal moves): the bot waits
                // for the game to move on, or for its flag.
                tracing::warn!(game = %self.room.id, side = %job.side, ?act, error = ?e, "a bot's action was refused");
                self.failed_epoch = Some(job.epoch);
                true
            }
        }
    }

    async fn drop_conn(&mut self, conn: u64) -> bool {
        let Some(c) = self.conns.remove(&conn) else { return true };
        c.outbox.kick();
        let step = self.room.disconnected(c.side, self.now());
        self.commit_and_send(step, None).await
    }

    /// Commits a step, then broadcasts it. While the store is out (or when
    /// this commit finds it out) the step waits, unsent, and game time stands
    /// still from the moment the commit began. Any other failed commit stops
    /// the room: the store is the truth, and the room comes back from it on
    /// next use.
    async fn commit_and_send(&mut self, mut step: Step, received: Option<Instant>) -> bool {
        if step.is_empty() {
            return true;
        }
        if let Some(o) = &mut self.outage {
            o.pending.push(step);
            return true;
        }
        let began = self.now();
        let (committed, ops) = self
            .ctx
            .store
            .commit_owned(&self.room.id, self.room.v(), std::mem::take(&mut step.ops))
            .await;
        step.ops = ops;
        if let Err(e) = committed {
            if e.is_outage() {
                self.enter_outage(began);
                if let Some(o) = &mut self.outage {
                    o.pending.push(step);
                }
                return true;
            }
            let message = if matches!(e, StoreError::Fenced(_)) {
                tracing::warn!(game = %self.room.id, "another node took the game over; closing the room");
                "the game moved to another server; reconnect"
            } else {
                tracing::error!(game = %self.room.id, error = %e, "store commit failed; closing the room");
                "the server could not save; reconnect"
            };
            let msg = encode(&ServerMsg::Error {
                code: ErrorCode::Internal,
                message: message.into(),
            });
            for c in self.conns.values() {
                let _ = c.outbox.send(msg.clone());
            }
            return false;
        }
        self.sent(step, received).await
    }

    /// After its commit: broadcasts a step and drops connections too slow for it.
    async fn sent(&mut self, step: Step, received: Option<Instant>) -> bool {
        let mut step = step;
        let slow = self.broadcast(&mut step.events);
        if step.moves > 0 {
            self.ctx
                .metrics
                .moves
                .fetch_add(u64::from(step.moves), Ordering::Relaxed);
            if let Some(r) = received {
                // A person's move: games of bots alone and password hashing yield to it (crate::pace).
                self.ctx.bots.pacer().people().person_moved(r.into_std());
                self.ctx.metrics.move_latency.observe(r.elapsed());
            }
        }
        // Slow connections go; their departure is itself a step.
        for conn in slow {
            self.ctx.metrics.slow_drops.fetch_add(1, Ordering::Relaxed);
            if !Box::pin(self.drop_conn(conn)).await {
                return false;
            }
        }
        true
    }

    /// Sends events to every connection, each as [`encode_for`] writes it
    /// for the connection, once per distinct copy ([`Logged::projection`],
    /// and one more for the connections that get a status without the legal
    /// moves, written first: the copy with them is then made from it,
    /// [`Logged::encode_listed`]); returns the connections whose queue was full.
    fn broadcast(&self, events: &mut [Logged]) -> Vec<u64> {
        let mut slow = Vec::new();
        for l in events {
            let projection = l.projection();
            let lean_viewer = self.conns.values().find_map(|c| {
                let v = Viewer::of(c.side);
                (c.own_moves && l.lists_moves_for_another(v)).then_some(v)
            });
            let lean_copy = lean_viewer.map(|v| Utf8Bytes::from(l.encode_lean(v)));
            let mut copies: [Option<Utf8Bytes>; 4] = Default::default();
            for (&id, c) in &self.conns {
                let viewer = Viewer::of(c.side);
                let msg = match &lean_copy {
                    Some(lean) if c.own_moves && l.lists_moves_for_another(viewer) => lean.clone(),
                    _ => copies[projection.slot(viewer)]
                        .get_or_insert_with(|| {
                            let listed = lean_copy
                                .as_ref()
                                .filter(|_| l.audience.admits(viewer))
                                .and_then(|lean| l.encode_listed(lean.as_str()));
                            Utf8Bytes::from(listed.unwrap_or_else(|| l.encode_view(viewer)))
                        })
                        .clone(),
                };
                if !c.outbox.send(msg) && !slow.contains(&id) {
                    slow.push(id);
                }
            }
        }
        slow
    }
}

#[cfg(test)]
mod tests;
