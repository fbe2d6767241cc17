//! `sanguo`: the game server (`serve`) and the command-line face of the engine.
//!
//! The engine commands print plain, stable text so that other tools and the
//! project's own tests can check the rules from outside. `serve` parses its
//! configuration and hands over to the `server` library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

/// mimalloc: a move allocates and frees many small strings and vectors (the
/// status, its texts, the messages); glibc's malloc spent a fifth of the
/// server's instructions per move on them (docs/CAPACITY.md, issue 15's third pass).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use clap::{Parser, Subcommand};
use engine::{Variant, VariantPosition};

#[derive(Parser, Debug)]
#[command(
    name = "sanguo",
    version,
    about = "Three Kingdoms chess (三国象棋): game server and rules engine tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the game server (HTTP API, WebSockets, store).
    Serve(Box<ServeArgs>),
    /// Print the legal moves, one per line, in canonical order.
    Moves {
        #[command(flatten)]
        game: GameArgs,
    },
    /// Play moves and print the resulting position text.
    Play {
        #[command(flatten)]
        game: GameArgs,
        /// Moves such as W72-W54 (the variant's action text).
        moves: Vec<String>,
    },
    /// Count move sequences of length DEPTH; the total is the last line.
    Perft {
        #[command(flatten)]
        game: GameArgs,
        /// Depth in plies.
        depth: u32,
        /// Also print the count below each root move (`MOVE: COUNT`).
        #[arg(long)]
        divide: bool,
        /// chance-perft on the viewer form of the position (variants with
        /// hidden pieces: a flip branches over every identity it may reveal).
        #[arg(long)]
        chance: bool,
    },
    /// Write the board tables (points.tsv, lines.txt, cells.txt, diagonals.txt,
    /// tian.txt, ri.txt) in the formats of shared/board/.
    Tables {
        /// Directory to write into (created if missing).
        dir: PathBuf,
    },
}

/// The game the engine commands work on.
#[derive(clap::Args, Debug)]
struct GameArgs {
    /// The game system: sanguo (三国象棋), or another variant's key.
    #[arg(long, default_value = "sanguo")]
    variant: Variant,
    /// Position text of the variant (RULES §7 for sanguo; the full form where
    /// pieces are hidden); the variant's initial position if omitted.
    #[arg(long)]
    position: Option<String>,
}

impl GameArgs {
    fn position(&self) -> Result<VariantPosition> {
        match &self.position {
            None => Ok(self.variant.default_position()),
            Some(t) => VariantPosition::from_text(self.variant, t).map_err(|e| anyhow::anyhow!("--position: {e}")),
        }
    }
}

