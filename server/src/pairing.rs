//! Quick pairing (issue 16): a pool per time-control tile ("3+2", "10+5", …),
//! like lichess's quick-pairing tiles. A player presses a tile and waits; a
//! game is made as soon as three waiting players of the same tile are close
//! enough in rating — the newcomer is seated with the two waiting players
//! closest to it —, the accepted spread widening with each one's waiting
//! time. Seats are drawn at random; the game starts as the third sits down.
//! Accounts play rated games among accounts, guests casual ones among guests.
//!
//! The pool lives in memory (a seek is a few seconds of a player's patience,
//! not worth a write): a restart empties it and the clients seek again.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use protocol::players::TimeClass;
use protocol::{ErrorBody, ErrorCode, GameSettings, Side, TimeControl};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Authed};
use crate::store::{Player, StoreError};

/// The tiles: key, main time (s), increment (s).
pub const TILES: [(&str, u64, u64); 6] = [
    ("1+0", 60, 0),
    ("3+2", 180, 2),
    ("5+3", 300, 3),
    ("10+5", 600, 5),
    ("15+10", 900, 10),
    ("30+0", 1800, 0),
];

/// The spread of ratings (highest − lowest) a player accepts at first.
pub const START_SPREAD: i64 = 200;
/// How much more it accepts per second waited.
pub const SPREAD_PER_SECOND: i64 = 20;
/// How long a made match is kept for its players to fetch.
const MATCH_KEPT: Duration = Duration::from_secs(120);

/// A tile's time control.
pub fn tile_clock(key: &str) -> Option<TimeControl> {
    TILES.iter().find(|t| t.0 == key).map(|&(_, base, inc)| TimeControl {
        base_ms: base * 1000,
        increment_ms: inc * 1000,
        per_move_ms: None,
        byoyomi: None,
    })
}

/// A waiting player.
#[derive(Clone, Debug)]
struct Seeker {
    player: Player,
    tile: &'static str,
    /// Accounts (rated) and guests (casual) wait in separate pools.
    rated: bool,
    /// Its displayed rating of the tile's class (1500 without one).
    rating: i64,
    since: Instant,
}

impl Seeker {
    /// The spread it accepts after waiting until `now`.
    fn accepts(&self, now: Instant) -> i64 {
        START_SPREAD + SPREAD_PER_SECOND * now.saturating_duration_since(self.since).as_secs() as i64
    }
}

/// Where a player was seated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Seated {
    /// The game.
    pub game: String,
    /// The seat.
    pub side: Side,
}

/// The pool and the matches made.
#[derive(Debug, Default)]
pub struct Pool {
    inner: std::sync::Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    waiting: Vec<Seeker>,
    /// Players taken from the pool whose game is being made.
    starting: HashSet<String>,
    matched: HashMap<String, (Seated, Instant)>,
}

/// Three waiting players (indices into `waiting`) that may play now: for each
/// player (oldest first), the two others of its pool closest to its rating,
/// if the three's spread is within what each of them accepts.
fn find_three(waiting: &[Seeker], now: Instant) -> Option<[usize; 3]> {
    let mut order: Vec<usize> = (0..waiting.len()).collect();
    order.sort_by_key(|&i| waiting[i].since);
    for &a in &order {
        let me = &waiting[a];
        let mut others: Vec<usize> = (0..waiting.len())
            .filter(|&i| {
                i != a
                    && waiting[i].tile == me.tile
                    && waiting[i].rated == me.rated
                    && waiting[i].player.id != me.player.id
            })
            .collect();
        if others.len() < 2 {
            continue;
        }
        others.sort_by_key(|&i| ((waiting[i].rating - me.rating).abs(), waiting[i].since));
        let three = [a, others[0], others[1]];
        let ratings = three.map(|i| waiting[i].rating);
        let spread = ratings.iter().max().unwrap_or(&0) - ratings.iter().min().unwrap_or(&0);
        if three.iter().all(|&i| spread <= waiting[i].accepts(now)) {
            return Some(three);
        }
    }
    None
}

/// `POST /api/pairing`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Seek {
    tile: String,
}

/// Where the caller stands.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
#[schema(as = PairingStatus)]
enum Status {
    /// Not seeking.
    Idle,
    /// Waiting at a tile.
    Waiting {
        tile: String,
        rated: bool,
        rating: i64,
        waited_ms: u64,
    },
    /// Seated in a game made for it.
    Matched(Seated),
}

/// A tile as listed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = PairingTile)]
struct Tile {
    key: &'static str,
    time_control: TimeControl,
    class: TimeClass,
    /// Players waiting at it now.
    waiting: usize,
}

