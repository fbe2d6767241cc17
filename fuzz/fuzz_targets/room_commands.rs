//! The room's command handler: a synchronous `server::room::core::Room` (no
//! runtime, no store, time passed in) of the variant the first byte names,
//! fed a sequence of commands decoded from the rest — joins (with or without
//! a seat and a seed), bots, actions from any seat (legal moves, stale and
//! future plies, arbitrary move texts, resignations, offers, answers, seeds),
//! chat in both channels, ticks with time advancing, connects and
//! disconnects, arbiter actions. After each command:
//!
//! - nothing panicked, and the version never went down;
//! - a refused command changed nothing: the version and every viewer's view
//!   are as before;
//! - the step's events carry the versions v+1, v+2, … with no gap, ending at
//!   the room's version, and a client that reconnects at the old version is
//!   replayed exactly these events (`missed_since`, whose log relists legal
//!   moves);
//! - an event serialised by reference (`encode_view`) is what serialising
//!   its view gives;
//! - 三国暗棋: no viewer's projection (snapshot or event, seats and
//!   spectators) names a face-down piece, shows a face-up piece where one
//!   still stands face down, or contains the layout, the salt or the server
//!   seed before the game is over. The target knows the secret: the server
//!   seed the room hands the store at creation, and the seeds it accepted,
//!   from which the engine derives the layout and salt as the room does.
//!
//! At the end, a room restored from the step's writes (as the store would
//! load them) shows the same game: status (clocks aside), moves, departures,
//! result, phase.
//!
//! The room draws 三国暗棋's server seed and its seating from the OS, so a
//! crash input may need a few runs to reproduce.
#![no_main]

use std::collections::HashSet;

use engine::anqi::{Point, deal, notation};
use libfuzzer_sys::fuzz_target;
use protocol::anqi::{AnqiOptions, Mode, Scoring};
use protocol::tournament::ArbiterAction;
use protocol::{
    Byoyomi, Channel, Direction, ErrorBody, GameEvent, GameSettings, Outcome, Phase, ServerMsg, Side, Snapshot, Status,
    TimeControl, Variant,
};
use serde_json::Value;
use server::room::core::{Act, Room, Step, Viewer, chat_slot};
use server::room::games::parse_seed;
use server::store::{Op, Player, StoredGame};

/// Every distinct viewer: the three seats, then the spectators.
const VIEWERS: [Viewer; 4] = [
    Viewer::Seat(Side::W),
    Viewer::Seat(Side::B),
    Viewer::Seat(Side::Y),
    Viewer::Spectator,
];
/// The game id: 12 base-32 characters, as clients see ids.
const ID: &str = "k7pq2xw9mde4";
/// People who may join or write (bots are made apart).
const PEOPLE: usize = 6;
/// Commands per input at most.
const MAX_COMMANDS: usize = 256;
/// Seeds a seat may send: three valid ones, and bad ones.
const SEEDS: [&str; 5] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "abababababababababababababababababababababababababababababababab",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "not a seed",
    "ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB",
];

