//! The HTTP API (JSON): sessions, accounts, games, the lobby, records; plus
//! `/healthz`, `/metrics` and the OpenAPI description.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use protocol::{
    AddBot, BOT_LEVELS, CreateGame, Credentials, ErrorCode, GameRecord, GameSettings, GameSummary, JoinGame, Joined,
    Phase, Session, Snapshot,
};
use serde::Deserialize;

use crate::AppState;
use crate::error::ApiError;
use crate::room::core::Room;
use crate::store::{Player, StoreError, TokenLookup};

/// The longest grace period a game may ask for.
pub(crate) const MAX_GRACE_MS: u64 = 24 * 3600 * 1000;

/// The router of the whole server.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/api/openapi.json", get(openapi))
        .route("/api/sessions", post(create_guest))
        .route("/api/accounts", post(create_account))
        .route("/api/login", post(login))
        .route("/api/me", get(me))
        .route("/api/games", post(create_game).get(list_games))
        .route("/api/games/{id}", get(game_state))
        .route("/api/games/{id}/join", post(join_game))
        .route("/api/games/{id}/bots", post(add_bot))
        .route("/api/games/{id}/record", get(game_record))
        .route("/api/games/{id}/ws", get(crate::ws::upgrade))
        .merge(crate::tournament::api::routes())
        .merge(crate::explain::routes())
        .fallback(crate::web::serve)
        .layer(DefaultBodyLimit::max(16 * 1024))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// `n` random bytes as hex.
pub fn random_hex(n: usize) -> String {
    let bytes: Vec<u8> = (0..n).map(|_| rand::random::<u8>()).collect();
    hex::encode(bytes)
}

/// A game id: 12 characters of a 32-letter alphabet (60 bits).
pub(crate) fn game_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    (0..12)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}

pub(crate) fn body<T>(b: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    b.map(|Json(t)| t)
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, e.body_text()))
}

/// The player of the request's `Authorization: Bearer TOKEN`.
#[derive(Debug)]
pub struct Authed(pub Player);

impl FromRequestParts<AppState> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "an Authorization: Bearer token is needed"))?;
        match state
            .store
            .player_by_token(token.trim(), state.config.session_ttl)
            .await?
        {
            TokenLookup::Player(p) => Ok(Authed(p)),
            TokenLookup::Unknown => Err(ApiError::new(ErrorCode::Unauthorized, "unknown session token")),
            TokenLookup::Expired => Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the session has expired; start a new one",
            )),
        }
    }
}

async fn healthz(State(s): State<AppState>) -> impl IntoResponse {
    if s.store.ping().await {
        (StatusCode::OK, "ok\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n")
    }
}

async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        s.metrics.render(),
    )
}

async fn openapi() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        include_str!("openapi.json"),
    )
}

fn session(token: String, p: &Player) -> Session {
    Session {
        token,
        player: p.id.clone(),
        name: p.name.clone(),
        account: p.account,
    }
}

async fn create_guest(State(s): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let p = Player {
        id: random_hex(8),
        name: format!("guest-{}", random_hex(3)),
        account: false,
        bot: None,
    };
    let token = random_hex(32);
    s.store.create_player(&p.id, &p.name, None, &token).await?;
    Ok((StatusCode::CREATED, Json(session(token, &p))))
}

fn check_credentials(c: &Credentials) -> Result<(), ApiError> {
    let u = &c.username;
    if !(3..=32).contains(&u.chars().count())
        || !u.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
    {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "a username has 3 to 32 letters, digits, '_' or '-'",
        ));
    }
    if !(8..=128).contains(&c.password.chars().count()) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "a password has 8 to 128 characters",
        ));
    }
    Ok(())
}

