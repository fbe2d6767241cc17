//! Tournaments through the API on a real server and a fresh Postgres
//! database: a 10-player Swiss over 4 rounds (pause, added time, an
//! adjudicated draw, an aborted and re-paired table, a withdrawal, a late
//! entry, a server crash mid-round), a 6-player round robin checked against
//! standings worked out by hand, a no-show, and a 4-player Swiss whose byes
//! are filled by bots.
//!
//! Games are scripted: a side leaves by resigning twice (before round 15 the
//! first request is only a warning), so who leaves first and second — and so
//! every score and survival point — is chosen by the test.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use protocol::tournament::{
    ArbiterAction, ArbiterEntry, ArbiterOutcome, Board, Round, Standings, Tournament, TournamentStatus,
};
use protocol::{ClientMsg, Ending, ErrorCode, GameEvent, GameRecord, GameResult, Outcome, Phase, Session, Side};
use sanguo_tests::harness::{Api, ApiFailure, Client, TestDb, TestServer, persons_move};
use serde_json::json;

/// An organizer, its players and a tournament.
struct Event {
    api: Api,
    org: Session,
    players: Vec<Session>,
    id: String,
    code: String,
}

impl Event {
    async fn new(server: &TestServer, n: usize, settings: serde_json::Value) -> Event {
        let api = Api::new(server.base());
        let org = api.account().await;
        let t: Tournament = api
            .post("/api/tournaments", Some(&org.token), &settings)
            .await
            .expect("create tournament");
        assert_eq!(t.status, TournamentStatus::Registration);
        let code = t.code.clone().expect("the organizer sees the code");
        let mut e = Event {
            api,
            org,
            players: Vec::new(),
            id: t.id,
            code,
        };
        for _ in 0..n {
            e.enter().await;
        }
        e
    }

    /// A new guest registers with the code and checks in.
    async fn enter(&mut self) -> usize {
        let p = self.api.guest().await;
        let t: Tournament = self
            .api
            .post(
                "/api/tournaments/register",
                Some(&p.token),
                &json!({ "code": self.code }),
            )
            .await
            .expect("register");
        assert_eq!(t.code, None, "only the organizer sees the code");
        let t: Tournament = self
            .api
            .post(
                &format!("/api/tournaments/{}/check-in", self.id),
                Some(&p.token),
                &json!({}),
            )
            .await
            .expect("check in");
        assert!(t.players.iter().any(|e| e.player == p.player && e.checked_in));
        self.players.push(p);
        self.players.len() - 1
    }

    fn token_of(&self, player: &str) -> &str {
        &self
            .players
            .iter()
            .find(|p| p.player == player)
            .expect("a player of the event")
            .token
    }

    /// Seed (from 1) of a player.
    fn seed_of(&self, player: &str) -> usize {
        self.players.iter().position(|p| p.player == player).expect("a player") + 1
    }

    async fn pair(&self) -> Result<Round, ApiFailure> {
        self.api
            .post(
                &format!("/api/tournaments/{}/rounds", self.id),
                Some(&self.org.token),
                &json!({}),
            )
            .await
    }

    async fn view(&self) -> Tournament {
        self.api
            .get(&format!("/api/tournaments/{}", self.id))
            .await
            .expect("view")
    }

    async fn standings(&self) -> Standings {
        self.api
            .get(&format!("/api/tournaments/{}/standings", self.id))
            .await
            .expect("standings")
    }

    async fn rounds(&self) -> Vec<Round> {
        self.api
            .get(&format!("/api/tournaments/{}/rounds", self.id))
            .await
            .expect("rounds")
    }

    async fn arbiter(&self, game: &str, action: ArbiterAction, reason: &str) -> Result<ArbiterOutcome, ApiFailure> {
        self.api
            .post(
                &format!("/api/tournaments/{}/games/{game}/arbiter", self.id),
                Some(&self.org.token),
                &json!({ "action": action, "reason": reason }),
            )
            .await
    }
}

/// The three players of a table connected to its game, W, B, Y.
async fn connect(server: &TestServer, e: &Event, game: &str, seats: &[String; 3]) -> Vec<Client> {
    let mut out = Vec::new();
    for p in seats {
        let c = Client::connect(server.addr, game, Some(e.token_of(p)), None).await;
        out.push(c);
    }
    for (c, side) in out.iter().zip(Side::ALL) {
        assert_eq!(c.side, Some(side));
    }
    out
}

/// `order[0]` leaves, then `order[1]`; the third side wins. Returns the result.
async fn finish(clients: &mut [Client], order: [Side; 2]) -> GameResult {
    for side in order {
        let c = &mut clients[side.index()];
        c.send(&ClientMsg::Resign).await;
        c.until(|ev| matches!(ev, GameEvent::Warned { side: s, .. } if *s == side))
            .await;
        c.send(&ClientMsg::Resign).await;
        c.until(|ev| matches!(ev, GameEvent::Eliminated(d) if d.side == side))
            .await;
    }
    let mut result = None;
    for c in clients.iter_mut() {
        match c.until(|ev| matches!(ev, GameEvent::Finished { .. })).await {
            GameEvent::Finished { result: r } => result = Some(r),
            _ => unreachable!(),
        }
    }
    let r = result.expect("a result");
    let winner = Side::ALL.into_iter().find(|s| !order.contains(s)).expect("a winner");
    assert_eq!(r.ending, Ending::LastStanding { winner });
    r
}

/// What the test expects of one game, by player: (points, survival, win).
#[derive(Default)]
struct Expect {
    /// Per player id: points, survival, wins, byes.
    totals: HashMap<String, (u32, u32, u32, u32)>,
    /// Games counted: the three player ids.
    games: Vec<[String; 3]>,
}

impl Expect {
    fn leave(&mut self, seats: &[String; 3], order: [Side; 2]) {
        let winner = Side::ALL.into_iter().find(|s| !order.contains(s)).unwrap();
        for (side, pts, surv, win) in [(order[0], 0, 0, 0), (order[1], 0, 1, 0), (winner, 3, 2, 1)] {
            let t = self.totals.entry(seats[side.index()].clone()).or_default();
            t.0 += pts;
            t.1 += surv;
            t.2 += win;
        }
        self.games.push(seats.clone());
    }

    fn draw(&mut self, seats: &[String; 3]) {
        for p in seats {
            self.totals.entry(p.clone()).or_default().0 += 1;
        }
        self.games.push(seats.clone());
    }

    fn bye(&mut self, player: &str) {
        let t = self.totals.entry(player.to_owned()).or_default();
        t.0 += 1;
        t.3 += 1;
    }

    /// Opponents' points: for every game, the final points of the other two.
    fn opponents(&self, player: &str) -> u32 {
        let pts = |p: &str| self.totals.get(p).map_or(0, |t| t.0);
        self.games
            .iter()
            .filter(|g| g.iter().any(|p| p == player))
            .flat_map(|g| g.iter().filter(|p| *p != player).map(|p| pts(p)))
            .sum()
    }

