//! Work that anyone may ask of the server in bulk runs at the lowest CPU
//! priority there is, Linux's `SCHED_IDLE`: password hashing (argon2, tens
//! of milliseconds of CPU for an anonymous `POST /api/login`) and bot
//! searches. The async runtime's workers, which carry every person's moves,
//! keep the default policy, so on a busy core a move is handled at once — a
//! thread of the default policy that wakes up preempts an idle-policy thread
//! at once, where a nice-19 thread could keep the core for the rest of its
//! slice — and a hash or a search takes what is left. On an idle core they
//! run at full speed, as before; on a core saturated by people's traffic
//! they crawl: a login waits longer (the hashing line is bounded, beyond it
//! 429), a bot's search stops at its clock's deadline with the best move
//! found so far.
//!
//! Linux applies a scheduling policy per thread; a thread may always lower
//! its own but, without `CAP_SYS_NICE`, not always raise it again. Hence a
//! thread is lowered only when it does nothing else for the rest of its life
//! (a hashing thread, a search's own thread), never a thread of a shared
//! pool. Elsewhere than on Linux nothing changes.

/// Moves the calling thread to `SCHED_IDLE` for the rest of its life (a
/// failure is logged and changes nothing else).
pub fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy};
        if let Err(e) = thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        ) {
            tracing::debug!(error = %e, "a background thread's priority was not lowered");
        }
    }
}

/// Whether the calling thread runs at the lowest priority (always `false`
/// elsewhere than on Linux).
pub fn this_thread_lowered() -> bool {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{NormalThreadSchedulePolicy, ThreadSchedulePolicy};
        thread_priority::thread_schedule_policy()
            .is_ok_and(|p| p == ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_thread_is_lowered_and_no_other() {
        let lowered = std::thread::spawn(|| {
            lower_this_thread();
            this_thread_lowered()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, cfg!(target_os = "linux"));
        assert!(!this_thread_lowered(), "the caller's thread keeps its priority");
    }
}
