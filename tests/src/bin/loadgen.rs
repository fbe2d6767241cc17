//! `loadgen`: drives a running server (or the bare `relay` baseline) over
//! real WebSockets and measures it. Four modes:
//!
//! - `games` (default): N concurrent games, three guest players each with its
//!   own WebSocket. The side to move sends a random legal move (from the
//!   server's list) after an optional think time; the latency of a move is
//!   the time from sending it to the moment the last of the three seats has
//!   received it. Only moves sent once the measured window is open (after
//!   every game has started) count, in the rate and in the latencies. A
//!   finished game is replaced by a new one until the run's duration is
//!   over.
//! - `relay`: the same load shape against `relay` (no HTTP, no rules, no
//!   storage): three sockets per game, the seat whose turn it is sends a
//!   message of `--relay-bytes`, the relay hands it to all three.
//! - `idle`: N spectator connections that only answer heartbeats, spread
//!   over open games; reports the server memory per connection.
//! - `rooms`: N live games (three seats taken over HTTP) without any socket;
//!   reports the server memory per live game.
//!
//! With `--server-pid` the server's resident memory and CPU come from
//! `/proc`; memory per game or connection is the RSS growth over the load
//! divided by its size. `--json` prints one JSON object instead of text.
//!
//! **Variants side by side** (`games` mode): `--variants sanguo,anqi,yanyi`
//! runs `--games` games of *each* variant at once in one run, and reports
//! moves/s, p50/p99 latency and the mean `moved` size per variant in one
//! table (the totals stay the top-level numbers). Every move is chosen from
//! the legal list the server sends to the seat whose turn its status names —
//! 三国暗棋's flips and moves alike, 三国演弈棋's next player by 被将先走 —
//! never from a fixed cycle; each socket is the seat the server gave its
//! player (三国暗棋 draws the seats). `--each-alone` first runs each variant
//! by itself for `--seconds`, so that the server CPU per move (from
//! `/proc/PID/stat`, which a mixed run cannot split) is measured per variant.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use protocol::{
    ClientMsg, CreateGame, GameEvent, JoinGame, LegalMovesFor, PROTOCOL_VERSION, ServerMsg, Session, Side, Snapshot,
    TimeControl, Variant,
};
use sanguo_tests::procfs::{cpu_seconds, rss_kib};
use tokio::sync::{Semaphore, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// What the load is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Games of random legal moves.
    Games,
    /// The same shape against the bare relay.
    Relay,
    /// Idle spectator connections.
    Idle,
    /// Live games without connections.
    Rooms,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Games => "games",
            Mode::Relay => "relay",
            Mode::Idle => "idle",
            Mode::Rooms => "rooms",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// The load.
    pub mode: Mode,
    /// Games played at the same time (`games`, `relay`, `rooms`).
    pub games: usize,
    /// Connections (`idle`).
    pub connections: usize,
    /// Idle connections per game (`idle`).
    pub per_game: usize,
    /// How long to measure (after all games have started).
    pub duration: Duration,
    /// Think time before each move, ms (uniform in `0..=think_ms`).
    pub think_ms: u64,
    /// Seed of the move choices.
    pub seed: u64,
    /// Pid of the server process, to report its memory and CPU.
    pub server_pid: Option<u32>,
    /// Size of a relayed move message (`relay`).
    pub relay_bytes: usize,
    /// Print JSON.
    pub json: bool,
    /// Flooding connections: each watches a game of its own and sends
    /// messages as fast as it can, reconnecting whenever it is cut off.
    pub flooders: usize,
    /// Messages per second each flooder sends (0: as fast as it can).
    pub flood_rate: u32,
    /// Each game's players connect from a loopback address of their own
    /// (127.1.0.1 and up), as people do from their own homes: the server's
    /// per-address limits then see each game as a few clients.
    pub spread_addresses: bool,
    /// The variants played (`games` mode): `games` games of each, side by side.
    pub variants: Vec<Variant>,
    /// Before the side-by-side run, run each variant alone for `duration`
    /// (server CPU per move per variant).
    pub each_alone: bool,
    /// Players say `hello` with `legal_moves: own`: a status lists the legal
    /// moves only for the seat to move.
    pub own_moves: bool,
    /// Pid of the Postgres postmaster, to report its CPU during the window.
    pub postgres_pid: Option<u32>,
}

/// The local address of game `g` with `--spread-addresses`: 127.1.x.y.
fn game_address(g: usize) -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 1, (g / 250) as u8, (g % 250 + 1) as u8))
}

/// Counters shared by all games.
#[derive(Debug, Default)]
struct Totals {
    moves: AtomicU64,
    games_started: AtomicU64,
    games_finished: AtomicU64,
    errors: AtomicU64,
    connections: AtomicU64,
    moved_msgs: AtomicU64,
    moved_bytes: AtomicU64,
    flood_sent: AtomicU64,
    flood_cutoffs: AtomicU64,
}

/// The measured numbers.
#[derive(Debug, Default)]
pub struct Report {
    /// The load.
    pub mode: &'static str,
    /// Games (or connections in `idle`) asked for.
    pub size: usize,
    /// Moves seen by all three seats during the measured window.
    pub moves: u64,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// Latency percentiles (send → last seat received), microseconds: p50, p90, p99, p999, max.
    pub latency_us: [u64; 5],
    /// Games that ended during the run.
    pub games_finished: u64,
    /// Error messages received from the server (refused moves and the like) and failed games.
    pub errors: u64,
    /// WebSocket connections open at the end of the window.
    pub connections: u64,
    /// Mean size of a `moved` event as received, bytes (`games`).
    pub moved_bytes: Option<u64>,
    /// Server resident memory before the load, KiB.
    pub rss_before_kib: Option<u64>,
    /// Server resident memory once the load is in place, KiB.
    pub rss_loaded_kib: Option<u64>,
    /// Server resident memory at the end of the window, KiB.
    pub rss_end_kib: Option<u64>,
    /// Server CPU seconds used during the window.
    pub server_cpu_s: Option<f64>,
    /// The load generator's own CPU seconds during the window.
    pub loadgen_cpu_s: Option<f64>,
    /// Postgres's CPU seconds during the window (`--postgres-pid`).
    pub postgres_cpu_s: Option<f64>,
    /// Flooders: messages sent and times cut off (with the close reasons seen).
    pub flood: Option<(u64, u64, Vec<String>)>,
    /// Per variant (`games` mode), in the order asked for.
    pub lanes: Vec<Lane>,
}

