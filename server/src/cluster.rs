//! The cluster (issue 17): identical `sanguo serve` nodes on one Postgres and
//! one NATS, switched on by configuration (`--nats-url`). Without it the
//! server is the single node it always was (SQLite or Postgres, no broker).
//!
//! - **Ownership.** Each game is owned by one node at a time: `games.owner_node`
//!   and `games.owner_epoch`. A node holds one lease for all its games, its
//!   `nodes` row (`lease_until`, by the database's clock), renewed every third
//!   of the lease. A game whose owner's lease has lapsed (or that has no
//!   owner) is taken over by whichever node wants it first, with the epoch
//!   raised by one, and restored from the store through the ordinary restore
//!   path. Why one lease per node and not one per game: renewing is then one
//!   row a second per node, not one row per game per second, and every game
//!   still has its own epoch to fence with.
//! - **Fencing.** Every commit of a game checks its epoch in its own
//!   transaction ([`crate::store::Fences`]): a node that lost a game (its lease
//!   lapsed, it was cut off) can never write it again, even before it knows.
//! - **Relay.** A client's socket may land on any node. A node that does not
//!   own the game runs a proxy room ([`crate::room::remote`]) that sends the
//!   client's commands to the owner over NATS (`sanguo.node.<owner>.cmd`) and
//!   gets the room's messages for that client back on its own subject
//!   (`sanguo.node.<node>.out`), numbered per connection so that a gap is seen
//!   (then the client is made to reconnect, and catches up from its last
//!   version as after any reconnect).
//! - **Shutdown.** A stopping node stops its rooms (between commits), then
//!   releases its games at once (`owner_node = NULL`): the others take them
//!   over without waiting for the lease to lapse.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use protocol::tournament::ArbiterAction;
use protocol::{Channel, ErrorBody, Role, Side, Snapshot};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use tokio_util::sync::CancellationToken;

use crate::store::{Fences, Player, Store, StoreError};

/// Cluster settings (`sanguo serve --nats-url …`).
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The NATS server, e.g. `nats://127.0.0.1:4222`.
    pub nats_url: String,
    /// This node's name (its id adds a random suffix per start).
    pub name: String,
    /// How long a node's lease lasts without renewal: the longest a game
    /// waits for a takeover after its owner died.
    pub lease: Duration,
}

impl ClusterConfig {
    /// The default lease: 3 s (renewed every second; see docs/CLUSTER.md).
    pub const LEASE: Duration = Duration::from_secs(3);
}

/// The database's clock in milliseconds since the Unix epoch: every lease is
/// measured by it, so the nodes' own clocks never matter.
const NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// Who holds a game, as [`Cluster::claim`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This node owns it now, at this epoch (set in the fences).
    Mine(i64),
    /// Another node, alive, owns it.
    Other(String),
    /// No such game.
    None,
}

/// One running node of the cluster.
#[derive(Debug)]
pub struct Cluster {
    /// This node's id: its name and a random suffix, new at every start.
    pub node: String,
    /// The NATS client.
    pub nats: async_nats::Client,
    /// The lease length.
    pub lease: Duration,
    store: Store,
    fences: std::sync::Arc<Fences>,
    /// Cancelled when this node's lease lapsed: every room it owns stops
    /// (their games belong to whoever takes them over). Replaced by a fresh
    /// token once the node has a lease again.
    lost: Mutex<CancellationToken>,
    /// Set while the node holds a valid lease.
    leased: AtomicBool,
}

