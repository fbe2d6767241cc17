//! Bulk work that anyone may ask for, kept to a share of a core while
//! people play: the searches of games of bots alone and password hashing.
//! See [`Pacer`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The share of one core that a kind of bulk work ([`Work`]) may take
/// together, server-wide, while people play: a budget of running time that
/// fills at `share` seconds per second, up to [`PACE_BURST`]; work that
/// spent more rests until the budget is back. When no person has moved
/// anywhere for [`PEOPLE_QUIET`] ([`People`]) it runs unpaced. People's own
/// work (their moves, the searches of games with a person) is never paced.
///
/// Why: on this project's test hosts any work that keeps the server's core
/// busy, even at the lowest priority (crate::priority), costs people's moves
/// some of their p99 latency, in proportion to how much of the core it takes
/// (docs/CAPACITY.md, issue 18). A game of bots alone plays at full speed
/// for as long as it lasts, and a login flood from many addresses keeps the
/// password hashing busy within every per-address limit; paced, either takes
/// its share and no more.
#[derive(Debug)]
pub struct Pacer {
    share: f64,
    bucket: std::sync::Mutex<Bucket>,
    work: Work,
    /// Where the time the paced work rested is counted.
    metrics: crate::metrics::Metrics,
    people: Arc<People>,
}

/// What a [`Pacer`] paces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Work {
    /// The searches of games of bots alone (crate::room::bots).
    BotsAlone,
    /// Password hashing (crate::limits::Hasher).
    Hashing,
}

/// When a person last moved, anywhere on the server: what tells the pacers
/// whether people play.
#[derive(Debug)]
pub struct People {
    /// `person_ms` counts from here.
    epoch: Instant,
    /// When a person last moved, ms after `epoch` (0: never).
    person_ms: AtomicU64,
}

impl Default for People {
    fn default() -> People {
        People {
            epoch: Instant::now(),
            person_ms: AtomicU64::new(0),
        }
    }
}

impl People {
    /// A person's move was received at `at` (the room calls this for every
    /// move a person makes: one relaxed store).
    pub fn person_moved(&self, at: Instant) {
        let ms = at.saturating_duration_since(self.epoch).as_millis() as u64;
        self.person_ms.store(ms.max(1), Ordering::Relaxed);
    }

    /// Whether a person has moved within [`PEOPLE_QUIET`] of `now`.
    pub fn playing(&self, now: Instant) -> bool {
        match self.person_ms.load(Ordering::Relaxed) {
            0 => false,
            ms => now.saturating_duration_since(self.epoch + Duration::from_millis(ms)) < PEOPLE_QUIET,
        }
    }
}

#[derive(Debug)]
struct Bucket {
    /// Running time the paced work may take now, seconds (negative: owed).
    balance: f64,
    /// When the balance was last brought up to date.
    at: Instant,
}

/// The running time paced work may take at once ahead of its share.
pub const PACE_BURST: Duration = Duration::from_millis(5);
/// How long after a person's last move (anywhere on the server) bulk work
/// stays paced.
pub const PEOPLE_QUIET: Duration = Duration::from_secs(2);

impl Pacer {
    /// `work` limited to `percent` of one core (1–100; 100 is still a
    /// limit: one core's worth, however many threads) while `people` play,
    /// its rests counted in `metrics`.
    pub fn new(percent: u32, work: Work, people: Arc<People>, metrics: crate::metrics::Metrics) -> Pacer {
        Pacer {
            share: f64::from(percent.clamp(1, 100)) / 100.0,
            bucket: std::sync::Mutex::new(Bucket {
                balance: PACE_BURST.as_secs_f64(),
                at: Instant::now(),
            }),
            work,
            metrics,
            people,
        }
    }

    /// Who tells this pacer whether people play.
    pub fn people(&self) -> &People {
        &self.people
    }