/// `sanguo serve` options; each has an environment fallback.
#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SANGUO_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Postgres URL (`postgres://user:pass@host/db`); without it, the SQLite file below.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// The SQLite file used when DATABASE_URL is unset.
    #[arg(long, env = "SANGUO_SQLITE", default_value = "sanguo.sqlite")]
    sqlite: PathBuf,
    /// Default disconnection grace period of new games, seconds.
    #[arg(long, env = "SANGUO_GRACE_SECS", default_value_t = 60)]
    grace_secs: u64,
    /// Heartbeat interval, seconds (a client silent for three is dropped).
    #[arg(long, env = "SANGUO_PING_SECS", default_value_t = 15)]
    ping_secs: u64,
    /// Extra Origins allowed on WebSockets (comma-separated; `*` for any).
    #[arg(long, env = "SANGUO_ALLOWED_ORIGINS", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// Unfinished games a player may have created.
    #[arg(long, env = "SANGUO_MAX_GAMES", default_value_t = 10)]
    max_games: i64,
    /// Messages per second a connection may send (burst: twice that).
    #[arg(long, env = "SANGUO_MSGS_PER_SEC", default_value_t = 20)]
    messages_per_second: u32,
    /// Threads that run the server's tasks (connections, rooms, the store):
    /// default, one per core the process may use. With one, the runtime is
    /// tokio's single-threaded one, which skips the work-stealing
    /// machinery that a lone worker pays for and never uses. Bot searches
    /// and password hashing run on threads of their own either way.
    #[arg(long, env = "SANGUO_WORKER_THREADS", value_parser = clap::value_parser!(u16).range(1..))]
    worker_threads: Option<u16>,
    /// Bot searches run at once, on blocking threads (default: the number of cores).
    #[arg(long, env = "SANGUO_BOT_THREADS")]
    bot_threads: Option<usize>,
    /// The share of one core, percent, that the searches of games of bots
    /// alone (no person seated) may take together, server-wide, while people
    /// play; beyond it they rest (games with a person are never paced).
    #[arg(long, env = "SANGUO_BOTS_ALONE_PERCENT", default_value_t = server::room::bots::BOTS_ALONE_PERCENT,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    bots_alone_percent: u32,
    /// How long a session token stays valid after it was issued, seconds.
    #[arg(long, env = "SANGUO_SESSION_TTL_SECS", default_value_t = 30 * 24 * 3600)]
    session_ttl_secs: u64,
    /// Seconds a client cut off for flooding waits before it may reconnect
    /// (doubling with each cut-off in a row; 0: no wait).
    #[arg(long, env = "SANGUO_FLOOD_COOLDOWN_SECS", default_value_t = 5)]
    flood_cooldown_secs: u64,
    /// A header set by the trusted reverse proxy in front (e.g. X-Forwarded-For,
    /// X-Real-IP) whose last address is the client's. Off by default: the
    /// peer's address is the client's and no header is believed.
    #[arg(long, env = "SANGUO_TRUSTED_PROXY_HEADER")]
    trusted_proxy_header: Option<String>,
    /// Guest sessions one address may create per minute (bursts of as many; 0: no limit).
    #[arg(long, env = "SANGUO_SESSIONS_PER_MIN", default_value_t = 30)]
    sessions_per_minute: u32,
    /// Accounts one address may create per minute (0: no limit).
    #[arg(long, env = "SANGUO_ACCOUNTS_PER_MIN", default_value_t = 10)]
    accounts_per_minute: u32,
    /// Logins one address may try per minute (0: no limit).
    #[arg(long, env = "SANGUO_LOGINS_PER_MIN", default_value_t = 20)]
    logins_per_minute: u32,
    /// Games one address may create per minute (0: no limit).
    #[arg(long, env = "SANGUO_GAMES_PER_MIN", default_value_t = 30)]
    games_per_minute: u32,
    /// Password hashes (argon2, ~19 MiB each) run at once (default: the number of cores).
    #[arg(long, env = "SANGUO_PASSWORD_HASHES")]
    password_hashes: Option<usize>,
    /// Logins and sign-ups that may wait for a password hash; more are refused (429).
    #[arg(long, env = "SANGUO_PASSWORD_QUEUE", default_value_t = 32)]
    password_queue: usize,
    /// The share of one core, percent, that password hashing may take while
    /// people play; beyond it the hashing threads rest and logins wait in line.
    #[arg(long, env = "SANGUO_HASHING_PERCENT", default_value_t = server::limits::HASHING_PERCENT,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    hashing_percent: u32,
    /// Refusals of one address within 10 s (429 answers) that cut it off: its
    /// connections are held unread as accepted, then reset (0: never).
    #[arg(long, env = "SANGUO_CUT_OFF_REFUSALS", default_value_t = 100)]
    cut_off_refusals: u32,
    /// Game sockets of one address closed within 10 s for never saying hello
    /// that cut it off the same way (0: never).
    #[arg(long, env = "SANGUO_CUT_OFF_SILENT", default_value_t = 10)]
    cut_off_silent: u32,
    /// How long an address is first cut off, in seconds (doubling with each
    /// cut-off in a row, at most 64 times as long; 0: never).
    #[arg(long, env = "SANGUO_CUT_OFF_SECS", default_value_t = 10)]
    cut_off_secs: u64,
    /// Game sockets open at once, all addresses together (more: HTTP 503).
    #[arg(long, env = "SANGUO_MAX_SOCKETS", default_value_t = 10_000)]
    max_sockets: usize,
    /// Game sockets one address may hold open (more: HTTP 429).
    #[arg(long, env = "SANGUO_MAX_SOCKETS_PER_ADDR", default_value_t = 100)]
    max_sockets_per_address: usize,
    /// Game sockets of one address that may wait for their hello at once
    /// (more: HTTP 429); a person's client says hello as soon as it opens.
    #[arg(long, env = "SANGUO_MAX_SILENT_SOCKETS_PER_ADDR", default_value_t = 8)]
    max_silent_sockets_per_address: usize,
    /// Spectators one game may have (more: closed with 4002).
    #[arg(long, env = "SANGUO_MAX_SPECTATORS", default_value_t = 200)]
    max_spectators: usize,
    /// Unfinished games with bots that one address may have created.
    #[arg(long, env = "SANGUO_MAX_BOT_GAMES_PER_ADDR", default_value_t = 3)]
    max_bot_games_per_address: usize,
    /// Unfinished games of three bots the whole server plays at once.
    #[arg(long, env = "SANGUO_MAX_BOT_ONLY_GAMES", default_value_t = 4)]
    max_bot_only_games: usize,
    /// Chat lines one game stores per channel (players', spectators'); more are refused (`chat_full`).
    #[arg(long, env = "SANGUO_CHAT_LINES", default_value_t = server::room::core::CHAT_LINES_PER_CHANNEL)]
    chat_lines: u32,
    /// Group-commit transactions in flight at once (at least 1). Fewer make
    /// larger batches at moderate move rates: less database CPU per move, for
    /// up to one commit's wait.
    #[arg(long, env = "SANGUO_COMMITS_IN_FLIGHT", default_value_t = server::store::COMMITS_IN_FLIGHT)]
    commits_in_flight: usize,
    /// Microseconds a group commit waits for more moves after its first (0: none;
    /// timers step by the millisecond). Fewer transactions, each a WAL flush.
    #[arg(long, env = "SANGUO_COMMIT_WINDOW_US", default_value_t = server::store::COMMIT_WINDOW.as_micros() as u64)]
    commit_window_us: u64,
    /// Seconds a new game socket has to send its `hello` (then closed with 1008).
    #[arg(long, env = "SANGUO_HELLO_SECS", default_value_t = 5)]
    hello_secs: u64,
    /// Open files kept from game sockets for accepts, health checks, plain HTTP
    /// and the store: game sockets are capped at the open-file limit less this.
    #[arg(long, env = "SANGUO_FD_RESERVE", default_value_t = 1024)]
    fd_reserve: usize,
    /// Seconds between sweeps of the store (expired sessions, abandoned guests).
    #[arg(long, env = "SANGUO_SWEEP_SECS", default_value_t = 600)]
    sweep_secs: u64,
    /// Seconds after which a guest with no session left and no game, chat line,
    /// tournament or rating is deleted by the sweep.
    #[arg(long, env = "SANGUO_GUEST_MAX_AGE_SECS", default_value_t = 24 * 3600)]
    guest_max_age_secs: u64,
    /// Cluster mode (docs/CLUSTER.md): the NATS server that relays between the
    /// nodes, e.g. nats://127.0.0.1:4222. Needs a Postgres DATABASE_URL shared by
    /// every node. Without it: a single node, as always.
    #[arg(long, env = "SANGUO_NATS_URL")]
    nats_url: Option<String>,
    /// This node's name in the cluster (its id adds a random suffix at every
    /// start); default: the host's name.
    #[arg(long, env = "SANGUO_NODE_NAME")]
    node_name: Option<String>,
    /// A node's lease on its games, milliseconds: the longest a game waits for
    /// another node to take it over after its node died (renewed every third).
    #[arg(long, env = "SANGUO_LEASE_MS", default_value_t = 3000)]
    lease_ms: u64,
}

