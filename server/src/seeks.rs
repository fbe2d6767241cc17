//! Open seeks in the lobby (issue 16), like lichess's lobby hooks: a player
//! posts a seek — variant, clock, rated or casual, and an optional rating
//! range around its own rating (e.g. −500/+500) — that every lobby lists.
//! Others take it; a player whose rating of the seek's variant and class is
//! outside the range cannot (`out_of_rating_range`), nor can a guest take a
//! rated seek (`rated_needs_account`). When three have joined, the game is
//! created and started the way quick pairing does it ([`crate::http::start_game`],
//! seats drawn at random).
//!
//! A seek goes when its creator cancels it, when its creator leaves the
//! lobby (its client stops asking for the list: [`SEEN_TIMEOUT`]), or after
//! [`SEEK_TTL`]. A taker that leaves the lobby leaves the seek the same way.
//! Like quick pairing's pool, seeks live in memory: a restart empties them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use protocol::players::TimeClass;
use protocol::{ErrorBody, ErrorCode, TimeControl, Variant};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Authed};
use crate::pairing::Seated;
use crate::store::{Player, StoreError, wall_ms};

/// How long a seek stays listed at most.
pub const SEEK_TTL: Duration = Duration::from_secs(600);
/// A member whose client has not asked for the list for this long has left
/// the lobby: its seek goes (the creator) or it leaves the seek (a taker).
/// The web client asks every few seconds.
pub const SEEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The widest rating range on either side of the creator's rating.
pub const MAX_RANGE: u32 = 2000;
/// The most seeks listed at once (a flood is refused).
pub const MAX_SEEKS: usize = 500;
/// How long a started seek's game is kept for its players to fetch.
const MATCH_KEPT: Duration = Duration::from_secs(120);

/// How far below and above the creator's rating a taker's rating may be.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatingRange {
    /// Points below.
    pub below: u32,
    /// Points above.
    pub above: u32,
}

/// `POST /api/seeks`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSeek {
    /// The game system (default `sanguo`).
    #[serde(default)]
    pub variant: Option<Variant>,
    /// The clock (checked as a game's).
    pub time_control: TimeControl,
    /// Rated (accounts only; default false).
    #[serde(default)]
    pub rated: Option<bool>,
    /// Who may take it (absent: anyone).
    #[serde(default)]
    pub range: Option<RatingRange>,
}

/// A member of a seek.
#[derive(Clone, Debug)]
struct Member {
    player: Player,
    /// Its displayed rating of the seek's variant and class (1500 without one).
    rating: i64,
    /// When its client last asked for the list (or joined).
    seen: Instant,
}

/// An open seek.
#[derive(Clone, Debug)]
struct Seek {
    id: String,
    variant: Variant,
    time_control: TimeControl,
    rated: bool,
    range: Option<RatingRange>,
    /// The creator first, then the takers in order.
    members: Vec<Member>,
    created: Instant,
    created_ms: i64,
    /// Full: its game is being made.
    starting: bool,
}

impl Seek {
    fn class(&self) -> TimeClass {
        TimeClass::of(&self.time_control)
    }

    /// The ratings a taker may have: the creator's rating minus `below` to
    /// plus `above` (both included).
    fn bounds(&self) -> Option<(i64, i64)> {
        let r = self.members[0].rating;
        self.range.map(|g| (r - i64::from(g.below), r + i64::from(g.above)))
    }

    fn has(&self, player: &str) -> bool {
        self.members.iter().any(|m| m.player.id == player)
    }

