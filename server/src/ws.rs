//! One WebSocket connection to a game: the Origin check, `hello`, then one
//! task that reads the client (limits, parsing, heartbeat) and flushes what
//! its socket did not take at once (the room and the replies write to the
//! socket directly through its bounded outbox, crate::wire), tracked for
//! graceful shutdown. Bad input is answered with an error message;
//! nothing a client sends can panic the server.

use std::future::{Future, poll_fn};
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Version, header};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use protocol::{
    ClientMsg, ErrorBody, ErrorCode, LegalMovesFor, MAX_FRAME_BYTES, PROTOCOL_VERSION, Role, ServerMsg, Side, Snapshot,
};
use tokio::time::Instant;

use crate::AppState;
use crate::error::ApiError;
use crate::http::{Game, find_game};
use crate::limits::{ClientAddr, SocketPermit, SocketRefusal};
use crate::room::core::Act;
use crate::room::{Inbox, Received, encode, outbox};
use crate::store::{Player, TokenLookup};
use crate::wake::Others;
use crate::wire::{Peer, WireHandle};

/// Frames above this close the connection outright (tungstenite refuses
/// them); frames between [`MAX_FRAME_BYTES`] and this get an error reply.
const HARD_FRAME_LIMIT: usize = 64 * 1024;
/// Refusals for rate or size after which the connection is closed (only the
/// first of a run is answered: a flood is not worth one reply per message).
const MAX_STRIKES: u32 = 10;
/// The longest each half of the closing handshake may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        // Not a browser: nothing to protect against.
        return true;
    };
    if allowed.iter().any(|a| a == "*" || a == origin) {
        return true;
    }
    // Same origin: the Origin's host is the Host the request was sent to.
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    !host.is_empty() && origin_host == host
}

/// `GET /api/games/{id}/ws`. Before the upgrade only what is cheap: the
/// Origin, the socket caps (global and per address: refused with HTTP 503 or
/// 429) and that the game exists (one indexed read). The room is looked up —
/// or restored — only after a valid `hello`.
#[utoipa::path(
    get,
    path = "/api/games/{id}/ws",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 101, description = "switched to the game's WebSocket (protocol/README.md)"),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
pub async fn upgrade(
    ws: WebSocketUpgrade,
    State(s): State<AppState>,
    Path(id): Path<String>,
    addr: ClientAddr,
    headers: HeaderMap,
    version: Version,
    extensions: axum::http::Extensions,
) -> Result<Response, ApiError> {
    let peer = extensions.get::<axum::extract::ConnectInfo<Peer>>().map(|c| &c.0);
    let ip = peer.map(|_| addr.0);
    // The room writes the game's messages straight onto the connection
    // (crate::wire), which after an HTTP/1 upgrade carries this socket
    // alone. An HTTP/2 WebSocket is one stream among others: its messages
    // go through the socket's own writer.
    let wire = peer
        .and_then(|p| p.wire.clone())
        .filter(|_| matches!(version, Version::HTTP_10 | Version::HTTP_11));
    if !origin_allowed(&headers, &s.config.allowed_origins) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this Origin may not open game sockets",
        ));
    }
    if s.shutdown.is_cancelled() {
        return Err(ApiError::new(ErrorCode::ShuttingDown, "the server is stopping"));
    }
    let permit = match s.limits.sockets.admit(addr) {
        Ok(p) => p,
        Err(refusal) => {
            s.metrics.rate_limited.fetch_add(1, Ordering::Relaxed);
            let e = match refusal {
                SocketRefusal::Full => ApiError::new(
                    ErrorCode::Busy,
                    "the server holds all the game sockets it can; try again soon",
                ),
                SocketRefusal::AddressFull => {
                    ApiError::new(ErrorCode::RateLimited, "too many game sockets from this address")
                }
                SocketRefusal::AddressSilent => ApiError::new(
                    ErrorCode::RateLimited,
                    "too many game sockets from this address have not said hello yet",
                ),
            };
            return Err(e.retry_after(Duration::from_secs(5)));
        }
    };
    let exists = id.len() <= 64 && (s.rooms.in_memory(&id).is_some() || s.store.game_phase(&id).await?.is_some());
    if !exists {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game"));
    }
    // The connection counts as a tracked task from here, so shutdown waits for it.
    let token = s.tracker.token();
    Ok(ws
        // tungstenite's defaults (128 KiB each way) cost ~256 KiB per
        // connection; game messages are a few KB, and every send is flushed.
        // The read buffer is allocated (and zeroed) whole for every
        // connection and sets how much one read takes (a longer frame grows
        // it). tungstenite zeroes that much again before every read, into
        // memory the connection last touched a third of a second ago: 512
        // bytes hold several moves (~100 bytes each) and cost 8 cache lines
        // a read, where 2 KiB cost 32 (docs/CAPACITY.md). The write buffer
        // only batches frames fed without a flush (the closing handshake);
        // it keeps the capacity of the largest frame written, whatever the
        // size set here.
        .read_buffer_size(512)
        .write_buffer_size(8 * 1024)
        .max_frame_size(HARD_FRAME_LIMIT)
        .max_message_size(HARD_FRAME_LIMIT)
        .on_upgrade(move |socket| {
            // A task of its own whose future is the connection alone: run
            // inside axum's upgrade task, it would sit beside that task's
            // state and a second copy of the socket.
            s.tracker.clone().spawn(connection(socket, s, id, ip, permit, wire));
            drop(token);
            std::future::ready(())
        })
        .into_response())
}