    /// Checks every line of the standings, and that the order follows points,
    /// survival, opponents' points, wins, then seed.
    fn check(&self, e: &Event, st: &Standings) {
        let mut previous: Option<((u32, u32, u32, u32), usize)> = None;
        for row in &st.standings {
            let (points, survival, wins, byes) = self.totals.get(&row.player).copied().unwrap_or_default();
            assert_eq!(
                (row.points, row.survival, row.wins, row.byes),
                (points, survival, wins, byes),
                "totals of {}",
                row.name
            );
            assert_eq!(
                row.opponents,
                self.opponents(&row.player),
                "opponents' points of {}",
                row.name
            );
            let key = (row.points, row.survival, row.opponents, row.wins);
            let seed = e.seed_of(&row.player);
            if let Some((k, s)) = previous {
                assert!(
                    k > key || (k == key && s < seed),
                    "standings out of order at {}",
                    row.name
                );
            }
            previous = Some((key, seed));
        }
    }
}

/// Every active player sits exactly once; byes are `active mod 3`.
fn check_round(r: &Round, active: &HashSet<String>) {
    let mut seen = HashSet::new();
    for t in &r.tables {
        for p in &t.seats {
            assert!(seen.insert(p.clone()), "{p} twice in round {}", r.round);
        }
    }
    for b in &r.byes {
        assert!(seen.insert(b.player.clone()), "{} twice in round {}", b.player, r.round);
    }
    assert_eq!(&seen, active, "round {} pairs exactly the active players", r.round);
    assert_eq!(r.byes.len(), active.len() % 3);
}