    /// Why `p` (of rating `rating` in this seek's pool) may not take it.
    fn refusal(&self, p: &Player, rating: i64) -> Option<ApiError> {
        if self.has(&p.id) {
            return Some(ApiError::new(ErrorCode::AlreadySeated, "you are in this seek already"));
        }
        if self.starting || self.members.len() >= 3 {
            return Some(ApiError::new(
                ErrorCode::NotOpen,
                "this seek is full: its game is being made",
            ));
        }
        if self.rated && !p.account {
            return Some(ApiError::new(
                ErrorCode::RatedNeedsAccount,
                "a rated seek takes accounts only: sign up or log in, or take a casual one",
            ));
        }
        if let Some((lo, hi)) = self.bounds()
            && !(lo..=hi).contains(&rating)
        {
            return Some(ApiError::new(
                ErrorCode::OutOfRatingRange,
                format!("your rating {rating} is outside this seek's range {lo}–{hi}"),
            ));
        }
        None
    }
}

/// The seeks and the games made of them.
#[derive(Debug, Default)]
pub struct Seeks {
    inner: std::sync::Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    seeks: Vec<Seek>,
    /// A started seek's game, per player, until it fetched it.
    matched: HashMap<String, (Seated, Instant)>,
}

impl Inner {
    /// Drops what has timed out at `now`: seeks older than [`SEEK_TTL`],
    /// seeks whose creator left the lobby, takers who left it. A seek whose
    /// game is being made is left alone.
    fn prune(&mut self, now: Instant) {
        self.matched
            .retain(|_, (_, at)| now.saturating_duration_since(*at) < MATCH_KEPT);
        self.seeks.retain_mut(|s| {
            if s.starting {
                return true;
            }
            if now.saturating_duration_since(s.created) >= SEEK_TTL {
                return false;
            }
            let gone = |m: &Member| now.saturating_duration_since(m.seen) >= SEEN_TIMEOUT;
            if gone(&s.members[0]) {
                return false;
            }
            s.members.retain(|m| !gone(m));
            true
        });
    }

    /// `player` leaves every seek it is in except `keep` (cancelling those it
    /// created); false when one of them is being started.
    fn leave_all(&mut self, player: &str, keep: Option<&str>) -> bool {
        if self
            .seeks
            .iter()
            .any(|s| s.starting && s.has(player) && Some(s.id.as_str()) != keep)
        {
            return false;
        }
        self.seeks.retain_mut(|s| {
            if Some(s.id.as_str()) == keep || !s.has(player) {
                return true;
            }
            if s.members[0].player.id == player {
                return false;
            }
            s.members.retain(|m| m.player.id != player);
            true
        });
        true
    }

    /// Marks `player` as present in the lobby.
    fn seen(&mut self, player: &str, now: Instant) {
        for s in &mut self.seeks {
            for m in &mut s.members {
                if m.player.id == player {
                    m.seen = now;
                }
            }
        }
    }
}

/// A member as listed.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct SeekMember {
    /// Player id.
    pub player: String,
    /// Display name.
    pub name: String,
    /// Its displayed rating of the seek's variant and class.
    pub rating: i64,
}

/// What the caller may do with a listed seek.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct SeekYou {
    /// The caller's displayed rating of the seek's variant and class.
    pub rating: i64,
    /// The caller is a member (its creator or a taker).
    pub member: bool,
    /// The caller may take it now.
    pub may_join: bool,
    /// Why not (absent when it may, or is a member).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<protocol::ErrorBody>,
}

/// A seek as listed.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct SeekView {
    /// The seek's id.
    pub id: String,
    /// The game system.
    pub variant: Variant,
    /// The clock.
    pub time_control: TimeControl,
    /// Its rating class.
    pub class: TimeClass,
    /// Rated or casual.
    pub rated: bool,
    /// The range asked for (absent: anyone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<RatingRange>,
    /// The lowest rating that may take it (with a range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rating: Option<i64>,
    /// The highest rating that may take it (with a range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rating: Option<i64>,
    /// The creator first, then the takers.
    pub players: Vec<SeekMember>,
    /// Posted, ms since the Unix epoch.
    pub created_ms: i64,
    /// Left until it expires, ms.
    pub expires_in_ms: u64,
    /// The caller's standing.
    pub you: SeekYou,
}

