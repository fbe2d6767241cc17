//! Bots in seats: what a bot thinks about, how long it may think, and the
//! search itself, run off the room's task.
//!
//! The room never searches. After every step the actor asks
//! [`Room::bot_job`](super::core::Room::bot_job) whether a bot has something
//! to do (answer a draw offer, or move), takes the variant's search from the
//! game ([`RoomGame::bot_search`](super::games::RoomGame::bot_search): a
//! closure owning only what that bot may see) and runs it through [`think`]
//! on a blocking thread once a permit of the server's [`BotPool`] is free (a
//! few searches at a time, however many games have bots). The answer comes
//! back to the room as that seat's action, tagged with the game's *epoch*
//! (its number of accepted commands) when the job was made; an answer for
//! another epoch is stale (the game moved on: another side resigned, a draw
//! was offered, a flag fell) and is dropped, and the room asks again.
//!
//! **Time.** A search is bounded by its level's node budget and by a
//! deadline from [`think_ms`], read from the side's clock when the job is
//! made; the stop callback compares the deadline with the real clock every
//! 1024 nodes. A job that waited for a permit has the less time left.
//!
//! **Draw votes** are the variant's policy (三国象棋, `bot::answer_draw`: in
//! phase 3 a bot always declines, so an offer can never be a way for two
//! people to gang up on a bot or to use one against the third side; in
//! phase 2 it accepts only when its own search says it stands clearly worse
//! or the position is a dead draw). A bot weighs offering a draw only when
//! its variant says it may ([`RoomGame::bot_weighs_offer`](super::games::RoomGame::bot_weighs_offer);
//! 三国象棋: phase 2), on its own turn, and once every [`OFFER_EVERY_PLIES`]
//! plies (it costs a search).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::clock::ClockView;
use protocol::{Side, TimeControl};

use super::core::Act;
use super::games::{BotAsk, BotSearch, Command};
use crate::pace::{Pacer, People, Work};

/// How long a bot may take to answer a draw offer (a search when it is to
/// move, else a static evaluation), ms.
pub const ANSWER_MS: u64 = 1_000;
/// Never more than this on one move, ms (the level's node budget usually
/// ends the search far earlier).
pub const MAX_THINK_MS: u64 = 15_000;
/// Main time is shared as if this many moves were left.
pub const MOVES_TO_GO: u64 = 30;
/// A bot weighs a draw offer at most once in this many plies.
pub const OFFER_EVERY_PLIES: u32 = 30;

/// What a bot has to decide.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Task {
    /// Its move at this ply (and, in phase 2, whether to offer a draw first).
    Move {
        /// The ply it moves at.
        ply: u32,
    },
    /// Its answer to the pending draw offer.
    AnswerDraw,
}

/// One decision for one bot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The bot's seat.
    pub side: Side,
    /// Its level.
    pub level: bot::Level,
    /// The game's number of accepted commands when the job was made.
    pub epoch: usize,
    /// What to decide.
    pub task: Task,
    /// How long it may think, ms.
    pub think_ms: u64,
}

/// How long a bot may think on a move, from its clock as it stands now
/// (`view`, of the side to move) and the time control.
///
/// - main time: a [`MOVES_TO_GO`]th of what is left plus ¾ of the increment,
///   never more than half of what is left;
/// - byo-yomi (periods left): at least 60% of a period (of the current one
///   once main time is spent), so a bot never overruns a period;
/// - a per-move limit (步时): at most ¾ of what is left of it;
/// - never more than [`MAX_THINK_MS`].
///
/// The rest of the clock is the margin for the commit and the scheduling.
pub fn think_ms(tc: &TimeControl, view: &ClockView) -> u64 {
    let main = (view.remaining_ms / MOVES_TO_GO + tc.increment_ms * 3 / 4).min(view.remaining_ms / 2);
    let byoyomi = match (tc.byoyomi, view.period_left_ms) {
        (_, Some(left)) => left * 6 / 10,
        (Some(b), None) if view.periods_left > 0 => b.period_ms * 6 / 10,
        _ => 0,
    };
    let mut ms = main.max(byoyomi);
    if let Some(left) = view.move_left_ms.or(tc.per_move_ms) {
        ms = ms.min(left * 3 / 4);
    }
    ms.min(MAX_THINK_MS)
}

