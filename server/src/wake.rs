//! Waking a task for the one source that woke it (crate::ws's connections,
//! crate::room's rooms).

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use futures_util::task::{ArcWake, AtomicWaker};

/// A task's sources other than the one that wakes it most, waiting with a
/// waker of their own, which marks that one of them woke the task.
///
/// Most wake-ups of a game connection are a message in its queue (the moves
/// of its game, three copies a move); of a room, a message in its mailbox.
/// Those no longer poll the other sources again (the connection's socket,
/// the shutdown token and the heartbeat; the room's shutdown token, lease and
/// store health), each of which would only have registered the same waker
/// anew, some of them (a token's, a watch's) under a lock shared with every
/// other task waiting on it.
#[derive(Debug)]
pub struct Others {
    flag: Arc<OthersFlag>,
    waker: Waker,
}

#[derive(Debug)]
struct OthersFlag {
    /// One of the sources woke (or has not been looked at since it was ready).
    woke: AtomicBool,
    /// The task.
    task: AtomicWaker,
}

impl ArcWake for OthersFlag {
    fn wake_by_ref(flag: &Arc<Self>) {
        flag.woke.store(true, Ordering::Release);
        flag.task.wake();
    }
}

impl Others {
    pub fn new() -> Others {
        let flag = Arc::new(OthersFlag {
            // Nothing is registered yet: the first turn looks.
            woke: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        Others {
            waker: futures_util::task::waker(Arc::clone(&flag)),
            flag,
        }
    }

    /// The next turn polls the sources whether or not they woke (they were
    /// polled with another waker meanwhile).
    pub fn look_again(&self) {
        self.flag.woke.store(true, Ordering::Release);
    }

    /// Polls the sources, with their own waker, only when one of them woke
    /// since they were last polled. Once one is ready the next turn looks
    /// at all of them again (a read may leave more frames buffered).
    pub fn poll<'a, T>(
        &'a self,
        mut sources: impl FnMut(&mut Context<'_>) -> Poll<T> + 'a,
    ) -> impl Future<Output = T> + 'a {
        poll_fn(move |cx| {
            // Registered before the flag is read: a wake-up in between wakes the task again.
            self.flag.task.register(cx.waker());
            if !self.flag.woke.swap(false, Ordering::AcqRel) {
                return Poll::Pending;
            }
            let ready = sources(&mut Context::from_waker(&self.waker));
            if ready.is_ready() {
                self.look_again();
            }
            ready
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::pin::pin;

    use super::*;

    #[test]
    fn a_tasks_other_sources_are_polled_only_after_one_of_them_woke() {
        let others = Others::new();
        let polls = Cell::new(0);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let mut cx = Context::from_waker(Waker::noop());
        let mut source = |cx: &mut Context<'_>| {
            polls.set(polls.get() + 1);
            rx.poll_recv(cx)
        };
        {
            let mut turn = pin!(others.poll(&mut source));
            assert!(turn.as_mut().poll(&mut cx).is_pending());
            assert_eq!(polls.get(), 1, "the first turn looks");
            assert!(turn.as_mut().poll(&mut cx).is_pending());
            assert_eq!(
                polls.get(),
                1,
                "a wake-up by something else (the queue) does not poll the sources"
            );
            tx.send(7).unwrap();
            assert_eq!(turn.as_mut().poll(&mut cx), Poll::Ready(Some(7)));
            assert_eq!(polls.get(), 2, "the source woke: it is polled");
        }
        {
            let mut turn = pin!(others.poll(&mut source));
            assert!(turn.as_mut().poll(&mut cx).is_pending());
            assert_eq!(polls.get(), 3, "after a ready source the next turn looks again");
            assert!(turn.as_mut().poll(&mut cx).is_pending());
            assert_eq!(polls.get(), 3);
            others.look_again();
            assert!(turn.as_mut().poll(&mut cx).is_pending());
            assert_eq!(polls.get(), 4, "polled with another waker meanwhile: looked at again");
        }
    }
}
