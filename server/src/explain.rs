//! `POST /api/games/{id}/explain`: why the engine refuses a move, so that a
//! client can tell a newcomer in the game's own words (translated from the
//! refusal's code) instead of silently dropping the attempt.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use protocol::{ErrorCode, ExplainMove, Explanation, Phase, Refusal};

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Game, find_game};

/// The route, merged into the server's router.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/games/{id}/explain", post(explain))
}

async fn explain(
    State(s): State<AppState>,
    Path(id): Path<String>,
    ApiJson(ExplainMove { mv }): ApiJson<ExplainMove>,
) -> Result<Json<Explanation>, ApiError> {
    let m = engine::parse_move(&mv).map_err(|e| ApiError::new(ErrorCode::BadMove, format!("move {mv:?}: {e}")))?;
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
    Ok(Json(explanation(&snap, mv, m)))
}

/// The explanation of `m` in the snapshot's position.
fn explanation(snap: &protocol::Snapshot, mv: String, m: engine::Move) -> Explanation {
    let text = m.to_string();
    if snap.status.legal_moves.contains(&text) {
        return Explanation {
            mv,
            legal: true,
            refusal: None,
        };
    }
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
        match engine::parse_position(&snap.status.position) {
            Ok(pos) => Refusal::from(&engine::explain::explain(&pos, m)),
            Err(_) => Refusal {
                code: "other".to_owned(),
                params: Default::default(),
                message: "the move is not legal here".to_owned(),
            },
        }
    };
    Explanation {
        mv,
        legal: false,
        refusal: Some(refusal),
    }
}
