//! The HTTP API (JSON): sessions, accounts, games, the lobby, records; plus
//! `/healthz`, `/metrics` and the OpenAPI description.

use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use protocol::{
    AddBot, BOT_LEVELS, CreateGame, Credentials, ErrorBody, ErrorCode, GameRecord, GameSettings, GameSummary, JoinGame,
    Joined, Phase, Session, Snapshot, Variant,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::limits::ClientAddr;
use crate::room::core::Room;
use crate::store::{Player, StoreError, TokenLookup};

/// The longest grace period a game may ask for.
pub(crate) const MAX_GRACE_MS: u64 = 24 * 3600 * 1000;

/// The routes of this module, each documented in the OpenAPI document
/// ([`crate::openapi`]) by its `#[utoipa::path]`.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(metrics))
        .routes(routes!(openapi))
        .routes(routes!(create_guest, crate::players::list_sessions))
        .routes(routes!(create_account))
        .routes(routes!(login))
        .routes(routes!(me))
        .routes(routes!(variants))
        .routes(routes!(create_game, list_games))
        .routes(routes!(game_state))
        .routes(routes!(join_game))
        .routes(routes!(add_bot))
        .routes(routes!(game_record))
        .routes(routes!(crate::ws::upgrade))
}

/// Every route of the server with its documentation: the router and the
/// OpenAPI document come from this one list, so neither can drift.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(crate::openapi::base())
        .merge(routes())
        .merge(crate::tournament::api::routes())
        .merge(crate::players::routes())
        .merge(crate::pairing::routes())
        .merge(crate::seeks::routes())
        .merge(crate::explain::routes())
}

/// The router of the whole server.
pub fn app(state: AppState) -> Router {
    let (router, _) = api().split_for_parts();
    router
        .fallback(crate::web::serve)
        .layer(DefaultBodyLimit::max(16 * 1024))
        .layer(axum::middleware::from_fn(refuse_nul))
        .layer(axum::middleware::from_fn(json_errors))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        // Outermost: an address cut off is refused before anything else.
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::cutoff::gate))
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

/// A JSON request body: an object (not an array or anything else), with no
/// NUL character in any string (the store cannot hold one), decoded into `T`.
/// Every refusal is a `bad_request` with words, as JSON.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: serde::de::DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let Json(value) = Json::<serde_json::Value>::from_request(req, state)
            .await
            .map_err(|e| ApiError::new(ErrorCode::BadRequest, e.body_text()))?;
        if !value.is_object() {
            return Err(ApiError::new(ErrorCode::BadRequest, "the body must be a JSON object"));
        }
        if has_nul(&value) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "text may not contain NUL characters",
            ));
        }
        serde_json::from_value(value)
            .map(ApiJson)
            .map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("bad body: {e}")))
    }
}

/// Whether a NUL character is in any string (or key) of `v`.
fn has_nul(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(a) => a.iter().any(has_nul),
        serde_json::Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// Refuses a path or query under `/api/` that holds a NUL character (`%00`,
/// the only way one can be in a URI): the store cannot hold one, and a
/// lookup with it would fail as an internal error instead of a refusal.
async fn refuse_nul(req: Request, next: axum::middleware::Next) -> Response {
    let uri = req.uri();
    let nul = |s: &str| s.as_bytes().windows(3).any(|w| w.eq_ignore_ascii_case(b"%00"));
    if uri.path().starts_with("/api/") && (nul(uri.path()) || uri.query().is_some_and(nul)) {
        return ApiError::new(ErrorCode::BadRequest, "text may not contain NUL characters").into_response();
    }
    next.run(req).await
}

/// Rewrites the plain-text refusals of axum's own extractors and router (a
/// bad path or query, 405, 413, …) under `/api/` into the API's JSON error.
async fn json_errors(req: Request, next: axum::middleware::Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let r = next.run(req).await;
    let status = r.status();
    let is_json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|c| c.as_bytes().starts_with(b"application/json"));
    if !api || is_json || !(status.is_client_error() || status.is_server_error()) {
        return r;
    }
    let code = match status {
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
        s if s.is_server_error() => ErrorCode::Internal,
        _ => ErrorCode::BadRequest,
    };
    let text = axum::body::to_bytes(r.into_body(), 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_lowercase()
    } else {
        text
    };
    let mut e = ApiError::new(code, message).into_response();
    *e.status_mut() = status;
    e
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

/// The game systems, in the order a client offers them.
#[utoipa::path(
    get,
    path = "/api/variants",
    responses(
        (status = 200, description = "the game systems, in the order a client offers them", body = Vec<protocol::VariantInfo>),
    )
)]
async fn variants() -> Json<Vec<protocol::VariantInfo>> {
    Json(
        protocol::Variant::ALL
            .into_iter()
            .map(|v| protocol::VariantInfo {
                key: v,
                title: v.title().to_owned(),
                playable: crate::room::check_playable(v).is_ok(),
                board: crate::boards::describe(v),
            })
            .collect(),
    )
}

