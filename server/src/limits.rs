//! What one client (an address) may take from the server: how often it may
//! mint sessions, create accounts, log in and create games (GCRA rate limits
//! from `governor`, keyed by the client's address), how many password hashes
//! run at once (argon2 takes ~19 MiB and tens of milliseconds each), and how
//! many game sockets it may hold.
//!
//! Every limit keys on [`ClientAddr`]: the TCP peer's address, or — only when
//! `--trusted-proxy-header` names one — the last address of that header,
//! which the trusted proxy in front wrote. Nothing else a client sends is
//! believed. IPv6 addresses count by their /64 network, which one host can
//! hold whole.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use argon2::password_hash::{PasswordHash, SaltString};
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use protocol::ErrorCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::AppState;
use crate::error::ApiError;
use crate::pace::{Pacer, People, Work};
use crate::wire::Peer;

/// The client's address, as the limits see it (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The address of a request, from its headers and extensions: the
    /// trusted proxy's header when one is configured and present (its last
    /// entry, the one the proxy appended), else the peer. IPv6 is cut to its
    /// /64.
    pub fn from_parts(
        headers: &axum::http::HeaderMap,
        extensions: &axum::http::Extensions,
        trusted_header: Option<&str>,
    ) -> Option<ClientAddr> {
        let from_header = trusted_header.and_then(|name| {
            let value = headers.get_all(name).iter().next_back()?.to_str().ok()?;
            value.rsplit(',').next()?.trim().parse::<IpAddr>().ok()
        });
        let ip = from_header.or_else(|| extensions.get::<ConnectInfo<Peer>>().map(|c| c.0.addr.ip()))?;
        Some(ClientAddr::from_ip(ip))
    }

    /// [`ClientAddr::from_parts`], or — without connect info (a router driven
    /// by `oneshot` in a test) — the unspecified address: every such
    /// request is one client.
    pub fn of_request(
        headers: &axum::http::HeaderMap,
        extensions: &axum::http::Extensions,
        trusted_header: Option<&str>,
    ) -> ClientAddr {
        ClientAddr::from_parts(headers, extensions, trusted_header)
            .unwrap_or(ClientAddr(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)))
    }

    /// The client at a TCP peer's address (IPv6: its /64).
    pub fn from_ip(ip: IpAddr) -> ClientAddr {
        ClientAddr(network(ip))
    }
}

/// The key of an address: itself (IPv4, IPv4-mapped IPv6), or its /64.
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr::of_request(
            &parts.headers,
            &parts.extensions,
            state.config.trusted_proxy_header.as_deref(),
        ))
    }
}

/// What may be done how often per address, each "N per minute" with bursts
/// of N (0: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateConfig {
    /// `POST /api/sessions` (guests).
    pub sessions_per_minute: u32,
    /// `POST /api/accounts`.
    pub accounts_per_minute: u32,
    /// `POST /api/login`.
    pub logins_per_minute: u32,
    /// `POST /api/games`.
    pub games_per_minute: u32,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            sessions_per_minute: 30,
            accounts_per_minute: 10,
            logins_per_minute: 20,
            games_per_minute: 30,
        }
    }
}

impl RateConfig {
    /// No rate limits at all (tests of other things, load tools).
    pub fn unlimited() -> RateConfig {
        RateConfig {
            sessions_per_minute: 0,
            accounts_per_minute: 0,
            logins_per_minute: 0,
            games_per_minute: 0,
        }
    }
}

/// One rate limit, per address.
#[derive(Debug)]
pub struct Rate {
    /// What is limited, for the refusal's words.
    what: &'static str,
    /// `None`: unlimited.
    limiter: Option<DefaultKeyedRateLimiter<ClientAddr>>,
}

impl Rate {
    fn new(what: &'static str, per_minute: u32) -> Rate {
        Rate {
            what,
            limiter: NonZeroU32::new(per_minute).map(|n| RateLimiter::keyed(Quota::per_minute(n))),
        }
    }

    /// Counts one request of `addr`, or refuses it: 429 `rate_limited` with
    /// the time until the next one is allowed (the `Retry-After` header).
    pub fn check(&self, addr: ClientAddr, metrics: &crate::metrics::Metrics) -> Result<(), ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter.check_key(&addr).map_err(|not_until| {
            metrics.rate_limited.fetch_add(1, Ordering::Relaxed);
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            ApiError::new(
                ErrorCode::RateLimited,
                format!("too many {} from this address; try again in {secs} s", self.what),
            )
            .retry_after(Duration::from_secs(secs.max(1)))
        })
    }

    /// Forgets addresses whose allowance is whole again (memory stays bounded
    /// by the addresses active in the last minute).
    fn forget_idle(&self) {
        if let Some(l) = &self.limiter {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }
}

