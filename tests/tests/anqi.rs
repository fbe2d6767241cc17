//! 三国暗棋 over real sockets, against the real server on Postgres: nothing
//! hidden leaves the server. The test knows the server seed (it reads it from
//! the `game_secrets` table, where only rooms look), derives the layout and
//! salt from it and the seats' published seeds with the engine (the
//! seat-entropy deal, docs/ANQI-DEAL.md §4), and checks the **decoded**
//! content of every frame sent to every seat and to a spectator, every HTTP
//! answer (state, record, lobby) and every log line captured during the
//! game: no face-down piece is named anywhere (no `p=X` token for a point
//! still face down, no full-form `*X` position, no position showing a
//! face-up piece where a face-down one still stands, no layout, no salt, no
//! server seed) — across flips, a reconnect, a server restart (restore), a
//! bot seat and an abort. At the end the server seed, layout and salt are
//! published: the seed matches the hash announced at creation, the engine
//! re-derives exactly the layout and salt from it and the seeds, they verify
//! against the commitment announced at the deal, and the record replays.

use std::collections::HashSet;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use engine::anqi::{Point, deal, notation};
use futures_util::{SinkExt, StreamExt};
use protocol::anqi::AnqiOptions;
use protocol::{ClientMsg, CreateGame, GameEvent, PROTOCOL_VERSION, ServerMsg, Side, Snapshot, Status, Variant};
use sanguo_tests::harness::{Api, TestDb, TestServer};
use serde_json::Value;
use sqlx::{Connection, PgConnection};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

// ---- the server's log, captured -------------------------------------------

/// Everything the server logged in this process (debug level and up).
fn log_buffer() -> Arc<Mutex<Vec<u8>>> {
    static BUF: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUF.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let w = LogWriter(buf.clone());
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "debug,sqlx=warn,hyper=warn,reqwest=warn,tungstenite=warn,tokio_tungstenite=warn",
            ))
            .with_writer(move || w.clone())
            .with_ansi(false)
            .try_init();
        buf
    })
    .clone()
}

#[derive(Clone)]
struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// ---- what must not leak ----------------------------------------------------

/// The game's secret, read from the store, and what a viewer may know so far.
#[derive(Clone, Debug)]
struct Secret {
    /// The server seed, 64 hex digits.
    server_seed: String,
    /// The layout (empty before the deal).
    layout: String,
    /// The salt's hex (empty before the deal).
    salt: String,
    /// Start point → its face-down identity (none before the deal).
    pieces: Vec<(Point, char)>,
}

impl Secret {
    /// The stored secret of a seat-entropy game: `seats ` and the server seed.
    fn parse(text: &str) -> Secret {
        let server_seed = text.strip_prefix("seats ").expect("a seat-entropy game's secret");
        assert!(deal::parse_hex32(server_seed).is_some(), "{text}");
        Secret {
            server_seed: server_seed.to_owned(),
            layout: String::new(),
            salt: String::new(),
            pieces: Vec::new(),
        }
    }

    /// The deal, derived by the engine from the server seed, the game id and
    /// the seats' seeds as published (a missing one is zero bytes).
    fn dealt(&self, game: &str, seeds: &[Option<String>; 3]) -> Secret {
        let server = deal::parse_hex32(&self.server_seed).unwrap();
        let seeds = seeds
            .clone()
            .map(|s| s.map_or([0; 32], |s| deal::parse_hex32(&s).expect("a published seed")));
        let (layout, salt) = deal::seat_entropy_deal(&server, game, &seeds);
        let layout = deal::layout_text(&layout);
        Secret {
            server_seed: self.server_seed.clone(),
            pieces: Point::start_points().zip(layout.chars()).collect(),
            layout,
            salt: deal::to_hex(&salt),
        }
    }
}

/// A viewer's knowledge: the points flipped in what it was sent so far.
#[derive(Clone, Debug)]
struct Knowledge {
    secret: Secret,
    flipped: HashSet<Point>,
    over: bool,
    /// The test is ending the game now: a status whose record ends may publish the deal.
    end_expected: bool,
    /// Frames and answers checked.
    checked: usize,
}

impl Knowledge {
    fn new(secret: &Secret) -> Knowledge {
        Knowledge {
            secret: secret.clone(),
            flipped: HashSet::new(),
            over: false,
            end_expected: false,
            checked: 0,
        }
    }

