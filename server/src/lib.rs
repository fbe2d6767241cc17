//! The Sanguo game server as a library: `main` parses the configuration and
//! calls [`run`]; tests start the very same server on `127.0.0.1:0`.
//!
//! Layers, one job each: the accept loop (axum; connections of addresses cut
//! off for repeated refusals are closed there, [`cutoff`]) → HTTP handlers ([`http`]) or
//! a WebSocket connection ([`ws`]: framing, limits, heartbeat) → the game's
//! room task ([`room`]: decisions in [`room::core`]) → the store ([`store`]).

pub mod boards;
pub mod cluster;
pub mod cutoff;
pub mod deal;
pub mod error;
pub mod explain;
pub mod housekeeping;
pub mod http;
pub mod limits;
pub mod metrics;
pub mod openapi;
pub mod pace;
pub mod pairing;
pub mod penalty;
pub mod players;
pub mod priority;
pub mod rating;
pub mod room;
pub mod seeks;
pub mod store;
pub mod tournament;
pub(crate) mod wake;
pub mod web;
pub mod wire;
pub mod ws;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::metrics::Metrics;
use crate::room::{Journal, RoomContext, Rooms};
use crate::store::Store;

/// Server configuration (the `serve` subcommand fills it from flags and env).
#[derive(Clone, Debug)]
pub struct Config {
    /// `postgres://…` or `sqlite://…`; `None`: the SQLite file `sqlite_path`.
    pub database_url: Option<String>,
    /// The SQLite file used when `database_url` is `None`.
    pub sqlite_path: PathBuf,
    /// Default disconnection grace period for new games.
    pub grace: Duration,
    /// Interval between the server's heartbeat pings; a connection silent
    /// for three intervals is closed.
    pub ping_interval: Duration,
    /// Origins allowed to open WebSockets besides the server's own host;
    /// `*` allows any.
    pub allowed_origins: Vec<String>,
    /// Unfinished games one player may have created.
    pub max_games_per_session: i64,
    /// Messages per second a connection may send (sustained).
    pub messages_per_second: u32,
    /// Messages a connection may send in a burst.
    pub message_burst: u32,
    /// Messages queued towards one connection before it counts as too slow.
    pub outbound_queue: usize,
    /// Events each room keeps for reconnecting clients (older: snapshot).
    pub event_log: usize,
    /// Chat lines a game stores per channel; more are refused (`chat_full`).
    pub chat_lines: u32,
    /// Group-commit transactions in flight at once ([`crate::store::Store::set_commits_in_flight`]).
    pub commits_in_flight: usize,
    /// How long a group commit waits for more writes after its first ([`crate::store::Store::set_commit_window`]).
    pub commit_window: Duration,
    /// Bot searches run at once (each on a blocking thread); more wait.
    pub bot_threads: usize,
    /// The share of one core, percent, that the searches of games of bots
    /// alone take together while people play ([`pace::Pacer`]; 1–100).
    pub bots_alone_percent: u32,
    /// How long a session token is valid after it was issued; older ones
    /// are refused with `unauthorized` ("the session has expired").
    pub session_ttl: Duration,
    /// How long a client cut off for flooding must wait before it may open a
    /// game socket again (doubling with each cut-off in a row; zero: no wait).
    pub flood_cooldown: Duration,
    /// A header set by a trusted reverse proxy (`X-Forwarded-For`,
    /// `X-Real-IP`) whose last address is the client's; `None`: the peer's
    /// address, and no header is believed.
    pub trusted_proxy_header: Option<String>,
    /// Per-address rate limits on sessions, accounts, logins, games.
    pub rates: limits::RateConfig,
    /// Password hashes (argon2, ~19 MiB each) run at once.
    pub password_hashes: usize,
    /// Requests that may wait for a password hash; more get 429.
    pub password_queue: usize,
    /// The share of one core, percent, that password hashing takes while
    /// people play ([`pace::Pacer`]; 1–100).
    pub hashing_percent: u32,
    /// Refusals of one address within [`cutoff::WINDOW`] (429 answers) that
    /// cut it off at accept; 0: never.
    pub cut_off_refusals: u32,
    /// Game sockets of one address closed for never saying `hello` within
    /// [`cutoff::WINDOW`] that cut it off at accept; 0: never.
    pub cut_off_silent: u32,
    /// How long the first cut-off of an address lasts (doubling with each
    /// one in a row); zero: none.
    pub cut_off: Duration,
    /// Game sockets open at once (beyond: HTTP 503 before the upgrade); never
    /// more than the open-file limit less `fd_reserve`.
    pub max_sockets: usize,
    /// Open files kept from game sockets for accepts, plain HTTP requests
    /// (health checks), the store and files.
    pub fd_reserve: usize,
    /// Game sockets one address may hold (beyond: HTTP 429).
    pub max_sockets_per_address: usize,
    /// Game sockets of one address that may wait for their `hello` at once
    /// (beyond: HTTP 429); a person's client says it as soon as it opens.
    pub max_silent_sockets_per_address: usize,
    /// Spectators per game (beyond: closed with 4002).
    pub max_spectators: usize,
    /// How long a new socket has to send its `hello`.
    pub hello_timeout: Duration,
    /// Unfinished games with bots one address may have created.
    pub max_bot_games_per_address: usize,
    /// Unfinished games of three bots the whole server plays at once.
    pub max_bot_only_games: usize,
    /// The shortest clocks and grace period a game may ask for.
    pub clock_minimums: http::ClockMinimums,
    /// How often the store is swept of expired sessions and abandoned guests.
    pub sweep_interval: Duration,
    /// How old a guest with no session and no trace (no game, chat,
    /// tournament or rating) must be before the sweep deletes it.
    pub guest_max_age: Duration,
    /// Cluster mode (issue 17): this node's name, NATS and lease; `None`: a
    /// single node, as always.
    pub cluster: Option<cluster::ClusterConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: None,
            sqlite_path: PathBuf::from("sanguo.sqlite"),
            grace: Duration::from_secs(60),
            ping_interval: Duration::from_secs(15),
            allowed_origins: Vec::new(),
            max_games_per_session: 10,
            messages_per_second: 20,
            message_burst: 40,
            outbound_queue: 256,
            event_log: room::core::LOG_KEEP,
            chat_lines: room::core::CHAT_LINES_PER_CHANNEL,
            commits_in_flight: store::COMMITS_IN_FLIGHT,
            commit_window: store::COMMIT_WINDOW,
            bot_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            bots_alone_percent: room::bots::BOTS_ALONE_PERCENT,
            session_ttl: Duration::from_secs(30 * 24 * 3600),
            flood_cooldown: Duration::from_secs(5),
            trusted_proxy_header: None,
            rates: limits::RateConfig::default(),
            password_hashes: std::thread::available_parallelism().map_or(1, |n| n.get()),
            password_queue: 32,
            hashing_percent: limits::HASHING_PERCENT,
            cut_off_refusals: 100,
            cut_off_silent: 10,
            cut_off: Duration::from_secs(10),
            max_sockets: 10_000,
            fd_reserve: 1024,
            max_sockets_per_address: 100,
            max_silent_sockets_per_address: 8,
            max_spectators: 200,
            hello_timeout: Duration::from_secs(5),
            max_bot_games_per_address: 3,
            max_bot_only_games: 4,
            clock_minimums: http::ClockMinimums::default(),
            sweep_interval: Duration::from_secs(600),
            guest_max_age: Duration::from_secs(24 * 3600),
            cluster: None,
        }
    }
}