/// A seed for a bot's search: the same game, ply and seat give the same seed.
pub fn seed(game_id: &str, job: &Job) -> u64 {
    // FNV-1a over the id, then the ply and the seat.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in game_id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let ply = match job.task {
        Task::Move { ply } => u64::from(ply),
        Task::AnswerDraw => u64::MAX,
    };
    (h ^ ply.wrapping_mul(0x9e37_79b9_7f4a_7c15)) ^ (job.side.index() as u64) << 60
}

impl Job {
    /// What the bot is asked, for its variant's search; `may_offer`: whether
    /// it may weigh a draw offer before moving (the room's throttle).
    pub fn ask(&self, may_offer: bool) -> BotAsk {
        match self.task {
            Task::Move { .. } => BotAsk::Move { may_offer },
            Task::AnswerDraw => BotAsk::AnswerOffer,
        }
    }
}

/// Runs a job's search (on a blocking thread): the action the bot takes, or
/// `None` if the search found none or chose what a seat cannot do. Stops at
/// the halt's deadline or as soon as it is cancelled (the room dropped the job).
pub fn think(search: BotSearch, job: &Job, halt: &Halt) -> Option<Act> {
    match (search(halt)?, job.task) {
        (Command::Play(mv), Task::Move { ply }) => Some(Act::Move { ply, mv }),
        (Command::Resign, _) => Some(Act::Resign),
        (Command::OfferDraw, Task::Move { .. }) => Some(Act::OfferDraw),
        (Command::AnswerDraw(accept), Task::AnswerDraw) => Some(Act::AnswerDraw(accept)),
        // A move when asked for an answer (or the other way round), or what
        // only the server decides: not a seat's action.
        _ => None,
    }
}

/// What a search asks every 1024 nodes whether it must stop: the room
/// dropped the job (`cancel`), or its deadline passed. A search of a game of
/// bots alone is also *paced*: before answering, it rests for as long as the
/// server's [`Pacer`] says its share of the core is spent.
#[derive(Debug)]
pub struct Halt<'a> {
    deadline: Instant,
    cancel: &'a AtomicBool,
    pace: Option<&'a Pacer>,
    /// When the search last asked (or started): what ran since is charged.
    since: Cell<Instant>,
}

/// The longest a paced search rests without looking at its cancel flag.
const REST_SLICE: Duration = Duration::from_millis(5);

