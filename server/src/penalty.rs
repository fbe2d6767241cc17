//! The penalty box: who was cut off for flooding may not open a new game
//! socket for a while. Without it a flooder reconnects at once and every
//! reconnection costs the server a handshake, a room visit and a snapshot.
//!
//! A player with a session is known by its player id; an anonymous client by
//! its IP address (anonymous clients behind the same address wait together).
//! The wait doubles with each cut-off in a row (up to [`MAX_DOUBLINGS`]
//! doublings) and is forgotten once a client has stayed clean for
//! [`FORGET_AFTER`] past its last wait.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many times the wait may double for repeated cut-offs.
const MAX_DOUBLINGS: u32 = 6;
/// A client clean for this long after its wait starts afresh.
const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Entries kept before expired ones are swept.
const SWEEP_ABOVE: usize = 4096;

/// Who is kept out, and until when.
#[derive(Debug)]
pub struct PenaltyBox {
    base: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    until: Instant,
    strikes: u32,
}

impl PenaltyBox {
    /// A box whose first wait is `base` (zero: nobody is ever kept out).
    pub fn new(base: Duration) -> PenaltyBox {
        PenaltyBox {
            base,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The key of a client: its player id, or its address when anonymous.
    pub fn key(player: Option<&str>, addr: Option<std::net::IpAddr>) -> Option<String> {
        match (player, addr) {
            (Some(p), _) => Some(format!("p:{p}")),
            (None, Some(a)) => Some(format!("ip:{a}")),
            (None, None) => None,
        }
    }

    /// How long `key` must still wait (`None`: it may connect).
    pub fn waiting(&self, key: &str, now: Instant) -> Option<Duration> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(key)
            .and_then(|e| e.until.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// Forgets every client whose wait is served and who has been clean for
    /// [`FORGET_AFTER`] since (its next cut-off would start afresh anyway):
    /// run every minute or so, the box then holds only recent flooders.
    pub fn forget_served(&self, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, e| e.until + FORGET_AFTER > now);
        entries.shrink_to_fit();
    }

    /// Clients in the box (served or not).
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether the box is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Another node cut `key` off for `wait` (a cluster shares its penalty
    /// box): it waits here as long, unless it waits longer already.
    pub fn impose(&self, key: &str, wait: Duration, now: Instant) {
        if self.base.is_zero() {
            return;
        }
        let strikes = (wait.as_millis() / self.base.as_millis().max(1)).max(1).ilog2();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let e = entries.entry(key.to_owned()).or_insert(Entry { until: now, strikes });
        e.until = e.until.max(now + wait);
        e.strikes = e.strikes.max(strikes);
    }

    /// `key` was cut off for flooding: it waits, longer each time in a row.
    /// Returns the wait.
    pub fn cut_off(&self, key: &str, now: Instant) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() > SWEEP_ABOVE {
            entries.retain(|_, e| e.until + FORGET_AFTER > now);
        }
        let strikes = match entries.get(key) {
            Some(e) if e.until + FORGET_AFTER > now => e.strikes + 1,
            _ => 0,
        };
        let wait = self.base * 2u32.pow(strikes.min(MAX_DOUBLINGS));
        entries.insert(
            key.to_owned(),
            Entry {
                until: now + wait,
                strikes,
            },
        );
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_and_are_forgotten() {
        let b = PenaltyBox::new(Duration::from_secs(5));
        let t0 = Instant::now();
        let k = PenaltyBox::key(Some("alice"), None).unwrap();
        assert_eq!(b.waiting(&k, t0), None);
        assert_eq!(b.cut_off(&k, t0), Duration::from_secs(5));
        assert_eq!(b.waiting(&k, t0 + Duration::from_secs(1)), Some(Duration::from_secs(4)));
        assert_eq!(b.waiting(&k, t0 + Duration::from_secs(5)), None);
        // Again at once: twice as long, then four times.
        let t1 = t0 + Duration::from_secs(6);
        assert_eq!(b.cut_off(&k, t1), Duration::from_secs(10));
        assert_eq!(b.cut_off(&k, t1 + Duration::from_secs(11)), Duration::from_secs(20));
        // Others are not affected.
        let other = PenaltyBox::key(None, Some("10.0.0.1".parse().unwrap())).unwrap();
        assert_eq!(other, "ip:10.0.0.1");
        assert_eq!(b.waiting(&other, t1), None);
        // Clean for long enough: back to the first wait.
        let later = t1 + Duration::from_secs(31) + FORGET_AFTER;
        assert_eq!(b.cut_off(&k, later), Duration::from_secs(5));
    }

    #[test]
    fn served_waits_are_forgotten_by_the_sweep() {
        let b = PenaltyBox::new(Duration::from_secs(5));
        let t = Instant::now();
        // Fewer than the cut-off's own sweep threshold: only the timed sweep empties it.
        for i in 0..100 {
            b.cut_off(&format!("ip:10.0.0.{i}"), t);
        }
        b.cut_off("p:late", t + Duration::from_secs(60));
        assert_eq!(b.len(), 101);
        b.forget_served(t + Duration::from_secs(5));
        assert_eq!(b.len(), 101, "still within their clean period");
        b.forget_served(t + Duration::from_secs(6) + FORGET_AFTER);
        assert_eq!(b.len(), 1, "only the late one is kept");
        assert!(b.waiting("p:late", t + Duration::from_secs(61)).is_some());
        b.forget_served(t + Duration::from_secs(66) + FORGET_AFTER);
        assert!(b.is_empty());
    }

    #[test]
    fn the_wait_is_bounded_and_zero_disables() {
        let b = PenaltyBox::new(Duration::from_secs(1));
        let t = Instant::now();
        let mut last = Duration::ZERO;
        for _ in 0..20 {
            last = b.cut_off("p:x", t);
        }
        assert_eq!(last, Duration::from_secs(1 << MAX_DOUBLINGS));
        let off = PenaltyBox::new(Duration::ZERO);
        assert_eq!(off.cut_off("p:x", t), Duration::ZERO);
        assert_eq!(off.waiting("p:x", t), None);
    }
}