    /// Learns what a decoded message made public: flips (`+b2` in a move,
    /// `+b2=R` in a snapshot's moves, `+b2=R` in a 收军 line) and the end.
    fn learn(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                if m.get("kind").and_then(Value::as_str) == Some("finished") {
                    self.over = true;
                }
                // The status that ends the game comes before `finished` and publishes the deal.
                let ends = m
                    .get("record")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|l| l.as_str().is_some_and(|l| l.starts_with("end "))));
                if ends {
                    assert!(self.end_expected, "the deal published while the game goes on: {v}");
                    self.over = true;
                }
                if let Some(phase) = m.get("phase").and_then(Value::as_str) {
                    if phase == "finished" {
                        self.over = true;
                    }
                }
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("mv", Value::String(s)) => self.learn_action(s),
                        ("moves", Value::Array(list)) => {
                            for e in list {
                                if let Some(s) = e.as_str() {
                                    self.learn_action(s);
                                }
                                if let Some(s) = e.get("mv").and_then(Value::as_str) {
                                    self.learn_action(s);
                                }
                            }
                        }
                        ("text", Value::String(s)) if s.starts_with("shoujun ") => {
                            for w in s.split(' ').skip(2) {
                                if let Some(p) = w.strip_prefix('+').and_then(|r| Point::parse(&r[..2])) {
                                    self.flipped.insert(p);
                                }
                            }
                        }
                        _ => self.learn(x),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn(x)),
            _ => {}
        }
    }

    fn learn_action(&mut self, s: &str) {
        if let Some(rest) = s.strip_prefix('+') {
            if let Some(p) = rest.get(..2).and_then(Point::parse) {
                self.flipped.insert(p);
            }
        }
    }

    /// Checks one decoded message (`what` names it in a failure).
    fn check(&mut self, v: &Value, what: &str) {
        self.learn(v);
        self.checked += 1;
        self.walk(v, what);
    }

    fn walk(&self, v: &Value, what: &str) {
        match v {
            Value::String(s) => self.check_text(s, what),
            Value::Array(a) => a.iter().for_each(|x| self.walk(x, what)),
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                self.check_text(k, what);
                self.walk(x, what);
            }),
            _ => {}
        }
    }

    /// One text (a field of a message, a log line).
    fn check_text(&self, s: &str, what: &str) {
        if !self.over {
            let sec = &self.secret;
            assert!(
                sec.layout.is_empty() || !s.contains(&sec.layout),
                "{what}: the layout leaked: {s}"
            );
            assert!(
                sec.salt.is_empty() || !s.contains(&sec.salt),
                "{what}: the salt leaked: {s}"
            );
            assert!(!s.contains(&sec.server_seed), "{what}: the server seed leaked: {s}");
        }
        assert!(!s.contains("Piece("), "{what}: an engine value was printed: {s}");
        for &(p, id) in &self.secret.pieces {
            if !self.flipped.contains(&p) {
                let token = format!("{p}={id}");
                assert!(!s.contains(&token), "{what}: {token} names a face-down piece: {s}");
            }
        }
        // A position text: the viewer form, face down wherever a face-down piece still stands.
        if s.contains(" split1") || s.contains(" split2") {
            let placement = s.split(' ').next().unwrap_or("");
            assert!(!placement.contains('*'), "{what}: a full-form position: {s}");
            if placement.matches('/').count() == 4 {
                let pos = notation::parse_position(s).unwrap_or_else(|e| panic!("{what}: bad position {s}: {e}"));
                for &(p, _) in &self.secret.pieces {
                    if !self.flipped.contains(&p) {
                        assert_eq!(pos.piece_at(p), Some((false, None)), "{what}: {p} is face down: {s}");
                    }
                }
            }
        }
    }
}

// ---- a raw socket that checks every frame ----------------------------------

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Sock {
    name: String,
    ws: Ws,
    v: u64,
    side: Option<Side>,
    status: Option<Status>,
    seen: Knowledge,
    frames: usize,
    finished: bool,
    events: Vec<GameEvent>,
}

