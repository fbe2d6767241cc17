//! The store: players, sessions, games, seats, every accepted event, chat.
//!
//! One code path for Postgres (production) and SQLite (the default when no
//! `DATABASE_URL` is given) through sqlx's `Any` driver. Why `Any` and not two
//! backends: the server's SQL is small and plain (TEXT and BIGINT columns,
//! ids made here, no sequences), so one set of queries and one set of
//! migrations serve both stores and the tests exercise the very code that
//! runs in production on either. The price — no compile-time checked queries
//! and the `Any` value conversion — is small next to a commit's fsync.
//!
//! Durability: the room commits the rows of an accepted command in one
//! transaction and sends nothing before the commit returns. SQLite runs in
//! WAL mode with `synchronous=FULL`, so a commit survives a crash.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use protocol::{
    Channel, GameRecord, GameResult, GameSettings, GameSummary, Phase, RecordChat, RecordEvent, RecordMove, SeatInfo,
    Side, Snapshot,
};
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;
use sqlx::Row;
use sqlx::any::AnyRow;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{AnyPool, Connection as _, Executor};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

use crate::metrics::Metrics;

/// The migrations of `migrations/`, embedded at build time.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// A store failure. Details are logged; clients only ever see `internal`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A database error.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    /// Migrations failed.
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A unique constraint refused the row (username taken, seat taken).
    #[error("already exists")]
    Conflict,
    /// A stored row does not parse.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The database is unreachable (a group commit failed on an outage).
    #[error("store unreachable: {0}")]
    Unavailable(String),
    /// The game's ownership moved to another node (cluster mode): this node's
    /// lease epoch no longer matches the stored one, and it may never write
    /// the game again ([`Fences`]).
    #[error("fenced: game {0} is owned by another node now")]
    Fenced(String),
}

impl StoreError {
    /// Whether the database is unreachable (down, restarting, network gone),
    /// as opposed to refusing this write: the write may succeed later.
    pub fn is_outage(&self) -> bool {
        match self {
            StoreError::Db(e) => match e {
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::WorkerCrashed => true,
                // SQLSTATE classes 08 (connection exception), 57 (operator
                // intervention: admin shutdown, crash shutdown, cannot connect
                // now) and 53 (insufficient resources).
                sqlx::Error::Database(d) => d
                    .code()
                    .is_some_and(|c| c.starts_with("08") || c.starts_with("57") || c.starts_with("53")),
                _ => false,
            },
            StoreError::Unavailable(_) => true,
            _ => false,
        }
    }
}

fn conflict(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => StoreError::Conflict,
        _ => StoreError::Db(e),
    }
}

/// A player as the server knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Player {
    /// The id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Whether it has an account.
    pub account: bool,
    /// A computer player of this level (a bot has no session and no account).
    pub bot: Option<bot::Level>,
}

impl Player {
    /// A person without an account (a guest, or a seat as the store keeps
    /// it: id and name only).
    pub fn guest(id: String, name: String) -> Player {
        Player {
            id,
            name,
            account: false,
            bot: None,
        }
    }

    /// A new bot player for one seat: its own id (`bot-…`), a name saying its level.
    pub fn new_bot(id: String, level: bot::Level) -> Player {
        Player {
            id,
            name: format!("Bot (level {})", level.number()),
            account: false,
            bot: Some(level),
        }
    }

    /// How a seat shows this player.
    pub fn seat_info(&self, online: bool) -> SeatInfo {
        SeatInfo {
            player: self.id.clone(),
            name: self.name.clone(),
            online: online || self.bot.is_some(),
            bot: self.bot.map(bot::Level::number),
        }
    }
}

/// What a session token stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenLookup {
    /// A live session of this player.
    Player(Player),
    /// No such session.
    Unknown,
    /// The session is older than the configured lifetime.
    Expired,
}

/// An accepted engine event as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// Order in the game.
    pub seq: u64,
    /// The version of its first broadcast event.
    pub v: u64,
    /// Who.
    pub side: Side,
    /// `move W72-W54`, `resign`, …
    pub action: String,
    /// Game time, ms.
    pub at_ms: u64,
    /// Wall time, ms since the epoch.
    pub wall_ms: i64,
    /// Moves: time charged.
    pub spent_ms: Option<u64>,
    /// Moves: lag credit given.
    pub lag_ms: Option<u64>,
    /// Main time and periods left per side after it: moves, and departures
    /// or ends that stopped a running clock (charged for its turn).
    pub clocks: Option<([u64; 3], [u32; 3])>,
}

/// An arbiter's action on a game, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArbiterRow {
    /// The version of its event.
    pub v: u64,
    /// Engine events accepted before it.
    pub after_seq: u64,
    /// Game time, ms.
    pub at_ms: u64,
    /// Wall time, ms since the epoch.
    pub wall_ms: i64,
    /// Who (player id).
    pub by: String,
    /// Who (name).
    pub by_name: String,
    /// Why.
    pub reason: String,
    /// What.
    pub action: protocol::tournament::ArbiterAction,
}

/// A write of the room, committed together with the others of one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A player takes a seat.
    Seat {
        /// The seat.
        side: Side,
        /// Who.
        player: String,
        /// A bot seat: its name and level; the player row is written with the seat.
        bot: Option<(String, bot::Level)>,
        /// Wall time.
        wall_ms: i64,
    },
    /// An accepted engine event.
    Event(EventRow),
    /// A chat line.
    Chat {
        /// Its version.
        v: u64,
        /// The channel.
        channel: Channel,
        /// The writer.
        player: String,
        /// The writer's name.
        name: String,
        /// The line.
        text: String,
        /// Wall time.
        wall_ms: i64,
    },
    /// An arbiter acted.
    Arbiter(ArbiterRow),
    /// The game's secret is new (三国暗棋: the layout and salt): kept where
    /// only rooms read it (`game_secrets`), replacing an older one.
    Secret(String),
    /// A finished game's final state as spectators see it (its record lines
    /// included), kept in `game_finals` so that its record and state are
    /// read, not replayed. Written with the finish, replacing an older one.
    Final(Box<Snapshot>),
    /// The game changes phase (with its result when it finishes).
    Phase {
        /// The new phase.
        phase: Phase,
        /// The result.
        result: Option<GameResult>,
        /// Wall time.
        wall_ms: i64,
    },
}

/// A game as stored, enough to restore its room.
#[derive(Clone, Debug)]
pub struct StoredGame {
    /// The id.
    pub id: String,
    /// The phase.
    pub phase: Phase,
    /// The settings.
    pub settings: GameSettings,
    /// Start position text.
    pub initial_position: String,
    /// Seats W, B, Y.
    pub seats: [Option<Player>; 3],
    /// Accepted events in order.
    pub events: Vec<EventRow>,
    /// The last version handed out.
    pub v: u64,
    /// Arbiter actions in order.
    pub arbiter: Vec<ArbiterRow>,
    /// The stored result (an arbiter's verdict is only found here).
    pub result: Option<GameResult>,
    /// The game's secret (`game_secrets`), for the room only.
    pub secret: Option<String>,
    /// Chat lines stored per channel: players', spectators'
    /// ([`crate::room::core::chat_slot`]); the room's cap counts on from them.
    pub chat_lines: [u32; 2],
}

/// The store: a pool, the SQL, and the group-commit writer.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) pool: AnyPool,
    /// SQLite (`group_concat`) rather than Postgres (`string_agg`).
    sqlite: bool,
    metrics: Metrics,
    /// Rooms' writes go through the group commit when it runs.
    writer: Option<mpsc::Sender<Pending>>,
    /// The group commit's transactions in flight: a permit each.
    commit_slots: Arc<CommitSlots>,
    /// Whether the database answers (`true`) or is out; rooms watch it.
    health: Arc<watch::Sender<bool>>,
    /// Cluster mode: the lease epoch of every game this node owns, checked
    /// by every commit of the game (`None`: one node, no fencing).
    fences: Option<Arc<Fences>>,
    /// Cluster mode: this node's id, the owner of the games it creates.
    node: Arc<std::sync::OnceLock<String>>,
    /// Postgres: the group commit's connections between its transactions.
    kept: Arc<KeptConns>,
    /// Postgres: the connections of the requests' frequent statements.
    requests: Arc<RequestConns>,
}

/// The group commit's Postgres connections, kept out of the pool between
/// transactions. sqlx pings every connection given back to its pool (in a
/// task of its own: one more round trip and a wake-up of the backend), which
/// the group commit paid once per transaction, ~3 % of the server's CPU at
/// 10,000 moves a second (docs/CAPACITY.md). A kept connection goes back to
/// work without it: its last transaction showed that it works; one idle for
/// [`TEST_IDLE_CONNECTION`], or any while the store is marked down, is pinged
/// first, as the pool's are on acquiring ([`test_before_use`]). One that failed a
/// transaction is closed, not kept. Taken from the pool ([`PoolConnection::detach`],
/// which lets the pool open another in its place); at most one for each
/// transaction in flight is kept, and none longer than [`KEPT_LIFETIME`]
/// after it left the pool.
#[derive(Debug, Default)]
struct KeptConns(std::sync::Mutex<Vec<Kept>>);

/// The connections of the statements every guest, game, seat and socket
/// costs (a session's lookup, a guest's and a game's creation, a creator's
/// count of open games, a game's phase), kept out of the pool as the group
/// commit's are ([`KeptConns`]), for the same reason: through the pool each
/// such statement was two round trips (itself, then sqlx's ping on giving the
/// connection back). At most [`REQUEST_CONNS`] at once (a permit each, waited
/// for as long as the pool would wait); as many are kept between requests.
#[derive(Debug)]
struct RequestConns {
    kept: KeptConns,
    permits: Arc<Semaphore>,
}

/// The most connections the requests' frequent statements hold at once.
const REQUEST_CONNS: usize = 8;

impl Default for RequestConns {
    fn default() -> Self {
        RequestConns {
            kept: KeptConns::default(),
            permits: Arc::new(Semaphore::new(REQUEST_CONNS)),
        }
    }
}

/// A connection for one request's statements ([`Store::request_conn`]),
/// holding its permit: given back with [`Store::keep_request`] once they
/// ended cleanly; dropped otherwise (a kept one is then closed).
pub(crate) struct RequestConn {
    conn: CommitConn,
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl std::ops::Deref for RequestConn {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for RequestConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

/// A kept connection, with when it left the pool and when it was last used.
#[derive(Debug)]
struct Kept {
    conn: AnyConnection,
    born: Instant,
    used: Instant,
}

/// A kept connection is closed this long after it left the pool, as the pool
/// retires its own (sqlx's default `max_lifetime`).
const KEPT_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// The connection of a group-commit transaction: the pool's (SQLite, whose
/// single connection is the pool's) or one kept out of it (Postgres).
enum CommitConn {
    Pooled(PoolConnection<sqlx::Any>),
    Kept(AnyConnection, Instant),
}

impl std::ops::Deref for CommitConn {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match self {
            CommitConn::Pooled(c) => c,
            CommitConn::Kept(c, _) => c,
        }
    }
}

impl std::ops::DerefMut for CommitConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            CommitConn::Pooled(c) => c,
            CommitConn::Kept(c, _) => c,
        }
    }
}