/// The fuzz bytes, read one at a time (zeros once spent).
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn left(&self) -> bool {
        self.at < self.data.len()
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    fn side(&mut self) -> Side {
        Side::ALL[self.below(3)]
    }

    fn maybe_side(&mut self) -> Option<Side> {
        match self.below(4) {
            3 => None,
            i => Some(Side::ALL[i]),
        }
    }

    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// A short text of the fuzz bytes (lossy UTF-8), `len` bytes at most.
    fn text(&mut self, len: usize) -> String {
        let n = self.below(len + 1);
        let bytes: Vec<u8> = (0..n).map(|_| self.byte()).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn person(i: usize) -> Player {
    Player {
        id: format!("p{i}"),
        name: format!("player {i}"),
        account: i % 2 == 0,
        bot: None,
    }
}

fn settings(b: &mut Bytes) -> GameSettings {
    let variant = Variant::ALL[b.below(3)];
    let base_ms = [0, 1_000, 10_000, 60_000, 600_000][b.below(5)];
    let time_control = TimeControl {
        base_ms,
        increment_ms: [0, 500, 5_000][b.below(3)],
        per_move_ms: b.flag().then(|| [1_000, 5_000, 30_000][b.below(3)]),
        byoyomi: (b.flag() || base_ms == 0).then(|| Byoyomi {
            periods: 1 + b.below(3) as u32,
            period_ms: [1_000, 5_000][b.below(2)],
        }),
    };
    let anqi = (variant == Variant::Anqi).then(|| {
        let mode = [Mode::Annihilation, Mode::Shoujun, Mode::Race][b.below(3)];
        let o = b.byte();
        AnqiOptions {
            mode,
            target: (mode == Mode::Race).then(|| [10, 30, 60][b.below(3)]),
            scoring: [Scoring::Net, Scoring::RemainingPoints, Scoring::RemainingCount][b.below(3)],
            no_progress_rounds: b.flag().then(|| 1 + b.below(8) as u32),
            split2: o & 1 != 0,
            enhanced: o & 2 != 0,
            double: o & 4 != 0,
            fanchi: o & 8 != 0,
            xqlegs: o & 16 != 0,
            teams: (o & 32 != 0).then(|| [[1, 2, 3], [3, 1, 2], [2, 3, 1]][b.below(3)]),
            fixed_seats: o & 64 != 0,
        }
    });
    GameSettings {
        variant,
        time_control,
        direction: if b.flag() { Direction::Cw } else { Direction::Ccw },
        public: true,
        players_chat: b.byte() % 8 != 0,
        grace_ms: [1_000, 10_000, 60_000][b.below(3)],
        rated: false,
        anqi,
    }
}

/// What a command did: a step, or a refusal.
enum Done {
    Step(Step),
    Refused(ErrorBody),
}

/// The run: the room, the time, what the target knows and what was written.
struct Run {
    room: Room,
    now: u64,
    /// Writes of every accepted command, in order (what the store would hold).
    ops: Vec<Op>,
    /// 三国暗棋: the server seed (the secret handed over at creation).
    server_seed: Option<[u8; 32]>,
    /// 三国暗棋: the seeds the room accepted, per seat.
    seeds: [Option<[u8; 32]>; 3],
    /// Bots made so far (their ids).
    bots: usize,
    /// The players seated, for a restore.
    seated: Vec<Player>,
    /// The secret as last derived.
    secret: Option<Secret>,
}

impl Run {
    fn command(&mut self, b: &mut Bytes) -> Done {
        // Every command comes a little later; ticks jump further.
        self.now += u64::from(b.byte());
        let now = self.now;
        let wall = now as i64;
        let r = match b.below(12) {
            0 => {
                let who = person(b.below(PEOPLE));
                let side = b.maybe_side();
                let seed = b.flag().then(|| SEEDS[b.below(SEEDS.len())]);
                let asked = b.flag();
                let joined = if asked || seed.is_some() {
                    self.room.join_seeded(who.clone(), side, seed, now, wall)
                } else {
                    self.room.join(who.clone(), side, now, wall)
                };
                joined.map(|(side, step)| {
                    if let Some(seed) = seed {
                        self.seeds[side.index()] = parse_seed(seed).ok();
                    }
                    self.seated.push(who);
                    step
                })
            }
            1 => {
                let level = [bot::Level::One, bot::Level::Two, bot::Level::Three][b.below(3)];
                let id = format!("bot-{}", self.bots);
                self.bots += 1;
                let side = b.maybe_side();
                self.room.add_bot(id.clone(), level, side, now, wall).map(|(_, step)| {
                    self.seated.push(Player::new_bot(id, level));
                    step
                })
            }
            2..=4 => {
                let status = self.room.status(now);
                let side = match b.below(4) {
                    3 => self.room.game().to_move().unwrap_or(Side::W),
                    i => Side::ALL[i],
                };
                let pick = b.byte();
                let ply = status.ply;
                let (ply, mv) = match pick {
                    0..200 if !status.legal_moves.is_empty() => (
                        ply,
                        status.legal_moves[usize::from(pick) % status.legal_moves.len()].clone(),
                    ),
                    200..230 if !status.legal_moves.is_empty() => {
                        let wrong = if pick % 2 == 0 { ply.saturating_sub(1) } else { ply + 1 };
                        (
                            wrong,
                            status.legal_moves[usize::from(pick) % status.legal_moves.len()].clone(),
                        )
                    }
                    230..240 => {
                        // A move played before, resent at its ply.
                        let moves = self.room.view(Viewer::Spectator, now).moves;
                        match moves.len() {
                            0 => (ply, String::new()),
                            n => {
                                let i = usize::from(b.byte()) % n;
                                (i as u32, moves[i].clone())
                            }
                        }
                    }
                    _ => (ply, b.text(16)),
                };
                let lag = u64::from(b.byte()) * 4;
                self.room.act(side, Act::Move { ply, mv }, lag, now, wall)
            }
            5 => {
                let side = b.side();
                let act = match b.below(5) {
                    0 => Act::Resign,
                    1 => Act::OfferDraw,
                    2 => Act::AnswerDraw(b.flag()),
                    3 => Act::Seed(SEEDS[b.below(SEEDS.len())].to_owned()),
                    _ => Act::Seed(b.text(70)),
                };
                let seed = match &act {
                    Act::Seed(s) => parse_seed(s).ok(),
                    _ => None,
                };
                self.room.act(side, act, 0, now, wall).inspect(|_| {
                    if seed.is_some() && self.seeds[side.index()].is_none() {
                        self.seeds[side.index()] = seed;
                    }
                })
            }
            6 => {
                let who = person(b.below(PEOPLE));
                let side = if b.flag() {
                    self.room.seat_of(&who.id)
                } else {
                    b.maybe_side()
                };
                let channel = if b.flag() {
                    Channel::Players
                } else {
                    Channel::Spectators
                };
                let text = match b.below(4) {
                    0 => "x".repeat(protocol::MAX_CHAT_CHARS + usize::from(b.byte() % 2)),
                    _ => b.text(24),
                };
                self.room.chat(&who, side, channel, &text, now, wall)
            }
            7 | 8 => {
                let exp = b.below(23);
                self.now += (1u64 << exp) + u64::from(b.byte());
                Ok(self.room.tick(self.now, self.now as i64))
            }
            9 => Ok(self.room.connected(b.maybe_side())),
            10 => Ok(self.room.disconnected(b.maybe_side(), now)),
            _ => {
                let action = match b.below(5) {
                    0 => ArbiterAction::Pause,
                    1 => ArbiterAction::Resume,
                    2 => ArbiterAction::AddTime {
                        side: b.side(),
                        ms: [0, 1, 60_000, 3_600_000, 3_600_001][b.below(5)],
                    },
                    3 => ArbiterAction::Adjudicate {
                        outcomes: [(); 3].map(|_| [Outcome::Win, Outcome::Draw, Outcome::Loss][b.below(3)]),
                    },
                    _ => ArbiterAction::Abort,
                };
                let reason = match b.below(3) {
                    0 => String::new(),
                    1 => "y".repeat(501),
                    _ => "the arbiter's reason".to_owned(),
                };
                self.room.arbiter(&person(5), action, &reason, now, wall)
            }
        };
        match r {
            Ok(step) => Done::Step(step),
            Err(e) => Done::Refused(e),
        }
    }

    /// What the target knows of the game's secret now: the server seed, and
    /// once dealt, the layout and salt as the engine derives them (made
    /// again only when the deal happened since).
    fn refresh_secret(&mut self) {
        let dealt = self.room.phase != Phase::Open;
        if self.secret.as_ref().is_none_or(|s| s.dealt != dealt) {
            self.secret = self.derive_secret(dealt);
        }
    }

    fn derive_secret(&self, dealt: bool) -> Option<Secret> {
        let server = self.server_seed?;
        let (layout, salt) = dealt
            .then(|| {
                let seeds = self.seeds.map(|s| s.unwrap_or([0; 32]));
                let (layout, salt) = deal::seat_entropy_deal(&server, ID, &seeds);
                (deal::layout_text(&layout), deal::to_hex(&salt))
            })
            .unwrap_or_default();
        let pieces: Vec<(Point, char)> = if dealt {
            Point::start_points().zip(layout.chars()).collect()
        } else {
            Vec::new()
        };
        Some(Secret {
            dealt,
            server_seed: deal::to_hex(&server),
            tokens: pieces.iter().map(|&(p, id)| (p, format!("{p}={id}"))).collect(),
            pieces,
            layout,
            salt,
        })
    }
}

/// 三国暗棋's secret as the target knows it.
struct Secret {
    /// Whether the layout is dealt (and known here).
    dealt: bool,
    server_seed: String,
    layout: String,
    salt: String,
    /// Start point → its identity (none before the deal).
    pieces: Vec<(Point, char)>,
    /// Start point → the words that would name its piece (`b2=R`).
    tokens: Vec<(Point, String)>,
}

/// The points made public so far: flips in the record (`+b2=R`), and the
/// face-down pieces a 收军 removal revealed (`shoujun … +b2=R`).
fn flipped(snap: &Snapshot) -> HashSet<Point> {
    let mut out = HashSet::new();
    let mut flip = |w: &str| {
        if let Some(p) = w.strip_prefix('+').and_then(|r| r.get(..2)).and_then(Point::parse) {
            out.insert(p);
        }
    };
    for m in &snap.moves {
        flip(m);
    }
    for n in &snap.notes {
        if n.text.starts_with("shoujun ") {
            n.text.split(' ').for_each(&mut flip);
        }
    }
    out
}

/// No text of `v` names a face-down piece or holds the secret, and every
/// position in it shows face down what still stands face down.
fn check_value(v: &Value, secret: &Secret, up: &HashSet<Point>, what: &str) {
    match v {
        Value::String(s) => check_text(s, secret, Some(up), what),
        Value::Array(a) => a.iter().for_each(|x| check_value(x, secret, up, what)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            check_text(k, secret, Some(up), what);
            if let ("position", Value::String(p)) = (k.as_str(), x) {
                check_position(p, secret, up, what);
            }
            check_value(x, secret, up, what);
        }),
        _ => {}
    }
}

/// One text: no server seed, layout or salt; with the points face up so far
/// (`up`), no `p=X` naming a piece at a point still face down (a refusal's
/// words may echo the fuzz's own move text, which may say anything short).
fn check_text(s: &str, secret: &Secret, up: Option<&HashSet<Point>>, what: &str) {
    assert!(!s.contains(&secret.server_seed), "{what}: the server seed leaked: {s}");
    assert!(
        secret.layout.is_empty() || !s.contains(&secret.layout),
        "{what}: the layout leaked: {s}"
    );
    assert!(
        secret.salt.is_empty() || !s.contains(&secret.salt),
        "{what}: the salt leaked: {s}"
    );
    let Some(up) = up else { return };
    if !s.contains('=') {
        return;
    }
    for (p, token) in &secret.tokens {
        if !up.contains(p) {
            assert!(
                !s.contains(token.as_str()),
                "{what}: {token} names a face-down piece: {s}"
            );
        }
    }
}

/// A status's position: the viewer form, face down wherever a piece still stands face down.
fn check_position(s: &str, secret: &Secret, up: &HashSet<Point>, what: &str) {
    let placement = s.split(' ').next().unwrap_or("");
    assert!(!placement.contains('*'), "{what}: a full-form position: {s}");
    let pos = notation::parse_position(s).unwrap_or_else(|e| panic!("{what}: bad position {s}: {e}"));
    for &(p, _) in &secret.pieces {
        if !up.contains(&p) {
            assert_eq!(pos.piece_at(p), Some((false, None)), "{what}: {p} is face down: {s}");
        }
    }
}

/// The status as a restore shows it: the clocks are the room's own business
/// (the side to move restarts its turn).
fn without_clocks(mut s: Status) -> Status {
    s.clocks = Default::default();
    s
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes { data, at: 0 };
    let settings = settings(&mut b);
    let variant = settings.variant;
    let Ok(mut room) = Room::new(ID.to_owned(), settings) else {
        return;
    };
    room.set_chat_cap(1 + u32::from(b.byte() % 8));
    let initial = room.initial_position();
    let secret_text = room.take_secret();
    let server_seed = secret_text
        .as_deref()
        .and_then(|t| t.strip_prefix("seats "))
        .and_then(deal::parse_hex32);
    assert_eq!(
        server_seed.is_some(),
        variant == Variant::Anqi,
        "三国暗棋 and only it hands over a server seed"
    );
    let mut run = Run {
        room,
        now: 0,
        ops: Vec::new(),
        server_seed,
        seeds: [None; 3],
        bots: 0,
        seated: Vec::new(),
        secret: None,
    };
    let mut stored_secret = secret_text;
    let mut commands = 0;
    while b.left() && commands < MAX_COMMANDS {
        commands += 1;
        let v = run.room.v();
        // The time the command will run at is not known before it is
        // decoded; the views before are compared at the command's own time.
        let at = b.at;
        let peek_now = run.now + u64::from(b.data.get(at).copied().unwrap_or(0));
        // Ticks, connects and disconnects are never refused: no view to keep.
        let may_refuse = !matches!(b.data.get(at + 1).map_or(0, |o| o % 12), 7..=10);
        let before: Vec<Snapshot> = if may_refuse {
            VIEWERS.iter().map(|&w| run.room.view(w, peek_now)).collect()
        } else {
            Vec::new()
        };
        let done = run.command(&mut b);
        let now = run.now;
        assert!(run.room.v() >= v, "the version went down");
        let step = match done {
            Done::Refused(e) => {
                assert_eq!(run.room.v(), v, "a refused command moved the version");
                assert_eq!(now, peek_now, "only ticks jump, and they are never refused");
                assert!(may_refuse, "a tick, connect or disconnect was refused");
                for (w, was) in VIEWERS.iter().zip(&before) {
                    assert_eq!(&run.room.view(*w, now), was, "a refused command changed {w:?}'s view");
                }
                run.refresh_secret();
                if run.room.phase != Phase::Finished
                    && let Some(secret) = &run.secret
                {
                    check_text(&e.message, secret, None, "a refusal");
                }
                continue;
            }
            Done::Step(step) => step,
        };
        // Versions v+1, v+2, … up to the room's.
        for (i, l) in step.events.iter().enumerate() {
            assert_eq!(l.v, v + 1 + i as u64, "gap-free versions");
        }
        assert_eq!(run.room.v(), v + step.events.len() as u64, "every version is an event");
        // A client at `v` is replayed exactly these events.
        if let Some(missed) = run.room.missed_since(v) {
            assert_eq!(missed, step.events, "the replay differs from what was sent");
        }
        for l in &step.events {
            for w in VIEWERS {
                let by_ref = l.encode_view(w);
                let by_value = serde_json::to_string(&l.view(w)).unwrap();
                assert_eq!(by_ref, by_value, "encode_view differs from the view");
            }
        }
        for op in &step.ops {
            if let Op::Secret(s) = op {
                stored_secret = Some(s.clone());
            }
        }
        run.ops.extend(step.ops.iter().cloned());
        // 三国暗棋: nothing hidden in any projection while the game goes on.
        let finished = run.room.phase == Phase::Finished;
        run.refresh_secret();
        if !finished && let Some(secret) = &run.secret {
            let snap = run.room.view(Viewer::Spectator, now);
            let up = flipped(&snap);
            for w in VIEWERS {
                let view = serde_json::to_value(run.room.view(w, now)).unwrap();
                check_value(&view, secret, &up, &format!("{w:?}'s snapshot"));
                for l in &step.events {
                    // A chat line says what its writer (the fuzz) wrote.
                    if matches!(l.event, GameEvent::Chat { .. }) {
                        continue;
                    }
                    let ServerMsg::Event { event, .. } = l.view(w) else {
                        unreachable!()
                    };
                    let event = serde_json::to_value(event).unwrap();
                    check_value(&event, secret, &up, &format!("{w:?}'s event v{}", l.v));
                }
            }
        }
    }
    check_restore(&run, variant, &initial, stored_secret);
});