impl Sock {
    async fn connect(
        name: &str,
        addr: SocketAddr,
        game: &str,
        token: Option<&str>,
        v: Option<u64>,
        k: Knowledge,
    ) -> Sock {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/api/games/{game}/ws"))
            .await
            .expect("websocket");
        let mut s = Sock {
            name: name.to_owned(),
            ws,
            v: v.unwrap_or(0),
            side: None,
            status: None,
            seen: k,
            frames: 0,
            finished: false,
            events: Vec::new(),
        };
        let hello = ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            token: token.map(str::to_owned),
            v,
            legal_moves: Default::default(),
        };
        s.send(&hello).await;
        loop {
            if let ServerMsg::Welcome { side, .. } = s.next().await {
                s.side = side;
                break;
            }
        }
        s
    }

    async fn send(&mut self, m: &ClientMsg) {
        self.ws
            .send(Message::text(serde_json::to_string(m).unwrap()))
            .await
            .expect("send");
    }

    /// The next message, its frame checked for leaks first.
    async fn next(&mut self) -> ServerMsg {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(20), self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("{}: no message within 20 s at v {}", self.name, self.v));
            let text = match frame {
                Some(Ok(Message::Text(t))) => t.to_string(),
                Some(Ok(Message::Close(c))) => panic!("{}: closed {c:?}", self.name),
                Some(Ok(_)) => continue,
                other => panic!("{}: ended {other:?}", self.name),
            };
            self.frames += 1;
            let value: Value = serde_json::from_str(&text).expect("json frame");
            let what = format!(
                "{} frame {} ({})",
                self.name,
                self.frames,
                &text[..text.len().min(1500)]
            );
            self.seen.check(&value, &what);
            let msg: ServerMsg = serde_json::from_value(value).expect("a server message");
            match &msg {
                ServerMsg::Ping { n } => {
                    let n = *n;
                    self.send(&ClientMsg::Pong { n }).await;
                    continue;
                }
                ServerMsg::Snapshot { game } => {
                    self.v = game.v;
                    self.status = Some(game.status.clone());
                    self.finished |= game.result.is_some();
                    self.check_snapshot(game);
                }
                ServerMsg::Event { v, event } => {
                    assert_eq!(*v, self.v + 1, "{}: gap-free versions", self.name);
                    self.v = *v;
                    if let Some(e) = event {
                        self.check_event(e);
                        match &**e {
                            GameEvent::Started { status }
                            | GameEvent::Moved { status, .. }
                            | GameEvent::State { status }
                            | GameEvent::Restored { status }
                            | GameEvent::Arbiter { status, .. } => self.status = Some(status.clone()),
                            GameEvent::Finished { .. } => self.finished = true,
                            _ => {}
                        }
                        self.events.push((**e).clone());
                    }
                }
                _ => {}
            }
            return msg;
        }
    }

    /// A flip's revealed identity is the layout's, and shows where it was flipped.
    fn check_event(&self, e: &GameEvent) {
        if let GameEvent::Moved {
            mv, revealed, status, ..
        } = e
        {
            if let Some(p) = mv.strip_prefix('+').and_then(Point::parse) {
                let id = self.seen.secret.pieces.iter().find(|(q, _)| *q == p).map(|x| x.1);
                assert_eq!(revealed.as_deref().and_then(|r| r.chars().next()), id, "{mv}: revealed");
                assert!(status.position.contains(&id.unwrap().to_string()));
            } else {
                assert_eq!(*revealed, None, "{mv}: only a flip reveals");
            }
        }
    }

    /// Every flip a snapshot lists is face up (or moved away) in its position.
    fn check_snapshot(&self, s: &Snapshot) {
        let pos = notation::parse_position(&s.status.position).expect("viewer position");
        for mv in &s.moves {
            if let Some(p) = mv.strip_prefix('+').and_then(|r| Point::parse(&r[..2])) {
                assert_ne!(
                    pos.piece_at(p),
                    Some((false, None)),
                    "{}: {mv} but {p} is face down",
                    self.name
                );
            }
        }
    }

    /// Reads until version `v`.
    async fn until_v(&mut self, v: u64) {
        while self.v < v {
            self.next().await;
        }
    }

    async fn until_finished(&mut self) {
        while !self.finished {
            self.next().await;
        }
    }
}

// ---- the table -------------------------------------------------------------

async fn secret_of(db: &TestDb, game: &str) -> String {
    let mut c = PgConnection::connect(&db.url).await.expect("db");
    let (secret,): (String,) = sqlx::query_as("SELECT secret FROM game_secrets WHERE game_id = $1")
        .bind(game)
        .fetch_one(&mut c)
        .await
        .expect("the game's secret is stored");
    let _ = c.close().await;
    secret
}

/// Checks the HTTP answers that show the game: its state, its record, the lobby.
async fn check_http(api: &Api, game: &str, k: &mut Knowledge, tag: &str) {
    for path in [
        format!("/api/games/{game}"),
        format!("/api/games/{game}/record"),
        "/api/games?phase=live".to_owned(),
        "/api/games?phase=open".to_owned(),
        "/api/games?phase=finished".to_owned(),
        "/api/games?phase=live&variant=anqi".to_owned(),
    ] {
        let (status, body) = api.get_text(&path).await;
        assert_eq!(status, 200, "{path}: {body}");
        let v: Value = serde_json::from_str(&body).expect("json");
        let mut copy = k.clone();
        copy.check(&v, &format!("{tag} GET {path}"));
        k.checked += 1;
    }
}