impl<'a> Halt<'a> {
    /// A search that stops at `deadline` or once `cancel` is set, paced by
    /// `pace` if given (from now on).
    pub fn new(deadline: Instant, cancel: &'a AtomicBool, pace: Option<&'a Pacer>) -> Halt<'a> {
        Halt {
            deadline,
            cancel,
            pace,
            since: Cell::new(Instant::now()),
        }
    }

    /// The search's deadline.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the search stops now: cancelled, or its deadline passed.
    pub fn stops(&self) -> bool {
        self.stops_by(self.deadline)
    }

    /// Whether a part of the search that must end by `until` (never later
    /// than the deadline) stops now. A paced search first rests, in slices
    /// of [`REST_SLICE`], as long as its pacer says, but never past `until`
    /// nor once cancelled.
    pub fn stops_by(&self, until: Instant) -> bool {
        let until = until.min(self.deadline);
        if let Some(pacer) = self.pace {
            let now = Instant::now();
            let rest = pacer.charge(now, now.saturating_duration_since(self.since.get()));
            let wake = (now + rest).min(until);
            let mut t = now;
            while t < wake && !self.cancelled() {
                std::thread::sleep((wake - t).min(REST_SLICE));
                t = Instant::now();
            }
            pacer.rested(t.saturating_duration_since(now));
            self.since.set(t);
        }
        self.cancelled() || Instant::now() >= until
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// The searches the server runs at once: places on the blocking threads,
/// handed out by [`Gate`] — a search for a game with a person in it before
/// any search of a game of bots alone, so that games of bots (which play at
/// full speed) never keep a person waiting for a bot's reply — and the
/// [`Pacer`] of the searches of games of bots alone.
#[derive(Clone, Debug)]
pub struct BotPool {
    gate: Arc<Gate>,
    pacer: Arc<Pacer>,
}

/// The share of one core the searches of games of bots alone take by
/// default while people play, percent ([`Pacer`]): 5 % cost people's moves
/// a quarter of their p99 under the games-of-bots attack, 1 % a tenth
/// (docs/CAPACITY.md, issue 18).
pub const BOTS_ALONE_PERCENT: u32 = 1;

impl BotPool {
    /// A pool of `threads` searches at a time (at least 1), the searches of
    /// games of bots alone paced to [`BOTS_ALONE_PERCENT`] of a core.
    pub fn new(threads: usize) -> BotPool {
        BotPool::paced(
            threads,
            BOTS_ALONE_PERCENT,
            Arc::default(),
            crate::metrics::Metrics::default(),
        )
    }

    /// A pool of `threads` searches at a time (at least 1), the searches of
    /// games of bots alone paced to `percent` of a core (1–100) while
    /// `people` play, their rests counted in `metrics`.
    pub fn paced(threads: usize, percent: u32, people: Arc<People>, metrics: crate::metrics::Metrics) -> BotPool {
        BotPool {
            gate: Arc::new(Gate::new(threads.max(1))),
            pacer: Arc::new(Pacer::new(percent, Work::BotsAlone, people, metrics)),
        }
    }

    /// The pacer of the searches of games of bots alone.
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// Runs a job's search on a thread of its own once a place is free
    /// (games with a person first: `human`; a game of bots alone is paced);
    /// `None` if the thread failed or the search found no action. Dropping
    /// the returned future's task cancels the search through `cancel`.
    ///
    /// The thread runs at the lowest priority, so that on a busy core
    /// people's moves (the runtime's workers) go first; it is not one of
    /// tokio's blocking pool, since a pool thread once lowered could not be
    /// raised again (crate::priority).
    pub async fn run(&self, search: BotSearch, job: Job, cancel: Arc<AtomicBool>, human: bool) -> Option<Act> {
        let place = self.gate.enter(human).await;
        let deadline = Instant::now() + Duration::from_millis(job.think_ms);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let pacer = (!human).then(|| Arc::clone(&self.pacer));
        let spawned = std::thread::Builder::new().name("bot-search".into()).spawn(move || {
            let _place = place;
            crate::priority::lower_this_thread();
            let halt = Halt::new(deadline, &cancel, pacer.as_deref());
            let _ = tx.send(think(search, &job, &halt));
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "could not start a bot search thread");
            return None;
        }
        // A search that panicked drops its sender: no action.
        rx.await.ok().flatten()
    }
}

/// Places for `n` searches at once, in two lines: searches for games with a
/// person are let in before any search of bots alone; within a line, first
/// come first served.
#[derive(Debug)]
pub struct Gate {
    inner: std::sync::Mutex<GateInner>,
}

#[derive(Debug)]
struct GateInner {
    free: usize,
    /// Waiting searches of games with a person.
    people: std::collections::VecDeque<tokio::sync::oneshot::Sender<()>>,
    /// Waiting searches of games of bots alone.
    bots: std::collections::VecDeque<tokio::sync::oneshot::Sender<()>>,
}

/// A place taken at the [`Gate`], handed to the next in line when dropped.
#[derive(Debug)]
pub struct Place {
    gate: Arc<Gate>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.gate.leave();
    }
}