/// `GET /api/seeks`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SeekList {
    /// Open seeks, oldest first.
    pub seeks: Vec<SeekView>,
    /// The seek the caller is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mine: Option<String>,
    /// A seek of the caller became this game (given once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Seated>,
}

/// The answer to creating or taking a seek.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SeekState {
    /// In the seek, waiting for more players.
    Waiting {
        /// The seek.
        seek: SeekView,
    },
    /// The seek is full: this is the game, and the caller's seat.
    Matched(Seated),
}

/// The routes of seeks, each documented by its `#[utoipa::path]`.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(cancel))
        .routes(routes!(join))
}

/// A player's displayed ratings by (variant, class).
type Ratings = HashMap<(String, String), i64>;

async fn ratings_of(s: &AppState, p: &Player) -> Result<Ratings, StoreError> {
    if !p.account {
        return Ok(Ratings::new());
    }
    let rows = sqlx::query("SELECT variant, class, rating FROM ratings WHERE player_id = $1")
        .bind(&p.id)
        .fetch_all(&s.store.pool)
        .await?;
    rows.iter()
        .map(|r| Ok(((r.try_get("variant")?, r.try_get("class")?), r.try_get("rating")?)))
        .collect()
}

/// The rating of `variant` and `class` in `ratings` (1500 without one).
fn rating_in(ratings: &Ratings, variant: Variant, class: TimeClass) -> i64 {
    ratings
        .get(&(variant.key().to_owned(), class.key().to_owned()))
        .copied()
        .unwrap_or_else(|| crate::rating::displayed(crate::rating::initial()))
}

fn view(seek: &Seek, p: &Player, ratings: &Ratings, now: Instant) -> SeekView {
    let rating = rating_in(ratings, seek.variant, seek.class());
    let member = seek.has(&p.id);
    let refusal = if member { None } else { seek.refusal(p, rating) };
    let bounds = seek.bounds();
    SeekView {
        id: seek.id.clone(),
        variant: seek.variant,
        time_control: seek.time_control,
        class: seek.class(),
        rated: seek.rated,
        range: seek.range,
        min_rating: bounds.map(|b| b.0),
        max_rating: bounds.map(|b| b.1),
        players: seek
            .members
            .iter()
            .map(|m| SeekMember {
                player: m.player.id.clone(),
                name: m.player.name.clone(),
                rating: m.rating,
            })
            .collect(),
        created_ms: seek.created_ms,
        expires_in_ms: SEEK_TTL
            .saturating_sub(now.saturating_duration_since(seek.created))
            .as_millis() as u64,
        you: SeekYou {
            rating,
            member,
            may_join: !member && refusal.is_none(),
            refusal: refusal.map(|e| e.0),
        },
    }
}

/// `GET /api/seeks`: the open seeks, each with what the caller may do (and
/// the caller is marked present in the lobby).
/// `GET /api/seeks`: the open seeks, each with what the caller may do.
#[utoipa::path(
    get,
    path = "/api/seeks",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the open seeks (oldest first), the caller's own and a match given once", body = SeekList),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn list(State(s): State<AppState>, Authed(p): Authed) -> Result<Json<SeekList>, ApiError> {
    let ratings = ratings_of(&s, &p).await?;
    let now = Instant::now();
    let mut inner = s.seeks.inner.lock().unwrap_or_else(|e| e.into_inner());
    inner.seen(&p.id, now);
    inner.prune(now);
    let matched = inner.matched.remove(&p.id).map(|(m, _)| m);
    Ok(Json(SeekList {
        seeks: inner.seeks.iter().map(|k| view(k, &p, &ratings, now)).collect(),
        mine: inner.seeks.iter().find(|k| k.has(&p.id)).map(|k| k.id.clone()),
        matched,
    }))
}