fn check_log(k: &Knowledge, from: usize, tag: &str) -> usize {
    let buf = log_buffer();
    let all = buf.lock().unwrap().clone();
    let text = String::from_utf8_lossy(&all[from.min(all.len())..]).to_string();
    for (i, line) in text.lines().enumerate() {
        k.check_text(line, &format!("{tag} log line {i}"));
        // a full-form position anywhere in a line
        assert!(
            !line
                .split([' ', '"'])
                .any(|w| w.contains('/') && w.contains('*') && w.chars().any(|c| "KAERNCPkaerncp".contains(c))),
            "{tag}: a full-form position in the log: {line}"
        );
    }
    all.len()
}

fn create(anqi: AnqiOptions, grace_ms: u64, bots: Option<std::collections::BTreeMap<Side, u8>>) -> CreateGame {
    CreateGame {
        variant: Some(Variant::Anqi),
        anqi: Some(anqi),
        time_control: Some(protocol::TimeControl {
            base_ms: 600_000,
            increment_ms: 0,
            per_move_ms: None,
            byoyomi: None,
        }),
        grace_ms: Some(grace_ms),
        bots,
        ..CreateGame::default()
    }
}

/// A finished game's published seat-entropy deal, checked as a client would
/// with the engine alone: SHA-256 of the server seed is the hash announced
/// at creation, and the server seed, the game id and the published seeds
/// (none: zero bytes) give exactly the published layout and salt.
fn check_seat_entropy(game: &str, a: &protocol::anqi::AnqiStatus) {
    let server =
        deal::parse_hex32(a.server_seed.as_deref().expect("the server seed is published")).expect("64 hex digits");
    assert_eq!(a.server_hash.as_deref(), Some(deal::server_seed_hash(&server).as_str()));
    let seeds = a
        .seeds
        .clone()
        .expect("the seeds")
        .map(|s| s.map_or([0; 32], |s| deal::parse_hex32(&s).unwrap()));
    let (layout, salt) = deal::seat_entropy_deal(&server, game, &seeds);
    assert_eq!(a.layout.as_deref(), Some(deal::layout_text(&layout).as_str()));
    assert_eq!(a.salt.as_deref(), Some(deal::to_hex(&salt).as_str()));
    assert_eq!(
        a.commitment.as_deref(),
        Some(deal::commitment(game, &deal::layout_text(&layout), &salt).as_str())
    );
}

