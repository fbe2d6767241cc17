//! A real server on `127.0.0.1:0` over a fresh database, and clients.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use protocol::{
    AddBot, ClientMsg, CreateGame, ErrorBody, ErrorCode, GameEvent, GameRecord, JoinGame, Joined, LegalMovesFor,
    PROTOCOL_VERSION, ServerMsg, Session, Side, Snapshot, Status,
};
use sqlx::{Connection, Executor, PgConnection};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The Postgres the machine runs (trust auth), as the superuser.
pub const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// How long a client waits for any one message.
const RECV_TIMEOUT: Duration = Duration::from_secs(10);

/// A fresh Postgres database, dropped when this value is.
#[derive(Debug)]
pub struct TestDb {
    name: String,
    /// Its URL.
    pub url: String,
}

impl TestDb {
    /// Creates `sanguo_test_<random>`. Panics (the test fails) when Postgres
    /// is unreachable: these tests must never pass by skipping.
    pub async fn create() -> TestDb {
        let name = format!("sanguo_test_{}", hex_random(6));
        let mut admin = PgConnection::connect(PG_ADMIN)
            .await
            .unwrap_or_else(|e| panic!("Postgres must run on 127.0.0.1:5432 for these tests: {e}"));
        admin
            .execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create test database");
        let _ = admin.close().await;
        TestDb {
            url: format!("postgres://postgres@127.0.0.1:5432/{name}"),
            name,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop may run inside a runtime: do the async work on a thread of its own.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async move {
                if let Ok(mut admin) = PgConnection::connect(PG_ADMIN).await {
                    let _ = admin
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                    let _ = admin.close().await;
                }
            });
        })
        .join();
    }
}

fn hex_random(n: usize) -> String {
    (0..n).map(|_| format!("{:02x}", rand::random::<u8>())).collect()
}

/// A server running on a runtime of its own, so that a test can crash it
/// (drop every task at once, no shutdown) or stop it gracefully.
#[derive(Debug)]
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<Result<(), server::ServeError>>>,
}

impl TestServer {
    /// Starts a server with this configuration.
    pub fn start(config: server::Config) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("server runtime");
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener)?;
            server::run(listener, config, async {
                let _ = stopped.await;
            })
            .await
        });
        TestServer {
            addr,
            runtime: Some(runtime),
            stop: Some(stop),
            done: Some(done),
        }
    }

    /// A configuration for tests on this database URL (`None`: SQLite file).
    pub fn config(database_url: Option<String>) -> server::Config {
        server::Config {
            database_url,
            // Scripted clients answer each move within a millisecond, far faster than people:
            // a 140-ply game sends one player's moves at more than the product's 20 messages per
            // second. Tests of the rate limit itself set the product's values.
            messages_per_second: 200,
            message_burst: 400,
            // Tests mint guests, create games and open sockets from 127.0.0.1
            // far faster than people: the per-address limits are off, except in
            // the tests of those limits (tests/tests/abuse.rs).
            rates: server::limits::RateConfig::unlimited(),
            max_sockets_per_address: 100_000,
            max_silent_sockets_per_address: 100_000,
            // Nor is an address cut off for its refusals (tests of limits
            // see hundreds of 429s), except in the test of that.
            cut_off_refusals: 0,
            cut_off_silent: 0,
            max_bot_games_per_address: 100_000,
            max_bot_only_games: 100_000,
            // Tests of clocks and timeouts play with clocks of milliseconds.
            clock_minimums: server::http::ClockMinimums::none(),
            ..server::Config::default()
        }
    }

    /// The HTTP base URL.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Kills the server: every task dropped mid-flight, nothing flushed.
    pub fn crash(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }

    /// Graceful shutdown; waits for it.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(d) = self.done.take() {
            d.await.expect("server task").expect("server stopped cleanly");
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// An HTTP client of the API.
#[derive(Debug, Clone)]
pub struct Api {
    base: String,
    http: reqwest::Client,
}

/// An API answer that was not a success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFailure {
    /// HTTP status.
    pub status: u16,
    /// The body.
    pub body: ErrorBody,
}

impl Api {
    /// A client of the server at `base`.
    pub fn new(base: String) -> Api {
        Api {
            base,
            http: reqwest::Client::new(),
        }
    }

