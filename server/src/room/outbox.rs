//! A connection's outbound queue: bounded, filled by the room (and by the
//! connection's own replies), emptied by the connection's task onto its
//! socket. The room can kick a connection that cannot keep up.
//!
//! Not tokio's `mpsc`: a bounded channel there allocates its first block of
//! 32 slots and its cache-padded shared state up front, about 1.6 KiB for
//! every connection even when nothing is queued. Here the shared state is a
//! mutex around a `VecDeque` that grows with what is queued and shrinks back
//! once a burst is written, about 100 bytes for an idle connection. The mutex
//! is a std one: it is held only to push or pop, or for one send that does
//! not wait (below), never across an await.
//!
//! A game socket's queue is usually empty: once given the socket's
//! [`WireHandle`] ([`Inbox::attach`]), it writes each message straight onto
//! the socket, and only what the kernel does not take at once waits (in the
//! wire, [`crate::wire`]) for the connection's task to flush it. The task
//! is woken for that alone, not for every message.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::ws::Utf8Bytes;
use futures_util::task::AtomicWaker;

use crate::wire::{Sent, WireHandle};

/// A drained queue keeps at most this capacity (messages); more is given back.
const KEEP_CAPACITY: usize = 8;

/// The sending side of a connection's queue, held by the room and by the
/// connection itself. Cloning it is cheap.
#[derive(Debug, Clone)]
pub struct Outbox {
    shared: Arc<Shared>,
}

/// The receiving side of a connection's queue, held by the connection's task.
#[derive(Debug)]
pub struct Inbox {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// The most messages queued at once.
    capacity: usize,
    /// The connection's task, woken by a message or a kick.
    waker: AtomicWaker,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Utf8Bytes>,
    /// The room asked the connection to close.
    kicked: bool,
    /// The connection's task is gone, or closing: nothing more is taken.
    closed: bool,
    /// The socket, written to directly (no message is queued then).
    wire: Option<WireHandle>,
    /// What was written to the wire waits, in part, for a flush.
    flush: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the connection's task takes from its queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// The next message to write.
    Message(Utf8Bytes),
    /// What was written to the socket waits for the socket to take it:
    /// flush it (a queue given its socket with [`Inbox::attach`] only).
    Flush,
    /// The room asked the connection to close; what was still queued is
    /// dropped (the client reconnects with its last version and catches up).
    Kicked,
}

/// A queue holding at most `capacity` messages (at least one).
pub fn outbox(capacity: usize) -> (Outbox, Inbox) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        capacity: capacity.max(1),
        waker: AtomicWaker::new(),
    });
    (
        Outbox {
            shared: Arc::clone(&shared),
        },
        Inbox { shared },
    )
}

impl Outbox {
    /// Queues a message; false if the queue is full, the connection was
    /// kicked or its task is gone.
    pub fn send(&self, msg: Utf8Bytes) -> bool {
        let mut state = self.shared.lock();
        if state.kicked || state.closed {
            return false;
        }
        if let Some(wire) = &state.wire {
            // Written under the queue's lock: once the connection closes its
            // queue, nothing more reaches the socket after its Close frame.
            return match wire.write_text(msg.into(), self.shared.capacity) {
                Sent::Written => true,
                Sent::Pending => {
                    let first = !state.flush;
                    state.flush = true;
                    drop(state);
                    if first {
                        self.shared.waker.wake();
                    }
                    true
                }
                Sent::Full => false,
            };
        }
        if state.queue.len() >= self.shared.capacity {
            return false;
        }
        state.queue.push_back(msg);
        drop(state);
        self.shared.waker.wake();
        true
    }

    /// The most messages the queue holds at once.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Asks the connection to close (it is too slow, was removed, or its
    /// room is stopping). Sends fail from now on.
    pub fn kick(&self) {
        self.shared.lock().kicked = true;
        self.shared.waker.wake();
    }

    /// Whether the connection was kicked.
    pub fn is_kicked(&self) -> bool {
        self.shared.lock().kicked
    }
}

impl Inbox {
    /// The next message, or [`Received::Kicked`] as soon as the room kicked.
    pub async fn recv(&self) -> Received {
        super::mailbox::take_or_wait(&self.shared.waker, || self.take()).await
    }

    /// Resolves once the room has kicked the connection (messages stay queued).
    pub async fn kicked(&self) {
        super::mailbox::take_or_wait(&self.shared.waker, || self.shared.lock().kicked.then_some(())).await;
    }

    /// The next queued message, if any, without waiting (kicked or not).
    pub fn try_recv(&self) -> Option<Utf8Bytes> {
        let mut state = self.shared.lock();
        super::mailbox::pop_front_shrunk(&mut state.queue, KEEP_CAPACITY)
    }

    fn take(&self) -> Option<Received> {
        let mut state = self.shared.lock();
        if state.kicked {
            return Some(Received::Kicked);
        }
        if let Some(msg) = super::mailbox::pop_front_shrunk(&mut state.queue, KEEP_CAPACITY) {
            return Some(Received::Message(msg));
        }
        std::mem::take(&mut state.flush).then_some(Received::Flush)
    }