/// The per-address rate limits.
#[derive(Debug)]
pub struct Rates {
    /// Guest sessions.
    pub sessions: Rate,
    /// Accounts.
    pub accounts: Rate,
    /// Logins.
    pub logins: Rate,
    /// Games.
    pub games: Rate,
}

impl Rates {
    /// The limits of a configuration.
    pub fn new(c: RateConfig) -> Rates {
        Rates {
            sessions: Rate::new("new sessions", c.sessions_per_minute),
            accounts: Rate::new("new accounts", c.accounts_per_minute),
            logins: Rate::new("logins", c.logins_per_minute),
            games: Rate::new("new games", c.games_per_minute),
        }
    }

    /// Forgets idle addresses; run every minute or so.
    pub fn forget_idle(&self) {
        for r in [&self.sessions, &self.accounts, &self.logins, &self.games] {
            r.forget_idle();
        }
    }
}

/// Password hashing with bounded memory: argon2 (~19 MiB a run) on
/// `threads` threads of its own, fed by a queue of at most `max_waiting`
/// jobs; more are refused at once with 429 `rate_limited`. Threads of their
/// own, not the blocking pool: the allocator keeps a freed 19 MiB block in
/// the arena of the thread that used it, and a flood spread over the blocking
/// pool's many threads kept a gigabyte (measured: 143 logins in 20 s, RSS
/// 12 MiB → 1 GB, never given back); on two threads it stays at two blocks.
/// Login of an unknown username verifies against a dummy hash, so that its
/// answer takes as long as a wrong password's. While people play the
/// hashing threads together take at most `--hashing-percent` of a core
/// ([`HASHING_PERCENT`]): each hash runs whole, then its thread rests what it
/// ran beyond that share ([`Pacer`]), and the line waits.
#[derive(Debug)]
pub struct Hasher {
    jobs: std::sync::mpsc::SyncSender<HashJob>,
    /// Counts verifications (dummy ones included).
    metrics: crate::metrics::Metrics,
}

/// The share of one core that password hashing takes by default while people
/// play, percent: a hash is ~10–20 ms of CPU, so ~3–5 hashes a second while
/// people play, as many as the threads can run otherwise. Under a login flood
/// from 49 addresses (each within its per-address limit) unpaced hashing at
/// the lowest priority took up to ~20 % of the server's core (docs/CAPACITY.md,
/// issue 18).
pub const HASHING_PERCENT: u32 = 5;

/// A hashing job: runs on a hashing thread and gives back its answer.
type HashJob = Box<dyn FnOnce() -> Answer + Send>;
/// A hash's answer, sent once its thread's rest is counted.
type Answer = Box<dyn FnOnce() + Send>;

/// A hash of a password nobody has, with the same parameters as real ones.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| hash_blocking(&crate::http::random_hex(16)).unwrap_or_default());

thread_local! {
    /// The argon2 memory of this hashing thread (19 MiB with the default
    /// parameters), allocated once and reused by every hash it runs: the
    /// allocator never sees a 19 MiB block come and go.
    static MEMORY: std::cell::RefCell<Vec<argon2::Block>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs argon2 `argon` into `out` with this thread's memory.
fn argon2_into(
    argon: &argon2::Argon2<'_>,
    blocks: usize,
    password: &[u8],
    salt: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    MEMORY.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() < blocks {
            m.resize(blocks, argon2::Block::default());
        }
        argon
            .hash_password_into_with_memory(password, salt, out, &mut m[..blocks])
            .map_err(|e| e.to_string())
    })
}

fn hash_blocking(password: &str) -> Result<String, String> {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>()).map_err(|e| e.to_string())?;
    let params = argon2::Params::default();
    let argon = argon2::Argon2::from(&params);
    let mut salt_bytes = [0u8; 64];
    let salt_bytes = salt.as_salt().decode_b64(&mut salt_bytes).map_err(|e| e.to_string())?;
    let mut out = [0u8; argon2::Params::DEFAULT_OUTPUT_LEN];
    argon2_into(&argon, params.block_count(), password.as_bytes(), salt_bytes, &mut out)?;
    let phc = PasswordHash {
        algorithm: argon2::Algorithm::default().ident(),
        version: Some(argon2::Version::default().into()),
        params: argon2::password_hash::ParamsString::try_from(&params).map_err(|e| e.to_string())?,
        salt: Some(salt.as_salt()),
        hash: Some(argon2::password_hash::Output::new(&out).map_err(|e| e.to_string())?),
    };
    Ok(phc.to_string())
}

