//! `restart`: how long the server takes to bring back unfinished games.
//!
//! `restart seed --database-url URL --games N --plies P` fills a store with N
//! live games of P random legal moves each, written by the server's own
//! store and room code (the rows are exactly what play would have left).
//!
//! `restart time --database-url URL --server PATH` starts `PATH serve` on
//! that store and measures the time until it answers `/healthz` (it listens
//! only after every unfinished game is restored), then checks from
//! `/metrics` that every game is in memory and live, and fetches a sample of
//! snapshots to see that they are at the stored ply. The server is then
//! stopped with SIGTERM.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use protocol::{GameSettings, Phase, Side, Snapshot};
use server::metrics::Metrics;
use server::room::core::{Act, Room};
use server::store::{Player, Store, wall_ms};

const USAGE: &str = "usage: restart seed --database-url URL [--games N] [--plies P]
       restart time --database-url URL --server PATH [--listen ADDR] [--json]";

fn settings() -> GameSettings {
    sanguo_tests::hour_game_settings(86_400_000)
}

/// Writes one live game of `plies` random legal moves through the store.
async fn seed_game(store: &Store, n: usize, plies: u32, rng: &mut u64) -> Result<()> {
    let id = format!("restart-{n:06}");
    let mut players = Vec::new();
    for side in Side::ALL {
        let p = Player::guest(format!("{id}-{side}"), format!("seed {n} {side}"));
        store
            .create_player(&p.id, &p.name, None, &format!("token-{}", p.id))
            .await?;
        players.push(p);
    }
    let mut room = Room::new(id.clone(), settings()).map_err(|e| anyhow!("{}", e.message))?;
    let initial = room.initial_position();
    let secret = room.take_secret();
    store
        .create_game(&id, &players[0].id, &settings(), &initial, secret.as_deref())
        .await?;
    let mut now = 0;
    for (p, side) in players.into_iter().zip(Side::ALL) {
        let (_, step) = room
            .join(p, Some(side), now, wall_ms())
            .map_err(|e| anyhow!("{}", e.message))?;
        store.commit(&id, room.v(), &step.ops).await?;
    }
    for ply in 0..plies {
        now += 500;
        let status = room.status(now);
        if status.legal_moves.is_empty() || room.phase != Phase::Live {
            break;
        }
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let mv = status.legal_moves[(*rng % status.legal_moves.len() as u64) as usize].to_owned();
        let step = room
            .act(status.turn, Act::Move { ply, mv }, 0, now, wall_ms())
            .map_err(|e| anyhow!("{}", e.message))?;
        store.commit(&id, room.v(), &step.ops).await?;
    }
    Ok(())
}

async fn seed(url: &str, games: usize, plies: u32) -> Result<()> {
    let store = Store::connect(url, Metrics::default()).await.context("store")?;
    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..64u64 {
        let (store, next) = (store.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let mut rng = 0x2545_F491_4F6C_DD1D ^ (w + 1);
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= games {
                    return Ok::<(), anyhow::Error>(());
                }
                seed_game(&store, n, plies, &mut rng).await?;
            }
        }));
    }
    for w in workers {
        w.await??;
    }
    store.close().await;
    eprintln!(
        "seeded {games} live games of {plies} plies in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn gauge(metrics: &str, name: &str) -> Option<i64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

async fn time(url: &str, server: &str, listen: &str, json: bool) -> Result<()> {
    let http = reqwest::Client::new();
    let base = format!("http://{listen}");
    let started = Instant::now();
    let mut child = Command::new(server)
        .args(["serve", "--listen", listen])
        .env("DATABASE_URL", url)
        // The server's `restore timings` line splits the time (load, replay, commit, start).
        .env("RUST_LOG", "warn,server::room=info")
        // Its log (on stdout) goes to stderr: `--json` keeps stdout clean.
        .stdout(std::io::stderr())
        .spawn()
        .with_context(|| format!("starting {server}"))?;
    let pid = child.id();
    let ready = loop {
        if let Some(status) = child.try_wait()? {
            bail!("the server exited: {status}");
        }
        if let Ok(r) = http.get(format!("{base}/healthz")).send().await
            && r.status().is_success()
        {
            break started.elapsed();
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("the server did not answer within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let metrics = http.get(format!("{base}/metrics")).send().await?.text().await?;
    let rooms = gauge(&metrics, "sanguo_rooms").unwrap_or(-1);
    let live = gauge(&metrics, "sanguo_live_games").unwrap_or(-1);
    let rss_kib = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        });
    // A sample of snapshots, answered by the rooms in memory.
    let sample_started = Instant::now();
    let mut sampled = 0;
    for n in (0..live.max(0) as usize).step_by((live.max(1) as usize / 100).max(1)) {
        let snap: Snapshot = http
            .get(format!("{base}/api/games/restart-{n:06}"))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        if snap.phase != Phase::Live || snap.status.legal_moves.is_empty() {
            bail!("game restart-{n:06} is not playable: {:?}", snap.phase);
        }
        sampled += 1;
    }
    let sample = sample_started.elapsed();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let _ = child.wait();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "ready_s": ready.as_secs_f64(),
                "rooms": rooms,
                "live_games": live,
                "rss_kib": rss_kib,
                "sampled": sampled,
                "sample_s": sample.as_secs_f64(),
                "uptime": load.trim(),
            })
        );
    } else {
        println!("ready_s          {:.3}", ready.as_secs_f64());
        println!("rooms            {rooms}");
        println!("live_games       {live}");
        if let Some(k) = rss_kib {
            println!("server_rss_mib   {:.1}", k as f64 / 1024.0);
        }
        println!(
            "sampled          {sampled} snapshots live in {:.3} s",
            sample.as_secs_f64()
        );
        println!("load             {}", load.trim());
    }
    Ok(())
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let cmd = args.next().ok_or_else(|| anyhow!("{USAGE}"))?;
    let (mut url, mut games, mut plies, mut server, mut listen, mut json) =
        (None, 10_000usize, 40u32, None, "127.0.0.1:8282".to_owned(), false);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--database-url" => url = Some(val()?),
            "--games" => games = val()?.parse()?,
            "--plies" => plies = val()?.parse()?,
            "--server" => server = Some(val()?),
            "--listen" => listen = val()?,
            "--json" => json = true,
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let url = url.ok_or_else(|| anyhow!("--database-url is required\n{USAGE}"))?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cmd.as_str() {
        "seed" => rt.block_on(seed(&url, games, plies)),
        "time" => {
            let server = server.ok_or_else(|| anyhow!("--server is required\n{USAGE}"))?;
            rt.block_on(time(&url, &server, &listen, json))
        }
        _ => bail!("{USAGE}"),
    }
}