    /// From now on, messages are written straight to `wire`, the
    /// connection's socket, beginning with what is queued; only what the
    /// socket does not take at once waits (then [`Received::Flush`]).
    pub fn attach(&self, wire: WireHandle) {
        let mut state = self.shared.lock();
        while let Some(msg) = state.queue.pop_front() {
            // The queue held at most `capacity`: all of it fits.
            if wire.write_text(msg.into(), self.shared.capacity) == Sent::Pending {
                state.flush = true;
            }
        }
        state.queue = VecDeque::new();
        state.wire = Some(wire);
    }

    /// Takes nothing more (the connection is closing). Unless `keep`, what
    /// still waits to be written is dropped, but for the rest of a frame
    /// begun (a connection kicked for being slow gets no backlog).
    pub fn close(&self, keep: bool) {
        let mut state = self.shared.lock();
        state.closed = true;
        if !keep {
            state.queue.clear();
            if let Some(wire) = &state.wire {
                wire.discard();
            }
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.closed = true;
        state.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &'static str) -> Utf8Bytes {
        Utf8Bytes::from_static(s)
    }

    #[tokio::test]
    async fn messages_come_in_order_up_to_the_capacity() {
        let (tx, rx) = outbox(2);
        assert!(tx.send(text("a")));
        assert!(tx.clone().send(text("b")));
        assert!(!tx.send(text("c")), "a full queue refuses");
        assert_eq!(rx.recv().await, Received::Message(text("a")));
        assert!(tx.send(text("c")));
        assert_eq!(rx.try_recv(), Some(text("b")));
        assert_eq!(rx.recv().await, Received::Message(text("c")));
        assert_eq!(rx.try_recv(), None);
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_a_message_and_for_a_kick() {
        let (tx, rx) = outbox(4);
        let sender = tx.clone();
        let task = tokio::spawn(async move {
            tokio::task::yield_now().await;
            sender.send(text("late"));
        });
        assert_eq!(rx.recv().await, Received::Message(text("late")));
        task.await.unwrap();

        assert!(tx.send(text("queued")));
        let kicker = tx.clone();
        let task = tokio::spawn(async move {
            tokio::task::yield_now().await;
            kicker.kick();
        });
        rx.kicked().await;
        task.await.unwrap();
        assert!(tx.is_kicked());
        assert_eq!(rx.recv().await, Received::Kicked, "a kick comes before what is queued");
        assert!(!tx.send(text("more")), "a kicked connection takes nothing");
        assert_eq!(rx.try_recv(), Some(text("queued")));
    }

    #[tokio::test]
    async fn attached_to_its_socket_it_writes_in_order_and_wakes_the_task_only_to_flush() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let mut wire = crate::wire::Wire::new(listener.accept().await.unwrap().0);
        let (tx, rx) = outbox(4);
        assert!(tx.send(text("queued")), "before the socket is attached, messages queue");
        rx.attach(wire.handle());
        assert!(tx.send(text("direct")));
        assert_eq!(rx.take(), None, "nothing queued, nothing to flush");
        let mut got = [0u8; 16];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"\x81\x06queued\x81\x06direct");

        // A client that stops reading: the socket's buffers fill, then the
        // task is asked to flush, and past the capacity the room is refused.
        let big = Utf8Bytes::from(String::from_utf8(vec![b'z'; 60_000]).unwrap());
        let mut sent = 0;
        while rx.take().is_none() {
            assert!(tx.send(big.clone()));
            sent += 1;
            assert!(sent < 10_000, "the socket took everything");
        }
        while tx.send(big.clone()) {
            sent += 1;
        }
        assert_eq!(
            rx.take(),
            Some(Received::Flush),
            "asked once more after the first flush"
        );
        // What was accepted arrives whole and in order once the client reads.
        let reader = tokio::spawn(async move {
            let mut frame = vec![0u8; 4 + 60_000];
            for _ in 0..sent {
                client.read_exact(&mut frame).await.unwrap();
                assert_eq!(&frame[..4], &[0x81, 126, 0xea, 0x60]);
                assert!(frame[4..].iter().all(|&b| b == b'z'));
            }
            client
        });
        wire.flush().await.unwrap();
        let mut client = reader.await.unwrap();
        assert!(tx.send(text("after")));
        let mut got = [0u8; 7];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"\x81\x05after");

        rx.close(false);
        assert!(!tx.send(text("closed")), "a closing connection takes nothing more");
    }

    #[test]
    fn nothing_is_queued_once_the_connection_is_gone_and_bursts_give_memory_back() {
        let (tx, rx) = outbox(64);
        for _ in 0..64 {
            assert!(tx.send(text("x")));
        }
        while rx.try_recv().is_some() {}
        assert!(tx.shared.lock().queue.capacity() <= KEEP_CAPACITY);
        drop(rx);
        assert!(!tx.send(text("y")));
    }
}