/// One variant's numbers in a `games` run.
#[derive(Debug, Default, Clone)]
pub struct Lane {
    /// The variant.
    pub variant: Option<Variant>,
    /// Its games.
    pub games: usize,
    /// Moves seen by all three seats during the measured window.
    pub moves: u64,
    /// Latency percentiles, microseconds: p50, p90, p99, p999, max.
    pub latency_us: [u64; 5],
    /// Mean size of a `moved` event as received, bytes.
    pub moved_bytes: Option<u64>,
    /// Games of it that ended during the run.
    pub games_finished: u64,
    /// Errors in its games.
    pub errors: u64,
    /// Server CPU per move, microseconds, measured with this variant alone (`--each-alone`).
    pub alone_cpu_us_per_move: Option<f64>,
    /// Moves per second with this variant alone (`--each-alone`).
    pub alone_moves_per_s: Option<f64>,
    /// p99 latency with this variant alone, microseconds (`--each-alone`).
    pub alone_p99_us: Option<u64>,
}

impl Report {
    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64().max(1e-9)
    }

    /// RSS growth per game (or per connection in `idle`), KiB: from before
    /// the load to its end (`games`, `relay`) or to when it is in place.
    pub fn kib_per_unit(&self) -> Option<f64> {
        let after = match self.mode {
            "idle" | "rooms" => self.rss_loaded_kib?,
            _ => self.rss_end_kib?,
        };
        let units = match self.mode {
            "idle" => self.connections as f64,
            _ => self.size as f64,
        };
        let before = self.rss_before_kib?;
        (units > 0.0).then(|| after.saturating_sub(before) as f64 / units)
    }

    fn json(&self) -> serde_json::Value {
        let [p50, p90, p99, p999, max] = self.latency_us.map(|us| us as f64 / 1000.0);
        serde_json::json!({
            "mode": self.mode,
            "size": self.size,
            "moves": self.moves,
            "elapsed_s": self.secs(),
            "moves_per_s": self.moves as f64 / self.secs(),
            "latency_ms": {"p50": p50, "p90": p90, "p99": p99, "p999": p999, "max": max},
            "games_finished": self.games_finished,
            "errors": self.errors,
            "connections": self.connections,
            "moved_bytes": self.moved_bytes,
            "server_rss_kib": {"before": self.rss_before_kib, "loaded": self.rss_loaded_kib, "end": self.rss_end_kib},
            "kib_per_unit": self.kib_per_unit(),
            "server_cpu_pct": self.server_cpu_s.map(|c| 100.0 * c / self.secs()),
            "loadgen_cpu_pct": self.loadgen_cpu_s.map(|c| 100.0 * c / self.secs()),
            "postgres_cpu_pct": self.postgres_cpu_s.map(|c| 100.0 * c / self.secs()),
            "postgres_cpu_us_per_move": self.postgres_cpu_s.filter(|_| self.moves > 0).map(|c| c * 1e6 / self.moves as f64),
            "flood": self.flood.as_ref().map(|(sent, cut, reasons)| serde_json::json!({"sent": sent, "cutoffs": cut, "reasons": reasons})),
            "server_cpu_us_per_move": self.cpu_us_per_move(),
            "variants": self.lanes.iter().map(|l| {
                let [p50, p90, p99, p999, max] = l.latency_us.map(|us| us as f64 / 1000.0);
                serde_json::json!({
                    "variant": l.variant.map(Variant::key),
                    "games": l.games,
                    "moves": l.moves,
                    "moves_per_s": l.moves as f64 / self.secs(),
                    "latency_ms": {"p50": p50, "p90": p90, "p99": p99, "p999": p999, "max": max},
                    "moved_bytes": l.moved_bytes,
                    "games_finished": l.games_finished,
                    "errors": l.errors,
                    "alone": l.alone_cpu_us_per_move.map(|cpu| serde_json::json!({
                        "server_cpu_us_per_move": cpu,
                        "moves_per_s": l.alone_moves_per_s,
                        "p99_ms": l.alone_p99_us.map(|us| us as f64 / 1000.0),
                    })),
                })
            }).collect::<Vec<_>>(),
            "uptime": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        })
    }

    /// Server CPU per move over the whole window, microseconds.
    pub fn cpu_us_per_move(&self) -> Option<f64> {
        let cpu = self.server_cpu_s?;
        (self.moves > 0).then(|| cpu * 1e6 / self.moves as f64)
    }

    /// The per-variant table (`games` mode with `--variants`).
    fn lane_table(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.secs();
        writeln!(
            f,
            "variant  games   moves/s   p50 ms   p99 ms  bytes/msg  finished  errors | alone: moves/s   p99 ms  cpu µs/move"
        )?;
        let dash = |x: Option<String>| x.unwrap_or_else(|| "-".to_owned());
        for l in &self.lanes {
            writeln!(
                f,
                "{:<7} {:>6} {:>9.0} {:>8.2} {:>8.2} {:>10} {:>9} {:>7} | {:>14} {:>8} {:>12}",
                l.variant.map_or("?", Variant::key),
                l.games,
                l.moves as f64 / secs,
                l.latency_us[0] as f64 / 1000.0,
                l.latency_us[2] as f64 / 1000.0,
                dash(l.moved_bytes.map(|b| b.to_string())),
                l.games_finished,
                l.errors,
                dash(l.alone_moves_per_s.map(|m| format!("{m:.0}"))),
                dash(l.alone_p99_us.map(|us| format!("{:.2}", us as f64 / 1000.0))),
                dash(l.alone_cpu_us_per_move.map(|c| format!("{c:.0}"))),
            )?;
        }
        writeln!(
            f,
            "{:<7} {:>6} {:>9.0} {:>8.2} {:>8.2} {:>10} {:>9} {:>7} | server cpu µs/move (mixed) {}",
            "all",
            self.size,
            self.moves as f64 / secs,
            self.latency_us[0] as f64 / 1000.0,
            self.latency_us[2] as f64 / 1000.0,
            dash(self.moved_bytes.map(|b| b.to_string())),
            self.games_finished,
            self.errors,
            dash(self.cpu_us_per_move().map(|c| format!("{c:.0}"))),
        )
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.secs();
        writeln!(f, "mode             {} ({})", self.mode, self.size)?;
        if matches!(self.mode, "games" | "relay") {
            writeln!(f, "moves            {}", self.moves)?;
            writeln!(f, "elapsed_s        {secs:.1}")?;
            writeln!(f, "moves_per_s      {:.0}", self.moves as f64 / secs)?;
            let [p50, p90, p99, p999, max] = self.latency_us.map(|us| us as f64 / 1000.0);
            writeln!(
                f,
                "latency_ms       p50 {p50:.2}  p90 {p90:.2}  p99 {p99:.2}  p999 {p999:.2}  max {max:.2}"
            )?;
            writeln!(f, "games_finished   {}", self.games_finished)?;
        }
        writeln!(f, "errors           {}", self.errors)?;
        writeln!(f, "connections      {}", self.connections)?;
        if let Some(b) = self.moved_bytes {
            writeln!(f, "moved_bytes      {b}")?;
        }
        let mib = |k: Option<u64>| k.map_or("-".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0));
        if self.rss_before_kib.is_some() {
            writeln!(
                f,
                "server_rss_mib   before {}  loaded {}  end {}",
                mib(self.rss_before_kib),
                mib(self.rss_loaded_kib),
                mib(self.rss_end_kib)
            )?;
        }
        if let Some(k) = self.kib_per_unit() {
            let unit = if self.mode == "idle" { "connection" } else { "game" };
            writeln!(f, "kib_per_{unit:<10} {k:.1}")?;
        }
        if let Some(cpu) = self.server_cpu_s {
            writeln!(f, "server_cpu_pct   {:.0}", 100.0 * cpu / secs)?;
        }
        if let Some(cpu) = self.loadgen_cpu_s {
            writeln!(f, "loadgen_cpu_pct  {:.0}", 100.0 * cpu / secs)?;
        }
        if let Some(cpu) = self.postgres_cpu_s {
            writeln!(f, "postgres_cpu_pct {:.0}", 100.0 * cpu / secs)?;
            if self.moves > 0 {
                writeln!(f, "postgres_cpu_us_per_move {:.1}", cpu * 1e6 / self.moves as f64)?;
            }
        }
        if let Some((sent, cut, reasons)) = &self.flood {
            writeln!(f, "flood_sent       {sent}")?;
            writeln!(f, "flood_cutoffs    {cut} ({})", reasons.join("; "))?;
        }
        if self.lanes.len() > 1 || self.lanes.iter().any(|l| l.alone_cpu_us_per_move.is_some()) {
            self.lane_table(f)?;
        }
        Ok(())
    }
}