/// An action for a seat: a flip or a move in turn, never the same (deterministic).
fn pick(status: &Status, n: usize) -> String {
    let moves: Vec<&str> = status.legal_moves.iter().filter(|m| !m.starts_with('+')).collect();
    if n % 3 == 2 && !moves.is_empty() {
        return moves[n % moves.len()].to_string();
    }
    status.legal_moves[(n * 7 + 3) % status.legal_moves.len()].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_hidden_leaves_the_server() {
    let log = log_buffer();
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let w = api.guest().await;
    let b = api.guest().await;
    // Game A: two people and a bot; fixed seats so that the test knows who is where.
    let opts = AnqiOptions {
        fixed_seats: true,
        ..AnqiOptions::default()
    };
    let snap = api
        .create_game(&w.token, &create(opts.clone(), 60_000, Some([(Side::Y, 1)].into())))
        .await;
    let game = snap.id.clone();
    let secret = Secret::parse(&secret_of(&db, &game).await);
    let server_seed = deal::parse_hex32(&secret.server_seed).unwrap();
    let a = snap.status.anqi.clone().expect("anqi status");
    assert_eq!(
        a.server_hash,
        Some(deal::server_seed_hash(&server_seed)),
        "the server's seed hash is public from the creation"
    );
    assert_eq!(
        (a.commitment, a.seeds),
        (None, Some([None, None, None])),
        "nothing dealt yet"
    );
    let base = Knowledge::new(&secret);
    let mut http_k = base.clone();
    let log_start = check_log(&base, 0, "before");
    check_http(&api, &game, &mut http_k, "open").await;
    // A bad seed is refused with its reason, and nothing changes.
    let before = api.state(&game).await;
    for bad in ["xyz", &"AB".repeat(32), &"ab".repeat(31)] {
        let e = api
            .join_seeded(&w.token, &game, Some(Side::W), Some(bad))
            .await
            .unwrap_err();
        assert_eq!((e.status, e.body.code), (400, protocol::ErrorCode::BadRequest), "{bad}");
        assert!(e.body.message.contains("64 lowercase hex digits"), "{}", e.body.message);
    }
    let after = api.state(&game).await;
    assert_eq!(
        (after.v, &after.seats),
        (before.v, &before.seats),
        "a refused seed seats nobody"
    );
    let (seed_w, seed_b) = (
        "5e".repeat(32),
        deal::to_hex(&std::array::from_fn::<u8, 32, _>(|i| i as u8 * 7)),
    );
    api.join_seeded(&w.token, &game, Some(Side::W), Some(&seed_w))
        .await
        .expect("W joins with its seed");
    let mut spec = Sock::connect("spectator", server.addr, &game, None, None, base.clone()).await;
    let mut ws = Sock::connect("W", server.addr, &game, Some(&w.token), None, base.clone()).await;
    // W's seed is public as soon as it arrives.
    while ws.status.is_none() {
        ws.next().await;
    }
    assert_eq!(
        ws.status.as_ref().unwrap().anqi.as_ref().unwrap().seeds,
        Some([Some(seed_w.clone()), None, None])
    );
    // The last person's join fills the table (the bot sends no seed): dealt at once.
    api.join_seeded(&b.token, &game, Some(Side::B), Some(&seed_b))
        .await
        .expect("B joins with its seed");
    let mut bs = Sock::connect("B", server.addr, &game, Some(&b.token), None, base.clone()).await;
    let v = api.state(&game).await.v;
    for s in [&mut spec, &mut ws, &mut bs] {
        s.until_v(v).await;
    }
    let a = spec.status.as_ref().unwrap().anqi.clone().unwrap();
    let seeds = a.seeds.clone().expect("the seeds");
    assert_eq!(
        seeds,
        [Some(seed_w.clone()), Some(seed_b.clone()), None],
        "the bot's seed is none"
    );
    let secret = secret.dealt(&game, &seeds);
    for s in [&mut spec, &mut ws, &mut bs] {
        s.seen.secret = secret.clone();
    }
    let commitment = a.commitment.clone().expect("the commitment, announced at the deal");
    assert_eq!(
        commitment,
        deal::commitment_hex(&game, &secret.layout, &secret.salt),
        "the commitment announced at the deal is the seat-entropy deal's"
    );
    // A seed after the deal is refused (and the game goes on).
    ws.send(&ClientMsg::Seed { seed: "01".repeat(32) }).await;
    loop {
        if let ServerMsg::Error { code, message } = ws.next().await {
            assert_eq!(code, protocol::ErrorCode::BadRequest);
            assert!(message.contains("dealt"), "{message}");
            break;
        }
    }

    // Plays `n` actions of the people (the bot answers on its own); every socket follows.
    let mut count = 0usize;
    async fn play(n: usize, count: &mut usize, ws: &mut Sock, bs: &mut Sock, spec: &mut Sock, api: &Api, game: &str) {
        for _ in 0..n {
            // wait until a person is to move
            loop {
                let st = spec.status.clone().unwrap();
                if spec.finished || st.legal_moves.is_empty() {
                    return;
                }
                if st.turn != Side::Y {
                    break;
                }
                spec.next().await;
            }
            let st = spec.status.clone().unwrap();
            let mover = if st.turn == Side::W { &mut *ws } else { &mut *bs };
            mover.until_v(spec.v).await;
            let mv = pick(&st, *count);
            *count += 1;
            mover
                .send(&ClientMsg::Move {
                    ply: st.ply,
                    mv: mv.clone(),
                })
                .await;
            while spec.status.as_ref().unwrap().ply == st.ply && !spec.finished {
                spec.next().await;
            }
            let v = api.state(game).await.v.min(spec.v);
            ws.until_v(v).await;
            bs.until_v(v).await;
        }
    }
    play(6, &mut count, &mut ws, &mut bs, &mut spec, &api, &game).await;
    check_http(&api, &game, &mut spec.seen.clone(), "after 6").await;

    // A reconnect: B drops and comes back with its version.
    let bv = bs.v;
    let bk = bs.seen.clone();
    drop(bs);
    let mut bs = Sock::connect("B again", server.addr, &game, Some(&b.token), Some(bv), bk).await;
    play(6, &mut count, &mut ws, &mut bs, &mut spec, &api, &game).await;
    check_http(&api, &game, &mut spec.seen.clone(), "after 12").await;
    let flipped_before_restart = spec.seen.flipped.len();
    assert!(
        flipped_before_restart >= 6,
        "flips were played: {flipped_before_restart}"
    );

    // A restart: the room is restored from the store (its secret included).
    let (wv, bv, sv) = (ws.v, bs.v, spec.v);
    let (wk, bk, sk) = (ws.seen.clone(), bs.seen.clone(), spec.seen.clone());
    drop((ws, bs, spec));
    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let mut spec = Sock::connect("spectator again", server.addr, &game, None, Some(sv), sk).await;
    let mut ws = Sock::connect("W again", server.addr, &game, Some(&w.token), Some(wv), wk).await;
    let mut bs = Sock::connect("B after restart", server.addr, &game, Some(&b.token), Some(bv), bk).await;
    let v = api.state(&game).await.v;
    for s in [&mut spec, &mut ws, &mut bs] {
        s.until_v(v).await;
    }
    assert_eq!(
        spec.status
            .as_ref()
            .unwrap()
            .anqi
            .as_ref()
            .unwrap()
            .commitment
            .as_deref(),
        Some(commitment.as_str()),
        "the same deal after the restart"
    );
    play(6, &mut count, &mut ws, &mut bs, &mut spec, &api, &game).await;
    check_http(&api, &game, &mut spec.seen.clone(), "after restart").await;
    let log_mid = check_log(&spec.seen, log_start, "during the game");

    // The end: both people resign; the bot is first.
    for s in [&mut spec, &mut ws, &mut bs] {
        s.seen.end_expected = true;
    }
    if !spec.finished {
        ws.send(&ClientMsg::Resign).await;
        bs.send(&ClientMsg::Resign).await;
    }
    for s in [&mut spec, &mut ws, &mut bs] {
        s.until_finished().await;
    }
    let end = api.state(&game).await;
    let a = end.status.anqi.clone().expect("anqi status");
    assert_eq!(
        a.layout.as_deref(),
        Some(secret.layout.as_str()),
        "the layout is published"
    );
    assert_eq!(a.salt.as_deref(), Some(secret.salt.as_str()), "the salt is published");
    assert_eq!(a.commitment.as_deref(), Some(commitment.as_str()));
    check_seat_entropy(&game, &a);
    let record = a.record.clone().expect("the record is published");
    let (options, settings) = (engine::anqi::Options::default(), engine::anqi::Settings::default());
    deal::verify(
        &game,
        &commitment,
        &secret.layout,
        &secret.salt,
        &record,
        &deal::GameConfig {
            options,
            teams: None,
            settings,
        },
    )
    .unwrap_or_else(|e| panic!("the published game verifies: {e}\n{record:?}"));
    let result = end.result.expect("a result");
    assert_eq!(result.placing.map(|p| p[2]), Some(1), "the bot is first");
    check_log(&spec.seen, log_mid, "at the end");
    for s in [&spec, &ws, &bs] {
        assert!(s.frames >= 10, "{} saw {} frames", s.name, s.frames);
    }
    assert!(
        spec.seen.flipped.len() > flipped_before_restart,
        "flips after the restart"
    );

    // Game B: an abort. Seat 2 never comes back before its first action.
    let (p1, p2, p3) = (api.guest().await, api.guest().await, api.guest().await);
    let snap = api.create_game(&p1.token, &create(opts.clone(), 3_000, None)).await;
    let game = snap.id;
    let secret = Secret::parse(&secret_of(&db, &game).await);
    let seeds = ["a0", "b1", "c2"].map(|b| b.repeat(32));
    for ((p, side), seed) in [(&p1, Side::W), (&p2, Side::B), (&p3, Side::Y)].into_iter().zip(&seeds) {
        api.join_seeded(&p.token, &game, Some(side), Some(seed))
            .await
            .expect("join");
    }
    let secret = secret.dealt(&game, &seeds.clone().map(Some));
    let mut base = Knowledge::new(&secret);
    // This game ends by the abort the test provokes.
    base.end_expected = true;
    let mut spec = Sock::connect("B spectator", server.addr, &game, None, None, base.clone()).await;
    let mut s1 = Sock::connect("B seat 1", server.addr, &game, Some(&p1.token), None, base.clone()).await;
    let mut s3 = Sock::connect("B seat 3", server.addr, &game, Some(&p3.token), None, base.clone()).await;
    for s in [&mut spec, &mut s1, &mut s3] {
        while s.status.is_none() {
            s.next().await;
        }
    }
    let ply = s1.status.as_ref().unwrap().ply;
    s1.send(&ClientMsg::Move { ply, mv: "+e5".into() }).await; // not a start point: refused
    s1.send(&ClientMsg::Move { ply, mv: "+a1".into() }).await;
    for s in [&mut spec, &mut s1, &mut s3] {
        s.until_finished().await;
    }
    check_http(&api, &game, &mut spec.seen.clone(), "aborted").await;
    let end = api.state(&game).await;
    assert!(
        matches!(
            end.result.as_ref().unwrap().ending,
            protocol::Ending::Aborted { by: Side::B }
        ),
        "{:?}",
        end.result
    );
    let a = end.status.anqi.unwrap();
    assert_eq!(a.layout.as_deref(), Some(secret.layout.as_str()));
    assert_eq!(
        Some(deal::commitment_hex(&game, &secret.layout, &secret.salt)),
        a.commitment
    );
    check_seat_entropy(&game, &a);
    check_log(&spec.seen, 0, "whole log");
    assert!(!log.lock().unwrap().is_empty(), "the server logged");
    server.stop().await;
}

/// Options are checked at creation: every bad one is refused with its reason
/// and creates nothing; anqi options on another variant are refused too. A
/// game of drawn seats tells each joiner its seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_are_checked_and_seats_drawn() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let s = api.guest().await;
    let before: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    for (body, words) in [
        (
            serde_json::json!({"variant": "anqi", "anqi": {"mode": "race", "target": 0}}),
            "race target",
        ),
        (
            serde_json::json!({"variant": "anqi", "anqi": {"fanchi": true}}),
            "double",
        ),
        (
            serde_json::json!({"variant": "anqi", "anqi": {"teams": [1, 2, 2]}}),
            "assigned teams",
        ),
        (
            serde_json::json!({"variant": "anqi", "anqi": {"no_progress_rounds": 500}}),
            "no-progress",
        ),
        (serde_json::json!({"variant": "anqi", "anqi": {"mode": "blitz"}}), ""),
        (serde_json::json!({"variant": "sanguo", "anqi": {}}), "anqi"),
    ] {
        let e = api
            .post::<Value>("/api/games", Some(&s.token), &body)
            .await
            .unwrap_err();
        assert_eq!(e.status, 400, "{body}: {:?}", e.body);
        assert!(e.body.message.contains(words), "{body}: {}", e.body.message);
    }
    let after: Vec<protocol::GameSummary> = api.get("/api/games?phase=open").await.unwrap();
    assert_eq!(before.len(), after.len(), "a refused game is not created");
    // Drawn seats: three players who all ask for W get the three seats.
    let snap = api
        .create_game(&s.token, &create(AnqiOptions::default(), 60_000, None))
        .await;
    let mut sides = Vec::new();
    for i in 0..3 {
        let p = api.guest().await;
        let seed = format!("{i}").repeat(64);
        let joined = api.join_seeded(&p.token, &snap.id, Some(Side::W), Some(&seed)).await;
        sides.push(joined.expect("a seat").side);
    }
    sides.sort();
    assert_eq!(sides, Side::ALL.to_vec());
    let st = api.state(&snap.id).await;
    assert_eq!(st.phase, protocol::Phase::Live);
    assert_eq!(st.settings.anqi, Some(AnqiOptions::default()));
    server.stop().await;
}