/// How long a client kept out for flooding waits for its refusal.
const PENALTY_TARPIT: Duration = Duration::from_secs(1);

/// What a client kept out for flooding is told.
fn penalty_words(wait: Duration) -> String {
    format!(
        "cut off for flooding; reconnect in {} s",
        wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
    )
}

/// Decodes one text frame from a client: the size limit, then the JSON of a
/// [`ClientMsg`]. Every refusal is an error body with a code and words.
pub fn decode(text: &str) -> Result<ClientMsg, ErrorBody> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(ErrorBody {
            code: ErrorCode::FrameTooLarge,
            message: format!("frames are at most {MAX_FRAME_BYTES} bytes"),
        });
    }
    protocol::client_msg(text).map_err(|e| ErrorBody {
        code: ErrorCode::BadMessage,
        message: format!("not a protocol message: {e}"),
    })
}

/// Close codes (RFC 6455 §7.4.1 where one means what happened; 4000–4999
/// are this application's own). Each is listed in protocol/README.md.
pub mod close_code {
    /// The client (or the server, for a finished game's watcher) said goodbye.
    pub const NORMAL: u16 = 1000;
    /// The server is stopping (reconnect once it is back).
    pub const GOING_AWAY: u16 = 1001;
    /// The client broke the protocol's rules: no or a bad `hello`, an
    /// unknown token, flooding, kept out after flooding.
    pub const POLICY: u16 = 1008;
    /// A frame above 64 KB.
    pub const TOO_BIG: u16 = 1009;
    /// The server failed (the room is gone, the store refused): reconnect.
    pub const INTERNAL: u16 = 1011;
    /// The room dropped the connection: it did not read its messages fast
    /// enough (its queue overflowed). Reconnect with the last `v`.
    pub const TOO_SLOW: u16 = 4000;
    /// Nothing heard from the client for three heartbeat intervals.
    pub const SILENT: u16 = 4001;
    /// The game has as many spectators as it takes.
    pub const SPECTATORS_FULL: u16 = 4002;
    /// `hello` asked for another protocol version.
    pub const UNSUPPORTED_PROTOCOL: u16 = 4003;
}

/// Close code for a client that broke the protocol's limits (RFC 6455 1008).
const CLOSE_POLICY: u16 = close_code::POLICY;
/// The Close reason of a flooding client.
pub const FLOOD_CLOSE_REASON: &str = "too many messages: rate limit exceeded";
/// The Close reason of a client that sent too many frames above 8 KB.
pub const OVERSIZED_CLOSE_REASON: &str = "too many frames above 8 KB";
/// The Close reason for a client cut off for flooding that came back too soon.
pub const PENALTY_CLOSE_REASON: &str = "cut off for flooding: reconnect later";