    /// Charges `ran` (what a piece of paced work ran since it last asked) at
    /// `now`, and returns how long it must rest before it runs on (never,
    /// while no person plays: then the budget stays full).
    pub fn charge(&self, now: Instant, ran: Duration) -> Duration {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let since = b.at;
        b.at = b.at.max(now);
        if !self.people.playing(now) {
            b.balance = PACE_BURST.as_secs_f64();
            return Duration::ZERO;
        }
        let refill = now.saturating_duration_since(since).as_secs_f64() * self.share;
        b.balance = (b.balance + refill).min(PACE_BURST.as_secs_f64()) - ran.as_secs_f64();
        if b.balance >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-b.balance / self.share)
        }
    }

    /// Counts a rest of `d` (`/metrics`).
    pub fn rested(&self, d: Duration) {
        let counter = match self.work {
            Work::BotsAlone => &self.metrics.bot_rest_us,
            Work::Hashing => &self.metrics.hashing_rest_us,
        };
        counter.fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    /// Runs `job`, hands what it made to `answer`, and then rests as long as
    /// the budget says (a job that cannot stop halfway, such as a password
    /// hash: it is charged whole). The rest is counted before the answer
    /// goes out, so whoever gets the answer sees the rest in the metrics;
    /// the answer does not wait for the rest.
    pub fn run_then_rest<T>(&self, job: impl FnOnce() -> T, answer: impl FnOnce(T)) {
        let start = Instant::now();
        let out = job();
        let now = Instant::now();
        let rest = self.charge(now, now - start);
        if !rest.is_zero() {
            self.rested(rest);
        }
        answer(out);
        if !rest.is_zero() {
            std::thread::sleep(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: f64) -> Duration {
        Duration::from_secs_f64(n / 1000.0)
    }

    fn near(a: Duration, b: Duration) -> bool {
        a.abs_diff(b) < Duration::from_micros(1)
    }

    fn pacer(percent: u32) -> Pacer {
        Pacer::new(
            percent,
            Work::BotsAlone,
            Arc::default(),
            crate::metrics::Metrics::default(),
        )
    }

    /// The pacer's arithmetic on a clock of its own: a burst, then rests
    /// that make up for what ran beyond the share, never more saved up than
    /// the burst.
    #[test]
    fn a_pacer_rests_what_ran_beyond_its_share() {
        let p = pacer(25);
        let t = Instant::now();
        p.people().person_moved(t);
        assert_eq!(p.charge(t, PACE_BURST), Duration::ZERO, "the burst is free");
        assert!(
            near(p.charge(t, ms(4.0)), ms(16.0)),
            "4 ms beyond the share at 25 %: 16 ms of rest"
        );
        assert_eq!(
            p.charge(t + ms(16.0), Duration::ZERO),
            Duration::ZERO,
            "rested: even again"
        );
        // An hour without a rest saves up one burst, no more.
        let later = t + Duration::from_secs(3600);
        p.people().person_moved(later);
        assert!(near(p.charge(later, PACE_BURST + ms(1.0)), ms(4.0)));
        // A clock that reads earlier than the last charge (another thread's) refills nothing.
        assert!(near(p.charge(t + ms(3_599_000.0), Duration::ZERO), ms(4.0)));
        // No person has moved for PEOPLE_QUIET: no rest, however much ran, and a full budget after.
        let quiet = later + PEOPLE_QUIET;
        assert_eq!(p.charge(quiet, Duration::from_secs(60)), Duration::ZERO);
        p.people().person_moved(quiet);
        assert!(near(p.charge(quiet, PACE_BURST + ms(1.0)), ms(4.0)));
        // Never a person: never paced.
        let never = pacer(1);
        assert_eq!(never.charge(Instant::now(), Duration::from_secs(60)), Duration::ZERO);
    }

    /// Two searches that each run 1 ms between their checks and rest as
    /// told, on a simulated clock for 10 s: together they run the share, give
    /// or take the burst — however many they are.
    #[test]
    fn searches_sharing_a_pacer_keep_to_its_share_together() {
        for percent in [10, 25, 50, 100] {
            let p = pacer(percent);
            let start = Instant::now();
            let end = start + Duration::from_secs(10);

            // Each search: the time it runs next.
            let mut next = [start, start];
            let mut ran = Duration::ZERO;
            loop {
                let i = if next[0] <= next[1] { 0 } else { 1 };
                let at = next[i] + ms(1.0);
                if at > end {
                    break;
                }
                ran += ms(1.0);
                // People play throughout.
                p.people().person_moved(at);
                next[i] = at + p.charge(at, ms(1.0));
            }
            let share = ran.as_secs_f64() / 10.0;
            let want = f64::from(percent) / 100.0;
            assert!(
                share <= want + 0.002 && share >= want - 0.01,
                "{percent} %: ran {share:.4} of the time"
            );
        }
    }

    /// A job that cannot stop halfway runs whole, then rests what it ran
    /// beyond the share (counted under its own kind of work); unpaced while
    /// no person plays.
    #[test]
    fn a_whole_job_rests_after_it_ran() {
        let metrics = crate::metrics::Metrics::default();
        let p = Pacer::new(50, Work::Hashing, Arc::default(), metrics.clone());
        let t = Instant::now();
        let mut answered = None;
        p.run_then_rest(|| 7, |n| answered = Some(n));
        assert_eq!(answered, Some(7));
        assert_eq!(
            metrics.hashing_rest_us.load(Ordering::Relaxed),
            0,
            "nobody plays: no rest"
        );
        p.people().person_moved(Instant::now());
        p.run_then_rest(|| std::thread::sleep(PACE_BURST + ms(20.0)), |()| {});
        // 20 ms (or a little more, as the sleep ran) beyond the burst at 50 %: 40 ms of rest.
        let rested = metrics.hashing_rest_us.load(Ordering::Relaxed);
        assert!((40_000..=60_000).contains(&rested), "rested {rested} µs");
        assert!(t.elapsed() >= PACE_BURST + ms(60.0));
        assert_eq!(metrics.bot_rest_us.load(Ordering::Relaxed), 0);
    }
}