/// The lease epochs of the games a node owns (issue 17). Every commit of a
/// game locks its `games` row and checks `owner_epoch` against the epoch
/// here, in the commit's own transaction: a node whose lease was taken over
/// (a higher epoch stored by the new owner) can never write the game again,
/// even before it learns that it lost it. The row lock orders commits and
/// takeovers: a takeover waits for a commit in flight, and a commit after a
/// takeover finds the new epoch.
#[derive(Debug, Default)]
pub struct Fences(std::sync::Mutex<HashMap<String, i64>>);

impl Fences {
    /// This node owns `game` at `epoch` from now on.
    pub fn set(&self, game: &str, epoch: i64) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(game.to_owned(), epoch);
    }

    /// This node no longer owns `game`.
    pub fn remove(&self, game: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(game);
    }

    /// This node owns no game any more (its lease lapsed, or it leaves).
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The epoch of `game`, if owned here.
    pub fn get(&self, game: &str) -> Option<i64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(game).copied()
    }
}

/// How long a query waits for a connection: while the database is down,
/// this is how long a commit takes to find out.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
/// A pooled connection idle this long is pinged before it is used (one in
/// steady use is not: its last query showed it works).
const TEST_IDLE_CONNECTION: Duration = Duration::from_secs(1);

/// Whether a connection idle for `idle` is pinged before it is used, the
/// store being up or not: the pool's connections and the group commit's
/// kept ones alike.
fn test_before_use(idle: Duration, up: bool) -> bool {
    idle >= TEST_IDLE_CONNECTION || !up
}
/// How often the store probes a database that went away.
const PROBE_EVERY: Duration = Duration::from_millis(500);

/// One room's writes waiting for a group commit. The room gave its ops up
/// (no copy of them is queued) and gets them back with the answer: `Some`
/// of the commit's result once it was tried ([`Pending::finish`]), `None`
/// when the writer dropped it untried (its queue or task gone), for the room
/// to commit them on its own. Dropped unfinished, it hands them back so.
#[derive(Debug)]
struct Pending {
    game: String,
    v: u64,
    ops: Vec<Op>,
    done: Option<oneshot::Sender<Answer>>,
}

/// What a room gets back for its [`Pending`] commit.
type Answer = (Option<Result<(), StoreError>>, Vec<Op>);

impl Pending {
    fn finish(mut self, r: Result<(), StoreError>) {
        if let Some(done) = self.done.take() {
            let _ = done.send((Some(r), std::mem::take(&mut self.ops)));
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send((None, std::mem::take(&mut self.ops)));
        }
    }
}

/// Writes of this many rooms at most go in one transaction.
const MAX_BATCH: usize = 256;
/// Group-commit transactions in flight at once, by default (`--commits-in-flight`).
pub const COMMITS_IN_FLIGHT: usize = 2;
/// How long a group commit waits for more writes after its first, by
/// default (`--commit-window-us`): 1 ms.
pub const COMMIT_WINDOW: Duration = Duration::from_millis(1);

/// The permits of the group commit's transactions in flight, and how many
/// there are.
#[derive(Debug)]
struct CommitSlots {
    permits: Arc<Semaphore>,
    total: std::sync::Mutex<usize>,
    /// How long a batch waits for more writes after its first, µs (0: not at all).
    window_us: std::sync::atomic::AtomicU64,
}
/// Event rows per multi-row INSERT (12 parameters each; SQLite allows 32,766).
const EVENT_ROWS_PER_INSERT: usize = 128;
/// Games whose version one `UPDATE` records (two parameters each; SQLite
/// allows 32,766 parameters per statement, Postgres 65,535).
const VERSIONS_PER_STATEMENT: usize = 500;

/// Milliseconds since the Unix epoch.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The SHA-256 of a session token, as stored.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn side_of(s: &str) -> Result<Side, StoreError> {
    Side::parse(s).ok_or_else(|| StoreError::Corrupt(format!("side {s:?}")))
}

fn triple<T: std::str::FromStr + Copy + Default>(s: &str) -> Result<[T; 3], StoreError> {
    let mut out = [T::default(); 3];
    let mut parts = s.split(',');
    for slot in &mut out {
        *slot = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| StoreError::Corrupt(format!("triple {s:?}")))?;
    }
    Ok(out)
}

/// `a,b,c` (clocks and periods of a move).
fn join3<T: Copy + Into<u64>>(a: &[T; 3]) -> String {
    let mut out = String::with_capacity(24);
    push_triple(&mut out, a.map(Into::into));
    out
}

fn push_triple(out: &mut String, a: [u64; 3]) {
    for (i, n) in a.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(itoa::Buffer::new().format(n));
    }
}

/// Columns of rows as Postgres array literals (`{"a",NULL,"b"}`), one text
/// per column, to bind as `$n::text[]` or `$n::bigint[]`: the `Any` driver
/// binds no arrays, and a text cast to an array type parses the literal.
struct PgArrays(Vec<String>);

impl PgArrays {
    fn new(columns: usize, rows: usize) -> PgArrays {
        PgArrays((0..columns).map(|_| String::with_capacity(2 + rows * 16)).collect())
    }

    fn sep(&mut self, c: usize) -> &mut String {
        let col = &mut self.0[c];
        col.push(if col.is_empty() { '{' } else { ',' });
        col
    }

    fn text(&mut self, c: usize, v: Option<&str>) {
        let col = self.sep(c);
        match v {
            None => col.push_str("NULL"),
            Some(t) => {
                col.push('"');
                // A quote and a backslash are escaped. Found as bytes, not
                // chars: both are ASCII (so every cut is a char boundary), and
                // a pattern of chars decodes every character (about 0.3 % of
                // the server's CPU at 10,000 moves a second).
                let mut rest = t;
                while let Some(i) = rest.bytes().position(|b| b == b'"' || b == b'\\') {
                    col.push_str(&rest[..i]);
                    col.push('\\');
                    col.push(char::from(rest.as_bytes()[i]));
                    rest = &rest[i + 1..];
                }
                col.push_str(rest);
                col.push('"');
            }
        }
    }

    /// `a,b,c` as a text element ([`join3`] without its own string).
    fn triple(&mut self, c: usize, v: Option<[u64; 3]>) {
        let col = self.sep(c);
        match v {
            None => col.push_str("NULL"),
            Some(a) => {
                col.push('"');
                push_triple(col, a);
                col.push('"');
            }
        }
    }

    fn int(&mut self, c: usize, v: Option<i64>) {
        let col = self.sep(c);
        match v {
            None => col.push_str("NULL"),
            Some(n) => col.push_str(itoa::Buffer::new().format(n)),
        }
    }

    fn finish(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|mut col| {
                col.push('}');
                col
            })
            .collect()
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Main time and byo-yomi periods left per side, as a move stores them.
type StoredClocks = ([u64; 3], [u32; 3]);

/// A move's stored clocks.
fn clocks_of(clocks: Option<&str>, periods: Option<&str>) -> Result<Option<StoredClocks>, StoreError> {
    Ok(match (clocks, periods) {
        (Some(c), Some(p)) => Some((triple(c)?, triple(p)?)),
        _ => None,
    })
}

/// A seat and its player, from a row of `seats` joined with `players`.
fn seat_row(r: &AnyRow) -> Result<(Side, Player), StoreError> {
    let side = side_of(&r.try_get::<String, _>("side")?)?;
    let bot = match r.try_get::<Option<i64>, _>("bot_level")? {
        None => None,
        Some(n) => Some(
            u8::try_from(n)
                .ok()
                .and_then(bot::Level::from_number)
                .ok_or_else(|| StoreError::Corrupt(format!("bot level {n}")))?,
        ),
    };
    Ok((
        side,
        Player {
            id: r.try_get("id")?,
            name: r.try_get("name")?,
            account: r.try_get::<Option<String>, _>("username")?.is_some(),
            bot,
        },
    ))
}

/// A game row's stored chat lines per channel (`chat_players`, `chat_spectators`).
fn chat_lines(r: &AnyRow) -> Result<[u32; 2], StoreError> {
    let n = |col: &str| -> Result<u32, StoreError> { Ok(u32::try_from(r.try_get::<i64, _>(col)?).unwrap_or(u32::MAX)) };
    Ok([n("chat_players")?, n("chat_spectators")?])
}

/// An arbiter action, from a row of `arbiter_actions` joined with its player's name.
fn arbiter_row(r: &AnyRow) -> Result<ArbiterRow, StoreError> {
    Ok(ArbiterRow {
        v: r.try_get::<i64, _>("v")? as u64,
        after_seq: r.try_get::<i64, _>("after_seq")? as u64,
        at_ms: r.try_get::<i64, _>("at_ms")? as u64,
        wall_ms: r.try_get("wall_ms")?,
        by: r.try_get("by_player")?,
        by_name: r.try_get("name")?,
        reason: r.try_get("reason")?,
        action: from_json(&r.try_get::<String, _>("action")?)?,
    })
}

/// A game's events from their aggregated text (see [`Store::load_unfinished`]),
/// in order, and the largest `v_last` among them.
fn events_of(text: &str) -> Result<(Vec<EventRow>, Option<i64>), StoreError> {
    fn int<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, StoreError> {
        s.parse()
            .map_err(|_| StoreError::Corrupt(format!("event {what} {s:?}")))
    }
    fn opt<T: std::str::FromStr>(s: &str, what: &str) -> Result<Option<T>, StoreError> {
        (!s.is_empty()).then(|| int(s, what)).transpose()
    }
    let mut events = Vec::with_capacity(text.len() / 64 + 1);
    let mut v_last = None;
    for e in text.split(';').filter(|e| !e.is_empty()) {
        let f: Vec<&str> = e.split('|').collect();
        let [seq, last, v, side, action, at, wall, spent, lag, clocks, periods] = f[..] else {
            return Err(StoreError::Corrupt(format!("event {e:?}")));
        };
        v_last = v_last.max(opt::<i64>(last, "v_last")?);
        events.push(EventRow {
            seq: int(seq, "seq")?,
            v: int(v, "v")?,
            side: side_of(side)?,
            action: action.to_owned(),
            at_ms: int(at, "at_ms")?,
            wall_ms: int(wall, "wall_ms")?,
            spent_ms: opt(spent, "spent_ms")?,
            lag_ms: opt(lag, "lag_ms")?,
            clocks: clocks_of(
                (!clocks.is_empty()).then_some(clocks),
                (!periods.is_empty()).then_some(periods),
            )?,
        });
    }
    events.sort_unstable_by_key(|e| e.seq);
    Ok((events, v_last))
}

impl Store {
    /// Connects (creating the SQLite file if needed) and applies the migrations.
    pub async fn connect(url: &str, metrics: Metrics) -> Result<Store, StoreError> {
        Self::open(url, metrics, false).await
    }