/// Swiss script: the seat whose player has the largest `(seed * 5 + round * 3) % 11` leaves first.
fn swiss_order(e: &Event, round: u32, seats: &[String; 3]) -> [Side; 2] {
    let mut sides = Side::ALL;
    sides.sort_by_key(|s| std::cmp::Reverse((e.seed_of(&seats[s.index()]) * 5 + round as usize * 3) % 11));
    [sides[0], sides[1]]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_player_swiss_over_four_rounds() {
    let db = TestDb::create().await;
    let mut server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut e = Event::new(
        &server,
        10,
        json!({ "name": "Club evening", "rounds": 4, "time_control": { "base_ms": 600000, "increment_ms": 5000 } }),
    )
    .await;
    let mut expect = Expect::default();
    let mut active: HashSet<String> = e.players.iter().map(|p| p.player.clone()).collect();

    // Bad input changes nothing.
    let guest = e.api.guest().await;
    let refused = e
        .api
        .post::<Tournament>("/api/tournaments", Some(&guest.token), &json!({ "name": "x" }))
        .await
        .unwrap_err();
    assert_eq!((refused.status, refused.body.code), (403, ErrorCode::Forbidden));
    let refused = e
        .api
        .post::<Tournament>(
            "/api/tournaments",
            Some(&e.org.token),
            &json!({ "name": "x", "rounds": 0 }),
        )
        .await
        .unwrap_err();
    assert_eq!((refused.status, refused.body.code), (400, ErrorCode::BadRequest));
    let refused = e
        .api
        .post::<Tournament>(
            "/api/tournaments/register",
            Some(&guest.token),
            &json!({ "code": "NOPE" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.status, 404);
    let again = e
        .api
        .post::<Tournament>(
            "/api/tournaments/register",
            Some(&e.players[0].token),
            &json!({ "code": e.code }),
        )
        .await
        .unwrap_err();
    assert_eq!((again.status, again.body.code), (409, ErrorCode::TournamentState));
    let not_org = e
        .api
        .post::<Round>(
            &format!("/api/tournaments/{}/rounds", e.id),
            Some(&guest.token),
            &json!({}),
        )
        .await
        .unwrap_err();
    assert_eq!(not_org.status, 403);
    assert_eq!(e.view().await.round, 0);

    // Round 1: pause, add time, resume; a move while paused is refused.
    let r1 = e.pair().await.expect("round 1");
    check_round(&r1, &active);
    assert_eq!(r1.tables.len(), 3);
    // Everyone is equal: seed order, the last seed has the bye.
    assert_eq!(r1.byes[0].player, e.players[9].player);
    let boards: Vec<Board> = e
        .api
        .get_as("/api/me/boards", e.token_of(&r1.tables[0].seats[1]))
        .await
        .expect("boards");
    assert_eq!(boards.len(), 1);
    assert_eq!(
        (boards[0].game.as_str(), boards[0].side, boards[0].round),
        (r1.tables[0].game.as_str(), Side::B, 1)
    );
    let early = e.pair().await.unwrap_err();
    assert_eq!((early.status, early.body.code), (409, ErrorCode::TournamentState));

    let g = &r1.tables[0];
    let mut c = connect(&server, &e, &g.game, &g.seats).await;
    let paused = e
        .arbiter(&g.game, ArbiterAction::Pause, "a phone rang")
        .await
        .expect("pause");
    assert!(paused.game.status.paused);
    assert!(paused.game.status.legal_moves.is_empty());
    let before = e.api.state(&g.game).await.status.clocks[0].remaining_ms;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        e.api.state(&g.game).await.status.clocks[0].remaining_ms,
        before,
        "paused clocks stand"
    );
    let twice = e.arbiter(&g.game, ArbiterAction::Pause, "again").await.unwrap_err();
    assert_eq!((twice.status, twice.body.code), (409, ErrorCode::Paused));
    let no_reason = e.arbiter(&g.game, ArbiterAction::Resume, "  ").await.unwrap_err();
    assert_eq!(no_reason.status, 400);
    c[0].until(|ev| matches!(ev, GameEvent::Arbiter { .. })).await;
    c[0].send(&ClientMsg::Move {
        ply: 0,
        mv: "W72-W54".into(),
    })
    .await;
    assert_eq!(c[0].error().await, ErrorCode::Paused);
    let added = e
        .arbiter(
            &g.game,
            ArbiterAction::AddTime {
                side: Side::B,
                ms: 60_000,
            },
            "B's clock was started late",
        )
        .await
        .expect("add time");
    assert_eq!(added.game.status.clocks[1].remaining_ms, 660_000);
    e.arbiter(&g.game, ArbiterAction::Resume, "the phone is off")
        .await
        .expect("resume");
    assert!(!e.api.state(&g.game).await.status.paused);
    let not_player = e.players.iter().find(|p| !g.seats.contains(&p.player)).unwrap();
    let forbidden = e
        .api
        .post::<ArbiterOutcome>(
            &format!("/api/tournaments/{}/games/{}/arbiter", e.id, g.game),
            Some(&not_player.token),
            &json!({ "action": { "kind": "pause" }, "reason": "me" }),
        )
        .await
        .unwrap_err();
    assert_eq!(forbidden.status, 403);
    for t in &r1.tables {
        let order = swiss_order(&e, 1, &t.seats);
        let mut clients = if t.game == g.game {
            std::mem::take(&mut c)
        } else {
            connect(&server, &e, &t.game, &t.seats).await
        };
        finish(&mut clients, order).await;
        expect.leave(&t.seats, order);
    }
    for b in &r1.byes {
        expect.bye(&b.player);
    }
    expect.check(&e, &e.standings().await);

    // Round 2: table 1 is adjudicated a draw.
    let r2 = e.pair().await.expect("round 2");
    check_round(&r2, &active);
    for (k, t) in r2.tables.iter().enumerate() {
        if k == 0 {
            let bad = e
                .arbiter(
                    &t.game,
                    ArbiterAction::Adjudicate {
                        outcomes: [Outcome::Win, Outcome::Win, Outcome::Loss],
                    },
                    "two winners",
                )
                .await
                .unwrap_err();
            assert_eq!(bad.status, 400);
            let done = e
                .arbiter(
                    &t.game,
                    ArbiterAction::Adjudicate {
                        outcomes: [Outcome::Draw; 3],
                    },
                    "the hall closes; a draw by agreement of the arbiter",
                )
                .await
                .expect("adjudicate");
            assert_eq!(done.game.phase, Phase::Finished);
            assert_eq!(done.game.result.as_ref().unwrap().ending, Ending::Adjudicated);
            expect.draw(&t.seats);
        } else {
            let order = swiss_order(&e, 2, &t.seats);
            let mut clients = connect(&server, &e, &t.game, &t.seats).await;
            finish(&mut clients, order).await;
            expect.leave(&t.seats, order);
        }
    }
    for b in &r2.byes {
        expect.bye(&b.player);
    }
    expect.check(&e, &e.standings().await);

    // A withdrawal (finished games stand) and a late entry.
    let leaver = e.players[3].player.clone();
    let w: Tournament = e
        .api
        .post(
            &format!("/api/tournaments/{}/withdraw", e.id),
            Some(&e.players[3].token),
            &json!({}),
        )
        .await
        .expect("withdraw");
    assert_eq!(
        w.players.iter().find(|p| p.player == leaver).unwrap().withdrawn_after,
        Some(2)
    );
    active.remove(&leaver);
    let late = e.enter().await;
    active.insert(e.players[late].player.clone());

    // Round 3: table 2's game is aborted and the table plays a new one.
    let r3 = e.pair().await.expect("round 3");
    check_round(&r3, &active);
    assert!(r3.tables.iter().all(|t| !t.seats.contains(&leaver)));
    for (k, t) in r3.tables.iter().enumerate() {
        let mut game = t.game.clone();
        if k == 1 {
            let out = e
                .arbiter(&t.game, ArbiterAction::Abort, "the board was set up wrongly")
                .await
                .expect("abort");
            assert_eq!(out.game.result.as_ref().unwrap().ending, Ending::Annulled);
            game = out.replaced_by.expect("a new game");
            let again = e.arbiter(&t.game, ArbiterAction::Pause, "too late").await.unwrap_err();
            assert_eq!(again.status, 409);
        }
        let order = swiss_order(&e, 3, &t.seats);
        let mut clients = connect(&server, &e, &game, &t.seats).await;
        finish(&mut clients, order).await;
        expect.leave(&t.seats, order);
    }
    for b in &r3.byes {
        expect.bye(&b.player);
    }
    let r3_now: Round = e
        .api
        .get(&format!("/api/tournaments/{}/rounds/3", e.id))
        .await
        .expect("round 3");
    assert_eq!(r3_now.tables[1].aborted, vec![r3.tables[1].game.clone()]);
    assert!(r3_now.tables.iter().all(|t| t.result.is_some()));
    expect.check(&e, &e.standings().await);

    // Round 4: one table finishes, one is paused with time added, one is
    // half-way; the server crashes and comes back with everything.
    let r4 = e.pair().await.expect("round 4");
    check_round(&r4, &active);
    let order = swiss_order(&e, 4, &r4.tables[0].seats);
    let mut c0 = connect(&server, &e, &r4.tables[0].game, &r4.tables[0].seats).await;
    finish(&mut c0, order).await;
    expect.leave(&r4.tables[0].seats, order);
    let t1 = &r4.tables[1];
    e.arbiter(
        &t1.game,
        ArbiterAction::AddTime {
            side: Side::Y,
            ms: 30_000,
        },
        "a clock fault",
    )
    .await
    .expect("add time");
    e.arbiter(&t1.game, ArbiterAction::Pause, "the server will be restarted")
        .await
        .expect("pause");
    let t2 = &r4.tables[2];
    let mut c2 = connect(&server, &e, &t2.game, &t2.seats).await;
    let first = swiss_order(&e, 4, &t2.seats);
    c2[first[0].index()].send(&ClientMsg::Resign).await;
    c2[first[0].index()]
        .until(|ev| matches!(ev, GameEvent::Warned { .. }))
        .await;
    let standings_before = e.standings().await;
    let rounds_before = e.rounds().await;
    let view_before = e.view().await;
    drop(c0);
    drop(c2);
    server.crash();
    server = TestServer::start(TestServer::config(Some(db.url.clone())));
    e.api = Api::new(server.base());
    assert_eq!(e.standings().await, standings_before);
    assert_eq!(e.rounds().await, rounds_before);
    assert_eq!(e.view().await, view_before);
    let s1 = e.api.state(&t1.game).await;
    assert!(s1.status.paused, "the pause survives the restart");
    assert_eq!(s1.status.clocks[2].remaining_ms, 630_000, "so does the added time");
    let resume = e.pair().await.unwrap_err();
    assert_eq!(resume.status, 409, "round 4 is not over");
    e.arbiter(&t1.game, ArbiterAction::Resume, "back up")
        .await
        .expect("resume");
    for t in [t1, t2] {
        let order = swiss_order(&e, 4, &t.seats);
        let mut clients = connect(&server, &e, &t.game, &t.seats).await;
        // The warning before the crash is kept: one more request eliminates.
        if t.game == t2.game {
            let c = &mut clients[order[0].index()];
            c.send(&ClientMsg::Resign).await;
            c.until(|ev| matches!(ev, GameEvent::Eliminated(d) if d.side == order[0]))
                .await;
            let c = &mut clients[order[1].index()];
            for _ in 0..2 {
                c.send(&ClientMsg::Resign).await;
            }
            for c in clients.iter_mut() {
                c.until(|ev| matches!(ev, GameEvent::Finished { .. })).await;
            }
        } else {
            finish(&mut clients, order).await;
        }
        expect.leave(&t.seats, order);
    }
    for b in &r4.byes {
        expect.bye(&b.player);
    }

    // The end: standings by hand, every constraint over the event, exports.
    let view = e.view().await;
    assert_eq!(view.status, TournamentStatus::Finished);
    let over = e.pair().await.unwrap_err();
    assert_eq!(over.status, 409);
    let st = e.standings().await;
    expect.check(&e, &st);
    assert_eq!(st.standings.len(), 11);
    assert!(st.standings.iter().find(|r| r.player == leaver).unwrap().withdrawn);

    let rounds = e.rounds().await;
    assert_eq!(rounds.len(), 4);
    let mut pairs = HashSet::new();
    let mut byes = HashSet::new();
    let mut seats: HashMap<String, [u32; 3]> = HashMap::new();
    for r in &rounds {
        for t in &r.tables {
            for i in 0..3 {
                seats.entry(t.seats[i].clone()).or_default()[i] += 1;
                for j in i + 1..3 {
                    let mut p = [t.seats[i].clone(), t.seats[j].clone()];
                    p.sort();
                    assert!(pairs.insert(p.clone()), "{p:?} met twice");
                }
            }
        }
        for b in &r.byes {
            assert!(byes.insert(b.player.clone()), "{} had two byes", b.player);
        }
    }
    // Seats: best effort under points-first pairing (docs/TOURNAMENTS.md):
    // two thirds or more as balanced as their games allow, nobody worse than 2.
    let mut off = 0;
    for (p, s) in &seats {
        let games: u32 = s.iter().sum();
        let spread = s.iter().max().unwrap() - s.iter().min().unwrap();
        assert!(spread <= 2, "{p} sat W/B/Y {s:?}");
        off += usize::from(spread > u32::from(games % 3 != 0));
    }
    assert!(
        off * 3 <= seats.len(),
        "{off} of {} players off the best seat balance: {seats:?}",
        seats.len()
    );
    for row in &st.standings {
        assert_eq!(row.seats, seats.get(&row.player).copied().unwrap_or_default());
    }

    let (status, csv) = e
        .api
        .get_text(&format!("/api/tournaments/{}/standings.csv", e.id))
        .await;
    assert_eq!(status, 200);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "rank,player,name,points,survival,opponents,wins,games,byes,w,b,y,withdrawn,group"
    );
    assert_eq!(lines.len(), 12);
    for (line, row) in lines[1..].iter().zip(&st.standings) {
        assert!(line.starts_with(&format!(
            "{},{},\"{}\",{},{},{},{},",
            row.rank, row.player, row.name, row.points, row.survival, row.opponents, row.wins
        )));
    }
    let records: Vec<GameRecord> = e
        .api
        .get(&format!("/api/tournaments/{}/games", e.id))
        .await
        .expect("records");
    assert_eq!(records.len(), 13, "12 tables and the aborted game");
    assert!(records.iter().all(|r| r.phase == Phase::Finished));
    let log: Vec<ArbiterEntry> = e.api.get(&format!("/api/tournaments/{}/log", e.id)).await.expect("log");
    let kinds: Vec<&str> = log.iter().map(|l| l.action.name()).collect();
    assert_eq!(
        kinds,
        vec![
            "pause",
            "add_time",
            "resume",
            "adjudicate",
            "abort",
            "add_time",
            "pause",
            "resume"
        ]
    );
    assert!(log.iter().all(|l| l.by == e.org.player && !l.reason.is_empty()));
    assert_eq!(log[4].replaced_by.as_deref(), Some(r3_now.tables[1].game.as_str()));
    server.stop().await;
}

/// Round robin script: the highest seed at the table leaves first, the
/// lowest wins.
fn by_seed(e: &Event, seats: &[String; 3]) -> [Side; 2] {
    let mut sides = Side::ALL;
    sides.sort_by_key(|s| std::cmp::Reverse(e.seed_of(&seats[s.index()])));
    [sides[0], sides[1]]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_six_player_round_robin_against_standings_by_hand() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(
        &server,
        6,
        json!({ "name": "Round robin", "pairing": { "kind": "round_robin", "group_size": 6 } }),
    )
    .await;
    let mut trios = HashSet::new();
    for n in 1..=10 {
        let r = e.pair().await.unwrap_or_else(|f| panic!("round {n}: {f:?}"));
        assert_eq!(r.tables.len(), 2);
        assert!(r.byes.is_empty());
        for t in &r.tables {
            let mut seeds: Vec<usize> = t.seats.iter().map(|p| e.seed_of(p)).collect();
            seeds.sort_unstable();
            assert!(trios.insert(seeds), "a trio met twice");
            let mut clients = connect(&server, &e, &t.game, &t.seats).await;
            finish(&mut clients, by_seed(&e, &t.seats)).await;
        }
        if n == 1 {
            assert_eq!(e.view().await.settings.rounds, 10);
        }
    }
    assert_eq!(trios.len(), 20, "every trio of six met");
    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    // By hand: in trio a < b < c (seeds) a wins (3 points, survival 2), b is
    // second (1), c first out (0). Seed i (0-based) is the lowest of C(5-i, 2)
    // trios and the middle of i·(5-i) trios; points = 3·C(5-i, 2);
    // survival = 2·C(5-i, 2) + i·(5-i); each pair meets in 4 trios, so the
    // opponents' points are 4·(60 - own points).
    let expected: [(u32, u32, u32, u32); 6] = [
        (30, 20, 120, 10),
        (18, 16, 168, 6),
        (9, 12, 204, 3),
        (3, 8, 228, 1),
        (0, 4, 240, 0),
        (0, 0, 240, 0),
    ];
    let st = e.standings().await;
    for (k, row) in st.standings.iter().enumerate() {
        assert_eq!(e.seed_of(&row.player), k + 1);
        assert_eq!(row.rank as usize, k + 1);
        assert_eq!(
            (row.points, row.survival, row.opponents, row.wins),
            expected[k],
            "seed {}",
            k + 1
        );
        assert_eq!(row.games, 10);
        let spread = row.seats.iter().max().unwrap() - row.seats.iter().min().unwrap();
        assert!(spread <= 1, "seat rotation: {:?}", row.seats);
    }
    let late = e.api.guest().await;
    let refused = e
        .api
        .post::<Tournament>(
            "/api/tournaments/register",
            Some(&late.token),
            &json!({ "code": e.code }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.status, 409);
    server.stop().await;
}

#[tokio::test]
async fn round_robin_groups_of_unequal_size_are_ranked_each_on_its_own() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    // 7 players in groups of at most 4: a group of 3 (one game, then byes) and one of 4.
    let e = Event::new(
        &server,
        7,
        json!({ "name": "Groups", "pairing": { "kind": "round_robin", "group_size": 4 } }),
    )
    .await;
    for n in 1..=4 {
        let r = e.pair().await.unwrap_or_else(|f| panic!("round {n}: {f:?}"));
        for t in &r.tables {
            let mut clients = connect(&server, &e, &t.game, &t.seats).await;
            finish(&mut clients, by_seed(&e, &t.seats)).await;
        }
    }
    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    let st = e.standings().await;
    let groups: Vec<u32> = st.standings.iter().map(|r| r.group.expect("a group")).collect();
    let mut sorted = groups.clone();
    sorted.sort_unstable();
    assert_eq!(groups, sorted, "the rows come group by group");
    for g in [1, 2] {
        let rows: Vec<_> = st.standings.iter().filter(|r| r.group == Some(g)).collect();
        let ranks: Vec<u32> = rows.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, (1..=rows.len() as u32).collect::<Vec<_>>(), "group {g}");
    }
    // The group of three: one game and three byes each, ranked only among themselves.
    let small: Vec<_> = st.standings.iter().filter(|r| r.games == 1).collect();
    assert_eq!(small.len(), 3);
    assert!(small.iter().all(|r| r.byes == 3 && r.group == small[0].group));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_show_loses_by_abandonment() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(
        &server,
        3,
        json!({ "name": "Quick", "rounds": 1, "grace_ms": 1500, "scoring": { "win": 2, "draw": 1, "loss": 0, "bye": 1 } }),
    )
    .await;
    let r = e.pair().await.expect("round 1");
    let t = &r.tables[0];
    // W and B come; Y never does. The clocks run from the round's start.
    let mut w = Client::connect(server.addr, &t.game, Some(e.token_of(&t.seats[0])), None).await;
    let _b = Client::connect(server.addr, &t.game, Some(e.token_of(&t.seats[1])), None).await;
    match w.until(|ev| matches!(ev, GameEvent::Finished { .. })).await {
        GameEvent::Finished { result } => assert_eq!(result.ending, Ending::Aborted { by: Side::Y }),
        _ => unreachable!(),
    }
    let st = e.standings().await;
    let by: HashMap<&str, (u32, u32)> = st
        .standings
        .iter()
        .map(|r| (r.player.as_str(), (r.points, r.survival)))
        .collect();
    assert_eq!(by[t.seats[0].as_str()], (1, 1));
    assert_eq!(by[t.seats[1].as_str()], (1, 1));
    assert_eq!(by[t.seats[2].as_str()], (0, 0));
    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    // Two no-shows, then three: every no-show loses, whoever came draws.
    for (came, want) in [(vec![Side::W], [(1, 1), (0, 0), (0, 0)]), (vec![], [(0, 0); 3])] {
        let e = Event::new(
            &server,
            3,
            json!({ "name": "Empty hall", "rounds": 1, "grace_ms": 1500, "scoring": { "win": 2, "draw": 1, "loss": 0, "bye": 1 } }),
        )
        .await;
        let r = e.pair().await.expect("round 1");
        let t = &r.tables[0];
        let mut clients = Vec::new();
        for &side in &came {
            clients.push(Client::connect(server.addr, &t.game, Some(e.token_of(&t.seats[side.index()])), None).await);
        }
        let mut watcher = Client::connect(server.addr, &t.game, None, None).await;
        let result = match watcher.until(|ev| matches!(ev, GameEvent::Finished { .. })).await {
            GameEvent::Finished { result } => result,
            _ => unreachable!(),
        };
        let absent: Vec<Side> = Side::ALL.into_iter().filter(|s| !came.contains(s)).collect();
        assert_eq!(result.ending, Ending::Aborted { by: absent[0] });
        assert_eq!(result.no_shows, absent);
        let st = e.standings().await;
        for (i, seat) in t.seats.iter().enumerate() {
            let row = st.standings.iter().find(|r| &r.player == seat).unwrap();
            assert_eq!((row.points, row.survival), want[i], "came {came:?}, seat {i}");
        }
        // The stored result keeps the no-shows (the room restored from the store).
        let rec: GameRecord = e.api.get(&format!("/api/games/{}/record", t.game)).await.unwrap();
        assert_eq!(rec.result.unwrap().no_shows, absent);
    }
    server.stop().await;
}