#[utoipa::path(
    get,
    path = "/healthz",
    responses(
        (status = 200, description = "the store answers", body = String, content_type = "text/plain"),
        (status = 503, description = "the store is unreachable, or (cluster) this node holds no lease", body = String, content_type = "text/plain"),
    )
)]
async fn healthz(State(s): State<AppState>) -> impl IntoResponse {
    if !s.store.ping().await {
        return (StatusCode::SERVICE_UNAVAILABLE, "store unreachable\n");
    }
    // A cluster node without its lease (cut off from NATS or Postgres a
    // while ago) serves no game: a load balancer sends clients elsewhere.
    match s.rooms.cluster() {
        Some((node, _)) if !node.is_leased() => (StatusCode::SERVICE_UNAVAILABLE, "no lease in the cluster\n"),
        _ => (StatusCode::OK, "ok\n"),
    }
}

#[utoipa::path(
    get,
    path = "/metrics",
    responses(
        (status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain"),
    )
)]
async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        s.metrics.render(),
    )
}

#[utoipa::path(
    get,
    path = "/api/openapi.json",
    responses(
        (status = 200, description = "this document (OpenAPI 3.1), generated from the code", body = Object),
    )
)]
async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], crate::openapi::json())
}

fn session(token: String, p: &Player) -> Session {
    Session {
        token,
        player: p.id.clone(),
        name: p.name.clone(),
        account: p.account,
    }
}

#[utoipa::path(
    post,
    path = "/api/sessions",
    responses(
        (status = 201, description = "a new guest and its session", body = Session),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn create_guest(State(s): State<AppState>, addr: ClientAddr) -> Result<impl IntoResponse, ApiError> {
    s.limits.rates.sessions.check(addr, &s.metrics)?;
    let p = Player::guest(random_hex(8), format!("guest-{}", random_hex(3)));
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
            ErrorCode::BadUsername,
            "a username has 3 to 32 letters, digits, '_' or '-'",
        ));
    }
    check_password(&c.password)
}

/// The shortest password taken (NIST SP 800-63B's minimum).
pub const MIN_PASSWORD_CHARS: usize = 8;
/// The longest password taken (at least 64, as the same guidance asks).
pub const MAX_PASSWORD_CHARS: usize = 128;

/// A new password: 8 to 128 characters, any characters (no composition rules).
pub(crate) fn check_password(password: &str) -> Result<(), ApiError> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(ApiError::new(
            ErrorCode::BadPassword,
            format!("a password has at least {MIN_PASSWORD_CHARS} characters"),
        ));
    }
    if n > MAX_PASSWORD_CHARS {
        return Err(ApiError::new(
            ErrorCode::BadPassword,
            format!("a password has at most {MAX_PASSWORD_CHARS} characters"),
        ));
    }
    Ok(())
}