/// Verifies a PHC string's argon2 hash with this thread's memory (the
/// parameters, salt and algorithm are the string's own). Compares in
/// constant time.
fn verify_blocking(password: &str, hash: &str) -> bool {
    let check = || -> Option<bool> {
        let h = PasswordHash::new(hash).ok()?;
        let params = argon2::Params::try_from(&h).ok()?;
        let algorithm = argon2::Algorithm::try_from(h.algorithm).ok()?;
        let version = h
            .version
            .map(argon2::Version::try_from)
            .transpose()
            .ok()?
            .unwrap_or_default();
        let expected = h.hash?;
        let mut salt_bytes = [0u8; 64];
        let salt_bytes = h.salt?.decode_b64(&mut salt_bytes).ok()?;
        let argon = argon2::Argon2::new(algorithm, version, params.clone());
        let mut out = vec![0u8; expected.len()];
        argon2_into(&argon, params.block_count(), password.as_bytes(), salt_bytes, &mut out).ok()?;
        Some(expected == argon2::password_hash::Output::new(&out).ok()?)
    };
    check().unwrap_or(false)
}

impl Hasher {
    /// `threads` hashing threads (at least 1), `max_waiting` jobs in line,
    /// paced by `pacer`. The threads end when the hasher is dropped.
    pub fn new(threads: usize, max_waiting: usize, metrics: crate::metrics::Metrics, pacer: Pacer) -> Hasher {
        let (jobs, rx) = std::sync::mpsc::sync_channel::<HashJob>(max_waiting);
        let rx = Arc::new(Mutex::new(rx));
        let pacer = Arc::new(pacer);
        for i in 0..threads.max(1) {
            let (rx, pacer) = (Arc::clone(&rx), Arc::clone(&pacer));
            let spawned = std::thread::Builder::new()
                .name(format!("password-hash-{i}"))
                .spawn(move || {
                    // Anyone may ask for a hash (a login): they take what
                    // the people's moves leave of the CPU (crate::priority).
                    crate::priority::lower_this_thread();
                    loop {
                        // The lock is held only to take a job, not while it runs.
                        let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(job) = job else { break };
                        pacer.run_then_rest(job, |answer| answer());
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "could not start a password hashing thread");
            }
        }
        Hasher { jobs, metrics }
    }

    /// Runs `f` on a hashing thread, or refuses when the line is full.
    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        // The hash is made by the job; its answer goes out once the
        // thread's rest is counted (crate::pace::Pacer::run_then_rest).
        let job: HashJob = Box::new(move || {
            let out = f();
            Box::new(move || {
                let _ = tx.send(out);
            })
        });
        self.jobs.try_send(job).map_err(|e| match e {
            std::sync::mpsc::TrySendError::Full(_) => {
                ApiError::new(ErrorCode::RateLimited, "too many logins at once; try again in a second")
                    .retry_after(Duration::from_secs(1))
            }
            std::sync::mpsc::TrySendError::Disconnected(_) => internal("no hashing thread"),
        })?;
        rx.await.map_err(|_| internal("a hashing job was lost"))
    }

    /// The argon2 hash of a new password (PHC string).
    pub async fn hash(&self, password: String) -> Result<String, ApiError> {
        self.run(move || hash_blocking(&password))
            .await?
            .map_err(|e| internal(&e))
    }

    /// Whether `password` matches `hash`; with `None` (no such account) the
    /// dummy hash is verified all the same and the answer is `false`.
    pub async fn verify(&self, password: String, hash: Option<String>) -> Result<bool, ApiError> {
        let metrics = self.metrics.clone();
        self.run(move || {
            metrics.password_verifications.fetch_add(1, Ordering::Relaxed);
            match hash {
                Some(h) => verify_blocking(&password, &h),
                None => {
                    verify_blocking(&password, &DUMMY_HASH);
                    false
                }
            }
        })
        .await
    }
}

fn internal(e: &str) -> ApiError {
    tracing::error!(error = %e, "password hashing failed");
    ApiError::new(ErrorCode::Internal, "internal error")
}

/// Game sockets: a global cap (a semaphore, as mini-redis bounds its
/// connections), a cap per address, and a smaller one per address on the
/// sockets that have not said `hello` yet; spectators per game.
#[derive(Debug)]
pub struct Sockets {
    global: Arc<Semaphore>,
    per_addr: usize,
    /// Sockets of one address that may wait for their `hello` at once.
    silent_per_addr: usize,
    by_addr: Arc<Mutex<HashMap<ClientAddr, Held>>>,
    spectators_per_game: usize,
    by_game: Arc<Mutex<HashMap<String, usize>>>,
}