    /// [`Store::connect`] for a cluster node: every commit is fenced by the
    /// game's lease epoch ([`Fences`]); Postgres only.
    pub async fn connect_fenced(url: &str, metrics: Metrics) -> Result<Store, StoreError> {
        if url.starts_with("sqlite:") {
            return Err(StoreError::Corrupt("a cluster needs Postgres, not SQLite".into()));
        }
        Self::open(url, metrics, true).await
    }

    /// Cluster mode: the games this store creates are owned by `node` from
    /// their first row (epoch 1), so that no other node takes a game over
    /// between its creation and its room's start.
    pub fn set_node(&self, node: &str) {
        let _ = self.node.set(node.to_owned());
    }

    /// Cluster mode: the node that owns the games this store creates.
    pub(crate) fn creator_node(&self) -> Option<&str> {
        self.node.get().filter(|_| self.fences.is_some()).map(String::as_str)
    }

    /// Cluster mode: a game this node just created (owner from its first
    /// row, epoch 1) is fenced by epoch 1.
    pub(crate) fn owned_from_birth(&self, game: &str) {
        if let (Some(_), Some(fences)) = (self.creator_node(), &self.fences) {
            fences.set(game, 1);
        }
    }

    /// The lease epochs this node's commits are fenced by (cluster mode).
    pub fn fences(&self) -> Option<&Arc<Fences>> {
        self.fences.as_ref()
    }

