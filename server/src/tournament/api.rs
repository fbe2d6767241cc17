//! The tournament routes (protocol/README.md, "Tournaments").

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use protocol::tournament::{
    ArbiterAction, ArbiterEntry, ArbiterOutcome, ArbiterRequest, Board, CreateTournament, EditTournament,
    OrganizerEntry, OrganizerReason, PairingSystem, Register, RegistrationWindow, Round, Standings, Tournament,
    Withdraw,
};
use protocol::{ErrorBody, ErrorCode, GameRecord, Variant};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Loaded, not_found, pair_next_round, repair_table, settings_of, standings_csv, state_error};
use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Authed, MaybeAuthed, random_hex};
use crate::store::{StoreError, wall_ms};

/// The tournament routes, merged into the server's router.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(register))
        .routes(routes!(view, edit, delete))
        .routes(routes!(finish))
        .routes(routes!(registration))
        .routes(routes!(organizer_log))
        .routes(routes!(check_in))
        .routes(routes!(withdraw))
        .routes(routes!(reinstate))
        .routes(routes!(pair, rounds))
        .routes(routes!(round))
        .routes(routes!(standings))
        .routes(routes!(standings_csv_route))
        .routes(routes!(records))
        .routes(routes!(log))
        .routes(routes!(arbiter))
        .routes(routes!(boards))
}

/// A registration code: 8 characters of a 32-letter alphabet.
fn code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    (0..8)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[utoipa::path(
    post,
    path = "/api/tournaments",
    request_body = CreateTournament,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "the new tournament (with its registration code: the organizer's view)", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<AppState>,
    Authed(p): Authed,
    ApiJson(b): ApiJson<CreateTournament>,
) -> Result<impl IntoResponse, ApiError> {
    if !p.account {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "organizers need an account (POST /api/accounts), not a guest session",
        ));
    }
    let settings = settings_of(
        b,
        s.config.grace.as_millis() as u64,
        &s.config.clock_minimums,
        wall_ms(),
    )?;
    let id = random_hex(6);
    s.store.create_tournament(&id, &p.id, &code(), &settings).await?;
    tracing::info!(tournament = %id, organizer = %p.id, "tournament created");
    let l = Loaded::load(&s, &id).await?;
    Ok((StatusCode::CREATED, Json(l.view(Some(&p.id)))))
}

/// `GET /api/tournaments?variant=KEY`.
#[derive(Debug, serde::Deserialize)]
struct ListQuery {
    /// Only events of this variant (all when absent).
    variant: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/tournaments",
    params(("variant" = Option<Variant>, Query, description = "only this variant (all when absent)")),
    responses(
        (status = 200, description = "the latest tournaments (50 at most)", body = Vec<Tournament>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<std::sync::Arc<serde_json::Value>>, ApiError> {
    let variant = crate::http::variant_filter(q.variant.as_deref())?;
    // Read at most once a second per filter, however many lobbies poll it.
    let slot = variant.map_or(0, |v| 1 + v as usize);
    let mut cached = s.lobby.tournaments[slot].lock().await;
    if let Some((at, list)) = cached.as_ref()
        && at.elapsed() < std::time::Duration::from_secs(1)
    {
        return Ok(Json(std::sync::Arc::clone(list)));
    }
    // Four queries for the whole list (rows, entrants, games, byes), not per tournament.
    let out: Vec<Tournament> = s
        .store
        .tournaments_loaded(variant, 50)
        .await?
        .into_iter()
        .map(|r| {
            Loaded {
                t: r.t,
                entrants: r.entrants,
                games: r.games,
                byes: r.byes,
            }
            .view(None)
        })
        .collect();
    let list = std::sync::Arc::new(serde_json::to_value(out).map_err(|e| {
        tracing::error!(error = %e, "tournament list");
        ApiError::new(ErrorCode::Internal, "internal error")
    })?);
    *cached = Some((std::time::Instant::now(), std::sync::Arc::clone(&list)));
    Ok(Json(list))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}",
    params(("id" = String, Path, description = "its id")),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "the tournament (the organizer also sees its code)", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn view(
    State(s): State<AppState>,
    Path(id): Path<String>,
    MaybeAuthed(p): MaybeAuthed,
) -> Result<Json<Tournament>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    Ok(Json(l.view(p.as_ref().map(|p| p.id.as_str()))))
}

/// An organizer's reason: 1 to 500 characters.
fn check_reason(reason: &str) -> Result<(), ApiError> {
    let n = reason.trim().chars().count();
    if n == 0 || n > crate::room::core::MAX_REASON_CHARS {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "a reason of 1 to 500 characters is needed",
        ));
    }
    Ok(())
}