#[tokio::test]
async fn sixteen_players_registering_at_once_are_all_registered() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(&server, 0, json!({ "name": "Rush" })).await;
    let mut guests = Vec::new();
    for _ in 0..16 {
        guests.push(e.api.guest().await);
    }
    // All at the same instant: none may be refused, none lost, seeds 1..=16.
    let body = json!({ "code": e.code });
    let answers = futures_util::future::join_all(guests.iter().map(|p| {
        e.api
            .post::<Tournament>("/api/tournaments/register", Some(&p.token), &body)
    }))
    .await;
    for (p, a) in guests.iter().zip(&answers) {
        assert!(a.is_ok(), "{}: {:?}", p.player, a.as_ref().err());
    }
    let t = e.view().await;
    let mut seeds: Vec<u32> = t.players.iter().map(|p| p.seed).collect();
    seeds.sort_unstable();
    assert_eq!(seeds, (1..=16).collect::<Vec<_>>());
    for p in &guests {
        assert!(
            t.players.iter().any(|e| e.player == p.player),
            "{} registered",
            p.player
        );
    }
    // Registering again is a conflict, and changes nothing.
    let again = e
        .api
        .post::<Tournament>(
            "/api/tournaments/register",
            Some(&guests[3].token),
            &json!({ "code": e.code }),
        )
        .await;
    assert!(again.is_err());
    assert_eq!(e.view().await.players.len(), 16);
    server.stop().await;
}