/// Reads the server's numbers around the measured window.
#[derive(Debug)]
struct Probe {
    pid: Option<u32>,
    cpu: Option<f64>,
    own_cpu: Option<f64>,
    postgres: Option<u32>,
    postgres_cpu: Option<f64>,
}

impl Probe {
    fn start(opts: &Options) -> Probe {
        let pid = opts.server_pid;
        Probe {
            pid,
            cpu: pid.and_then(cpu_seconds),
            own_cpu: cpu_seconds(std::process::id()),
            postgres: opts.postgres_pid,
            postgres_cpu: opts.postgres_pid.and_then(postgres_cpu_seconds),
        }
    }

    fn rss(&self) -> Option<u64> {
        self.pid.and_then(rss_kib)
    }

    fn finish(&self, r: &mut Report) {
        r.rss_end_kib = self.rss();
        r.server_cpu_s = match (self.cpu, self.pid.and_then(cpu_seconds)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        r.loadgen_cpu_s = match (self.own_cpu, cpu_seconds(std::process::id())) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        r.postgres_cpu_s = match (self.postgres_cpu, self.postgres.and_then(postgres_cpu_seconds)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
    }
}

/// Runs the load and returns the report.
pub async fn run(opts: Options) -> Result<Report> {
    match opts.mode {
        Mode::Games if opts.each_alone => {
            // Each variant alone first: the server's CPU per move is only
            // separable when one variant plays.
            let mut alone = Vec::new();
            for &v in &opts.variants {
                let r = run_games(Options {
                    variants: vec![v],
                    ..opts.clone()
                })
                .await?;
                alone.push((r.cpu_us_per_move(), r.moves as f64 / r.secs(), r.latency_us[2]));
            }
            let mut report = run_games(opts).await?;
            for (lane, (cpu, mps, p99)) in report.lanes.iter_mut().zip(alone) {
                lane.alone_cpu_us_per_move = cpu;
                lane.alone_moves_per_s = Some(mps);
                lane.alone_p99_us = Some(p99);
            }
            Ok(report)
        }
        Mode::Games | Mode::Relay => run_games(opts).await,
        Mode::Idle => run_idle(opts).await,
        Mode::Rooms => run_rooms(opts).await,
    }
}

fn http_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .context("http client")
}

async fn run_games(opts: Options) -> Result<Report> {
    let http = http_client()?;
    // One lane per variant (the relay has one); its games are g % lanes.
    let variants = match opts.mode {
        Mode::Relay => vec![Variant::Sanguo],
        _ if opts.variants.is_empty() => vec![Variant::Sanguo],
        _ => opts.variants.clone(),
    };
    let lanes: Vec<Arc<Totals>> = variants.iter().map(|_| Arc::new(Totals::default())).collect();
    let n_games = opts.games * variants.len();
    let (lat_tx, mut lat_rx) = mpsc::unbounded_channel::<(usize, u64)>();
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = CancellationToken::new();
    let rss_before = opts.server_pid.and_then(rss_kib);
    let sum = |f: fn(&Totals) -> &AtomicU64| lanes.iter().map(|t| f(t).load(Ordering::Relaxed)).sum::<u64>();

    let mut tasks = Vec::new();
    for g in 0..n_games {
        let lane = g % variants.len();
        let variant = variants[lane];
        let local = opts.spread_addresses.then(|| game_address(g));
        let http = match local {
            Some(ip) => reqwest::Client::builder()
                .local_address(ip)
                .build()
                .context("http client")?,
            None => http.clone(),
        };
        let (http, opts2, totals, lat_tx, measuring, stop) = (
            http,
            opts.clone(),
            lanes[lane].clone(),
            lat_tx.clone(),
            measuring.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = opts2.seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut first = true;
            while !stop.is_cancelled() {
                let game = Game {
                    local,
                    variant,
                    lane,
                    opts: &opts2,
                    totals: &totals,
                    lat_tx: &lat_tx,
                    measuring: &measuring,
                    stop: &stop,
                };
                let r = match opts2.mode {
                    Mode::Relay => game.play_relay(g, &mut rng, &mut first).await,
                    _ => game.play(&http, &mut rng, &mut first).await,
                };
                if let Err(e) = r
                    && !stop.is_cancelled()
                {
                    eprintln!("loadgen: game {g}: {e:#}");
                    totals.errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }));
        // Ramp up gently: thousands of simultaneous requests would measure the accept queue.
        if g % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    drop(lat_tx);
    let reasons = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    for _ in 0..opts.flooders {
        let (http, url, totals, stop, reasons, rate) = (
            http.clone(),
            opts.url.clone(),
            lanes[0].clone(),
            stop.clone(),
            reasons.clone(),
            opts.flood_rate,
        );
        tasks.push(tokio::spawn(async move {
            while !stop.is_cancelled() {
                if let Err(e) = flood(&http, &url, &totals, &stop, &reasons, rate).await
                    && !stop.is_cancelled()
                {
                    eprintln!("loadgen: flooder: {e:#}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }));
    }
    // Measure once every game has started (or after a minute, whatever started).
    let ramp = Instant::now();
    while (sum(|t| &t.games_started) as usize) < n_games && ramp.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_loaded = opts.server_pid.and_then(rss_kib);
    let probe = Probe::start(&opts);
    for t in &lanes {
        t.moves.store(0, Ordering::Relaxed);
    }
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let mut latencies: Vec<u64> = Vec::new();
    let mut lane_latencies: Vec<Vec<u64>> = vec![Vec::new(); variants.len()];
    let deadline = tokio::time::sleep(opts.duration);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => break,
            l = lat_rx.recv() => match l {
                Some((lane, us)) => {
                    latencies.push(us);
                    lane_latencies[lane].push(us);
                }
                None => break,
            },
        }
    }
    measuring.store(false, Ordering::Relaxed);
    let mut report = Report {
        mode: opts.mode.name(),
        size: n_games,
        elapsed: start.elapsed(),
        moves: sum(|t| &t.moves),
        connections: sum(|t| &t.connections),
        rss_before_kib: rss_before,
        rss_loaded_kib: rss_loaded,
        ..Report::default()
    };
    probe.finish(&mut report);
    stop.cancel();
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    latencies.sort_unstable();
    report.latency_us = [0.50, 0.90, 0.99, 0.999, 1.0].map(|p| percentile(&latencies, p));
    report.games_finished = sum(|t| &t.games_finished);
    report.errors = sum(|t| &t.errors);
    report.flood = (opts.flooders > 0).then(|| {
        (
            sum(|t| &t.flood_sent),
            sum(|t| &t.flood_cutoffs),
            reasons.lock().unwrap().iter().cloned().collect(),
        )
    });
    let n = sum(|t| &t.moved_msgs);
    report.moved_bytes = (n > 0).then(|| sum(|t| &t.moved_bytes) / n);
    if opts.mode == Mode::Games {
        report.lanes = variants
            .iter()
            .zip(&lanes)
            .zip(&mut lane_latencies)
            .map(|((&v, t), lat)| {
                lat.sort_unstable();
                let n = t.moved_msgs.load(Ordering::Relaxed);
                Lane {
                    variant: Some(v),
                    games: opts.games,
                    moves: t.moves.load(Ordering::Relaxed),
                    latency_us: [0.50, 0.90, 0.99, 0.999, 1.0].map(|p| percentile(lat, p)),
                    moved_bytes: (n > 0).then(|| t.moved_bytes.load(Ordering::Relaxed) / n),
                    games_finished: t.games_finished.load(Ordering::Relaxed),
                    errors: t.errors.load(Ordering::Relaxed),
                    ..Lane::default()
                }
            })
            .collect();
    }
    Ok(report)
}

/// One flooding client: a guest opens a game of its own, watches it and
/// sends pings as fast as the socket takes them, reading nothing but the
/// close; cut off, it starts over.
async fn flood(
    http: &reqwest::Client,
    url: &str,
    totals: &Totals,
    stop: &tokio_util::sync::CancellationToken,
    reasons: &std::sync::Mutex<std::collections::BTreeSet<String>>,
    rate: u32,
) -> Result<()> {
    let base = url.trim_end_matches('/');
    let s = sanguo_tests::guest(http, base, POST_TIMEOUT).await?;
    let snap: Snapshot = sanguo_tests::post(
        http,
        &format!("{base}/api/games"),
        Some(&s.token),
        &serde_json::json!({}),
        POST_TIMEOUT,
    )
    .await?;
    let ws_url = format!("{}/api/games/{}/ws", base.replacen("http", "ws", 1), snap.id);
    while !stop.is_cancelled() {
        let (mut w, mut r) = connect(&ws_url).await?.split();
        let hello = ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: None,
            v: None,
            legal_moves: Default::default(),
        };
        w.send(Message::text(serde_json::to_string(&hello)?)).await?;
        let closed = tokio::spawn(async move {
            while let Some(Ok(m)) = r.next().await {
                if let Message::Close(c) = m {
                    return c.map(|c| format!("{} {}", u16::from(c.code), c.reason));
                }
            }
            None
        });
        let mut n = 0u64;
        loop {
            if closed.is_finished() || stop.is_cancelled() {
                break;
            }
            n += 1;
            let ping = Message::text(serde_json::to_string(&ClientMsg::Ping { n })?);
            if w.send(ping).await.is_err() {
                break;
            }
            totals.flood_sent.fetch_add(1, Ordering::Relaxed);
            if rate > 0 {
                // Paced: bursts of 10 messages, 10/rate seconds apart.
                if n % 10 == 0 {
                    tokio::time::sleep(Duration::from_secs_f64(10.0 / f64::from(rate))).await;
                }
            } else if n % 64 == 0 {
                tokio::task::yield_now().await;
            }
        }
        if stop.is_cancelled() {
            closed.abort();
            return Ok(());
        }
        if let Ok(Some(reason)) = closed.await {
            totals.flood_cutoffs.fetch_add(1, Ordering::Relaxed);
            reasons.lock().unwrap().insert(reason);
        }
    }
    Ok(())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// How long one API call of the load generator may take.
const POST_TIMEOUT: Duration = Duration::from_secs(30);

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

type Writer = futures_util::stream::SplitSink<Ws, Message>;

/// The load generator's sockets, set up as a browser's and the server's
/// are: Nagle off, and a read buffer of a few KiB. tungstenite zeroes its
/// whole read buffer before every read (128 KiB by default), which took
/// over a quarter of the load generator's CPU and so of the core it shares
/// with Postgres (docs/CAPACITY.md, issue 15's sixth pass); a longer frame
/// still grows the buffer.
fn ws_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(4 * 1024)
}

/// A WebSocket to `url` from the system's choice of local address.
async fn connect(url: &str) -> Result<Ws> {
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(ws_config()), true)
        .await
        .context("connect")?;
    Ok(ws)
}

const SIDES: [Side; 3] = [Side::W, Side::B, Side::Y];

/// A guest session, a game it created, and (with `seat`) all three seats taken.
async fn new_game(
    http: &reqwest::Client,
    base: &str,
    seat: bool,
    grace_ms: Option<u64>,
    variant: Variant,
) -> Result<(String, Vec<Session>)> {
    let mut sessions = Vec::new();
    for _ in 0..if seat { 3 } else { 1 } {
        let s = sanguo_tests::guest(http, base, POST_TIMEOUT).await?;
        sessions.push(s);
    }
    let create = CreateGame {
        // 三国象棋 as before (no key sent), the others by their key.
        variant: (variant != Variant::Sanguo).then_some(variant),
        // Long enough that nobody flags during a run.
        time_control: Some(TimeControl {
            base_ms: 3_600_000,
            increment_ms: 0,
            per_move_ms: None,
            byoyomi: None,
        }),
        direction: None,
        public: Some(false),
        players_chat: None,
        grace_ms,
        bots: None,
        rated: None,
        anqi: None,
    };
    let snap: Snapshot = sanguo_tests::post(
        http,
        &format!("{base}/api/games"),
        Some(&sessions[0].token),
        &create,
        POST_TIMEOUT,
    )
    .await?;
    if seat {
        // The seat each session got: a variant may draw the seats whatever
        // was asked (三国暗棋), so the sessions come back in seat order.
        let mut seated: Vec<(Side, Session)> = Vec::new();
        for (s, side) in sessions.into_iter().zip(SIDES) {
            let joined: protocol::Joined = sanguo_tests::post(
                http,
                &format!("{base}/api/games/{}/join", snap.id),
                Some(&s.token),
                &JoinGame {
                    side: Some(side),
                    // 三国暗棋 deals once every seat sent its seed (docs/ANQI-DEAL.md):
                    // each player sends one with its join, as the web client does.
                    seed: (variant == Variant::Anqi).then(seat_seed),
                },
                POST_TIMEOUT,
            )
            .await?;
            seated.push((joined.side, s));
        }
        seated.sort_by_key(|(side, _)| side.index());
        sessions = seated.into_iter().map(|(_, s)| s).collect();
    }
    Ok((snap.id, sessions))
}

/// A seat's seed for 三国暗棋's deal: 32 bytes as 64 hex digits, varied by
/// the clock and a counter (a load test needs no secrecy, only distinct seeds).
fn seat_seed() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ N.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..4).map(|_| format!("{:016x}", next(&mut x))).collect()
}

/// A WebSocket to `url` (`ws://HOST:PORT/…`) from the local address `ip`.
async fn connect_from(ip: std::net::IpAddr, url: &str) -> Result<Ws> {
    let hostport = url
        .strip_prefix("ws://")
        .and_then(|r| r.split('/').next())
        .ok_or_else(|| anyhow!("not a ws:// URL: {url}"))?;
    let server: std::net::SocketAddr = tokio::net::lookup_host(hostport)
        .await?
        .next()
        .ok_or_else(|| anyhow!("no address for {hostport}"))?;
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(std::net::SocketAddr::new(ip, 0))?;
    let tcp = socket.connect(server).await.context("connect")?;
    tcp.set_nodelay(true)?;
    let (ws, _) = tokio_tungstenite::client_async_with_config(
        url,
        tokio_tungstenite::MaybeTlsStream::Plain(tcp),
        Some(ws_config()),
    )
    .await
    .context("websocket handshake")?;
    Ok(ws)
}

fn ws_base(url: &str) -> String {
    url.trim_end_matches('/').replacen("http", "ws", 1)
}

/// A `moved` event, read for what the load generator needs of it (serde
/// skips the rest without building it).
#[derive(serde::Deserialize)]
struct MovedOnly {
    event: MovedEventOnly,
}

#[derive(serde::Deserialize)]
struct MovedEventOnly {
    ply: u32,
    status: StatusOnly,
}

/// What a seat needs of a status to move.
#[derive(serde::Deserialize)]
struct StatusOnly {
    turn: Side,
    ply: u32,
    legal_moves: protocol::MoveTexts,
}

/// The moves a game has sent and not yet seen arrive at all three seats, by
/// ply.
#[derive(Debug, Default)]
struct Pending(HashMap<u32, Sent>);

/// A move sent and not yet seen by all three seats.
#[derive(Debug)]
struct Sent {
    at: Instant,
    /// The seats that have it.
    seats: u8,
    /// Whether the measured window was open when it was sent: only those
    /// count (one sent during the ramp, while the server still creates
    /// games, would bring the ramp's wait into the window's latencies).
    in_window: bool,
}

impl Pending {
    /// The move of `ply` is sent now.
    fn sent(&mut self, ply: u32, in_window: bool) {
        self.0.insert(
            ply,
            Sent {
                at: Instant::now(),
                seats: 0,
                in_window,
            },
        );
    }

    /// A seat received the move of `ply` at `at`. Once the third has it, the
    /// move is done: its latency is returned if it was sent inside the
    /// window.
    fn arrived(&mut self, ply: u32, at: Instant) -> Option<Duration> {
        let sent = self.0.get_mut(&ply)?;
        sent.seats += 1;
        if sent.seats < 3 {
            return None;
        }
        let sent = self.0.remove(&ply)?;
        sent.in_window.then(|| at.duration_since(sent.at))
    }

    /// Whether the move of `ply` is still on its way to a seat.
    fn waiting(&self, ply: u32) -> bool {
        self.0.contains_key(&ply)
    }
}

impl StatusOnly {
    fn of(s: protocol::Status) -> StatusOnly {
        StatusOnly {
            turn: s.turn,
            ply: s.ply,
            legal_moves: s.legal_moves,
        }
    }
}

/// One game's view of the shared run state.
struct Game<'a> {
    /// The local address its sockets connect from (`None`: the system's choice).
    local: Option<std::net::IpAddr>,
    /// The variant it plays.
    variant: Variant,
    /// Its variant's lane in the report.
    lane: usize,
    opts: &'a Options,
    totals: &'a Totals,
    lat_tx: &'a mpsc::UnboundedSender<(usize, u64)>,
    measuring: &'a AtomicBool,
    stop: &'a CancellationToken,
}

impl Game<'_> {
    /// Opens three sockets to `url`, sends each its first message, and
    /// spawns readers feeding one channel.
    async fn open(
        &self,
        urls: [String; 3],
        hellos: [Option<String>; 3],
    ) -> Result<(
        Vec<Writer>,
        mpsc::UnboundedReceiver<(usize, Message, Instant)>,
        Guard<'_>,
    )> {
        let (tx, rx) = mpsc::unbounded_channel::<(usize, Message, Instant)>();
        let mut writers = Vec::new();
        let mut readers = Vec::new();
        for (i, (hello, url)) in hellos.into_iter().zip(urls).enumerate() {
            let url = url.as_str();
            let ws = match self.local {
                None => connect(url).await?,
                Some(ip) => connect_from(ip, url).await?,
            };
            let (mut w, mut r): (Writer, _) = ws.split();
            if let Some(h) = hello {
                w.send(Message::text(h)).await?;
            }
            writers.push(w);
            let tx = tx.clone();
            readers.push(tokio::spawn(async move {
                while let Some(Ok(msg)) = r.next().await {
                    if tx.send((i, msg, Instant::now())).is_err() {
                        break;
                    }
                }
            }));
        }
        self.totals.connections.fetch_add(3, Ordering::Relaxed);
        Ok((writers, rx, Guard(self.totals, readers)))
    }