impl Config {
    /// The database URL in use.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(u) => u.clone(),
            None => format!("sqlite://{}?mode=rwc", self.sqlite_path.display()),
        }
    }
}

/// Everything a handler needs; cheap to clone.
#[derive(Clone, Debug)]
pub struct AppState {
    /// Configuration.
    pub config: Arc<Config>,
    /// The store.
    pub store: Store,
    /// The rooms.
    pub rooms: Arc<Rooms>,
    /// Metrics.
    pub metrics: Metrics,
    /// Tracks WebSocket tasks (and rooms) for graceful shutdown.
    pub tracker: TaskTracker,
    /// Cancelled at shutdown.
    pub shutdown: CancellationToken,
    /// Connection ids.
    pub next_conn: Arc<AtomicU64>,
    /// Clients cut off for flooding, kept out for a while.
    pub penalties: Arc<penalty::PenaltyBox>,
    /// Addresses cut off for repeated refusals.
    pub cutoff: Arc<cutoff::CutOff>,
    /// What one client may take (rates, hashing, sockets).
    pub limits: Arc<limits::Limits>,
    /// Finished games' final states recently served from the store.
    pub finished: Arc<http::FinishedGames>,
    /// The lobby's lists, read at most once a second.
    pub lobby: Arc<http::Lobby>,
    /// Quick pairing's pool (issue 16).
    pub pairing: Arc<pairing::Pool>,
    /// The lobby's open seeks (issue 16).
    pub seeks: Arc<seeks::Seeks>,
}

