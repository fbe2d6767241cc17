//! `POST /api/games/{id}/explain`: why the game's variant refuses a move, so that a
//! client can tell a newcomer in the game's own words (translated from the
//! refusal's code) instead of silently dropping the attempt.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use protocol::{ErrorCode, ExplainMove, Explanation, Phase, Refusal};

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Game, find_game};
use crate::room::games;

/// The route, merged into the server's router.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/games/{id}/explain", post(explain))
}

async fn explain(
    State(s): State<AppState>,
    Path(id): Path<String>,
    ApiJson(ExplainMove { mv }): ApiJson<ExplainMove>,
) -> Result<Json<Explanation>, ApiError> {
    if id.len() > 64 {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game"));
    }
    // A finished game is read from the store, never made a room again.
    let snap = match find_game(&s, &id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?
    {
        Game::Room(room) => room.snapshot().await?,
        Game::Finished(snap) => (*snap).clone(),
    };
    Ok(Json(explanation(&snap, mv)?))
}

/// The explanation of `mv` in the snapshot's (public) state, by its variant.
fn explanation(snap: &protocol::Snapshot, mv: String) -> Result<Explanation, ApiError> {
    let Some(refusal) = games::explain(snap.settings.variant, &snap.status, &mv)? else {
        return Ok(Explanation {
            mv,
            legal: true,
            refusal: None,
        });
    };
    let refusal = if snap.phase != Phase::Live || snap.status.paused {
        // No move is legal while the game is not played (open, over, paused).
        Refusal {
            code: match snap.phase {
                Phase::Open => "not_started",
                Phase::Finished => "game_over",
                Phase::Live => "paused",
            }
            .to_owned(),
            params: Default::default(),
            message: "no move can be played now".to_owned(),
        }
    } else {
        refusal
    };
    Ok(Explanation {
        mv,
        legal: false,
        refusal: Some(refusal),
    })
}