    fn sent(&self, pending: &mut Pending, ply: u32) {
        pending.sent(ply, self.measuring.load(Ordering::Relaxed));
    }

    fn arrived(&self, pending: &mut Pending, ply: u32, at: Instant) {
        if let Some(latency) = pending.arrived(ply, at) {
            if self.measuring.load(Ordering::Relaxed) {
                self.totals.moves.fetch_add(1, Ordering::Relaxed);
                let _ = self.lat_tx.send((self.lane, latency.as_micros() as u64));
            }
        }
    }

    async fn think(&self, rng: &mut u64) {
        if self.opts.think_ms > 0 {
            tokio::time::sleep(Duration::from_millis(next(rng) % (self.opts.think_ms + 1))).await;
        }
    }

    /// Plays one game to its end (or until the run stops).
    async fn play(&self, http: &reqwest::Client, rng: &mut u64, first: &mut bool) -> Result<()> {
        // A cluster's nodes (`--url A,B,C`): the game is made on a random one,
        // each seat's socket opened on a random one.
        let nodes: Vec<&str> = self
            .opts
            .url
            .split(',')
            .map(|u| u.trim().trim_end_matches('/'))
            .collect();
        let mut pick = || nodes[(next(rng) % nodes.len() as u64) as usize];
        let base = pick();
        let (id, sessions) = new_game(http, base, true, None, self.variant).await?;
        let urls = [pick(), pick(), pick()].map(|b| format!("{}/api/games/{id}/ws", ws_base(b)));
        let hellos = [0, 1, 2].map(|i| {
            serde_json::to_string(&ClientMsg::Hello {
                protocol: PROTOCOL_VERSION,
                token: Some(sessions[i].token.clone()),
                v: None,
                legal_moves: if self.opts.own_moves {
                    LegalMovesFor::Own
                } else {
                    LegalMovesFor::All
                },
            })
            .ok()
        });
        let (mut writers, mut rx, _guard) = self.open(urls, hellos).await?;
        if std::mem::take(first) {
            self.totals.games_started.fetch_add(1, Ordering::Relaxed);
        }

        let mut pending = Pending::default();
        let mut last_ply_sent: Option<u32> = None;
        let mut status = None;
        loop {
            // Move if it is our turn and we have not sent for this ply.
            if let Some(st) = status.take() {
                let StatusOnly { turn, ply, legal_moves } = st;
                if !legal_moves.is_empty() && last_ply_sent != Some(ply) {
                    self.think(rng).await;
                    let mv = legal_moves[(next(rng) % legal_moves.len() as u64) as usize].to_owned();
                    let seat = SIDES
                        .iter()
                        .position(|s| *s == turn)
                        .ok_or_else(|| anyhow!("status names no seat to move"))?;
                    let msg = ClientMsg::Move { ply, mv };
                    self.sent(&mut pending, ply);
                    last_ply_sent = Some(ply);
                    writers[seat].send(Message::text(serde_json::to_string(&msg)?)).await?;
                }
            }
            let (seat, msg, at) = tokio::select! {
                _ = self.stop.cancelled() => return Ok(()),
                m = rx.recv() => m.ok_or_else(|| anyhow!("all connections closed"))?,
            };
            let Message::Text(text) = msg else { continue };
            // Most messages are moves: read only what the game needs of them
            // (the load generator shares the machine with the server).
            if text.contains(r#""kind":"moved""#)
                && let Ok(m) = serde_json::from_str::<MovedOnly>(&text)
            {
                let (ply, st) = (m.event.ply, m.event.status);
                self.totals.moved_msgs.fetch_add(1, Ordering::Relaxed);
                self.totals.moved_bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
                self.arrived(&mut pending, ply, at);
                if st.turn == SIDES[seat] {
                    status = Some(st);
                }
                continue;
            }
            let Ok(msg) = serde_json::from_str::<ServerMsg>(&text) else {
                continue;
            };
            match msg {
                ServerMsg::Snapshot { game } if seat == 0 && game.result.is_some() => {
                    self.totals.games_finished.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                // The move is chosen from the status the seat to move
                // received (its own view: the legal list a variant may show
                // that seat only), whoever the status names — 被将先走 gives
                // the move out of the cycle.
                ServerMsg::Snapshot { game } if game.status.turn == SIDES[seat] => {
                    status = Some(StatusOnly::of(game.status));
                }
                ServerMsg::Event { event: Some(e), .. } => match *e {
                    GameEvent::Moved { ply, status: st, .. } => {
                        self.totals.moved_msgs.fetch_add(1, Ordering::Relaxed);
                        self.totals.moved_bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
                        self.arrived(&mut pending, ply, at);
                        if st.turn == SIDES[seat] {
                            status = Some(StatusOnly::of(st));
                        }
                    }
                    GameEvent::Started { status: st } | GameEvent::State { status: st } if st.turn == SIDES[seat] => {
                        status = Some(StatusOnly::of(st));
                    }
                    GameEvent::Finished { .. } if seat == 0 => {
                        self.totals.games_finished.fetch_add(1, Ordering::Relaxed);
                        return Ok(());
                    }
                    _ => {}
                },
                ServerMsg::Error { code, message } => {
                    self.totals.errors.fetch_add(1, Ordering::Relaxed);
                    eprintln!("loadgen: server error {code:?}: {message}");
                }
                ServerMsg::Ping { n } => {
                    let pong = ClientMsg::Pong { n };
                    writers[seat].send(Message::text(serde_json::to_string(&pong)?)).await?;
                }
                _ => {}
            }
        }
    }

    /// The same shape against the relay: seat `ply % 3` sends, all three
    /// receive; runs until the run stops.
    async fn play_relay(&self, g: usize, rng: &mut u64, first: &mut bool) -> Result<()> {
        let url = format!("{}/relay/{g}", ws_base(&self.opts.url));
        let (mut writers, mut rx, _guard) = self.open([url.clone(), url.clone(), url], [None, None, None]).await?;
        if std::mem::take(first) {
            self.totals.games_started.fetch_add(1, Ordering::Relaxed);
        }
        let mut pending = Pending::default();
        let mut ply = 0u32;
        loop {
            self.think(rng).await;
            let head = format!("{{\"ply\":{ply},\"pad\":\"");
            let pad = self.opts.relay_bytes.saturating_sub(head.len() + 2);
            let msg = format!("{head}{}\"}}", "x".repeat(pad));
            self.sent(&mut pending, ply);
            writers[(ply % 3) as usize].send(Message::text(msg)).await?;
            // Wait until all three have it.
            while pending.waiting(ply) {
                let (_, msg, at) = tokio::select! {
                    _ = self.stop.cancelled() => return Ok(()),
                    m = rx.recv() => m.ok_or_else(|| anyhow!("all connections closed"))?,
                };
                let Message::Text(text) = msg else { continue };
                let v: serde_json::Value = serde_json::from_str(&text)?;
                let got = v["ply"].as_u64().ok_or_else(|| anyhow!("relay sent {text}"))? as u32;
                self.arrived(&mut pending, got, at);
            }
            ply += 1;
        }
    }
}

/// Closes a game's readers and counts its connections off.
struct Guard<'a>(&'a Totals, Vec<tokio::task::JoinHandle<()>>);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(3, Ordering::Relaxed);
        for r in &self.1 {
            r.abort();
        }
    }
}

