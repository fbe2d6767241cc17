//! One WebSocket connection to a game: the Origin check, `hello`, then one
//! task that reads the client (limits, parsing, heartbeat) and writes what
//! its bounded queue holds (filled by the room and by the replies), tracked
//! for graceful shutdown. Bad input is answered with an error message;
//! nothing a client sends can panic the server.

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use protocol::{ClientMsg, ErrorBody, ErrorCode, MAX_FRAME_BYTES, PROTOCOL_VERSION, ServerMsg};
use tokio::time::Instant;

use crate::AppState;
use crate::error::ApiError;
use crate::room::core::Act;
use crate::room::{Inbox, Received, RoomHandle, encode, outbox};
use crate::store::{Player, TokenLookup};

/// Frames above this close the connection outright (tungstenite refuses
/// them); frames between [`MAX_FRAME_BYTES`] and this get an error reply.
const HARD_FRAME_LIMIT: usize = 64 * 1024;
/// How long a client has to send `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
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

/// `GET /api/games/{id}/ws`.
pub async fn upgrade(
    ws: WebSocketUpgrade,
    State(s): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
) -> Result<Response, ApiError> {
    let ip = extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    if !origin_allowed(&headers, &s.config.allowed_origins) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this Origin may not open game sockets",
        ));
    }
    if s.shutdown.is_cancelled() {
        return Err(ApiError::new(ErrorCode::ShuttingDown, "the server is stopping"));
    }
    if id.len() > 64 {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game"));
    }
    let room = s
        .rooms
        .get(&id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?;
    // The connection counts as a tracked task from here, so shutdown waits for it.
    let token = s.tracker.token();
    Ok(ws
        // tungstenite's defaults (128 KiB each way) cost ~256 KiB per
        // connection; game messages are a few KB, and every send is flushed.
        // The read buffer is allocated (and zeroed) whole for every
        // connection and only sets how much one read takes (a longer frame
        // grows it): 2 KiB holds dozens of moves, and each idle connection
        // costs 2 KiB less than at 4 (docs/CAPACITY.md). The write buffer
        // only batches frames fed without a flush (the closing handshake);
        // it keeps the capacity of the largest frame written, whatever the
        // size set here.
        .read_buffer_size(2 * 1024)
        .write_buffer_size(8 * 1024)
        .max_frame_size(HARD_FRAME_LIMIT)
        .max_message_size(HARD_FRAME_LIMIT)
        .on_upgrade(move |socket| {
            // A task of its own whose future is the connection alone: run
            // inside axum's upgrade task, it would sit beside that task's
            // state and a second copy of the socket.
            s.tracker.clone().spawn(connection(socket, s, room, ip));
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
    serde_json::from_str::<ClientMsg>(text).map_err(|e| ErrorBody {
        code: ErrorCode::BadMessage,
        message: format!("not a protocol message: {e}"),
    })
}

/// Close code for a client that broke the protocol's limits (RFC 6455 1008).
const CLOSE_POLICY: u16 = 1008;
/// The Close reason of a flooding client.
pub const FLOOD_CLOSE_REASON: &str = "too many messages: rate limit exceeded";
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
    /// The room dropped the connection (too slow, or removed), its queue
    /// overflowed, or the room is gone.
    Removed,
    /// Nothing heard for three heartbeat intervals.
    Silent,
    /// Too many refusals for rate or size.
    Flood,
    /// The server is stopping.
    Shutdown,
}

impl End {
    /// The Close frame's code and reason.
    fn close(self) -> (u16, &'static str) {
        match self {
            End::ClientLeft => (1000, "bye"),
            End::Removed | End::Silent => (1012, "too slow or removed; reconnect with your last v"),
            End::Flood => (CLOSE_POLICY, FLOOD_CLOSE_REASON),
            End::Shutdown => (1012, "server shutting down"),
        }
    }
}

/// A refused `hello`: the error to send, then the Close frame.
#[derive(Debug)]
struct Refusal {
    error: Utf8Bytes,
    close: (u16, &'static str),
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            error: error(code, message),
            close: (1000, "bye"),
        }
    }
}

/// Waits for `hello` and checks it: the player (if a token was given) and
/// the client's last version.
async fn hello(socket: &mut WebSocket, s: &AppState) -> Result<(Option<Player>, Option<u64>), Refusal> {
    let first = || Refusal::new(ErrorCode::HelloFirst, "the first message must be hello");
    let text = match tokio::time::timeout(HELLO_TIMEOUT, socket.recv()).await {
        Ok(Some(Ok(Message::Text(t)))) if t.len() <= MAX_FRAME_BYTES => t,
        _ => return Err(first()),
    };
    let Ok(ClientMsg::Hello { protocol, token, v }) = serde_json::from_str::<ClientMsg>(&text) else {
        return Err(first());
    };
    if protocol != PROTOCOL_VERSION {
        return Err(Refusal::new(
            ErrorCode::UnsupportedProtocol,
            format!("this server speaks protocol {PROTOCOL_VERSION}"),
        ));
    }
    let Some(token) = token else {
        return Ok((None, v));
    };
    match s.store.player_by_token(&token, s.config.session_ttl).await {
        Ok(TokenLookup::Player(p)) => Ok((Some(p), v)),
        Ok(refused) => {
            let words = if refused == TokenLookup::Expired {
                "the session has expired; start a new one"
            } else {
                "unknown session token"
            };
            Err(Refusal {
                error: error(ErrorCode::Unauthorized, words),
                close: (CLOSE_POLICY, "unauthorized"),
            })
        }
        Err(e) => {
            tracing::error!(error = %e, "token lookup failed");
            Err(if e.is_outage() {
                Refusal::new(
                    ErrorCode::StorageUnavailable,
                    "the store is unreachable; reconnect soon",
                )
            } else {
                Refusal::new(ErrorCode::Internal, "internal error")
            })
        }
    }
}

/// One connection, in one task: `hello`, then a loop that reads the client
/// (limits, parsing, heartbeat) and writes what its queue holds, then the
/// closing handshake. One task rather than a reader and a writer: half the
/// tasks and no shared lock around the socket, and an idle connection's
/// whole state is this future, the socket's buffers and its queue.
async fn connection(mut socket: WebSocket, s: AppState, room: RoomHandle, ip: Option<std::net::IpAddr>) {
    let _counted = Counted::new(&s.metrics);
    // Boxed, as every await below that is large and happens once: the
    // future of this function is allocated for the connection's whole life
    // with room for its largest await.
    let (player, last_v) = match Box::pin(hello(&mut socket, &s)).await {
        Ok(h) => h,
        Err(r) => {
            Box::pin(close(&mut socket, None, Some(r.error), r.close, true)).await;
            return;
        }
    };

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

    let (outbox, inbox) = outbox(s.config.outbound_queue);
    let conn = s.next_conn.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(conn, player = ?player.as_ref().map(|p| &p.id), "game socket open");
    if Box::pin(room.connect(conn, player, last_v, outbox.clone()))
        .await
        .is_err()
    {
        let _ = outbox.send(error(ErrorCode::Internal, "the game is not available; reconnect"));
        Box::pin(close(&mut socket, Some(&inbox), None, End::Removed.close(), true)).await;
        return;
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

    let end = loop {
        let frame = tokio::select! {
            // What is queued goes out before more is read: every message
            // read may queue a reply, and the queue must not fill up with them.
            biased;
            queued = inbox.recv() => {
                let Received::Message(m) = queued else { break End::Removed };
                // A client that stops reading blocks the write: the room's
                // kick (the queue overflowed, or the server is stopping) and
                // the heartbeat still end it.
                let send = socket.send(Message::Text(m));
                tokio::pin!(send);
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
                match ended {
                    Some(end) => break end,
                    None => continue,
                }
            }
            f = socket.recv() => f,
            () = s.shutdown.cancelled() => break End::Shutdown,
            _ = ticker.tick() => {
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
        };
        let text = match frame {
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
        let refusal = if text.len() > MAX_FRAME_BYTES {
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
                let wait = penalty_key
                    .as_deref()
                    .map(|k| s.penalties.cut_off(k, std::time::Instant::now()));
                tracing::info!(conn, ?wait, "closing a flooding connection");
                break End::Flood;
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
            break End::Removed;
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
    Box::pin(close(&mut socket, backlog, None, end.close(), true)).await;
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