impl Gate {
    /// `n` places.
    pub fn new(n: usize) -> Gate {
        Gate {
            inner: std::sync::Mutex::new(GateInner {
                free: n,
                people: Default::default(),
                bots: Default::default(),
            }),
        }
    }

    /// Waits for a place: at once if one is free, else in the line of
    /// `human` games (served first) or of bots alone.
    pub async fn enter(self: &Arc<Gate>, human: bool) -> Place {
        let rx = {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if g.free > 0 {
                g.free -= 1;
                None
            } else {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if human {
                    g.people.push_back(tx)
                } else {
                    g.bots.push_back(tx)
                }
                Some(rx)
            }
        };
        let place = Place { gate: Arc::clone(self) };
        if let Some(rx) = rx {
            // The place is handed over with the message: the Place above
            // owns it from here (a sender dropped without sending cannot
            // happen while the gate lives, as the gate holds every sender).
            if rx.await.is_err() {
                tracing::error!("a bot search's place was lost");
            }
        }
        place
    }

    /// A place is given back: to the first waiting search of a game with a
    /// person, else of bots alone (skipping any that stopped waiting), else
    /// it is free.
    fn leave(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let next = match g.people.pop_front() {
                Some(tx) => Some(tx),
                None => g.bots.pop_front(),
            };
            match next {
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    g.free += 1;
                    return;
                }
            }
        }
    }

    /// Searches waiting for a place (people's, bots').
    pub fn waiting(&self) -> (usize, usize) {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (g.people.len(), g.bots.len())
    }
}

#[cfg(test)]
mod tests {
    use protocol::Byoyomi;

    use super::*;

    fn tc(base_ms: u64, increment_ms: u64, per_move_ms: Option<u64>, byoyomi: Option<(u32, u64)>) -> TimeControl {
        TimeControl {
            base_ms,
            increment_ms,
            per_move_ms,
            byoyomi: byoyomi.map(|(periods, period_ms)| Byoyomi { periods, period_ms }),
        }
    }

    /// The running clock of a side `elapsed` ms into its first turn.
    fn view(tc: &TimeControl, elapsed: u64) -> ClockView {
        let mut clocks = engine::clock::Clocks::new((*tc).into());
        clocks.start_turn(engine::Side::W, 0);
        clocks.view(elapsed)[0]
    }

    /// With every place taken by games of bots alone, a search for a game
    /// with a person goes before every search of bots alone that waited
    /// longer: the order is checked, not timings.
    #[tokio::test]
    async fn a_game_with_a_person_is_served_before_games_of_bots() {
        let gate = Arc::new(Gate::new(1));
        let busy = gate.enter(false).await;
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for (name, human) in [
            ("bots-1", false),
            ("bots-2", false),
            ("person", true),
            ("bots-3", false),
        ] {
            let (g, order) = (Arc::clone(&gate), Arc::clone(&order));
            waiting.push(tokio::spawn(async move {
                let place = g.enter(human).await;
                order.lock().unwrap().push(name);
                drop(place);
            }));
            // Each is in its line before the next comes.
            while {
                let (p, b) = gate.waiting();
                p + b < waiting.len()
            } {
                tokio::task::yield_now().await;
            }
        }
        drop(busy);
        for w in waiting {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["person", "bots-1", "bots-2", "bots-3"]);
        // Every place is free again.
        let _a = gate.enter(false).await;
        assert_eq!(gate.waiting(), (0, 0));
    }

    #[test]
    fn main_time_is_shared_over_the_moves_left_plus_the_increment() {
        // 10 min + 5 s: 600 000 / 30 + 3 750 = 23 750, over the cap.
        let t = tc(600_000, 5_000, None, None);
        assert_eq!(think_ms(&t, &view(&t, 0)), MAX_THINK_MS);
        let t = tc(300_000, 2_000, None, None);
        assert_eq!(think_ms(&t, &view(&t, 0)), 10_000 + 1_500);
        // 1 s into the turn: what is left counts.
        assert_eq!(think_ms(&t, &view(&t, 1_000)), 299_000 / 30 + 1_500);
    }

