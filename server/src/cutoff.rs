//! Addresses cut off at the door: an address refused many times in a short
//! while (its requests answered 429 by a per-address limit, its game sockets
//! closed for never saying `hello`) is clearly not a person at a board, and
//! for a short while the server stops spending anything on it. Refusing
//! costs as much as answering (parsing, routing, a JSON body, a log line);
//! closing a connection right after `accept`, before a byte of HTTP is read,
//! costs almost nothing.
//!
//! - At least `refusals` refusals within [`WINDOW`], or `silent` game
//!   sockets closed for never saying `hello`, cut an address off for
//!   `base`, doubling with each cut-off in a row (up to [`MAX_DOUBLINGS`]
//!   doublings); an address clean for [`FORGET_AFTER`] past its cut-off
//!   starts afresh. A silent socket is counted apart, with a threshold of
//!   its own, because it costs far more than a 429: an upgrade, a task and
//!   a connection held for the whole hello deadline, then a closing
//!   handshake. A person's client says `hello` as soon as its socket opens;
//!   ten silent sockets from one address in ten seconds are a script. With
//!   the cap on an address's sockets before `hello` (8, crate::limits) a
//!   script gets 8 silent sockets per hello deadline, far under the
//!   refusals' threshold: this count cuts it off at its second round.
//! - While cut off, its new TCP connections are accepted and never read:
//!   held unread up to 10 s ([`TARPIT`] at most at once), then reset (no
//!   `TIME_WAIT` kept for them). A client that waits for an answer waits,
//!   rather than reconnecting into a reset at once. A request on a
//!   connection it already holds is answered 429 with `Connection: close`,
//!   so that a keep-alive flood has to reconnect into the cheap path.
//! - Behind a trusted proxy (`--trusted-proxy-header`) every connection is
//!   the proxy's: then nothing is closed at accept, and the requests of an
//!   address cut off are refused (429, `Connection: close`) before any
//!   handler runs.
//!
//! Everyone behind one address (a NAT) is cut off together: the default
//! thresholds (100 refusals or 10 silent sockets in 10 s) are far above
//! what people's clients do, which back off on a 429's `Retry-After` and
//! say `hello` at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::limits::ClientAddr;

/// Refusals are counted over windows of this length.
pub const WINDOW: Duration = Duration::from_secs(10);
/// How many times a cut-off may double for repeated ones.
pub const MAX_DOUBLINGS: u32 = 6;
/// An address clean for this long past its last cut-off starts afresh.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);

/// Who is cut off, and who is being counted.
#[derive(Debug)]
pub struct CutOff {
    /// Refusals within [`WINDOW`] that cut an address off; 0: never.
    refusals: u32,
    /// Silent sockets within [`WINDOW`] that cut an address off; 0: never.
    silent: u32,
    /// The first cut-off's length.
    base: Duration,
    entries: Mutex<HashMap<IpAddr, Entry>>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Start of the window being counted.
    window: Instant,
    /// Refusals in it.
    count: u32,
    /// Silent sockets in it.
    silent: u32,
    /// Cut off until then (in the past: served).
    until: Option<Instant>,
    /// Cut-offs in a row.
    strikes: u32,
}