/// `POST /api/accounts`: a new account; with a guest's `Authorization`, that
/// guest becomes the account (same player id: its games, seats and sessions
/// stay its own).
#[utoipa::path(
    post,
    path = "/api/accounts",
    request_body = Credentials,
    security((), ("bearer" = [])),
    responses(
        (status = 201, description = "the account and a session (with a guest's token: the guest became the account)", body = Session),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn create_account(
    State(s): State<AppState>,
    addr: ClientAddr,
    MaybeAuthed(guest): MaybeAuthed,
    ApiJson(c): ApiJson<Credentials>,
) -> Result<impl IntoResponse, ApiError> {
    s.limits.rates.accounts.check(addr, &s.metrics)?;
    check_credentials(&c)?;
    if guest.as_ref().is_some_and(|g| g.account) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "this session already belongs to an account",
        ));
    }
    // Argon2 is deliberately slow and large: off the async workers, a few at once.
    let hash = s.limits.hasher.hash(c.password.clone()).await?;
    let upgrade = guest.is_some();
    let p = Player {
        id: guest.map_or_else(|| random_hex(8), |g| g.id),
        name: c.username.clone(),
        account: true,
        bot: None,
    };
    let token = random_hex(32);
    let created = if upgrade {
        s.store.upgrade_guest(&p.id, &c.username, &hash, &token).await
    } else {
        s.store
            .create_player(&p.id, &p.name, Some((&c.username, &hash)), &token)
            .await
    };
    match created {
        Ok(()) => Ok((StatusCode::CREATED, Json(session(token, &p)))),
        Err(StoreError::Conflict) => Err(ApiError::new(
            ErrorCode::UsernameTaken,
            format!("the username {:?} is taken", c.username),
        )),
        Err(e) => Err(e.into()),
    }
}

#[utoipa::path(
    post,
    path = "/api/login",
    request_body = Credentials,
    responses(
        (status = 200, description = "a new session", body = Session),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn login(
    State(s): State<AppState>,
    addr: ClientAddr,
    ApiJson(c): ApiJson<Credentials>,
) -> Result<Json<Session>, ApiError> {
    s.limits.rates.logins.check(addr, &s.metrics)?;
    let bad = || ApiError::new(ErrorCode::BadCredentials, "wrong username or password");
    if check_credentials(&c).is_err() {
        // No account has such a name or password: nothing to look up.
        return Err(bad());
    }
    // An unknown username is verified against a dummy hash: its answer takes
    // as long as a wrong password's, and tells nothing.
    let (player, hash) = match s.store.account(&c.username).await? {
        Some((p, hash)) => (Some(p), Some(hash)),
        None => (None, None),
    };
    let ok = s.limits.hasher.verify(c.password, hash).await?;
    let Some(p) = player.filter(|_| ok) else {
        return Err(bad());
    };
    let token = random_hex(32);
    s.store.create_session(&p.id, &token).await?;
    Ok(Json(session(token, &p)))
}

/// `GET /api/me`: who the token's player is.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Me {
    /// The player's id.
    pub player: String,
    /// Its name (a guest's `guest-…`, or the account's username).
    pub name: String,
    /// Whether it is an account (not a guest).
    pub account: bool,
}

#[utoipa::path(
    get,
    path = "/api/me",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the player of the token", body = Me),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn me(Authed(p): Authed) -> Json<Me> {
    Json(Me {
        player: p.id,
        name: p.name,
        account: p.account,
    })
}

/// The shortest clocks a game may ask for: shorter ones are no game over a
/// network (and cost the server timers and writes for nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockMinimums {
    /// Main time, unless 0 (byo-yomi only): 10 s.
    pub base_ms: u64,
    /// A byo-yomi period: 5 s.
    pub period_ms: u64,
    /// A per-move limit: 5 s.
    pub per_move_ms: u64,
    /// The disconnection grace period: 5 s.
    pub grace_ms: u64,
}

impl Default for ClockMinimums {
    fn default() -> Self {
        ClockMinimums {
            base_ms: 10_000,
            period_ms: 5_000,
            per_move_ms: 5_000,
            grace_ms: 5_000,
        }
    }
}

impl ClockMinimums {
    /// No minimums but "more than nothing" (tests of clocks and timeouts).
    pub fn none() -> ClockMinimums {
        ClockMinimums {
            base_ms: 1,
            period_ms: 1,
            per_move_ms: 1,
            grace_ms: 0,
        }
    }
}

