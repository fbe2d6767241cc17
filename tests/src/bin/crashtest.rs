//! `crashtest`: crash-safety under load.
//!
//! Runs the server as a child process on a database of its own, plays many
//! concurrent games over WebSockets (three clients per game, random legal
//! moves), SIGKILLs the server at random moments, restarts it, and lets the
//! clients reconnect (with their last version) and play on. Every client
//! records every move it saw acknowledged (a `moved` event: the server sends
//! one only after the move is committed). After a reconnect each mover sends
//! its last move again, at its old ply: the server must answer
//! `duplicate_move` (or apply it, if it never was) — never apply it twice.
//!
//! At the end every game's stored record (`GET /api/games/{id}/record`) is
//! checked against what the clients saw:
//! - every acknowledged move is stored, at its ply, by its side (none lost);
//! - the stored moves replay on the engine and each ply appears once (none
//!   applied twice), event numbers are gap-free;
//! - clients' versions were gap-free and a snapshot never went behind a
//!   version a client held;
//! - clocks follow the downtime policy (protocol/README.md, "After a server
//!   restart"): each move's charge is its Fischer arithmetic, the game time of
//!   every event grew no faster than the wall time the server incarnation that
//!   wrote it had been up (the downtime is never charged), and each charge fits
//!   within the game time since the previous event.
//!
//! Any violation is printed and the exit status is 1.
//!
//! With `--nodes N` (N > 1) the server is a cluster (issue 17, docs/CLUSTER.md):
//! N node processes on the one database and a NATS server (`--nats-url`),
//! every game created on a random node and every (re)connection made to a
//! random node; each kill SIGKILLs one random node, which restarts after the
//! down time while the others take its games over. Besides the checks above
//! (but for the per-incarnation clock check, which assumes one server), it
//! reports each kill's takeover time: from the SIGKILL until no unfinished
//! game is owned by the killed node any more.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use protocol::{
    ClientMsg, CreateGame, ErrorCode, GameEvent, GameRecord, JoinGame, PROTOCOL_VERSION, Phase, ServerMsg, Side,
    TimeControl,
};
use sqlx::{Connection, Executor, PgConnection};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// The time control of every game: long enough that nobody flags, with an
/// increment so the clock arithmetic is visible in the record.
const BASE_MS: u64 = 3_600_000;
const INCREMENT_MS: u64 = 1_000;
/// Slack for the game-time ≤ wall-time check (timer granularity, ms).
const SLACK_MS: i64 = 50;

const USAGE: &str = "usage: crashtest [--kills N] [--games N] [--think-ms MS] [--up-ms MIN,MAX] [--down-ms MAX]
                 [--server PATH|self] [--pg ADMIN_URL] [--settle-ms MS] [--seed N] [--keep-db]
                 [--nodes N [--nats-url URL] [--lease-ms MS] [--signal kill|term]]
       crashtest serve --listen ADDR --database-url URL [--nats-url URL --node-name N --lease-ms MS]
                 (the server in-process; used by --server self and the cluster tests)

Kills the server (SIGKILL) N times while N games are played, restarts it each
time, then checks every stored game against every move a client saw
acknowledged. --server: the server binary (default: `sanguo` next to this
executable, built by `cargo build --release -p server`); `self` runs this
executable's `serve` mode, the same server library. --pg: a Postgres
superuser URL; a fresh database is created there and dropped at the end.";

