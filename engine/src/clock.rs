//! Game clocks (the seed's 局时、步时 and 读秒), as a pure state machine:
//! every method takes the current time in milliseconds; nothing reads a clock.
//!
//! A side's time is its main time (base + Fischer increment per move made
//! within main time). When main time is spent, byo-yomi periods (读秒) take
//! over if the time control has them: each move must then be made within one
//! period; a period overrun consumes it; the last overrun flags. Independently,
//! a per-move limit (步时) bounds every single move. The server owns the real
//! clock, asks [`Clocks::deadline`] when to look again, and reports a flag
//! with `Action::Timeout`.

use crate::side::Side;

/// Byo-yomi (读秒): periods of fixed length after main time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Byoyomi {
    /// Number of periods.
    pub periods: u32,
    /// Length of each period.
    pub period_ms: u64,
}

/// A time control.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// Main time per side (局时).
    pub base_ms: u64,
    /// Fischer increment added after each move made within main time.
    pub increment_ms: u64,
    /// Limit for any single move (步时).
    pub per_move_ms: Option<u64>,
    /// Periods after main time (读秒).
    pub byoyomi: Option<Byoyomi>,
}

impl TimeControl {
    /// Base plus Fischer increment.
    pub const fn fischer(base_ms: u64, increment_ms: u64) -> TimeControl {
        TimeControl {
            base_ms,
            increment_ms,
            per_move_ms: None,
            byoyomi: None,
        }
    }
}

/// One side's clock as shown to players.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClockView {
    /// Main time left.
    pub remaining_ms: u64,
    /// Byo-yomi periods left.
    pub periods_left: u32,
    /// Time left in the current byo-yomi period, when main time is spent and the clock runs.
    pub period_left_ms: Option<u64>,
    /// Time left for this move under the per-move limit, when the clock runs.
    pub move_left_ms: Option<u64>,
    /// Whether this side's clock is running.
    pub running: bool,
    /// Whether the side is in byo-yomi (main time spent).
    pub in_byoyomi: bool,
}

/// The running turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Turn {
    side: Side,
    /// When the clock last started running.
    since: u64,
    /// Time used on this turn before the last pause.
    banked: u64,
    paused: bool,
}

/// A move came too late: the side's time ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{side}'s time ran out")]
pub struct Flag {
    /// The side that flagged.
    pub side: Side,
}

/// The three clocks of a game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Clocks {
    tc: TimeControl,
    remaining: [u64; 3],
    periods_left: [u32; 3],
    turn: Option<Turn>,
}

impl Clocks {
    /// Full clocks for all three sides; none running.
    pub fn new(tc: TimeControl) -> Clocks {
        let periods = tc.byoyomi.map_or(0, |b| b.periods);
        Clocks {
            tc,
            remaining: [tc.base_ms; 3],
            periods_left: [periods; 3],
            turn: None,
        }
    }

    /// Clocks as stored after a move: each side's main time and periods left.
    pub fn restore(tc: TimeControl, remaining: [u64; 3], periods_left: [u32; 3]) -> Clocks {
        Clocks {
            tc,
            remaining,
            periods_left,
            turn: None,
        }
    }

    /// The time control.
    pub fn time_control(&self) -> &TimeControl {
        &self.tc
    }

    /// Main time left per side (not counting the running turn).
    pub fn remaining(&self) -> [u64; 3] {
        self.remaining
    }

    /// Byo-yomi periods left per side.
    pub fn periods_left(&self) -> [u32; 3] {
        self.periods_left
    }

    /// The side whose clock runs (or is paused mid-turn).
    pub fn running(&self) -> Option<Side> {
        self.turn.map(|t| t.side)
    }

    /// Whether the running turn is paused.
    pub fn is_paused(&self) -> bool {
        self.turn.is_some_and(|t| t.paused)
    }

    /// Starts `side`'s turn at `now` (stopping any other running turn without charging it).
    pub fn start_turn(&mut self, side: Side, now: u64) {
        self.turn = Some(Turn {
            side,
            since: now,
            banked: 0,
            paused: false,
        });
    }

    fn elapsed(&self, now: u64) -> u64 {
        match self.turn {
            Some(t) if t.paused => t.banked,
            Some(t) => t.banked + now.saturating_sub(t.since),
            None => 0,
        }
    }

    /// How long `side` may still think on this turn from its start: the
    /// earlier of the per-move limit and main time plus all periods left.
    fn allowance(&self, side: Side) -> u64 {
        let s = side.index();
        let main = self.remaining[s]
            + self
                .tc
                .byoyomi
                .map_or(0, |b| u64::from(self.periods_left[s]) * b.period_ms);
        match self.tc.per_move_ms {
            Some(limit) => main.min(limit),
            None => main,
        }
    }

    /// When the running side flags if it does not move (`None` if no clock
    /// runs or it is paused).
    pub fn deadline(&self) -> Option<(Side, u64)> {
        let t = self.turn?;
        if t.paused {
            return None;
        }
        let left = self.allowance(t.side).saturating_sub(t.banked);
        Some((t.side, t.since + left))
    }

