//! One WebSocket connection to a game: the Origin check, `hello`, then a
//! reader (limits, parsing, heartbeat) in this task and a writer task fed by
//! a bounded queue that the room and the reader share. Both are tracked for
//! graceful shutdown. Bad input is answered with an error message; nothing a
//! client sends can panic the server.

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use protocol::{ClientMsg, ErrorBody, ErrorCode, MAX_FRAME_BYTES, PROTOCOL_VERSION, ServerMsg};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::AppState;
use crate::error::ApiError;
use crate::room::core::Act;
use crate::room::{Outbox, RoomHandle, encode};
use crate::store::TokenLookup;

/// Frames above this close the connection outright (tungstenite refuses
/// them); frames between [`MAX_FRAME_BYTES`] and this get an error reply.
const HARD_FRAME_LIMIT: usize = 64 * 1024;
/// How long a client has to send `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Refusals for rate or size after which the connection is closed (only the
/// first of a run is answered: a flood is not worth one reply per message).
const MAX_STRIKES: u32 = 10;

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
        // The read buffer is allocated whole for every connection and only
        // sets how much one read takes (a longer frame grows it): 4 KiB
        // holds any move, and each connection costs 12 KiB less than at 16.
        .read_buffer_size(4 * 1024)
        .write_buffer_size(8 * 1024)
        .max_frame_size(HARD_FRAME_LIMIT)
        .max_message_size(HARD_FRAME_LIMIT)
        .on_upgrade(move |socket| async move {
            s.metrics.connections.fetch_add(1, Ordering::Relaxed);
            connection(socket, s.clone(), room, ip).await;
            s.metrics.connections.fetch_sub(1, Ordering::Relaxed);
            drop(token);
        })
        .into_response())
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