#[derive(Clone, Debug)]
struct Options {
    kills: u32,
    games: usize,
    think_ms: u64,
    up_ms: (u64, u64),
    down_ms: u64,
    server: String,
    pg: String,
    settle_ms: u64,
    seed: u64,
    keep_db: bool,
    /// Cluster nodes (1: a single server, no NATS).
    nodes: usize,
    nats_url: String,
    lease_ms: u64,
    /// `--nodes`: stop nodes with SIGTERM (a graceful handover) instead of SIGKILL.
    term: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options> {
    let mut o = Options {
        kills: 50,
        games: 20,
        think_ms: 150,
        up_ms: (1_000, 4_000),
        down_ms: 500,
        server: String::new(),
        pg: "postgres://postgres@127.0.0.1:5432/postgres".into(),
        settle_ms: 3_000,
        seed: rand::random(),
        keep_db: false,
        nodes: 1,
        nats_url: "nats://127.0.0.1:4222".into(),
        lease_ms: 1500,
        term: false,
    };
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--kills" => o.kills = val()?.parse()?,
            "--games" => o.games = val()?.parse()?,
            "--think-ms" => o.think_ms = val()?.parse()?,
            "--up-ms" => {
                let v = val()?;
                let (a, b) = v.split_once(',').ok_or_else(|| anyhow!("--up-ms MIN,MAX"))?;
                o.up_ms = (a.parse()?, b.parse()?);
                if o.up_ms.0 > o.up_ms.1 {
                    bail!("--up-ms: MIN above MAX");
                }
            }
            "--down-ms" => o.down_ms = val()?.parse()?,
            "--server" => o.server = val()?,
            "--pg" => o.pg = val()?,
            "--settle-ms" => o.settle_ms = val()?.parse()?,
            "--seed" => o.seed = val()?.parse()?,
            "--keep-db" => o.keep_db = true,
            "--nodes" => o.nodes = val()?.parse::<usize>()?.max(1),
            "--nats-url" => o.nats_url = val()?,
            "--lease-ms" => o.lease_ms = val()?.parse()?,
            "--signal" => {
                o.term = match val()?.as_str() {
                    "kill" => false,
                    "term" => true,
                    other => bail!("--signal kill|term, not {other}"),
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    Ok(o)
}

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A small xorshift generator, one per task (seeded from the run's seed).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 { 0 } else { self.0 % n }
    }
}

/// What the clients of one game saw.
#[derive(Debug, Default)]
struct Seen {
    /// Every acknowledged move (a `moved` event), by ply.
    acked: BTreeMap<u32, (Side, String)>,
    /// Whether a client saw the game finish.
    finished: bool,
}

/// Counters over the run.
#[derive(Debug, Default)]
struct Counts {
    moves_sent: AtomicU64,
    resent: AtomicU64,
    duplicate_answers: AtomicU64,
    stale_answers: AtomicU64,
    other_errors: AtomicU64,
    reconnects: AtomicU64,
    snapshots: AtomicU64,
    restored_events: AtomicU64,
    games_started: AtomicU64,
}

#[derive(Debug, Default)]
struct Shared {
    counts: Counts,
    violations: Mutex<Vec<String>>,
    games: Mutex<Vec<(String, Arc<Mutex<Seen>>)>>,
}

impl Shared {
    fn violation(&self, v: String) {
        eprintln!("crashtest: VIOLATION: {v}");
        self.violations.lock().unwrap().push(v);
    }
}

/// One run of the server process.
#[derive(Debug, Clone, Copy)]
struct Incarnation {
    /// Wall time the process was spawned.
    start_wall: i64,
    /// Wall time it was killed (the last one: when the checks began).
    end_wall: i64,
    /// From spawn to `/healthz` answering 200 (every game restored).
    ready: Duration,
}

struct ServerProc {
    child: Child,
}

fn spawn_server(o: &Options, listen: &str, db_url: &str, log: &std::fs::File, node: usize) -> Result<ServerProc> {
    let bin = if o.server == "self" {
        std::env::current_exe()?
    } else {
        std::path::PathBuf::from(&o.server)
    };
    let mut cmd = Command::new(&bin);
    cmd.args(["serve", "--listen", listen, "--database-url", db_url]);
    if o.nodes > 1 {
        let lease = o.lease_ms.to_string();
        let name = format!("n{node}");
        cmd.args(["--nats-url", &o.nats_url, "--node-name", &name, "--lease-ms", &lease]);
    }
    let child = cmd
        // Nobody abandons while the server is down or clients reconnect.
        .env("SANGUO_GRACE_SECS", "3600")
        // Every client is on 127.0.0.1: the per-address limits are not under test here.
        .env("SANGUO_SESSIONS_PER_MIN", "0")
        .env("SANGUO_GAMES_PER_MIN", "0")
        .env("SANGUO_MAX_SOCKETS_PER_ADDR", "100000")
        .env("SANGUO_MAX_SILENT_SOCKETS_PER_ADDR", "100000")
        .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    Ok(ServerProc { child })
}

async fn wait_healthy(http: &reqwest::Client, base: &str, proc_: &mut ServerProc) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = proc_.child.try_wait()? {
            bail!("the server exited during start: {status}");
        }
        if let Ok(r) = http.get(format!("{base}/healthz")).send().await
            && r.status().is_success()
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server did not become healthy within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Creates a game and seats three guests; returns the id and the tokens.
async fn new_game(http: &reqwest::Client, base: &str) -> Result<(String, [String; 3])> {
    let mut tokens = Vec::new();
    for _ in 0..3 {
        let s = sanguo_tests::guest(http, base, Duration::from_secs(10)).await?;
        tokens.push(s.token);
    }
    let create = CreateGame {
        variant: None,
        time_control: Some(TimeControl {
            base_ms: BASE_MS,
            increment_ms: INCREMENT_MS,
            per_move_ms: None,
            byoyomi: None,
        }),
        public: Some(false),
        grace_ms: Some(3_600_000),
        ..CreateGame::default()
    };
    let snap: protocol::Snapshot = sanguo_tests::post(
        http,
        &format!("{base}/api/games"),
        Some(&tokens[0]),
        &create,
        Duration::from_secs(10),
    )
    .await?;
    for (t, side) in tokens.iter().zip(Side::ALL) {
        let _: serde_json::Value = sanguo_tests::post(
            http,
            &format!("{base}/api/games/{}/join", snap.id),
            Some(t),
            &JoinGame {
                side: Some(side),
                seed: None,
            },
            Duration::from_secs(10),
        )
        .await?;
    }
    let tokens: [String; 3] = tokens.try_into().map_err(|_| anyhow!("three tokens"))?;
    Ok((snap.id, tokens))
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One seat's client: connects, plays its turns, reconnects after every
/// crash with its last version, until the game ends or the run stops.
#[allow(clippy::too_many_arguments)]
async fn seat(
    ws_urls: Vec<String>,
    token: String,
    side: Side,
    seen: Arc<Mutex<Seen>>,
    shared: Arc<Shared>,
    stop: CancellationToken,
    think_ms: u64,
    mut rng: Rng,
) {
    let mut v: Option<u64> = None;
    // This client's own view: ply → move, to check snapshots against.
    let mut mine: BTreeMap<u32, String> = BTreeMap::new();
    let mut last_sent: Option<(u32, String)> = None;
    let mut first = true;
    'connections: while !stop.is_cancelled() {
        if !first {
            shared.counts.reconnects.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50 + rng.below(100))).await;
        }
        first = false;
        // A random node each time (one, for a single server).
        let ws_url = &ws_urls[rng.below(ws_urls.len() as u64) as usize];
        let Ok(Ok((ws, _))) = tokio::time::timeout(
            Duration::from_secs(5),
            tokio_tungstenite::connect_async(ws_url.as_str()),
        )
        .await
        else {
            continue;
        };
        let mut ws: Ws = ws;
        let hello = ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: Some(token.clone()),
            v,
            legal_moves: Default::default(),
        };
        if ws.send(Message::text(json(&hello))).await.is_err() {
            continue;
        }
        // After a reconnect, send the last move again at its old ply: it must
        // be answered as a duplicate (or applied, if it never was), never twice.
        let mut resend = last_sent.clone().filter(|_| v.is_some());
        let mut status: Option<protocol::Status> = None;
        let mut due: Option<(Instant, u32)> = None;
        loop {
            if status.is_some()
                && let Some((ply, mv)) = resend.take()
            {
                shared.counts.resent.fetch_add(1, Ordering::Relaxed);
                if ws
                    .send(Message::text(json(&ClientMsg::Move { ply, mv })))
                    .await
                    .is_err()
                {
                    continue 'connections;
                }
            }
            if let Some(st) = &status
                && st.turn == side
                && !st.legal_moves.is_empty()
                && due.is_none_or(|(_, p)| p != st.ply)
                && last_sent.as_ref().is_none_or(|(p, _)| *p != st.ply)
            {
                due = Some((Instant::now() + Duration::from_millis(rng.below(think_ms + 1)), st.ply));
            }
            let sleep_until = due.map_or_else(|| Instant::now() + Duration::from_secs(3600), |(t, _)| t);
            let frame = tokio::select! {
                _ = stop.cancelled() => {
                    let _ = ws.close(None).await;
                    return;
                }
                _ = tokio::time::sleep_until(sleep_until.into()), if due.is_some() => {
                    let ply = due.take().map_or(u32::MAX, |(_, p)| p);
                    if let Some(st) = status.as_ref().filter(|s| s.ply == ply && s.turn == side) {
                        let mv = st.legal_moves[rng.below(st.legal_moves.len() as u64) as usize].to_owned();
                        last_sent = Some((ply, mv.clone()));
                        shared.counts.moves_sent.fetch_add(1, Ordering::Relaxed);
                        if ws.send(Message::text(json(&ClientMsg::Move { ply, mv }))).await.is_err() {
                            continue 'connections;
                        }
                    }
                    continue;
                }
                f = tokio::time::timeout(Duration::from_secs(20), ws.next()) => f,
            };
            let text = match frame {
                Ok(Some(Ok(Message::Text(t)))) => t,
                Ok(Some(Ok(Message::Close(_)) | Err(_)) | None) | Err(_) => continue 'connections,
                Ok(Some(Ok(_))) => continue,
            };
            let Ok(msg) = serde_json::from_str::<ServerMsg>(&text) else {
                shared.violation(format!("unparseable server message: {text}"));
                continue;
            };
            match msg {
                ServerMsg::Snapshot { game } => {
                    shared.counts.snapshots.fetch_add(1, Ordering::Relaxed);
                    if let Some(held) = v
                        && game.v < held
                    {
                        shared.violation(format!(
                            "game {}: snapshot at v{} after {side} held v{held}",
                            game.id, game.v
                        ));
                    }
                    for (ply, mv) in &mine {
                        match game.moves.get(*ply as usize) {
                            Some(m) if m == mv => {}
                            other => shared.violation(format!(
                                "game {}: {side} saw {mv} at ply {ply}; a snapshot after restart has {other:?}",
                                game.id
                            )),
                        }
                    }
                    for (ply, mv) in game.moves.iter().enumerate() {
                        mine.insert(ply as u32, mv.clone());
                    }
                    v = Some(game.v);
                    if game.phase == Phase::Finished {
                        seen.lock().unwrap().finished = true;
                        let _ = ws.close(None).await;
                        return;
                    }
                    status = Some(game.status);
                }
                ServerMsg::Event { v: ev, event } => {
                    if let Some(held) = v
                        && ev != held + 1
                    {
                        shared.violation(format!("{side}: version {ev} after {held}"));
                    }
                    v = Some(ev);
                    let Some(e) = event else { continue };
                    match *e {
                        GameEvent::Moved {
                            side: mover,
                            mv,
                            ply,
                            status: st,
                            ..
                        } => {
                            if let Some(prev) = mine.insert(ply, mv.clone())
                                && prev != mv
                            {
                                shared.violation(format!("{side}: ply {ply} was {prev}, now {mv}"));
                            }
                            let mut s = seen.lock().unwrap();
                            if let Some((ps, pm)) = s.acked.insert(ply, (mover, mv.clone()))
                                && (ps, &pm) != (mover, &mv)
                            {
                                drop(s);
                                shared.violation(format!("ply {ply} acknowledged as {ps} {pm} and as {mover} {mv}"));
                            }
                            status = Some(st);
                        }
                        GameEvent::Restored { status: st } => {
                            shared.counts.restored_events.fetch_add(1, Ordering::Relaxed);
                            status = Some(st);
                        }
                        GameEvent::Started { status: st } | GameEvent::State { status: st } => status = Some(st),
                        GameEvent::Finished { .. } => {
                            seen.lock().unwrap().finished = true;
                            let _ = ws.close(None).await;
                            return;
                        }
                        _ => {}
                    }
                }
                ServerMsg::Error { code, message } => {
                    // A refused move at the current ply: choose again.
                    if code != ErrorCode::DuplicateMove
                        && let (Some((p, _)), Some(st)) = (&last_sent, &status)
                        && st.ply == *p
                        && st.turn == side
                    {
                        last_sent = None;
                    }
                    let c = match code {
                        ErrorCode::DuplicateMove => &shared.counts.duplicate_answers,
                        ErrorCode::StaleMove => &shared.counts.stale_answers,
                        _ => {
                            eprintln!("crashtest: {side}: {code:?}: {message}");
                            &shared.counts.other_errors
                        }
                    };
                    c.fetch_add(1, Ordering::Relaxed);
                }
                ServerMsg::Ping { n } => {
                    let pong = Message::text(json(&ClientMsg::Pong { n }));
                    if ws.send(pong).await.is_err() {
                        continue 'connections;
                    }
                }
                _ => {}
            }
        }
    }
}