fn error(code: ErrorCode, message: impl Into<String>) -> Utf8Bytes {
    encode(&ServerMsg::Error {
        code,
        message: message.into(),
    })
}

/// A token bucket for the connection's messages.
#[derive(Debug)]
struct RateLimit {
    tokens: f64,
    burst: f64,
    per_second: f64,
    last: Instant,
}

impl RateLimit {
    fn allow(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + dt * self.per_second).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Counts an open connection in the metrics while it lives.
#[derive(Debug)]
struct Counted(crate::metrics::Metrics);

impl Counted {
    fn new(metrics: &crate::metrics::Metrics) -> Counted {
        metrics.connections.fetch_add(1, Ordering::Relaxed);
        Counted(metrics.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a connection ended, which decides its Close frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The client closed, or the socket failed.
    ClientLeft,
    /// The room dropped the connection (too slow, or removed), or its queue
    /// overflowed.
    Removed,
    /// The room is gone.
    Gone,
    /// A frame over the hard limit.
    TooBig,
    /// Nothing heard for three heartbeat intervals.
    Silent,
    /// Too many refusals, the last for the rate.
    Flood,
    /// Too many refusals, the last for a frame's size.
    Oversized,
    /// The server is stopping.
    Shutdown,
}

impl End {
    /// The Close frame's code and reason.
    fn close(self) -> (u16, &'static str) {
        match self {
            End::ClientLeft => (close_code::NORMAL, "bye"),
            End::TooBig => (close_code::TOO_BIG, "frames are at most 64 KB"),
            End::Removed => (close_code::TOO_SLOW, "too slow or removed; reconnect with your last v"),
            End::Gone => (close_code::INTERNAL, "the game is not available; reconnect"),
            End::Silent => (close_code::SILENT, "no heartbeat for three intervals"),
            End::Flood => (CLOSE_POLICY, FLOOD_CLOSE_REASON),
            End::Oversized => (CLOSE_POLICY, OVERSIZED_CLOSE_REASON),
            End::Shutdown => (close_code::GOING_AWAY, "server shutting down"),
        }
    }
}

/// Whether a read failed because the frame was over the hard limit.
fn too_big(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(t) = err.downcast_ref::<tokio_tungstenite::tungstenite::Error>() {
            return matches!(t, tokio_tungstenite::tungstenite::Error::Capacity(_));
        }
        source = err.source();
    }
    let words = e.to_string();
    words.contains("Message too long") || words.contains("Space limit exceeded")
}

/// A refused `hello`: the error to send, then the Close frame.
#[derive(Debug)]
struct Refusal {
    error: Utf8Bytes,
    close: (u16, &'static str),
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>, close: (u16, &'static str)) -> Refusal {
        Refusal {
            error: error(code, message),
            close,
        }
    }
}

/// Waits for `hello` (at most `--hello-secs`) and checks it: the player (if
/// a token was given) and the client's last version. Something that is no
/// protocol message is `bad_message`; another message first is `hello_first`.
/// A socket silent until the deadline counts against its address (`ip`),
/// towards cutting it off (crate::cutoff).
async fn hello(
    socket: &mut WebSocket,
    s: &AppState,
    ip: Option<std::net::IpAddr>,
) -> Result<(Option<Player>, Option<u64>, bool), Refusal> {
    const NO_HELLO: (u16, &str) = (close_code::POLICY, "the first message must be hello");
    let wait = s.config.hello_timeout;
    let text = match tokio::time::timeout(wait, socket.recv()).await {
        Ok(Some(Ok(Message::Text(t)))) => t,
        Err(_) => {
            if let Some(ip) = ip {
                s.cutoff.silent(ClientAddr(ip), std::time::Instant::now());
            }
            return Err(Refusal::new(
                ErrorCode::HelloFirst,
                format!("no hello within {} s", wait.as_secs_f64()),
                (close_code::POLICY, "no hello in time"),
            ));
        }
        Ok(Some(Ok(Message::Binary(_)))) => {
            return Err(Refusal::new(
                ErrorCode::BadMessage,
                "binary frames are not part of the protocol",
                NO_HELLO,
            ));
        }
        Ok(Some(Err(e))) if too_big(&e) => {
            return Err(Refusal::new(
                ErrorCode::FrameTooLarge,
                format!("frames are at most {MAX_FRAME_BYTES} bytes"),
                End::TooBig.close(),
            ));
        }
        _ => {
            return Err(Refusal::new(
                ErrorCode::HelloFirst,
                "the first message must be hello",
                NO_HELLO,
            ));
        }
    };
    let (protocol, token, v, own) = match decode(&text) {
        Ok(ClientMsg::Hello {
            protocol,
            token,
            v,
            legal_moves,
        }) => (protocol, token, v, legal_moves == LegalMovesFor::Own),
        Ok(_) => {
            return Err(Refusal::new(
                ErrorCode::HelloFirst,
                "the first message must be hello",
                NO_HELLO,
            ));
        }
        Err(e) => {
            let close = if e.code == ErrorCode::FrameTooLarge {
                (close_code::POLICY, "frames are at most 8 KB")
            } else {
                NO_HELLO
            };
            return Err(Refusal::new(e.code, e.message, close));
        }
    };
    if protocol != PROTOCOL_VERSION {
        return Err(Refusal::new(
            ErrorCode::UnsupportedProtocol,
            format!("this server speaks protocol {PROTOCOL_VERSION}"),
            (close_code::UNSUPPORTED_PROTOCOL, "unsupported protocol version"),
        ));
    }
    let Some(token) = token else {
        return Ok((None, v, own));
    };
    match s.store.player_by_token(&token, s.config.session_ttl).await {
        Ok(TokenLookup::Player(p)) => Ok((Some(p), v, own)),
        Ok(refused) => {
            let words = if refused == TokenLookup::Expired {
                "the session has expired; start a new one"
            } else {
                "unknown session token"
            };
            Err(Refusal::new(
                ErrorCode::Unauthorized,
                words,
                (CLOSE_POLICY, "unauthorized"),
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, "token lookup failed");
            Err(if e.is_outage() {
                Refusal::new(
                    ErrorCode::StorageUnavailable,
                    "the store is unreachable; reconnect soon",
                    (close_code::INTERNAL, "store unreachable"),
                )
            } else {
                Refusal::new(
                    ErrorCode::Internal,
                    "internal error",
                    (close_code::INTERNAL, "internal error"),
                )
            })
        }
    }
}

/// One connection, in one task: `hello`, then a loop that reads the client
/// (limits, parsing, heartbeat) and flushes what the socket did not take at
/// once, then the closing handshake. One task rather than a reader and a
/// writer, and no wake-up for a message the socket takes at once (nearly
/// all): the room writes it itself. An idle connection's whole state is
/// this future, the socket's buffers and its outbox.
async fn connection(
    mut socket: WebSocket,
    s: AppState,
    id: String,
    ip: Option<std::net::IpAddr>,
    mut permit: SocketPermit,
    wire: Option<WireHandle>,
) {
    let _counted = Counted::new(&s.metrics);
    // Boxed, as every await below that is large and happens once: the
    // future of this function is allocated for the connection's whole life
    // with room for its largest await.
    let (player, last_v, own_moves) = match Box::pin(hello(&mut socket, &s, ip)).await {
        Ok(h) => h,
        Err(r) => {
            Box::pin(close(&mut socket, None, Some(r.error), r.close, true)).await;
            return;
        }
    };
    permit.said_hello();

    // Cut off for flooding a moment ago: not yet (no room visit, no snapshot).
    let penalty_key = crate::penalty::PenaltyBox::key(player.as_ref().map(|p| p.id.as_str()), ip);
    if let Some(key) = &penalty_key
        && let Some(wait) = s.penalties.waiting(key, std::time::Instant::now())
    {
        s.metrics.refused.fetch_add(1, Ordering::Relaxed);
        // A tarpit: the answer waits (up to a second), unread, so a flooder
        // reconnecting in a loop costs a handshake a second, not thousands.
        tokio::select! {
            _ = tokio::time::sleep(wait.min(PENALTY_TARPIT)) => {}
            _ = s.shutdown.cancelled() => {}
        }
        let refusal = error(
            ErrorCode::RateLimited,
            penalty_words(wait.saturating_sub(PENALTY_TARPIT)),
        );
        Box::pin(close(
            &mut socket,
            None,
            Some(refusal),
            (CLOSE_POLICY, PENALTY_CLOSE_REASON),
            false,
        ))
        .await;
        return;
    }

    // Only now, after a valid hello, is the game looked up (a room restored
    // if it must be; a finished game read from the store, no room made).
    let spectators_full = || {
        s.metrics.rate_limited.fetch_add(1, Ordering::Relaxed);
        Refusal::new(
            ErrorCode::RateLimited,
            "this game has as many spectators as it takes",
            (close_code::SPECTATORS_FULL, "too many spectators"),
        )
    };
    // Without a token the connection can only watch: its place is taken first.
    let mut watching = match &player {
        None => match s.limits.sockets.spectate(&id) {
            Some(w) => Some(w),
            None => {
                let r = spectators_full();
                Box::pin(close(&mut socket, None, Some(r.error), r.close, true)).await;
                return;
            }
        },
        Some(_) => None,
    };
    let room = match Box::pin(find_game(&s, &id)).await {
        Ok(Some(Game::Room(room))) => room,
        Ok(Some(Game::Finished(snap))) => {
            let seated = player.as_ref().and_then(|p| {
                Side::ALL.into_iter().find(|&side| {
                    snap.seats[side.index()]
                        .as_ref()
                        .is_some_and(|seat| seat.player == p.id)
                })
            });
            if seated.is_none() && watching.is_none() {
                watching = s.limits.sockets.spectate(&id);
                if watching.is_none() {
                    let r = spectators_full();
                    Box::pin(close(&mut socket, None, Some(r.error), r.close, true)).await;
                    return;
                }
            }
            Box::pin(watch_finished(socket, s, snap, seated)).await;
            return;
        }
        Ok(None) | Err(_) => {
            let e = error(ErrorCode::Internal, "the game is not available; reconnect");
            Box::pin(close(&mut socket, None, Some(e), End::Gone.close(), true)).await;
            return;
        }
    };

    let _present = player.as_ref().map(|p| s.limits.presence.enter(&id, &p.id));
    let (outbox, inbox) = outbox(s.config.outbound_queue);
    let conn = s.next_conn.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(conn, player = ?player.as_ref().map(|p| &p.id), "game socket open");
    let welcome = match Box::pin(room.connect(conn, player, last_v, own_moves, outbox.clone())).await {
        Ok(w) => w,
        Err(_) => {
            let _ = outbox.send(error(ErrorCode::Internal, "the game is not available; reconnect"));
            inbox.close(true);
            Box::pin(close(&mut socket, Some(&inbox), None, End::Gone.close(), true)).await;
            return;
        }
    };
    if welcome.role == Role::Spectator && watching.is_none() {
        watching = s.limits.sockets.spectate(&id);
        if watching.is_none() {
            // What the room queued (welcome, snapshot) is not sent.
            inbox.close(false);
            Box::pin(room.disconnect(conn)).await;
            let r = spectators_full();
            Box::pin(close(&mut socket, None, Some(r.error), r.close, true)).await;
            return;
        }
    }
    // From here the room's messages are written to the socket as they come
    // (what it queued so far first); the task only flushes what the socket
    // did not take at once.
    if let Some(wire) = wire {
        inbox.attach(wire);
    }

    let mut limit = RateLimit {
        tokens: f64::from(s.config.message_burst),
        burst: f64::from(s.config.message_burst),
        per_second: f64::from(s.config.messages_per_second),
        last: Instant::now(),
    };
    let mut strikes = 0u32;
    let mut over_rate = false;
    let interval = s.config.ping_interval;
    let mut ticker = tokio::time::interval_at(Instant::now() + interval, interval);
    let mut last_heard = Instant::now();
    let mut ping_n: u64 = 0;
    let mut ping_sent: Option<(u64, Instant)> = None;
    // One-way lag estimate (half the round trip, smoothed), ms.
    let mut lag_ms: u64 = 0;
    let mut rtt_ms: Option<u64> = None;
    // Made once and kept: registered with the shutdown token the first time
    // the loop waits, not again on every message read or written (a fresh
    // future each turn registered and unregistered itself in the token's
    // list of waiters, shared by every connection, each time the task slept).
    let shutdown = s.shutdown.clone().cancelled_owned();
    tokio::pin!(shutdown);
    let others = Others::new();

    let end = loop {
        let frame = tokio::select! {
            // What is queued goes out before more is read: every message
            // read may queue a reply, and the queue must not fill up with them.
            biased;
            queued = inbox.recv() => {
                let first = match queued {
                    Received::Message(m) => Some(m),
                    // Written to the socket, not all taken yet.
                    Received::Flush => None,
                    Received::Kicked => break End::Removed,
                };
                // A client that stops reading blocks the write: the room's
                // kick (the queue overflowed, or the server is stopping) and
                // the heartbeat still end it. What else is queued by then
                // goes out with it, in one write.
                let send = async {
                    if let Some(m) = first {
                        socket.feed(Message::Text(m)).await?;
                    }
                    while let Some(m) = inbox.try_recv() {
                        socket.feed(Message::Text(m)).await?;
                    }
                    socket.flush().await
                };
                tokio::pin!(send);
                // Nearly always written at once. Otherwise the client is slow
                // to read: the kick and the heartbeat watch the write, and
                // the heartbeat's timer takes the task's own waker, so the
                // other sources are all looked at again after it.
                let ended = match poll_fn(|cx| Poll::Ready(send.as_mut().poll(cx))).await {
                    Poll::Ready(sent) => sent.is_err().then_some(End::ClientLeft),
                    Poll::Pending => {
                        let ended = loop {
                            tokio::select! {
                                biased;
                                sent = &mut send => break sent.is_err().then_some(End::ClientLeft),
                                () = inbox.kicked() => break Some(End::Removed),
                                _ = ticker.tick() => {
                                    if last_heard.elapsed() > interval * 3 {
                                        break Some(End::Silent);
                                    }
                                }
                            }
                        };
                        others.look_again();
                        ended
                    }
                };
                match ended {
                    Some(end) => break end,
                    None => continue,
                }
            }
            heard = others.poll(|cx| {
                if let Poll::Ready(f) = socket.poll_next_unpin(cx) {
                    return Poll::Ready(Heard::Frame(f));
                }
                if shutdown.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Heard::Shutdown);
                }
                ticker.poll_tick(cx).map(|_| Heard::Tick)
            }) => match heard {
                Heard::Frame(f) => f,
                Heard::Shutdown => break End::Shutdown,
                Heard::Tick => {
                    if last_heard.elapsed() > interval * 3 {
                        break End::Silent;
                    }
                    ping_n += 1;
                    ping_sent = Some((ping_n, Instant::now()));
                    if !outbox.send(encode(&ServerMsg::Ping { n: ping_n })) {
                        break End::Removed;
                    }
                    continue;
                }
            },
        };
        let text = match frame {
            Some(Err(e)) if too_big(&e) => break End::TooBig,
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break End::ClientLeft,
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                last_heard = Instant::now();
                let _ = outbox.send(error(
                    ErrorCode::BadMessage,
                    "binary frames are not part of the protocol",
                ));
                continue;
            }
            Some(Ok(_)) => {
                // WebSocket-level ping/pong: tungstenite answers them.
                last_heard = Instant::now();
                continue;
            }
        };
        last_heard = Instant::now();
        // Oversized frames are always answered; of a run of messages over the
        // rate, only the first.
        // The kind of the last strike names the close.
        let oversized = text.len() > MAX_FRAME_BYTES;
        let refusal = if oversized {
            Some(Some(error(
                ErrorCode::FrameTooLarge,
                format!("frames are at most {MAX_FRAME_BYTES} bytes"),
            )))
        } else if !limit.allow() {
            let first = !over_rate;
            over_rate = true;
            Some(first.then(|| error(ErrorCode::RateLimited, "too many messages; slow down")))
        } else {
            over_rate = false;
            None
        };
        if let Some(answer) = refusal {
            strikes += 1;
            s.metrics.refused.fetch_add(1, Ordering::Relaxed);
            if strikes > MAX_STRIKES {
                let wait = penalty_key.as_deref().map(|k| {
                    let wait = s.penalties.cut_off(k, std::time::Instant::now());
                    // One penalty box for the whole cluster.
                    if let Some((node, _)) = s.rooms.cluster() {
                        node.share_penalty(k, wait);
                    }
                    wait
                });
                tracing::info!(conn, ?wait, oversized, "closing a flooding connection");
                break if oversized { End::Oversized } else { End::Flood };
            }
            if let Some(r) = answer
                && !outbox.send(r)
            {
                break End::Removed;
            }
            continue;
        }
        let msg = match decode(&text) {
            Ok(m) => m,
            Err(e) => {
                s.metrics.refused.fetch_add(1, Ordering::Relaxed);
                let _ = outbox.send(error(e.code, e.message));
                continue;
            }
        };
        let delivered = match msg {
            ClientMsg::Hello { .. } => {
                let _ = outbox.send(error(ErrorCode::HelloFirst, "hello was already said"));
                true
            }
            ClientMsg::Move { ply, mv } => room.act(conn, Act::Move { ply, mv }, lag_ms).await,
            ClientMsg::Resign => room.act(conn, Act::Resign, lag_ms).await,
            ClientMsg::OfferDraw => room.act(conn, Act::OfferDraw, lag_ms).await,
            ClientMsg::AnswerDraw { accept } => room.act(conn, Act::AnswerDraw(accept), lag_ms).await,
            ClientMsg::Seed { seed } => room.act(conn, Act::Seed(seed), lag_ms).await,
            ClientMsg::Chat { text, .. } if text.contains('\0') => {
                // The store cannot hold one (Postgres refuses NUL in text).
                let _ = outbox.send(error(ErrorCode::BadChat, "chat may not contain NUL characters"));
                true
            }
            ClientMsg::Chat { channel, text } => room.chat(conn, channel, text).await,
            ClientMsg::Ping { n } => {
                let _ = outbox.send(encode(&ServerMsg::Pong { n, rtt_ms }));
                true
            }
            ClientMsg::Pong { n } => {
                if let Some((sent_n, at)) = ping_sent
                    && sent_n == n
                {
                    let rtt = at.elapsed().as_millis() as u64;
                    rtt_ms = Some(rtt);
                    lag_ms = if lag_ms == 0 {
                        rtt / 2
                    } else {
                        (lag_ms * 3 + rtt / 2) / 4
                    };
                    ping_sent = None;
                }
                true
            }
        };
        if !delivered {
            let _ = outbox.send(error(ErrorCode::Internal, "the game is not available; reconnect"));
            break End::Gone;
        }
    };
    let end = if end == End::Removed && s.shutdown.is_cancelled() {
        End::Shutdown
    } else {
        end
    };
    tracing::debug!(conn, ?end, "game socket closed");
    Box::pin(room.disconnect(conn)).await;
    // A connection the room dropped for being slow gets no backlog.
    let backlog = (end != End::Removed || !outbox.is_kicked()).then_some(&inbox);
    // Nothing more reaches the socket after its Close frame.
    inbox.close(backlog.is_some());
    Box::pin(close(&mut socket, backlog, None, end.close(), true)).await;
}

/// What woke a game connection, besides its queue.
enum Heard {
    /// The client's next frame (`None`: the stream ended).
    Frame(Option<Result<Message, axum::Error>>),
    /// The server is stopping.
    Shutdown,
    /// The heartbeat's tick.
    Tick,
}

/// A connection to a finished game that is not in memory: the welcome and
/// the final state, then only heartbeats until the client leaves (a browser
/// left open on an old game must not reconnect in a loop). Actions are
/// answered `game_over`; nothing reaches a room, none is made.
async fn watch_finished(mut socket: WebSocket, s: AppState, snap: std::sync::Arc<Snapshot>, side: Option<Side>) {
    let welcome = encode(&ServerMsg::Welcome {
        protocol: PROTOCOL_VERSION,
        game: snap.id.clone(),
        role: if side.is_some() { Role::Player } else { Role::Spectator },
        side,
        v: snap.v,
    });
    let state = encode(&ServerMsg::Snapshot {
        game: Box::new(Snapshot::clone(&snap)),
    });
    drop(snap);
    let interval = s.config.ping_interval;
    let mut ticker = tokio::time::interval_at(Instant::now() + interval, interval);
    let mut last_heard = Instant::now();
    let mut limit = RateLimit {
        tokens: f64::from(s.config.message_burst),
        burst: f64::from(s.config.message_burst),
        per_second: f64::from(s.config.messages_per_second),
        last: Instant::now(),
    };
    let mut strikes = 0u32;
    let mut ping_n = 0;
    let end = 'conn: {
        for m in [welcome, state] {
            if socket.send(Message::Text(m)).await.is_err() {
                break 'conn End::ClientLeft;
            }
        }
        loop {
            let frame = tokio::select! {
                f = socket.recv() => f,
                () = s.shutdown.cancelled() => break End::Shutdown,
                _ = ticker.tick() => {
                    if last_heard.elapsed() > interval * 3 {
                        break End::Silent;
                    }
                    ping_n += 1;
                    if socket.send(Message::Text(encode(&ServerMsg::Ping { n: ping_n }))).await.is_err() {
                        break End::ClientLeft;
                    }
                    continue;
                }
            };
            let text = match frame {
                Some(Err(e)) if too_big(&e) => break End::TooBig,
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break End::ClientLeft,
                Some(Ok(Message::Text(t))) => t,
                Some(Ok(_)) => {
                    last_heard = Instant::now();
                    continue;
                }
            };
            last_heard = Instant::now();
            if !limit.allow() || text.len() > MAX_FRAME_BYTES {
                strikes += 1;
                if strikes > MAX_STRIKES {
                    break End::Flood;
                }
                continue;
            }
            let reply = match decode(&text) {
                Ok(ClientMsg::Ping { n }) => encode(&ServerMsg::Pong { n, rtt_ms: None }),
                Ok(ClientMsg::Pong { .. }) => continue,
                Ok(ClientMsg::Hello { .. }) => error(ErrorCode::HelloFirst, "hello was already said"),
                Ok(_) => error(ErrorCode::GameOver, "the game is over"),
                Err(e) => error(e.code, e.message),
            };
            if socket.send(Message::Text(reply)).await.is_err() {
                break End::ClientLeft;
            }
        }
    };
    Box::pin(close(&mut socket, None, None, end.close(), end != End::ClientLeft)).await;
}

/// Closes a connection: writes what is still queued (and `last`), the Close
/// frame with its code and reason, then finishes the closing handshake by
/// reading (and discarding) what the client still sends until its Close
/// arrives. Dropping the socket with unread data would make the kernel
/// answer with a reset, and the client could lose the Close frame and its
/// reason. Each half takes at most a second: a client that reads nothing
/// does not hold the task. Without `drain` (a client kept out for flooding,
/// whose unread frames are not worth decoding) it ends after the Close.
async fn close(
    socket: &mut WebSocket,
    queued: Option<&Inbox>,
    last: Option<Utf8Bytes>,
    (code, reason): (u16, &'static str),
    drain: bool,
) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
        while let Some(m) = queued.and_then(Inbox::try_recv) {
            socket.feed(Message::Text(m)).await?;
        }
        if let Some(m) = last {
            socket.feed(Message::Text(m)).await?;
        }
        socket
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: Utf8Bytes::from_static(reason),
            })))
            .await
    })
    .await;
    if !drain {
        return;
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
        while let Some(Ok(m)) = socket.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}
