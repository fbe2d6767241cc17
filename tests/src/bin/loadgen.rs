//! `loadgen`: plays many concurrent games of random legal moves
//! against a running server over real WebSockets and measures it.
//!
//! Each game has three guest players, each with its own WebSocket. The side
//! to move sends a random legal move (from the server's list) after an
//! optional think time; the latency of a move is the time from sending it to
//! the moment the last of the three seats has received it. A finished game is
//! replaced by a new one until the run's duration is over.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use protocol::{
    ClientMsg, CreateGame, GameEvent, JoinGame, PROTOCOL_VERSION, ServerMsg, Session, Side, Snapshot, TimeControl,
};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// Games played at the same time.
    pub games: usize,
    /// How long to measure (after all games have started).
    pub duration: Duration,
    /// Think time before each move, ms (uniform in `0..=think_ms`).
    pub think_ms: u64,
    /// Seed of the move choices.
    pub seed: u64,
    /// Pid of the server process, to report its memory and CPU.
    pub server_pid: Option<u32>,
    /// Flooding connections: each watches a game of its own and sends
    /// messages as fast as it can, reconnecting whenever it is cut off.
    pub flooders: usize,
}

/// Counters shared by all games.
#[derive(Debug, Default)]
struct Totals {
    moves: AtomicU64,
    games_finished: AtomicU64,
    errors: AtomicU64,
    connections: AtomicU64,
    flood_sent: AtomicU64,
    flood_cutoffs: AtomicU64,
}

/// The measured numbers.
#[derive(Debug)]
pub struct Report {
    /// Moves seen by all three seats during the measured window.
    pub moves: u64,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// Latency percentiles (send → last seat received), microseconds: p50, p99, p999, max.
    pub latency_us: [u64; 4],
    /// Games that ended during the run.
    pub games_finished: u64,
    /// Error messages received from the server (refused moves and the like).
    pub errors: u64,
    /// WebSocket connections open at the end of the window.
    pub connections: u64,
    /// Server resident memory at the end, KiB (with `server_pid`).
    pub server_rss_kib: Option<u64>,
    /// Server CPU seconds used during the window (with `server_pid`).
    pub server_cpu_s: Option<f64>,
    /// Flooders: messages sent and times cut off (with the close reasons seen).
    pub flood: Option<(u64, u64, Vec<String>)>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        writeln!(f, "moves            {}", self.moves)?;
        writeln!(f, "elapsed_s        {secs:.1}")?;
        writeln!(f, "moves_per_s      {:.0}", self.moves as f64 / secs)?;
        let [p50, p99, p999, max] = self.latency_us.map(|us| us as f64 / 1000.0);
        writeln!(
            f,
            "latency_ms       p50 {p50:.2}  p99 {p99:.2}  p999 {p999:.2}  max {max:.2}"
        )?;
        writeln!(f, "games_finished   {}", self.games_finished)?;
        writeln!(f, "errors           {}", self.errors)?;
        writeln!(f, "connections      {}", self.connections)?;
        if let Some(rss) = self.server_rss_kib {
            writeln!(f, "server_rss_mib   {:.1}", rss as f64 / 1024.0)?;
        }
        if let Some(cpu) = self.server_cpu_s {
            writeln!(f, "server_cpu_pct   {:.0}", 100.0 * cpu / secs)?;
        }
        if let Some((sent, cut, reasons)) = &self.flood {
            writeln!(f, "flood_sent       {sent}")?;
            writeln!(f, "flood_cutoffs    {cut} ({})", reasons.join("; "))?;
        }
        Ok(())
    }
}