    #[test]
    fn never_more_than_half_of_the_main_time_left() {
        // 2 s left and a 5 s increment: the increment cannot be spent in advance.
        let t = tc(2_000, 5_000, None, None);
        assert_eq!(think_ms(&t, &view(&t, 0)), 1_000);
        let t = tc(0, 5_000, None, Some((1, 1)));
        // Main time gone, one period of 1 ms: nothing to think with.
        assert_eq!(think_ms(&t, &view(&t, 0)), 0);
    }

    #[test]
    fn byoyomi_gives_sixty_percent_of_a_period() {
        // Main time 1 s, periods of 10 s: a period's worth beats the share of main time.
        let t = tc(1_000, 0, None, Some((3, 10_000)));
        assert_eq!(think_ms(&t, &view(&t, 0)), 6_000);
        // In byo-yomi, 4 s into the current period (main spent after 1 s, 3 s of the period gone).
        assert_eq!(think_ms(&t, &view(&t, 4_000)), 7_000 * 6 / 10);
        // Large main time: the share of main time wins.
        let t = tc(240_000, 0, None, Some((3, 10_000)));
        assert_eq!(think_ms(&t, &view(&t, 0)), 8_000);
    }

    #[test]
    fn a_per_move_limit_caps_it() {
        let t = tc(600_000, 0, Some(4_000), None);
        assert_eq!(think_ms(&t, &view(&t, 0)), 3_000);
        // 2 s into the move: ¾ of the 2 s left.
        assert_eq!(think_ms(&t, &view(&t, 2_000)), 1_500);
    }

    #[test]
    fn never_more_than_the_cap() {
        let t = tc(7 * 24 * 3_600_000, 3_600_000, None, None);
        assert_eq!(think_ms(&t, &view(&t, 0)), MAX_THINK_MS);
    }

