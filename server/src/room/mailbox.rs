//! A room's mailbox: bounded, many senders (connections, HTTP handlers, a
//! cluster's deliveries), one receiver (the room's task).
//!
//! Not tokio's `mpsc`: its bounded channel allocates a block of 32 slots and
//! its cache-padded shared state up front (about 2.3 KiB for every room,
//! idle or not), and each message goes through its semaphore and its block
//! list, several cache lines apart, cold in a room that last heard from its
//! players a tenth of a second ago. Here the shared state is a mutex around a
//! `VecDeque` that grows with what is queued and shrinks back once the room
//! has read a burst ([`outbox`](super::outbox) is built the same way for the
//! other direction). The mutex is a std one: it is held only to push or pop,
//! never across an await. Senders that find the mailbox full wait for room
//! ([`Sender::send`]) or are told so ([`Sender::try_send`]).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use futures_util::task::AtomicWaker;
use tokio::sync::Notify;

/// A drained mailbox keeps at most this capacity (messages); more is given back.
const KEEP_CAPACITY: usize = 4;

/// The sending side; cloning it adds a sender.
#[derive(Debug)]
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving side, held by the room's task. Dropped, it closes the
/// mailbox: what was queued is dropped and every send fails from then on.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    /// The most messages queued at once.
    capacity: usize,
    /// The receiver, woken by a message or by the last sender leaving.
    waker: AtomicWaker,
    /// Senders waiting for room, woken when the receiver takes a message
    /// from a full mailbox, and when it is gone.
    room: Notify,
}

#[derive(Debug)]
struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    /// The receiver is gone.
    closed: bool,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why [`Sender::try_send`] did not queue a message (given back).
#[derive(Debug, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// The mailbox holds as many messages as it may.
    Full(T),
    /// The receiver is gone.
    Closed(T),
}

/// A mailbox holding at most `capacity` messages (at least one).
pub fn mailbox<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            closed: false,
        }),
        capacity: capacity.max(1),
        waker: AtomicWaker::new(),
        room: Notify::new(),
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let last = {
            let mut state = self.shared.lock();
            state.senders -= 1;
            state.senders == 0
        };
        if last {
            self.shared.waker.wake();
        }
    }
}

impl<T> Sender<T> {
    /// Queues `msg` if there is room and the receiver is there.
    pub fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(TrySendError::Closed(msg));
        }
        if state.queue.len() >= self.shared.capacity {
            return Err(TrySendError::Full(msg));
        }
        state.queue.push_back(msg);
        drop(state);
        self.shared.waker.wake();
        Ok(())
    }

    /// Queues `msg`, waiting for room; gives it back if the receiver is (or
    /// goes) away.
    pub async fn send(&self, mut msg: T) -> Result<(), T> {
        loop {
            // Registered before the look, so that room made between the two
            // is not missed.
            let room = self.shared.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            match self.try_send(msg) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Closed(m)) => return Err(m),
                Err(TrySendError::Full(m)) => msg = m,
            }
            room.await;
        }
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }
}

impl<T> Receiver<T> {
    /// The next message; `None` once it is empty and every sender is gone.
    /// Cancel-safe: a message is taken only when it is returned.
    pub async fn recv(&mut self) -> Option<T> {
        take_or_wait(&self.shared.waker, || self.take()).await
    }

    /// `Some(Some(msg))`: a message; `Some(None)`: empty with no sender
    /// left; `None`: empty, wait.
    fn take(&self) -> Option<Option<T>> {
        let mut state = self.shared.lock();
        let was_full = state.queue.len() >= self.shared.capacity;
        match pop_front_shrunk(&mut state.queue, KEEP_CAPACITY) {
            Some(msg) => {
                drop(state);
                // Senders wait only on a full mailbox, registered before
                // they found it full: the first message taken from it wakes
                // them all (one takes the slot, the others wait again).
                if was_full {
                    self.shared.room.notify_waiters();
                }
                Some(Some(msg))
            }
            None if state.senders == 0 => Some(None),
            None => None,
        }
    }
}

/// What `take` finds, once it finds something: a look, then the waker
/// registered and a second look (so that what arrives between the first look
/// and the registration is not missed), then waiting for a wake-up. The
/// receiving end of this mailbox and of a connection's
/// [`outbox`](super::outbox) alike; cancel-safe as long as `take` is.
pub(super) async fn take_or_wait<R>(waker: &AtomicWaker, take: impl Fn() -> Option<R>) -> R {
    poll_fn(|cx| {
        if let Some(r) = take() {
            return Poll::Ready(r);
        }
        waker.register(cx.waker());
        match take() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    })
    .await
}

/// The first of `queue`, the memory of a burst given back once it is
/// drained (at most `keep` slots kept): this mailbox's and a connection's
/// [`outbox`](super::outbox) alike.
pub(super) fn pop_front_shrunk<T>(queue: &mut VecDeque<T>, keep: usize) -> Option<T> {
    let first = queue.pop_front();
    if queue.is_empty() && queue.capacity() > keep {
        queue.shrink_to(keep);
    }
    first
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let queued = {
            let mut state = self.shared.lock();
            state.closed = true;
            std::mem::take(&mut state.queue)
        };
        // Dropped outside the lock (a message may hold a reply channel).
        drop(queued);
        self.shared.room.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn messages_arrive_in_order_and_a_full_mailbox_refuses_or_waits() {
        let (tx, mut rx) = mailbox::<u32>(2);
        tx.try_send(1).expect("room");
        tx.send(2).await.expect("room");
        assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
        // A waiting sender goes on once the receiver takes a message.
        let waiting = tokio::spawn({
            let tx = tx.clone();
            async move { tx.send(3).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "waits for room");
        assert_eq!(rx.recv().await, Some(1));
        waiting.await.expect("task").expect("queued once there was room");
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(rx.recv().await, Some(3));
        // The receiver wakes for a message sent while it waits.
        let later = tokio::spawn({
            let tx = tx.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                tx.try_send(4)
            }
        });
        assert_eq!(rx.recv().await, Some(4));
        later.await.expect("task").expect("sent");
    }

    #[tokio::test]
    async fn the_receiver_sees_none_when_the_senders_are_gone() {
        let (tx, mut rx) = mailbox::<u32>(4);
        let other = tx.clone();
        tx.try_send(7).expect("room");
        drop(tx);
        let waiting = tokio::spawn(async move { (rx.recv().await, rx.recv().await) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "one sender is left");
        drop(other);
        assert_eq!(waiting.await.expect("task"), (Some(7), None));
    }

    #[tokio::test]
    async fn a_closed_mailbox_refuses_and_frees_waiting_senders() {
        let (tx, rx) = mailbox::<Arc<()>>(1);
        let held = Arc::new(());
        tx.try_send(Arc::clone(&held)).expect("room");
        let waiting = tokio::spawn({
            let tx = tx.clone();
            let held = Arc::clone(&held);
            async move { tx.send(held).await.is_err() }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
        assert!(waiting.await.expect("task"), "the waiting send fails");
        assert_eq!(Arc::strong_count(&held), 1, "what was queued is dropped");
        assert!(matches!(tx.try_send(Arc::new(())), Err(TrySendError::Closed(_))));
        assert!(tx.send(Arc::new(())).await.is_err());
    }
}