/// The routes of quick pairing.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status, seek, leave))
        .routes(routes!(tiles))
}

#[utoipa::path(
    get,
    path = "/api/pairing/tiles",
    responses(
        (status = 200, description = "the tiles and how many wait at each", body = Vec<Tile>),
    )
)]
async fn tiles(State(s): State<AppState>) -> Json<Vec<Tile>> {
    let inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
    Json(
        TILES
            .iter()
            .map(|&(key, ..)| {
                let tc = tile_clock(key).unwrap_or_default();
                Tile {
                    key,
                    time_control: tc,
                    class: TimeClass::of(&tc),
                    waiting: inner.waiting.iter().filter(|w| w.tile == key).count(),
                }
            })
            .collect(),
    )
}

/// `POST /api/pairing`: the caller waits at a tile (instead of any other).
#[utoipa::path(
    post,
    path = "/api/pairing",
    request_body = Seek,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "where the caller stands now", body = Status),
        (status = 400, description = "refused: a bad body, path or query (the words say what)", body = ErrorBody),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn seek(
    State(s): State<AppState>,
    Authed(p): Authed,
    ApiJson(q): ApiJson<Seek>,
) -> Result<Json<Status>, ApiError> {
    let Some(&(tile, ..)) = TILES.iter().find(|t| t.0 == q.tile) else {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!(
                "tile is one of {}",
                TILES.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    let class = TimeClass::of(&tile_clock(tile).unwrap_or_default());
    let rating = rating_of(&s, &p, class).await?;
    {
        let mut inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.matched.remove(&p.id);
        inner.waiting.retain(|w| w.player.id != p.id);
        inner.waiting.push(Seeker {
            rated: p.account,
            player: p.clone(),
            tile,
            rating,
            since: Instant::now(),
        });
    }
    try_pair(&s).await;
    Ok(Json(status_of(&s, &p.id)))
}

/// `GET /api/pairing`: the caller's state (pairs whoever may play by now).
#[utoipa::path(
    get,
    path = "/api/pairing",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "where the caller stands", body = Status),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn status(State(s): State<AppState>, Authed(p): Authed) -> Json<Status> {
    try_pair(&s).await;
    Json(status_of(&s, &p.id))
}

/// `DELETE /api/pairing`: the caller stops waiting.
#[utoipa::path(
    delete,
    path = "/api/pairing",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "the caller waits no more"),
        (status = 401, description = "no, an unknown or an expired session token", body = ErrorBody),
        (status = 503, description = "the store is unreachable or the server is stopping; try again soon", body = ErrorBody),
    )
)]
async fn leave(State(s): State<AppState>, Authed(p): Authed) -> impl IntoResponse {
    let mut inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
    inner.waiting.retain(|w| w.player.id != p.id);
    inner.matched.remove(&p.id);
    StatusCode::NO_CONTENT
}

fn status_of(s: &AppState, player: &str) -> Status {
    let inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seated, _)) = inner.matched.get(player) {
        return Status::Matched(seated.clone());
    }
    if let Some(w) = inner.waiting.iter().find(|w| w.player.id == player) {
        return Status::Waiting {
            tile: w.tile.to_owned(),
            rated: w.rated,
            rating: w.rating,
            waited_ms: w.since.elapsed().as_millis() as u64,
        };
    }
    if inner.starting.contains(player) {
        // Taken from the pool, its game being made: still waiting.
        return Status::Waiting {
            tile: String::new(),
            rated: false,
            rating: 0,
            waited_ms: 0,
        };
    }
    Status::Idle
}

/// A player's displayed rating of 三国象棋 in `class` (1500 without one).
async fn rating_of(s: &AppState, p: &Player, class: TimeClass) -> Result<i64, StoreError> {
    if !p.account {
        return Ok(crate::rating::displayed(crate::rating::initial()));
    }
    let row = sqlx::query("SELECT rating FROM ratings WHERE player_id = $1 AND variant = 'sanguo' AND class = $2")
        .bind(&p.id)
        .bind(class.key())
        .fetch_optional(&s.store.pool)
        .await?;
    Ok(match row {
        Some(r) => r.try_get("rating")?,
        None => crate::rating::displayed(crate::rating::initial()),
    })
}