/// The tournament, if the player is its organizer.
async fn as_organizer(s: &AppState, id: &str, p: &crate::store::Player) -> Result<Loaded, ApiError> {
    let l = Loaded::load(s, id).await?;
    if l.t.organizer != p.id {
        return Err(ApiError::new(ErrorCode::Forbidden, "only the organizer may do this"));
    }
    Ok(l)
}

/// The organizer acting on the tournament as a whole, with a reason (1 to
/// 500 characters, logged): the reason is checked first, then the right.
async fn as_organizer_for(s: &AppState, id: &str, p: &crate::store::Player, reason: &str) -> Result<Loaded, ApiError> {
    check_reason(reason)?;
    as_organizer(s, id, p).await
}

/// New settings before round 1 (organizer; logged with the reason).
#[utoipa::path(
    patch,
    path = "/api/tournaments/{id}",
    params(("id" = String, Path, description = "its id")),
    request_body = EditTournament,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the tournament as edited", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn edit(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(e): ApiJson<EditTournament>,
) -> Result<Json<Tournament>, ApiError> {
    let l = as_organizer_for(&s, &id, &p, &e.reason).await?;
    if l.t.round > 0 {
        return Err(state_error("round 1 is paired: the settings are fixed"));
    }
    let settings = settings_of(
        e.settings,
        s.config.grace.as_millis() as u64,
        &s.config.clock_minimums,
        wall_ms(),
    )?;
    if settings.rated
        && let Some(guest) = l.entrants.iter().find(|e| !e.account)
    {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            format!(
                "a rated tournament takes accounts only, and {} is registered as a guest",
                guest.name
            ),
        ));
    }
    on_conflict(
        s.store.edit_tournament(&id, &settings, &p.id, e.reason.trim()).await,
        "round 1 is paired: the settings are fixed",
    )?;
    tracing::info!(tournament = %id, by = %p.id, reason = %e.reason, "tournament edited");
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

/// A store write whose conflict means the tournament moved on meanwhile
/// (another request won the race): that is a `tournament_state` refusal.
fn on_conflict(r: Result<(), StoreError>, refusal: &str) -> Result<(), ApiError> {
    match r {
        Err(StoreError::Conflict) => Err(state_error(refusal)),
        r => r.map_err(ApiError::from),
    }
}