/// A message to a game's owner, on `sanguo.node.<owner>.cmd`. `conn` is the
/// sending node's connection id; with `from` it names a connection in the
/// whole cluster.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Cmd {
    /// A client connects (request; answered [`Reply::Welcome`]).
    Connect {
        game: String,
        from: String,
        conn: u64,
        player: Option<WirePlayer>,
        last_v: Option<u64>,
        /// `hello`'s `legal_moves` was `own`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        own_moves: bool,
    },
    /// The client left (published).
    Disconnect { game: String, from: String, conn: u64 },
    /// A player's action (published; errors come back on the connection).
    Act {
        game: String,
        from: String,
        conn: u64,
        act: WireAct,
        lag_ms: u64,
    },
    /// A chat line (published).
    Chat {
        game: String,
        from: String,
        conn: u64,
        channel: Channel,
        text: String,
    },
    /// Takes a seat (request; [`Reply::Side`]).
    Join {
        game: String,
        player: WirePlayer,
        side: Option<Side>,
        seed: Option<String>,
        asked: bool,
    },
    /// Adds a bot (request; [`Reply::Side`]).
    AddBot {
        game: String,
        level: u8,
        side: Option<Side>,
    },
    /// An arbiter's action (request; [`Reply::Snapshot`]).
    Arbiter {
        game: String,
        by: WirePlayer,
        action: ArbiterAction,
        reason: String,
    },
    /// The state as a seat or a spectator sees it (request; [`Reply::Snapshot`]).
    View { game: String, seat: Option<Side> },
    /// The sending node is alive and relays connections to this node's
    /// games (request; [`Reply::Ok`]): one a second per pair of nodes.
    Ping { from: String },
}

impl Cmd {
    /// The game it is for (none: a ping).
    pub fn game(&self) -> Option<&str> {
        Some(match self {
            Cmd::Connect { game, .. }
            | Cmd::Disconnect { game, .. }
            | Cmd::Act { game, .. }
            | Cmd::Chat { game, .. }
            | Cmd::Join { game, .. }
            | Cmd::AddBot { game, .. }
            | Cmd::Arbiter { game, .. }
            | Cmd::View { game, .. } => game,
            Cmd::Ping { .. } => return None,
        })
    }
}

/// The owner's answer to a request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Reply {
    /// Done.
    Ok,
    /// The owner does not hold this game's room (any more): ask the store
    /// who does.
    NotHere,
    /// Connected.
    Welcome { role: Role, side: Option<Side> },
    /// The seat taken.
    Side { side: Side },
    /// A state.
    Snapshot { game: Box<Snapshot> },
    /// Refused, as the room would refuse a local caller.
    Error { error: ErrorBody },
}

/// [`Player`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WirePlayer {
    pub id: String,
    pub name: String,
    pub account: bool,
    pub bot: Option<u8>,
}

impl From<&Player> for WirePlayer {
    fn from(p: &Player) -> Self {
        WirePlayer {
            id: p.id.clone(),
            name: p.name.clone(),
            account: p.account,
            bot: p.bot.map(bot::Level::number),
        }
    }
}

impl From<WirePlayer> for Player {
    fn from(p: WirePlayer) -> Self {
        Player {
            id: p.id,
            name: p.name,
            account: p.account,
            bot: p.bot.and_then(bot::Level::from_number),
        }
    }
}

/// [`crate::room::core::Act`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum WireAct {
    Move { ply: u32, mv: String },
    Resign,
    OfferDraw,
    AnswerDraw { accept: bool },
    Seed { seed: String },
}

impl From<crate::room::core::Act> for WireAct {
    fn from(a: crate::room::core::Act) -> Self {
        use crate::room::core::Act;
        match a {
            Act::Move { ply, mv } => WireAct::Move { ply, mv },
            Act::Resign => WireAct::Resign,
            Act::OfferDraw => WireAct::OfferDraw,
            Act::AnswerDraw(accept) => WireAct::AnswerDraw { accept },
            Act::Seed(seed) => WireAct::Seed { seed },
        }
    }
}

impl From<WireAct> for crate::room::core::Act {
    fn from(a: WireAct) -> Self {
        use crate::room::core::Act;
        match a {
            WireAct::Move { ply, mv } => Act::Move { ply, mv },
            WireAct::Resign => Act::Resign,
            WireAct::OfferDraw => Act::OfferDraw,
            WireAct::AnswerDraw { accept } => Act::AnswerDraw(accept),
            WireAct::Seed { seed } => Act::Seed(seed),
        }
    }
}