fn json<T: serde::Serialize>(m: &T) -> String {
    serde_json::to_string(m).unwrap_or_default()
}

/// Keeps one game going in a slot: when it ends, a new one starts.
async fn slot(
    http: reqwest::Client,
    bases: Vec<String>,
    o: Options,
    i: usize,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let mut rng = Rng(o.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    while !stop.is_cancelled() {
        let base = &bases[rng.below(bases.len() as u64) as usize];
        let (id, tokens) = match new_game(&http, base).await {
            Ok(g) => g,
            Err(_) => {
                // The server is down (or restarting): try again.
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        shared.counts.games_started.fetch_add(1, Ordering::Relaxed);
        let seen = Arc::new(Mutex::new(Seen::default()));
        shared.games.lock().unwrap().push((id.clone(), seen.clone()));
        let ws_urls: Vec<String> = bases
            .iter()
            .map(|b| format!("{}/api/games/{id}/ws", b.replacen("http", "ws", 1)))
            .collect();
        let mut seats = Vec::new();
        for (t, side) in tokens.into_iter().zip(Side::ALL) {
            seats.push(tokio::spawn(seat(
                ws_urls.clone(),
                t,
                side,
                seen.clone(),
                shared.clone(),
                stop.clone(),
                o.think_ms,
                Rng(rng.below(u64::MAX) | 1),
            )));
        }
        for s in seats {
            let _ = s.await;
        }
    }
}

/// Checks one game's record against what its clients saw; returns the
/// violations and the number of stored moves.
fn check_record(id: &str, rec: &GameRecord, seen: &Seen, lives: &[Incarnation]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    // Acknowledged moves are stored, at their ply, by their side.
    for (ply, (side, mv)) in &seen.acked {
        match rec.moves.get(*ply as usize) {
            Some(m) if m.side == *side && &m.mv == mv => {}
            Some(m) => out.push(format!(
                "game {id}: ply {ply} acknowledged as {side} {mv}, stored as {} {}",
                m.side, m.mv
            )),
            None => out.push(format!("game {id}: acknowledged move {side} {mv} at ply {ply} is lost")),
        }
    }
    // Each ply once, in order; events gap-free; moves in events = moves.
    for (i, m) in rec.moves.iter().enumerate() {
        if m.ply as usize != i {
            out.push(format!("game {id}: record move {i} says ply {}", m.ply));
        }
    }
    for (i, e) in rec.events.iter().enumerate() {
        if e.seq as usize != i {
            out.push(format!("game {id}: event {i} has seq {}", e.seq));
        }
    }
    let move_events: Vec<&protocol::RecordEvent> =
        rec.events.iter().filter(|e| e.action.starts_with("move ")).collect();
    if move_events.len() != rec.moves.len() {
        out.push(format!(
            "game {id}: {} move events but {} moves",
            move_events.len(),
            rec.moves.len()
        ));
    }
    // The moves replay on the engine: a move applied twice would be out of turn or illegal.
    match engine::parse_position(&rec.initial_position) {
        Ok(mut pos) => {
            for m in &rec.moves {
                let side: Side = pos.turn().into();
                if side != m.side {
                    out.push(format!("game {id}: ply {} by {} but {side} was to move", m.ply, m.side));
                    break;
                }
                match engine::parse_move(&m.mv).map_err(|e| e.to_string()).and_then(|mv| {
                    let mut p = pos;
                    p.play(mv).map_err(|e| e.to_string())?;
                    Ok(p)
                }) {
                    Ok(p) => pos = p,
                    Err(e) => {
                        out.push(format!("game {id}: stored ply {} {} does not replay: {e}", m.ply, m.mv));
                        break;
                    }
                }
            }
        }
        Err(e) => out.push(format!("game {id}: initial position: {e}")),
    }
    // Clocks: Fischer arithmetic for the mover, others unchanged.
    let mut clocks = [BASE_MS; 3];
    for m in &rec.moves {
        let s = m.side.index();
        let mut expect = clocks;
        expect[s] = clocks[s].saturating_sub(m.spent_ms) + INCREMENT_MS;
        if m.spent_ms > clocks[s] || m.clocks_ms != expect {
            out.push(format!(
                "game {id}: ply {}: clocks {:?} after {:?} and {} ms spent by {}",
                m.ply, m.clocks_ms, clocks, m.spent_ms, m.side
            ));
        }
        clocks = m.clocks_ms;
    }
    // Game time: never back; each charge within the game time since the
    // previous event; and within each server incarnation game time grew no
    // faster than wall time (the downtime was not charged).
    let mut prev_at = 0u64;
    let mut moves = rec.moves.iter();
    for (i, e) in rec.events.iter().enumerate() {
        if e.at_ms < prev_at {
            out.push(format!("game {id}: event {i} at {} ms after {prev_at} ms", e.at_ms));
        }
        if e.action.starts_with("move ")
            && let Some(m) = moves.next()
            && m.spent_ms > e.at_ms.saturating_sub(prev_at)
        {
            out.push(format!(
                "game {id}: ply {} charged {} ms, but only {} ms of game time passed",
                m.ply,
                m.spent_ms,
                e.at_ms.saturating_sub(prev_at)
            ));
        }
        prev_at = e.at_ms;
        if lives.is_empty() {
            // A cluster: game time is checked per owner by the charges above.
            continue;
        }
        let Some(life) = lives
            .iter()
            .rev()
            .find(|l| l.start_wall <= e.wall_ms && e.wall_ms <= l.end_wall)
        else {
            out.push(format!(
                "game {id}: event {i} written at wall {} ms, when no server ran",
                e.wall_ms
            ));
            continue;
        };
        // Game time when this incarnation started: the last event before it.
        let base = rec.events[..i]
            .iter()
            .rev()
            .find(|p| p.wall_ms < life.start_wall)
            .map_or(0, |p| p.at_ms);
        let game_dt = e.at_ms as i64 - base as i64;
        let wall_dt = e.wall_ms - life.start_wall;
        if game_dt > wall_dt + SLACK_MS {
            out.push(format!(
                "game {id}: event {i}: {game_dt} ms of game time within {wall_dt} ms of this server's life: downtime was charged"
            ));
        }
    }
    (out, rec.moves.len())
}

/// What the records of a run's games held against what their clients saw.
#[derive(Debug, Default)]
struct Checked {
    stored: usize,
    acked: usize,
    finished: usize,
    /// Acknowledged moves missing from their game's record (or stored otherwise).
    lost: usize,
    /// Stored moves at a ply already stored (a move applied twice).
    duplicated: usize,
}

/// Reads every game's record (from the servers in `bases` in turn) and
/// checks it ([`check_record`]; `lives` empty: a cluster, no per-incarnation
/// clock check); violations go to `shared`.
async fn check_games(
    http: &reqwest::Client,
    bases: &[String],
    games: &[(String, Arc<Mutex<Seen>>)],
    lives: &[Incarnation],
    shared: &Shared,
) -> Result<Checked> {
    let mut c = Checked::default();
    for (n, (id, seen)) in games.iter().enumerate() {
        let rec: GameRecord = http
            .get(format!("{}/api/games/{id}/record", bases[n % bases.len()]))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let seen = seen.lock().unwrap();
        c.lost += seen
            .acked
            .iter()
            .filter(|(ply, (side, mv))| {
                rec.moves
                    .get(**ply as usize)
                    .is_none_or(|m| m.side != *side || &m.mv != mv)
            })
            .count();
        c.duplicated += rec
            .moves
            .iter()
            .enumerate()
            .filter(|(i, m)| m.ply as usize != *i)
            .count();
        let (v, n) = check_record(id, &rec, &seen, lives);
        for x in v {
            shared.violation(x);
        }
        c.stored += n;
        c.acked += seen.acked.len();
        c.finished += usize::from(rec.phase == Phase::Finished);
    }
    Ok(c)
}

async fn create_db(admin: &str) -> Result<(String, String)> {
    let name = format!("sanguo_crash_{:08x}", rand::random::<u32>());
    let mut c = PgConnection::connect(admin)
        .await
        .context("connecting to Postgres (--pg)")?;
    c.execute(format!("CREATE DATABASE {name}").as_str()).await?;
    let _ = c.close().await;
    let (prefix, _) = admin
        .rsplit_once('/')
        .ok_or_else(|| anyhow!("--pg URL has no database part"))?;
    Ok((name.clone(), format!("{prefix}/{name}")))
}

async fn drop_db(admin: &str, name: &str) {
    if let Ok(mut c) = PgConnection::connect(admin).await {
        let _ = c
            .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
            .await;
        let _ = c.close().await;
    }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn run(o: Options) -> Result<bool> {
    if o.nodes > 1 {
        return run_cluster(o).await;
    }
    let (db_name, db_url) = create_db(&o.pg).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let listen = format!("127.0.0.1:{port}");
    let base = format!("http://{listen}");
    let log_path = std::env::temp_dir().join(format!("{db_name}.log"));
    let log = std::fs::File::create(&log_path)?;
    println!(
        "crashtest: seed {} database {db_name} server log {}",
        o.seed,
        log_path.display()
    );
    let http = reqwest::Client::builder().pool_max_idle_per_host(8).build()?;
    let mut lives: Vec<Incarnation> = Vec::new();
    let mut rng = Rng(o.seed | 1);

    let start_wall = wall_ms();
    let t0 = Instant::now();
    let mut server = spawn_server(&o, &listen, &db_url, &log, 0)?;
    wait_healthy(&http, &base, &mut server).await?;
    let mut current = Incarnation {
        start_wall,
        end_wall: i64::MAX,
        ready: t0.elapsed(),
    };

    let shared = Arc::new(Shared::default());
    let stop = CancellationToken::new();
    let mut slots = Vec::new();
    for i in 0..o.games {
        slots.push(tokio::spawn(slot(
            http.clone(),
            vec![base.clone()],
            o.clone(),
            i,
            shared.clone(),
            stop.clone(),
        )));
    }

    let outcome: Result<()> = async {
        for k in 1..=o.kills {
            let up = o.up_ms.0 + rng.below(o.up_ms.1 - o.up_ms.0 + 1);
            tokio::time::sleep(Duration::from_millis(up)).await;
            server.child.kill().context("SIGKILL")?;
            server.child.wait()?;
            current.end_wall = wall_ms();
            lives.push(current);
            let down = rng.below(o.down_ms + 1);
            tokio::time::sleep(Duration::from_millis(down)).await;
            let start_wall = wall_ms();
            let t0 = Instant::now();
            server = spawn_server(&o, &listen, &db_url, &log, 0)?;
            wait_healthy(&http, &base, &mut server).await?;
            current = Incarnation {
                start_wall,
                end_wall: i64::MAX,
                ready: t0.elapsed(),
            };
            println!(
                "crashtest: kill {k}/{} after {up} ms up, {down} ms down; ready again in {} ms; acknowledged so far {}",
                o.kills,
                current.ready.as_millis(),
                shared
                    .games
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|(_, s)| s.lock().unwrap().acked.len())
                    .sum::<usize>()
            );
        }
        Ok(())
    }
    .await;

    // Let the clients catch up after the last restart, then stop them.
    tokio::time::sleep(Duration::from_millis(o.settle_ms)).await;
    stop.cancel();
    for s in slots {
        let _ = tokio::time::timeout(Duration::from_secs(10), s).await;
    }
    // The last server keeps running while the records are read (moves the
    // clients sent just before they stopped may still be landing).
    lives.push(current);
    tokio::time::sleep(Duration::from_millis(500)).await;

    let games = shared.games.lock().unwrap().clone();
    let check = match outcome {
        Ok(()) => check_games(&http, std::slice::from_ref(&base), &games, &lives, &shared).await,
        Err(e) => Err(e),
    };
    let _ = server.child.kill();
    let _ = server.child.wait();
    if !o.keep_db {
        drop_db(&o.pg, &db_name).await;
    }
    let Checked {
        stored: stored_total,
        acked: acked_total,
        finished,
        ..
    } = check?;

    let c = &shared.counts;
    let mut ready: Vec<Duration> = lives.iter().map(|l| l.ready).collect();
    ready.sort_unstable();
    let violations = shared.violations.lock().unwrap().len();
    println!("kills                 {}", o.kills);
    println!("games                 {} ({} finished)", games.len(), finished);
    println!("moves_sent            {}", c.moves_sent.load(Ordering::Relaxed));
    println!("moves_acknowledged    {acked_total}");
    println!("moves_stored          {stored_total}");
    println!(
        "resent_after_restart  {} (duplicate_move {}, stale_move {})",
        c.resent.load(Ordering::Relaxed),
        c.duplicate_answers.load(Ordering::Relaxed),
        c.stale_answers.load(Ordering::Relaxed)
    );
    println!("other_errors          {}", c.other_errors.load(Ordering::Relaxed));
    println!("reconnects            {}", c.reconnects.load(Ordering::Relaxed));
    println!("snapshots             {}", c.snapshots.load(Ordering::Relaxed));
    println!("restored_events       {}", c.restored_events.load(Ordering::Relaxed));
    println!(
        "ready_after_start_ms  p50 {}  max {}",
        pct(&ready, 0.5).as_millis(),
        pct(&ready, 1.0).as_millis()
    );
    println!("violations            {violations}");
    Ok(violations == 0)
}

/// `--nodes N`: the same load and checks against a cluster, one random node
/// killed at a time (see the module's doc).
async fn run_cluster(o: Options) -> Result<bool> {
    let (db_name, db_url) = create_db(&o.pg).await?;
    let listens: Vec<String> = (0..o.nodes)
        .map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| format!("127.0.0.1:{}", a.port()))
        })
        .collect::<std::io::Result<_>>()?;
    let bases: Vec<String> = listens.iter().map(|l| format!("http://{l}")).collect();
    let log_path = std::env::temp_dir().join(format!("{db_name}.log"));
    let log = std::fs::File::create(&log_path)?;
    println!(
        "crashtest: seed {} database {db_name} nodes {} lease {} ms log {}",
        o.seed,
        o.nodes,
        o.lease_ms,
        log_path.display()
    );
    let http = reqwest::Client::builder().pool_max_idle_per_host(8).build()?;
    let mut db = PgConnection::connect(&db_url).await?;
    let mut rng = Rng(o.seed | 1);
    let mut servers = Vec::new();
    for (i, l) in listens.iter().enumerate() {
        // One at a time: the first runs the migrations.
        let mut s = spawn_server(&o, l, &db_url, &log, i)?;
        wait_healthy(&http, &bases[i], &mut s).await?;
        servers.push(s);
    }
    let shared = Arc::new(Shared::default());
    let stop = CancellationToken::new();
    let mut slots = Vec::new();
    for i in 0..o.games {
        slots.push(tokio::spawn(slot(
            http.clone(),
            bases.clone(),
            o.clone(),
            i,
            shared.clone(),
            stop.clone(),
        )));
    }
    let mut takeovers: Vec<Duration> = Vec::new();
    let mut ready: Vec<Duration> = Vec::new();
    let outcome: Result<()> = async {
        for k in 1..=o.kills {
            let up = o.up_ms.0 + rng.below(o.up_ms.1 - o.up_ms.0 + 1);
            tokio::time::sleep(Duration::from_millis(up)).await;
            let victim = rng.below(o.nodes as u64) as usize;
            let name = format!("n{victim}-%");
            // The victim's running incarnation (killed ones keep their lapsed rows).
            let node_id: Option<String> =
                sqlx::query_scalar("SELECT id FROM nodes WHERE id LIKE $1 ORDER BY started_ms DESC LIMIT 1")
                    .bind(&name)
                    .fetch_optional(&mut db)
                    .await?;
            let owned_ids: Vec<String> =
                sqlx::query_scalar("SELECT id FROM games WHERE owner_node = $1 AND phase <> 'finished'")
                    .bind(node_id.as_deref().unwrap_or(""))
                    .fetch_all(&mut db)
                    .await?;
            let owned = owned_ids.len();
            let killed = Instant::now();
            if o.term {
                let pid = servers[victim].child.id().to_string();
                Command::new("kill").args(["-TERM", &pid]).status().context("SIGTERM")?;
            } else {
                servers[victim].child.kill().context("SIGKILL")?;
            }
            servers[victim].child.wait()?;
            let down = rng.below(o.down_ms + 1);
            // The takeover: until every unfinished game it owned has a new owner
            // (a stopped node releases its games at once; another node adopts them).
            let mut taken = None;
            while let Some(id) = &node_id {
                let left: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM games WHERE id = ANY($1) AND phase <> 'finished' \
                     AND (owner_node IS NULL OR owner_node = $2)",
                )
                .bind(&owned_ids)
                .bind(id)
                .fetch_one(&mut db)
                .await?;
                if left == 0 {
                    taken = Some(killed.elapsed());
                    break;
                }
                if killed.elapsed() > Duration::from_secs(60) {
                    shared.violation(format!("node {id}'s games were not taken over within 60 s"));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if owned > 0
                && let Some(t) = taken
            {
                takeovers.push(t);
            }
            let since = killed.elapsed().as_millis() as u64;
            tokio::time::sleep(Duration::from_millis(down.saturating_sub(since))).await;
            let t0 = Instant::now();
            servers[victim] = spawn_server(&o, &listens[victim], &db_url, &log, victim)?;
            wait_healthy(&http, &bases[victim], &mut servers[victim]).await?;
            ready.push(t0.elapsed());
            println!(
                "crashtest: kill {k}/{}: node n{victim} after {up} ms up, owning {owned} games; taken over in {} ms; back in {} ms; acknowledged so far {}",
                o.kills,
                taken.map_or(-1, |t| t.as_millis() as i64),
                t0.elapsed().as_millis(),
                shared
                    .games
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|(_, s)| s.lock().unwrap().acked.len())
                    .sum::<usize>()
            );
        }
        Ok(())
    }
    .await;
    tokio::time::sleep(Duration::from_millis(o.settle_ms)).await;
    stop.cancel();
    for s in slots {
        let _ = tokio::time::timeout(Duration::from_secs(10), s).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let games = shared.games.lock().unwrap().clone();
    let check = match outcome {
        Ok(()) => check_games(&http, &bases, &games, &[], &shared).await,
        Err(e) => Err(e),
    };
    for s in &mut servers {
        let _ = s.child.kill();
        let _ = s.child.wait();
    }
    let _ = db.close().await;
    if !o.keep_db {
        drop_db(&o.pg, &db_name).await;
    }
    let Checked {
        stored: stored_total,
        acked: acked_total,
        finished,
        lost,
        duplicated,
    } = check?;
    let c = &shared.counts;
    takeovers.sort_unstable();
    ready.sort_unstable();
    let violations = shared.violations.lock().unwrap().len();
    println!("nodes                 {}", o.nodes);
    println!("signal                {}", if o.term { "SIGTERM" } else { "SIGKILL" });
    println!("kills                 {}", o.kills);
    println!("games                 {} ({} finished)", games.len(), finished);
    println!("moves_sent            {}", c.moves_sent.load(Ordering::Relaxed));
    println!("moves_acknowledged    {acked_total}");
    println!("moves_stored          {stored_total}");
    println!("moves_lost            {lost}");
    println!("moves_duplicated      {duplicated}");
    println!(
        "resent_after_restart  {} (duplicate_move {}, stale_move {})",
        c.resent.load(Ordering::Relaxed),
        c.duplicate_answers.load(Ordering::Relaxed),
        c.stale_answers.load(Ordering::Relaxed)
    );
    println!("other_errors          {}", c.other_errors.load(Ordering::Relaxed));
    println!("reconnects            {}", c.reconnects.load(Ordering::Relaxed));
    println!("restored_events       {}", c.restored_events.load(Ordering::Relaxed));
    println!(
        "takeover_ms           p50 {}  max {}  (of {} kills of a node owning games; lease {} ms)",
        pct(&takeovers, 0.5).as_millis(),
        pct(&takeovers, 1.0).as_millis(),
        takeovers.len(),
        o.lease_ms
    );
    println!(
        "node_ready_ms         p50 {}  max {}",
        pct(&ready, 0.5).as_millis(),
        pct(&ready, 1.0).as_millis()
    );
    println!("violations            {violations}");
    Ok(violations == 0)
}

/// `crashtest serve`: the server library in this process (for `--server self`).
fn serve(mut args: impl Iterator<Item = String>) -> Result<()> {
    let mut listen = None;
    let mut db = None;
    let mut nats = None;
    let mut name = None;
    let mut lease_ms = 3000;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next(),
            "--database-url" => db = args.next(),
            "--nats-url" => nats = args.next(),
            "--node-name" => name = args.next(),
            "--lease-ms" => lease_ms = args.next().and_then(|s| s.parse().ok()).unwrap_or(lease_ms),
            other => bail!("serve: unknown argument {other}"),
        }
    }
    let listen = listen.ok_or_else(|| anyhow!("serve needs --listen"))?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let grace = std::env::var("SANGUO_GRACE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let config = server::Config {
        database_url: db,
        grace: Duration::from_secs(grace),
        // Every client is on 127.0.0.1: the per-address limits are not under test here.
        rates: server::limits::RateConfig::unlimited(),
        max_sockets_per_address: 100_000,
        max_silent_sockets_per_address: 100_000,
        // A cluster node (issue 17) when --nats-url is given.
        cluster: nats.map(|nats_url| server::cluster::ClusterConfig {
            nats_url,
            name: name.unwrap_or_else(|| "node".into()),
            lease: Duration::from_millis(lease_ms),
        }),
        ..server::Config::default()
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen).await?;
        // SIGTERM stops it gracefully (a cluster node hands its games over); SIGKILL is the crash.
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        server::run(listener, config, term).await?;
        Ok(())
    })
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("serve") {
        args.next();
        return serve(args);
    }
    let mut o = parse_args(args)?;
    if o.server.is_empty() {
        let exe = std::env::current_exe()?;
        let sibling = exe.with_file_name("sanguo");
        if !sibling.exists() {
            bail!(
                "{} not found: build it (`cargo build --release -p server`) or pass --server PATH (or `self`)",
                sibling.display()
            );
        }
        o.server = sibling.display().to_string();
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if rt.block_on(run(o))? {
        Ok(())
    } else {
        std::process::exit(1)
    }
}