/// `POST /api/seeks`: posts a seek (leaving any other seek of the caller).
/// `POST /api/seeks`: posts a seek.
#[utoipa::path(
    post,
    path = "/api/seeks",
    request_body = CreateSeek,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "the seek, waiting for takers", body = SeekState),
        (status = 400, description = "refused: a bad body, clock or range (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "rated_needs_account: a guest's rated seek", body = ErrorBody),
        (status = 409, description = "not_open: a seek of the caller is being started", body = ErrorBody),
        (status = 422, description = "variant_unavailable: the variant is not playable here", body = ErrorBody),
        (status = 503, description = "busy (too many open seeks), or the store is unreachable; try again soon", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<AppState>,
    Authed(p): Authed,
    ApiJson(c): ApiJson<CreateSeek>,
) -> Result<impl IntoResponse, ApiError> {
    crate::http::check_time_control(&c.time_control, &s.config.clock_minimums)?;
    let variant = c.variant.unwrap_or_default();
    crate::room::check_playable(variant)?;
    let rated = c.rated.unwrap_or(false);
    if rated && !p.account {
        return Err(ApiError::new(
            ErrorCode::RatedNeedsAccount,
            "a rated seek takes accounts only: sign up or log in, or post a casual one",
        ));
    }
    if let Some(r) = c.range
        && (r.below > MAX_RANGE || r.above > MAX_RANGE)
    {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("a rating range is 0 to {MAX_RANGE} points below and above"),
        ));
    }
    let ratings = ratings_of(&s, &p).await?;
    let now = Instant::now();
    let mut inner = s.seeks.inner.lock().unwrap_or_else(|e| e.into_inner());
    inner.prune(now);
    if !inner.leave_all(&p.id, None) {
        return Err(ApiError::new(
            ErrorCode::NotOpen,
            "a seek of yours is full and its game is being made",
        ));
    }
    if inner.seeks.len() >= MAX_SEEKS {
        return Err(ApiError::new(ErrorCode::Busy, "too many open seeks: try again soon"));
    }
    let class = TimeClass::of(&c.time_control);
    let seek = Seek {
        id: crate::http::random_hex(6),
        variant,
        time_control: c.time_control,
        rated,
        range: c.range,
        members: vec![Member {
            player: p.clone(),
            rating: rating_in(&ratings, variant, class),
            seen: now,
        }],
        created: now,
        created_ms: wall_ms(),
        starting: false,
    };
    let out = view(&seek, &p, &ratings, now);
    inner.seeks.push(seek);
    tracing::info!(seek = %out.id, player = %p.id, rated, "seek posted");
    Ok((StatusCode::CREATED, Json(SeekState::Waiting { seek: out })))
}

