//! Rooms across nodes (issue 17): a **proxy** stands in for a room owned by
//! another node, and the **relay** hands the owner's room what proxies send.
//!
//! To everything else on its node a proxy is a room: a [`RoomHandle`] whose
//! messages go to a task. The task forwards them over NATS to the owner
//! (`sanguo.node.<owner>.cmd`): requests where the caller waits for an answer
//! (connect, join, bots, arbiter, state), plain publishes for a connection's
//! acts, chat and departure. NATS keeps the order of one client's messages on
//! one subject, so the owner's room takes a connection's messages in the
//! order the client sent them.
//!
//! The owner's relay gives each relayed connection an [`Outbox`] of its own,
//! like a local socket's, and a pump that publishes what the room queues for
//! it to the proxy's node (`sanguo.node.<node>.out`), numbered per
//! connection. The proxy's node checks the numbers: a gap (a message NATS
//! dropped) makes the client reconnect, and a reconnecting client catches up
//! from its last version ([`super::core::Room::missed_since`]), as after any
//! reconnect. The room's projection per viewer is made by the owner's room
//! alone, as for its local connections: a face-down identity that one seat
//! may not see is never in what is relayed to it.
//!
//! Liveness both ways, per pair of nodes (not per game: a thousand relayed
//! games would be a thousand pings a second): a node pings every owner it
//! relays to every second, and when one does not answer, every proxy of that
//! owner's games stops (its clients reconnect, and find the game's new
//! owner); the owner drops the relayed connections of a node that stopped
//! pinging. A room that stops on its owner closes its relayed connections
//! like its local ones, and a proxy whose owner no longer holds the room is
//! told so (`not_here`) at its next request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::StreamExt;
use protocol::{ErrorBody, ErrorCode};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{MAILBOX, Msg, Outbox, Received, RoomHandle, Rooms, Welcome, outbox};
use crate::cluster::{Cluster, Cmd, Reply, WireAct, cmd_subject, out_subject};

/// How often a proxy with connections pings the owner.
const PING_EVERY: Duration = Duration::from_secs(1);
/// How long a request to the owner may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// A relayed connection whose node has not pinged for this long is dropped.
const PING_LAPSE: Duration = Duration::from_secs(4);
/// A proxy with no connection and no message for this long stops.
const PROXY_IDLE: Duration = Duration::from_secs(30);
/// Relayed connection ids on the owner have this bit set (local ones never do).
const RELAYED: u64 = 1 << 62;

/// The connections a node relays, by its own connection id: where each one's
/// messages go, and the number the next must have; and the owners it relays
/// to, each with the token cancelled when it stops answering.
#[derive(Debug, Default)]
pub struct Deliveries(
    Mutex<HashMap<u64, (Outbox, u64)>>,
    Mutex<HashMap<String, CancellationToken>>,
);

impl Deliveries {
    /// The token cancelled when `owner` stops answering this node's pings.
    fn watch(&self, owner: &str) -> CancellationToken {
        let mut owners = self.1.lock().unwrap_or_else(|e| e.into_inner());
        owners.entry(owner.to_owned()).or_default().clone()
    }

    fn insert(&self, conn: u64, outbox: Outbox) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(conn, (outbox, 1));
    }

    fn remove(&self, conn: u64) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&conn);
    }

    /// One message from an owner's pump: `conn seq\n` then the text, or
    /// `conn seq kick\n`.
    fn deliver(&self, payload: Bytes) {
        let Some(nl) = payload.iter().position(|&b| b == b'\n') else {
            return;
        };
        let Ok(head) = std::str::from_utf8(&payload[..nl]) else {
            return;
        };
        let mut words = head.split(' ');
        let (Some(Ok(conn)), Some(Ok(seq))) =
            (words.next().map(str::parse::<u64>), words.next().map(str::parse::<u64>))
        else {
            return;
        };
        let kick = words.next() == Some("kick");
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some((outbox, next)) = map.get_mut(&conn) else {
            return;
        };
        if seq != *next || kick {
            if !kick {
                tracing::info!(
                    conn,
                    seq,
                    expected = *next,
                    "a relayed message went missing; the client reconnects"
                );
            }
            outbox.kick();
            map.remove(&conn);
            return;
        }
        *next += 1;
        let Ok(text) = Utf8Bytes::try_from(payload.slice(nl + 1..)) else {
            return;
        };
        if !outbox.send(text) {
            outbox.kick();
            map.remove(&conn);
        }
    }
}