#[tokio::test]
async fn withdrawing_before_round_one_unregisters_and_the_organizer_reinstates() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(&server, 4, json!({ "name": "Second thoughts", "rounds": 2 })).await;
    let withdraw = |token: String, body: serde_json::Value| {
        let api = e.api.clone();
        let path = format!("/api/tournaments/{}/withdraw", e.id);
        async move { api.post::<Tournament>(&path, Some(&token), &body).await }
    };
    // Before round 1: the registration is simply taken back, and may be made again.
    let t = withdraw(e.players[3].token.clone(), json!({})).await.expect("withdraw");
    assert!(!t.players.iter().any(|p| p.player == e.players[3].player));
    let again: Tournament = e
        .api
        .post(
            "/api/tournaments/register",
            Some(&e.players[3].token),
            &json!({ "code": e.code }),
        )
        .await
        .expect("register again");
    assert_eq!(again.players.len(), 4);
    withdraw(e.players[3].token.clone(), json!({}))
        .await
        .expect("withdraw again");
    assert_eq!(e.view().await.players.len(), 3);
    // After round 1: a withdrawal, which the organizer takes back.
    let r = e.pair().await.expect("round 1");
    let p0 = e.players[0].player.clone();
    let t = withdraw(e.org.token.clone(), json!({ "player": p0 }))
        .await
        .expect("the organizer withdraws");
    assert_eq!(
        t.players.iter().find(|p| p.player == p0).unwrap().withdrawn_after,
        Some(1)
    );
    let reinstate = |token: String| {
        let api = e.api.clone();
        let path = format!("/api/tournaments/{}/reinstate", e.id);
        let body = json!({ "player": p0 });
        async move { api.post::<Tournament>(&path, Some(&token), &body).await }
    };
    let refused = reinstate(e.players[1].token.clone())
        .await
        .expect_err("only the organizer");
    assert_eq!(refused.status, 403);
    let t = reinstate(e.org.token.clone()).await.expect("reinstate");
    assert_eq!(t.players.iter().find(|p| p.player == p0).unwrap().withdrawn_after, None);
    e.arbiter(
        &r.tables[0].game,
        ArbiterAction::Adjudicate {
            outcomes: [Outcome::Win, Outcome::Loss, Outcome::Loss],
        },
        "quick",
    )
    .await
    .expect("adjudicate");
    let r2 = e.pair().await.expect("round 2");
    assert!(r2.tables[0].seats.contains(&p0), "the reinstated player is paired");
    server.stop().await;
}