/// Bounds that keep every clock sum far from overflow (and games finite),
/// and the minimums.
pub(crate) fn check_time_control(tc: &protocol::TimeControl, min: &ClockMinimums) -> Result<(), ApiError> {
    const DAY: u64 = 24 * 3600 * 1000;
    let bad = |m: String| Err(ApiError::new(ErrorCode::BadRequest, m));
    let secs = |ms: u64| format!("{} s", ms as f64 / 1000.0);
    if tc.base_ms == 0 && tc.byoyomi.is_none_or(|b| b.periods == 0 || b.period_ms == 0) {
        return bad("the time control gives no time at all".into());
    }
    if tc.base_ms > 7 * DAY {
        return bad("base_ms is at most 7 days".into());
    }
    if tc.base_ms != 0 && tc.base_ms < min.base_ms {
        return bad(format!(
            "base_ms is 0 (byo-yomi only) or at least {}",
            secs(min.base_ms)
        ));
    }
    if tc.increment_ms > 3600 * 1000 {
        return bad("increment_ms is at most an hour".into());
    }
    match tc.per_move_ms {
        Some(ms) if ms < min.per_move_ms.max(1) => {
            return bad(format!("per_move_ms is at least {}", secs(min.per_move_ms.max(1))));
        }
        Some(ms) if ms > DAY => return bad("per_move_ms is at most a day".into()),
        _ => {}
    }
    if let Some(b) = tc.byoyomi {
        if b.periods > 100 || b.period_ms > 3600 * 1000 {
            return bad("byo-yomi has at most 100 periods of at most an hour".into());
        }
        if b.periods > 0 && b.period_ms < min.period_ms.max(1) {
            return bad(format!(
                "a byo-yomi period (period_ms) is at least {}",
                secs(min.period_ms.max(1))
            ));
        }
    }
    Ok(())
}

/// The grace period a game asks for, within its bounds.
pub(crate) fn check_grace(grace_ms: u64, min: &ClockMinimums) -> Result<(), ApiError> {
    if grace_ms > MAX_GRACE_MS {
        return Err(ApiError::new(ErrorCode::BadRequest, "grace_ms is at most a day"));
    }
    if grace_ms < min.grace_ms {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("grace_ms is at least {} s", min.grace_ms as f64 / 1000.0),
        ));
    }
    Ok(())
}

#[utoipa::path(
    post,
    path = "/api/games",
    request_body = CreateGame,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "the new game", body = Snapshot),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn create_game(
    State(s): State<AppState>,
    addr: ClientAddr,
    Authed(p): Authed,
    ApiJson(c): ApiJson<CreateGame>,
) -> Result<impl IntoResponse, ApiError> {
    s.limits.rates.games.check(addr, &s.metrics)?;
    let tc = c.time_control.unwrap_or_default();
    check_time_control(&tc, &s.config.clock_minimums)?;
    // The server's default (`--grace-secs`) is the operator's choice; what a
    // game asks for is checked.
    if let Some(g) = c.grace_ms {
        check_grace(g, &s.config.clock_minimums)?;
    }
    let grace_ms = c.grace_ms.unwrap_or(s.config.grace.as_millis() as u64);
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
    let variant = c.variant.unwrap_or_default();
    crate::room::check_playable(variant)?;
    let rated = c.rated.unwrap_or(false);
    if rated && !p.account {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated game takes accounts only: sign up or log in, or create a casual game",
        ));
    }
    if rated && !bots.is_empty() {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated game takes accounts only: no bots",
        ));
    }
    if let Some(o) = &c.anqi {
        if variant != protocol::Variant::Anqi {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "anqi options are for 三国暗棋 (anqi) games",
            ));
        }
        o.check()
            .map_err(|why| ApiError::new(ErrorCode::BadRequest, format!("三国暗棋 options: {why}")))?;
    }
    let settings = GameSettings {
        variant,
        time_control: tc,
        direction: c.direction.unwrap_or_default(),
        public: c.public.unwrap_or(true),
        players_chat: c.players_chat.unwrap_or(true),
        grace_ms,
        rated,
        anqi: c.anqi,
    };
    let quota = &s.limits.bot_games;
    let placeholder = quota.admit(&s.store, addr, None, bots.len()).await?;
    let created = async {
        start_game(&s, &p.id, settings, &bots)
            .await?
            .snapshot()
            .await
            .map_err(ApiError::from)
    }
    .await;
    quota.created(addr, &placeholder, created.as_ref().ok().map(|snap| snap.id.as_str()));
    s.lobby.changed();
    Ok((StatusCode::CREATED, Json(created?)))
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
    let mut room = Room::new(id.clone(), settings.clone())?;
    let mut step = crate::room::core::Step::default();
    for &(side, level) in bots {
        let bot_id = format!("bot-{}", random_hex(8));
        let (_, seated) = room.add_bot(bot_id, level, Some(side), 0, crate::store::wall_ms())?;
        step.ops.extend(seated.ops);
        step.events.extend(seated.events);
    }
    let initial = room.initial_position();
    let secret = room.take_secret();
    s.store
        .create_game(&id, creator, &settings, &initial, secret.as_deref())
        .await?;
    let handle = s.rooms.start(room, step, 0).await?;
    tracing::info!(game = %id, player = %creator, bots = bots.len(), "game created");
    Ok(handle)
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    phase: Option<String>,
    /// Only games of this variant (all variants when absent).
    variant: Option<String>,
}