/// Receives what owners send this node's relayed connections (one task per node).
pub async fn deliver(cluster: Arc<Cluster>, deliveries: Arc<Deliveries>, shutdown: CancellationToken) {
    let mut sub = match cluster.nats.subscribe(out_subject(&cluster.node)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot subscribe to relayed messages");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            m = sub.next() => match m {
                Some(m) => deliveries.deliver(m.payload),
                None => return,
            },
        }
    }
}

/// Pings every owner this node relays to, every second; an owner that does
/// not answer is given up: every proxy of its games stops.
pub async fn watch_owners(cluster: Arc<Cluster>, deliveries: Arc<Deliveries>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(PING_EVERY);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let owners: Vec<String> = deliveries
            .1
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        let ping = Cmd::Ping {
            from: cluster.node.clone(),
        };
        let answers = futures_util::future::join_all(owners.iter().map(|o| request(&cluster, o, &ping))).await;
        for (owner, answer) in owners.iter().zip(answers) {
            if !matches!(answer, Some(Reply::Ok)) {
                tracing::info!(owner = %owner, "a game owner stopped answering; its games' clients reconnect");
                if let Some(t) = deliveries.1.lock().unwrap_or_else(|e| e.into_inner()).remove(owner) {
                    t.cancel();
                }
            }
        }
    }
}

/// A request to `owner`, answered within [`REQUEST_TIMEOUT`].
async fn request(cluster: &Cluster, owner: &str, cmd: &Cmd) -> Option<Reply> {
    let payload = Bytes::from(serde_json::to_vec(cmd).ok()?);
    let answer = tokio::time::timeout(REQUEST_TIMEOUT, cluster.nats.request(cmd_subject(owner), payload))
        .await
        .ok()?
        .ok()?;
    serde_json::from_slice(&answer.payload).ok()
}

async fn publish(cluster: &Cluster, owner: &str, cmd: &Cmd) -> bool {
    let Ok(payload) = serde_json::to_vec(cmd) else {
        return false;
    };
    cluster
        .nats
        .publish(cmd_subject(owner), Bytes::from(payload))
        .await
        .is_ok()
}

fn moved() -> ErrorBody {
    ErrorBody {
        code: ErrorCode::Internal,
        message: "the game moved to another server; try again".into(),
    }
}

/// Starts a proxy for `game`, owned by `owner`, unless a room or proxy of it
/// is in `rooms` already.
pub(super) fn proxy(
    rooms: &Arc<Rooms>,
    cluster: Arc<Cluster>,
    deliveries: Arc<Deliveries>,
    game: &str,
    owner: String,
) -> RoomHandle {
    let (tx, rx) = super::mailbox::mailbox(MAILBOX);
    let handle = RoomHandle {
        tx,
        generation: rooms.next_generation.fetch_add(1, Ordering::Relaxed),
        local: false,
    };
    {
        let mut map = rooms.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = map.get(game).filter(|h| !h.tx.is_closed()) {
            return h.clone();
        }
        map.insert(game.to_owned(), handle.clone());
    }
    tracing::debug!(game, owner = %owner, "relaying to the game's owner");
    let p = Proxy {
        owner_gone: deliveries.watch(&owner),
        game: game.to_owned(),
        owner,
        cluster,
        deliveries,
        rx,
        conns: HashMap::new(),
        shutdown: rooms.ctx.shutdown.clone(),
    };
    rooms.ctx.tracker.spawn(p.run(Arc::clone(rooms), handle.generation));
    handle
}