/// A socket's place under the caps, given back when dropped.
#[derive(Debug)]
pub struct SocketPermit {
    _global: OwnedSemaphorePermit,
    addr: ClientAddr,
    by_addr: Arc<Mutex<HashMap<ClientAddr, Held>>>,
    /// It has not said `hello` yet (and counts among its address's silent sockets).
    silent: bool,
}

/// The game sockets an address holds, and how many of them have not said
/// `hello` yet.
#[derive(Debug, Default)]
struct Held {
    open: usize,
    silent: usize,
}

impl SocketPermit {
    /// Gives back its places: the silent one (`silent_only`), or all.
    fn give_back(&mut self, silent_only: bool) {
        let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
        let Some(h) = m.get_mut(&self.addr) else { return };
        if std::mem::take(&mut self.silent) {
            h.silent -= 1;
        }
        if !silent_only {
            h.open -= 1;
            if h.open == 0 {
                m.remove(&self.addr);
            }
        }
    }

    /// The socket said `hello`: it no longer counts as silent.
    pub fn said_hello(&mut self) {
        self.give_back(true);
    }
}

impl Drop for SocketPermit {
    fn drop(&mut self) {
        self.give_back(false);
    }
}

/// A spectator's place in a game, given back when dropped.
#[derive(Debug)]
pub struct SpectatorPermit {
    game: String,
    by_game: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for SpectatorPermit {
    fn drop(&mut self) {
        release(&self.by_game, &self.game);
    }
}

fn release<K: std::hash::Hash + Eq>(map: &Mutex<HashMap<K, usize>>, key: &K) {
    let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = m.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            m.remove(key);
        }
    }
}

/// Takes one place of `key` under `cap`, or says no.
fn take<K: std::hash::Hash + Eq>(map: &Mutex<HashMap<K, usize>>, key: K, cap: usize) -> bool {
    let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
    let n = m.entry(key).or_insert(0);
    if *n >= cap {
        return false;
    }
    *n += 1;
    true
}

/// Why a socket was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketRefusal {
    /// The server holds its maximum of game sockets.
    Full,
    /// This address holds its maximum.
    AddressFull,
    /// This address holds its maximum of sockets that have not said `hello` yet.
    AddressSilent,
}

impl Sockets {
    /// `global` sockets in all, `per_addr` per address, of which
    /// `silent_per_addr` before their `hello`, `spectators` watchers per game.
    pub fn new(global: usize, per_addr: usize, silent_per_addr: usize, spectators: usize) -> Sockets {
        Sockets {
            global: Arc::new(Semaphore::new(global.min(Semaphore::MAX_PERMITS))),
            per_addr,
            silent_per_addr,
            by_addr: Arc::default(),
            spectators_per_game: spectators,
            by_game: Arc::default(),
        }
    }

    /// A place for a new socket of `addr`, or why not.
    pub fn admit(&self, addr: ClientAddr) -> Result<SocketPermit, SocketRefusal> {
        let global = Arc::clone(&self.global)
            .try_acquire_owned()
            .map_err(|_| SocketRefusal::Full)?;
        {
            let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
            let h = m.entry(addr).or_default();
            let refusal = if h.open >= self.per_addr {
                Some(SocketRefusal::AddressFull)
            } else if h.silent >= self.silent_per_addr {
                Some(SocketRefusal::AddressSilent)
            } else {
                None
            };
            if let Some(r) = refusal {
                if h.open == 0 {
                    m.remove(&addr);
                }
                return Err(r);
            }
            h.open += 1;
            h.silent += 1;
        }
        Ok(SocketPermit {
            _global: global,
            addr,
            by_addr: Arc::clone(&self.by_addr),
            silent: true,
        })
    }

    /// A place for a spectator of `game`, or `None` when it has its maximum.
    pub fn spectate(&self, game: &str) -> Option<SpectatorPermit> {
        take(&self.by_game, game.to_owned(), self.spectators_per_game).then(|| SpectatorPermit {
            game: game.to_owned(),
            by_game: Arc::clone(&self.by_game),
        })
    }

    /// Spectators of `game` now.
    pub fn spectators(&self, game: &str) -> usize {
        let m = self.by_game.lock().unwrap_or_else(|e| e.into_inner());
        m.get(game).copied().unwrap_or(0)
    }
}