/// How long a lobby list is served before it is read again.
const LOBBY_TTL: std::time::Duration = std::time::Duration::from_secs(1);

/// Lists per phase: one of all variants, one per variant.
const VARIANT_SLOTS: usize = 1 + protocol::Variant::ALL.len();

/// The tournaments' list as read: when, and the list.
pub type TournamentList = tokio::sync::Mutex<Option<(std::time::Instant, Arc<serde_json::Value>)>>;

/// A lobby list as read: when, at which [`Lobby::changed`] count, and the games.
type LobbyList = (std::time::Instant, u64, Arc<Vec<GameSummary>>);

/// The lobby's lists (one per phase) and the tournaments' list, each read at
/// most once a second however many lobbies poll: a request finding its list
/// older waits for the one that reads it again (one read at a time).
#[derive(Debug, Default)]
pub struct Lobby {
    games: [tokio::sync::Mutex<Option<LobbyList>>; 3 * VARIANT_SLOTS],
    /// Bumped when this server creates or fills a game: the lists are read
    /// again at once (a creator finds its game listed).
    changed: std::sync::atomic::AtomicU64,
    /// `GET /api/tournaments`, one list per filter (all variants, or one).
    pub tournaments: [TournamentList; VARIANT_SLOTS],
}

impl Lobby {
    /// The lists are out of date.
    pub fn changed(&self) {
        self.changed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[utoipa::path(
    get,
    path = "/api/games",
    params(("phase" = Option<Phase>, Query, description = "open (default), live or finished"), ("variant" = Option<Variant>, Query, description = "only this variant (all when absent)")),
    responses(
        (status = 200, description = "up to 100 games of the phase, newest first", body = Vec<GameSummary>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn list_games(
    State(s): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Arc<Vec<GameSummary>>>, ApiError> {
    let phase = match q.phase.as_deref() {
        None => Phase::Open,
        Some(p) => {
            Phase::parse(p).ok_or_else(|| ApiError::new(ErrorCode::BadRequest, "phase is open, live or finished"))?
        }
    };
    let variant = variant_filter(q.variant.as_deref())?;
    // One list per phase and filter (all variants, or one).
    let phase_slot = match phase {
        Phase::Open => 0,
        Phase::Live => 1,
        Phase::Finished => 2,
    };
    let slot = &s.lobby.games[phase_slot * VARIANT_SLOTS + variant.map_or(0, |v| 1 + v as usize)];
    let mut cached = slot.lock().await;
    let generation = s.lobby.changed.load(std::sync::atomic::Ordering::Relaxed);
    if let Some((at, seen, list)) = cached.as_ref()
        && at.elapsed() < LOBBY_TTL
        && *seen == generation
    {
        return Ok(Json(Arc::clone(list)));
    }
    let mut games = s.store.list_games(phase, variant, 100).await?;
    // Who is connected: the sockets know (finished games show nobody).
    if phase != Phase::Finished {
        for g in &mut games {
            for seat in g.seats.iter_mut().flatten() {
                seat.online = seat.bot.is_some() || s.limits.presence.online(&g.id, &seat.player);
            }
        }
    }
    let list = Arc::new(games);
    *cached = Some((std::time::Instant::now(), generation, Arc::clone(&list)));
    Ok(Json(list))
}

/// A list's `?variant=KEY` filter: none when absent or empty.
pub(crate) fn variant_filter(v: Option<&str>) -> Result<Option<protocol::Variant>, ApiError> {
    match v {
        None | Some("") => Ok(None),
        Some(v) => v
            .parse::<protocol::Variant>()
            .map(Some)
            .map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("variant: {e}"))),
    }
}

/// A game as the API serves it: a room in memory, or a finished game read
/// from the store and never made a room again (a visitor of an old game
/// costs a read, not a task and its timers).
#[derive(Debug)]
pub(crate) enum Game {
    /// A room (live, open, or finished a moment ago).
    Room(crate::room::RoomHandle),
    /// A finished game's final state, from the store.
    Finished(Arc<Snapshot>),
}

/// The final states of finished games recently served (a few hundred at
/// most; emptied when full).
#[derive(Debug, Default)]
pub struct FinishedGames(std::sync::Mutex<std::collections::HashMap<String, Arc<Snapshot>>>);

/// Finished games' states kept at most.
const FINISHED_KEPT: usize = 512;

impl FinishedGames {
    fn get(&self, id: &str) -> Option<Arc<Snapshot>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    fn put(&self, id: &str, snap: Arc<Snapshot>) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= FINISHED_KEPT {
            m.clear();
        }
        m.insert(id.to_owned(), snap);
    }
}

/// The game `id`: its room if in memory; a finished game's final state from
/// the store; else its room, restored (an unfinished game that did not
/// restore at start).
pub(crate) async fn find_game(s: &AppState, id: &str) -> Result<Option<Game>, ApiError> {
    if id.len() > 64 {
        return Ok(None);
    }
    if let Some(h) = s.rooms.in_memory(id) {
        return Ok(Some(Game::Room(h)));
    }
    if let Some(snap) = s.finished.get(id) {
        return Ok(Some(Game::Finished(snap)));
    }
    match s.store.game_phase(id).await? {
        None => Ok(None),
        Some(Phase::Finished) => {
            // The final state kept with the finish: read, not replayed.
            if let Some(snap) = s.store.finished_snapshot(id).await? {
                let snap = Arc::new(snap);
                s.finished.put(id, Arc::clone(&snap));
                return Ok(Some(Game::Finished(snap)));
            }
            let Some(stored) = s.store.load_game(id).await? else {
                return Ok(None);
            };
            let (room, _, now) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Room::restore(stored)))
                .unwrap_or_else(|_| Err("its replay panicked".into()))
                .map_err(StoreError::Corrupt)?;
            let snap = Arc::new(room.snapshot(now));
            s.finished.put(id, Arc::clone(&snap));
            Ok(Some(Game::Finished(snap)))
        }
        Some(_) => Ok(s.rooms.get(id).await?.map(Game::Room)),
    }
}

fn no_such_game() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such game")
}

/// The room of a game that may still change (join, bots): a finished one is `not_open`.
async fn room(s: &AppState, id: &str) -> Result<crate::room::RoomHandle, ApiError> {
    match find_game(s, id).await?.ok_or_else(no_such_game)? {
        Game::Room(h) => Ok(h),
        Game::Finished(_) => Err(ApiError::new(ErrorCode::NotOpen, "the game is over")),
    }
}

#[utoipa::path(
    get,
    path = "/api/games/{id}",
    params(("id" = String, Path, description = "its id")),
    responses(
        (status = 200, description = "the game as a spectator sees it", body = Snapshot),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn game_state(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Snapshot>, ApiError> {
    match find_game(&s, &id).await?.ok_or_else(no_such_game)? {
        Game::Room(h) => Ok(Json(h.snapshot().await?)),
        Game::Finished(snap) => Ok(Json(Snapshot::clone(&snap))),
    }
}

#[utoipa::path(
    post,
    path = "/api/games/{id}/join",
    params(("id" = String, Path, description = "its id")),
    request_body = JoinGame,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the seat taken", body = Joined),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 422, description = "the game refuses it (the code says why)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn join_game(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Authed(p): Authed,
    ApiJson(j): ApiJson<JoinGame>,
) -> Result<Json<Joined>, ApiError> {
    let handle = room(&s, &id).await?;
    if !p.account && handle.snapshot().await?.settings.rated {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated game takes accounts only: sign up or log in to take this seat",
        ));
    }
    let side = handle.join_seeded(p, j.side, j.seed).await?;
    s.lobby.changed();
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
#[utoipa::path(
    post,
    path = "/api/games/{id}/bots",
    params(("id" = String, Path, description = "its id")),
    request_body = AddBot,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the seat the bot took", body = Joined),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "not allowed to this player", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 409, description = "not in this state", body = ErrorBody),
        (status = 422, description = "the game refuses it (the code says why)", body = ErrorBody),
        (status = 429, description = "too many from this address or player (Retry-After)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn add_bot(
    State(s): State<AppState>,
    Path(id): Path<String>,
    addr: ClientAddr,
    Authed(p): Authed,
    ApiJson(a): ApiJson<AddBot>,
) -> Result<Json<Joined>, ApiError> {
    let level = bot_level(a.level)?;
    let handle = room(&s, &id).await?;
    if handle.snapshot().await?.settings.rated {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated game takes accounts only: no bots",
        ));
    }
    if s.store.game_creator(&id).await?.as_deref() != Some(p.id.as_str()) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "only the game's creator may seat a bot",
        ));
    }
    // Counted against the creator's address like a game created with bots.
    let seated = handle
        .snapshot()
        .await?
        .seats
        .iter()
        .flatten()
        .filter(|p| p.bot.is_some())
        .count();
    s.limits.bot_games.admit(&s.store, addr, Some(&id), seated + 1).await?;
    let side = handle.add_bot(a.side, level).await?;
    s.lobby.changed();
    tracing::info!(game = %id, %side, level = level.number(), "bot seated");
    Ok(Json(Joined { game: id, side }))
}