    /// The side that has flagged by `now`, if any.
    pub fn flagged(&self, now: u64) -> Option<Side> {
        let t = self.turn?;
        (self.elapsed(now) > self.allowance(t.side)).then_some(t.side)
    }

    /// Ends `side`'s turn with a move at `now`. `lag_credit_ms` (bounded by
    /// the caller, as lichess's quota does) is not charged. Returns the time
    /// charged, or the flag if the move came too late (clocks unchanged then).
    pub fn finish_turn(&mut self, side: Side, now: u64, lag_credit_ms: u64) -> Result<u64, Flag> {
        let Some(t) = self.turn else { return Ok(0) };
        if t.side != side {
            return Ok(0);
        }
        let spent = self.elapsed(now).saturating_sub(lag_credit_ms);
        if spent > self.allowance(side) {
            return Err(Flag { side });
        }
        let s = side.index();
        if spent <= self.remaining[s] {
            self.remaining[s] = self.remaining[s] - spent + self.tc.increment_ms;
        } else {
            // Into byo-yomi: whole periods overrun are consumed; the current one resets.
            let over = spent - self.remaining[s];
            let period = self.tc.byoyomi.map_or(u64::MAX, |b| b.period_ms.max(1));
            let used = u32::try_from(over / period).unwrap_or(u32::MAX);
            self.remaining[s] = 0;
            self.periods_left[s] = self.periods_left[s].saturating_sub(used);
        }
        self.turn = None;
        Ok(spent)
    }

    /// Pauses the running turn (server down, arbiter pause).
    pub fn pause(&mut self, now: u64) {
        if let Some(t) = self.turn.as_mut()
            && !t.paused
        {
            t.banked += now.saturating_sub(t.since);
            t.paused = true;
        }
    }

    /// Resumes a paused turn at `now`.
    pub fn resume(&mut self, now: u64) {
        if let Some(t) = self.turn.as_mut()
            && t.paused
        {
            t.since = now;
            t.paused = false;
        }
    }

    /// Stops `side`'s clock for good at `now` (it left the game, or the game
    /// ended). When its turn was running, the time it thought is charged (no
    /// increment: no move was made): main time first, then whole byo-yomi
    /// periods overrun. A side past its allowance (a flag) keeps only what the
    /// flag left it: its main time and periods are 0, except that a per-move
    /// limit overrun costs exactly the time spent. Returns the time charged
    /// (0 when `side`'s clock was not running).
    pub fn remove(&mut self, side: Side, now: u64) -> u64 {
        let Some(t) = self.turn else { return 0 };
        if t.side != side {
            return 0;
        }
        let spent = self.elapsed(now);
        let s = side.index();
        let main_and_periods = self.remaining[s]
            + self
                .tc
                .byoyomi
                .map_or(0, |b| u64::from(self.periods_left[s]) * b.period_ms);
        if spent >= main_and_periods {
            self.remaining[s] = 0;
            self.periods_left[s] = 0;
        } else if spent <= self.remaining[s] {
            self.remaining[s] -= spent;
        } else {
            let over = spent - self.remaining[s];
            let period = self.tc.byoyomi.map_or(u64::MAX, |b| b.period_ms.max(1));
            let used = u32::try_from(over / period).unwrap_or(u32::MAX);
            self.remaining[s] = 0;
            self.periods_left[s] = self.periods_left[s].saturating_sub(used);
        }
        self.turn = None;
        spent
    }

    /// Adds main time to a side (an arbiter's decision).
    pub fn add_time(&mut self, side: Side, ms: u64) {
        self.remaining[side.index()] += ms;
    }