    async fn open(url: &str, metrics: Metrics, fenced: bool) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let sqlite = url.starts_with("sqlite:");
        let options: AnyConnectOptions = url.parse()?;
        let health = Arc::new(watch::channel(true).0);
        let up = Arc::clone(&health);
        let pool = AnyPoolOptions::new()
            // SQLite has one writer at a time: one connection avoids busy errors.
            .max_connections(if sqlite { 1 } else { 32 })
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // sqlx pings every connection it hands out by default: on
            // Postgres one more round trip (and a wake-up of the backend)
            // before every group commit, ~4 % of the server's CPU a move
            // (docs/CAPACITY.md). A connection in steady use is known to
            // work; one idle for a while, or any while the store is marked
            // down, is tested first, and dropped if it does not answer.
            .test_before_acquire(false)
            .before_acquire(move |conn, meta| {
                let test = test_before_use(meta.idle_for, *up.borrow());
                Box::pin(async move {
                    if test {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if sqlite {
                        conn.execute("PRAGMA journal_mode = WAL").await?;
                        conn.execute("PRAGMA synchronous = FULL").await?;
                        conn.execute("PRAGMA foreign_keys = ON").await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        let mut store = Store {
            pool,
            sqlite,
            metrics,
            writer: None,
            commit_slots: Arc::new(CommitSlots {
                permits: Arc::new(Semaphore::new(COMMITS_IN_FLIGHT)),
                total: std::sync::Mutex::new(COMMITS_IN_FLIGHT),
                window_us: std::sync::atomic::AtomicU64::new(0),
            }),
            health,
            fences: fenced.then(Arc::default),
            node: Arc::default(),
            kept: Arc::default(),
            requests: Arc::default(),
        };
        let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(store.clone().group_commit(rx));
        store.writer = Some(tx);
        Ok(store)
    }

    /// The group commit: whatever rooms have queued while the previous
    /// transactions ran goes into one transaction (one fsync for many moves
    /// across games), a few transactions in flight. A room waits for its own
    /// commit before it sends anything, so each game has at most one write in
    /// flight and order within a game is kept. If a batch fails, its writes
    /// are retried one room at a time, so one bad write fails only its room.
    async fn group_commit(self, mut rx: mpsc::Receiver<Pending>) {
        let slots = self.commit_slots.permits.clone();
        while let Some(first) = rx.recv().await {
            // The window counts from the first write's arrival: a wait for a
            // slot counts towards it.
            let window = Duration::from_micros(self.commit_slots.window_us.load(std::sync::atomic::Ordering::Relaxed));
            let deadline = tokio::time::Instant::now() + window;
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            // The writer sleeps through the window and then takes what came:
            // one timer a batch, rather than a wake-up and a timer for every
            // write that arrives in it (a batch carries ~20 moves at 10,000
            // a second). What is left beyond MAX_BATCH goes in the next one,
            // which starts at once.
            if !window.is_zero() {
                tokio::time::sleep_until(deadline).await;
            }
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(p) => batch.push(p),
                    Err(_) => break,
                }
            }
            let store = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                if batch.len() > 1 {
                    let writes: Vec<(&str, u64, &[Op])> =
                        batch.iter().map(|p| (p.game.as_str(), p.v, p.ops.as_slice())).collect();
                    match store.commit_now(&writes).await {
                        Ok(()) => {
                            for p in batch {
                                p.finish(Ok(()));
                            }
                            return;
                        }
                        Err(e) if e.is_outage() => {
                            // One by one would wait for the database once per room.
                            let words = e.to_string();
                            for p in batch {
                                p.finish(Err(StoreError::Unavailable(words.clone())));
                            }
                            return;
                        }
                        Err(e) => tracing::warn!(error = %e, "group commit failed; committing one by one"),
                    }
                }
                for p in batch {
                    let r = store.commit_now(&[(p.game.as_str(), p.v, p.ops.as_slice())]).await;
                    p.finish(r);
                }
            });
        }
    }

    /// Sets how many group-commit transactions may be in flight at once (at
    /// least one). Fewer make larger batches at moderate rates (the writes
    /// that arrive while the transactions in flight commit wait for a slot,
    /// and then go together): less database CPU per write, at the cost of
    /// up to one commit's wait. A lowered count takes effect as transactions
    /// in flight end.
    pub fn set_commits_in_flight(&self, n: usize) {
        let n = n.max(1);
        let mut total = self.commit_slots.total.lock().unwrap_or_else(|e| e.into_inner());
        if n > *total {
            self.commit_slots.permits.add_permits(n - *total);
        } else if n < *total {
            let permits = self.commit_slots.permits.clone();
            let fewer = (*total - n) as u32;
            // Taken as they come free, then forgotten.
            tokio::spawn(async move {
                if let Ok(p) = permits.acquire_many_owned(fewer).await {
                    p.forget();
                }
            });
        }
        *total = n;
    }

    /// Sets how long a group commit waits for more writes after its first
    /// (zero: it takes what is queued and goes). Each transaction costs the
    /// database a WAL flush; at moderate rates a short wait puts several
    /// moves in one, at the cost of up to that wait (tokio's timers have
    /// millisecond steps: a wait ends on the next millisecond after it).
    pub fn set_commit_window(&self, window: Duration) {
        let us = u64::try_from(window.as_micros()).unwrap_or(u64::MAX);
        self.commit_slots
            .window_us
            .store(us, std::sync::atomic::Ordering::Relaxed);
    }

    /// Closes the pool (after every room has committed).
    pub async fn close(&self) {
        self.pool.close().await;
        for set in [&self.kept, &self.requests.kept] {
            let kept = std::mem::take(&mut *set.0.lock().unwrap_or_else(|e| e.into_inner()));
            for k in kept {
                let _ = k.conn.close().await;
            }
        }
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    /// Creates a player (guest when `account` is None) and a session for it.
    pub async fn create_player(
        &self,
        id: &str,
        name: &str,
        account: Option<(&str, &str)>,
        token: &str,
    ) -> Result<(), StoreError> {
        let now = wall_ms();
        let mut conn = self.request_conn().await?;
        let done = if self.sqlite {
            Self::insert_player_and_session(&mut conn, id, name, account, token, now).await
        } else {
            // One statement, atomic on its own: one round trip, not a
            // transaction's four.
            sqlx::query(
                "WITH p AS (INSERT INTO players (id, name, username, password_hash, created_ms) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id) \
                 INSERT INTO sessions (token_sha256, player_id, created_ms) SELECT $6, id, $5 FROM p",
            )
            .bind(id)
            .bind(name)
            .bind(account.map(|a| a.0))
            .bind(account.map(|a| a.1))
            .bind(now)
            .bind(token_digest(token))
            .execute(&mut *conn)
            .await
            .map(|_| ())
            .map_err(conflict)
        };
        // A name already taken leaves the connection ready (a refused
        // statement outside a transaction; SQLite's goes back to the pool).
        if matches!(done, Ok(()) | Err(StoreError::Conflict)) {
            self.keep_request(conn);
        }
        done
    }

    /// [`Store::create_player`]'s two rows in a transaction (SQLite).
    async fn insert_player_and_session(
        conn: &mut AnyConnection,
        id: &str,
        name: &str,
        account: Option<(&str, &str)>,
        token: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        let mut tx = conn.begin().await?;
        sqlx::query("INSERT INTO players (id, name, username, password_hash, created_ms) VALUES ($1, $2, $3, $4, $5)")
            .bind(id)
            .bind(name)
            .bind(account.map(|a| a.0))
            .bind(account.map(|a| a.1))
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(conflict)?;
        sqlx::query("INSERT INTO sessions (token_sha256, player_id, created_ms) VALUES ($1, $2, $3)")
            .bind(token_digest(token))
            .bind(id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A new session for an existing player.
    pub async fn create_session(&self, player: &str, token: &str) -> Result<(), StoreError> {
        let mut conn = self.request_conn().await?;
        sqlx::query("INSERT INTO sessions (token_sha256, player_id, created_ms) VALUES ($1, $2, $3)")
            .bind(token_digest(token))
            .bind(player)
            .bind(wall_ms())
            .execute(&mut *conn)
            .await?;
        self.keep_request(conn);
        Ok(())
    }

    /// The account with this username: the player and its password hash.
    pub async fn account(&self, username: &str) -> Result<Option<(Player, String)>, StoreError> {
        let row = sqlx::query("SELECT id, name, password_hash FROM players WHERE username = $1")
            .bind(username)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            Ok((
                Player {
                    id: r.try_get("id")?,
                    name: r.try_get("name")?,
                    account: true,
                    bot: None,
                },
                r.try_get::<Option<String>, _>("password_hash")?.unwrap_or_default(),
            ))
        })
        .transpose()
    }

    /// The player a session token belongs to, if the session is known and
    /// younger than `ttl`.
    pub async fn player_by_token(&self, token: &str, ttl: Duration) -> Result<TokenLookup, StoreError> {
        let mut conn = self.request_conn().await?;
        let row = sqlx::query(
            "SELECT p.id, p.name, p.username, s.created_ms FROM sessions s JOIN players p ON p.id = s.player_id \
             WHERE s.token_sha256 = $1",
        )
        .bind(token_digest(token))
        .fetch_optional(&mut *conn)
        .await?;
        self.keep_request(conn);
        let Some(r) = row else {
            return Ok(TokenLookup::Unknown);
        };
        let created: i64 = r.try_get("created_ms")?;
        let age_ms = u128::try_from(wall_ms().saturating_sub(created)).unwrap_or(0);
        if age_ms > ttl.as_millis() {
            return Ok(TokenLookup::Expired);
        }
        Ok(TokenLookup::Player(Player {
            id: r.try_get("id")?,
            name: r.try_get("name")?,
            account: r.try_get::<Option<String>, _>("username")?.is_some(),
            bot: None,
        }))
    }

    /// Creates a game in phase `open`, with its secret if it has one (in
    /// the same transaction).
    pub async fn create_game(
        &self,
        id: &str,
        created_by: &str,
        settings: &GameSettings,
        initial_position: &str,
        secret: Option<&str>,
    ) -> Result<(), StoreError> {
        let owner = self.creator_node();
        let insert = sqlx::query(
            "INSERT INTO games (id, created_by, phase, settings, initial_position, public, v, created_ms, variant, \
             owner_node, owner_epoch) VALUES ($1, $2, 'open', $3, $4, $5, 0, $6, $7, $8, $9)",
        )
        .bind(id)
        .bind(created_by)
        .bind(json(settings))
        .bind(initial_position)
        .bind(i64::from(settings.public))
        .bind(wall_ms())
        .bind(settings.variant.key())
        .bind(owner)
        .bind(i64::from(owner.is_some()));
        let mut conn = self.request_conn().await?;
        if let Some(secret) = secret {
            let mut tx = conn.begin().await?;
            insert.execute(&mut *tx).await.map_err(conflict)?;
            Self::write_secret(&mut tx, id, secret).await?;
            tx.commit().await?;
        } else {
            // One statement: atomic without a transaction's two more round trips.
            insert.execute(&mut *conn).await.map_err(conflict)?;
        }
        self.keep_request(conn);
        self.owned_from_birth(id);
        Ok(())
    }

    /// Keeps a game's secret, replacing an older one.
    async fn write_secret(conn: &mut AnyConnection, game: &str, secret: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO game_secrets (game_id, secret) VALUES ($1, $2) \
             ON CONFLICT (game_id) DO UPDATE SET secret = excluded.secret",
        )
        .bind(game)
        .bind(secret)
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Who created a game (`None`: no such game).
    pub async fn game_creator(&self, id: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT created_by FROM games WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok(r.try_get("created_by")?)).transpose()
    }

    /// A game's phase (`None`: no such game): one indexed read, nothing loaded.
    pub async fn game_phase(&self, id: &str) -> Result<Option<Phase>, StoreError> {
        let mut conn = self.request_conn().await?;
        let row = sqlx::query("SELECT phase FROM games WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        self.keep_request(conn);
        row.map(|r| {
            let phase: String = r.try_get("phase")?;
            Phase::parse(&phase).ok_or_else(|| StoreError::Corrupt(format!("phase {phase:?}")))
        })
        .transpose()
    }

    /// Unfinished games created by a player.
    pub async fn active_games_created_by(&self, player: &str) -> Result<i64, StoreError> {
        // Tournament games are the organizer's duty, not its own games.
        let mut conn = self.request_conn().await?;
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM games WHERE created_by = $1 AND phase <> 'finished' \
             AND id NOT IN (SELECT game_id FROM tournament_games)",
        )
        .bind(player)
        .fetch_one(&mut *conn)
        .await?;
        self.keep_request(conn);
        Ok(row.try_get::<i64, _>("n")?)
    }

    /// Whether the database answers; changes when it goes away or comes back.
    pub fn health(&self) -> watch::Receiver<bool> {
        self.health.subscribe()
    }

    /// Notes the outcome of a database call: an outage marks the store down
    /// (once) and starts probing it until it answers again.
    fn observe<T>(&self, r: &Result<T, StoreError>) {
        match r {
            // Every commit ends here: a look under the read lock, the write
            // lock only when the store comes back.
            Ok(_) if *self.health.borrow() => {}
            Ok(_) => {
                self.health.send_if_modified(|up| !std::mem::replace(up, true));
            }
            Err(e) if e.is_outage() => {
                if self.health.send_if_modified(|up| std::mem::replace(up, false)) {
                    tracing::error!(error = %e, "the store is unreachable; games wait for it");
                    let store = self.clone();
                    tokio::spawn(async move {
                        loop {
                            tokio::time::sleep(PROBE_EVERY).await;
                            if *store.health.borrow() || store.pool.is_closed() {
                                return;
                            }
                            if store.ping().await {
                                tracing::warn!("the store answers again");
                                store.health.send_replace(true);
                                return;
                            }
                        }
                    });
                }
            }
            Err(_) => {}
        }
    }

    /// Commits a room's writes atomically, with the game's new version `v`;
    /// returns once they are durable. Outages are noted in [`Store::health`].
    pub async fn commit(&self, game: &str, v: u64, ops: &[Op]) -> Result<(), StoreError> {
        self.commit_owned(game, v, ops.to_vec()).await.0
    }

    /// [`Store::commit`] of ops the caller gives up for the while: the
    /// group commit queues them without a copy (a move's event row and its
    /// list: two allocations a move), and they come back with the result,
    /// for a room that must keep them through an outage.
    pub async fn commit_owned(&self, game: &str, v: u64, ops: Vec<Op>) -> (Result<(), StoreError>, Vec<Op>) {
        let (r, ops) = self.commit_queued(game, v, ops).await;
        self.observe(&r);
        (r, ops)
    }

    async fn commit_queued(&self, game: &str, v: u64, mut ops: Vec<Op>) -> (Result<(), StoreError>, Vec<Op>) {
        if let Some(writer) = &self.writer {
            let (done, rx) = oneshot::channel();
            let pending = Pending {
                game: game.to_owned(),
                v,
                ops,
                done: Some(done),
            };
            // Refused, the pending commit is dropped here and hands the ops
            // back untried, as the writer does with one it drops.
            let _ = writer.send(pending).await;
            match rx.await {
                Ok((Some(r), back)) => return (r, back),
                Ok((None, back)) => ops = back,
                // A `Pending` answers when it is finished or dropped: only
                // one never dropped (leaked) would leave this.
                Err(_) => unreachable!("a pending commit answers when it is dropped"),
            }
        }
        // Boxed: a transaction's future is a few KB, and every room's task
        // holds room for what it awaits, idle or not; the queued path above
        // is a few hundred bytes.
        let r = Box::pin(self.commit_now(&[(game, v, &ops)])).await;
        (r, ops)
    }

    /// Commits the writes of one or more rooms together. A single statement
    /// (a move, a chat line, a presence change) commits on its own: one
    /// round trip. More go in one transaction.
    async fn commit_now(&self, writes: &[(&str, u64, &[Op])]) -> Result<(), StoreError> {
        let started = Instant::now();
        // Event and chat rows carry the version; otherwise games.v records it.
        let version_row = |ops: &[Op]| !ops.iter().any(|o| matches!(o, Op::Event(_) | Op::Chat { .. }));
        // A bot's seat is two rows (its player, then the seat).
        let bot_rows = |ops: &[Op]| {
            ops.iter()
                .filter(|o| matches!(o, Op::Seat { bot: Some(_), .. }))
                .count()
        };
        // A game's finish may rate it: several statements, in a transaction.
        let finishes = |ops: &[Op]| {
            ops.iter()
                .filter(|o| {
                    matches!(
                        o,
                        Op::Phase {
                            phase: Phase::Finished,
                            ..
                        }
                    )
                })
                .count()
        };
        let statements: usize = writes
            .iter()
            .map(|(_, _, ops)| ops.len() + bot_rows(ops) + finishes(ops) + usize::from(version_row(ops)))
            .sum();
        // Moves alone (the common batch), on Postgres: one `unnest` INSERT
        // is one statement, atomic without a transaction's two round trips.
        let events_only = !self.sqlite
            && self.fences.is_none()
            && writes
                .iter()
                .all(|(_, _, ops)| !ops.is_empty() && ops.iter().all(|o| matches!(o, Op::Event(_))));
        // Every room's event rows (the moves), with its version.
        let event_rows = || -> Vec<(&str, u64, &EventRow)> {
            writes
                .iter()
                .flat_map(|(game, v, ops)| {
                    ops.iter().filter_map(move |o| match o {
                        Op::Event(e) => Some((*game, *v, e)),
                        _ => None,
                    })
                })
                .collect()
        };
        let mut conn = self.commit_conn().await?;
        if events_only {
            Self::insert_events(&mut conn, &event_rows()).await?;
        } else if let [(game, v, ops)] = writes
            && statements == 1
            && self.fences.is_none()
        {
            match ops.first() {
                Some(op) => Self::write(&mut conn, game, *v, op).await?,
                None => Self::write_version(&mut conn, game, *v).await?,
            }
        } else {
            // Event rows (the moves) of every room go in one insert
            // (Postgres) or a few (SQLite): one round trip for many moves.
            // The rest is rare.
            let mut tx = conn.begin().await?;
            if let Some(fences) = &self.fences {
                Self::check_fences(&mut tx, fences, writes).await?;
            }
            let mut versions = Vec::new();
            for (game, v, ops) in writes {
                for op in ops.iter().filter(|o| !matches!(o, Op::Event(_))) {
                    Self::write(&mut tx, game, *v, op).await?;
                }
                if version_row(ops) {
                    versions.push((*game, *v));
                }
            }
            Self::insert_events(&mut tx, &event_rows()).await?;
            Self::write_versions(&mut tx, &versions).await?;
            tx.commit().await?;
        }
        self.keep(conn);
        self.metrics.store_commit.observe(started.elapsed());
        Ok(())
    }

    /// A connection for a group-commit transaction ([`KeptConns`]): on
    /// Postgres a kept one if there is one that works, else one taken from
    /// the pool; on SQLite the pool's.
    async fn commit_conn(&self) -> Result<CommitConn, StoreError> {
        if self.sqlite {
            return Ok(CommitConn::Pooled(self.pool.acquire().await?));
        }
        self.kept_or_new(&self.kept).await
    }

    /// A connection for a request's frequent statements ([`RequestConns`]):
    /// on Postgres, once a permit is free (waited for as long as the pool
    /// waits for a connection), a kept one that works or one taken from the
    /// pool; on SQLite the pool's.
    pub(crate) async fn request_conn(&self) -> Result<RequestConn, StoreError> {
        if self.sqlite {
            return Ok(RequestConn {
                conn: CommitConn::Pooled(self.pool.acquire().await?),
                _permit: None,
            });
        }
        let permits = Arc::clone(&self.requests.permits);
        let permit = match tokio::time::timeout(ACQUIRE_TIMEOUT, permits.acquire_owned()).await {
            Ok(Ok(p)) => p,
            _ => return Err(sqlx::Error::PoolTimedOut.into()),
        };
        Ok(RequestConn {
            conn: self.kept_or_new(&self.requests.kept).await?,
            _permit: Some(permit),
        })
    }

    /// A kept connection of `set` that works (one idle for a while, or any
    /// while the store is marked down, is pinged first; one past
    /// [`KEPT_LIFETIME`] is closed), else one taken from the pool.
    async fn kept_or_new(&self, set: &KeptConns) -> Result<CommitConn, StoreError> {
        loop {
            let kept = set.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(Kept { mut conn, born, used }) = kept else {
                break;
            };
            if born.elapsed() >= KEPT_LIFETIME {
                tokio::spawn(conn.close());
                continue;
            }
            if test_before_use(used.elapsed(), *self.health.borrow()) {
                // As long as the pool would wait for a connection.
                match tokio::time::timeout(ACQUIRE_TIMEOUT, conn.ping()).await {
                    Ok(Ok(())) => {}
                    _ => continue,
                }
            }
            return Ok(CommitConn::Kept(conn, born));
        }
        Ok(CommitConn::Kept(self.pool.acquire().await?.detach(), Instant::now()))
    }

    /// Gives back the connection of a transaction that succeeded: a kept one
    /// is kept for the next (unless as many are kept as may be in flight), a
    /// pooled one goes back to the pool.
    fn keep(&self, conn: CommitConn) {
        let most = *self.commit_slots.total.lock().unwrap_or_else(|e| e.into_inner());
        self.keep_in(&self.kept, most, conn);
    }

    /// Gives back a request's connection whose statements ended cleanly
    /// (they succeeded, or the database refused one outside a transaction,
    /// which leaves the connection ready): kept for the next request, or
    /// back to the pool (SQLite). Its permit is released.
    pub(crate) fn keep_request(&self, conn: RequestConn) {
        self.keep_in(&self.requests.kept, REQUEST_CONNS, conn.conn);
    }

    /// Keeps `conn` in `set` if it was kept out of the pool and `set` holds
    /// fewer than `most` (else closes it); a pooled one goes back to the pool.
    fn keep_in(&self, set: &KeptConns, most: usize, conn: CommitConn) {
        if let CommitConn::Kept(conn, born) = conn {
            let mut kept = set.0.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() < most && !self.pool.is_closed() {
                kept.push(Kept {
                    conn,
                    born,
                    used: Instant::now(),
                });
            } else {
                drop(kept);
                tokio::spawn(conn.close());
            }
        }
    }

    /// Cluster mode: locks the `games` rows of `writes` (shared, until the
    /// transaction ends) and checks that this node still owns each at the
    /// epoch it holds; otherwise the whole transaction is refused with
    /// [`StoreError::Fenced`] (the group commit then retries its rooms one by
    /// one, so only the fenced game fails).
    async fn check_fences(
        conn: &mut AnyConnection,
        fences: &Fences,
        writes: &[(&str, u64, &[Op])],
    ) -> Result<(), StoreError> {
        let mut games: Vec<(&str, i64)> = Vec::with_capacity(writes.len());
        for (game, _, _) in writes {
            if games.iter().any(|(g, _)| g == game) {
                continue;
            }
            let Some(epoch) = fences.get(game) else {
                return Err(StoreError::Fenced((*game).to_owned()));
            };
            games.push((game, epoch));
        }
        for chunk in games.chunks(VERSIONS_PER_STATEMENT) {
            let mut sql = String::from("SELECT id FROM games WHERE ");
            for i in 0..chunk.len() {
                if i > 0 {
                    sql.push_str(" OR ");
                }
                sql.push_str(&format!("(id = ${} AND owner_epoch = ${})", 2 * i + 1, 2 * i + 2));
            }
            sql.push_str(" FOR SHARE");
            let mut q = sqlx::query(&sql);
            for (game, epoch) in chunk {
                q = q.bind(*game).bind(*epoch);
            }
            let found = q.fetch_all(&mut *conn).await?;
            if found.len() != chunk.len() {
                let owned: std::collections::HashSet<String> =
                    found.iter().filter_map(|r| r.try_get::<String, _>(0).ok()).collect();
                let lost = chunk
                    .iter()
                    .find(|(g, _)| !owned.contains(*g))
                    .map_or_else(String::new, |(g, _)| (*g).to_owned());
                return Err(StoreError::Fenced(lost));
            }
        }
        Ok(())
    }

    /// Inserts event rows (game, the game's new version, row). On Postgres
    /// one statement whatever the number of rows: each column bound as one
    /// array and `unnest`ed, so that every batch runs the same prepared
    /// statement (a multi-row `VALUES` is a new statement for every batch
    /// size: parsed and planned again, its plan cached per size and
    /// connection). SQLite has no arrays: multi-row `VALUES`,
    /// [`EVENT_ROWS_PER_INSERT`] rows per statement.
    async fn insert_events(conn: &mut AnyConnection, rows: &[(&str, u64, &EventRow)]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        if conn.backend_name() == "PostgreSQL" {
            return Self::unnest_events(conn, rows).await;
        }
        for chunk in rows.chunks(EVENT_ROWS_PER_INSERT) {
            Self::values_events(conn, chunk).await?;
        }
        Ok(())
    }

    async fn unnest_events(conn: &mut AnyConnection, rows: &[(&str, u64, &EventRow)]) -> Result<(), StoreError> {
        let mut cols = PgArrays::new(12, rows.len());
        for &(game, v, e) in rows {
            cols.text(0, Some(game));
            cols.int(1, Some(e.seq as i64));
            cols.int(2, Some(e.v as i64));
            cols.int(3, Some(v as i64));
            cols.text(4, Some(e.side.as_str()));
            cols.text(5, Some(&e.action));
            cols.int(6, Some(e.at_ms as i64));
            cols.int(7, Some(e.wall_ms));
            cols.int(8, e.spent_ms.map(|x| x as i64));
            cols.int(9, e.lag_ms.map(|x| x as i64));
            cols.triple(10, e.clocks.map(|c| c.0));
            cols.triple(11, e.clocks.map(|c| c.1.map(u64::from)));
        }
        let mut q = sqlx::query(
            "INSERT INTO events (game_id, seq, v, v_last, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods) \
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], \
             $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::text[])",
        );
        for col in cols.finish() {
            q = q.bind(col);
        }
        q.execute(conn).await?;
        Ok(())
    }

    /// Inserts event rows in one multi-row `VALUES` statement (SQLite).
    async fn values_events(conn: &mut AnyConnection, rows: &[(&str, u64, &EventRow)]) -> Result<(), StoreError> {
        const COLUMNS: usize = 12;
        let mut sql = String::with_capacity(160 + rows.len() * 64);
        sql.push_str(
            "INSERT INTO events (game_id, seq, v, v_last, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods) VALUES ",
        );
        for k in 0..rows.len() {
            sql.push_str(if k == 0 { "(" } else { ", (" });
            for c in 0..COLUMNS {
                if c > 0 {
                    sql.push_str(", ");
                }
                sql.push('$');
                sql.push_str(&(k * COLUMNS + c + 1).to_string());
            }
            sql.push(')');
        }
        let mut q = sqlx::query(&sql);
        for &(game, v, e) in rows {
            q = q
                .bind(game)
                .bind(e.seq as i64)
                .bind(e.v as i64)
                .bind(v as i64)
                .bind(e.side.as_str())
                .bind(e.action.as_str())
                .bind(e.at_ms as i64)
                .bind(e.wall_ms)
                .bind(e.spent_ms.map(|x| x as i64))
                .bind(e.lag_ms.map(|x| x as i64))
                .bind(e.clocks.map(|c| join3(&c.0)))
                .bind(e.clocks.map(|c| join3(&c.1)));
        }
        q.execute(conn).await?;
        Ok(())
    }

    /// Commits the writes of many rooms in one transaction, all or nothing:
    /// a restart's `restored` versions. Outages are noted in [`Store::health`].
    pub async fn commit_many(&self, writes: &[(&str, u64, &[Op])]) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let r = self.commit_now(writes).await;
        self.observe(&r);
        r
    }