/// The room restored from the writes equals the room.
fn check_restore(run: &Run, variant: Variant, initial: &str, secret: Option<String>) {
    let room = &run.room;
    let mut seats: [Option<Player>; 3] = Default::default();
    let mut arbiter = Vec::new();
    let mut events = Vec::new();
    let mut chat_lines = [0; 2];
    let mut phase = Phase::Open;
    let mut result = None;
    for op in &run.ops {
        match op {
            Op::Seat { side, player, .. } => {
                seats[side.index()] = run.seated.iter().find(|p| p.id == *player).cloned();
            }
            Op::Event(e) => events.push(e.clone()),
            Op::Chat { channel, .. } => chat_lines[chat_slot(*channel)] += 1,
            Op::Arbiter(a) => arbiter.push(a.clone()),
            Op::Phase {
                phase: p, result: r, ..
            } => {
                phase = *p;
                result = r.clone();
            }
            Op::Secret(_) | Op::Final(_) => {}
        }
    }
    assert_eq!(phase, room.phase, "the stored phase");
    let stored = StoredGame {
        id: ID.to_owned(),
        phase,
        settings: room.settings.clone(),
        initial_position: initial.to_owned(),
        seats,
        events,
        v: room.v(),
        arbiter,
        result,
        secret,
        chat_lines,
    };
    let (back, _, at) = Room::restore(stored).unwrap_or_else(|e| panic!("{variant:?}: the restore failed: {e}"));
    assert_eq!(back.phase, room.phase);
    assert_eq!(back.result(), room.result(), "the result");
    let (a, b) = (back.view(Viewer::Spectator, at), room.view(Viewer::Spectator, at));
    assert_eq!((&a.moves, &a.departures, &a.notes), (&b.moves, &b.departures, &b.notes));
    assert_eq!(
        without_clocks(a.status),
        without_clocks(b.status),
        "the restored status"
    );
}