/// Deletes a tournament before round 1 (organizer; logged with the reason).
#[utoipa::path(
    delete,
    path = "/api/tournaments/{id}",
    params(("id" = String, Path, description = "its id")),
    request_body = OrganizerReason,
    security(("bearer" = [])),
    responses(
        (status = 204, description = "deleted"),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn delete(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(r): ApiJson<OrganizerReason>,
) -> Result<StatusCode, ApiError> {
    let l = as_organizer_for(&s, &id, &p, &r.reason).await?;
    if l.t.round > 0 {
        return Err(state_error("round 1 is paired: finish the tournament instead"));
    }
    on_conflict(
        s.store.delete_tournament(&id, &p.id, r.reason.trim()).await,
        "round 1 is paired: finish the tournament instead",
    )?;
    tracing::info!(tournament = %id, by = %p.id, reason = %r.reason, "tournament deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// Ends a tournament after the round in play (organizer; logged with the
/// reason): for an event that fell below three players, or must stop early.
#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/finish",
    params(("id" = String, Path, description = "its id")),
    request_body = OrganizerReason,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the finished tournament", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn finish(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(r): ApiJson<OrganizerReason>,
) -> Result<Json<Tournament>, ApiError> {
    let l = as_organizer_for(&s, &id, &p, &r.reason).await?;
    if l.t.round == 0 {
        return Err(state_error("no round has been paired: delete the tournament instead"));
    }
    l.refuse_when_over()?;
    if !l.round_over() {
        return Err(state_error(format!(
            "round {} is not over: finish or adjudicate its games first",
            l.t.round
        )));
    }
    on_conflict(
        s.store.finish_tournament(&id, &p.id, r.reason.trim()).await,
        "the tournament is over",
    )?;
    tracing::info!(tournament = %id, by = %p.id, reason = %r.reason, "tournament finished by its organizer");
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

/// The late-entry control (organizer; logged with the reason): when
/// registration closes, at any time before the tournament is over. A round
/// robin's groups are fixed once round 1 is paired, so it cannot reopen then.
#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/registration",
    params(("id" = String, Path, description = "its id")),
    request_body = RegistrationWindow,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the tournament with its registration window", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn registration(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(r): ApiJson<RegistrationWindow>,
) -> Result<Json<Tournament>, ApiError> {
    let l = as_organizer_for(&s, &id, &p, &r.reason).await?;
    l.refuse_when_over()?;
    let now = wall_ms();
    let reopens = r.closes_ms.is_none_or(|c| c > now);
    if reopens && l.t.round > 0 && matches!(l.t.settings.pairing, PairingSystem::RoundRobin { .. }) {
        return Err(state_error(
            "a round robin takes no late entries once round 1 is paired: registration stays closed",
        ));
    }
    if let Some(c) = r.closes_ms
        && c < l.t.settings.registration_opens_ms
    {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "registration cannot close before it opens (registration_opens_ms)",
        ));
    }
    on_conflict(
        s.store
            .set_registration_closes(&id, r.closes_ms, &p.id, r.reason.trim())
            .await,
        "the tournament is over",
    )?;
    tracing::info!(tournament = %id, by = %p.id, closes_ms = ?r.closes_ms, reason = %r.reason, "registration window set");
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

/// What the organizer did to the tournament as a whole (also once deleted).
#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/organizer-log",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "what the organizer did, oldest first", body = Vec<OrganizerEntry>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn organizer_log(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<OrganizerEntry>>, ApiError> {
    if id.len() > 64 {
        return Err(not_found());
    }
    let log = s.store.organizer_log(&id).await?;
    if log.is_empty() && s.store.tournament(&id).await?.is_none() {
        return Err(not_found());
    }
    Ok(Json(log))
}

#[utoipa::path(
    post,
    path = "/api/tournaments/register",
    request_body = Register,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "the tournament registered for", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn register(
    State(s): State<AppState>,
    Authed(p): Authed,
    ApiJson(r): ApiJson<Register>,
) -> Result<impl IntoResponse, ApiError> {
    let code = r.code.trim().to_ascii_uppercase();
    if code.len() > 32 {
        return Err(ApiError::new(ErrorCode::NotFound, "no tournament has this code"));
    }
    let t = s
        .store
        .tournament_by_code(&code)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no tournament has this code"))?;
    let l = Loaded::load(&s, &t.id).await?;
    let now = wall_ms();
    if now < t.settings.registration_opens_ms {
        return Err(state_error("registration has not opened yet"));
    }
    if t.settings.registration_closes_ms.is_some_and(|c| now > c) {
        return Err(state_error("registration is closed"));
    }
    l.refuse_when_over()?;
    if t.round > 0 && matches!(t.settings.pairing, PairingSystem::RoundRobin { .. }) {
        return Err(state_error(
            "a round robin takes no late entries once round 1 is paired",
        ));
    }
    if t.settings.rated && !p.account {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated tournament takes accounts only: sign up or log in to register",
        ));
    }
    on_conflict(s.store.register(&t.id, &p.id).await, "you are registered already")?;
    tracing::info!(tournament = %t.id, player = %p.id, "registered");
    let l = Loaded::load(&s, &t.id).await?;
    Ok((StatusCode::CREATED, Json(l.view(Some(&p.id)))))
}