impl std::fmt::Debug for Guard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Guard")
    }
}

/// Creates `n` games (seated or open), `parallel` at a time.
async fn create_games(opts: &Options, n: usize, seat: bool, totals: &Totals) -> Result<Vec<String>> {
    let http = http_client()?;
    let gate = Arc::new(Semaphore::new(64));
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (http, base, gate) = (http.clone(), opts.url.trim_end_matches('/').to_owned(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await;
            // A day of grace: nobody abandons while the run measures.
            new_game(&http, &base, seat, Some(86_400_000), Variant::Sanguo)
                .await
                .map(|(id, _)| id)
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        match t.await? {
            Ok(id) => ids.push(id),
            Err(e) => {
                totals.errors.fetch_add(1, Ordering::Relaxed);
                eprintln!("loadgen: creating a game: {e:#}");
            }
        }
    }
    Ok(ids)
}

/// Live games without connections: memory per room.
async fn run_rooms(opts: Options) -> Result<Report> {
    let totals = Totals::default();
    // Warm up the server's allocator and pools with a few games first.
    create_games(&opts, 16, true, &totals).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = opts.server_pid.and_then(rss_kib);
    let ids = create_games(&opts, opts.games, true, &totals).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_loaded = opts.server_pid.and_then(rss_kib);
    let probe = Probe::start(&opts);
    let start = Instant::now();
    tokio::time::sleep(opts.duration).await;
    let mut report = Report {
        mode: opts.mode.name(),
        size: ids.len(),
        elapsed: start.elapsed(),
        errors: totals.errors.load(Ordering::Relaxed),
        rss_before_kib: rss_before,
        rss_loaded_kib: rss_loaded,
        ..Report::default()
    };
    probe.finish(&mut report);
    Ok(report)
}

/// Idle spectator connections: memory per connection, and whether the
/// server holds them all.
async fn run_idle(opts: Options) -> Result<Report> {
    let totals = Arc::new(Totals::default());
    let n_games = opts.connections.div_ceil(opts.per_game.max(1));
    let ids = create_games(&opts, n_games, false, &totals).await?;
    if ids.is_empty() {
        bail!("no game could be created");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = opts.server_pid.and_then(rss_kib);
    let stop = CancellationToken::new();
    let gate = Arc::new(Semaphore::new(256));
    let base = ws_base(&opts.url);
    let hello = serde_json::to_string(&ClientMsg::Hello {
        protocol: PROTOCOL_VERSION,
        token: None,
        v: None,
        legal_moves: Default::default(),
    })?;
    let mut tasks = Vec::new();
    for c in 0..opts.connections {
        let url = format!("{base}/api/games/{}/ws", ids[c % ids.len()]);
        let (gate, totals, stop, hello) = (gate.clone(), totals.clone(), stop.clone(), hello.clone());
        tasks.push(tokio::spawn(async move {
            let mut permit = gate.acquire_owned().await.ok();
            let ws = match connect(&url).await {
                Ok(ws) => ws,
                Err(e) => {
                    totals.errors.fetch_add(1, Ordering::Relaxed);
                    eprintln!("loadgen: connection {c}: {e}");
                    return;
                }
            };
            let (mut w, mut r) = ws.split();
            if w.send(Message::text(hello)).await.is_err() {
                totals.errors.fetch_add(1, Ordering::Relaxed);
                return;
            }
            // Connected once the welcome arrives.
            let mut welcomed = false;
            loop {
                let msg = tokio::select! {
                    _ = stop.cancelled() => break,
                    m = r.next() => m,
                };
                let Some(Ok(Message::Text(t))) = msg else { break };
                match serde_json::from_str::<ServerMsg>(&t) {
                    Ok(ServerMsg::Welcome { .. }) if !welcomed => {
                        welcomed = true;
                        totals.connections.fetch_add(1, Ordering::Relaxed);
                        permit.take();
                    }
                    Ok(ServerMsg::Ping { n }) => {
                        let Ok(pong) = serde_json::to_string(&ClientMsg::Pong { n }) else {
                            break;
                        };
                        if w.send(Message::text(pong)).await.is_err() {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if welcomed {
                totals.connections.fetch_sub(1, Ordering::Relaxed);
                if !stop.is_cancelled() {
                    totals.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    // Wait for every connection to be welcomed (or to fail).
    let ramp = Instant::now();
    loop {
        let done = totals.connections.load(Ordering::Relaxed) + totals.errors.load(Ordering::Relaxed);
        if done as usize >= opts.connections || ramp.elapsed() > Duration::from_secs(120) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let connected = totals.connections.load(Ordering::Relaxed);
    let rss_loaded = opts.server_pid.and_then(rss_kib);
    let probe = Probe::start(&opts);
    let start = Instant::now();
    // Hold them: the server pings every 15 s and drops the silent.
    tokio::time::sleep(opts.duration).await;
    let mut report = Report {
        mode: opts.mode.name(),
        size: opts.connections,
        elapsed: start.elapsed(),
        connections: totals.connections.load(Ordering::Relaxed),
        errors: totals.errors.load(Ordering::Relaxed),
        rss_before_kib: rss_before,
        rss_loaded_kib: rss_loaded,
        ..Report::default()
    };
    probe.finish(&mut report);
    // Per connection: the growth while they connected, over those welcomed then.
    report.connections = report.connections.min(connected);
    stop.cancel();
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    Ok(report)
}

/// The CPU seconds of a Postgres: its postmaster (with the backends that
/// have exited, which it reaped) and its live backends.
fn postgres_cpu_seconds(postmaster: u32) -> Option<f64> {
    let stat = |pid: u32| -> Option<Vec<f64>> {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = s.rsplit_once(") ")?.1;
        rest.split_whitespace()
            .skip(11)
            .take(4)
            .map(|f| f.parse().ok())
            .collect()
    };
    let pm = stat(postmaster)?;
    let mut ticks: f64 = pm.iter().sum();
    let children =
        std::fs::read_to_string(format!("/proc/{postmaster}/task/{postmaster}/children")).unwrap_or_default();
    for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
        if let Some(t) = stat(child) {
            ticks += t[0] + t[1];
        }
    }
    Some(ticks / 100.0)
}

const USAGE: &str = "usage: loadgen --url URL [--mode games|relay|idle|rooms] [--games N] [--connections N]
               [--per-game N] [--seconds S] [--think-ms MS] [--seed N] [--server-pid PID]
               [--relay-bytes N] [--flooders N] [--flood-rate N] [--spread-addresses] [--json]
               [--variants sanguo,anqi,yanyi] [--each-alone] [--own-moves]
               [--postgres-pid PID]

games  (default) N concurrent games (3 WebSocket clients each) of random legal moves:
       moves/s, latency from sending a move to every seat receiving it. --url A,B,C: the
       nodes of a cluster; each game is made on a random node, each socket opened on one
       (p50/p90/p99/p999/max), connections held, the mean `moved` message size.
relay  the same shape against the `relay` baseline (messages of --relay-bytes, default 1500).
idle   --connections N spectator sockets that only answer heartbeats, --per-game (100)
       on each open game: connections held, server memory per connection.
rooms  N live games (seats taken over HTTP) without sockets: server memory per game.

--flooders N (games mode) adds N connections that send messages as fast as they can
(each watching a game of its own), to measure what flooding does to the other games;
it reports how often they were cut off and the close reasons. --flood-rate N paces each
flooder to N messages/s (default 0: unpaced — then the flooders also saturate the load
generator's own core, which shows up in the other games' measured latency).

--spread-addresses (games mode): each game's players connect from a loopback address
of their own (127.1.0.1 and up), so that the server's per-address limits see them as
the separate households they stand for (the `abuse` tool runs loadgen so).

--variants K1,K2,… (games mode, default sanguo): --games N games of EACH variant at once,
side by side in one run; one table with moves/s, p50/p99 latency, mean `moved` bytes,
finished games and errors per variant (the top-level numbers are the totals). Moves come
from the legal list the server sends to the seat its status names as to move (三国暗棋:
flips and moves; 三国演弈棋: 被将先走). --each-alone first runs each variant by itself for
--seconds and adds its moves/s, p99 and server CPU µs per move (needs --server-pid).

--own-moves (games mode): the players say `hello` with `legal_moves: own`, so that a
status lists the legal moves only for the seat to move (the others' copies are smaller,
and the load generator parses less).

--postgres-pid PID: the Postgres postmaster's pid; adds Postgres's CPU during the window
(its processes' user + system time, exited backends included) and per move.

With --server-pid: the server's RSS before, loaded and at the end, and its CPU
during the window (from /proc). --json prints one JSON object.";

fn parse_args() -> Result<Options> {
    let mut opts = Options {
        url: String::new(),
        mode: Mode::Games,
        games: 100,
        connections: 1000,
        per_game: 100,
        duration: Duration::from_secs(20),
        think_ms: 0,
        seed: 1,
        server_pid: None,
        relay_bytes: 1500,
        json: false,
        flooders: 0,
        flood_rate: 0,
        spread_addresses: false,
        variants: vec![Variant::Sanguo],
        each_alone: false,
        own_moves: false,
        postgres_pid: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--url" => opts.url = val()?,
            "--mode" => {
                opts.mode = match val()?.as_str() {
                    "games" => Mode::Games,
                    "relay" => Mode::Relay,
                    "idle" => Mode::Idle,
                    "rooms" => Mode::Rooms,
                    m => bail!("unknown mode {m}\n{USAGE}"),
                }
            }
            "--games" => opts.games = val()?.parse()?,
            "--connections" => opts.connections = val()?.parse()?,
            "--per-game" => opts.per_game = val()?.parse()?,
            "--seconds" => opts.duration = Duration::from_secs_f64(val()?.parse()?),
            "--think-ms" => opts.think_ms = val()?.parse()?,
            "--seed" => opts.seed = val()?.parse()?,
            "--server-pid" => opts.server_pid = Some(val()?.parse()?),
            "--relay-bytes" => opts.relay_bytes = val()?.parse()?,
            "--json" => opts.json = true,
            "--flooders" => opts.flooders = val()?.parse()?,
            "--flood-rate" => opts.flood_rate = val()?.parse()?,
            "--spread-addresses" => opts.spread_addresses = true,
            "--variants" => {
                opts.variants = val()?
                    .split(',')
                    .map(|k| k.trim().parse::<Variant>().map_err(|e| anyhow!("--variants: {e}")))
                    .collect::<Result<_>>()?;
                if opts.variants.is_empty() {
                    bail!("--variants needs at least one key\n{USAGE}");
                }
            }
            "--each-alone" => opts.each_alone = true,
            "--own-moves" => opts.own_moves = true,
            "--postgres-pid" => opts.postgres_pid = Some(val()?.parse()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    if opts.url.is_empty() {
        bail!("--url is required\n{USAGE}");
    }
    Ok(opts)
}

fn main() -> Result<()> {
    let opts = parse_args()?;
    let json = opts.json;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = rt.block_on(run(opts))?;
    if json {
        println!("{}", report.json());
    } else {
        print!("{report}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_counts_once_its_third_seat_has_it_and_only_if_sent_inside_the_window() {
        let mut pending = Pending::default();
        pending.sent(7, true);
        let at = Instant::now() + Duration::from_millis(5);
        assert_eq!(pending.arrived(7, at), None);
        assert_eq!(pending.arrived(7, at), None);
        assert!(pending.waiting(7));
        let latency = pending.arrived(7, at).expect("the third seat has it");
        assert!(latency >= Duration::from_millis(5), "{latency:?}");
        assert!(!pending.waiting(7));
        // Done: a fourth copy (a replay) counts for nothing.
        assert_eq!(pending.arrived(7, at), None);

        // Sent during the ramp: done at its third seat, but not counted.
        pending.sent(8, false);
        for _ in 0..2 {
            assert_eq!(pending.arrived(8, at), None);
        }
        assert_eq!(pending.arrived(8, at), None);
        assert!(!pending.waiting(8));
        // A ply never sent is not waited for.
        assert_eq!(pending.arrived(9, at), None);
    }
}
