//! `POST /api/games/{id}/explain`: why the game's variant refuses a move, so that a
//! client can tell a newcomer in the game's own words (translated from the
//! refusal's code) instead of silently dropping the attempt.

use axum::Json;
use axum::extract::{Path, State};
use protocol::{ErrorBody, ErrorCode, ExplainMove, Explanation, Phase, Refusal};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Game, find_game};
use crate::room::games;

/// The route, merged into the server's router.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(explain))
}

#[utoipa::path(
    post,
    path = "/api/games/{id}/explain",
    params(("id" = String, Path, description = "its id")),
    request_body = ExplainMove,
    responses(
        (status = 200, description = "whether the move is legal now, and if not why", body = Explanation),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
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