#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/check-in",
    params(("id" = String, Path, description = "its id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the tournament, checked in", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn check_in(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    raw: axum::body::Bytes,
) -> Result<Json<Tournament>, ApiError> {
    // `{}` (or nothing): oneself; the organizer may name a player, `{"player"}`.
    let named = if raw.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<Withdraw>(&raw)
            .map_err(|_| ApiError::new(ErrorCode::BadRequest, "the body is {} or {\"player\": ID}"))?
            .player
    };
    let l = Loaded::load(&s, &id).await?;
    let who = match named {
        Some(other) if other != p.id && p.id != l.t.organizer => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the organizer checks in another player",
            ));
        }
        Some(other) => other,
        None => p.id.clone(),
    };
    let Some(e) = l.entrants.iter().find(|e| e.player == who) else {
        return Err(ApiError::new(ErrorCode::Forbidden, "not registered in this tournament"));
    };
    if e.withdrawn_after.is_some() {
        return Err(state_error("you have withdrawn"));
    }
    l.refuse_when_over()?;
    s.store.check_in(&id, &who).await?;
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/withdraw",
    params(("id" = String, Path, description = "its id")),
    request_body = Withdraw,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the tournament after the withdrawal", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn withdraw(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(w): ApiJson<Withdraw>,
) -> Result<Json<Tournament>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    let who = match w.player {
        Some(other) if other != p.id && p.id != l.t.organizer => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the organizer withdraws another player",
            ));
        }
        Some(other) => other,
        None => p.id.clone(),
    };
    let Some(e) = l.entrants.iter().find(|e| e.player == who) else {
        return Err(ApiError::new(ErrorCode::NotFound, "no such player in this tournament"));
    };
    if e.withdrawn_after.is_some() {
        return Err(state_error("the player has withdrawn already"));
    }
    l.refuse_when_over()?;
    if l.t.round == 0 {
        // Before round 1 a withdrawal is simply taking the registration back.
        s.store.unregister(&id, &who).await?;
        tracing::info!(tournament = %id, player = %who, by = %p.id, "unregistered");
    } else {
        s.store.withdraw(&id, &who, l.t.round).await?;
        tracing::info!(tournament = %id, player = %who, by = %p.id, "withdrawn");
    }
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

/// The organizer takes back a player's withdrawal: paired again from the next round.
#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/reinstate",
    params(("id" = String, Path, description = "its id")),
    request_body = Withdraw,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the tournament after the reinstatement", body = Tournament),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn reinstate(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(w): ApiJson<Withdraw>,
) -> Result<Json<Tournament>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    if p.id != l.t.organizer {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "only the organizer reinstates a player",
        ));
    }
    let Some(who) = w.player else {
        return Err(ApiError::new(ErrorCode::BadRequest, "name the player to reinstate"));
    };
    let Some(e) = l.entrants.iter().find(|e| e.player == who) else {
        return Err(ApiError::new(ErrorCode::NotFound, "no such player in this tournament"));
    };
    if e.withdrawn_after.is_none() {
        return Err(state_error("the player has not withdrawn"));
    }
    l.refuse_when_over()?;
    s.store.reinstate(&id, &who).await?;
    tracing::info!(tournament = %id, player = %who, by = %p.id, "reinstated");
    Ok(Json(Loaded::load(&s, &id).await?.view(Some(&p.id))))
}