/// A startup failure.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not be opened or migrated.
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    /// The cluster could not be joined.
    #[error("cluster: {0}")]
    Cluster(#[from] cluster::ClusterError),
    /// Serving failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

/// Opens the store, restores unfinished games and builds the state.
pub async fn prepare(config: Config) -> Result<AppState, ServeError> {
    let metrics = Metrics::default();
    let tracker = TaskTracker::new();
    let shutdown = CancellationToken::new();
    let (store, node) = match &config.cluster {
        None => (Store::connect(&config.database_url(), metrics.clone()).await?, None),
        Some(c) => {
            let store = Store::connect_fenced(&config.database_url(), metrics.clone()).await?;
            let node = Arc::new(cluster::Cluster::join(c, store.clone()).await?);
            (store, Some((node, Arc::new(room::remote::Deliveries::default()))))
        }
    };
    store.set_commits_in_flight(config.commits_in_flight);
    store.set_commit_window(config.commit_window);
    // Whether people play: what paces the bulk work anyone may ask for (crate::pace).
    let people = Arc::new(pace::People::default());
    let rooms = Rooms::new(RoomContext {
        store: Journal::Store(store.clone()),
        metrics: metrics.clone(),
        tracker: tracker.clone(),
        shutdown: shutdown.clone(),
        log_keep: config.event_log,
        chat_lines: config.chat_lines,
        bots: room::bots::BotPool::paced(
            config.bot_threads,
            config.bots_alone_percent,
            Arc::clone(&people),
            metrics.clone(),
        ),
        cluster: node.clone(),
    });
    let penalties = Arc::new(penalty::PenaltyBox::new(config.flood_cooldown));
    let limits = Arc::new(limits::Limits::new(&config, &metrics, people));
    match &node {
        None => {
            let restored = rooms.restore_all().await?;
            tracing::info!(restored, "unfinished games restored");
        }
        Some((node, deliveries)) => {
            // The relay and the deliveries first: games taken over below may
            // have clients on other nodes already.
            tracker.spawn(room::remote::relay(
                Arc::clone(&rooms),
                Arc::clone(node),
                config.outbound_queue,
                shutdown.clone(),
            ));
            tracker.spawn(room::remote::deliver(
                Arc::clone(node),
                Arc::clone(deliveries),
                shutdown.clone(),
            ));
            tracker.spawn(room::remote::watch_owners(
                Arc::clone(node),
                Arc::clone(deliveries),
                shutdown.clone(),
            ));
            tracker.spawn(Arc::clone(node).keep_lease(shutdown.clone()));
            tracker.spawn(Arc::clone(node).share_state(Arc::clone(&penalties), Arc::clone(&limits), shutdown.clone()));
            let adopted = rooms.adopt_orphans().await;
            tracing::info!(adopted, node = %node.node, "games without a live owner taken over");
            tracker.spawn(Arc::clone(&rooms).keep_adopting(node.lease / 6));
        }
    }
    Ok(AppState {
        penalties,
        cutoff: Arc::new(cutoff::CutOff::new(
            config.cut_off_refusals,
            config.cut_off_silent,
            config.cut_off,
        )),
        limits,
        finished: Arc::default(),
        lobby: Arc::default(),
        pairing: Arc::default(),
        seeks: Arc::default(),
        config: Arc::new(config),
        store,
        rooms,
        metrics,
        tracker,
        shutdown,
        next_conn: Arc::new(AtomicU64::new(1)),
    })
}

/// Serves until `shutdown` completes, then stops gracefully: no new
/// connections, every WebSocket and room task told to stop and awaited (rooms
/// only ever stop between commits), then the store is closed.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let state = prepare(config).await?;
    serve(listener, state, shutdown).await
}

/// [`run`] with a prepared state.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let token = state.shutdown.clone();
    let tracker = state.tracker.clone();
    let store = state.store.clone();
    let cluster = state.rooms.cluster().cloned();
    let metrics = state.metrics.clone();
    tracing::info!(addr = %listener.local_addr()?, "listening");
    // Expired sessions, abandoned guests and idle entries of the in-memory
    // limits are swept on timers (bounded growth).
    housekeeping::spawn(&state, Duration::from_secs(60));
    // Connections of addresses cut off are closed as accepted.
    let listener = cutoff::Door::new(listener, state.clone());
    let app = http::app(state);
    let stop = token.clone();
    axum::serve(listener, app.into_make_service_with_connect_info::<wire::Peer>())
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = shutdown => {}
                _ = stop.cancelled() => {}
            }
            stop.cancel();
        })
        .await?;
    token.cancel();
    if let Some((node, _)) = cluster {
        // Hand the games over at once: wait for the rooms to stop (they stop
        // between commits), then release them; other nodes take them over
        // without waiting for the lease to lapse.
        let waited = std::time::Instant::now();
        while metrics.rooms.load(std::sync::atomic::Ordering::Relaxed) > 0 && waited.elapsed() < Duration::from_secs(10)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        node.leave().await;
    }
    tracker.close();
    tracker.wait().await;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}