    async fn write_version(conn: &mut AnyConnection, game: &str, v: u64) -> Result<(), StoreError> {
        sqlx::query("UPDATE games SET v = $1 WHERE id = $2")
            .bind(v as i64)
            .bind(game)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Records the versions of many games, [`VERSIONS_PER_STATEMENT`] per
    /// statement (one round trip each, not one per game). A game listed
    /// twice gets its last version.
    async fn write_versions(conn: &mut AnyConnection, versions: &[(&str, u64)]) -> Result<(), StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut last: Vec<(&str, u64)> = versions
            .iter()
            .rev()
            .filter(|(g, _)| seen.insert(*g))
            .copied()
            .collect();
        last.reverse();
        for chunk in last.chunks(VERSIONS_PER_STATEMENT) {
            if let [(game, v)] = chunk {
                Self::write_version(conn, game, *v).await?;
                continue;
            }
            let mut sql = String::from("UPDATE games SET v = CASE id");
            for i in 0..chunk.len() {
                sql.push_str(&format!(" WHEN ${} THEN ${}", 2 * i + 1, 2 * i + 2));
            }
            sql.push_str(" END WHERE id IN (");
            for i in 0..chunk.len() {
                sql.push_str(&format!("{}${}", if i == 0 { "" } else { ", " }, 2 * i + 1));
            }
            sql.push(')');
            let mut q = sqlx::query(&sql);
            for (game, v) in chunk {
                q = q.bind(*game).bind(*v as i64);
            }
            q.execute(&mut *conn).await?;
        }
        Ok(())
    }

