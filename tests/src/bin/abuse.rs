//! `abuse`: what a hostile population does to honest players (issue 18).
//!
//! Runs `loadgen` (honest games, each from a loopback address of its own:
//! `--spread-addresses`) twice against a running server: once alone, once
//! while an attacker on 127.0.0.2–127.0.0.50 does, as fast as its bounded
//! concurrency allows, everything that used to hurt: mints guest sessions,
//! opens sockets that never say `hello`, floods wrong-password logins, and
//! creates games of three level-3 bots with guests it mints. Reports the
//! honest moves/s and latency of both runs, the server's peak RSS (sampled
//! every 100 ms) in each, and for each attack how many requests got through
//! and how many were refused. Only loopback addresses; every loop ends with
//! the run.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use sanguo_tests::procfs::{cpu_seconds, rss_kib};
use tokio_util::sync::CancellationToken;

/// What to run.
#[derive(Debug, Clone)]
struct Options {
    url: String,
    server_pid: u32,
    loadgen: String,
    games: usize,
    seconds: u64,
    think_ms: u64,
    /// Attacker addresses: 127.0.0.2 up to 127.0.0.(1 + addresses).
    addresses: u8,
    /// The attacks to run (`sessions`, `logins`, `sockets`, `bots`).
    attacks: Vec<String>,
    /// Attack alone for this long, without honest games (to see what each costs).
    attack_only: Option<u64>,
}

/// One attack's counts.
#[derive(Debug, Default)]
struct Count {
    tried: AtomicU64,
    passed: AtomicU64,
    refused: AtomicU64,
    failed: AtomicU64,
}

impl Count {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "tried": self.tried.load(Ordering::Relaxed),
            "passed": self.passed.load(Ordering::Relaxed),
            "refused": self.refused.load(Ordering::Relaxed),
            "failed": self.failed.load(Ordering::Relaxed),
        })
    }

    /// Counts an HTTP answer: 2xx passed, 429/503 refused, else failed.
    fn answer(&self, status: Option<u16>) {
        self.tried.fetch_add(1, Ordering::Relaxed);
        let c = match status {
            Some(s) if (200..300).contains(&s) => &self.passed,
            Some(429) | Some(503) => &self.refused,
            _ => &self.failed,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// The attacker's counts, per attack.
#[derive(Debug, Default)]
struct Attack {
    sessions: Count,
    logins: Count,
    sockets: Count,
    bot_games: Count,
    /// Idle sockets held at the end.
    held: AtomicU64,
}

fn attacker_ip(i: usize, n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i % usize::from(n)) as u8))
}

fn clients(n: u8) -> Result<Vec<reqwest::Client>> {
    (0..usize::from(n))
        .map(|i| {
            reqwest::Client::builder()
                .local_address(attacker_ip(i, n))
                .timeout(Duration::from_secs(10))
                .build()
                .context("http client")
        })
        .collect()
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    body: &serde_json::Value,
) -> (Option<u16>, serde_json::Value) {
    let mut req = http.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    match req.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (Some(status), r.json().await.unwrap_or(serde_json::Value::Null))
        }
        Err(_) => (None, serde_json::Value::Null),
    }
}