async fn create_account(
    State(s): State<AppState>,
    b: Result<Json<Credentials>, JsonRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let c = body(b)?;
    check_credentials(&c)?;
    let password = c.password.clone();
    // Argon2 is deliberately slow: keep it off the async workers.
    let hash = tokio::task::spawn_blocking(move || {
        let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>()).map_err(|e| e.to_string())?;
        argon2::Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| StoreError::Corrupt(e.to_string()))?
    .map_err(StoreError::Corrupt)?;
    let p = Player {
        id: random_hex(8),
        name: c.username.clone(),
        account: true,
        bot: None,
    };
    let token = random_hex(32);
    match s
        .store
        .create_player(&p.id, &p.name, Some((&c.username, &hash)), &token)
        .await
    {
        Ok(()) => Ok((StatusCode::CREATED, Json(session(token, &p)))),
        Err(StoreError::Conflict) => Err(ApiError::new(
            ErrorCode::UsernameTaken,
            format!("the username {:?} is taken", c.username),
        )),
        Err(e) => Err(e.into()),
    }
}

async fn login(
    State(s): State<AppState>,
    b: Result<Json<Credentials>, JsonRejection>,
) -> Result<Json<Session>, ApiError> {
    let c = body(b)?;
    let bad = || ApiError::new(ErrorCode::BadCredentials, "wrong username or password");
    let Some((p, hash)) = s.store.account(&c.username).await? else {
        return Err(bad());
    };
    let ok = tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|h| {
                argon2::Argon2::default()
                    .verify_password(c.password.as_bytes(), &h)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false);
    if !ok {
        return Err(bad());
    }
    let token = random_hex(32);
    s.store.create_session(&p.id, &token).await?;
    Ok(Json(session(token, &p)))
}

async fn me(Authed(p): Authed) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "player": p.id, "name": p.name, "account": p.account }))
}

/// Bounds that keep every clock sum far from overflow (and games finite).
pub(crate) fn check_time_control(tc: &protocol::TimeControl) -> Result<(), ApiError> {
    const DAY: u64 = 24 * 3600 * 1000;
    let bad = |m: &str| Err(ApiError::new(ErrorCode::BadRequest, m));
    if tc.base_ms > 7 * DAY {
        return bad("base_ms is at most 7 days");
    }
    if tc.increment_ms > 3600 * 1000 {
        return bad("increment_ms is at most an hour");
    }
    match tc.per_move_ms {
        Some(0) => return bad("per_move_ms must be positive"),
        Some(ms) if ms > DAY => return bad("per_move_ms is at most a day"),
        _ => {}
    }
    if let Some(b) = tc.byoyomi
        && (b.periods > 100 || b.period_ms > 3600 * 1000)
    {
        return bad("byo-yomi has at most 100 periods of at most an hour");
    }
    Ok(())
}

async fn create_game(
    State(s): State<AppState>,
    Authed(p): Authed,
    b: Result<Json<CreateGame>, JsonRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let c = body(b)?;
    let tc = c.time_control.unwrap_or_default();
    if tc.base_ms == 0 && tc.byoyomi.is_none_or(|b| b.periods == 0 || b.period_ms == 0) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "the time control gives no time at all",
        ));
    }
    check_time_control(&tc)?;
    let grace_ms = c.grace_ms.unwrap_or(s.config.grace.as_millis() as u64);
    if grace_ms > MAX_GRACE_MS {
        return Err(ApiError::new(ErrorCode::BadRequest, "grace_ms is at most a day"));
    }
    if s.store.active_games_created_by(&p.id).await? >= s.config.max_games_per_session {
        return Err(ApiError::new(
            ErrorCode::TooManyGames,
            format!("at most {} unfinished games per player", s.config.max_games_per_session),
        ));
    }
    let bots = c
        .bots
        .unwrap_or_default()
        .into_iter()
        .map(|(side, n)| Ok((side, bot_level(n)?)))
        .collect::<Result<Vec<_>, ApiError>>()?;
    let settings = GameSettings {
        time_control: tc,
        direction: c.direction.unwrap_or_default(),
        public: c.public.unwrap_or(true),
        players_chat: c.players_chat.unwrap_or(true),
        grace_ms,
    };
    let handle = start_game(&s, &p.id, settings, &bots).await?;
    let snap = handle.snapshot().await?;
    Ok((StatusCode::CREATED, Json(snap)))
}