struct Proxy {
    /// Cancelled when the owner stops answering pings.
    owner_gone: CancellationToken,
    game: String,
    owner: String,
    cluster: Arc<Cluster>,
    deliveries: Arc<Deliveries>,
    rx: super::mailbox::Receiver<Msg>,
    /// This node's connections to the game.
    conns: HashMap<u64, Outbox>,
    shutdown: CancellationToken,
}

impl Proxy {
    async fn run(mut self, rooms: Arc<Rooms>, generation: u64) {
        let mut idle = tokio::time::interval(PING_EVERY);
        let mut last_used = Instant::now();
        loop {
            let alive = tokio::select! {
                _ = self.shutdown.cancelled() => false,
                _ = self.owner_gone.cancelled() => false,
                msg = self.rx.recv() => match msg {
                    Some(msg) => {
                        last_used = Instant::now();
                        self.handle(msg).await
                    }
                    None => false,
                },
                _ = idle.tick() => !self.conns.is_empty() || last_used.elapsed() < PROXY_IDLE,
            };
            if !alive {
                break;
            }
        }
        // Gone: its clients reconnect and find the game's owner anew.
        rooms.forget(&self.game, generation);
        for (conn, outbox) in self.conns.drain() {
            self.deliveries.remove(conn);
            outbox.kick();
        }
        tracing::debug!(game = %self.game, owner = %self.owner, "proxy stopped");
    }

    fn cmd_base(&self) -> (String, String) {
        (self.game.clone(), self.cluster.node.clone())
    }