    #[test]
    fn every_budget_fits_in_the_clock() {
        // Whatever the clock, a bot that thinks its budget does not flag:
        // the budget is below what the side may still use on this move.
        for base in [0, 50, 1_000, 60_000, 600_000] {
            for inc in [0, 500, 5_000] {
                for per_move in [None, Some(300), Some(5_000)] {
                    for byo in [None, Some((1, 200)), Some((5, 30_000))] {
                        let t = tc(base, inc, per_move, byo);
                        for elapsed in [0, 40, 900, 20_000] {
                            let v = view(&t, elapsed);
                            let allowed = {
                                let main_left = v.remaining_ms;
                                let byo_left = match (t.byoyomi, v.period_left_ms) {
                                    (_, Some(left)) => left,
                                    (Some(b), None) if v.periods_left > 0 => b.period_ms,
                                    _ => 0,
                                };
                                let left = main_left + byo_left;
                                v.move_left_ms.map_or(left, |m| m.min(left))
                            };
                            let ms = think_ms(&t, &v);
                            assert!(
                                ms <= allowed * 3 / 4 || ms == 0,
                                "{t:?} at {elapsed}: {ms} of {allowed}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_job_answers_within_its_deadline_and_stops_when_cancelled() {
        use crate::room::games::RoomGame;
        use crate::room::games::sanguo::SanguoGame;
        let settings = protocol::GameSettings {
            variant: protocol::Variant::Sanguo,
            time_control: TimeControl::default(),
            direction: protocol::Direction::Ccw,
            public: true,
            players_chat: true,
            grace_ms: 0,
            rated: false,
            anqi: None,
        };
        let game = SanguoGame::new(&settings);
        let job = Job {
            side: Side::W,
            level: bot::Level::Three,
            epoch: 0,
            task: Task::Move { ply: 0 },
            think_ms: 0,
        };
        let legal = game.status(true).legal_moves;
        // A deadline already past and a cancelled job both still give a legal move.
        let past = Instant::now();
        for cancel in [false, true] {
            let search = game.bot_search(job.side, job.level, job.ask(true), 1);
            let flag = AtomicBool::new(cancel);
            match think(search, &job, &Halt::new(past, &flag, None)) {
                Some(Act::Move { ply: 0, mv }) => assert!(legal.contains(&mv), "{mv}"),
                other => panic!("{other:?}"),
            }
        }
        // No offer is pending: a bot asked to answer declines.
        let answer = Job {
            task: Task::AnswerDraw,
            ..job
        };
        let search = game.bot_search(answer.side, answer.level, answer.ask(false), 1);
        assert_eq!(
            think(search, &answer, &Halt::new(past, &AtomicBool::new(false), None)),
            Some(Act::AnswerDraw(false))
        );
    }

    fn ms(n: f64) -> Duration {
        Duration::from_secs_f64(n / 1000.0)
    }

    /// A paced search rests when its share is spent, but stops at its
    /// deadline all the same, and at once when cancelled; a search of a game
    /// with a person never rests.
    #[test]
    fn a_paced_search_never_rests_past_its_deadline_nor_once_cancelled() {
        let metrics = crate::metrics::Metrics::default();
        let p = Pacer::new(1, Work::BotsAlone, Arc::default(), metrics.clone());
        // People play; a hundred seconds of rest owed.
        p.people().person_moved(Instant::now());
        p.charge(Instant::now(), Duration::from_secs(1));
        let flag = AtomicBool::new(false);
        let deadline = Instant::now() + ms(50.0);
        let halt = Halt::new(deadline, &flag, Some(&p));
        assert!(halt.stops(), "rested until the deadline, then stops");
        assert!(Instant::now() >= deadline);
        assert!(
            metrics.bot_rest_us.load(Ordering::Relaxed) >= 40_000,
            "the rest is counted"
        );

        let far = Instant::now() + Duration::from_secs(3600);
        let cancelled = AtomicBool::new(true);
        let t = Instant::now();
        assert!(Halt::new(far, &cancelled, Some(&p)).stops(), "cancelled: stops");
        assert!(t.elapsed() < Duration::from_secs(60), "without resting the debt");

        let person = Halt::new(far, &flag, None);
        let t = Instant::now();
        assert!(!person.stops() && !person.stops_by(far));
        assert!(t.elapsed() < Duration::from_secs(60), "a game with a person: no rest");
        assert!(person.stops_by(Instant::now()), "a part that must end now stops");
    }

    #[test]
    fn an_answer_of_the_wrong_kind_is_no_action() {
        let job = Job {
            side: Side::W,
            level: bot::Level::One,
            epoch: 0,
            task: Task::AnswerDraw,
            think_ms: 0,
        };
        let never = AtomicBool::new(false);
        let halt = Halt::new(Instant::now(), &never, None);
        let play: BotSearch = Box::new(|_| Some(Command::Play("W72-W54".into())));
        assert_eq!(think(play, &job, &halt), None);
        let timeout: BotSearch = Box::new(|_| Some(Command::Timeout));
        assert_eq!(think(timeout, &job, &halt), None);
        let none: BotSearch = Box::new(|_| None);
        assert_eq!(think(none, &job, &halt), None);
    }

    #[test]
    fn seeds_differ_by_ply_and_seat_and_repeat_for_the_same_job() {
        let job = |side, ply| Job {
            side,
            level: bot::Level::One,
            epoch: 0,
            task: Task::Move { ply },
            think_ms: 0,
        };
        assert_eq!(seed("g", &job(Side::W, 3)), seed("g", &job(Side::W, 3)));
        assert_ne!(seed("g", &job(Side::W, 3)), seed("g", &job(Side::W, 4)));
        assert_ne!(seed("g", &job(Side::W, 3)), seed("g", &job(Side::B, 3)));
        assert_ne!(seed("g", &job(Side::W, 3)), seed("h", &job(Side::W, 3)));
    }
}