/// Why the server closes a connection, sent in the Close frame.
#[derive(Debug, Default)]
struct CloseReason(std::sync::OnceLock<(u16, &'static str)>);

impl CloseReason {
    /// Sets the reason (the first one set wins).
    fn set(&self, code: u16, reason: &'static str) {
        let _ = self.0.set((code, reason));
    }
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

async fn connection(socket: WebSocket, s: AppState, room: RoomHandle, ip: Option<std::net::IpAddr>) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::channel::<Utf8Bytes>(s.config.outbound_queue);
    let kick = CancellationToken::new();
    let close_reason = std::sync::Arc::new(CloseReason::default());

    // The writer: drains the queue; ends when every sender is gone or the
    // connection is kicked, then closes the socket.
    let writer_kick = kick.clone();
    let writer_reason = close_reason.clone();
    let shutdown = s.shutdown.clone();
    let writer = s.tracker.spawn(async move {
        let reason = loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(m) => {
                        if sink.send(Message::Text(m)).await.is_err() {
                            return;
                        }
                    }
                    None => break "bye",
                },
                _ = writer_kick.cancelled() => break "too slow or removed; reconnect with your last v",
                _ = shutdown.cancelled() => break "server shutting down",
            }
        };
        let code = if reason == "bye" { 1000 } else { 1012 };
        let (code, reason) = writer_reason.0.get().copied().unwrap_or((code, reason));
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: Utf8Bytes::from_static(reason),
            })))
            .await;
        let _ = sink.close().await;
    });

    // hello
    let hello = tokio::time::timeout(HELLO_TIMEOUT, stream.next()).await;
    let (player, last_v) = match hello {
        Ok(Some(Ok(Message::Text(t)))) if t.len() <= MAX_FRAME_BYTES => match serde_json::from_str::<ClientMsg>(&t) {
            Ok(ClientMsg::Hello { protocol, token, v }) => {
                if protocol != PROTOCOL_VERSION {
                    let _ = tx.try_send(error(
                        ErrorCode::UnsupportedProtocol,
                        format!("this server speaks protocol {PROTOCOL_VERSION}"),
                    ));
                    drop(tx);
                    let _ = writer.await;
                    return;
                }
                let player = match token {
                    None => None,
                    Some(t) => match s.store.player_by_token(&t, s.config.session_ttl).await {
                        Ok(TokenLookup::Player(p)) => Some(p),
                        Ok(refused) => {
                            let words = if refused == TokenLookup::Expired {
                                "the session has expired; start a new one"
                            } else {
                                "unknown session token"
                            };
                            let _ = tx.try_send(error(ErrorCode::Unauthorized, words));
                            close_reason.set(CLOSE_POLICY, "unauthorized");
                            drop(tx);
                            let _ = writer.await;
                            return;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "token lookup failed");
                            let _ = tx.try_send(if e.is_outage() {
                                error(
                                    ErrorCode::StorageUnavailable,
                                    "the store is unreachable; reconnect soon",
                                )
                            } else {
                                error(ErrorCode::Internal, "internal error")
                            });
                            drop(tx);
                            let _ = writer.await;
                            return;
                        }
                    },
                };
                (player, v)
            }
            _ => {
                let _ = tx.try_send(error(ErrorCode::HelloFirst, "the first message must be hello"));
                drop(tx);
                let _ = writer.await;
                return;
            }
        },
        _ => {
            let _ = tx.try_send(error(ErrorCode::HelloFirst, "the first message must be hello"));
            drop(tx);
            let _ = writer.await;
            return;
        }
    };

    // Cut off for flooding a moment ago: not yet (no room visit, no snapshot).
    let penalty_key = crate::penalty::PenaltyBox::key(player.as_ref().map(|p| p.id.as_str()), ip);
    if let Some(key) = &penalty_key
        && let Some(wait) = s.penalties.waiting(key, std::time::Instant::now())
    {
        s.metrics.refused.fetch_add(1, Ordering::Relaxed);
        let _ = tx.try_send(error(
            ErrorCode::RateLimited,
            format!(
                "cut off for flooding; reconnect in {} s",
                wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
            ),
        ));
        close_reason.set(CLOSE_POLICY, PENALTY_CLOSE_REASON);
        drop(tx);
        let _ = writer.await;
        return;
    }

    // Only now does the room hold a sender: until here, dropping `tx` ends the writer.
    let outbox = Outbox {
        tx: tx.clone(),
        kick: kick.clone(),
    };
    let conn = s.next_conn.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(conn, player = ?player.as_ref().map(|p| &p.id), "game socket open");
    if room.connect(conn, player, last_v, outbox).await.is_err() {
        let _ = tx.try_send(error(ErrorCode::Internal, "the game is not available; reconnect"));
        drop(tx);
        let _ = writer.await;
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

    loop {
        let frame = tokio::select! {
            f = stream.next() => f,
            _ = kick.cancelled() => break,
            _ = s.shutdown.cancelled() => break,
            _ = ticker.tick() => {
                if last_heard.elapsed() > interval * 3 {
                    break;
                }
                ping_n += 1;
                ping_sent = Some((ping_n, Instant::now()));
                if tx.try_send(encode(&ServerMsg::Ping { n: ping_n })).is_err() {
                    break;
                }
                continue;
            }
        };
        let text = match frame {
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                last_heard = Instant::now();
                let _ = tx.try_send(error(
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
                close_reason.set(CLOSE_POLICY, FLOOD_CLOSE_REASON);
                break;
            }
            if let Some(r) = answer
                && tx.try_send(r).is_err()
            {
                break;
            }
            continue;
        }
        let msg = match decode(&text) {
            Ok(m) => m,
            Err(e) => {
                s.metrics.refused.fetch_add(1, Ordering::Relaxed);
                let _ = tx.try_send(error(e.code, e.message));
                continue;
            }
        };
        let delivered = match msg {
            ClientMsg::Hello { .. } => {
                let _ = tx.try_send(error(ErrorCode::HelloFirst, "hello was already said"));
                true
            }
            ClientMsg::Move { ply, mv } => room.act(conn, Act::Move { ply, mv }, lag_ms).await,
            ClientMsg::Resign => room.act(conn, Act::Resign, lag_ms).await,
            ClientMsg::OfferDraw => room.act(conn, Act::OfferDraw, lag_ms).await,
            ClientMsg::AnswerDraw { accept } => room.act(conn, Act::AnswerDraw(accept), lag_ms).await,
            ClientMsg::Chat { channel, text } => room.chat(conn, channel, text).await,
            ClientMsg::Ping { n } => {
                let _ = tx.try_send(encode(&ServerMsg::Pong { n, rtt_ms }));
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
            let _ = tx.try_send(error(ErrorCode::Internal, "the game is not available; reconnect"));
            break;
        }
    }
    tracing::debug!(conn, "game socket closed");
    room.disconnect(conn).await;
    drop(tx);
    kick.cancel();
    let _ = writer.await;
    // Finish the closing handshake: read (and discard) what the client still sends until its Close
    // arrives, for at most a second. Dropping the socket with unread data would make the kernel
    // answer with a reset, and the client could lose our Close frame and its reason.
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(Ok(m)) = stream.next().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}