impl CutOff {
    /// Cuts an address off for `base` (doubling) after `refusals` refusals
    /// or `silent` silent sockets within [`WINDOW`]; a threshold 0: never
    /// for that count; `base` zero: never at all.
    pub fn new(refusals: u32, silent: u32, base: Duration) -> CutOff {
        let on = |n: u32| if base.is_zero() { 0 } else { n };
        CutOff {
            refusals: on(refusals),
            silent: on(silent),
            base,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Whether anyone can ever be cut off.
    pub fn enabled(&self) -> bool {
        self.refusals > 0 || self.silent > 0
    }

    /// Counts one refusal of `addr`; returns whether it is cut off now (by
    /// this refusal or an earlier one).
    pub fn refused(&self, addr: ClientAddr, now: Instant) -> bool {
        self.count(addr, now, false)
    }

    /// Counts one game socket of `addr` closed for never saying `hello`;
    /// returns whether it is cut off now.
    pub fn silent(&self, addr: ClientAddr, now: Instant) -> bool {
        self.count(addr, now, true)
    }

    fn count(&self, addr: ClientAddr, now: Instant, silent: bool) -> bool {
        let limit = if silent { self.silent } else { self.refusals };
        if limit == 0 {
            return self.is_cut_off(addr, now);
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let e = entries.entry(addr.0).or_insert(Entry {
            window: now,
            count: 0,
            silent: 0,
            until: None,
            strikes: 0,
        });
        if e.until.is_some_and(|u| u > now) {
            return true;
        }
        if now.duration_since(e.window) >= WINDOW {
            e.window = now;
            e.count = 0;
            e.silent = 0;
        }
        let n = if silent { &mut e.silent } else { &mut e.count };
        *n += 1;
        if *n < limit {
            return false;
        }
        // Cut off: a fresh start if the last cut-off is long served.
        if e.until.is_some_and(|u| u + FORGET_AFTER <= now) {
            e.strikes = 0;
        }
        let wait = self.base * 2u32.pow(e.strikes.min(MAX_DOUBLINGS));
        e.strikes += 1;
        e.until = Some(now + wait);
        e.window = now;
        e.count = 0;
        e.silent = 0;
        let why = if silent {
            "silent game sockets"
        } else {
            "repeated refusals"
        };
        tracing::info!(address = %addr.0, secs = wait.as_secs_f64(), "address cut off for {why}");
        true
    }

    /// Whether `addr` is cut off at `now`.
    pub fn is_cut_off(&self, addr: ClientAddr, now: Instant) -> bool {
        self.left(addr, now).is_some()
    }

    /// How long `addr` stays cut off from `now` (`None`: it is not).
    pub fn left(&self, addr: ClientAddr, now: Instant) -> Option<Duration> {
        if !self.enabled() {
            return None;
        }
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(&addr.0)
            .and_then(|e| e.until)
            .and_then(|u| u.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// Forgets addresses neither cut off nor counted lately, nor to be
    /// doubled on their next cut-off; run every minute or so.
    pub fn forget_idle(&self, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, e| match e.until {
            Some(u) => u + FORGET_AFTER > now,
            None => now.duration_since(e.window) < WINDOW,
        });
        entries.shrink_to_fit();
    }

    /// Addresses remembered (cut off, counted or on probation).
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no address is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The server's listener: a TCP listener whose connections from addresses
/// cut off are never read nor given a task, unless the peer is a trusted
/// proxy: held unread for up to [`TARPIT_HOLD`] (at most [`TARPIT`] at
/// once, the oldest reset first), then reset.
#[derive(Debug)]
pub struct Door {
    listener: tokio::net::TcpListener,
    state: crate::AppState,
    /// Connections of addresses cut off, held unread (a tarpit), oldest
    /// first, at most [`TARPIT`].
    held: std::collections::VecDeque<(Instant, tokio::net::TcpStream)>,
}

/// Connections of addresses cut off that the door holds unread at once:
/// a client that waits for its answer waits (until its own timeout)
/// instead of reconnecting at once into another reset. Taken from the open
/// files kept in reserve (`--fd-reserve`, 1024).
pub const TARPIT: usize = 256;
/// How long a connection is held at most (sooner when the tarpit is full).
pub const TARPIT_HOLD: Duration = Duration::from_secs(10);

impl Door {
    /// Wraps `listener` for the server of `state`.
    pub fn new(listener: tokio::net::TcpListener, state: crate::AppState) -> Door {
        Door {
            listener,
            state,
            held: std::collections::VecDeque::new(),
        }
    }

    /// Whether a connection from `peer` is closed at once.
    fn shut(&self, peer: &std::net::SocketAddr) -> bool {
        self.state.config.trusted_proxy_header.is_none()
            && self
                .state
                .cutoff
                .is_cut_off(ClientAddr::from_ip(peer.ip()), Instant::now())
    }
}

impl axum::serve::Listener for Door {
    type Io = crate::wire::Wire;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            // Wake for the oldest held connection's end too, not only for
            // the next connection: a tarpit is emptied on time when the
            // flood stops.
            let accepted = match self.held.front() {
                Some((since, _)) => {
                    let until = tokio::time::Instant::from_std(*since + TARPIT_HOLD);
                    tokio::select! {
                        a = axum::serve::Listener::accept(&mut self.listener) => Some(a),
                        () = tokio::time::sleep_until(until) => None,
                    }
                }
                None => Some(axum::serve::Listener::accept(&mut self.listener).await),
            };
            let now = Instant::now();
            // Held long enough, or pushed out by newer ones: reset (no
            // TIME_WAIT kept for each of a flood's connections).
            while let Some((since, _)) = self.held.front()
                && (now.duration_since(*since) >= TARPIT_HOLD || self.held.len() >= TARPIT)
            {
                if let Some((_, old)) = self.held.pop_front() {
                    let _ = old.set_zero_linger();
                }
            }
            let Some((tcp, peer)) = accepted else { continue };
            if self.shut(&peer) {
                self.held.push_back((now, tcp));
                self.state.metrics.cut_off_connections.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            // Game messages are small and latency-bound: send each at once (no Nagle).
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "TCP_NODELAY not set");
            }
            return (crate::wire::Wire::new(tcp), peer);
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// Middleware: a request of an address cut off is answered 429 at once, with
/// `Connection: close`; a 429 answered to any request counts as a refusal of
/// its address, and the one that cuts the address off closes its connection.
pub async fn gate(
    axum::extract::State(s): axum::extract::State<crate::AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::IntoResponse;
    if !s.cutoff.enabled() {
        return next.run(req).await;
    }
    let addr = ClientAddr::of_request(
        req.headers(),
        req.extensions(),
        s.config.trusted_proxy_header.as_deref(),
    );
    let now = Instant::now();
    let mut res = if let Some(left) = s.cutoff.left(addr, now) {
        s.metrics.rate_limited.fetch_add(1, Ordering::Relaxed);
        crate::error::ApiError::new(
            protocol::ErrorCode::RateLimited,
            "this address is cut off for repeated refusals; try again later",
        )
        .retry_after(left)
        .into_response()
    } else {
        let res = next.run(req).await;
        if res.status() != StatusCode::TOO_MANY_REQUESTS || !s.cutoff.refused(addr, now) {
            return res;
        }
        res
    };
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> ClientAddr {
        ClientAddr(s.parse().unwrap())
    }

    #[test]
    fn enough_refusals_in_a_window_cut_an_address_off_for_a_doubling_while() {
        let c = CutOff::new(3, 0, Duration::from_secs(10));
        let (a, b) = (addr("127.0.0.2"), addr("127.0.0.3"));
        let t0 = Instant::now();
        assert!(!c.refused(a, t0));
        assert!(!c.refused(a, t0 + Duration::from_secs(1)));
        assert!(!c.is_cut_off(a, t0 + Duration::from_secs(1)));
        assert!(c.refused(a, t0 + Duration::from_secs(2)), "the third refusal in 10 s");
        assert!(c.is_cut_off(a, t0 + Duration::from_secs(11)));
        assert!(!c.is_cut_off(b, t0 + Duration::from_secs(2)), "another address is not");
        assert!(
            !c.is_cut_off(a, t0 + Duration::from_secs(12)),
            "the first cut-off lasts 10 s"
        );
        // Again at once: 20 s.
        let t1 = t0 + Duration::from_secs(13);
        for i in 0..3 {
            c.refused(a, t1 + Duration::from_millis(i));
        }
        assert!(c.is_cut_off(a, t1 + Duration::from_secs(20)));
        assert!(!c.is_cut_off(a, t1 + Duration::from_secs(21)));
        // Clean for long: starts afresh at 10 s.
        let t2 = t1 + Duration::from_secs(21) + FORGET_AFTER;
        for i in 0..3 {
            c.refused(a, t2 + Duration::from_millis(i));
        }
        assert!(c.is_cut_off(a, t2 + Duration::from_secs(9)));
        assert!(!c.is_cut_off(a, t2 + Duration::from_secs(11)));
    }

    #[test]
    fn refusals_spread_thinner_than_the_threshold_never_cut_off() {
        let c = CutOff::new(3, 0, Duration::from_secs(10));
        let a = addr("127.0.0.2");
        let t0 = Instant::now();
        for i in 0..100 {
            // Two in every 10 s window.
            assert!(!c.refused(a, t0 + Duration::from_secs(5 * i)));
        }
    }

    #[test]
    fn silent_sockets_cut_off_at_their_own_threshold() {
        let c = CutOff::new(100, 3, Duration::from_secs(10));
        let (a, b) = (addr("127.0.0.2"), addr("127.0.0.3"));
        let t0 = Instant::now();
        // Refusals and silent sockets are counted apart: two of each is
        // under both thresholds.
        for i in 0..2 {
            assert!(!c.refused(a, t0 + Duration::from_millis(i)));
            assert!(!c.silent(a, t0 + Duration::from_millis(i)));
        }
        assert!(!c.is_cut_off(a, t0 + Duration::from_secs(1)));
        assert!(
            c.silent(a, t0 + Duration::from_secs(2)),
            "the third silent socket in 10 s"
        );
        assert!(c.is_cut_off(a, t0 + Duration::from_secs(11)));
        assert!(!c.is_cut_off(a, t0 + Duration::from_secs(12)), "10 s");
        // Spread over windows, they never add up.
        for i in 0..30 {
            assert!(!c.silent(b, t0 + Duration::from_secs(5 * i)));
        }
        // 0 turns the silent count off, not the refusals'.
        let r = CutOff::new(2, 0, Duration::from_secs(10));
        for i in 0..10 {
            assert!(!r.silent(a, t0 + Duration::from_millis(i)));
        }
        assert!(!r.refused(a, t0));
        assert!(r.refused(a, t0), "the second refusal");
        assert!(r.silent(a, t0), "a silent socket of an address cut off says so");
    }

    #[test]
    fn zero_turns_it_off_and_idle_addresses_are_forgotten() {
        let off = CutOff::new(0, 0, Duration::from_secs(10));
        let a = addr("127.0.0.2");
        let t0 = Instant::now();
        for _ in 0..1000 {
            assert!(!off.refused(a, t0));
        }
        assert!(off.is_empty());
        let c = CutOff::new(2, 0, Duration::from_secs(10));
        c.refused(a, t0);
        c.refused(addr("127.0.0.3"), t0);
        c.refused(addr("127.0.0.3"), t0);
        c.forget_idle(t0 + WINDOW);
        assert_eq!(c.len(), 1, "the address cut off is kept, the other forgotten");
        c.forget_idle(t0 + Duration::from_secs(10) + FORGET_AFTER);
        assert!(c.is_empty());
    }
}