    pub(crate) async fn write(conn: &mut AnyConnection, game: &str, v: u64, op: &Op) -> Result<(), StoreError> {
        match op {
            Op::Seat {
                side,
                player,
                bot,
                wall_ms,
            } => {
                if let Some((name, level)) = bot {
                    sqlx::query("INSERT INTO players (id, name, bot_level, created_ms) VALUES ($1, $2, $3, $4)")
                        .bind(player.as_str())
                        .bind(name.as_str())
                        .bind(i64::from(level.number()))
                        .bind(*wall_ms)
                        .execute(&mut *conn)
                        .await
                        .map_err(conflict)?;
                }
                sqlx::query("INSERT INTO seats (game_id, side, player_id, joined_ms) VALUES ($1, $2, $3, $4)")
                    .bind(game)
                    .bind(side.as_str())
                    .bind(player.as_str())
                    .bind(*wall_ms)
                    .execute(conn)
                    .await
                    .map_err(conflict)?;
            }
            Op::Event(e) => Self::insert_events(conn, &[(game, v, e)]).await?,
            Op::Chat {
                v,
                channel,
                player,
                name,
                text,
                wall_ms,
            } => {
                sqlx::query(
                    "INSERT INTO chat (game_id, v, channel, player_id, name, text, wall_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(game)
                .bind(*v as i64)
                .bind(channel.as_str())
                .bind(player.as_str())
                .bind(name.as_str())
                .bind(text.as_str())
                .bind(*wall_ms)
                .execute(conn)
                .await?;
            }
            Op::Arbiter(a) => {
                sqlx::query(
                    "INSERT INTO arbiter_actions (game_id, v, after_seq, at_ms, wall_ms, by_player, reason, action) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(game)
                .bind(a.v as i64)
                .bind(a.after_seq as i64)
                .bind(a.at_ms as i64)
                .bind(a.wall_ms)
                .bind(a.by.as_str())
                .bind(a.reason.as_str())
                .bind(json(&a.action))
                .execute(conn)
                .await?;
            }
            Op::Secret(secret) => Self::write_secret(conn, game, secret).await?,
            Op::Final(snapshot) => {
                sqlx::query(
                    "INSERT INTO game_finals (game_id, snapshot) VALUES ($1, $2) \
                     ON CONFLICT (game_id) DO UPDATE SET snapshot = excluded.snapshot",
                )
                .bind(game)
                .bind(json(snapshot))
                .execute(conn)
                .await?;
            }
            Op::Phase { phase, result, wall_ms } => {
                sqlx::query("UPDATE games SET phase = $1, result = $2, finished_ms = $3 WHERE id = $4")
                    .bind(phase.as_str())
                    .bind(result.as_ref().map(json))
                    .bind((*phase == Phase::Finished).then_some(*wall_ms))
                    .bind(game)
                    .execute(&mut *conn)
                    .await?;
                // A rated game is rated in the transaction that finishes it.
                if let (Phase::Finished, Some(result)) = (phase, result) {
                    crate::rating::apply(conn, game, result, *wall_ms).await?;
                }
            }
        }
        Ok(())
    }

    async fn seats(&self, game: &str) -> Result<[Option<Player>; 3], StoreError> {
        let rows = sqlx::query(
            "SELECT s.side, p.id, p.name, p.username, p.bot_level FROM seats s JOIN players p ON p.id = s.player_id \
             WHERE s.game_id = $1",
        )
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        let mut seats: [Option<Player>; 3] = Default::default();
        for r in rows {
            let (side, player) = seat_row(&r)?;
            seats[side.index()] = Some(player);
        }
        Ok(seats)
    }

    async fn events(&self, game: &str) -> Result<Vec<EventRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, v, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods \
             FROM events WHERE game_id = $1 ORDER BY seq",
        )
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let clocks: Option<String> = r.try_get("clocks")?;
                let periods: Option<String> = r.try_get("periods")?;
                Ok(EventRow {
                    seq: r.try_get::<i64, _>("seq")? as u64,
                    v: r.try_get::<i64, _>("v")? as u64,
                    side: side_of(&r.try_get::<String, _>("side")?)?,
                    action: r.try_get("action")?,
                    at_ms: r.try_get::<i64, _>("at_ms")? as u64,
                    wall_ms: r.try_get("wall_ms")?,
                    spent_ms: r.try_get::<Option<i64>, _>("spent_ms")?.map(|x| x as u64),
                    lag_ms: r.try_get::<Option<i64>, _>("lag_ms")?.map(|x| x as u64),
                    clocks: clocks_of(clocks.as_deref(), periods.as_deref())?,
                })
            })
            .collect()
    }

    /// Everything needed to restore a game's room, its secret included: for
    /// the room restore path only (no HTTP route reads a game this way but
    /// to rebuild its room, whose views are public).
    pub async fn load_game(&self, id: &str) -> Result<Option<StoredGame>, StoreError> {
        // The last version handed out: the largest recorded by any committed row.
        let Some(r) = sqlx::query(
            "SELECT phase, settings, initial_position, v, result, \
             (SELECT MAX(v_last) FROM events WHERE game_id = $1) AS ev, \
             (SELECT MAX(v) FROM chat WHERE game_id = $1) AS cv, \
             (SELECT COUNT(*) FROM chat WHERE game_id = $1 AND channel = 'players') AS chat_players, \
             (SELECT COUNT(*) FROM chat WHERE game_id = $1 AND channel = 'spectators') AS chat_spectators, \
             (SELECT secret FROM game_secrets WHERE game_id = $1) AS secret \
             FROM games WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let phase: String = r.try_get("phase")?;
        let result: Option<String> = r.try_get("result")?;
        Ok(Some(StoredGame {
            arbiter: self.arbiter_actions(id).await?,
            result: result.map(|r| from_json(&r)).transpose()?,
            id: id.to_owned(),
            phase: Phase::parse(&phase).ok_or_else(|| StoreError::Corrupt(format!("phase {phase:?}")))?,
            settings: from_json(&r.try_get::<String, _>("settings")?)?,
            initial_position: r.try_get("initial_position")?,
            secret: r.try_get("secret")?,
            chat_lines: chat_lines(&r)?,
            seats: self.seats(id).await?,
            events: self.events(id).await?,
            v: [
                Some(r.try_get::<i64, _>("v")?),
                r.try_get::<Option<i64>, _>("ev")?,
                r.try_get::<Option<i64>, _>("cv")?,
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0) as u64,
        }))
    }

    /// The final state a finished game kept when it finished, as a restored
    /// room would show it to spectators: the stored snapshot with the version,
    /// the seats and the result read fresh (chat after the end moves the
    /// version; an arbiter may correct the result; a restored room has no one
    /// online but its bots). `None`: none stored — a game of a variant without
    /// record lines of its own, one not finished, or one finished before
    /// `game_finals` existed.
    pub async fn finished_snapshot(&self, id: &str) -> Result<Option<Snapshot>, StoreError> {
        let Some(r) = sqlx::query(
            "SELECT f.snapshot, g.v, g.result, \
             (SELECT MAX(v_last) FROM events WHERE game_id = $1) AS ev, \
             (SELECT MAX(v) FROM chat WHERE game_id = $1) AS cv \
             FROM game_finals f JOIN games g ON g.id = f.game_id WHERE f.game_id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let mut snap: Snapshot = from_json(&r.try_get::<String, _>("snapshot")?)?;
        snap.v = [
            Some(r.try_get::<i64, _>("v")?),
            r.try_get::<Option<i64>, _>("ev")?,
            r.try_get::<Option<i64>, _>("cv")?,
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0) as u64;
        let result: Option<String> = r.try_get("result")?;
        if let Some(result) = result {
            snap.result = Some(from_json(&result)?);
        }
        snap.seats = self.seats(id).await?.map(|s| s.map(|p| p.seat_info(false)));
        Ok(Some(snap))
    }

    /// A game's arbiter actions in order.
    pub async fn arbiter_actions(&self, game: &str) -> Result<Vec<ArbiterRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT a.v, a.after_seq, a.at_ms, a.wall_ms, a.by_player, p.name, a.reason, a.action \
             FROM arbiter_actions a JOIN players p ON p.id = a.by_player WHERE a.game_id = $1 ORDER BY a.v",
        )
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(arbiter_row).collect()
    }

    /// Every game not finished, oldest first, as [`Store::load_game`] would
    /// load it one by one: what the server restores at start. See
    /// [`Store::load_unfinished_each`].
    pub async fn load_unfinished(&self) -> Result<Vec<(String, Result<StoredGame, StoreError>)>, StoreError> {
        let mut out = Vec::new();
        self.load_unfinished_each(|id, game| out.push((id, game))).await?;
        Ok(out)
    }

    /// Hands every game not finished to `each`, oldest first, as
    /// [`Store::load_game`] would load it one by one, as soon as its row
    /// arrives (the server replays the first games while the database is
    /// still sending the others). Three queries for all of them — the seats,
    /// the arbiter actions, then the games with their events aggregated
    /// into one text per game — because a query per game and a row per event
    /// are what made a restart slow (sqlx's `Any` rows are costly to
    /// decode). A game whose rows do not parse comes with its error; the
    /// others are unaffected.
    pub async fn load_unfinished_each(
        &self,
        mut each: impl FnMut(String, Result<StoredGame, StoreError>),
    ) -> Result<(), StoreError> {
        let seat_rows = sqlx::query(
            "SELECT s.game_id, s.side, p.id, p.name, p.username, p.bot_level FROM seats s \
             JOIN players p ON p.id = s.player_id JOIN games g ON g.id = s.game_id WHERE g.phase <> 'finished'",
        )
        .fetch_all(&self.pool)
        .await?;
        let arbiter_rows = sqlx::query(
            "SELECT a.game_id, a.v, a.after_seq, a.at_ms, a.wall_ms, a.by_player, p.name, a.reason, a.action \
             FROM arbiter_actions a JOIN players p ON p.id = a.by_player JOIN games g ON g.id = a.game_id \
             WHERE g.phase <> 'finished' ORDER BY a.game_id, a.v",
        )
        .fetch_all(&self.pool)
        .await?;
        // Rows that do not parse fail their game only.
        let mut seats: HashMap<String, Result<[Option<Player>; 3], StoreError>> = HashMap::new();
        for r in &seat_rows {
            let game: String = r.try_get("game_id")?;
            let entry = seats.entry(game).or_insert_with(|| Ok(Default::default()));
            if let Ok(s) = entry {
                match seat_row(r) {
                    Ok((side, player)) => s[side.index()] = Some(player),
                    Err(e) => *entry = Err(e),
                }
            }
        }
        let mut arbiter: HashMap<String, Result<Vec<ArbiterRow>, StoreError>> = HashMap::new();
        for r in &arbiter_rows {
            let game: String = r.try_get("game_id")?;
            let entry = arbiter.entry(game).or_insert_with(|| Ok(Vec::new()));
            if let Ok(a) = entry {
                match arbiter_row(r) {
                    Ok(row) => a.push(row),
                    Err(e) => *entry = Err(e),
                }
            }
        }
        // One event as text: its fields joined by `|` (NULL as empty), events
        // joined by `;` in any order (`seq` comes first and orders them).
        // Actions are written by the server (`move W72-W54`, `resign`, …):
        // they hold neither separator.
        let event = "CAST(e.seq AS TEXT) || '|' || COALESCE(CAST(e.v_last AS TEXT), '') || '|' || CAST(e.v AS TEXT) \
                     || '|' || e.side || '|' || e.action || '|' || CAST(e.at_ms AS TEXT) || '|' || CAST(e.wall_ms AS TEXT) \
                     || '|' || COALESCE(CAST(e.spent_ms AS TEXT), '') || '|' || COALESCE(CAST(e.lag_ms AS TEXT), '') \
                     || '|' || COALESCE(e.clocks, '') || '|' || COALESCE(e.periods, '')";
        let concat = if self.sqlite { "group_concat" } else { "string_agg" };
        let sql = format!(
            "SELECT g.id, g.phase, g.settings, g.initial_position, g.v, g.result, \
             (SELECT MAX(c.v) FROM chat c WHERE c.game_id = g.id) AS cv, \
             (SELECT COUNT(*) FROM chat c WHERE c.game_id = g.id AND c.channel = 'players') AS chat_players, \
             (SELECT COUNT(*) FROM chat c WHERE c.game_id = g.id AND c.channel = 'spectators') AS chat_spectators, \
             (SELECT x.secret FROM game_secrets x WHERE x.game_id = g.id) AS secret, \
             (SELECT {concat}({event}, ';') FROM events e WHERE e.game_id = g.id) AS events \
             FROM games g WHERE g.phase <> 'finished' ORDER BY g.created_ms"
        );
        let mut games = sqlx::query(&sql).fetch(&self.pool);
        while let Some(r) = games.try_next().await? {
            let id: String = r.try_get("id")?;
            let game = (|| {
                let (events, ev) = events_of(r.try_get::<Option<String>, _>("events")?.as_deref().unwrap_or(""))?;
                let phase: String = r.try_get("phase")?;
                let result: Option<String> = r.try_get("result")?;
                Ok(StoredGame {
                    id: id.clone(),
                    phase: Phase::parse(&phase).ok_or_else(|| StoreError::Corrupt(format!("phase {phase:?}")))?,
                    settings: from_json(&r.try_get::<String, _>("settings")?)?,
                    initial_position: r.try_get("initial_position")?,
                    secret: r.try_get("secret")?,
                    chat_lines: chat_lines(&r)?,
                    seats: seats.remove(&id).transpose()?.unwrap_or_default(),
                    events,
                    v: [Some(r.try_get::<i64, _>("v")?), ev, r.try_get::<Option<i64>, _>("cv")?]
                        .into_iter()
                        .flatten()
                        .max()
                        .unwrap_or(0) as u64,
                    arbiter: arbiter.remove(&id).transpose()?.unwrap_or_default(),
                    result: result.map(|r| from_json(&r)).transpose()?,
                })
            })();
            each(id, game);
        }
        Ok(())
    }

    /// Public games in a phase (of one variant, or of all), newest first, with
    /// their seats: one query (the seats joined to the page of games), nothing
    /// computed per game. `online` is false here for people (the caller knows
    /// who is connected).
    pub async fn list_games(
        &self,
        phase: Phase,
        variant: Option<protocol::Variant>,
        limit: i64,
    ) -> Result<Vec<GameSummary>, StoreError> {
        let rows = sqlx::query(
            "SELECT g.id AS game_id, g.settings, g.created_ms, \
             (SELECT COUNT(*) FROM events e WHERE e.game_id = g.id AND e.spent_ms IS NOT NULL) AS ply, \
             s.side, p.id, p.name, p.username, p.bot_level \
             FROM (SELECT id, settings, created_ms FROM games WHERE phase = $1 AND public = 1 \
                   AND ($2 = '' OR variant = $2) ORDER BY created_ms DESC, id LIMIT $3) g \
             LEFT JOIN seats s ON s.game_id = g.id LEFT JOIN players p ON p.id = s.player_id \
             ORDER BY g.created_ms DESC, g.id",
        )
        .bind(phase.as_str())
        .bind(variant.map_or("", |v| v.key()))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<GameSummary> = Vec::new();
        for r in rows {
            let id: String = r.try_get("game_id")?;
            if out.last().is_none_or(|g| g.id != id) {
                out.push(GameSummary {
                    phase,
                    settings: from_json(&r.try_get::<String, _>("settings")?)?,
                    seats: Default::default(),
                    ply: r.try_get::<i64, _>("ply")? as u32,
                    id,
                });
            }
            if r.try_get::<Option<String>, _>("side")?.is_some() {
                let (side, player) = seat_row(&r)?;
                if let Some(g) = out.last_mut() {
                    g.seats[side.index()] = Some(player.seat_info(false));
                }
            }
        }
        Ok(out)
    }

    /// The complete record of a game.
    pub async fn record(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        let Some(r) = sqlx::query("SELECT phase, settings, initial_position, result FROM games WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let phase: String = r.try_get("phase")?;
        let result: Option<String> = r.try_get("result")?;
        let events = self.events(id).await?;
        let mut moves = Vec::new();
        for e in &events {
            if let (Some(mv), Some(spent)) = (e.action.strip_prefix("move "), e.spent_ms) {
                let (clocks_ms, periods) = e.clocks.unwrap_or_default();
                moves.push(RecordMove {
                    ply: moves.len() as u32,
                    side: e.side,
                    mv: mv.to_owned(),
                    spent_ms: spent,
                    clocks_ms,
                    periods,
                });
            }
        }
        let chat_rows = sqlx::query("SELECT channel, name, text, wall_ms FROM chat WHERE game_id = $1 ORDER BY v")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        let mut chat = Vec::with_capacity(chat_rows.len());
        for c in chat_rows {
            let channel: String = c.try_get("channel")?;
            chat.push(RecordChat {
                channel: if channel == "players" {
                    Channel::Players
                } else {
                    Channel::Spectators
                },
                from: c.try_get("name")?,
                text: c.try_get("text")?,
                wall_ms: c.try_get("wall_ms")?,
            });
        }
        Ok(Some(GameRecord {
            id: id.to_owned(),
            phase: Phase::parse(&phase).ok_or_else(|| StoreError::Corrupt(format!("phase {phase:?}")))?,
            settings: from_json(&r.try_get::<String, _>("settings")?)?,
            initial_position: r.try_get("initial_position")?,
            seats: self.seats(id).await?.map(|s| s.map(|p| p.seat_info(false))),
            moves,
            events: events
                .into_iter()
                .map(|e| RecordEvent {
                    seq: e.seq,
                    side: e.side,
                    action: e.action,
                    at_ms: e.at_ms,
                    wall_ms: e.wall_ms,
                    clocks_ms: e.clocks.map(|c| c.0),
                    periods: e.clocks.map(|c| c.1),
                })
                .collect(),
            chat,
            result: result.map(|r| from_json(&r)).transpose()?,
            rating_changes: self.rating_changes_of_game(id).await?,
            // The variant's own lines come from the game's room (`crate::http::with_notes`).
            notes: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: u64, side: Side) -> EventRow {
        EventRow {
            seq,
            v: seq + 1,
            side,
            action: format!("move test-{seq}"),
            at_ms: seq * 1000,
            wall_ms: 1_700_000_000_000 + seq as i64,
            spent_ms: Some(seq),
            lag_ms: None,
            clocks: Some(([1, 2, seq], [0, 1, 2])),
        }
    }

    #[test]
    fn array_literals_quote_texts_and_write_numbers_and_nulls() {
        let mut cols = PgArrays::new(2, 3);
        for (t, n) in [
            (Some("a\"b\\c,{d}"), Some(-120)),
            (None, None),
            (Some(""), Some(i64::MIN)),
            // Each of the two alone, beside characters of several bytes.
            (Some("將\\"), Some(0)),
            (Some("\"帥"), Some(1)),
        ] {
            cols.text(0, t);
            cols.int(1, n);
        }
        assert_eq!(
            cols.finish(),
            [
                r#"{"a\"b\\c,{d}",NULL,"","將\\","\"帥"}"#,
                "{-120,NULL,-9223372036854775808,0,1}"
            ]
        );
        assert_eq!(join3(&[0u64, 7, 3_600_000]), "0,7,3600000");
        let mut clocks = PgArrays::new(1, 2);
        clocks.triple(0, Some([0, 7, 3_600_000]));
        clocks.triple(0, None);
        assert_eq!(clocks.finish(), [r#"{"0,7,3600000",NULL}"#]);
    }

    /// Odd action texts and empty columns survive the array literals of the
    /// Postgres `unnest` insert (and SQLite's `VALUES`).
    fn odd_event(seq: u64, side: Side) -> EventRow {
        EventRow {
            action: format!("say \"{seq}\", {{x}} \\ y NULL"),
            spent_ms: None,
            clocks: None,
            ..event(seq, side)
        }
    }

    /// A SQLite file of a test's own, removed with its WAL files when dropped.
    struct TempSqlite(std::path::PathBuf);

    impl TempSqlite {
        fn new() -> TempSqlite {
            TempSqlite(std::env::temp_dir().join(format!("sanguo-store-{}.sqlite", rand::random::<u64>())))
        }

        fn url(&self) -> String {
            format!("sqlite://{}?mode=rwc", self.0.display())
        }
    }

    impl Drop for TempSqlite {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
            }
        }
    }

    #[tokio::test]
    async fn the_commits_in_flight_are_lowered_and_raised_with_at_least_one() {
        let file = TempSqlite::new();
        let store = Store::connect(&file.url(), Metrics::default()).await.expect("store");
        let free = || store.commit_slots.permits.available_permits();
        assert_eq!(free(), COMMITS_IN_FLIGHT);
        for (asked, slots) in [(1, 1), (5, 5), (0, 1), (3, 3), (3, 3)] {
            store.set_commits_in_flight(asked);
            // A lowered count is taken from the free permits by a task of its own.
            for _ in 0..100 {
                if free() == slots {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert_eq!(free(), slots, "asked for {asked}");
        }
        store.close().await;
    }

    /// Writes that arrive within the window of the first go in its
    /// transaction; without a window, writes apart go one by one.
    #[tokio::test]
    async fn writes_within_the_commit_window_go_in_one_transaction() {
        let file = TempSqlite::new();
        let store = Store::connect(&file.url(), Metrics::default()).await.expect("store");
        let transactions = || {
            store
                .metrics
                .render()
                .lines()
                .find_map(|l| l.strip_prefix("sanguo_store_commit_seconds_count "))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .expect("the commit count")
        };
        let three_apart = |v: u64| {
            let store = &store;
            async move {
                let write = |game: &'static str, wait_ms: u64| async move {
                    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
                    store.commit(game, v, &[Op::Event(event(v, Side::W))]).await
                };
                let (a, b, c) = tokio::join!(write("g1", 0), write("g2", 100), write("g3", 200));
                a.and(b).and(c).expect("the writes");
            }
        };
        store.set_commit_window(Duration::from_millis(500));
        let before = transactions();
        three_apart(1).await;
        assert_eq!(transactions() - before, 1, "one transaction for the three");
        store.set_commit_window(Duration::ZERO);
        let before = transactions();
        three_apart(2).await;
        assert_eq!(transactions() - before, 3, "each alone");
        store.close().await;
    }

    /// A room's ops go to the group commit without a copy and come back
    /// with the result, the same ops, whether the writer committed them or
    /// dropped them untried (its queue gone: the room then commits them
    /// itself).
    #[tokio::test]
    async fn a_commit_hands_its_ops_back() {
        let file = TempSqlite::new();
        let store = store_with_games(&file.url(), &["g1", "g2"]).await;
        let rows = |game: &'static str| {
            let store = &store;
            async move {
                sqlx::query("SELECT seq FROM events WHERE game_id = $1")
                    .bind(game)
                    .fetch_all(&store.pool)
                    .await
                    .expect("rows")
                    .len()
            }
        };
        let ops = vec![Op::Event(event(0, Side::W)), Op::Event(event(1, Side::B))];
        let (r, back) = store.commit_owned("g1", 2, ops.clone()).await;
        r.expect("committed by the writer");
        assert_eq!(back, ops);
        assert_eq!(rows("g1").await, 2);

        // A writer whose queue is gone: the pending commit is dropped untried.
        let mut orphan = store.clone();
        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        orphan.writer = Some(tx);
        let (r, back) = orphan.commit_owned("g2", 2, ops.clone()).await;
        r.expect("committed by the room itself");
        assert_eq!(back, ops);
        assert_eq!(rows("g2").await, 2);
        store.close().await;
    }

    #[tokio::test]
    async fn a_batch_of_rooms_stores_every_event_row_on_sqlite() {
        let file = TempSqlite::new();
        stores_every_event_row(&file.url()).await;
    }

    /// Needs the Postgres of the test command's setup (127.0.0.1:5432, trust).
    #[tokio::test]
    async fn a_batch_of_rooms_stores_every_event_row_on_postgres() {
        let (admin, name) = test_db().await;
        stores_every_event_row(&format!("postgres://postgres@127.0.0.1:5432/{name}")).await;
        drop_test_db(admin, &name).await;
    }

    /// A test database of its own on the test command's Postgres
    /// (127.0.0.1:5432, trust), dropped by [`drop_test_db`].
    async fn test_db() -> (AnyConnection, String) {
        let name = format!("sanguo_store_{}", rand::random::<u32>());
        sqlx::any::install_default_drivers();
        let mut conn = <AnyConnection as sqlx::Connection>::connect("postgres://postgres@127.0.0.1:5432/postgres")
            .await
            .expect("the test Postgres on 127.0.0.1:5432");
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create");
        (conn, name)
    }

    async fn drop_test_db(mut conn: AnyConnection, name: &str) {
        conn.execute(format!("DROP DATABASE {name} WITH (FORCE)").as_str())
            .await
            .expect("drop");
    }

    /// The group commit's Postgres transactions run on a connection it keeps
    /// out of the pool (no ping when it is given back): the same backend
    /// commits one write after another. One the database closed is replaced
    /// once it has been idle ([`TEST_IDLE_CONNECTION`]): the next commit
    /// succeeds on a new connection.
    #[tokio::test]
    async fn the_group_commit_keeps_its_connection_and_replaces_one_the_database_closed() {
        let (admin, name) = test_db().await;
        let store = store_with_games(&format!("postgres://postgres@127.0.0.1:5432/{name}"), &["g1"]).await;
        let kept_pid = || async {
            let mut kept = store.kept.0.lock().unwrap().pop().expect("a kept connection");
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut kept.conn)
                .await
                .expect("pid");
            store.kept.0.lock().unwrap().push(kept);
            pid
        };
        store
            .commit("g1", 1, &[Op::Event(event(0, Side::W))])
            .await
            .expect("first");
        let first = kept_pid().await;
        for k in 1..5u64 {
            store
                .commit("g1", k + 1, &[Op::Event(event(k, Side::ALL[k as usize % 3]))])
                .await
                .expect("next");
            assert_eq!(
                store.kept.0.lock().unwrap().len(),
                1,
                "one transaction at a time keeps one"
            );
            assert_eq!(kept_pid().await, first, "the same connection commits again");
        }
        terminate_and_idle(&store, first).await;
        store
            .commit("g1", 6, &[Op::Event(event(5, Side::B))])
            .await
            .expect("a commit after the kept connection was closed");
        assert_ne!(kept_pid().await, first, "a new connection");
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE game_id = 'g1'")
            .fetch_one(&store.pool)
            .await
            .expect("rows");
        assert_eq!(rows, 6);
        store.close().await;
        assert!(store.kept.0.lock().unwrap().is_empty(), "closed with the store");
        drop_test_db(admin, &name).await;
    }

    /// The requests' frequent statements run on connections kept out of the
    /// pool ([`RequestConns`]): one backend serves one request after another,
    /// a guest's player and session are one atomic statement, a name already
    /// taken is refused (no row of either kind) and leaves the connection
    /// kept, at most [`REQUEST_CONNS`] serve requests at once, and one the
    /// database closed is replaced once idle.
    #[tokio::test]
    async fn the_requests_keep_their_connections_and_replace_one_the_database_closed() {
        let (admin, name) = test_db().await;
        let store = store_with_games(&format!("postgres://postgres@127.0.0.1:5432/{name}"), &["g1"]).await;
        let kept_pid = || async {
            let kept = store.requests.kept.0.lock().unwrap().pop();
            let mut kept = kept.expect("a kept connection");
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut kept.conn)
                .await
                .expect("pid");
            store.requests.kept.0.lock().unwrap().push(kept);
            pid
        };
        let first = kept_pid().await;
        let count = |sql: &'static str| async {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&store.pool)
                .await
                .expect("count")
        };
        store
            .create_player("p2", "Two", Some(("two", "hash")), "token-p2")
            .await
            .expect("an account");
        let taken = store
            .create_player("p3", "Three", Some(("two", "hash")), "token-p3")
            .await;
        assert!(matches!(taken, Err(StoreError::Conflict)), "{taken:?}");
        assert_eq!(count("SELECT count(*) FROM players WHERE id = 'p3'").await, 0);
        assert_eq!(count("SELECT count(*) FROM sessions WHERE player_id = 'p3'").await, 0);
        assert_eq!(count("SELECT count(*) FROM sessions WHERE player_id = 'p2'").await, 1);
        let ttl = Duration::from_secs(3600);
        for token in ["token-p1", "token-p2"] {
            assert!(matches!(
                store.player_by_token(token, ttl).await,
                Ok(TokenLookup::Player(_))
            ));
        }
        assert_eq!(store.game_phase("g1").await.expect("phase"), Some(Phase::Open));
        assert_eq!(store.active_games_created_by("p1").await.expect("count"), 1);
        assert_eq!(
            store.requests.kept.0.lock().unwrap().len(),
            1,
            "one at a time keeps one"
        );
        assert_eq!(kept_pid().await, first, "the same connection serves every request");
        // The permits: with REQUEST_CONNS connections held, one more waits
        // until one is given back.
        let mut held = Vec::new();
        for _ in 0..REQUEST_CONNS {
            held.push(store.request_conn().await.expect("a connection"));
        }
        assert!(
            tokio::time::timeout(Duration::from_millis(200), store.request_conn())
                .await
                .is_err(),
            "one more than REQUEST_CONNS waits"
        );
        store.keep_request(held.pop().expect("held"));
        let another = tokio::time::timeout(Duration::from_millis(200), store.request_conn())
            .await
            .expect("one given back lets another go")
            .expect("a connection");
        held.push(another);
        for conn in held {
            store.keep_request(conn);
        }
        let many = (0..3 * REQUEST_CONNS).map(|_| store.player_by_token("token-p1", ttl));
        for found in futures_util::future::join_all(many).await {
            assert!(matches!(found, Ok(TokenLookup::Player(_))));
        }
        let kept = store.requests.kept.0.lock().unwrap().len();
        assert!((1..=REQUEST_CONNS).contains(&kept), "{kept} kept");
        while store.requests.kept.0.lock().unwrap().len() > 1 {
            let k = store.requests.kept.0.lock().unwrap().pop().expect("kept");
            k.conn.close().await.expect("close");
        }
        let pid = kept_pid().await;
        terminate_and_idle(&store, pid).await;
        assert!(matches!(
            store.player_by_token("token-p2", ttl).await,
            Ok(TokenLookup::Player(_))
        ));
        assert_ne!(kept_pid().await, pid, "a new connection");
        store.close().await;
        assert!(
            store.requests.kept.0.lock().unwrap().is_empty(),
            "closed with the store"
        );
        drop_test_db(admin, &name).await;
    }

    /// Closes backend `pid` from the database's side, then waits until a
    /// kept connection counts as idle (it is pinged before it is used again).
    async fn terminate_and_idle(store: &Store, pid: i32) {
        sqlx::query("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .execute(&store.pool)
            .await
            .expect("terminate");
        tokio::time::sleep(TEST_IDLE_CONNECTION + Duration::from_millis(100)).await;
    }

    /// A store at `url` with a player `p1` and its games `games`.
    async fn store_with_games(url: &str, games: &[&str]) -> Store {
        let store = Store::connect(url, Metrics::default()).await.expect("store");
        store.create_player("p1", "P", None, "token-p1").await.expect("player");
        let settings = GameSettings {
            variant: Default::default(),
            time_control: protocol::TimeControl::default(),
            direction: protocol::Direction::default(),
            public: true,
            players_chat: true,
            grace_ms: 60_000,
            rated: false,
            anqi: None,
        };
        for g in games {
            store
                .create_game(g, "p1", &settings, "start", None)
                .await
                .expect("game");
        }
        store
    }

    /// A group commit of several rooms, one of them with more event rows than
    /// one SQLite INSERT takes, stores every row with its room's version, in
    /// order: moves alone (Postgres: one `unnest` statement without a
    /// transaction), then moves with other writes (a transaction).
    async fn stores_every_event_row(url: &str) {
        let store = store_with_games(url, &["g1", "g2", "g3"]).await;
        let row = |k: u64| {
            if k % 5 == 3 {
                odd_event(k, Side::ALL[k as usize % 3])
            } else {
                event(k, Side::ALL[k as usize % 3])
            }
        };
        let many: Vec<Op> = (0..EVENT_ROWS_PER_INSERT as u64 + 7)
            .map(|k| Op::Event(row(k)))
            .collect();
        let first = vec![Op::Event(event(0, Side::W))];
        store
            .commit_now(&[("g1", 500, &many), ("g2", 9, &first)])
            .await
            .expect("moves alone");
        let second = vec![Op::Event(odd_event(1, Side::B))];
        let chat = vec![Op::Chat {
            v: 1,
            channel: Channel::Players,
            player: "p1".into(),
            name: "P".into(),
            text: "hi".into(),
            wall_ms: 1,
        }];
        store
            .commit_now(&[("g2", 10, &second), ("g3", 1, &chat)])
            .await
            .expect("moves and chat");
        let rows = sqlx::query(
            "SELECT game_id, seq, v, v_last, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods \
             FROM events ORDER BY game_id, seq",
        )
        .fetch_all(&store.pool)
        .await
        .expect("rows");
        let written: Vec<(&str, u64, EventRow)> = (0..many.len() as u64)
            .map(|k| ("g1", 500, row(k)))
            .chain([("g2", 9, event(0, Side::W)), ("g2", 10, odd_event(1, Side::B))])
            .collect();
        assert_eq!(rows.len(), written.len());
        for (r, (game, v_last, e)) in rows.iter().zip(&written) {
            assert_eq!(r.get::<String, _>("game_id"), *game);
            assert_eq!(r.get::<i64, _>("seq"), e.seq as i64);
            assert_eq!(r.get::<i64, _>("v"), e.v as i64);
            assert_eq!(r.get::<i64, _>("v_last"), *v_last as i64);
            assert_eq!(r.get::<String, _>("side"), e.side.as_str());
            assert_eq!(r.get::<String, _>("action"), e.action);
            assert_eq!(r.get::<i64, _>("at_ms"), e.at_ms as i64);
            assert_eq!(r.get::<i64, _>("wall_ms"), e.wall_ms);
            assert_eq!(r.get::<Option<i64>, _>("spent_ms"), e.spent_ms.map(|x| x as i64));
            assert_eq!(r.get::<Option<i64>, _>("lag_ms"), e.lag_ms.map(|x| x as i64));
            assert_eq!(r.get::<Option<String>, _>("clocks"), e.clocks.map(|c| join3(&c.0)));
            assert_eq!(r.get::<Option<String>, _>("periods"), e.clocks.map(|c| join3(&c.1)));
        }
        // The other writes of the batch are there too.
        let chat: i64 = sqlx::query("SELECT COUNT(*) AS n FROM chat WHERE game_id = 'g3' AND v = 1")
            .fetch_one(&store.pool)
            .await
            .expect("chat")
            .get("n");
        assert_eq!(chat, 1);
        store.close().await;
    }
}