/// A cluster failure at start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// NATS could not be reached.
    #[error("nats: {0}")]
    Nats(String),
    /// The store refused.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What nodes tell each other (presence, penalties), on `sanguo.shared.*`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
enum Shared {
    /// Every (game, player) a node's sockets hold now.
    Presence { node: String, keys: Vec<(String, String)> },
    /// A node cut a client off for flooding.
    Penalty { node: String, key: String, wait_ms: u64 },
}

/// How often a node publishes its presence.
const PRESENCE_EVERY: Duration = Duration::from_secs(4);

/// The subject a node's commands arrive on.
pub fn cmd_subject(node: &str) -> String {
    format!("sanguo.node.{node}.cmd")
}

/// The subject a node's relayed connections get their messages on.
pub fn out_subject(node: &str) -> String {
    format!("sanguo.node.{node}.out")
}

/// A node name fit for a NATS subject token and a log line.
fn clean_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
        .take(40)
        .collect();
    if s.is_empty() { "node".into() } else { s }
}

impl Cluster {
    /// Joins the cluster: connects to NATS and takes this node's lease.
    pub async fn join(config: &ClusterConfig, store: Store) -> Result<Cluster, ClusterError> {
        let fences = store
            .fences()
            .cloned()
            .ok_or_else(|| StoreError::Corrupt("a cluster node's store must be fenced".into()))?;
        let node = format!("{}-{}", clean_name(&config.name), crate::http::random_hex(4));
        let nats = async_nats::ConnectOptions::new()
            .name(node.clone())
            .retry_on_initial_connect()
            .connection_timeout(Duration::from_secs(2))
            .connect(config.nats_url.as_str())
            .await
            .map_err(|e| ClusterError::Nats(e.to_string()))?;
        let cluster = Cluster {
            node,
            nats,
            lease: config.lease.max(Duration::from_millis(300)),
            store,
            fences,
            lost: Mutex::new(CancellationToken::new()),
            leased: AtomicBool::new(false),
        };
        cluster.register().await?;
        cluster.store.set_node(&cluster.node);
        tracing::info!(node = %cluster.node, lease_ms = cluster.lease.as_millis() as u64, "joined the cluster");
        Ok(cluster)
    }

    fn lease_ms(&self) -> i64 {
        self.lease.as_millis() as i64
    }