#[utoipa::path(
    get,
    path = "/api/games/{id}/record",
    params(("id" = String, Path, description = "its id")),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "the record: moves, events, and the chat this viewer may read", body = GameRecord),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn game_record(
    State(s): State<AppState>,
    Path(id): Path<String>,
    MaybeAuthed(viewer): MaybeAuthed,
) -> Result<Json<GameRecord>, ApiError> {
    let mut record = s.store.record(&id).await?.ok_or_else(no_such_game)?;
    visible_chat(&mut record, viewer.as_ref().map(|p| p.id.as_str()));
    with_notes(&s, &mut record).await?;
    Ok(Json(record))
}

/// Adds the variant's own record lines to a record read from the store, as
/// the game's room shows them to spectators ([`crate::room::core::Room::view`]:
/// public by construction): a finished game's from the final state its room
/// kept when it finished ([`find_game`]; older games: their room, replayed). The store's part of a record is public already:
/// the start position a game gives is its public one and the stored command
/// texts are public (`RoomGame::initial_position`, `RoomGame::command_text`).
pub(crate) async fn with_notes(s: &AppState, record: &mut GameRecord) -> Result<(), ApiError> {
    if !crate::room::games::has_notes(record.settings.variant) {
        return Ok(());
    }
    record.notes = match find_game(s, &record.id).await? {
        Some(Game::Room(h)) => h.snapshot().await?.notes,
        Some(Game::Finished(snap)) => snap.notes.clone(),
        None => Vec::new(),
    };
    Ok(())
}

/// Keeps the chat a viewer may read, by the rule of the game's socket: the
/// players' channel for the game's seated players only; the spectators'
/// channel for everyone else, and for the players too once the game is over.
pub(crate) fn visible_chat(record: &mut GameRecord, viewer: Option<&str>) {
    let seated = viewer.is_some_and(|v| record.seats.iter().flatten().any(|seat| seat.player == v));
    let over = record.phase == Phase::Finished;
    record.chat.retain(|c| match c.channel {
        protocol::Channel::Players => seated,
        protocol::Channel::Spectators => !seated || over,
    });
}

/// The player of the request's `Authorization: Bearer TOKEN` if it has one
/// (a token given must be valid: `unauthorized` otherwise).
#[derive(Debug)]
pub struct MaybeAuthed(pub Option<Player>);

impl FromRequestParts<AppState> for MaybeAuthed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if !parts.headers.contains_key(header::AUTHORIZATION) {
            return Ok(MaybeAuthed(None));
        }
        Authed::from_request_parts(parts, state)
            .await
            .map(|Authed(p)| MaybeAuthed(Some(p)))
    }
}