    /// What each side's clock shows at `now`.
    pub fn view(&self, now: u64) -> [ClockView; 3] {
        Side::ALL.map(|side| {
            let s = side.index();
            let running = self.turn.is_some_and(|t| t.side == side);
            let elapsed = if running { self.elapsed(now) } else { 0 };
            let remaining = self.remaining[s].saturating_sub(elapsed);
            let in_byoyomi =
                self.tc.byoyomi.is_some() && elapsed >= self.remaining[s] && (running || self.remaining[s] == 0);
            let (periods_left, period_left_ms) = match self.tc.byoyomi {
                Some(b) if running && elapsed >= self.remaining[s] => {
                    let over = elapsed - self.remaining[s];
                    let used = u32::try_from(over / b.period_ms.max(1)).unwrap_or(u32::MAX);
                    let left = self.periods_left[s].saturating_sub(used);
                    (left, (left > 0).then(|| b.period_ms - over % b.period_ms.max(1)))
                }
                _ => (self.periods_left[s], None),
            };
            ClockView {
                remaining_ms: remaining,
                periods_left,
                period_left_ms,
                move_left_ms: match (running, self.tc.per_move_ms) {
                    (true, Some(limit)) => Some(limit.saturating_sub(elapsed)),
                    _ => None,
                },
                running: running && !self.is_paused(),
                in_byoyomi,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Side = Side::W;
    const B: Side = Side::B;

    #[test]
    fn fischer_increment() {
        let mut c = Clocks::new(TimeControl::fischer(60_000, 5_000));
        c.start_turn(W, 1_000);
        assert_eq!(c.deadline(), Some((W, 61_000)));
        assert_eq!(c.finish_turn(W, 11_000, 0), Ok(10_000));
        assert_eq!(c.remaining()[0], 55_000);
        c.start_turn(B, 11_000);
        assert_eq!(c.flagged(71_000), None);
        assert_eq!(c.flagged(71_001), Some(B));
        assert_eq!(c.finish_turn(B, 71_001, 0), Err(Flag { side: B }));
        assert_eq!(c.finish_turn(B, 71_001, 10), Ok(59_991), "lag credit is not charged");
    }

    #[test]
    fn byoyomi_periods() {
        let tc = TimeControl {
            base_ms: 10_000,
            increment_ms: 0,
            per_move_ms: None,
            byoyomi: Some(Byoyomi {
                periods: 3,
                period_ms: 30_000,
            }),
        };
        let mut c = Clocks::new(tc);
        c.start_turn(W, 0);
        assert_eq!(c.deadline(), Some((W, 100_000)));
        // 25 s into byo-yomi: no period used, the period resets.
        assert_eq!(c.finish_turn(W, 35_000, 0), Ok(35_000));
        assert_eq!((c.remaining()[0], c.periods_left()[0]), (0, 3));
        let v = c.view(35_000)[0];
        assert!(v.in_byoyomi && !v.running);
        // 70 s: two periods overrun and consumed.
        c.start_turn(W, 100_000);
        let v = c.view(165_000)[0];
        assert_eq!((v.periods_left, v.period_left_ms), (1, Some(25_000)));
        assert_eq!(c.finish_turn(W, 170_000, 0), Ok(70_000));
        assert_eq!(c.periods_left()[0], 1);
        c.start_turn(W, 200_000);
        assert_eq!(c.deadline(), Some((W, 230_000)));
        assert_eq!(c.flagged(230_001), Some(W));
    }

    #[test]
    fn per_move_limit() {
        let tc = TimeControl {
            base_ms: 1_800_000,
            increment_ms: 0,
            per_move_ms: Some(60_000),
            byoyomi: None,
        };
        let mut c = Clocks::new(tc);
        c.start_turn(W, 0);
        assert_eq!(c.deadline(), Some((W, 60_000)));
        assert_eq!(c.view(20_000)[0].move_left_ms, Some(40_000));
        assert_eq!(c.flagged(60_001), Some(W));
        assert!(c.finish_turn(W, 60_001, 0).is_err());
        assert_eq!(c.finish_turn(W, 59_000, 0), Ok(59_000));
    }

    #[test]
    fn a_side_that_leaves_is_charged_its_running_turn() {
        let byo = TimeControl {
            base_ms: 10_000,
            increment_ms: 5_000,
            per_move_ms: None,
            byoyomi: Some(Byoyomi {
                periods: 3,
                period_ms: 1_000,
            }),
        };
        let per_move = TimeControl {
            base_ms: 60_000,
            increment_ms: 0,
            per_move_ms: Some(5_000),
            byoyomi: None,
        };
        // (time control, leaves after ms, charged, main time left, periods left)
        let cases = [
            (TimeControl::fischer(60_000, 5_000), 20_000, 20_000, 40_000, 0),
            (TimeControl::fischer(60_000, 5_000), 60_400, 60_400, 0, 0),
            (byo, 4_000, 4_000, 6_000, 3),
            (byo, 11_500, 11_500, 0, 2),
            (byo, 13_200, 13_200, 0, 0),
            (per_move, 5_300, 5_300, 54_700, 0),
        ];
        for (tc, after, charged, main, periods) in cases {
            let mut c = Clocks::new(tc);
            c.start_turn(W, 1_000);
            assert_eq!(c.remove(B, 1_000 + after), 0, "B's clock does not run");
            assert_eq!(c.remove(W, 1_000 + after), charged, "{tc:?} after {after}");
            assert_eq!(
                (c.remaining()[0], c.periods_left()[0]),
                (main, periods),
                "{tc:?} after {after}"
            );
            assert_eq!(c.running(), None);
            let v = c.view(1_000_000)[0];
            assert_eq!((v.remaining_ms, v.periods_left, v.running), (main, periods, false));
        }
        // Paused: only the time before the pause counts.
        let mut c = Clocks::new(TimeControl::fischer(60_000, 0));
        c.start_turn(W, 0);
        c.pause(7_000);
        assert_eq!(c.remove(W, 900_000), 7_000);
        assert_eq!(c.remaining()[0], 53_000);
    }

    #[test]
    fn pause_and_resume() {
        let mut c = Clocks::new(TimeControl::fischer(60_000, 0));
        c.start_turn(W, 0);
        c.pause(10_000);
        assert_eq!(c.deadline(), None);
        assert_eq!(c.flagged(1_000_000), None);
        c.resume(500_000);
        assert_eq!(c.deadline(), Some((W, 550_000)));
        assert_eq!(c.finish_turn(W, 505_000, 0), Ok(15_000));
        assert_eq!(c.remaining()[0], 45_000);
    }
}