/// Creates a game (stored, its room started) by `creator` with `settings`,
/// its `bots` seated in the same commit as the room's start (three bots:
/// the game starts at once). Each side at most once in `bots`.
///
/// The way server-side code creates a game: `POST /api/games` after its
/// checks, e.g. `start_game(&state, creator, settings, &[(Side::Y,
/// bot::Level::Two)])`. People then take the other seats with
/// [`crate::room::RoomHandle::join`]. (A tournament round builds its rooms
/// itself, bots included, so that its games are stored in one transaction.)
pub async fn start_game(
    s: &AppState,
    creator: &str,
    settings: GameSettings,
    bots: &[(protocol::Side, bot::Level)],
) -> Result<crate::room::RoomHandle, ApiError> {
    let id = game_id();
    let mut room = Room::new(id.clone(), settings.clone());
    let mut step = crate::room::core::Step::default();
    for &(side, level) in bots {
        let bot_id = format!("bot-{}", random_hex(8));
        let (_, seated) = room.add_bot(bot_id, level, Some(side), 0, crate::store::wall_ms())?;
        step.ops.extend(seated.ops);
        step.events.extend(seated.events);
    }
    let initial = engine::format_position(room.game().initial_position());
    s.store.create_game(&id, creator, &settings, &initial).await?;
    let handle = s.rooms.start(room, step, 0).await?;
    tracing::info!(game = %id, player = %creator, bots = bots.len(), "game created");
    Ok(handle)
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    phase: Option<String>,
}

async fn list_games(State(s): State<AppState>, Query(q): Query<ListQuery>) -> Result<Json<Vec<GameSummary>>, ApiError> {
    let phase = match q.phase.as_deref() {
        None => Phase::Open,
        Some(p) => {
            Phase::parse(p).ok_or_else(|| ApiError::new(ErrorCode::BadRequest, "phase is open, live or finished"))?
        }
    };
    let mut games = s.store.list_games(phase, 100).await?;
    // Seats' presence is known by the rooms, not the store (finished games have none).
    for g in games.iter_mut().filter(|g| g.phase != Phase::Finished) {
        if let Ok(Some(h)) = s.rooms.get(&g.id).await
            && let Ok(snap) = h.snapshot().await
        {
            g.seats = snap.seats;
            g.ply = snap.status.ply;
        }
    }
    Ok(Json(games))
}

async fn room(s: &AppState, id: &str) -> Result<crate::room::RoomHandle, ApiError> {
    if id.len() > 64 {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game"));
    }
    s.rooms
        .get(id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))
}

async fn game_state(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Snapshot>, ApiError> {
    Ok(Json(room(&s, &id).await?.snapshot().await?))
}

async fn join_game(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    b: Result<Json<JoinGame>, JsonRejection>,
) -> Result<Json<Joined>, ApiError> {
    let j = body(b)?;
    let side = room(&s, &id).await?.join(p, j.side).await?;
    Ok(Json(Joined { game: id, side }))
}

/// A bot level from its number, or a `bad_request`.
fn bot_level(n: u8) -> Result<bot::Level, ApiError> {
    bot::Level::from_number(n).ok_or_else(|| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!(
                "a bot's level is {} to {}, not {n}",
                BOT_LEVELS.start(),
                BOT_LEVELS.end()
            ),
        )
    })
}

/// `POST /api/games/{id}/bots`: the creator seats a bot before the game starts.
async fn add_bot(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    b: Result<Json<AddBot>, JsonRejection>,
) -> Result<Json<Joined>, ApiError> {
    let a = body(b)?;
    let level = bot_level(a.level)?;
    let handle = room(&s, &id).await?;
    if s.store.game_creator(&id).await?.as_deref() != Some(p.id.as_str()) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "only the game's creator may seat a bot",
        ));
    }
    let side = handle.add_bot(a.side, level).await?;
    tracing::info!(game = %id, %side, level = level.number(), "bot seated");
    Ok(Json(Joined { game: id, side }))
}

async fn game_record(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<GameRecord>, ApiError> {
    s.store
        .record(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))
}