    /// A client whose requests come from `ip` (a loopback address of its
    /// own, 127.0.0.2 and up: another client as the server's limits see it).
    pub fn from_address(base: String, ip: std::net::IpAddr) -> Api {
        Api {
            base,
            http: reqwest::Client::builder()
                .local_address(ip)
                .build()
                .expect("http client"),
        }
    }

    /// A number of `GET /metrics` (the sample of a metric without labels).
    pub async fn metric(&self, name: &str) -> f64 {
        let (_, text) = self.get_text("/metrics").await;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no metric {name}"))
    }

    async fn answer<T: serde::de::DeserializeOwned>(r: reqwest::Response) -> Result<T, ApiFailure> {
        let status = r.status().as_u16();
        let text = r.text().await.unwrap_or_default();
        if (200..300).contains(&status) {
            Ok(serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad body {text}: {e}")))
        } else {
            let body = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("error body must be {{code,message}}: {text}: {e}"));
            Err(ApiFailure { status, body })
        }
    }

    /// `POST` JSON, with a token.
    pub async fn post<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        token: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<T, ApiFailure> {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        Self::answer(req.send().await.expect("http")).await
    }

    /// Any method with a JSON body and a token: the status and the body's text.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: &serde_json::Value,
    ) -> (u16, String) {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.expect("http");
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    /// `GET` JSON.
    pub async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, ApiFailure> {
        Self::answer(
            self.http
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .expect("http"),
        )
        .await
    }

    /// `GET` text.
    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("http");
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    /// An account session (a random username).
    pub async fn account(&self) -> Session {
        let name = format!("org-{}", hex_random(4));
        self.post(
            "/api/accounts",
            None,
            &serde_json::json!({ "username": name, "password": "correct horse battery" }),
        )
        .await
        .expect("account")
    }

    /// `GET` JSON with a token.
    pub async fn get_as<T: serde::de::DeserializeOwned>(&self, path: &str, token: &str) -> Result<T, ApiFailure> {
        Self::answer(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(token)
                .send()
                .await
                .expect("http"),
        )
        .await
    }

    /// A guest session.
    pub async fn guest(&self) -> Session {
        self.post("/api/sessions", None, &serde_json::json!({}))
            .await
            .expect("guest session")
    }

    /// Creates a game.
    pub async fn create_game(&self, token: &str, c: &CreateGame) -> Snapshot {
        self.post("/api/games", Some(token), &serde_json::to_value(c).unwrap())
            .await
            .expect("create game")
    }

    /// Joins a seat.
    pub async fn join(&self, token: &str, game: &str, side: Option<Side>) -> Result<Joined, ApiFailure> {
        self.join_seeded(token, game, side, None).await
    }

    /// Joins a seat with the seat's seed for 三国暗棋's deal (64 hex digits).
    pub async fn join_seeded(
        &self,
        token: &str,
        game: &str,
        side: Option<Side>,
        seed: Option<&str>,
    ) -> Result<Joined, ApiFailure> {
        let seed = seed.map(str::to_owned);
        self.post(
            &format!("/api/games/{game}/join"),
            Some(token),
            &serde_json::to_value(JoinGame { side, seed }).unwrap(),
        )
        .await
    }

    /// Seats a bot (the game's creator only).
    pub async fn add_bot(&self, token: &str, game: &str, side: Option<Side>, level: u8) -> Result<Joined, ApiFailure> {
        self.post(
            &format!("/api/games/{game}/bots"),
            Some(token),
            &serde_json::to_value(AddBot { side, level }).unwrap(),
        )
        .await
    }

    /// The record.
    pub async fn record(&self, game: &str) -> GameRecord {
        self.get(&format!("/api/games/{game}/record")).await.expect("record")
    }

    /// The state.
    pub async fn state(&self, game: &str) -> Snapshot {
        self.get(&format!("/api/games/{game}")).await.expect("state")
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A WebSocket client of one game that tracks the version and checks that
/// versions arrive gap-free.
#[derive(Debug)]
pub struct Client {
    ws: Ws,
    /// The last version held.
    pub v: u64,
    /// The last state of play seen.
    pub status: Option<Status>,
    /// Every visible event, with its version.
    pub events: Vec<(u64, GameEvent)>,
    /// Every version seen (bare ones included).
    pub versions: Vec<u64>,
    /// Errors received, in order.
    pub errors: Vec<ErrorBody>,
    /// The seat, from `welcome`.
    pub side: Option<Side>,
    /// Snapshots received.
    pub snapshots: u32,
}

impl Client {
    /// Connects to a game and says hello (with a token and a last version).
    pub async fn connect(addr: SocketAddr, game: &str, token: Option<&str>, v: Option<u64>) -> Client {
        Client::connect_with(addr, game, token, v, LegalMovesFor::All).await
    }

    /// [`Client::connect`] with `hello`'s `legal_moves`.
    pub async fn connect_with(
        addr: SocketAddr,
        game: &str,
        token: Option<&str>,
        v: Option<u64>,
        legal_moves: LegalMovesFor,
    ) -> Client {
        let mut c = Client::connect_raw(addr, game).await;
        c.v = v.unwrap_or(0);
        c.send(&ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: token.map(str::to_owned),
            v,
            legal_moves,
        })
        .await;
        match c.next().await {
            ServerMsg::Welcome { side, .. } => c.side = side,
            other => panic!("expected welcome, got {other:?}"),
        }
        c
    }

    /// Opens the socket without saying hello.
    pub async fn connect_raw(addr: SocketAddr, game: &str) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/api/games/{game}/ws"))
            .await
            .expect("websocket connect");
        Client {
            ws,
            v: 0,
            status: None,
            events: Vec::new(),
            versions: Vec::new(),
            errors: Vec::new(),
            side: None,
            snapshots: 0,
        }
    }

    /// Opens a game socket that the server refuses before the upgrade: its
    /// HTTP status and JSON body (panics if the socket opens).
    pub async fn refused(addr: SocketAddr, game: &str) -> (u16, serde_json::Value) {
        match tokio_tungstenite::connect_async(format!("ws://{addr}/api/games/{game}/ws")).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
                let body = serde_json::from_slice(r.body().as_deref().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("HTTP {} without a JSON body: {e}", r.status()));
                (r.status().as_u16(), body)
            }
            other => panic!("expected the socket refused, got {other:?}"),
        }
    }

    /// Says `hello` without a token (this protocol version, no version seen,
    /// the legal moves for every seat); what comes back is left to read.
    pub async fn anonymous_hello(&mut self) {
        self.send(&ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: None,
            v: None,
            legal_moves: Default::default(),
        })
        .await;
    }

    /// Sends a protocol message.
    pub async fn send(&mut self, m: &ClientMsg) {
        self.send_text(serde_json::to_string(m).unwrap()).await;
    }

    /// Sends a protocol message; an error if the connection is gone.
    pub async fn try_send(&mut self, m: &ClientMsg) -> Result<(), tokio_tungstenite::tungstenite::Error> {
        self.ws.send(Message::text(serde_json::to_string(m).unwrap())).await
    }

    /// Sends any text.
    pub async fn send_text(&mut self, t: String) {
        self.ws.send(Message::text(t)).await.expect("ws send");
    }

    /// Plays a move at the current ply.
    pub async fn play(&mut self, mv: &str) {
        let ply = self.status.as_ref().map_or(0, |s| s.ply);
        self.send(&ClientMsg::Move { ply, mv: mv.into() }).await;
    }

    /// The next server message (answers pings), applying it to the tracked state.
    pub async fn next(&mut self) -> ServerMsg {
        loop {
            let frame = tokio::time::timeout(RECV_TIMEOUT, self.ws.next())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "timed out waiting for a server message: side {:?} at v {}, ply {:?}, errors so far {:?}",
                        self.side,
                        self.v,
                        self.status.as_ref().map(|s| s.ply),
                        self.errors
                    )
                });
            let text = match frame {
                Some(Ok(Message::Text(t))) => t,
                Some(Ok(Message::Close(c))) => panic!("connection closed: {c:?}"),
                Some(Ok(_)) => continue,
                other => panic!("connection ended: {other:?}"),
            };
            let msg: ServerMsg =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad server message {text}: {e}"));
            match &msg {
                ServerMsg::Ping { n } => {
                    let n = *n;
                    self.send(&ClientMsg::Pong { n }).await;
                    continue;
                }
                ServerMsg::Snapshot { game } => {
                    self.snapshots += 1;
                    self.v = game.v;
                    self.status = Some(game.status.clone());
                }
                ServerMsg::Event { v, event } => {
                    assert_eq!(*v, self.v + 1, "versions must be gap-free");
                    self.v = *v;
                    self.versions.push(*v);
                    if let Some(e) = event {
                        match &**e {
                            GameEvent::Started { status }
                            | GameEvent::Moved { status, .. }
                            | GameEvent::State { status }
                            | GameEvent::Restored { status }
                            | GameEvent::Arbiter { status, .. } => self.status = Some(status.clone()),
                            _ => {}
                        }
                        self.events.push((*v, (**e).clone()));
                    }
                }
                ServerMsg::Error { code, message } => self.errors.push(ErrorBody {
                    code: *code,
                    message: message.clone(),
                }),
                _ => {}
            }
            return msg;
        }
    }

    /// Reads until an event matching `f` arrives; returns it.
    pub async fn until(&mut self, f: impl Fn(&GameEvent) -> bool) -> GameEvent {
        loop {
            if let ServerMsg::Event { event: Some(e), .. } = self.next().await
                && f(&e)
            {
                return *e;
            }
        }
    }

    /// Reads until version `v` is reached.
    pub async fn until_v(&mut self, v: u64) {
        while self.v < v {
            self.next().await;
        }
    }

    /// Reads until it is `side`'s turn (true) or `side` cannot move any more:
    /// out of the game, or the game over (false).
    pub async fn until_turn(&mut self, side: Side) -> bool {
        loop {
            if let Some(st) = &self.status {
                if !st.live.contains(&side) || st.legal_moves.is_empty() {
                    return false;
                }
                if st.turn == side {
                    return true;
                }
            }
            self.next().await;
        }
    }

    /// Reads until an error arrives; returns its code.
    pub async fn error(&mut self) -> ErrorCode {
        loop {
            if let ServerMsg::Error { code, .. } = self.next().await {
                return code;
            }
        }
    }

    /// Waits until the server closes the connection (panics after the timeout).
    pub async fn closed(mut self) {
        loop {
            let frame = tokio::time::timeout(RECV_TIMEOUT, self.ws.next())
                .await
                .expect("the server should have closed the connection");
            match frame {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Reads until the server closes the connection; returns the Close
    /// frame's code and reason (None: closed without a frame).
    pub async fn close_frame(mut self) -> Option<(u16, String)> {
        loop {
            let frame = tokio::time::timeout(RECV_TIMEOUT, self.ws.next())
                .await
                .expect("the server should have closed the connection");
            match frame {
                Some(Ok(Message::Close(c))) => return c.map(|c| (u16::from(c.code), c.reason.to_string())),
                None | Some(Err(_)) => return None,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Closes the connection.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// Three seated players connected to one game.
#[derive(Debug)]
pub struct Table {
    /// The API client.
    pub api: Api,
    /// The players' sessions, W, B, Y.
    pub sessions: Vec<Session>,
    /// The game id.
    pub game: String,
    /// The players' connections, W, B, Y.
    pub players: Vec<Client>,
}

impl Table {
    /// Creates a game with these settings, seats three guests and connects them.
    pub async fn new(server: &TestServer, settings: &CreateGame) -> Table {
        let api = Api::new(server.base());
        let mut sessions = Vec::new();
        for _ in 0..3 {
            sessions.push(api.guest().await);
        }
        let game = api.create_game(&sessions[0].token, settings).await.id;
        let mut players = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let side = Side::ALL[i];
            let joined = api.join(&s.token, &game, Some(side)).await.expect("join");
            assert_eq!(joined.side, side);
        }
        for s in &sessions {
            players.push(Client::connect(server.addr, &game, Some(&s.token), None).await);
        }
        let mut t = Table {
            api,
            sessions,
            game,
            players,
        };
        t.sync().await;
        t
    }

    /// Brings every player to the room's current version.
    pub async fn sync(&mut self) {
        let v = self.api.state(&self.game).await.v;
        for c in &mut self.players {
            c.until_v(v).await;
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Side {
        self.players[0].status.as_ref().expect("status").turn
    }

    /// The side to move plays `mv`; every player (and `others`) reads until it is played.
    pub async fn play(&mut self, mv: &str, others: &mut [&mut Client]) {
        let turn = self.turn();
        let ply = self.players[0].status.as_ref().expect("status").ply;
        let mover = &mut self.players[turn.index()];
        assert!(
            mover
                .status
                .as_ref()
                .expect("status")
                .legal_moves
                .iter()
                .any(|m| m == mv),
            "{mv} must be among the legal moves sent"
        );
        mover.play(mv).await;
        let played = |e: &GameEvent| matches!(e, GameEvent::Moved { ply: p, .. } if *p == ply);
        for c in self.players.iter_mut() {
            c.until(played).await;
        }
        for c in others.iter_mut() {
            c.until(played).await;
        }
    }
}

/// A Postgres cluster of the test's own (initdb under the temp directory,
/// another port), to stop and start at will — never the shared one. Removed
/// when dropped.
#[derive(Debug)]
pub struct OwnPostgres {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Postgres refuses to run as root: then its tools run as `postgres`.
    as_postgres: bool,
}

impl OwnPostgres {
    /// Where `initdb` is: `$SANGUO_PG_BIN`, the newest /usr/lib/postgresql/*/bin, or the PATH.
    fn find_bin() -> Option<std::path::PathBuf> {
        if let Ok(d) = std::env::var("SANGUO_PG_BIN") {
            return Some(d.into());
        }
        let mut versions: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").exists())
            .collect();
        versions.sort();
        versions.pop().or_else(|| {
            std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p).find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
            })
        })
    }

    fn tool(&self, name: &str) -> std::process::Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        }
    }

    fn run(&self, mut c: std::process::Command, what: &str) {
        let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Creates and starts a cluster; `None` when initdb is not installed.
    pub fn start() -> Option<OwnPostgres> {
        let bin = Self::find_bin()?;
        let as_postgres = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("sanguo-pg-{}", hex_random(6)));
        let pg = OwnPostgres {
            dir,
            bin,
            port,
            as_postgres,
        };
        let mut c = pg.tool("initdb");
        c.arg("-D")
            .arg(&pg.dir)
            .args(["-U", "postgres", "-A", "trust", "--no-sync"]);
        pg.run(c, "initdb");
        pg.resume();
        Some(pg)
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts (again) and waits until it accepts connections.
    pub fn resume(&self) {
        let mut c = self.tool("pg_ctl");
        c.arg("-D")
            .arg(&self.dir)
            .arg("-l")
            .arg(self.dir.join("log"))
            .arg("-o")
            .arg(format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                self.port,
                self.dir.display()
            ))
            .args(["-w", "start"]);
        self.run(c, "pg_ctl start");
    }

    /// Stops it (fast: connections are cut) and waits until it is down.
    pub fn stop(&self) {
        let mut c = self.tool("pg_ctl");
        c.arg("-D").arg(&self.dir).args(["-m", "fast", "-w", "stop"]);
        self.run(c, "pg_ctl stop");
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let mut c = self.tool("pg_ctl");
        c.arg("-D").arg(&self.dir).args(["-m", "immediate", "-w", "stop"]);
        let _ = c.output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The move a person at `status.turn` plays: a level-1 search of the
/// position sent (fast, and it keeps its king).
pub fn persons_move(status: &protocol::Status, seed: u64) -> String {
    let pos = engine::parse_position(&status.position).expect("the server's position text parses");
    let game = engine::Game::from_position(pos, engine::Limits::default());
    bot::choose_move(&game, bot::Level::One, seed)
        .expect("a move at a live turn")
        .to_string()
}

/// A 三国演弈棋 move for the seat to move in `status`: a quiet one (no
/// capture, no check, nobody eliminated) chosen by `seed` when there is one,
/// so that scripted games keep three players; any legal move otherwise.
pub fn yanyi_quiet_move(status: &protocol::Status, seed: u64) -> String {
    let pos = engine::yanyi::parse_position(&status.position).expect("the server's position text parses");
    let moves = pos.legal_moves();
    assert!(!moves.is_empty(), "a move at a live turn");
    let quiet: Vec<_> = moves
        .iter()
        .filter(|m| {
            let mut after = pos;
            let o = after.play_unchecked(**m);
            o.captured.is_none() && o.checked.is_empty() && o.eliminated.is_empty()
        })
        .collect();
    let mut rng = crate::Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    if quiet.is_empty() {
        moves[rng.below(moves.len())].to_string()
    } else {
        quiet[rng.below(quiet.len())].to_string()
    }
}
