//! A connection's outbound queue: bounded, filled by the room (and by the
//! connection's own replies), emptied by the connection's task onto its
//! socket. The room can kick a connection that cannot keep up.
//!
//! Not tokio's `mpsc`: a bounded channel there allocates its first block of
//! 32 slots and its cache-padded shared state up front, about 1.6 KiB for
//! every connection even when nothing is queued. Here the shared state is a
//! mutex around a `VecDeque` that grows with what is queued and shrinks back
//! once a burst is written, about 100 bytes for an idle connection. The mutex
//! is a std one: it is held only to push or pop, never across an await.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::ws::Utf8Bytes;
use futures_util::task::AtomicWaker;

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
    /// The connection's task is gone: nothing will be read any more.
    closed: bool,
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
        if state.kicked || state.closed || state.queue.len() >= self.shared.capacity {
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
        let msg = super::mailbox::pop_front_shrunk(&mut state.queue, KEEP_CAPACITY)?;
        Some(Received::Message(msg))
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
