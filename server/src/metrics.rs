//! Prometheus metrics, kept in atomics and written in the text exposition
//! format by `GET /metrics`. A dozen numbers do not need a metrics crate.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Histogram bucket upper bounds, seconds: fine between 1 and 10 ms, where a
/// move's latency and a commit's sit on a quiet server, so that a p99 can be
/// read off to within half a millisecond there.
const BUCKETS: [f64; 17] = [
    0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.006, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 5.0,
];

/// A latency histogram.
#[derive(Debug, Default)]
pub struct Histogram {
    /// Counts per bucket (not cumulative; made cumulative when written).
    buckets: [AtomicU64; BUCKETS.len()],
    /// Observations above the last bucket.
    over: AtomicU64,
    /// Sum of observations, microseconds.
    sum_us: AtomicU64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let s = d.as_secs_f64();
        match BUCKETS.iter().position(|&b| s <= b) {
            Some(i) => self.buckets[i].fetch_add(1, Ordering::Relaxed),
            None => self.over.fetch_add(1, Ordering::Relaxed),
        };
        self.sum_us.fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cum = 0;
        for (i, b) in BUCKETS.iter().enumerate() {
            cum += self.buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cum}");
        }
        cum += self.over.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cum}");
        let sum = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {cum}");
    }
}

/// The server's metrics; cheap to clone (one `Arc`).
#[derive(Clone, Debug, Default)]
pub struct Metrics(Arc<Inner>);

/// The numbers.
#[derive(Debug, Default)]
pub struct Inner {
    /// Open WebSocket connections.
    pub connections: AtomicI64,
    /// Rooms in memory.
    pub rooms: AtomicI64,
    /// Games being played.
    pub live_games: AtomicI64,
    /// Moves accepted since start.
    pub moves: AtomicU64,
    /// Client messages refused with an error.
    pub refused: AtomicU64,
    /// HTTP requests and sockets refused by a per-address or global limit.
    pub rate_limited: AtomicU64,
    /// Connections closed at accept: their address was cut off (`cutoff`).
    pub cut_off_connections: AtomicU64,
    /// Password verifications run (logins; unknown usernames included).
    pub password_verifications: AtomicU64,
    /// Connections dropped because their outbound queue was full.
    pub slow_drops: AtomicU64,
    /// Time the searches of games of bots alone rested for their pacing, µs.
    pub bot_rest_us: AtomicU64,
    /// Time the password hashing rested for its pacing, µs.
    pub hashing_rest_us: AtomicU64,
    /// From a move reaching its room to its broadcast (store commit included).
    pub move_latency: Histogram,
    /// Store transaction commit time.
    pub store_commit: Histogram,
    /// From a bot's job to its answer reaching the room (waiting for a search thread included).
    pub bot_think: Histogram,
}

impl std::ops::Deref for Metrics {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Metrics {
    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let gauge = |out: &mut String, name: &str, help: &str, v: i64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        let counter = |out: &mut String, name: &str, help: &str, v: &dyn std::fmt::Display| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        gauge(
            &mut out,
            "sanguo_connections",
            "Open WebSocket connections.",
            self.connections.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sanguo_rooms",
            "Game rooms in memory.",
            self.rooms.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sanguo_live_games",
            "Games being played.",
            self.live_games.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_moves_total",
            "Moves accepted (rate() gives moves/s).",
            &self.moves.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_refused_total",
            "Client messages answered with an error.",
            &self.refused.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_rate_limited_total",
            "Requests and sockets refused by a per-address or global limit.",
            &self.rate_limited.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_cut_off_connections_total",
            "Connections closed as accepted: their address was cut off (repeated refusals or silent sockets).",
            &self.cut_off_connections.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_password_verifications_total",
            "Password verifications run (logins of unknown usernames included).",
            &self.password_verifications.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_slow_client_drops_total",
            "Connections dropped for a full outbound queue.",
            &self.slow_drops.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "sanguo_bot_rest_seconds_total",
            "Time the searches of games of bots alone rested to keep to their share of a core.",
            &(self.bot_rest_us.load(Ordering::Relaxed) as f64 / 1e6),
        );
        counter(
            &mut out,
            "sanguo_password_rest_seconds_total",
            "Time the password hashing rested to keep to its share of a core while people play.",
            &(self.hashing_rest_us.load(Ordering::Relaxed) as f64 / 1e6),
        );
        self.move_latency.write(
            &mut out,
            "sanguo_move_latency_seconds",
            "From a move reaching its room to its broadcast, store commit included.",
        );
        self.store_commit.write(
            &mut out,
            "sanguo_store_commit_seconds",
            "Store transaction time for a room's writes.",
        );
        self.bot_think.write(
            &mut out,
            "sanguo_bot_think_seconds",
            "From a bot's job to its answer reaching its room, waiting for a search thread included.",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative() {
        let m = Metrics::default();
        m.move_latency.observe(Duration::from_micros(300));
        m.move_latency.observe(Duration::from_millis(3));
        m.move_latency.observe(Duration::from_secs(9));
        let text = m.render();
        assert!(text.contains("sanguo_move_latency_seconds_bucket{le=\"0.0005\"} 1"));
        assert!(text.contains("sanguo_move_latency_seconds_bucket{le=\"0.005\"} 2"));
        assert!(text.contains("sanguo_move_latency_seconds_bucket{le=\"+Inf\"} 3"));
        assert!(text.contains("sanguo_move_latency_seconds_count 3"));
    }
}
