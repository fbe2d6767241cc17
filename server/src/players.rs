//! The player's side of the API (issue 16): sessions listed and revoked,
//! logging out, a player's profile and the leaderboards. The accounts
//! themselves (sign up, a guest becoming an account, log in) are in
//! [`crate::http`].

use axum::Json;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use protocol::players::{
    LeaderboardEntry, PlayerProfile, PlayerRating, ProfileGame, RatingPoint, SeatTally, SessionInfo, TimeClass,
};
use protocol::{ErrorBody, ErrorCode, GameResult, GameSettings, Outcome, Phase, Side, Variant};
use serde::Deserialize;
use skillratings::weng_lin::WengLinRating;
use sqlx::Row;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::http::Authed;
use crate::rating::{PROVISIONAL_DEVIATION, shown};
use crate::store::{Player, Store, StoreError, token_digest, wall_ms};

/// The routes of this module.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(revoke_session))
        .routes(routes!(logout))
        .routes(routes!(profile))
        .routes(routes!(leaderboard))
}

/// The player of the request and the digest of its session token.
#[derive(Debug)]
pub(crate) struct Current(Player, String);

impl FromRequestParts<AppState> for Current {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let Authed(p) = Authed::from_request_parts(parts, state).await?;
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or_default();
        Ok(Current(p, token_digest(token.trim())))
    }
}

/// `GET /api/sessions`: the player's live sessions, newest first.
#[utoipa::path(
    get,
    path = "/api/sessions",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the player's live sessions, newest first", body = Vec<SessionInfo>),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
pub(crate) async fn list_sessions(
    State(s): State<AppState>,
    Current(p, digest): Current,
) -> Result<Json<Vec<SessionInfo>>, ApiError> {
    let ttl = s.config.session_ttl.as_millis() as i64;
    let since = wall_ms().saturating_sub(ttl);
    let rows = sqlx::query(
        "SELECT token_sha256, created_ms FROM sessions WHERE player_id = $1 AND created_ms >= $2 \
         ORDER BY created_ms DESC, token_sha256",
    )
    .bind(&p.id)
    .bind(since)
    .fetch_all(&s.store.pool)
    .await
    .map_err(StoreError::from)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id: String = r.try_get("token_sha256").map_err(StoreError::from)?;
        let created_ms: i64 = r.try_get("created_ms").map_err(StoreError::from)?;
        out.push(SessionInfo {
            current: id == digest,
            id,
            created_ms,
            expires_ms: created_ms.saturating_add(ttl),
        });
    }
    Ok(Json(out))
}

/// `DELETE /api/sessions/{id}`: ends one of the player's sessions (its token
/// is refused from then on).
#[utoipa::path(
    delete,
    path = "/api/sessions/{id}",
    params(("id" = String, Path, description = "the session's id (SessionInfo.id)")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "the session is ended"),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn revoke_session(
    State(s): State<AppState>,
    Current(p, _): Current,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    if s.store.delete_session(&p.id, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(ErrorCode::NotFound, "no such session of yours"))
    }
}