/// Makes every game the pool allows now.
async fn try_pair(s: &AppState) {
    loop {
        let three = {
            let mut inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            inner.matched.retain(|_, (_, at)| now.duration_since(*at) < MATCH_KEPT);
            let Some(idx) = find_three(&inner.waiting, now) else {
                return;
            };
            let mut sorted = idx;
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let mut three: Vec<Seeker> = sorted.iter().map(|&i| inner.waiting.remove(i)).collect();
            three.sort_by_key(|w| w.since);
            for w in &three {
                inner.starting.insert(w.player.id.clone());
            }
            three
        };
        let made = start(s, &three).await;
        let mut inner = s.pairing.inner.lock().unwrap_or_else(|e| e.into_inner());
        for w in &three {
            inner.starting.remove(&w.player.id);
        }
        match made {
            Ok(seats) => {
                let now = Instant::now();
                for (w, seated) in three.iter().zip(seats) {
                    inner.matched.insert(w.player.id.clone(), (seated, now));
                }
                s.lobby.changed();
            }
            Err(e) => {
                tracing::error!(error = ?e.0, "quick pairing could not make a game");
                // They wait on, as they were.
                inner.waiting.extend(three);
                return;
            }
        }
    }
}

/// Creates the game of three seekers (the one who waited longest creates
/// it) and seats them at random.
async fn start(s: &AppState, three: &[Seeker]) -> Result<Vec<Seated>, ApiError> {
    let first = &three[0];
    let players: Vec<Player> = three.iter().map(|w| w.player.clone()).collect();
    let clock = tile_clock(first.tile).unwrap_or_default();
    let rated = three.iter().all(|w| w.rated);
    let out = seat_at_random(s, &players, protocol::Variant::Sanguo, clock, rated).await?;
    tracing::info!(game = %out[0].game, tile = first.tile, "quick pairing made a game");
    Ok(out)
}

/// Creates a game of `variant` on `clock` (public, the server's grace) for
/// three players matched by the server — quick pairing or an open seek — and
/// seats them at random, in their order; the first is its creator. The room
/// takes these seats as placed by the server (三国暗棋 waits for their seeds).
pub(crate) async fn seat_at_random(
    s: &AppState,
    players: &[Player],
    variant: protocol::Variant,
    clock: TimeControl,
    rated: bool,
) -> Result<Vec<Seated>, ApiError> {
    let settings = GameSettings {
        variant,
        time_control: clock,
        direction: protocol::Direction::default(),
        public: true,
        players_chat: true,
        grace_ms: s.config.grace.as_millis() as u64,
        rated,
        anqi: None,
    };
    let handle = crate::http::start_game(s, &players[0].id, settings, &[]).await?;
    let game = handle.snapshot().await?.id;
    let mut sides = Side::ALL;
    sides.shuffle(&mut rand::rng());
    let mut out = Vec::with_capacity(players.len());
    for (p, side) in players.iter().zip(sides) {
        handle.join(p.clone(), Some(side)).await?;
        out.push(Seated {
            game: game.clone(),
            side,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeker(id: &str, tile: &'static str, rating: i64, waited_s: u64, now: Instant) -> Seeker {
        Seeker {
            player: Player {
                id: id.into(),
                name: id.into(),
                account: true,
                bot: None,
            },
            tile,
            rated: true,
            rating,
            since: now - Duration::from_secs(waited_s),
        }
    }

    #[test]
    fn three_close_players_of_a_tile_are_paired_and_the_closest_two_are_chosen() {
        let now = Instant::now();
        // Two at another tile never count.
        let w = vec![
            seeker("a", "3+2", 1500, 5, now),
            seeker("b", "10+5", 1510, 5, now),
            seeker("c", "3+2", 1900, 5, now),
            seeker("d", "10+5", 1490, 5, now),
            seeker("e", "3+2", 1550, 1, now),
            seeker("f", "3+2", 1450, 0, now),
        ];
        let three = find_three(&w, now).unwrap();
        let mut ids: Vec<&str> = three.iter().map(|&i| w[i].player.id.as_str()).collect();
        ids.sort_unstable();
        assert_eq!(
            ids,
            ["a", "e", "f"],
            "1900 is too far; 1550 and 1450 are the closest to 1500"
        );
    }

    #[test]
    fn a_distant_rating_waits_until_the_spread_has_widened() {
        let now = Instant::now();
        let fresh = [
            seeker("a", "3+2", 1500, 0, now),
            seeker("b", "3+2", 1520, 0, now),
            seeker("c", "3+2", 1900, 0, now),
        ];
        assert_eq!(find_three(&fresh, now), None);
        // 400 apart: accepted by all after (400 − 200) / 20 = 10 s of waiting.
        let later = now + Duration::from_secs(10);
        assert!(find_three(&fresh, later).is_some());
        assert_eq!(find_three(&fresh, now + Duration::from_secs(9)), None);
        // Guests and accounts never meet.
        let mut mixed = fresh.to_vec();
        mixed[2].rating = 1510;
        mixed[2].rated = false;
        assert_eq!(find_three(&mixed, later), None);
    }
}