/// Runs every attack until `stop`.
async fn attack(o: &Options, counts: Arc<Attack>, stop: CancellationToken) -> Result<()> {
    let base = o.url.trim_end_matches('/').to_owned();
    let http = clients(o.addresses)?;
    let mut tasks = Vec::new();
    // A game to open idle sockets to (created from the first attacker address).
    let guest = post(&http[0], &format!("{base}/api/sessions"), None, &serde_json::json!({}))
        .await
        .1;
    let token = guest["token"].as_str().unwrap_or_default().to_owned();
    let game = post(
        &http[0],
        &format!("{base}/api/games"),
        Some(&token),
        &serde_json::json!({}),
    )
    .await
    .1;
    let game = game["id"]
        .as_str()
        .ok_or_else(|| anyhow!("the attacker could not create a game: {game}"))?
        .to_owned();

    // Guest minting: 8 loops over the addresses.
    let n = if o.attacks.iter().any(|a| a == "sessions") {
        8
    } else {
        0
    };
    for k in 0..n {
        let (http, base, counts, stop) = (http.clone(), base.clone(), counts.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = k;
            while !stop.is_cancelled() {
                let (status, _) = post(
                    &http[i % http.len()],
                    &format!("{base}/api/sessions"),
                    None,
                    &serde_json::json!({}),
                )
                .await;
                counts.sessions.answer(status);
                i += 8;
                if status == Some(429) {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    // Wrong-password logins: 16 loops.
    let n = if o.attacks.iter().any(|a| a == "logins") { 16 } else { 0 };
    for k in 0..n {
        let (http, base, counts, stop) = (http.clone(), base.clone(), counts.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = k;
            let creds = serde_json::json!({"username": "zhuge_liang", "password": "not the password"});
            while !stop.is_cancelled() {
                let (status, _) = post(&http[i % http.len()], &format!("{base}/api/login"), None, &creds).await;
                // A 401 is a login that got through to a password check.
                counts.logins.answer(status.map(|s| if s == 401 { 200 } else { s }));
                i += 16;
            }
        }));
    }
    // Games of three level-3 bots: 4 loops, each minting a guest per game.
    let n = if o.attacks.iter().any(|a| a == "bots") { 4 } else { 0 };
    for k in 0..n {
        let (http, base, counts, stop) = (http.clone(), base.clone(), counts.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = k;
            let three = serde_json::json!({"bots": {"W": 3, "B": 3, "Y": 3}, "public": false});
            while !stop.is_cancelled() {
                let h = &http[i % http.len()];
                i += 4;
                let (status, g) = post(h, &format!("{base}/api/sessions"), None, &serde_json::json!({})).await;
                if status != Some(201) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                let t = g["token"].as_str().unwrap_or_default();
                let (status, _) = post(h, &format!("{base}/api/games"), Some(t), &three).await;
                counts.bot_games.answer(status);
            }
        }));
    }
    // Idle sockets that never say hello: 4 loops, each keeping up to 2,000
    // open (fewer if the server closes or refuses them).
    let ws_url = format!("{}/api/games/{game}/ws", base.replacen("http", "ws", 1));
    let server: std::net::SocketAddr = tokio::net::lookup_host(
        base.strip_prefix("http://")
            .ok_or_else(|| anyhow!("--url must be http://"))?,
    )
    .await?
    .next()
    .ok_or_else(|| anyhow!("no server address"))?;
    let loops = if o.attacks.iter().any(|a| a == "sockets") { 4 } else { 0 };
    for k in 0..loops {
        let (counts, stop, ws_url, n) = (counts.clone(), stop.clone(), ws_url.clone(), o.addresses);
        tasks.push(tokio::spawn(async move {
            let mut held = std::collections::VecDeque::new();
            let mut i = k;
            while !stop.is_cancelled() {
                i += 4;
                counts.sockets.tried.fetch_add(1, Ordering::Relaxed);
                let Ok(socket) = tokio::net::TcpSocket::new_v4() else {
                    break;
                };
                if socket.bind(std::net::SocketAddr::new(attacker_ip(i, n), 0)).is_err() {
                    counts.sockets.failed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let attempt = async {
                    let tcp = socket.connect(server).await?;
                    tokio_tungstenite::client_async(ws_url.as_str(), tokio_tungstenite::MaybeTlsStream::Plain(tcp))
                        .await
                        .map_err(std::io::Error::other)
                };
                match tokio::time::timeout(Duration::from_secs(5), attempt).await {
                    Ok(Ok((ws, _))) => {
                        counts.sockets.passed.fetch_add(1, Ordering::Relaxed);
                        held.push_back(ws);
                        if held.len() > 2000 {
                            held.pop_front();
                        }
                    }
                    Ok(Err(e)) if e.to_string().contains("429") || e.to_string().contains("503") => {
                        counts.sockets.refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    _ => {
                        counts.sockets.failed.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
            counts.held.fetch_add(held.len() as u64, Ordering::Relaxed);
        }));
    }
    stop.cancelled().await;
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(15), t).await;
    }
    Ok(())
}

/// Runs loadgen while sampling the server's RSS; returns its JSON and the peak (KiB).
async fn honest(o: &Options) -> Result<(serde_json::Value, u64)> {
    let mut child = std::process::Command::new(&o.loadgen)
        .args([
            "--url",
            &o.url,
            "--server-pid",
            &o.server_pid.to_string(),
            "--json",
            "--spread-addresses",
        ])
        .args(["--games", &o.games.to_string(), "--seconds", &o.seconds.to_string()])
        .args(["--think-ms", &o.think_ms.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", o.loadgen))?;
    let mut stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let read = tokio::task::spawn_blocking(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).map(|_| out)
    });
    let mut peak = 0;
    // loadgen ramps up, measures `seconds`, then winds down: bounded by three times that and a minute.
    let deadline = Instant::now() + Duration::from_secs(3 * o.seconds + 60);
    loop {
        peak = peak.max(rss_kib(o.server_pid).unwrap_or(0));
        if child.try_wait()?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("loadgen did not finish in time");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = read.await??;
    let line = out.lines().last().ok_or_else(|| anyhow!("loadgen printed nothing"))?;
    Ok((
        serde_json::from_str(line).with_context(|| format!("loadgen: {line}"))?,
        peak,
    ))
}

const USAGE: &str = "usage: abuse --url http://127.0.0.1:PORT --server-pid PID [--loadgen PATH] [--games 200]
             [--seconds 60] [--think-ms 1000] [--addresses 49]
             [--attacks sessions,logins,sockets,bots] [--attack-only SECONDS]

Runs loadgen (honest games from addresses of their own) alone, then again while an attacker on
127.0.0.2.. mints sessions, opens idle sockets, floods logins and creates bot games; prints one JSON
object: honest moves/s and latency of both runs, server peak RSS, and each attack's counts.
--attack-only S: no honest games, only the chosen attacks for S seconds (the server's RSS peak
and its RSS 10 s after: what each attack costs).";

fn parse_args() -> Result<Options> {
    let mut o = Options {
        url: String::new(),
        server_pid: 0,
        loadgen: std::env::current_exe()?
            .with_file_name("loadgen")
            .to_string_lossy()
            .into_owned(),
        games: 200,
        seconds: 60,
        think_ms: 1000,
        addresses: 49,
        attacks: ["sessions", "logins", "sockets", "bots"].map(String::from).to_vec(),
        attack_only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--url" => o.url = val()?,
            "--server-pid" => o.server_pid = val()?.parse()?,
            "--loadgen" => o.loadgen = val()?,
            "--games" => o.games = val()?.parse()?,
            "--seconds" => o.seconds = val()?.parse()?,
            "--think-ms" => o.think_ms = val()?.parse()?,
            "--addresses" => o.addresses = val()?.parse::<u8>()?.clamp(1, 49),
            "--attacks" => o.attacks = val()?.split(',').map(str::to_owned).collect(),
            "--attack-only" => o.attack_only = Some(val()?.parse()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    if o.url.is_empty() || o.server_pid == 0 {
        bail!("--url and --server-pid are required\n{USAGE}");
    }
    Ok(o)
}

fn summary(v: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "moves_per_s": v["moves_per_s"],
        "latency_ms": v["latency_ms"],
        "errors": v["errors"],
        "games_finished": v["games_finished"],
        "server_cpu_pct": v["server_cpu_pct"],
    })
}

fn main() -> Result<()> {
    let o = parse_args()?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let rss_start = rss_kib(o.server_pid);
        let own_cpu_s = || cpu_seconds(std::process::id());
        if let Some(secs) = o.attack_only {
            let cpu_start = own_cpu_s();
            let counts = Arc::new(Attack::default());
            let stop = CancellationToken::new();
            let attacker = {
                let (o, counts, stop) = (o.clone(), counts.clone(), stop.clone());
                tokio::spawn(async move { attack(&o, counts, stop).await })
            };
            let mut peak = 0;
            let end = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < end {
                peak = peak.max(rss_kib(o.server_pid).unwrap_or(0));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stop.cancel();
            attacker.await??;
            let attacker_cpu_s = own_cpu_s().zip(cpu_start).map(|(b, a)| b - a);
            tokio::time::sleep(Duration::from_secs(10)).await;
            let report = serde_json::json!({
                "attacks": o.attacks,
                "seconds": secs,
                "attacker_cpu_pct": attacker_cpu_s.map(|c| 100.0 * c / secs as f64),
                "server_rss_mib": {
                    "start": rss_start.map(|k| k as f64 / 1024.0),
                    "peak": peak as f64 / 1024.0,
                    "10s_after": rss_kib(o.server_pid).map(|k| k as f64 / 1024.0),
                },
                "attack": {
                    "sessions": counts.sessions.json(),
                    "logins": counts.logins.json(),
                    "idle_sockets": counts.sockets.json(),
                    "bot_games": counts.bot_games.json(),
                },
            });
            println!("{}", serde_json::to_string_pretty(&report)?);
            return Ok(());
        }
        let (alone, peak_alone) = honest(&o).await?;
        let cpu_start = own_cpu_s();
        let counts = Arc::new(Attack::default());
        let stop = CancellationToken::new();
        let attacker = {
            let (o, counts, stop) = (o.clone(), counts.clone(), stop.clone());
            tokio::spawn(async move { attack(&o, counts, stop).await })
        };
        let started = Instant::now();
        let under = honest(&o).await;
        let attacked_for = started.elapsed();
        stop.cancel();
        let attacker = attacker.await?;
        let attacker_cpu_s = own_cpu_s().zip(cpu_start).map(|(b, a)| b - a);
        let (under, peak_under) = under?;
        attacker?;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let report = serde_json::json!({
            "games": o.games,
            "seconds": o.seconds,
            "think_ms": o.think_ms,
            "attacker_addresses": o.addresses,
            "attacked_s": attacked_for.as_secs_f64(),
            "attacker_cpu_pct": attacker_cpu_s.map(|c| 100.0 * c / attacked_for.as_secs_f64()),
            "honest_alone": summary(&alone),
            "honest_under_attack": summary(&under),
            "p99_ratio": under["latency_ms"]["p99"].as_f64().zip(alone["latency_ms"]["p99"].as_f64()).map(|(u, a)| u / a.max(1e-9)),
            "server_rss_mib": {
                "start": rss_start.map(|k| k as f64 / 1024.0),
                "peak_alone": peak_alone as f64 / 1024.0,
                "peak_under_attack": peak_under as f64 / 1024.0,
                "5s_after": rss_kib(o.server_pid).map(|k| k as f64 / 1024.0),
            },
            "attack": {
                "sessions": counts.sessions.json(),
                "logins": counts.logins.json(),
                "idle_sockets": counts.sockets.json(),
                "idle_sockets_held_at_end": counts.held.load(Ordering::Relaxed),
                "bot_games": counts.bot_games.json(),
            },
            "uptime": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        Ok(())
    })
}