/// `POST /api/logout`: ends the session of the request.
#[utoipa::path(
    post,
    path = "/api/logout",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "the session of the request is ended"),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn logout(State(s): State<AppState>, Current(p, digest): Current) -> Result<impl IntoResponse, ApiError> {
    s.store.delete_session(&p.id, &digest).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A stored rating's μ and σ.
fn stored_rating(r: &sqlx::any::AnyRow) -> Result<WengLinRating, StoreError> {
    let f = |c: &str| -> Result<f64, StoreError> {
        let t: String = r.try_get(c)?;
        t.parse().map_err(|_| StoreError::Corrupt(format!("rating {c} {t:?}")))
    };
    Ok(WengLinRating {
        rating: f("mu")?,
        uncertainty: f("sigma")?,
    })
}

/// The most games a profile lists.
const PROFILE_GAMES: i64 = 50;
/// The most players a leaderboard lists.
const LEADERBOARD_SIZE: i64 = 100;

/// `GET /api/players/{id}?variant=`: ratings with history, W/D/L per seat,
/// latest games — of one variant when `variant` is given.
#[utoipa::path(
    get,
    path = "/api/players/{id}",
    params(
        ("id" = String, Path, description = "the player's id"),
        ("variant" = Option<Variant>, Query, description = "only this variant's ratings and games (default: every variant)"),
    ),
    responses(
        (status = 200, description = "ratings with history, results per seat, latest games", body = PlayerProfile),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 404, description = "no such thing", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn profile(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ProfileQuery>,
) -> Result<Json<PlayerProfile>, ApiError> {
    let variant = crate::http::variant_filter(q.variant.as_deref())?;
    if id.len() > 64 {
        return Err(no_such_player());
    }
    Ok(Json(
        s.store.profile_of(&id, variant).await?.ok_or_else(no_such_player)?,
    ))
}

#[derive(Debug, Deserialize)]
struct ProfileQuery {
    variant: Option<String>,
}

fn no_such_player() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such player")
}

#[derive(Debug, Deserialize)]
struct BoardQuery {
    variant: Option<String>,
    class: Option<String>,
}

/// `GET /api/leaderboard?variant=&class=`: the best non-provisional ratings
/// (100 at most) of a variant (default `sanguo`) and class (default `blitz`).
#[utoipa::path(
    get,
    path = "/api/leaderboard",
    params(("variant" = Option<Variant>, Query, description = "default sanguo"), ("class" = Option<TimeClass>, Query, description = "default blitz")),
    responses(
        (status = 200, description = "the best non-provisional ratings (100 at most)", body = Vec<LeaderboardEntry>),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn leaderboard(
    State(s): State<AppState>,
    Query(q): Query<BoardQuery>,
) -> Result<Json<Vec<LeaderboardEntry>>, ApiError> {
    let variant = crate::http::variant_filter(q.variant.as_deref())?.unwrap_or_default();
    let class = match q.class.as_deref() {
        None | Some("") => TimeClass::Blitz,
        Some(c) => TimeClass::parse(c)
            .ok_or_else(|| ApiError::new(ErrorCode::BadRequest, "class is bullet, blitz, rapid or classical"))?,
    };
    Ok(Json(s.store.leaderboard(variant, class).await?))
}

impl Store {
    /// Makes a guest the account `username` (same id: its games stay its own)
    /// and opens a session; `Conflict` when the username is taken or the
    /// player is no guest (any more).
    pub async fn upgrade_guest(
        &self,
        id: &str,
        username: &str,
        password_hash: &str,
        token: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE players SET name = $1, username = $1, password_hash = $2 \
             WHERE id = $3 AND username IS NULL AND bot_level IS NULL",
        )
        .bind(username)
        .bind(password_hash)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(d) if d.is_unique_violation() => StoreError::Conflict,
            _ => StoreError::Db(e),
        })?;
        if done.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        sqlx::query("INSERT INTO sessions (token_sha256, player_id, created_ms) VALUES ($1, $2, $3)")
            .bind(token_digest(token))
            .bind(id)
            .bind(wall_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a session of `player` by its token's digest; whether it existed.
    pub async fn delete_session(&self, player: &str, digest: &str) -> Result<bool, StoreError> {
        let r = sqlx::query("DELETE FROM sessions WHERE player_id = $1 AND token_sha256 = $2")
            .bind(player)
            .bind(digest)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() > 0)
    }

    /// The leaderboard of a variant and class: non-provisional ratings, best first.
    pub async fn leaderboard(&self, variant: Variant, class: TimeClass) -> Result<Vec<LeaderboardEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT r.player_id, p.name, r.mu, r.sigma, r.games FROM ratings r JOIN players p ON p.id = r.player_id \
             WHERE r.variant = $1 AND r.class = $2 AND r.deviation <= $3 \
             ORDER BY r.rating DESC, r.player_id LIMIT $4",
        )
        .bind(variant.key())
        .bind(class.key())
        .bind(PROVISIONAL_DEVIATION)
        .bind(LEADERBOARD_SIZE)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .enumerate()
            .map(|(k, r)| {
                Ok(LeaderboardEntry {
                    rank: k as u64 + 1,
                    player: r.try_get("player_id")?,
                    name: r.try_get("name")?,
                    rating: shown(stored_rating(r)?),
                    games: r.try_get::<i64, _>("games")? as u64,
                })
            })
            .collect()
    }

    /// A player's profile (`None`: no such player).
    pub async fn profile(&self, id: &str) -> Result<Option<PlayerProfile>, StoreError> {
        self.profile_of(id, None).await
    }

    /// A player's profile, of one variant's ratings, results and games when
    /// `variant` is given (`None`: no such player).
    pub async fn profile_of(&self, id: &str, variant: Option<Variant>) -> Result<Option<PlayerProfile>, StoreError> {
        // '' matches every variant.
        let only = variant.map_or("", Variant::key);
        let Some(p) = sqlx::query("SELECT id, name, username, bot_level, created_ms FROM players WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        // Ratings, each with its history and its place.
        let history = self.rating_history(id).await?;
        let rating_rows = sqlx::query(
            "SELECT variant, class, mu, sigma, rating, deviation, games FROM ratings WHERE player_id = $1 \
             AND ($2 = '' OR variant = $2) ORDER BY variant, class",
        )
        .bind(id)
        .bind(only)
        .fetch_all(&self.pool)
        .await?;
        let mut ratings = Vec::new();
        for r in &rating_rows {
            let variant: String = r.try_get("variant")?;
            let class: String = r.try_get("class")?;
            let variant: Variant = variant
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("variant {variant:?}")))?;
            let class = TimeClass::parse(&class).ok_or_else(|| StoreError::Corrupt(format!("class {class:?}")))?;
            let current = shown(stored_rating(r)?);
            let rank = if current.provisional {
                None
            } else {
                let above: i64 = sqlx::query(
                    "SELECT COUNT(*) AS n FROM ratings WHERE variant = $1 AND class = $2 AND deviation <= $3 \
                     AND (rating > $4 OR (rating = $4 AND player_id < $5))",
                )
                .bind(variant.key())
                .bind(class.key())
                .bind(PROVISIONAL_DEVIATION)
                .bind(r.try_get::<i64, _>("rating")?)
                .bind(id)
                .fetch_one(&self.pool)
                .await?
                .try_get("n")?;
                Some(above as u64 + 1)
            };
            ratings.push(PlayerRating {
                variant,
                class,
                current,
                games: r.try_get::<i64, _>("games")? as u64,
                rank,
                history: history
                    .iter()
                    .filter(|c| c.variant == variant && c.class == class)
                    .map(|c| RatingPoint {
                        game: c.game.clone(),
                        wall_ms: c.wall_ms,
                        rating: c.after.rating,
                    })
                    .collect(),
            });
        }
        // W/D/L per seat over every finished game.
        let mut seats = [SeatTally::default(); 3];
        let finished = sqlx::query(
            "SELECT s.side, g.result FROM seats s JOIN games g ON g.id = s.game_id \
             WHERE s.player_id = $1 AND g.phase = 'finished' AND ($2 = '' OR g.variant = $2)",
        )
        .bind(id)
        .bind(only)
        .fetch_all(&self.pool)
        .await?;
        for r in &finished {
            let side = side_of(&r.try_get::<String, _>("side")?)?;
            let Some(result) = r.try_get::<Option<String>, _>("result")? else {
                continue;
            };
            let result: GameResult = serde_json::from_str(&result).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let tally = &mut seats[side.index()];
            match result.outcomes[side.index()] {
                Some(Outcome::Win) => tally.win += 1,
                Some(Outcome::Draw) => tally.draw += 1,
                Some(Outcome::Loss) => tally.loss += 1,
                None => {}
            }
        }
        // The latest games, with every seat's name.
        let game_rows = sqlx::query(
            "SELECT g.id, g.phase, g.settings, g.result, g.created_ms, s.side FROM seats s \
             JOIN games g ON g.id = s.game_id WHERE s.player_id = $1 AND ($3 = '' OR g.variant = $3) \
             ORDER BY g.created_ms DESC, g.id LIMIT $2",
        )
        .bind(id)
        .bind(PROFILE_GAMES)
        .bind(only)
        .fetch_all(&self.pool)
        .await?;
        let name_rows = sqlx::query(
            "SELECT s.game_id, s.side, p.name FROM seats s JOIN players p ON p.id = s.player_id \
             WHERE s.game_id IN (SELECT s2.game_id FROM seats s2 JOIN games g ON g.id = s2.game_id \
             WHERE s2.player_id = $1 AND ($3 = '' OR g.variant = $3) ORDER BY g.created_ms DESC, g.id LIMIT $2)",
        )
        .bind(id)
        .bind(PROFILE_GAMES)
        .bind(only)
        .fetch_all(&self.pool)
        .await?;
        let mut names: std::collections::HashMap<String, [Option<String>; 3]> = Default::default();
        for r in &name_rows {
            let side = side_of(&r.try_get::<String, _>("side")?)?;
            names.entry(r.try_get("game_id")?).or_default()[side.index()] = Some(r.try_get("name")?);
        }
        let mut games = Vec::with_capacity(game_rows.len());
        for r in &game_rows {
            let game: String = r.try_get("id")?;
            let phase: String = r.try_get("phase")?;
            let settings: GameSettings = serde_json::from_str(&r.try_get::<String, _>("settings")?)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let side = side_of(&r.try_get::<String, _>("side")?)?;
            let result: Option<GameResult> = r
                .try_get::<Option<String>, _>("result")?
                .map(|t| serde_json::from_str(&t))
                .transpose()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            games.push(ProfileGame {
                rating_change: history
                    .iter()
                    .find(|c| c.game == game)
                    .map(|c| c.after.rating - c.before.rating),
                names: names.remove(&game).unwrap_or_default(),
                phase: Phase::parse(&phase).ok_or_else(|| StoreError::Corrupt(format!("phase {phase:?}")))?,
                variant: settings.variant,
                time_control: settings.time_control,
                rated: settings.rated,
                side,
                outcome: result.and_then(|r| r.outcomes[side.index()]),
                created_ms: r.try_get("created_ms")?,
                game,
            });
        }
        let bot = p
            .try_get::<Option<i64>, _>("bot_level")?
            .and_then(|n| u8::try_from(n).ok());
        Ok(Some(PlayerProfile {
            id: p.try_get("id")?,
            name: p.try_get("name")?,
            account: p.try_get::<Option<String>, _>("username")?.is_some(),
            bot,
            created_ms: p.try_get("created_ms")?,
            ratings,
            seats,
            games,
        }))
    }
}

fn side_of(s: &str) -> Result<Side, StoreError> {
    Side::parse(s).ok_or_else(|| StoreError::Corrupt(format!("side {s:?}")))
}