/// Games with bots, which cost search threads and a write per move: each
/// address may have a few unfinished ones, and the server a few where only
/// bots play (they play at full speed). The count is kept in memory, by game
/// id; finished games are dropped from it when it is next read.
#[derive(Debug)]
pub struct BotGames {
    per_addr: usize,
    all_bots: usize,
    by_addr: Mutex<HashMap<ClientAddr, Vec<String>>>,
    only_bots: Mutex<Vec<String>>,
}

/// Drops the finished games of a list (one indexed read per game; the lists
/// are a few ids long).
async fn unfinished(store: &crate::store::Store, ids: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if matches!(store.game_phase(&id).await?, Some(p) if p != protocol::Phase::Finished) {
            out.push(id);
        }
    }
    Ok(out)
}

impl BotGames {
    /// `per_addr` unfinished games with bots per address, `all_bots` games of
    /// three bots on the whole server.
    pub fn new(per_addr: usize, all_bots: usize) -> BotGames {
        BotGames {
            per_addr,
            all_bots,
            by_addr: Mutex::default(),
            only_bots: Mutex::default(),
        }
    }

    /// Whether `addr` may start a game with `bots` bots (`game`: `None`), or
    /// seat bots in its game `game` (then `bots` in all): if so the game is
    /// counted at once (a new one under a placeholder id that
    /// [`BotGames::created`] replaces; a placeholder whose game never came is
    /// dropped at the next count, as a finished game), else 429 `too_many_games`.
    pub async fn admit(
        &self,
        store: &crate::store::Store,
        addr: ClientAddr,
        game: Option<&str>,
        bots: usize,
    ) -> Result<String, ApiError> {
        let id = game.map_or_else(|| format!("pending-{}", crate::http::random_hex(8)), str::to_owned);
        if bots == 0 {
            return Ok(id);
        }
        if bots >= 3 {
            let all = self.only_bots.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let all = unfinished(store, all).await?;
            let mut kept = self.only_bots.lock().unwrap_or_else(|e| e.into_inner());
            kept.retain(|g| all.contains(g) || g.starts_with("pending-"));
            if !kept.contains(&id) {
                if kept.len() >= self.all_bots {
                    return Err(ApiError::new(
                        ErrorCode::TooManyGames,
                        format!("the server plays at most {} games of bots alone at once", self.all_bots),
                    )
                    .retry_after(Duration::from_secs(60)));
                }
                kept.push(id.clone());
            }
        }
        let mine = {
            let m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
            m.get(&addr).cloned().unwrap_or_default()
        };
        if mine.contains(&id) {
            return Ok(id);
        }
        let live = unfinished(store, mine).await?;
        let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
        let mine = m.entry(addr).or_default();
        // Placeholders of creations still under way stay counted.
        mine.retain(|g| live.contains(g) || g.starts_with("pending-"));
        if mine.len() >= self.per_addr {
            drop(m);
            self.release(&id);
            return Err(ApiError::new(
                ErrorCode::TooManyGames,
                format!("at most {} unfinished games with bots per address", self.per_addr),
            ));
        }
        mine.push(id.clone());
        Ok(id)
    }

    /// The game admitted under `placeholder` is `game` (or failed: `None`).
    pub fn created(&self, addr: ClientAddr, placeholder: &str, game: Option<&str>) {
        let swap = |list: &mut Vec<String>| {
            list.retain(|g| g != placeholder);
            if let Some(g) = game {
                list.push(g.to_owned());
            }
        };
        let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mine) = m.get_mut(&addr)
            && mine.iter().any(|g| g == placeholder)
        {
            swap(mine);
        }
        drop(m);
        let mut all = self.only_bots.lock().unwrap_or_else(|e| e.into_inner());
        if all.iter().any(|g| g == placeholder) {
            swap(&mut all);
        }
    }

    fn release(&self, id: &str) {
        self.only_bots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|g| g != id);
    }

    /// Drops the finished games of every address (and the server's games of
    /// bots alone), then the addresses left with none: an address that
    /// never creates a game again is not kept for ever.
    pub async fn forget_finished(&self, store: &crate::store::Store) -> Result<(), ApiError> {
        let counted: Vec<String> = {
            let m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
            let mut ids: Vec<String> = m.values().flatten().cloned().collect();
            ids.extend(self.only_bots.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
            ids.retain(|g| !g.starts_with("pending-"));
            ids.sort();
            ids.dedup();
            ids
        };
        let live = unfinished(store, counted.clone()).await?;
        let finished = |g: &String| counted.contains(g) && !live.contains(g);
        let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
        for games in m.values_mut() {
            games.retain(|g| !finished(g));
        }
        drop(m);
        self.only_bots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|g| !finished(g));
        self.forget_idle();
        Ok(())
    }

    /// Addresses with games counted now.
    pub fn addresses(&self) -> usize {
        self.by_addr.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Forgets addresses with no game counted.
    fn forget_idle(&self) {
        let mut m = self.by_addr.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, games| !games.is_empty());
        m.shrink_to_fit();
    }
}

