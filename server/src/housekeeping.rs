//! Bounded growth: what would only grow is trimmed on a timer. Every
//! `--sweep-secs` the store loses its expired sessions and its abandoned
//! guests (no session, no game, nothing else that names them, older than
//! `--guest-max-age-secs`); every minute the in-memory maps keyed by address
//! or player forget what no longer binds (rate limits whose allowance is
//! whole again, the flood penalty box's served waits, finished games counted
//! against an address).

use std::time::Duration;

use crate::AppState;
use crate::store::{Store, StoreError, wall_ms};

/// What one sweep of the store removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Sessions past their time to live.
    pub sessions: u64,
    /// Guests nobody can use or see any more.
    pub guests: u64,
}

/// The tables whose rows name a player (`players.id`): a guest named in any
/// of them is kept.
const PLAYER_REFERENCES: &[(&str, &str)] = &[
    ("sessions", "player_id"),
    ("games", "created_by"),
    ("seats", "player_id"),
    ("chat", "player_id"),
    ("tournaments", "organizer"),
    ("tournament_players", "player_id"),
    ("tournament_byes", "player_id"),
    ("arbiter_actions", "by_player"),
    ("tournament_log", "by_player"),
    ("ratings", "player_id"),
    ("rating_changes", "player_id"),
];

impl Store {
    /// Deletes the sessions issued more than `ttl` ago (refused already:
    /// `unauthorized`).
    pub async fn delete_expired_sessions(&self, ttl: Duration) -> Result<u64, StoreError> {
        let cutoff = wall_ms().saturating_sub(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let done = sqlx::query("DELETE FROM sessions WHERE created_ms < $1")
            .bind(cutoff)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Deletes the guests (no username, no bot) created more than `age` ago
    /// that no row names: no session (they cannot come back), no game made
    /// or played, no chat line, no tournament, no rating.
    pub async fn delete_abandoned_guests(&self, age: Duration) -> Result<u64, StoreError> {
        let cutoff = wall_ms().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        let unnamed: String = PLAYER_REFERENCES
            .iter()
            .map(|(table, column)| format!(" AND NOT EXISTS (SELECT 1 FROM {table} r WHERE r.{column} = players.id)"))
            .collect();
        let done = sqlx::query(&format!(
            "DELETE FROM players WHERE username IS NULL AND bot_level IS NULL AND created_ms < $1{unnamed}"
        ))
        .bind(cutoff)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }
}

/// One sweep of the store.
pub async fn sweep(s: &AppState) -> Result<Swept, StoreError> {
    let sessions = s.store.delete_expired_sessions(s.config.session_ttl).await?;
    let guests = s.store.delete_abandoned_guests(s.config.guest_max_age).await?;
    if sessions + guests > 0 {
        tracing::info!(sessions, guests, "swept the store");
    }
    Ok(Swept { sessions, guests })
}

/// Runs the sweeps until shutdown: the store every `sweep_interval`, the
/// in-memory maps every `forget_interval`.
pub fn spawn(s: &AppState, forget_interval: Duration) {
    let state = s.clone();
    s.tracker.spawn(async move {
        let mut store_every = tokio::time::interval(state.config.sweep_interval);
        let mut forget_every = tokio::time::interval(forget_interval);
        loop {
            tokio::select! {
                _ = store_every.tick() => {
                    if let Err(e) = sweep(&state).await {
                        tracing::warn!(error = %e, "store sweep failed");
                    }
                }
                _ = forget_every.tick() => forget(&state).await,
                () = state.shutdown.cancelled() => break,
            }
        }
    });
}

/// Forgets what the in-memory maps keyed by address or player no longer need.
pub async fn forget(s: &AppState) {
    s.limits.forget_idle();
    s.penalties.forget_served(std::time::Instant::now());
    s.cutoff.forget_idle(std::time::Instant::now());
    if let Err(e) = s.limits.bot_games.forget_finished(&s.store).await {
        tracing::warn!(error = %e.0.message, "bot game counts not swept");
    }
}