    /// Handles one message; false when the owner is gone.
    async fn handle(&mut self, msg: Msg) -> bool {
        let (game, from) = self.cmd_base();
        match msg {
            Msg::Connect {
                conn,
                player,
                last_v,
                own_moves,
                outbox,
                reply,
            } => {
                self.deliveries.insert(conn, outbox.clone());
                let cmd = Cmd::Connect {
                    game,
                    from,
                    conn,
                    player: player.as_deref().map(Into::into),
                    last_v,
                    own_moves,
                };
                match request(&self.cluster, &self.owner, &cmd).await {
                    Some(Reply::Welcome { role, side }) => {
                        self.conns.insert(conn, outbox);
                        let _ = reply.send(Welcome { role, side });
                        true
                    }
                    other => {
                        self.deliveries.remove(conn);
                        outbox.kick();
                        drop(reply);
                        !matches!(other, None | Some(Reply::NotHere))
                    }
                }
            }
            Msg::Disconnect { conn } => {
                if self.conns.remove(&conn).is_some() {
                    self.deliveries.remove(conn);
                    publish(&self.cluster, &self.owner, &Cmd::Disconnect { game, from, conn }).await;
                }
                true
            }
            Msg::Act { conn, act, lag_ms, .. } => {
                let act = WireAct::from(*act);
                publish(
                    &self.cluster,
                    &self.owner,
                    &Cmd::Act {
                        game,
                        from,
                        conn,
                        act,
                        lag_ms,
                    },
                )
                .await
            }
            Msg::Chat { conn, channel, text } => {
                publish(
                    &self.cluster,
                    &self.owner,
                    &Cmd::Chat {
                        game,
                        from,
                        conn,
                        channel,
                        text,
                    },
                )
                .await
            }
            Msg::Join {
                player,
                side,
                seed,
                asked,
                reply,
            } => {
                let cmd = Cmd::Join {
                    game,
                    player: (&*player).into(),
                    side,
                    seed,
                    asked,
                };
                self.answer_side(cmd, reply).await
            }
            Msg::AddBot { level, side, reply } => {
                let cmd = Cmd::AddBot {
                    game,
                    level: level.number(),
                    side,
                };
                self.answer_side(cmd, reply).await
            }
            Msg::Arbiter {
                by,
                action,
                reason,
                reply,
            } => {
                let cmd = Cmd::Arbiter {
                    game,
                    by: (&*by).into(),
                    action,
                    reason,
                };
                match request(&self.cluster, &self.owner, &cmd).await {
                    Some(Reply::Snapshot { game }) => {
                        let _ = reply.send(Ok(*game));
                        true
                    }
                    Some(Reply::Error { error }) => {
                        let _ = reply.send(Err(error));
                        true
                    }
                    _ => {
                        let _ = reply.send(Err(moved()));
                        false
                    }
                }
            }
            Msg::Snapshot { viewer, reply } => {
                let cmd = Cmd::View {
                    game,
                    seat: viewer.seat(),
                };
                match request(&self.cluster, &self.owner, &cmd).await {
                    Some(Reply::Snapshot { game }) => {
                        let _ = reply.send(*game);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    async fn answer_side(&self, cmd: Cmd, reply: oneshot::Sender<Result<protocol::Side, ErrorBody>>) -> bool {
        match request(&self.cluster, &self.owner, &cmd).await {
            Some(Reply::Side { side }) => {
                let _ = reply.send(Ok(side));
                true
            }
            Some(Reply::Error { error }) => {
                let _ = reply.send(Err(error));
                true
            }
            _ => {
                let _ = reply.send(Err(moved()));
                false
            }
        }
    }
}

/// A connection relayed to this node's room.
struct Relayed {
    game: String,
    local: u64,
    room: RoomHandle,
}

/// The owner's side: takes what proxies send this node and hands it to the
/// rooms (one task per node; it never waits for a room's answer itself).
pub async fn relay(rooms: Arc<Rooms>, cluster: Arc<Cluster>, queue: usize, shutdown: CancellationToken) {
    let mut sub = match cluster.nats.subscribe(cmd_subject(&cluster.node)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot subscribe to relayed commands");
            return;
        }
    };
    let next = AtomicU64::new(1);
    let mut relayed: HashMap<(String, u64), Relayed> = HashMap::new();
    let mut pinged: HashMap<String, Instant> = HashMap::new();
    let mut sweep = tokio::time::interval(PING_EVERY);
    loop {
        let m = tokio::select! {
            _ = shutdown.cancelled() => return,
            m = sub.next() => match m {
                Some(m) => m,
                None => return,
            },
            _ = sweep.tick() => {
                // Nodes that stopped pinging a game: their connections to it are gone.
                let now = Instant::now();
                pinged.retain(|_, at| now.duration_since(*at) < PING_LAPSE);
                let stale: Vec<(String, u64)> = relayed
                    .keys()
                    .filter(|(from, _)| !pinged.contains_key(from))
                    .cloned()
                    .collect();
                for key in stale {
                    if let Some(r) = relayed.remove(&key) {
                        tracing::info!(game = %r.game, node = %key.0, "a relaying node went quiet; its connection leaves");
                        let _ = r.room.tx.send(Msg::Disconnect { conn: r.local }).await;
                    }
                }
                continue;
            }
        };
        let Ok(cmd) = serde_json::from_slice::<Cmd>(&m.payload) else {
            tracing::warn!("an unreadable relayed command was dropped");
            continue;
        };
        let answer = Answer {
            nats: cluster.nats.clone(),
            to: m.reply.clone(),
        };
        let Some(game) = cmd.game() else {
            if let Cmd::Ping { from } = cmd {
                pinged.insert(from, Instant::now());
                answer.send(Reply::Ok).await;
            }
            continue;
        };
        let Some(room) = rooms.lookup(game).filter(|h| h.local) else {
            match cmd {
                Cmd::Act { from, conn, .. } | Cmd::Chat { from, conn, .. } => kick(&cluster, &from, conn).await,
                Cmd::Disconnect { .. } => {}
                _ => answer.send(Reply::NotHere).await,
            }
            continue;
        };
        match cmd {
            Cmd::Ping { .. } => answer.send(Reply::Ok).await,
            Cmd::Connect {
                game,
                from,
                conn,
                player,
                last_v,
                own_moves,
            } => {
                let local = RELAYED | next.fetch_add(1, Ordering::Relaxed);
                let (outbox, inbox) = outbox(queue);
                let (reply, rx) = oneshot::channel();
                let sent = room
                    .tx
                    .send(Msg::Connect {
                        conn: local,
                        player: player.map(|p| Box::new(p.into())),
                        last_v,
                        own_moves,
                        outbox,
                        reply,
                    })
                    .await
                    .is_ok();
                if !sent {
                    answer.send(Reply::NotHere).await;
                    continue;
                }
                pinged.insert(from.clone(), Instant::now());
                let nats = cluster.nats.clone();
                let subject = out_subject(&from);
                tokio::spawn(pump(inbox, nats, subject, conn));
                relayed.insert(
                    (from, conn),
                    Relayed {
                        game,
                        local,
                        room: room.clone(),
                    },
                );
                let done = answer;
                tokio::spawn(async move {
                    match rx.await {
                        Ok(w) => {
                            done.send(Reply::Welcome {
                                role: w.role,
                                side: w.side,
                            })
                            .await
                        }
                        Err(_) => done.send(Reply::NotHere).await,
                    }
                });
            }
            Cmd::Disconnect { from, conn, .. } => {
                if let Some(r) = relayed.remove(&(from, conn)) {
                    let _ = r.room.tx.send(Msg::Disconnect { conn: r.local }).await;
                }
            }
            Cmd::Act {
                from,
                conn,
                act,
                lag_ms,
                ..
            } => match relayed.get(&(from.clone(), conn)) {
                Some(r) => {
                    let msg = Msg::Act {
                        conn: r.local,
                        act: Box::new(act.into()),
                        lag_ms,
                        received: Instant::now(),
                    };
                    let _ = r.room.tx.send(msg).await;
                }
                None => kick(&cluster, &from, conn).await,
            },
            Cmd::Chat {
                from,
                conn,
                channel,
                text,
                ..
            } => match relayed.get(&(from.clone(), conn)) {
                Some(r) => {
                    let _ = r
                        .room
                        .tx
                        .send(Msg::Chat {
                            conn: r.local,
                            channel,
                            text,
                        })
                        .await;
                }
                None => kick(&cluster, &from, conn).await,
            },
            Cmd::Join {
                player,
                side,
                seed,
                asked,
                ..
            } => {
                let done = answer;
                tokio::spawn(async move {
                    let r = room.send_join(player.into(), side, seed, asked).await;
                    done.send(side_reply(r)).await;
                });
            }
            Cmd::AddBot { level, side, .. } => {
                let done = answer;
                tokio::spawn(async move {
                    let r = match bot::Level::from_number(level) {
                        Some(level) => room.add_bot(side, level).await,
                        None => Err(ErrorBody {
                            code: ErrorCode::BadRequest,
                            message: "a bot's level is 1, 2 or 3".into(),
                        }),
                    };
                    done.send(side_reply(r)).await;
                });
            }
            Cmd::Arbiter { by, action, reason, .. } => {
                let done = answer;
                tokio::spawn(async move {
                    let r = room.arbiter(by.into(), action, reason).await;
                    done.send(match r {
                        Ok(s) => Reply::Snapshot { game: Box::new(s) },
                        Err(error) => Reply::Error { error },
                    })
                    .await;
                });
            }
            Cmd::View { seat, .. } => {
                let done = answer;
                tokio::spawn(async move {
                    let r = room.view(super::Viewer::of(seat)).await;
                    done.send(match r {
                        Ok(s) => Reply::Snapshot { game: Box::new(s) },
                        Err(_) => Reply::NotHere,
                    })
                    .await;
                });
            }
        }
    }
}

/// Where a request's answer goes.
struct Answer {
    nats: async_nats::Client,
    to: Option<async_nats::Subject>,
}

impl Answer {
    async fn send(self, reply: Reply) {
        if let (Some(to), Ok(body)) = (self.to, serde_json::to_vec(&reply)) {
            let _ = self.nats.publish(to, Bytes::from(body)).await;
        }
    }
}

fn side_reply(r: Result<protocol::Side, ErrorBody>) -> Reply {
    match r {
        Ok(side) => Reply::Side { side },
        Err(error) => Reply::Error { error },
    }
}

/// Tells a relaying node to close one of its connections (its client reconnects).
async fn kick(cluster: &Cluster, node: &str, conn: u64) {
    let _ = cluster
        .nats
        .publish(out_subject(node), Bytes::from(format!("{conn} 0 kick\n")))
        .await;
}

/// Publishes what a room queues for a relayed connection, numbered, until
/// the room lets the connection go (then a last `kick`).
async fn pump(inbox: super::Inbox, nats: async_nats::Client, subject: String, conn: u64) {
    let mut seq = 0u64;
    loop {
        match inbox.recv().await {
            Received::Message(m) => {
                seq += 1;
                let head = format!("{conn} {seq}\n");
                let mut buf = BytesMut::with_capacity(head.len() + m.len());
                buf.put_slice(head.as_bytes());
                buf.put_slice(m.as_bytes());
                if nats.publish(subject.clone(), buf.freeze()).await.is_err() {
                    return;
                }
            }
            // Only a queue attached to a socket is flushed.
            Received::Flush => {}
            Received::Kicked => {
                seq += 1;
                let _ = nats.publish(subject, Bytes::from(format!("{conn} {seq} kick\n"))).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(conn: u64, seq: u64, text: &str) -> Bytes {
        Bytes::from(format!("{conn} {seq}\n{text}"))
    }

    #[test]
    fn relayed_messages_arrive_in_order_and_a_gap_closes_the_connection() {
        let d = Deliveries::default();
        let (outbox, inbox) = outbox(8);
        d.insert(7, outbox.clone());
        d.deliver(msg(7, 1, "{\"a\":1}"));
        d.deliver(msg(7, 2, "{\"a\":2}"));
        // Another connection's message, or one for nobody: ignored.
        d.deliver(msg(8, 1, "x"));
        assert_eq!(inbox.try_recv().as_deref(), Some("{\"a\":1}"));
        assert_eq!(inbox.try_recv().as_deref(), Some("{\"a\":2}"));
        assert!(!outbox.is_kicked());
        // Message 3 went missing: 4 closes the connection (its client reconnects and catches up).
        d.deliver(msg(7, 4, "{\"a\":4}"));
        assert!(outbox.is_kicked());
        assert_eq!(inbox.try_recv(), None);
        // And it is forgotten: nothing more reaches it.
        d.deliver(msg(7, 5, "late"));
        assert_eq!(inbox.try_recv(), None);
    }

    #[test]
    fn a_kick_from_the_owner_closes_the_connection() {
        let d = Deliveries::default();
        let (outbox, _inbox) = outbox(8);
        d.insert(3, outbox.clone());
        d.deliver(Bytes::from("3 1 kick\n"));
        assert!(outbox.is_kicked());
    }

    #[test]
    fn a_malformed_delivery_changes_nothing() {
        let d = Deliveries::default();
        let (outbox, inbox) = outbox(8);
        d.insert(1, outbox.clone());
        for bad in ["", "1", "x 1\nhi", "1 y\nhi", "1 1 hi"] {
            d.deliver(Bytes::from(bad));
        }
        assert!(!outbox.is_kicked());
        assert_eq!(inbox.try_recv(), None);
        d.deliver(msg(1, 1, "ok"));
        assert_eq!(inbox.try_recv().as_deref(), Some("ok"));
    }
}