/// A restart between the seats' joins and the deal: the server seed and the
/// seeds sent so far are stored with the game, the full table waits again
/// for the missing seeds (sent over the socket by the seats the server did
/// not see a seed from), and the deal is the seat-entropy deal of all three.
/// A seed twice, or for 三国象棋, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_before_the_deal_keeps_the_seeds_and_deals_from_all_three() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let (p1, p2, p3) = (api.guest().await, api.guest().await, api.guest().await);
    // The server seats the three (an open seek, as a tournament's table or quick
    // pairing does): none of them sent a seed with a join request.
    let seek: serde_json::Value = api
        .post(
            "/api/seeks",
            Some(&p1.token),
            &serde_json::json!({"variant": "anqi", "time_control": {"base_ms": 60_000, "increment_ms": 0}}),
        )
        .await
        .expect("a seek");
    let path = format!("/api/seeks/{}/join", seek["seek"]["id"].as_str().unwrap());
    let _: serde_json::Value = api.post(&path, Some(&p2.token), &serde_json::json!({})).await.unwrap();
    let matched: serde_json::Value = api.post(&path, Some(&p3.token), &serde_json::json!({})).await.unwrap();
    assert_eq!(matched["state"], "matched", "{matched}");
    let game = matched["game"].as_str().unwrap().to_owned();
    let secret = Secret::parse(&secret_of(&db, &game).await);
    let seats = api.state(&game).await.seats;
    let side_of = |p: &protocol::Session| {
        Side::ALL
            .into_iter()
            .find(|s| seats[s.index()].as_ref().is_some_and(|x| x.player == p.player))
            .expect("seated")
    };
    let (side1, side2, side3) = (side_of(&p1), side_of(&p2), side_of(&p3));
    let token_at = |side: Side| {
        [&p1, &p2, &p3]
            .into_iter()
            .find(|p| side_of(p) == side)
            .unwrap()
            .token
            .clone()
    };
    let st = api.state(&game).await;
    assert_eq!(st.phase, protocol::Phase::Open, "the full table waits for seeds");
    assert_eq!(st.status.anqi.as_ref().unwrap().commitment, None);
    // p1 sends its seed from its socket before the restart.
    let s1 = "1f".repeat(32);
    {
        let base = Knowledge::new(&secret);
        let mut first = Sock::connect("first", server.addr, &game, Some(&p1.token), None, base).await;
        first.send(&ClientMsg::Seed { seed: s1.clone() }).await;
        while api.state(&game).await.status.anqi.unwrap().seeds.unwrap()[side1.index()].is_none() {
            first.next().await;
        }
    }
    // 三国象棋 takes no seed.
    let sanguo = api.create_game(&p1.token, &CreateGame::default()).await;
    let e = api
        .join_seeded(&p2.token, &sanguo.id, None, Some(&s1))
        .await
        .unwrap_err();
    assert_eq!(e.status, 400, "{:?}", e.body);

    server.stop().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let api = Api::new(server.base());
    let st = api.state(&game).await;
    assert_eq!(st.phase, protocol::Phase::Open);
    let a = st.status.anqi.clone().unwrap();
    let mut expected: [Option<String>; 3] = [None, None, None];
    expected[side1.index()] = Some(s1.clone());
    assert_eq!(a.seeds, Some(expected), "the seed survived the restart");
    assert_eq!(
        a.server_hash,
        Some(deal::server_seed_hash(&deal::parse_hex32(&secret.server_seed).unwrap()))
    );
    let base = Knowledge::new(&secret);
    let mut spec = Sock::connect("spectator", server.addr, &game, None, None, base.clone()).await;
    let mut b = Sock::connect("second", server.addr, &game, Some(&p2.token), None, base.clone()).await;
    let mut y = Sock::connect("third", server.addr, &game, Some(&p3.token), None, base.clone()).await;
    let (s2, s3) = ("2e".repeat(32), "3d".repeat(32));
    b.send(&ClientMsg::Seed { seed: s2.clone() }).await;
    b.send(&ClientMsg::Seed { seed: s3.clone() }).await;
    loop {
        if let ServerMsg::Error { message, .. } = b.next().await {
            assert!(message.contains("already"), "{message}");
            break;
        }
    }
    y.send(&ClientMsg::Seed { seed: "zz".into() }).await;
    loop {
        if let ServerMsg::Error { code, .. } = y.next().await {
            assert_eq!(code, protocol::ErrorCode::BadRequest);
            break;
        }
    }
    y.send(&ClientMsg::Seed { seed: s3.clone() }).await;
    while !spec.events.iter().any(|e| matches!(e, GameEvent::Started { .. })) {
        spec.next().await;
    }
    let a = spec.status.as_ref().unwrap().anqi.clone().unwrap();
    let mut expected: [Option<String>; 3] = [None, None, None];
    expected[side1.index()] = Some(s1);
    expected[side2.index()] = Some(s2);
    expected[side3.index()] = Some(s3);
    assert_eq!(a.seeds, Some(expected));
    let secret = secret.dealt(&game, a.seeds.as_ref().unwrap());
    assert_eq!(
        a.commitment,
        Some(deal::commitment_hex(&game, &secret.layout, &secret.salt))
    );
    for s in [&mut spec, &mut b, &mut y] {
        s.seen.secret = secret.clone();
    }
    // One flip each of W (over HTTP-less W: by its socket) and the end by resignations.
    let mut w = Sock::connect("W", server.addr, &game, Some(&token_at(Side::W)), None, base.clone()).await;
    let mut b = Sock::connect("B", server.addr, &game, Some(&token_at(Side::B)), None, base.clone()).await;
    b.seen.secret = secret.clone();
    w.seen.secret = secret.clone();
    w.send(&ClientMsg::Move {
        ply: 0,
        mv: "+a1".into(),
    })
    .await;
    while spec.status.as_ref().unwrap().ply == 0 {
        spec.next().await;
    }
    for s in [&mut spec, &mut w, &mut b, &mut y] {
        s.seen.end_expected = true;
    }
    w.send(&ClientMsg::Resign).await;
    b.send(&ClientMsg::Resign).await;
    spec.until_finished().await;
    let end = api.state(&game).await;
    let a = end.status.anqi.unwrap();
    check_seat_entropy(&game, &a);
    assert_eq!(a.layout.as_deref(), Some(secret.layout.as_str()));
    check_http(&api, &game, &mut spec.seen.clone(), "seeded after a restart").await;
    server.stop().await;
}
