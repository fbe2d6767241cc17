//! The cluster (issue 17): real node processes (`crashtest serve --nats-url …`)
//! on one fresh Postgres database and the machine's nats-server, clients on
//! different nodes, nodes killed and stopped under play.
//!
//! Every test needs nats-server on 127.0.0.1:4222 (`.ci/setup` starts it) and
//! fails, never skips, without it.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use protocol::{ClientMsg, GameEvent, PROTOCOL_VERSION, ServerMsg, Side, Status};
use sanguo_tests::harness::{Api, TestDb, persons_move};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const NATS: &str = "nats://127.0.0.1:4222";
/// A short lease, so that takeovers in the tests are quick.
const LEASE_MS: u64 = 1500;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One node process.
struct Node {
    child: Child,
}

/// Nodes on one database.
struct Cluster {
    db: TestDb,
    nodes: Vec<Option<Node>>,
    addrs: Vec<SocketAddr>,
    /// Per node: the database URL and the NATS URL it is given (through a
    /// [`Cut`] for a node the test partitions).
    urls: Vec<(String, String)>,
}

/// A TCP relay that the test can cut (every connection through it reset,
/// new ones refused) and heal: a network partition between one node and a
/// service.
struct Cut {
    addr: SocketAddr,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    conns: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Cut {
    async fn to(target: &'static str) -> Cut {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let conns = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (c, k) = (cut.clone(), conns.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if c.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let h = tokio::spawn(async move {
                    if let Ok(mut out) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
                k.lock().unwrap().push(h.abort_handle());
            }
        });
        Cut { addr, cut, conns }
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        for h in self.conns.lock().unwrap().drain(..) {
            h.abort();
        }
    }

    fn heal(&self) {
        self.cut.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Cluster {
    async fn start(n: usize) -> Cluster {
        Cluster::start_with(n, Vec::new()).await
    }

    /// `n` nodes; `urls[i]`, where given, replaces node i's database and NATS URLs.
    async fn start_with(n: usize, urls: Vec<(String, String)>) -> Cluster {
        assert!(
            TcpStream::connect("127.0.0.1:4222").await.is_ok(),
            "nats-server must run on 127.0.0.1:4222 for the cluster tests (.ci/setup starts it)"
        );
        let db = TestDb::create().await;
        // A node's URLs through a cut: the database's name is only known now.
        let urls: Vec<(String, String)> = urls
            .into_iter()
            .map(|(pg, nats)| (db.url.replace("127.0.0.1:5432", &pg), nats))
            .collect();
        let addrs: Vec<SocketAddr> = (0..n)
            .map(|_| format!("127.0.0.1:{}", free_port()).parse().unwrap())
            .collect();
        let shared = (db.url.clone(), NATS.to_owned());
        let urls = (0..n)
            .map(|i| urls.get(i).cloned().unwrap_or_else(|| shared.clone()))
            .collect();
        let mut c = Cluster {
            db,
            nodes: (0..n).map(|_| None).collect(),
            addrs,
            urls,
        };
        // The first alone, so that it runs the migrations before the others connect.
        c.spawn(0).await;
        for i in 1..n {
            c.spawn(i).await;
        }
        c
    }

    /// Starts node `i` (again) on its address; waits until it answers.
    async fn spawn(&mut self, i: usize) {
        let addr = self.addrs[i];
        let child = Command::new(env!("CARGO_BIN_EXE_crashtest"))
            .args([
                "serve",
                "--listen",
                &addr.to_string(),
                "--database-url",
                &self.urls[i].0,
                "--nats-url",
                &self.urls[i].1,
                "--node-name",
                &format!("n{i}"),
                "--lease-ms",
                &LEASE_MS.to_string(),
            ])
            .env("SANGUO_GRACE_SECS", "3600")
            .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
            .stdin(Stdio::null())
            .spawn()
            .expect("start a node");
        self.nodes[i] = Some(Node { child });
        let api = Api::new(format!("http://{addr}"));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(addr).await.is_ok() && api.get_text("/healthz").await.0 == 200 {
                return;
            }
            if let Some(Some(status)) = self.nodes[i].as_mut().map(|n| n.child.try_wait().expect("wait")) {
                panic!("node {i} exited at start: {status}");
            }
            assert!(Instant::now() < deadline, "node {i} did not come up");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn api(&self, i: usize) -> Api {
        Api::new(format!("http://{}", self.addrs[i]))
    }

    /// SIGKILL: the node dies mid-flight.
    fn kill(&mut self, i: usize) {
        if let Some(mut n) = self.nodes[i].take() {
            let _ = n.child.kill();
            let _ = n.child.wait();
        }
    }

    /// SIGTERM, and waits for the node to stop.
    async fn terminate(&mut self, i: usize) -> Duration {
        let started = Instant::now();
        if let Some(mut n) = self.nodes[i].take() {
            let _ = Command::new("kill").args(["-TERM", &n.child.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if n.child.try_wait().expect("wait").is_some() {
                    break;
                }
                assert!(Instant::now() < deadline, "node {i} did not stop on SIGTERM");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        started.elapsed()
    }

    /// Which node owns `game` (its name, `n0`…), from the store.
    async fn owner(&self, game: &str) -> Option<String> {
        let pool = sqlx::PgPool::connect(&self.db.url).await.expect("db");
        let owner: Option<(Option<String>,)> = sqlx::query_as("SELECT owner_node FROM games WHERE id = $1")
            .bind(game)
            .fetch_optional(&pool)
            .await
            .expect("owner");
        pool.close().await;
        owner
            .and_then(|o| o.0)
            .map(|n| n.split('-').next().unwrap_or_default().to_owned())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A client that reconnects (with its last version) to the next node when
/// its connection ends, and records what it saw.
struct Viewer {
    name: &'static str,
    token: Option<String>,
    game: String,
    addrs: Vec<SocketAddr>,
    at: usize,
    ws: Option<Ws>,
    v: u64,
    /// Every version received, in order.
    versions: Vec<u64>,
    /// Whether a snapshot (not a replay) ever filled a gap.
    snapshots_after_start: u32,
    status: Option<Status>,
    /// Every move seen: (ply, move).
    moves: Vec<(u32, String)>,
    reconnects: u32,
    over: bool,
}

impl Viewer {
    async fn new(name: &'static str, token: Option<String>, game: &str, addrs: Vec<SocketAddr>, at: usize) -> Viewer {
        let mut v = Viewer {
            name,
            token,
            game: game.to_owned(),
            addrs,
            at,
            ws: None,
            v: 0,
            versions: Vec::new(),
            snapshots_after_start: 0,
            status: None,
            moves: Vec::new(),
            reconnects: 0,
            over: false,
        };
        v.connect().await;
        v
    }

    /// Connects to the node it is at, or the next ones, until one welcomes it.
    async fn connect(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            assert!(Instant::now() < deadline, "{}: no node took the connection", self.name);
            let addr = self.addrs[self.at % self.addrs.len()];
            if let Ok(Ok((mut ws, _))) = tokio::time::timeout(
                Duration::from_secs(3),
                tokio_tungstenite::connect_async(format!("ws://{addr}/api/games/{}/ws", self.game)),
            )
            .await
            {
                let hello = ClientMsg::Hello {
                    protocol: PROTOCOL_VERSION,
                    token: self.token.clone(),
                    v: (self.v > 0).then_some(self.v),
                    legal_moves: Default::default(),
                };
                if ws
                    .send(Message::text(serde_json::to_string(&hello).unwrap()))
                    .await
                    .is_ok()
                {
                    self.ws = Some(ws);
                    // The welcome, or the end of this try.
                    let deadline = Instant::now() + Duration::from_secs(5);
                    while self.ws.is_some() && Instant::now() < deadline {
                        if let Some(ServerMsg::Welcome { v, .. }) = self.read_one(Duration::from_secs(5)).await {
                            let _ = v;
                            return;
                        }
                    }
                }
            }
            self.ws = None;
            self.at += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// One message, applied; `None` when the connection ended (it is then
    /// gone) or nothing came in `wait`.
    async fn read_one(&mut self, wait: Duration) -> Option<ServerMsg> {
        let ws = self.ws.as_mut()?;
        let frame = match tokio::time::timeout(wait, ws.next()).await {
            Err(_) => return None,
            Ok(f) => f,
        };
        let text = match frame {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                self.ws = None;
                return None;
            }
            Some(Ok(_)) => return None,
        };
        let msg: ServerMsg = serde_json::from_str(&text).expect("a server message");
        if std::env::var_os("CLUSTER_TRACE").is_some() && !matches!(msg, ServerMsg::Ping { .. }) {
            eprintln!("{} <- {}", self.name, &text[..text.len().min(160)]);
        }
        match &msg {
            ServerMsg::Error { code, message } => eprintln!("{}: error {code:?}: {message}", self.name),
            ServerMsg::Ping { n } => {
                let pong = ClientMsg::Pong { n: *n };
                let _ = ws.send(Message::text(serde_json::to_string(&pong).unwrap())).await;
            }
            ServerMsg::Snapshot { game } => {
                if self.v > 0 && game.v > self.v {
                    self.snapshots_after_start += 1;
                }
                self.v = game.v;
                self.over |= game.result.is_some();
                self.status = Some(game.status.clone());
            }
            ServerMsg::Event { v, event } => {
                assert_eq!(*v, self.v + 1, "{}: versions must be gap-free", self.name);
                self.v = *v;
                self.versions.push(*v);
                if let Some(e) = event {
                    match &**e {
                        GameEvent::Moved { status, ply, mv, .. } => {
                            self.moves.push((*ply, mv.clone()));
                            self.status = Some(status.clone());
                        }
                        GameEvent::Started { status }
                        | GameEvent::State { status }
                        | GameEvent::Restored { status }
                        | GameEvent::Arbiter { status, .. } => self.status = Some(status.clone()),
                        GameEvent::Finished { .. } => self.over = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Some(msg)
    }

    /// Reads what is there for up to `wait`; reconnects if the connection ended.
    async fn pump(&mut self, wait: Duration) {
        let until = Instant::now() + wait;
        while Instant::now() < until {
            if self.ws.is_none() {
                self.reconnects += 1;
                self.at += 1;
                self.connect().await;
                continue;
            }
            let left = until.saturating_duration_since(Instant::now());
            if self.read_one(left.min(Duration::from_millis(50))).await.is_none() && self.ws.is_some() {
                // Nothing more for now.
                if left < Duration::from_millis(50) {
                    break;
                }
            }
        }
    }

    async fn send(&mut self, m: &ClientMsg) {
        if let Some(ws) = self.ws.as_mut()
            && ws.send(Message::text(serde_json::to_string(m).unwrap())).await.is_err()
        {
            self.ws = None;
        }
    }
}

/// Three guests seated at a new game created on node `create_on`; each
/// player's socket on node `seat_nodes[i]`, a spectator's on `spectator_on`.
async fn table(c: &Cluster, create_on: usize, seat_nodes: [usize; 3], spectator_on: usize) -> (String, Vec<Viewer>) {
    let api = c.api(create_on);
    let mut tokens = Vec::new();
    for &node in &seat_nodes {
        tokens.push(c.api(node).guest().await.token);
    }
    let settings = protocol::CreateGame::default();
    let game = api.create_game(&tokens[0], &settings).await.id;
    for (i, t) in tokens.iter().enumerate() {
        // Joined through the node the player is on: relayed to the owner.
        c.api(seat_nodes[i])
            .join(t, &game, Some(Side::ALL[i]))
            .await
            .expect("join through any node");
    }
    let mut viewers = Vec::new();
    let names = ["W", "B", "Y"];
    for i in 0..3 {
        viewers.push(Viewer::new(names[i], Some(tokens[i].clone()), &game, c.addrs.clone(), seat_nodes[i]).await);
    }
    viewers.push(Viewer::new("spectator", None, &game, c.addrs.clone(), spectator_on).await);
    (game, viewers)
}

/// Plays `plies` moves (the seat to move picks a person's move), pumping
/// every viewer. A move not answered
/// within 4 s is sent again (its node may have died before it was
/// acknowledged; the ply check makes a second copy harmless).
async fn play(viewers: &mut [Viewer], plies: u32) {
    for _ in 0..plies {
        let Some(status) = viewers[0].status.clone() else {
            viewers[0].pump(Duration::from_millis(200)).await;
            continue;
        };
        if viewers.iter().any(|v| v.over) || status.legal_moves.is_empty() {
            return;
        }
        let ply = status.ply;
        let deadline = Instant::now() + Duration::from_secs(60);
        'moved: loop {
            assert!(Instant::now() < deadline, "ply {ply} was never played");
            let turn = viewers[0].status.as_ref().map(|s| s.turn).unwrap_or(status.turn);
            let mover = &mut viewers[turn.index()];
            let Some(st) = mover.status.clone().filter(|s| s.ply == ply && s.turn == turn) else {
                mover.pump(Duration::from_millis(100)).await;
                continue;
            };
            let mv = persons_move(&st, u64::from(ply) + 7);
            mover.send(&ClientMsg::Move { ply, mv }).await;
            let sent = Instant::now();
            while sent.elapsed() < Duration::from_secs(4) {
                for v in viewers.iter_mut() {
                    v.pump(Duration::from_millis(20)).await;
                }
                if viewers
                    .iter()
                    .all(|v| v.status.as_ref().is_some_and(|s| s.ply > ply) || v.over)
                {
                    break 'moved;
                }
            }
        }
    }
}

/// Two seats resign: the game ends with the third the winner; every viewer
/// reads to the end.
async fn finish(viewers: &mut [Viewer]) {
    for v in viewers.iter() {
        eprintln!(
            "{}: v {} moves {} reconnects {} ply {:?}",
            v.name,
            v.v,
            v.moves.len(),
            v.reconnects,
            v.status.as_ref().map(|s| s.ply)
        );
    }
    for i in [1usize, 2] {
        // A resignation is said twice: the first is answered with a warning (`warned`).
        viewers[i].send(&ClientMsg::Resign).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut again = Instant::now() + Duration::from_millis(500);
        loop {
            if Instant::now() > again {
                viewers[i].send(&ClientMsg::Resign).await;
                again = Instant::now() + Duration::from_secs(2);
            }
            for v in viewers.iter_mut() {
                v.pump(Duration::from_millis(20)).await;
            }
            let out = viewers[0]
                .status
                .as_ref()
                .is_some_and(|s| !s.live.contains(&Side::ALL[i]));
            if out || viewers[0].over {
                break;
            }
            assert!(Instant::now() < deadline, "seat {i}'s resignation was never seen");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !viewers.iter().all(|v| v.over) {
        assert!(Instant::now() < deadline, "not every viewer saw the end");
        for v in viewers.iter_mut() {
            v.pump(Duration::from_millis(20)).await;
        }
    }
    // Whatever followed the end (presence, ratings) reaches everyone.
    for v in viewers.iter_mut() {
        v.pump(Duration::from_millis(300)).await;
    }
}

/// The record's moves, checked: each ply stored once, in order, and every
/// move any viewer saw acknowledged among them.
fn every_acknowledged_move_stored_once(record: &protocol::GameRecord, viewers: &[Viewer]) -> Vec<(u32, String)> {
    let stored: Vec<(u32, String)> = record.moves.iter().map(|m| (m.ply, m.mv.clone())).collect();
    for (k, m) in stored.iter().enumerate() {
        assert_eq!(m.0 as usize, k, "plies stored once each, in order");
    }
    for v in viewers {
        for m in &v.moves {
            assert!(stored.contains(m), "{}: acknowledged {m:?} is in the record", v.name);
        }
    }
    stored
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_players_on_three_nodes_and_a_spectator_see_one_gap_free_game() {
    let c = Cluster::start(3).await;
    // Created on n0: n0 owns it. W is on n0, B on n1, Y on n2, the spectator on n1.
    let (game, mut viewers) = table(&c, 0, [0, 1, 2], 1).await;
    assert_eq!(c.owner(&game).await.as_deref(), Some("n0"));
    play(&mut viewers, 30).await;
    finish(&mut viewers).await;
    let last = viewers[0].v;
    for v in &viewers {
        assert_eq!(v.reconnects, 0, "{}: nobody reconnects in a quiet cluster", v.name);
        assert_eq!(v.v, last, "{}: every viewer ends at the same version", v.name);
        let first = v.versions[0];
        assert_eq!(
            v.versions,
            (first..=last).collect::<Vec<_>>(),
            "{}: gap-free versions",
            v.name
        );
    }
    // The record (read through a node that does not own the game) has the moves everyone saw.
    let record = c.api(2).record(&game).await;
    let stored: Vec<(u32, String)> = record.moves.iter().map(|m| (m.ply, m.mv.clone())).collect();
    for v in &viewers {
        assert_eq!(v.moves, stored, "{}: saw exactly the stored moves", v.name);
    }
    assert!(record.result.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_owner_loses_no_acknowledged_move_and_another_node_takes_the_game_over() {
    let mut c = Cluster::start(3).await;
    let (game, mut viewers) = table(&c, 0, [0, 1, 2], 2).await;
    play(&mut viewers, 12).await;
    assert_eq!(c.owner(&game).await.as_deref(), Some("n0"));
    // Kill the owner with a move in flight: B or whoever is to move sends, then n0 dies.
    let status = viewers[1].status.clone().expect("status");
    let mv = persons_move(&status, 99);
    let turn = status.turn.index();
    viewers[turn].send(&ClientMsg::Move { ply: status.ply, mv }).await;
    c.kill(0);
    let killed = Instant::now();
    // Every client reconnects (to a live node) and the game goes on.
    let mut taken_after = None;
    play(&mut viewers, 12).await;
    if let Some(owner) = c.owner(&game).await {
        assert_ne!(owner, "n0", "a live node owns the game now");
        taken_after = Some(killed.elapsed());
    }
    assert!(taken_after.is_some(), "another node took the game over");
    finish(&mut viewers).await;
    // Every move anyone saw acknowledged is in the record, in order; nothing twice.
    let record = c.api(1).record(&game).await;
    every_acknowledged_move_stored_once(&record, &viewers);
    assert!(
        viewers.iter().filter(|v| v.reconnects > 0).count() >= 2,
        "the clients of the killed node's game reconnected"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_every_node_loses_no_move_and_applies_none_twice() {
    let mut c = Cluster::start(3).await;
    let (game, mut viewers) = table(&c, 1, [0, 1, 2], 0).await;
    play(&mut viewers, 6).await;
    let mut stops = Vec::new();
    for i in 0..3 {
        // SIGTERM node i under play; it hands its games over at once; then it comes back.
        stops.push(c.terminate(i).await);
        play(&mut viewers, 6).await;
        c.spawn(i).await;
        play(&mut viewers, 4).await;
    }
    finish(&mut viewers).await;
    let record = c.api(2).record(&game).await;
    let stored = every_acknowledged_move_stored_once(&record, &viewers);
    assert!(
        stored.len() >= 30,
        "the game went on through every restart: {} plies",
        stored.len()
    );
    for d in stops {
        assert!(
            d < Duration::from_secs(15),
            "a node stopped within 15 s of SIGTERM: {d:?}"
        );
    }
}

/// The cluster crash harness, short: a random node SIGKILLed three times
/// under load (the full run is `crashtest --nodes 3 --kills 30`, docs/CLUSTER.md).
#[test]
fn killing_random_nodes_under_load_loses_and_doubles_no_move() {
    assert!(
        std::net::TcpStream::connect("127.0.0.1:4222").is_ok(),
        "nats-server must run on 127.0.0.1:4222 for the cluster tests (.ci/setup starts it)"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_crashtest"))
        .args([
            "--server",
            "self",
            "--nodes",
            "3",
            "--kills",
            "3",
            "--games",
            "6",
            "--think-ms",
            "100",
            "--up-ms",
            "1500,2500",
            "--down-ms",
            "500",
            "--settle-ms",
            "3000",
            "--seed",
            "11",
        ])
        .output()
        .expect("run crashtest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "crashtest failed:\n{stdout}\n{stderr}");
    let field = |name: &str| -> u64 {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{stdout}"));
        line[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    assert_eq!(field("violations"), 0, "{stdout}");
    assert_eq!(field("moves_lost"), 0, "{stdout}");
    assert_eq!(field("moves_duplicated"), 0, "{stdout}");
    assert_eq!(field("kills"), 3);
    assert!(field("moves_acknowledged") > 100, "the games were played:\n{stdout}");
}

/// Counts a game's stored event rows.
async fn stored_events(db: &TestDb, game: &str) -> i64 {
    let pool = sqlx::PgPool::connect(&db.url).await.expect("db");
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE game_id = $1")
        .bind(game)
        .fetch_one(&pool)
        .await
        .expect("count");
    pool.close().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_owner_stops_acknowledging_and_never_writes_the_games_it_lost() {
    // Node n0 reaches Postgres and NATS only through cuts.
    let pg = Cut::to("127.0.0.1:5432").await;
    let nats = Cut::to("127.0.0.1:4222").await;
    let mut c = Cluster::start_with(3, vec![(pg.addr.to_string(), format!("nats://{}", nats.addr))]).await;
    // n0 owns the game; W plays on n0 itself, the others on n1 and n2.
    let (game, mut viewers) = table(&c, 0, [0, 1, 2], 2).await;
    play(&mut viewers, 6).await;
    assert_eq!(c.owner(&game).await.as_deref(), Some("n0"));
    let acked_before = viewers[0].moves.len();
    // The partition: n0 loses Postgres and NATS at once.
    pg.cut();
    nats.cut();
    let cut_at = Instant::now();
    // The game goes on: its clients reconnect to n1 and n2, one of which takes it over.
    play(&mut viewers, 8).await;
    let owner = c.owner(&game).await.expect("an owner");
    assert_ne!(owner, "n0", "a node that can reach the store owns the game now");
    assert!(viewers[0].moves.len() > acked_before, "moves were played after the cut");
    eprintln!("partition: play resumed within {:?}", cut_at.elapsed());
    // n0 comes back: it writes nothing for the game it lost.
    let before = stored_events(&c.db, &game).await;
    pg.heal();
    nats.heal();
    tokio::time::sleep(Duration::from_millis(3 * LEASE_MS)).await;
    for v in viewers.iter_mut() {
        v.pump(Duration::from_millis(100)).await;
    }
    assert_eq!(
        stored_events(&c.db, &game).await,
        before,
        "nobody wrote while nobody played: n0 wrote nothing when it came back"
    );
    // And the game finishes on the new owner, with every acknowledged move stored once.
    play(&mut viewers, 4).await;
    finish(&mut viewers).await;
    let record = c.api(1).record(&game).await;
    every_acknowledged_move_stored_once(&record, &viewers);
    c.kill(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_shows_presence_and_the_penalty_box_holds_on_every_node() {
    let c = Cluster::start(3).await;
    // A public game waiting for players, made on n0; its creator sits and connects on n1.
    let creator = c.api(1).guest().await;
    let game = c
        .api(0)
        .create_game(&creator.token, &protocol::CreateGame::default())
        .await
        .id;
    c.api(1).join(&creator.token, &game, Some(Side::W)).await.expect("join");
    let online_on = |node: usize| {
        let api = c.api(node);
        let game = game.clone();
        async move {
            let list: Vec<protocol::GameSummary> = api.get("/api/games").await.expect("lobby");
            let g = list.iter().find(|g| g.id == game).expect("the game is in the lobby");
            g.seats[0].as_ref().is_some_and(|s| s.online)
        }
    };
    let ws = sanguo_tests::harness::Client::connect(c.addrs[1], &game, Some(&creator.token), None).await;
    // Seen online from n2, whose sockets hold nobody of this game.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !online_on(2).await {
        assert!(
            Instant::now() < deadline,
            "n2's lobby never showed the player on n1 online"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    ws.close().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while online_on(2).await {
        assert!(Instant::now() < deadline, "n2's lobby never showed the player gone");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // An anonymous client floods a socket on n0 and is cut off; n1 keeps it out too.
    let mut f = sanguo_tests::harness::Client::connect(c.addrs[0], &game, None, None).await;
    for n in 0..400 {
        if f.try_send(&ClientMsg::Ping { n }).await.is_err() {
            break;
        }
    }
    let (code, reason) = f.close_frame().await.expect("a Close frame");
    assert_eq!((code, reason.as_str()), (1008, server::ws::FLOOD_CLOSE_REASON));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut again = sanguo_tests::harness::Client::connect_raw(c.addrs[1], &game).await;
    again.anonymous_hello().await;
    assert_eq!(again.error().await, protocol::ErrorCode::RateLimited);
    assert!(again.errors[0].message.contains("flooding"), "{:?}", again.errors);
}