/// Who is connected to which game (by player id), kept by the sockets, so
/// that the lobby shows presence without asking every room. In a cluster it
/// also holds what the other nodes last said their sockets hold
/// ([`crate::cluster::Cluster::share_state`]), forgotten when a node stops
/// saying it.
#[derive(Debug, Default)]
pub struct Presence(
    Arc<Mutex<HashMap<(String, String), usize>>>,
    Mutex<HashMap<String, RemotePresence>>,
);

/// Another node's presence, as it last published it.
#[derive(Debug)]
struct RemotePresence {
    at: std::time::Instant,
    keys: std::collections::HashSet<(String, String)>,
}

/// A node's published presence is believed this long.
pub const REMOTE_PRESENCE_TTL: Duration = Duration::from_secs(12);

/// A player's connection to a game, counted while it lives.
#[derive(Debug)]
pub struct Present {
    key: (String, String),
    map: Arc<Mutex<HashMap<(String, String), usize>>>,
}

impl Drop for Present {
    fn drop(&mut self) {
        release(&self.map, &self.key);
    }
}

impl Presence {
    /// Counts `player`'s connection to `game` until the guard is dropped.
    pub fn enter(&self, game: &str, player: &str) -> Present {
        let key = (game.to_owned(), player.to_owned());
        take(&self.0, key.clone(), usize::MAX);
        Present {
            key,
            map: Arc::clone(&self.0),
        }
    }

    /// Whether `player` has a connection to `game` (on any node).
    pub fn online(&self, game: &str, player: &str) -> bool {
        let key = (game.to_owned(), player.to_owned());
        if self.0.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&key) {
            return true;
        }
        let remote = self.1.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        remote
            .values()
            .any(|r| now.duration_since(r.at) < REMOTE_PRESENCE_TTL && r.keys.contains(&key))
    }

    /// This node's connections (game, player), to publish to the others.
    pub fn local(&self) -> Vec<(String, String)> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// What node `node` says its sockets hold now; nodes silent for
    /// [`REMOTE_PRESENCE_TTL`] are forgotten.
    pub fn set_remote(&self, node: &str, keys: Vec<(String, String)>) {
        let now = std::time::Instant::now();
        let mut remote = self.1.lock().unwrap_or_else(|e| e.into_inner());
        remote.retain(|_, r| now.duration_since(r.at) < REMOTE_PRESENCE_TTL);
        remote.insert(
            node.to_owned(),
            RemotePresence {
                at: now,
                keys: keys.into_iter().collect(),
            },
        );
    }
}

/// Raises this process's open-file limit (`RLIMIT_NOFILE`) from its soft
/// value to its hard one, and returns the soft limit now in force (`None`
/// where there is none to read). Called once at start by `sanguo serve`.
pub fn raise_fd_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!(error = %e, "the open-file limit could not be raised");
            fd_limit()
        }
    }
}

/// The soft open-file limit in force, if any.
pub fn fd_limit() -> Option<u64> {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .ok()
        .map(|(soft, _)| soft)
        .filter(|&n| n != rlimit::INFINITY)
}

/// The game sockets the server may hold: the configured cap, and never more
/// than the open files left once `reserve` are kept for the listener's
/// accepts, plain HTTP requests (health checks among them), the store's
/// connections and files. At least one.
pub fn socket_cap(configured: usize, fd_limit: Option<u64>, reserve: usize) -> usize {
    let by_files = fd_limit.map_or(usize::MAX, |n| {
        usize::try_from(n).unwrap_or(usize::MAX).saturating_sub(reserve)
    });
    configured.min(by_files).max(1)
}

/// Every limit of the server, built from its configuration.
#[derive(Debug)]
pub struct Limits {
    /// Per-address rate limits.
    pub rates: Rates,
    /// Password hashing.
    pub hasher: Hasher,
    /// Game sockets.
    pub sockets: Sockets,
    /// Games with bots.
    pub bot_games: BotGames,
    /// Players' connections to games.
    pub presence: Presence,
}