#[tokio::test]
async fn the_organizer_edits_deletes_and_finishes_events_with_reasons_logged() {
    use protocol::tournament::{OrganizerAction, OrganizerEntry};
    use reqwest::Method;
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(&server, 2, json!({ "name": "Draft" })).await;
    let path = format!("/api/tournaments/{}", e.id);
    // Edit before round 1: the settings anew; only the organizer, only with a reason.
    let edit = json!({ "settings": { "name": "Club evening", "rounds": 2 }, "reason": "a better name" });
    let (status, _) = e.api.send(Method::PATCH, &path, Some(&e.players[0].token), &edit).await;
    assert_eq!(status, 403);
    let no_reason = json!({ "settings": { "name": "x" }, "reason": " " });
    assert_eq!(
        e.api.send(Method::PATCH, &path, Some(&e.org.token), &no_reason).await.0,
        400
    );
    let (status, text) = e.api.send(Method::PATCH, &path, Some(&e.org.token), &edit).await;
    assert_eq!(status, 200, "{text}");
    let t = e.view().await;
    assert_eq!((t.settings.name.as_str(), t.settings.rounds), ("Club evening", 2));
    assert_eq!(t.players.len(), 2, "registrations stay");
    // Delete before round 1: gone, and the log says who and why.
    let (status, _) = e
        .api
        .send(
            Method::DELETE,
            &path,
            Some(&e.org.token),
            &json!({ "reason": "nobody came" }),
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(e.api.get::<Tournament>(&path).await.unwrap_err().status, 404);
    let log: Vec<OrganizerEntry> = e.api.get(&format!("{path}/organizer-log")).await.unwrap();
    assert_eq!(
        log.iter()
            .map(|l| (l.action, l.reason.as_str(), l.by.as_str()))
            .collect::<Vec<_>>(),
        [
            (OrganizerAction::Edit, "a better name", e.org.player.as_str()),
            (OrganizerAction::Delete, "nobody came", e.org.player.as_str())
        ]
    );

    // An event that fell below three players after round 1: the organizer finishes it.
    let e = Event::new(&server, 3, json!({ "name": "Dwindling", "rounds": 4 })).await;
    let path = format!("/api/tournaments/{}", e.id);
    let r = e.pair().await.expect("round 1");
    let finish = json!({ "reason": "two players went home" });
    let (status, _) = e
        .api
        .send(Method::POST, &format!("{path}/finish"), Some(&e.org.token), &finish)
        .await;
    assert_eq!(status, 409, "not while its round is played");
    e.arbiter(
        &r.tables[0].game,
        ArbiterAction::Adjudicate {
            outcomes: [Outcome::Win, Outcome::Loss, Outcome::Loss],
        },
        "quick",
    )
    .await
    .expect("adjudicate");
    for p in &e.players[1..] {
        let w = format!("{path}/withdraw");
        e.api
            .post::<Tournament>(&w, Some(&p.token), &json!({}))
            .await
            .expect("withdraw");
    }
    assert_eq!(e.pair().await.unwrap_err().status, 409, "one player left: no table");
    assert_eq!(e.view().await.status, TournamentStatus::Running);
    assert_eq!(
        e.api.send(Method::DELETE, &path, Some(&e.org.token), &finish).await.0,
        409,
        "too late to delete"
    );
    let (status, text) = e
        .api
        .send(Method::POST, &format!("{path}/finish"), Some(&e.org.token), &finish)
        .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    assert_eq!(e.pair().await.unwrap_err().status, 409);
    assert_eq!(e.standings().await.standings[0].player, r.tables[0].seats[0]);
    let log: Vec<OrganizerEntry> = e.api.get(&format!("{path}/organizer-log")).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].action, log[0].reason.as_str()),
        (OrganizerAction::Finish, "two players went home")
    );
    server.stop().await;
}

/// The person on `c` (at `side`) plays one move as soon as its turn comes.
async fn play_one(c: &mut Client, side: Side) {
    assert!(c.until_turn(side).await, "{side} can still move");
    let st = c.status.clone().expect("a status");
    c.send(&ClientMsg::Move {
        ply: st.ply,
        mv: persons_move(&st, u64::from(st.ply)),
    })
    .await;
    let ply = st.ply;
    c.until(|e| matches!(e, GameEvent::Moved { ply: p, .. } if *p == ply))
        .await;
}