    /// Writes (or rewrites) this node's row with a fresh lease.
    async fn register(&self) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO nodes (id, lease_until, started_ms) VALUES ($1, {NOW_MS} + $2, {NOW_MS}) \
             ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until"
        ))
        .bind(&self.node)
        .bind(self.lease_ms())
        .execute(&self.store.pool)
        .await?;
        self.leased.store(true, Ordering::Release);
        Ok(())
    }

    /// Renews the lease; `false` when it had lapsed (nothing renewed).
    async fn renew(&self) -> Result<bool, StoreError> {
        let done = sqlx::query(&format!(
            "UPDATE nodes SET lease_until = {NOW_MS} + $2 WHERE id = $1 AND lease_until > {NOW_MS}"
        ))
        .bind(&self.node)
        .bind(self.lease_ms())
        .execute(&self.store.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The token every room of this node watches: cancelled when the node
    /// loses its lease.
    pub fn lost_token(&self) -> CancellationToken {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether this node holds its lease (it claims nothing without one).
    pub fn is_leased(&self) -> bool {
        self.leased.load(Ordering::Acquire)
    }

    /// The SQL condition "the game's owner is not a live node (or is me)".
    fn takeable() -> String {
        format!(
            "(owner_node IS NULL OR owner_node = $1 OR NOT EXISTS \
             (SELECT 1 FROM nodes n WHERE n.id = games.owner_node AND n.lease_until > {NOW_MS}))"
        )
    }

    /// Takes `game` if nobody alive owns it (raising its epoch); otherwise
    /// says who does. A game this node already owns is taken anew (its room
    /// is not in memory, or the caller would not ask).
    pub async fn claim(&self, game: &str) -> Result<Claim, StoreError> {
        if !self.is_leased() {
            return Err(StoreError::Unavailable("this node holds no lease".into()));
        }
        let taken = sqlx::query(&format!(
            "UPDATE games SET owner_node = $1, owner_epoch = owner_epoch + 1 WHERE id = $2 AND {} \
             RETURNING owner_epoch",
            Self::takeable()
        ))
        .bind(&self.node)
        .bind(game)
        .fetch_optional(&self.store.pool)
        .await?;
        if let Some(r) = taken {
            let epoch: i64 = r.try_get(0)?;
            self.fences.set(game, epoch);
            return Ok(Claim::Mine(epoch));
        }
        let owner = sqlx::query("SELECT owner_node FROM games WHERE id = $1")
            .bind(game)
            .fetch_optional(&self.store.pool)
            .await?;
        Ok(match owner {
            None => Claim::None,
            Some(r) => match r.try_get::<Option<String>, _>(0)? {
                Some(node) => Claim::Other(node),
                // Released between the two statements: try again later.
                None => return Err(StoreError::Unavailable("the game is changing hands".into())),
            },
        })
    }

    /// Takes up to `limit` unfinished games that no live node owns (their
    /// node died, was cut off, or released them); returns them with their
    /// new epochs, set in the fences. `SKIP LOCKED`: nodes adopting at the
    /// same time take different games, and a game whose commit is in flight
    /// is not waited for.
    pub async fn adopt(&self, limit: i64) -> Result<Vec<(String, i64)>, StoreError> {
        if !self.is_leased() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&format!(
            "UPDATE games SET owner_node = $1, owner_epoch = owner_epoch + 1 WHERE id IN \
             (SELECT id FROM games WHERE phase <> 'finished' AND owner_node IS DISTINCT FROM $1 AND {} \
              LIMIT $2 FOR UPDATE SKIP LOCKED) \
             RETURNING id, owner_epoch",
            Self::takeable()
        ))
        .bind(&self.node)
        .bind(limit)
        .fetch_all(&self.store.pool)
        .await?;
        let mut taken = Vec::with_capacity(rows.len());
        for r in rows {
            let id: String = r.try_get(0)?;
            let epoch: i64 = r.try_get(1)?;
            self.fences.set(&id, epoch);
            taken.push((id, epoch));
        }
        Ok(taken)
    }

    /// Gives `game` up (its room stopped here): anyone may take it at once.
    pub async fn release(&self, game: &str) {
        let Some(epoch) = self.fences.get(game) else { return };
        self.fences.remove(game);
        let r =
            sqlx::query("UPDATE games SET owner_node = NULL WHERE id = $1 AND owner_node = $2 AND owner_epoch = $3")
                .bind(game)
                .bind(&self.node)
                .bind(epoch)
                .execute(&self.store.pool)
                .await;
        if let Err(e) = r {
            tracing::debug!(game, error = %e, "releasing a game failed; its lease will lapse");
        }
    }

    /// Gives every game of this node up and ends its lease (shutdown, after
    /// its rooms stopped).
    pub async fn leave(&self) {
        self.leased.store(false, Ordering::Release);
        self.fences.clear();
        let released = sqlx::query("UPDATE games SET owner_node = NULL WHERE owner_node = $1")
            .bind(&self.node)
            .execute(&self.store.pool)
            .await;
        let _ = sqlx::query("DELETE FROM nodes WHERE id = $1")
            .bind(&self.node)
            .execute(&self.store.pool)
            .await;
        match released {
            Ok(r) => tracing::info!(node = %self.node, games = r.rows_affected(), "left the cluster; games released"),
            Err(e) => {
                tracing::warn!(node = %self.node, error = %e, "leaving: games not released; their lease will lapse")
            }
        }
        let _ = self.nats.flush().await;
    }

    /// Tells the other nodes that `key` was cut off for flooding for `wait`:
    /// they keep it out as long (one penalty box for the whole cluster).
    pub fn share_penalty(&self, key: &str, wait: Duration) {
        let msg = Shared::Penalty {
            node: self.node.clone(),
            key: key.to_owned(),
            wait_ms: wait.as_millis() as u64,
        };
        let nats = self.nats.clone();
        if let Ok(body) = serde_json::to_vec(&msg) {
            tokio::spawn(async move {
                let _ = nats.publish("sanguo.shared.penalty", body.into()).await;
            });
        }
    }

    /// Cluster-wide state that lives in memory: publishes this node's
    /// presence every few seconds, and takes the others' presence and
    /// penalties into this node's maps, until shutdown.
    pub async fn share_state(
        self: std::sync::Arc<Self>,
        penalties: std::sync::Arc<crate::penalty::PenaltyBox>,
        limits: std::sync::Arc<crate::limits::Limits>,
        shutdown: CancellationToken,
    ) {
        use futures_util::StreamExt;
        let mut sub = match self.nats.subscribe("sanguo.shared.*").await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cannot subscribe to the cluster's shared state");
                return;
            }
        };
        let mut tick = tokio::time::interval(PRESENCE_EVERY);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {
                    let msg = Shared::Presence { node: self.node.clone(), keys: limits.presence.local() };
                    if let Ok(body) = serde_json::to_vec(&msg) {
                        let _ = self.nats.publish("sanguo.shared.presence", body.into()).await;
                    }
                }
                m = sub.next() => {
                    let Some(m) = m else { return };
                    match serde_json::from_slice::<Shared>(&m.payload) {
                        Ok(Shared::Presence { node, keys }) if node != self.node => limits.presence.set_remote(&node, keys),
                        Ok(Shared::Penalty { node, key, wait_ms }) if node != self.node => {
                            penalties.impose(&key, Duration::from_millis(wait_ms), std::time::Instant::now());
                        }
                        Ok(_) => {}
                        Err(e) => tracing::debug!(error = %e, "unreadable shared state"),
                    }
                }
            }
        }
    }

    /// The lease's life: renews it every third of its length while NATS is
    /// connected. A node cut off from NATS stops renewing (its games move to
    /// nodes that can relay them); a node whose lease lapsed (cut off from
    /// Postgres or NATS, or stalled) stops every room it holds, releases
    /// what nobody took, and takes a fresh lease when it can.
    pub async fn keep_lease(self: std::sync::Arc<Self>, shutdown: CancellationToken) {
        let every = self.lease / 3;
        let mut last_renewed = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let connected = self.nats.connection_state() == async_nats::connection::State::Connected;
            // The lease runs from when the renewal was sent, at the latest:
            // the database measured it from a moment after that.
            let sent = tokio::time::Instant::now();
            let renewed = if connected { self.renew().await } else { Ok(false) };
            match renewed {
                Ok(true) => {
                    last_renewed = sent;
                    continue;
                }
                Ok(false) if !connected && last_renewed.elapsed() < self.lease => continue,
                Err(e) if last_renewed.elapsed() < self.lease => {
                    tracing::warn!(node = %self.node, error = %e, "lease renewal failed");
                    continue;
                }
                _ => {}
            }
            if self.leased.swap(false, Ordering::AcqRel) {
                tracing::error!(node = %self.node, "lease lapsed: stopping every room of this node");
                let old = std::mem::take(&mut *self.lost.lock().unwrap_or_else(|e| e.into_inner()));
                old.cancel();
                self.fences.clear();
            }
            if !connected {
                continue;
            }
            // Back: what nobody took is released (the others adopt it; so do
            // we), then a fresh lease.
            let released = sqlx::query("UPDATE games SET owner_node = NULL WHERE owner_node = $1")
                .bind(&self.node)
                .execute(&self.store.pool)
                .await;
            let sent = tokio::time::Instant::now();
            if released.is_ok() && self.register().await.is_ok() {
                last_renewed = sent;
                tracing::warn!(node = %self.node, "lease taken anew");
            }
        }
    }
}