#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/rounds",
    params(("id" = String, Path, description = "its id")),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "the round paired", body = Round),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn pair(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
) -> Result<impl IntoResponse, ApiError> {
    Ok((StatusCode::CREATED, Json(pair_next_round(&s, &p, &id).await?)))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/rounds",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "every round paired so far", body = Vec<Round>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn rounds(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Vec<Round>>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    Ok(Json((1..=l.t.round).filter_map(|n| l.round(n)).collect()))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/rounds/{n}",
    params(("id" = String, Path, description = "its id"), ("n" = String, Path, description = "the round's number, from 1")),
    responses(
        (status = 200, description = "the round", body = Round),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn round(State(s): State<AppState>, Path((id, n)): Path<(String, String)>) -> Result<Json<Round>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    n.parse::<u32>()
        .ok()
        .and_then(|n| l.round(n))
        .map(Json)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("round {n} has not been paired")))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/standings",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "the standings", body = Standings),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn standings(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Standings>, ApiError> {
    Ok(Json(Loaded::load(&s, &id).await?.standings()))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/standings.csv",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "the standings as CSV", body = String, content_type = "text/csv"),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn standings_csv_route(State(s): State<AppState>, Path(id): Path<String>) -> Result<impl IntoResponse, ApiError> {
    let st = Loaded::load(&s, &id).await?.standings();
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"standings-{id}.csv\""),
            ),
        ],
        standings_csv(&st),
    ))
}

/// Every game's record, aborted ones included, in round and table order.
#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/games",
    params(("id" = String, Path, description = "its id")),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "every game's record, in round and table order", body = Vec<GameRecord>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn records(
    State(s): State<AppState>,
    Path(id): Path<String>,
    MaybeAuthed(viewer): MaybeAuthed,
) -> Result<Json<Vec<GameRecord>>, ApiError> {
    let l = Loaded::load(&s, &id).await?;
    let mut out = Vec::with_capacity(l.games.len());
    for g in &l.games {
        if let Some(mut r) = s.store.record(&g.game).await? {
            // The chat each viewer may read, as in `GET /api/games/{id}/record`.
            crate::http::visible_chat(&mut r, viewer.as_ref().map(|p| p.id.as_str()));
            crate::http::with_notes(&s, &mut r).await?;
            out.push(r);
        }
    }
    Ok(Json(out))
}

#[utoipa::path(
    get,
    path = "/api/tournaments/{id}/log",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "the arbiter's decisions, oldest first", body = Vec<ArbiterEntry>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn log(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Vec<ArbiterEntry>>, ApiError> {
    if s.store.tournament(&id).await?.is_none() {
        return Err(not_found());
    }
    Ok(Json(s.store.arbiter_log(&id).await?))
}

#[utoipa::path(
    post,
    path = "/api/tournaments/{id}/games/{game}/arbiter",
    params(("id" = String, Path, description = "its id"), ("game" = String, Path, description = "the game's id")),
    request_body = ArbiterRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "what the arbiter's action did", body = ArbiterOutcome),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 422, description = "the game refuses it (the code says why)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn arbiter(
    State(s): State<AppState>,
    Path((id, game)): Path<(String, String)>,
    Authed(p): Authed,
    ApiJson(b): ApiJson<ArbiterRequest>,
) -> Result<Json<ArbiterOutcome>, ApiError> {
    let req = b;
    let l = Loaded::load(&s, &id).await?;
    if l.t.organizer != p.id {
        return Err(ApiError::new(ErrorCode::Forbidden, "only the organizer is arbiter"));
    }
    let Some(g) = l.games.iter().find(|g| g.game == game) else {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game in this tournament"));
    };
    if !g.current {
        return Err(ApiError::new(ErrorCode::GameOver, "this game was aborted and replaced"));
    }
    let room = s
        .rooms
        .get(&game)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?;
    let snap = room.arbiter(p, req.action, req.reason).await?;
    let replaced_by = if req.action == ArbiterAction::Abort {
        Some(repair_table(&s, &l, g).await?)
    } else {
        None
    };
    Ok(Json(ArbiterOutcome {
        game: snap,
        replaced_by,
    }))
}

#[utoipa::path(
    get,
    path = "/api/me/boards",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the caller's tournament boards to play now", body = Vec<Board>),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn boards(State(s): State<AppState>, Authed(p): Authed) -> Result<Json<Vec<Board>>, ApiError> {
    Ok(Json(s.store.boards(&p.id).await?))
}