impl Limits {
    /// The limits of `config`; the password hashing paced while `people` play.
    pub fn new(config: &crate::Config, metrics: &crate::metrics::Metrics, people: Arc<People>) -> Limits {
        let pacer = Pacer::new(config.hashing_percent, Work::Hashing, people, metrics.clone());
        Limits {
            rates: Rates::new(config.rates),
            hasher: Hasher::new(config.password_hashes, config.password_queue, metrics.clone(), pacer),
            sockets: Sockets::new(
                socket_cap(config.max_sockets, fd_limit(), config.fd_reserve),
                config.max_sockets_per_address,
                config.max_silent_sockets_per_address,
                config.max_spectators,
            ),
            bot_games: BotGames::new(config.max_bot_games_per_address, config.max_bot_only_games),
            presence: Presence::default(),
        }
    }

    /// Forgets idle addresses; run every minute or so.
    pub fn forget_idle(&self) {
        self.rates.forget_idle();
        self.bot_games.forget_idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(network(a), network(b));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(network(mapped), "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn the_trusted_header_alone_is_believed_and_its_last_entry() {
        let req = axum::http::Request::builder()
            .header("x-forwarded-for", "1.2.3.4, 5.6.7.8")
            .header("x-real-ip", "9.9.9.9")
            .body(())
            .unwrap();
        let (mut parts, ()) = req.into_parts();
        parts.extensions.insert(ConnectInfo(Peer {
            addr: "127.0.0.1:1".parse().unwrap(),
            wire: None,
        }));
        let of = |h| {
            ClientAddr::from_parts(&parts.headers, &parts.extensions, h)
                .unwrap()
                .0
                .to_string()
        };
        assert_eq!(of(None), "127.0.0.1", "no header believed unless configured");
        assert_eq!(of(Some("x-forwarded-for")), "5.6.7.8");
        assert_eq!(of(Some("x-real-ip")), "9.9.9.9");
        assert_eq!(of(Some("x-client-ip")), "127.0.0.1", "absent: the peer");
    }

    #[test]
    fn hashes_agree_with_argon2s_own_and_wrong_passwords_fail() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let ours = hash_blocking("correct horse battery").unwrap();
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(
            argon2::Argon2::default()
                .verify_password(b"correct horse battery", &parsed)
                .is_ok()
        );
        // A hash made by argon2's own API (as stored accounts were).
        let salt = SaltString::encode_b64(&[7; 16]).unwrap();
        let theirs = argon2::Argon2::default()
            .hash_password(b"eastwind208", &salt)
            .unwrap()
            .to_string();
        assert!(verify_blocking("eastwind208", &theirs));
        assert!(!verify_blocking("eastwind209", &theirs));
        assert!(verify_blocking("correct horse battery", &ours));
        assert!(!verify_blocking("correct horse batter", &ours));
        assert!(!verify_blocking("x", "not a hash"));
        assert!(!verify_blocking("x", &DUMMY_HASH));
    }

    /// The hashing threads rest after a hash while people play (and the
    /// rest is counted), not while nobody does; the answers are the same.
    #[tokio::test]
    async fn password_hashing_is_paced_while_people_play() {
        let metrics = crate::metrics::Metrics::default();
        let people = Arc::new(People::default());
        let pacer = Pacer::new(100, Work::Hashing, Arc::clone(&people), metrics.clone());
        let hasher = Hasher::new(1, 4, metrics.clone(), pacer);
        let hash = hasher.hash("eastwind208".into()).await.unwrap();
        assert!(hasher.verify("eastwind208".into(), Some(hash.clone())).await.unwrap());
        let rested = || metrics.hashing_rest_us.load(Ordering::Relaxed);
        assert_eq!(rested(), 0, "nobody plays: no rest");
        people.person_moved(std::time::Instant::now());
        assert!(!hasher.verify("eastwind209".into(), Some(hash.clone())).await.unwrap());
        // A hash takes more than the 5 ms burst, so its thread rested (at 100 %: what ran beyond it).
        assert!(rested() > 0, "people play: the hashing thread rested");
        assert!(hasher.verify("eastwind208".into(), Some(hash)).await.unwrap());
        assert!(
            !hasher.verify("x".into(), None).await.unwrap(),
            "unknown user: the dummy hash"
        );
        assert_eq!(metrics.password_verifications.load(Ordering::Relaxed), 4);
    }