fn serve(args: ServeArgs) -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let config = server::Config {
        database_url: args.database_url,
        sqlite_path: args.sqlite,
        grace: std::time::Duration::from_secs(args.grace_secs),
        ping_interval: std::time::Duration::from_secs(args.ping_secs.max(1)),
        allowed_origins: args.allowed_origins,
        max_games_per_session: args.max_games,
        messages_per_second: args.messages_per_second,
        message_burst: args.messages_per_second.saturating_mul(2),
        bot_threads: args
            .bot_threads
            .unwrap_or_else(|| server::Config::default().bot_threads)
            .max(1),
        bots_alone_percent: args.bots_alone_percent,
        session_ttl: std::time::Duration::from_secs(args.session_ttl_secs),
        flood_cooldown: std::time::Duration::from_secs(args.flood_cooldown_secs),
        trusted_proxy_header: args.trusted_proxy_header.filter(|h| !h.trim().is_empty()),
        rates: server::limits::RateConfig {
            sessions_per_minute: args.sessions_per_minute,
            accounts_per_minute: args.accounts_per_minute,
            logins_per_minute: args.logins_per_minute,
            games_per_minute: args.games_per_minute,
        },
        password_hashes: args
            .password_hashes
            .unwrap_or_else(|| server::Config::default().password_hashes)
            .max(1),
        password_queue: args.password_queue,
        hashing_percent: args.hashing_percent,
        cut_off_refusals: args.cut_off_refusals,
        cut_off_silent: args.cut_off_silent,
        cut_off: std::time::Duration::from_secs(args.cut_off_secs),
        max_sockets: args.max_sockets.max(1),
        max_sockets_per_address: args.max_sockets_per_address.max(1),
        max_silent_sockets_per_address: args.max_silent_sockets_per_address.max(1),
        max_spectators: args.max_spectators,
        chat_lines: args.chat_lines,
        commits_in_flight: args.commits_in_flight,
        commit_window: std::time::Duration::from_micros(args.commit_window_us),
        hello_timeout: std::time::Duration::from_secs(args.hello_secs.max(1)),
        max_bot_games_per_address: args.max_bot_games_per_address,
        max_bot_only_games: args.max_bot_only_games,
        sweep_interval: std::time::Duration::from_secs(args.sweep_secs.max(1)),
        fd_reserve: args.fd_reserve,
        guest_max_age: std::time::Duration::from_secs(args.guest_max_age_secs),
        cluster: args.nats_url.map(|nats_url| server::cluster::ClusterConfig {
            nats_url,
            name: args
                .node_name
                .or_else(|| std::env::var("HOSTNAME").ok())
                .or_else(|| {
                    std::fs::read_to_string("/etc/hostname")
                        .ok()
                        .map(|h| h.trim().to_owned())
                })
                .unwrap_or_else(|| "node".into()),
            lease: std::time::Duration::from_millis(args.lease_ms.max(300)),
        }),
        ..server::Config::default()
    };
    if config.cluster.is_some() && !config.database_url().starts_with("postgres") {
        anyhow::bail!("--nats-url (cluster mode) needs a Postgres DATABASE_URL shared by every node");
    }
    // The open-file limit's soft value up to its hard one; game sockets are
    // capped below it (`--fd-reserve`).
    let files = server::limits::raise_fd_limit();
    tracing::info!(
        open_files = ?files,
        game_sockets = server::limits::socket_cap(config.max_sockets, files, config.fd_reserve),
        "open-file limit"
    );
    let workers = args.worker_threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    tracing::info!(workers, "runtime");
    let runtime = if workers == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
    }
    .context("starting the runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))?;
        server::run(listener, config, shutdown_signal()).await?;
        Ok(())
    })
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
    tracing::info!("shutdown requested");
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Serve(args) => serve(*args)?,
        Command::Moves { game } => {
            let pos = game.position()?;
            let mut out = String::new();
            for m in pos.legal_move_texts() {
                out.push_str(&m);
                out.push('\n');
            }
            print!("{out}");
        }
        Command::Play { game, moves } => {
            let mut pos = game.position()?;
            pos.settle();
            for (i, text) in moves.iter().enumerate() {
                pos.play_text(text)
                    .map_err(|e| anyhow::anyhow!("move {} '{text}': {e}", i + 1))?;
            }
            println!("{}", pos.to_text());
        }
        Command::Perft {
            game,
            depth,
            divide,
            chance,
        } => {
            let pos = game.position()?;
            if chance {
                let n = pos
                    .chance_perft(depth)
                    .ok_or_else(|| anyhow::anyhow!("--chance: {} has no hidden pieces", pos.variant()))?;
                println!("{n}");
            } else if divide {
                let rows = pos.perft_divide(depth);
                let mut total = 0;
                for (m, n) in &rows {
                    println!("{m}: {n}");
                    total += n;
                }
                println!("{}", if depth == 0 { 1 } else { total });
            } else {
                println!("{}", pos.perft(depth));
            }
        }
        Command::Tables { dir } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in engine::tables::all() {
                let path = dir.join(name);
                std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sanguo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