/// `DELETE /api/seeks/{id}`: the creator cancels its seek; a taker leaves it.
/// `DELETE /api/seeks/{id}`: its creator cancels the seek; a taker leaves it.
#[utoipa::path(
    delete,
    path = "/api/seeks/{id}",
    params(("id" = String, Path, description = "the seek's id")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "cancelled or left"),
        (status = 400, description = "refused: a bad path (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 404, description = "the caller is in no such seek", body = ErrorBody),
        (status = 409, description = "not_open: the seek is full and its game is being made", body = ErrorBody),
    )
)]
async fn cancel(State(s): State<AppState>, Authed(p): Authed, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let mut inner = s.seeks.inner.lock().unwrap_or_else(|e| e.into_inner());
    inner.prune(Instant::now());
    let Some(k) = inner.seeks.iter().position(|k| k.id == id && k.has(&p.id)) else {
        return Err(ApiError::new(ErrorCode::NotFound, "you are in no such seek"));
    };
    if inner.seeks[k].starting {
        return Err(ApiError::new(
            ErrorCode::NotOpen,
            "this seek is full: its game is being made",
        ));
    }
    if inner.seeks[k].members[0].player.id == p.id {
        inner.seeks.remove(k);
    } else {
        inner.seeks[k].members.retain(|m| m.player.id != p.id);
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/seeks/{id}/join`: takes a seek (leaving any other of the
/// caller's). The third taker starts the game.
/// `POST /api/seeks/{id}/join`: takes a seek; the third taker starts the game.
#[utoipa::path(
    post,
    path = "/api/seeks/{id}/join",
    params(("id" = String, Path, description = "the seek's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "waiting in the seek, or matched: the game and the caller's seat", body = SeekState),
        (status = 400, description = "refused: a bad path (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 403, description = "out_of_rating_range, or rated_needs_account", body = ErrorBody),
        (status = 404, description = "no such seek: cancelled, expired or started", body = ErrorBody),
        (status = 409, description = "already_seated (in it already) or not_open (full)", body = ErrorBody),
        (status = 422, description = "the game could not be made", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn join(
    State(s): State<AppState>,
    Authed(p): Authed,
    Path(id): Path<String>,
) -> Result<Json<SeekState>, ApiError> {
    let ratings = ratings_of(&s, &p).await?;
    let now = Instant::now();
    let seek = {
        let mut inner = s.seeks.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.prune(now);
        let Some(k) = inner.seeks.iter().position(|k| k.id == id) else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                "no such seek: it was cancelled, expired or started",
            ));
        };
        let seek = &inner.seeks[k];
        let rating = rating_in(&ratings, seek.variant, seek.class());
        if let Some(e) = seek.refusal(&p, rating) {
            return Err(e);
        }
        if !inner.leave_all(&p.id, Some(id.as_str())) {
            return Err(ApiError::new(
                ErrorCode::NotOpen,
                "a seek of yours is full and its game is being made",
            ));
        }
        let k = inner
            .seeks
            .iter()
            .position(|k| k.id == id)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such seek"))?;
        let seek = &mut inner.seeks[k];
        seek.members.push(Member {
            player: p.clone(),
            rating,
            seen: now,
        });
        if seek.members.len() < 3 {
            return Ok(Json(SeekState::Waiting {
                seek: view(seek, &p, &ratings, now),
            }));
        }
        seek.starting = true;
        seek.clone()
    };
    let made = start(&s, &seek).await;
    let mut inner = s.seeks.inner.lock().unwrap_or_else(|e| e.into_inner());
    match made {
        Ok(seats) => {
            inner.seeks.retain(|k| k.id != seek.id);
            let at = Instant::now();
            let mut mine = None;
            for (m, seated) in seek.members.iter().zip(seats) {
                if m.player.id == p.id {
                    mine = Some(seated.clone());
                } else {
                    inner.matched.insert(m.player.id.clone(), (seated, at));
                }
            }
            drop(inner);
            s.lobby.changed();
            mine.map(|m| Json(SeekState::Matched(m)))
                .ok_or_else(|| ApiError::new(ErrorCode::Internal, "the taker has no seat"))
        }
        Err(e) => {
            // The seek stays open without the last taker.
            if let Some(k) = inner.seeks.iter_mut().find(|k| k.id == seek.id) {
                k.starting = false;
                k.members.retain(|m| m.player.id != p.id);
            }
            tracing::error!(seek = %seek.id, error = ?e.0, "a seek's game could not be made");
            Err(e)
        }
    }
}

/// Creates a full seek's game (its creator creates it) and seats the three
/// at random — as quick pairing does.
async fn start(s: &AppState, seek: &Seek) -> Result<Vec<Seated>, ApiError> {
    let players: Vec<Player> = seek.members.iter().map(|m| m.player.clone()).collect();
    let out = crate::pairing::seat_at_random(s, &players, seek.variant, seek.time_control, seek.rated).await?;
    tracing::info!(game = %out[0].game, seek = %seek.id, "a seek made a game");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str, account: bool) -> Player {
        Player {
            id: id.into(),
            name: id.into(),
            account,
            bot: None,
        }
    }

    fn seek(rating: i64, range: Option<(u32, u32)>, rated: bool, now: Instant) -> Seek {
        Seek {
            id: "s".into(),
            variant: Variant::Sanguo,
            time_control: TimeControl {
                base_ms: 180_000,
                increment_ms: 2_000,
                per_move_ms: None,
                byoyomi: None,
            },
            rated,
            range: range.map(|(below, above)| RatingRange { below, above }),
            members: vec![Member {
                player: player("creator", true),
                rating,
                seen: now,
            }],
            created: now,
            created_ms: 0,
            starting: false,
        }
    }

    fn code(e: Option<ApiError>) -> Option<ErrorCode> {
        e.map(|e| e.0.code)
    }

    #[test]
    fn a_range_admits_ratings_within_it_both_ends_included() {
        let now = Instant::now();
        let k = seek(1600, Some((500, 200)), true, now);
        assert_eq!(k.bounds(), Some((1100, 1800)));
        let p = player("p", true);
        for (rating, ok) in [(1100, true), (1800, true), (1600, true), (1099, false), (1801, false)] {
            let got = code(k.refusal(&p, rating));
            assert_eq!(got, (!ok).then_some(ErrorCode::OutOfRatingRange), "{rating}");
        }
        // No range: anyone.
        assert_eq!(code(seek(1600, None, true, now).refusal(&p, 3000)), None);
        // A guest cannot take a rated seek; a casual one it can.
        let guest = player("g", false);
        assert_eq!(code(k.refusal(&guest, 1500)), Some(ErrorCode::RatedNeedsAccount));
        assert_eq!(code(seek(1500, Some((0, 0)), false, now).refusal(&guest, 1500)), None);
        // A member cannot take it again; a full one nobody can.
        assert_eq!(
            code(k.refusal(&player("creator", true), 1600)),
            Some(ErrorCode::AlreadySeated)
        );
        let mut full = k.clone();
        full.starting = true;
        assert_eq!(code(full.refusal(&p, 1600)), Some(ErrorCode::NotOpen));
    }

    #[test]
    fn seeks_go_when_their_creator_leaves_the_lobby_or_they_expire() {
        let t0 = Instant::now();
        let mut inner = Inner::default();
        let mut a = seek(1500, None, false, t0);
        a.id = "a".into();
        a.members.push(Member {
            player: player("taker", true),
            rating: 1500,
            seen: t0,
        });
        let mut b = a.clone();
        b.id = "b".into();
        b.members[0].player = player("other", true);
        inner.seeks = vec![a, b];
        // 20 s later: a's creator and b's taker asked again; nothing goes.
        let t1 = t0 + Duration::from_secs(20);
        inner.seen("creator", t1);
        inner.prune(t1);
        assert_eq!(inner.seeks.len(), 2);
        // 35 s: b's creator is gone (so is b); a's taker left a, a stays.
        let t2 = t0 + Duration::from_secs(35);
        inner.prune(t2);
        assert_eq!(inner.seeks.iter().map(|k| k.id.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(inner.seeks[0].members.len(), 1);
        // Past the TTL it goes even while its creator is here.
        let t3 = t0 + SEEK_TTL;
        inner.seen("creator", t3);
        inner.prune(t3);
        assert!(inner.seeks.is_empty());
    }

    #[test]
    fn a_player_is_in_one_seek_at_a_time() {
        let now = Instant::now();
        let mut inner = Inner::default();
        let mut mine = seek(1500, None, false, now);
        mine.id = "mine".into();
        let mut theirs = seek(1500, None, false, now);
        theirs.id = "theirs".into();
        theirs.members[0].player = player("other", true);
        theirs.members.push(Member {
            player: player("creator", true),
            rating: 1500,
            seen: now,
        });
        inner.seeks = vec![mine, theirs];
        // Leaving all but "theirs": its own seek is cancelled, it stays in "theirs".
        assert!(inner.leave_all("creator", Some("theirs")));
        assert_eq!(inner.seeks.len(), 1);
        assert!(inner.seeks[0].has("creator"));
        // Leaving all: it leaves "theirs", which stays for its creator.
        assert!(inner.leave_all("creator", None));
        assert_eq!(inner.seeks[0].members.len(), 1);
        // A seek being started is not left.
        inner.seeks[0].starting = true;
        assert!(!inner.leave_all("other", None));
    }
}