    /// An address whose games with bots finished is forgotten by the sweep,
    /// even if it never creates a game again.
    #[tokio::test]
    async fn finished_bot_games_and_their_addresses_are_forgotten() {
        let path = std::env::temp_dir().join(format!("sanguo-limits-{}.sqlite", rand::random::<u64>()));
        let store = crate::store::Store::connect(
            &format!("sqlite://{}?mode=rwc", path.display()),
            crate::metrics::Metrics::default(),
        )
        .await
        .unwrap();
        store.create_player("p1", "P", None, "token-p1").await.unwrap();
        let settings: protocol::GameSettings = serde_json::from_value(serde_json::json!({
            "time_control": {"base_ms": 600000}, "direction": "ccw", "public": true,
            "players_chat": true, "grace_ms": 60000
        }))
        .unwrap();
        for g in ["g1", "g2"] {
            store.create_game(g, "p1", &settings, "start", None).await.unwrap();
        }
        let quota = BotGames::new(3, 4);
        let (a, b) = (
            ClientAddr("127.0.0.2".parse().unwrap()),
            ClientAddr("127.0.0.3".parse().unwrap()),
        );
        quota.admit(&store, a, Some("g1"), 3).await.unwrap();
        quota.admit(&store, b, Some("g2"), 1).await.unwrap();
        quota.forget_finished(&store).await.unwrap();
        assert_eq!(quota.addresses(), 2, "unfinished games stay counted");
        sqlx::query("UPDATE games SET phase = 'finished' WHERE id = 'g1'")
            .execute(&store.pool)
            .await
            .unwrap();
        quota.forget_finished(&store).await.unwrap();
        assert_eq!(quota.addresses(), 1, "the address of the finished game is forgotten");
        assert!(quota.only_bots.lock().unwrap().is_empty(), "and its game of bots alone");
        store.close().await;
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn the_socket_cap_keeps_files_in_reserve() {
        assert_eq!(socket_cap(10_000, Some(20_000), 1024), 10_000);
        assert_eq!(socket_cap(100_000, Some(20_000), 1024), 18_976);
        assert_eq!(socket_cap(100_000, None, 1024), 100_000);
        assert_eq!(socket_cap(100_000, Some(512), 1024), 1, "never none");
        // The process's own limit is read, and raising it never lowers it.
        let before = fd_limit();
        let after = raise_fd_limit();
        assert!(after >= before, "{after:?} < {before:?}");
    }

    #[test]
    fn an_address_may_keep_only_a_few_sockets_waiting_for_hello() {
        let s = Sockets::new(100, 5, 2, 1);
        let (a, b) = (
            ClientAddr("127.0.0.2".parse().unwrap()),
            ClientAddr("127.0.0.3".parse().unwrap()),
        );
        let mut a1 = s.admit(a).unwrap();
        let a2 = s.admit(a).unwrap();
        assert_eq!(s.admit(a).unwrap_err(), SocketRefusal::AddressSilent);
        assert!(s.admit(b).is_ok(), "another address has places of its own");
        // One says hello: a place before hello is free again, and the
        // refused socket took no place under the address's whole cap.
        a1.said_hello();
        let mut a3 = s.admit(a).unwrap();
        assert_eq!(s.admit(a).unwrap_err(), SocketRefusal::AddressSilent);
        a3.said_hello();
        a3.said_hello(); // twice gives back nothing more
        let mut a4 = s.admit(a).unwrap();
        assert_eq!(s.admit(a).unwrap_err(), SocketRefusal::AddressSilent);
        // A silent socket that goes gives its places back.
        drop(a2);
        a4.said_hello();
        let mut a5 = s.admit(a).unwrap();
        a5.said_hello();
        // a1, a3, a4, a5 said hello and hold 4 of the 5 places; one more.
        let a6 = s.admit(a).unwrap();
        assert_eq!(s.admit(a).unwrap_err(), SocketRefusal::AddressFull);
        // Every socket gone: the address is forgotten; so is one only ever refused.
        drop((a1, a3, a4, a5, a6));
        assert!(s.by_addr.lock().unwrap().is_empty());
        let none = Sockets::new(100, 0, 1, 1);
        assert_eq!(none.admit(b).unwrap_err(), SocketRefusal::AddressFull);
        assert!(none.by_addr.lock().unwrap().is_empty());
    }

    #[test]
    fn socket_caps_are_given_back() {
        let s = Sockets::new(3, 2, 2, 1);
        let a = ClientAddr("127.0.0.2".parse().unwrap());
        let b = ClientAddr("127.0.0.3".parse().unwrap());
        let a1 = s.admit(a).unwrap();
        let _a2 = s.admit(a).unwrap();
        assert_eq!(s.admit(a).unwrap_err(), SocketRefusal::AddressFull);
        let _b1 = s.admit(b).unwrap();
        assert_eq!(s.admit(b).unwrap_err(), SocketRefusal::Full);
        drop(a1);
        assert!(s.admit(a).is_ok());
        let w = s.spectate("g").unwrap();
        assert!(s.spectate("g").is_none());
        drop(w);
        assert!(s.spectate("g").is_some());
    }
}