/// Runs the load and returns the report.
pub async fn run(opts: Options) -> Result<Report> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .context("http client")?;
    let totals = Arc::new(Totals::default());
    let (lat_tx, mut lat_rx) = mpsc::unbounded_channel::<u64>();
    let measuring = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = tokio_util::sync::CancellationToken::new();

    let mut tasks = Vec::new();
    for g in 0..opts.games {
        let (http, opts2, totals, lat_tx, measuring, stop) = (
            http.clone(),
            opts.clone(),
            totals.clone(),
            lat_tx.clone(),
            measuring.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = opts2.seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            while !stop.is_cancelled() {
                if let Err(e) = play_one(&http, &opts2, &totals, &lat_tx, &measuring, &stop, &mut rng).await {
                    if !stop.is_cancelled() {
                        eprintln!("loadgen: game {g}: {e:#}");
                        totals.errors.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        }));
        // Ramp up gently: the server creates sessions with argon2-free tokens, but
        // thousands of simultaneous requests would measure the accept queue.
        if g % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    drop(lat_tx);
    let reasons = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    for _ in 0..opts.flooders {
        let (http, url, totals, stop, reasons) = (
            http.clone(),
            opts.url.clone(),
            totals.clone(),
            stop.clone(),
            reasons.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.is_cancelled() {
                if let Err(e) = flood(&http, &url, &totals, &stop, &reasons).await
                    && !stop.is_cancelled()
                {
                    eprintln!("loadgen: flooder: {e:#}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }));
    }
    // Let every game start before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cpu_before = opts.server_pid.and_then(cpu_seconds);
    totals.moves.store(0, Ordering::Relaxed);
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let mut latencies: Vec<u64> = Vec::new();
    let deadline = tokio::time::sleep(opts.duration);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => break,
            l = lat_rx.recv() => match l {
                Some(us) => latencies.push(us),
                None => break,
            },
        }
    }
    measuring.store(false, Ordering::Relaxed);
    let elapsed = start.elapsed();
    let moves = totals.moves.load(Ordering::Relaxed);
    let connections = totals.connections.load(Ordering::Relaxed);
    let server_rss_kib = opts.server_pid.and_then(rss_kib);
    let server_cpu_s = match (cpu_before, opts.server_pid.and_then(cpu_seconds)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    stop.cancel();
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    latencies.sort_unstable();
    let pct = |p: f64| -> u64 {
        if latencies.is_empty() {
            return 0;
        }
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies[i]
    };
    Ok(Report {
        moves,
        elapsed,
        latency_us: [pct(0.50), pct(0.99), pct(0.999), pct(1.0)],
        games_finished: totals.games_finished.load(Ordering::Relaxed),
        errors: totals.errors.load(Ordering::Relaxed),
        connections,
        server_rss_kib,
        server_cpu_s,
        flood: (opts.flooders > 0).then(|| {
            (
                totals.flood_sent.load(Ordering::Relaxed),
                totals.flood_cutoffs.load(Ordering::Relaxed),
                reasons.lock().unwrap().iter().cloned().collect(),
            )
        }),
    })
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
) -> Result<()> {
    let base = url.trim_end_matches('/');
    let s: Session = post(http, &format!("{base}/api/sessions"), None, &serde_json::json!({})).await?;
    let snap: Snapshot = post(
        http,
        &format!("{base}/api/games"),
        Some(&s.token),
        &serde_json::json!({}),
    )
    .await?;
    let ws_url = format!("{}/api/games/{}/ws", base.replacen("http", "ws", 1), snap.id);
    while !stop.is_cancelled() {
        let (ws, _) = tokio_tungstenite::connect_async(ws_url.as_str())
            .await
            .context("connect")?;
        let (mut w, mut r) = ws.split();
        let hello = ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: None,
            v: None,
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
            if n % 64 == 0 {
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

fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

async fn post<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    body: &impl serde::Serialize,
) -> Result<T> {
    let mut req = http.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.with_context(|| format!("POST {url}"))?;
    let status = resp.status();
    if !status.is_success() {
        bail!("POST {url}: {status}: {}", resp.text().await.unwrap_or_default());
    }
    Ok(resp.json().await?)
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Plays one game to its end (or until the run stops).
async fn play_one(
    http: &reqwest::Client,
    opts: &Options,
    totals: &Totals,
    lat_tx: &mpsc::UnboundedSender<u64>,
    measuring: &std::sync::atomic::AtomicBool,
    stop: &tokio_util::sync::CancellationToken,
    rng: &mut u64,
) -> Result<()> {
    let base = opts.url.trim_end_matches('/');
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let s: Session = post(http, &format!("{base}/api/sessions"), None, &serde_json::json!({})).await?;
        sessions.push(s);
    }
    let create = CreateGame {
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
        grace_ms: None,
        bots: None,
    };
    let snap: Snapshot = post(http, &format!("{base}/api/games"), Some(&sessions[0].token), &create).await?;
    let id = snap.id.clone();
    let sides = [Side::W, Side::B, Side::Y];
    for (s, side) in sessions.iter().zip(sides) {
        let _: serde_json::Value = post(
            http,
            &format!("{base}/api/games/{id}/join"),
            Some(&s.token),
            &JoinGame { side: Some(side) },
        )
        .await?;
    }

    // Three connections: readers feed one channel; the writers stay here.
    let ws_url = format!("{}/api/games/{id}/ws", base.replacen("http", "ws", 1));
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, ServerMsg, Instant)>();
    let mut writers = Vec::new();
    let mut readers = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let (ws, _) = tokio_tungstenite::connect_async(ws_url.as_str())
            .await
            .context("connect")?;
        let (mut w, mut r): (futures_util::stream::SplitSink<Ws, Message>, _) = ws.split();
        let hello = ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: Some(s.token.clone()),
            v: None,
        };
        w.send(Message::text(serde_json::to_string(&hello)?)).await?;
        writers.push(w);
        let tx = tx.clone();
        readers.push(tokio::spawn(async move {
            while let Some(Ok(msg)) = r.next().await {
                if let Message::Text(t) = msg
                    && let Ok(m) = serde_json::from_str::<ServerMsg>(&t)
                {
                    let _ = tx.send((i, m, Instant::now()));
                }
            }
        }));
    }
    drop(tx);
    totals.connections.fetch_add(3, Ordering::Relaxed);
    let _guard = Guard(totals, readers);

    // ply → (sent at, seats that have it)
    let mut pending: HashMap<u32, (Instant, u8)> = HashMap::new();
    let mut last_ply_sent: Option<u32> = None;
    let mut status = None;
    loop {
        // Move if it is our turn and we have not sent for this ply.
        if let Some(st) = status.take() {
            let protocol::Status {
                turn, ply, legal_moves, ..
            } = st;
            if !legal_moves.is_empty() && last_ply_sent != Some(ply) {
                if opts.think_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(next(rng) % (opts.think_ms + 1))).await;
                }
                let mv = legal_moves[(next(rng) % legal_moves.len() as u64) as usize].clone();
                let seat = sides.iter().position(|s| *s == turn).unwrap();
                let msg = ClientMsg::Move { ply, mv };
                pending.insert(ply, (Instant::now(), 0));
                last_ply_sent = Some(ply);
                writers[seat].send(Message::text(serde_json::to_string(&msg)?)).await?;
            }
        }
        let (seat, msg, at) = tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            m = rx.recv() => m.ok_or_else(|| anyhow!("all connections closed"))?,
        };
        match msg {
            ServerMsg::Snapshot { game } if seat == 0 => {
                if game.result.is_some() {
                    totals.games_finished.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                status = Some(game.status);
            }
            ServerMsg::Event { event: Some(e), .. } => match *e {
                GameEvent::Moved { ply, status: st, .. } => {
                    if let Some(p) = pending.get_mut(&ply) {
                        p.1 += 1;
                        if p.1 == 3 {
                            let sent = p.0;
                            pending.remove(&ply);
                            if measuring.load(Ordering::Relaxed) {
                                totals.moves.fetch_add(1, Ordering::Relaxed);
                                let _ = lat_tx.send(at.duration_since(sent).as_micros() as u64);
                            }
                        }
                    }
                    if seat == 0 {
                        status = Some(st);
                    }
                }
                GameEvent::Started { status: st } | GameEvent::State { status: st } if seat == 0 => {
                    status = Some(st);
                }
                GameEvent::Finished { .. } if seat == 0 => {
                    totals.games_finished.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                _ => {}
            },
            ServerMsg::Error { code, message } => {
                totals.errors.fetch_add(1, Ordering::Relaxed);
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

fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn cpu_seconds(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after ") ".
    let rest = s.rsplit_once(") ")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

const USAGE: &str = "usage: loadgen --url URL [--games N] [--seconds S] [--think-ms MS] [--seed N] [--server-pid PID]
               [--flooders N]

Plays N concurrent games (3 WebSocket clients each) of random legal moves
against a running server and prints moves/s, the latency from sending a move
to every seat receiving it (p50/p99/p999/max), connections held, and the
server's memory and CPU when --server-pid is given. --flooders N adds N
connections that send messages as fast as they can (each watching a game of
its own), to measure what flooding does to the other games; it reports how
often they were cut off and the close reasons.";

fn parse_args() -> Result<Options> {
    let mut opts = Options {
        url: String::new(),
        games: 100,
        duration: Duration::from_secs(20),
        think_ms: 0,
        seed: 1,
        server_pid: None,
        flooders: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--url" => opts.url = val()?,
            "--games" => opts.games = val()?.parse()?,
            "--seconds" => opts.duration = Duration::from_secs_f64(val()?.parse()?),
            "--think-ms" => opts.think_ms = val()?.parse()?,
            "--seed" => opts.seed = val()?.parse()?,
            "--server-pid" => opts.server_pid = Some(val()?.parse()?),
            "--flooders" => opts.flooders = val()?.parse()?,
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
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = rt.block_on(run(opts))?;
    print!("{report}");
    Ok(())
}