/// Polls a game's state until its ply reaches `ply` (nobody connected).
async fn until_ply(api: &Api, game: &str, ply: u32) -> protocol::Snapshot {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = api.state(game).await;
        if s.status.ply >= ply {
            return s;
        }
        assert!(Instant::now() < deadline, "ply {ply} not reached: {:?}", s.status.ply);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The sides of a table held by bots of level 1, named by their stored name.
fn bot_sides(t: &protocol::tournament::Pairing) -> Vec<Side> {
    Side::ALL
        .into_iter()
        .filter(|s| t.seats[s.index()].starts_with("bot-"))
        .inspect(|s| assert_eq!(t.names[s.index()], "Bot (level 1)", "a bot's name, not its id"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byes_filled_by_bots_in_a_four_player_swiss() {
    let db = TestDb::create().await;
    let mut server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let settings = json!({
        "name": "Bots fill the byes", "rounds": 2, "byes": { "kind": "bot", "level": 1 },
        "time_control": { "base_ms": 120000, "increment_ms": 1000 }
    });
    let mut e = Event::new(&server, 4, settings).await;

    // A level that is no bot's is refused.
    for level in [0, 4] {
        let refused = e
            .api
            .post::<Tournament>(
                "/api/tournaments",
                Some(&e.org.token),
                &json!({ "name": "x", "byes": { "kind": "bot", "level": level } }),
            )
            .await
            .unwrap_err();
        assert_eq!((refused.status, refused.body.code), (400, ErrorCode::BadRequest));
        assert!(refused.body.message.contains("level"), "{}", refused.body.message);
    }

    // Round 1: seeds 1-3 at a table, seed 4 alone with two bots (W: nobody
    // has a history), no byes.
    let r1 = e.pair().await.expect("round 1");
    assert!(r1.byes.is_empty());
    assert_eq!(r1.tables.len(), 2);
    let people: Vec<String> = e.players.iter().map(|p| p.player.clone()).collect();
    assert_eq!(r1.tables[0].seats.to_vec(), people[..3].to_vec());
    let bt = &r1.tables[1];
    assert_eq!(bt.seats[0], people[3]);
    assert_eq!(bot_sides(bt), vec![Side::B, Side::Y]);
    let boards: Vec<Board> = e
        .api
        .get_as("/api/me/boards", e.token_of(&people[3]))
        .await
        .expect("boards");
    assert_eq!(boards.len(), 1);
    assert_eq!((boards[0].game.as_str(), boards[0].side), (bt.game.as_str(), Side::W));
    let snap = e.api.state(&bt.game).await;
    assert_eq!(snap.phase, Phase::Live);
    assert_eq!(
        snap.seats.each_ref().map(|s| s.as_ref().and_then(|s| s.bot)),
        [None, Some(1), Some(1)]
    );

    // The person plays W; both bots answer without anyone moving for them.
    let mut c = Client::connect(server.addr, &bt.game, Some(e.token_of(&people[3])), None).await;
    assert_eq!(c.side, Some(Side::W));
    play_one(&mut c, Side::W).await;
    assert!(c.until_turn(Side::W).await);
    assert_eq!(c.status.as_ref().map(|s| s.ply), Some(3));
    play_one(&mut c, Side::W).await;
    // Seed 1 (W) leaves first, seed 2 second; seed 3 wins. The person beats the bots.
    let mut clients = connect(&server, &e, &r1.tables[0].game, &r1.tables[0].seats).await;
    finish(&mut clients, [Side::W, Side::B]).await;
    let done = e
        .arbiter(
            &bt.game,
            ArbiterAction::Adjudicate {
                outcomes: [Outcome::Win, Outcome::Loss, Outcome::Loss],
            },
            "the bots are lost",
        )
        .await
        .expect("adjudicate");
    assert_eq!(done.game.phase, Phase::Finished);
    drop(c);

    let st = e.standings().await;
    assert_eq!(st.standings.len(), 4, "no standings rows for bots");
    let row = |p: &str| st.standings.iter().find(|r| r.player == p).expect("a row").clone();
    let p4 = row(&people[3]);
    // An adjudicated win over two sides still in: survival 2; bots count 0
    // in the opponents' points; a bot table is no bye.
    assert_eq!(
        (
            p4.points,
            p4.survival,
            p4.opponents,
            p4.wins,
            p4.games,
            p4.byes,
            p4.seats
        ),
        (3, 2, 0, 1, 1, 0, [1, 0, 0])
    );
    assert_eq!((row(&people[2]).points, row(&people[0]).points), (3, 0));
    assert!(st.standings.iter().all(|r| r.byes == 0 && r.games == 1));
    let (status, csv) = e
        .api
        .get_text(&format!("/api/tournaments/{}/standings.csv", e.id))
        .await;
    assert_eq!(status, 200);
    assert_eq!(csv.lines().count(), 5);
    assert!(!csv.contains("bot-"));

    // Round 2: the bot table goes to the lowest placed of those who had
    // none (seed 1). Seed 1 had W: it sits B, and the bot at W moves first
    // with nobody connected.
    let r2 = e.pair().await.expect("round 2");
    assert!(r2.byes.is_empty());
    let bt = r2.tables[1].clone();
    assert_eq!(bt.seats[1], people[0]);
    assert_eq!(bot_sides(&bt), vec![Side::W, Side::Y]);
    let mut three: Vec<String> = r2.tables[0].seats.to_vec();
    three.sort();
    let mut expected = people[1..].to_vec();
    expected.sort();
    assert_eq!(three, expected);
    until_ply(&e.api, &bt.game, 1).await;

    // The arbiter aborts the bot table: the new game has new bots of the
    // same level at the same seats, and its W bot moves at once.
    let out = e
        .arbiter(&bt.game, ArbiterAction::Abort, "the wrong board")
        .await
        .expect("abort");
    let game = out.replaced_by.expect("a new game");
    let r2_now: Round = e
        .api
        .get(&format!("/api/tournaments/{}/rounds/2", e.id))
        .await
        .expect("round 2");
    let nt = &r2_now.tables[1];
    assert_eq!(
        (nt.game.as_str(), nt.aborted.clone()),
        (game.as_str(), vec![bt.game.clone()])
    );
    assert_eq!(bot_sides(nt), vec![Side::W, Side::Y]);
    assert_eq!(nt.seats[1], people[0]);
    assert!(nt.seats[0] != bt.seats[0] && nt.seats[2] != bt.seats[2], "new bots");
    until_ply(&e.api, &game, 1).await;

    // A crash: the game comes back with its bots, which go on playing.
    let standings_before = e.standings().await;
    server.crash();
    server = TestServer::start(TestServer::config(Some(db.url.clone())));
    e.api = Api::new(server.base());
    assert_eq!(e.standings().await, standings_before);
    let mut c = Client::connect(server.addr, &game, Some(e.token_of(&people[0])), None).await;
    assert_eq!(c.side, Some(Side::B));
    play_one(&mut c, Side::B).await;
    assert!(c.until_turn(Side::B).await, "Y and W moved after the restart");
    let ply = c.status.as_ref().map_or(0, |s| s.ply);
    assert_eq!(ply, 4);

    let t = &r2.tables[0];
    let mut clients = connect(&server, &e, &t.game, &t.seats).await;
    finish(&mut clients, [Side::Y, Side::B]).await;
    e.arbiter(
        &game,
        ArbiterAction::Adjudicate {
            outcomes: [Outcome::Loss, Outcome::Draw, Outcome::Draw],
        },
        "time is up",
    )
    .await
    .expect("adjudicate");
    drop(c);

    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    let st = e.standings().await;
    assert_eq!(st.standings.len(), 4);
    assert!(st.standings.iter().all(|r| r.byes == 0 && r.games == 2));
    let p1 = st.standings.iter().find(|r| r.player == people[0]).expect("seed 1");
    assert_eq!((p1.points, p1.seats), (1, [1, 1, 0]));
    let records: Vec<GameRecord> = e
        .api
        .get(&format!("/api/tournaments/{}/games", e.id))
        .await
        .expect("records");
    assert_eq!(records.len(), 5, "four tables and the aborted game");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_show_at_a_bot_table_loses_it() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let e = Event::new(
        &server,
        4,
        json!({ "name": "Quick bots", "rounds": 1, "grace_ms": 2500, "byes": { "kind": "bot", "level": 1 } }),
    )
    .await;
    let r = e.pair().await.expect("round 1");
    let t = &r.tables[1];
    assert_eq!(
        (t.seats[0].as_str(), bot_sides(t)),
        (e.players[3].player.as_str(), vec![Side::B, Side::Y])
    );
    // The table of three plays it out; seed 4 never comes to its bot table.
    let mut clients = connect(&server, &e, &r.tables[0].game, &r.tables[0].seats).await;
    finish(&mut clients, [Side::Y, Side::B]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let record = loop {
        let rec: GameRecord = e.api.record(&t.game).await;
        if rec.phase == Phase::Finished {
            break rec;
        }
        assert!(Instant::now() < deadline, "the no-show's game never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(record.result.expect("a result").ending, Ending::Aborted { by: Side::W });
    let st = e.standings().await;
    assert_eq!(st.standings.len(), 4);
    let row = st
        .standings
        .iter()
        .find(|r| r.player == e.players[3].player)
        .expect("seed 4");
    assert_eq!((row.points, row.survival, row.games, row.byes), (0, 0, 1, 0));
    assert_eq!(e.view().await.status, TournamentStatus::Finished);
    server.stop().await;
}

#[tokio::test]
async fn the_late_entry_control_closes_and_reopens_registration_with_reasons_logged() {
    use protocol::tournament::{OrganizerAction, OrganizerEntry};
    use reqwest::Method;
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let mut e = Event::new(&server, 3, json!({ "name": "Late night", "rounds": 3 })).await;
    let path = format!("/api/tournaments/{}/registration", e.id);
    let register = |api: Api, code: String| async move {
        let p = api.guest().await;
        api.send(
            Method::POST,
            "/api/tournaments/register",
            Some(&p.token),
            &json!({ "code": code }),
        )
        .await
    };
    let close_now = json!({ "closes_ms": 1_000, "reason": "the hall is full" });
    // Only the organizer, only with a reason, never before registration opens.
    assert_eq!(
        e.api
            .send(Method::POST, &path, Some(&e.players[0].token), &close_now)
            .await
            .0,
        403
    );
    let no_reason = json!({ "closes_ms": null, "reason": "" });
    assert_eq!(
        e.api.send(Method::POST, &path, Some(&e.org.token), &no_reason).await.0,
        400
    );
    let t = e.view().await;
    assert_eq!(t.settings.registration_closes_ms, None, "a refusal changes nothing");
    let before_open = json!({ "closes_ms": t.settings.registration_opens_ms - 1, "reason": "oops" });
    let (status, text) = e.api.send(Method::POST, &path, Some(&e.org.token), &before_open).await;
    assert_eq!(status, 400, "{text}");
    // Closed now: a newcomer is refused; the players already in stay.
    let close_now = json!({ "closes_ms": t.settings.registration_opens_ms, "reason": "the hall is full" });
    let (status, text) = e.api.send(Method::POST, &path, Some(&e.org.token), &close_now).await;
    assert_eq!(status, 200, "{text}");
    let (status, text) = register(e.api.clone(), e.code.clone()).await;
    assert_eq!(status, 409, "{text}");
    assert!(text.contains("tournament_state") && text.contains("closed"), "{text}");
    assert_eq!(e.view().await.players.len(), 3);
    // Round 1 is paired; reopened, a late entrant registers and joins from round 2.
    e.pair().await.expect("round 1");
    let reopen = json!({ "closes_ms": null, "reason": "one more table" });
    let (status, text) = e.api.send(Method::POST, &path, Some(&e.org.token), &reopen).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(e.view().await.settings.registration_closes_ms, None);
    e.enter().await;
    assert_eq!(e.view().await.players.len(), 4);
    let log: Vec<OrganizerEntry> = e
        .api
        .get(&format!("/api/tournaments/{}/organizer-log", e.id))
        .await
        .unwrap();
    let seen: Vec<(OrganizerAction, &str)> = log.iter().map(|l| (l.action, l.reason.as_str())).collect();
    assert_eq!(
        seen,
        [
            (OrganizerAction::Registration, "the hall is full"),
            (OrganizerAction::Registration, "one more table"),
        ]
    );

    // A round robin cannot reopen once round 1 is paired (its groups are fixed).
    let rr = Event::new(
        &server,
        3,
        json!({ "name": "Groups", "pairing": { "kind": "round_robin", "group_size": 3 } }),
    )
    .await;
    rr.pair().await.expect("round 1");
    let path = format!("/api/tournaments/{}/registration", rr.id);
    let (status, text) = rr.api.send(Method::POST, &path, Some(&rr.org.token), &reopen).await;
    assert_eq!(status, 409, "{text}");
    let opens = rr.view().await.settings.registration_opens_ms;
    let close = json!({ "closes_ms": opens, "reason": "closing the books" });
    let (status, text) = rr.api.send(Method::POST, &path, Some(&rr.org.token), &close).await;
    assert_eq!(status, 200, "closing stays possible: {text}");
    assert_eq!(rr.view().await.settings.registration_closes_ms, Some(opens));
}

#[tokio::test]
async fn the_tournament_list_shows_each_event_as_its_own_page_does() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    // Three events in different states: registering, a round in play with a bye, and empty.
    let a = Event::new(&server, 2, json!({ "name": "Registering" })).await;
    let b = Event::new(&server, 4, json!({ "name": "Running", "rounds": 2 })).await;
    b.pair().await.expect("round 1 (three play, one bye)");
    let c = Event::new(&server, 0, json!({ "name": "Empty" })).await;
    let list: Vec<Tournament> = a.api.get("/api/tournaments").await.unwrap();
    assert_eq!(list.len(), 3);
    for e in [&a, &b, &c] {
        let page: Tournament = e.api.get(&format!("/api/tournaments/{}", e.id)).await.unwrap();
        let listed = list.iter().find(|t| t.id == e.id).expect("listed");
        assert_eq!(listed, &page, "{}", page.settings.name);
    }
    let running = list.iter().find(|t| t.id == b.id).unwrap();
    assert_eq!(
        (running.round, running.players.len(), running.round_over),
        (1, 4, false)
    );
}

/// A 三国暗棋 tournament end to end: three entrants, one round; the table's
/// game keeps the seats the pairing gave (no random seating), waits for the
/// seats' seeds (the server filled the table, nobody joined with one), deals
/// from all three when they arrive over the sockets, is played (a flip) and
/// finished by resignations; the standings count the winner's game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anqi_tournament_plays_its_round_with_the_seats_seeds() {
    let db = TestDb::create().await;
    let server = TestServer::start(TestServer::config(Some(db.url.clone())));
    let settings = json!({
        "name": "三国暗棋 evening", "rounds": 1, "variant": "anqi",
        "time_control": { "base_ms": 300000, "increment_ms": 0 }
    });
    let e = Event::new(&server, 3, settings).await;
    let r1 = e.pair().await.expect("round 1");
    assert_eq!(r1.tables.len(), 1);
    let table = &r1.tables[0];
    let snap = e.api.state(&table.game).await;
    assert_eq!(snap.settings.variant, protocol::Variant::Anqi);
    assert_eq!(snap.phase, Phase::Open, "the full table waits for its seeds");
    let a = snap.status.anqi.clone().expect("anqi status");
    assert!(a.server_hash.is_some() && a.commitment.is_none());
    // Each entrant is at the seat the pairing gave it.
    let mut clients = connect(&server, &e, &table.game, &table.seats).await;
    let seeds = ["0a", "0b", "0c"].map(|b| b.repeat(32));
    for (c, seed) in clients.iter_mut().zip(&seeds) {
        c.send(&ClientMsg::Seed { seed: seed.clone() }).await;
    }
    for c in clients.iter_mut() {
        c.until(|ev| matches!(ev, GameEvent::Started { .. })).await;
    }
    let snap = e.api.state(&table.game).await;
    assert_eq!(snap.phase, Phase::Live);
    let a = snap.status.anqi.clone().unwrap();
    assert_eq!(a.seeds, Some(seeds.clone().map(Some)), "every seat's seed counts");
    assert!(a.commitment.is_some());
    // Seat 1 flips; then seats 1 and 2 resign: seat 3 is first.
    clients[0]
        .send(&ClientMsg::Move {
            ply: 0,
            mv: "+a1".into(),
        })
        .await;
    clients[0].until(|ev| matches!(ev, GameEvent::Moved { .. })).await;
    for side in [Side::W, Side::B] {
        clients[side.index()].send(&ClientMsg::Resign).await;
        clients[side.index()]
            .until(|ev| matches!(ev, GameEvent::Eliminated(d) if d.side == side))
            .await;
    }
    let result = match clients[2].until(|ev| matches!(ev, GameEvent::Finished { .. })).await {
        GameEvent::Finished { result } => result,
        _ => unreachable!(),
    };
    assert_eq!(result.placing, Some([3, 2, 1]));
    assert_eq!(result.outcomes[2], Some(Outcome::Win));
    let end = e.api.state(&table.game).await;
    let a = end.status.anqi.expect("anqi status");
    assert!(a.server_seed.is_some() && a.layout.is_some(), "the deal is published");
    // The round is over; the winner leads the standings.
    let st = e.standings().await;
    assert_eq!(st.standings[0].player, table.seats[2]);
    assert!(st.standings[0].points > st.standings[1].points, "{:?}", st.standings);
    server.stop().await;
}
