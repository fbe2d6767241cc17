//! Bots in seats: what a bot thinks about, how long it may think, and the
//! search itself, run off the room's task.
//!
//! The room never searches. After every step the actor asks
//! [`Room::bot_job`](super::core::Room::bot_job) whether a bot has something
//! to do (answer a draw offer, or move), and runs [`think`] on a blocking
//! thread once a permit of the server's [`BotPool`] is free (a few searches at
//! a time, however many games have bots). The answer comes back to the room
//! as that seat's action, tagged with the game's *epoch* (its number of engine
//! events) when the job was made; an answer for another epoch is stale (the
//! game moved on: another side resigned, a draw was offered, a flag fell) and
//! is dropped, and the room asks again.
//!
//! **Time.** A search is bounded by its level's node budget and by a
//! deadline from [`think_ms`], read from the side's clock when the job is
//! made; the stop callback compares the deadline with the real clock every
//! 1024 nodes. A job that waited for a permit has the less time left.
//!
//! **Draw votes** (the policy is `bot::answer_draw`'s): in phase 3 a bot
//! always declines, so an offer can never be a way for two people to gang up
//! on a bot or to use one against the third side; in phase 2 it accepts only
//! when its own search says it stands clearly worse or the position is a
//! dead draw. A bot weighs offering a draw (`bot::offer_draw`: it stands
//! clearly worse, or the position is dead) only in phase 2, on its own turn,
//! and once every [`OFFER_EVERY_PLIES`] plies (it costs a search).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::Game;
use engine::clock::ClockView;
use protocol::{Side, TimeControl};
use tokio::sync::Semaphore;

use super::core::Act;

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
    /// The game's number of engine events when the job was made.
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

/// Runs a job (on a blocking thread): the action the bot takes. Stops at
/// `deadline` or as soon as `cancel` is set (the room dropped the job).
/// `offer`: whether the bot may offer a draw before moving.
pub fn think(game: &Game, job: &Job, seed: u64, offer: bool, deadline: Instant, cancel: &AtomicBool) -> Act {
    let mut stop = |_nodes: u64| cancel.load(Ordering::Relaxed) || Instant::now() >= deadline;
    let side = job.side.into();
    match job.task {
        Task::AnswerDraw => Act::AnswerDraw(bot::answer_draw_with(game, side, job.level, &mut stop)),
        Task::Move { ply } => {
            if offer {
                // A third of the time at most for the offer's own search.
                let now = Instant::now();
                let until = now + deadline.saturating_duration_since(now) / 3;
                let mut stop_offer = |_nodes: u64| cancel.load(Ordering::Relaxed) || Instant::now() >= until;
                if bot::offer_draw_with(game, side, job.level, &mut stop_offer) {
                    return Act::OfferDraw;
                }
            }
            match bot::choose_move_with(game, &job.level.config(), seed, &mut stop) {
                Some(m) => Act::Move { ply, mv: m.to_string() },
                // No legal move at a live turn cannot happen (a side without
                // one is mated before its turn); resigning keeps the game going.
                None => Act::Resign,
            }
        }
    }
}

/// The searches the server runs at once: permits for the blocking threads.
#[derive(Clone, Debug)]
pub struct BotPool {
    permits: Arc<Semaphore>,
}

impl BotPool {
    /// A pool of `threads` searches at a time (at least 1).
    pub fn new(threads: usize) -> BotPool {
        BotPool {
            permits: Arc::new(Semaphore::new(threads.max(1))),
        }
    }

    /// Runs a job on a blocking thread once a permit is free; `None` if the
    /// pool is closed or the thread failed. Dropping the returned future's
    /// task cancels the search through `cancel`.
    pub async fn run(&self, game: Game, job: Job, seed: u64, offer: bool, cancel: Arc<AtomicBool>) -> Option<Act> {
        let deadline = Instant::now() + Duration::from_millis(job.think_ms);
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok()?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            think(&game, &job, seed, offer, deadline, &cancel)
        })
        .await
        .ok()
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
        let game = Game::new(engine::Direction::Ccw);
        let job = Job {
            side: Side::W,
            level: bot::Level::Three,
            epoch: 0,
            task: Task::Move { ply: 0 },
            think_ms: 0,
        };
        let legal: Vec<String> = game.position().legal_moves().iter().map(|m| m.to_string()).collect();
        // A deadline already past and a cancelled job both still give a legal move.
        let past = Instant::now();
        for cancel in [false, true] {
            match think(&game, &job, 1, true, past, &AtomicBool::new(cancel)) {
                Act::Move { ply: 0, mv } => assert!(legal.contains(&mv), "{mv}"),
                other => panic!("{other:?}"),
            }
        }
        // No offer is pending: a bot asked to answer declines.
        let answer = Job {
            task: Task::AnswerDraw,
            ..job
        };
        assert_eq!(
            think(&game, &answer, 1, false, past, &AtomicBool::new(false)),
            Act::AnswerDraw(false)
        );
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
