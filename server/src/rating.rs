//! Ratings (issue 16, `docs/RATINGS.md`): a finished rated game's result as a
//! ranking, rated by the `skillratings` crate's multi-team Weng-Lin function
//! with one player per team, and the rating as shown.
//!
//! The pure part (ranking, rating, display) is here; the store applies it in
//! the transaction that writes the game's phase `finished` ([`apply`]), so a
//! game is rated exactly once, together with its result, or not at all.

use protocol::players::{RatingChange, ShownRating, TimeClass};
use protocol::{Ending, GameResult, GameSettings, Outcome, Side};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use sqlx::{AnyConnection, Row};

use crate::store::{Store, StoreError};

/// Display scale: 1 μ unit is 42 points, so the start σ = 25/3 shows as 350
/// (lichess's start deviation) and μ = 25 as 1500.
pub const SCALE: f64 = 42.0;
/// The displayed rating of μ = 25.
pub const CENTRE: f64 = 1500.0;
/// A rating is provisional (shown with "?", left off the leaderboards)
/// while its deviation (42 σ) is above this, as lichess does with its RD
/// (at 110 there): about 20 rated games at equal ratings, where 110 would
/// take some 36 (docs/RATINGS.md).
pub const PROVISIONAL_DEVIATION: i64 = 150;

/// A start rating: μ = 25, σ = 25/3.
pub fn initial() -> WengLinRating {
    WengLinRating::new()
}

/// A rating as shown.
pub fn shown(r: WengLinRating) -> ShownRating {
    ShownRating {
        rating: displayed(r),
        deviation: deviation(r),
        provisional: deviation(r) > PROVISIONAL_DEVIATION,
        mu: r.rating,
        sigma: r.uncertainty,
    }
}

/// The displayed deviation: round(42 σ).
pub fn deviation(r: WengLinRating) -> i64 {
    (SCALE * r.uncertainty).round() as i64
}

/// The displayed rating: round(1500 + 42 (μ − 25)).
pub fn displayed(r: WengLinRating) -> i64 {
    (CENTRE + SCALE * (r.rating - 25.0)).round() as i64
}

/// The places (1 = first, ties share a place) that a result gives the sides
/// W, B, Y; `None` for a result that is never rated (aborted, annulled).
///
/// The order: wins, then draws, then losses; among losses, the side that
/// stayed longer ranks higher — a loser that never left (an adjudicated
/// loss) above every side that left, a side eliminated later above one
/// eliminated earlier, and sides that left at the same ply (the draw-offer
/// rule's offerer and accepter) tie. So: last standing → the winner, the side
/// eliminated last, the side eliminated first; a draw after an elimination →
/// the drawn sides tie for first, the eliminated side third; the draw-offer
/// rule → the decliner first, offerer and accepter tie for second (or the one
/// eliminated before the vote third); adjudication → the arbiter's outcomes,
/// losers by the same rule.
pub fn ranking(result: &GameResult) -> Option<[u32; 3]> {
    if matches!(result.ending, Ending::Aborted { .. } | Ending::Annulled) {
        return None;
    }
    // A variant that places its seats (三国暗棋's placing, ties shared;
    // 三国演弈棋's) gives the ranking itself.
    if let Some(placing) = result.placing {
        return Some(placing.map(u32::from));
    }
    let mut keys = [(0u8, 0u32); 3];
    for side in Side::ALL {
        let outcome = result.outcomes[side.index()]?;
        // Later departure = stayed longer = smaller key; never left: smallest.
        let left_at = result
            .eliminations
            .iter()
            .find(|d| d.side == side)
            .map_or(0, |d| u32::MAX - d.ply);
        keys[side.index()] = match outcome {
            Outcome::Win => (0, 0),
            Outcome::Draw => (1, 0),
            Outcome::Loss => (2, left_at),
        };
    }
    Some(keys.map(|k| 1 + keys.iter().filter(|o| **o < k).count() as u32))
}

/// New ratings of three players after a game that placed them `ranks`:
/// `weng_lin_multi_team` with one player per team and the crate's default
/// configuration (β = 25/6).
pub fn rate(before: [WengLinRating; 3], ranks: [u32; 3]) -> [WengLinRating; 3] {
    let teams = before.map(|r| [r]);
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(ranks)
        .map(|(t, r)| (&t[..], MultiTeamOutcome::new(r as usize)))
        .collect();
    let out = weng_lin_multi_team(&input, &WengLinConfig::new());
    [out[0][0], out[1][0], out[2][0]]
}

/// A stored float (TEXT: Rust's shortest text that reads back exactly).
fn float(s: &str) -> Result<f64, StoreError> {
    s.parse()
        .map_err(|_| StoreError::Corrupt(format!("rating value {s:?}")))
}

/// Rates a game that has just been written `finished` with `result`, on the
/// connection of that write's transaction: nothing for a casual game or a
/// result never rated, nothing again for a game already rated (its rating
/// changes are keyed by game), else each player's rating of the game's
/// variant and class is read (its row locked, created at the start rating
/// when missing), moved by [`rate`], written back, and the change stored.
///
/// Rows are locked in player-id order, so two games finishing together with
/// a player in common wait for each other rather than lose an update.
pub(crate) async fn apply(
    conn: &mut AnyConnection,
    game: &str,
    result: &GameResult,
    wall_ms: i64,
) -> Result<(), StoreError> {
    let Some(ranks) = ranking(result) else {
        return Ok(());
    };
    let Some(row) = sqlx::query("SELECT settings FROM games WHERE id = $1")
        .bind(game)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(());
    };
    let settings: GameSettings =
        serde_json::from_str(&row.try_get::<String, _>("settings")?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if !settings.rated {
        return Ok(());
    }
    let done: i64 = sqlx::query("SELECT COUNT(*) AS n FROM rating_changes WHERE game_id = $1")
        .bind(game)
        .fetch_one(&mut *conn)
        .await?
        .try_get("n")?;
    if done > 0 {
        // Rated already: the end written again is an arbiter's correction.
        return rerate(conn, game, ranks, wall_ms).await;
    }
    let seat_rows = sqlx::query(
        "SELECT s.side, s.player_id, p.username, p.bot_level FROM seats s JOIN players p ON p.id = s.player_id \
         WHERE s.game_id = $1",
    )
    .bind(game)
    .fetch_all(&mut *conn)
    .await?;
    let mut players: [Option<String>; 3] = Default::default();
    for r in &seat_rows {
        let side: String = r.try_get("side")?;
        let side = Side::parse(&side).ok_or_else(|| StoreError::Corrupt(format!("side {side:?}")))?;
        let account = r.try_get::<Option<String>, _>("username")?.is_some()
            && r.try_get::<Option<i64>, _>("bot_level")?.is_none();
        if account {
            players[side.index()] = Some(r.try_get("player_id")?);
        }
    }
    let [Some(w), Some(b), Some(y)] = players else {
        // Creation and joins refuse anyone else at a rated game's seat.
        tracing::warn!(%game, "a rated game without three accounts is left unrated");
        return Ok(());
    };
    let players = [w, b, y];
    let variant = settings.variant.key();
    let class = TimeClass::of(&settings.time_control).key();
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| players[a].cmp(&players[b]));
    let start = initial();
    let mut before = [start; 3];
    for i in order {
        // Creates the row at the start rating, or locks it and reads it.
        let r = sqlx::query(
            "INSERT INTO ratings (player_id, variant, class, mu, sigma, rating, deviation, games, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8) \
             ON CONFLICT (player_id, variant, class) DO UPDATE SET games = ratings.games \
             RETURNING mu, sigma",
        )
        .bind(players[i].as_str())
        .bind(variant)
        .bind(class)
        .bind(start.rating.to_string())
        .bind(start.uncertainty.to_string())
        .bind(displayed(start))
        .bind(deviation(start))
        .bind(wall_ms)
        .fetch_one(&mut *conn)
        .await?;
        before[i] = WengLinRating {
            rating: float(&r.try_get::<String, _>("mu")?)?,
            uncertainty: float(&r.try_get::<String, _>("sigma")?)?,
        };
    }
    let after = rate(before, ranks);
    for i in 0..3 {
        sqlx::query(
            "UPDATE ratings SET mu = $1, sigma = $2, rating = $3, deviation = $4, games = games + 1, updated_ms = $5 \
             WHERE player_id = $6 AND variant = $7 AND class = $8",
        )
        .bind(after[i].rating.to_string())
        .bind(after[i].uncertainty.to_string())
        .bind(displayed(after[i]))
        .bind(deviation(after[i]))
        .bind(wall_ms)
        .bind(players[i].as_str())
        .bind(variant)
        .bind(class)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO rating_changes (game_id, player_id, side, variant, class, rank, mu_before, sigma_before, \
             mu_after, sigma_after, rating_before, rating_after, wall_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(game)
        .bind(players[i].as_str())
        .bind(Side::ALL[i].as_str())
        .bind(variant)
        .bind(class)
        .bind(i64::from(ranks[i]))
        .bind(before[i].rating.to_string())
        .bind(before[i].uncertainty.to_string())
        .bind(after[i].rating.to_string())
        .bind(after[i].uncertainty.to_string())
        .bind(displayed(before[i]))
        .bind(displayed(after[i]))
        .bind(wall_ms)
        .execute(&mut *conn)
        .await?;
    }
    tracing::info!(%game, variant, class, ?ranks, "game rated");
    Ok(())
}

/// A rated game as [`rerate`] replays it: its players at W, B, Y, the
/// places stored, and the ratings they had before it.
#[derive(Clone, Debug, PartialEq)]
struct Replayed {
    game: String,
    players: [String; 3],
    ranks: [u32; 3],
    before: [WengLinRating; 3],
}

/// The games whose ratings change when `first` (the first of `games`, in the
/// order they were rated) is rated anew: `first`, then every later game with
/// a player whose rating changed by then (its three players' ratings change
/// in turn). Indices into `games`, in order.
fn cascade(games: &[Replayed]) -> Vec<usize> {
    let mut touched: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (k, g) in games.iter().enumerate() {
        if k == 0 || g.players.iter().any(|p| touched.contains(p.as_str())) {
            touched.extend(g.players.iter().map(String::as_str));
            out.push(k);
        }
    }
    out
}

/// Rates anew a game rated before whose result an arbiter corrected
/// (`ranks`: the corrected places). The game keeps its place in the order of
/// rating (its first rating's time): its changes are computed again from the
/// ratings its players had before it, and so is every later game of its
/// rating pool (variant and class) whose players' ratings changed as a
/// result ([`cascade`]), each with the places it had; the players' current
/// ratings become the replay's last values. Their game counts are unchanged.
///
/// The rating rows of every player of the replay are locked first (the same
/// no-op update as [`apply`]'s), and the replay's games read again under the
/// lock until no new player appears, so no game finishing meanwhile is lost.
async fn rerate(conn: &mut AnyConnection, game: &str, ranks: [u32; 3], wall_ms: i64) -> Result<(), StoreError> {
    let first = sqlx::query("SELECT variant, class, wall_ms FROM rating_changes WHERE game_id = $1")
        .bind(game)
        .fetch_one(&mut *conn)
        .await?;
    let variant: String = first.try_get("variant")?;
    let class: String = first.try_get("class")?;
    let at: i64 = first.try_get("wall_ms")?;
    let mut locked: std::collections::BTreeSet<String> = Default::default();
    let games = loop {
        let rows = sqlx::query(
            "SELECT game_id, player_id, side, rank, mu_before, sigma_before FROM rating_changes \
             WHERE variant = $1 AND class = $2 AND (wall_ms > $3 OR (wall_ms = $3 AND game_id >= $4)) \
             ORDER BY wall_ms, game_id",
        )
        .bind(variant.as_str())
        .bind(class.as_str())
        .bind(at)
        .bind(game)
        .fetch_all(&mut *conn)
        .await?;
        let mut games: Vec<Replayed> = Vec::new();
        for r in &rows {
            let id: String = r.try_get("game_id")?;
            if games.last().is_none_or(|g| g.game != id) {
                games.push(Replayed {
                    game: id,
                    players: Default::default(),
                    ranks: [0; 3],
                    before: [initial(); 3],
                });
            }
            let g = games.last_mut().expect("pushed");
            let side: String = r.try_get("side")?;
            let i = Side::parse(&side)
                .ok_or_else(|| StoreError::Corrupt(format!("side {side:?}")))?
                .index();
            g.players[i] = r.try_get("player_id")?;
            g.ranks[i] = r.try_get::<i64, _>("rank")? as u32;
            g.before[i] = WengLinRating {
                rating: float(&r.try_get::<String, _>("mu_before")?)?,
                uncertainty: float(&r.try_get::<String, _>("sigma_before")?)?,
            };
        }
        if games.first().is_none_or(|g| g.game != game) {
            return Err(StoreError::Corrupt(format!("rating changes of {game} vanished")));
        }
        if games[0].ranks == ranks {
            // The same places: nothing changes.
            return Ok(());
        }
        let replay: Vec<Replayed> = cascade(&games).into_iter().map(|k| games[k].clone()).collect();
        let players: std::collections::BTreeSet<String> =
            replay.iter().flat_map(|g| g.players.iter().cloned()).collect();
        let new: Vec<String> = players.difference(&locked).cloned().collect();
        if new.is_empty() {
            break replay;
        }
        for p in new {
            sqlx::query("UPDATE ratings SET games = games WHERE player_id = $1 AND variant = $2 AND class = $3")
                .bind(p.as_str())
                .bind(variant.as_str())
                .bind(class.as_str())
                .execute(&mut *conn)
                .await?;
            locked.insert(p);
        }
    };
    let mut now: std::collections::HashMap<String, WengLinRating> = Default::default();
    for (k, g) in games.iter().enumerate() {
        let before: [WengLinRating; 3] =
            std::array::from_fn(|i| now.get(&g.players[i]).copied().unwrap_or(g.before[i]));
        let places = if k == 0 { ranks } else { g.ranks };
        let after = rate(before, places);
        for i in 0..3 {
            sqlx::query(
                "UPDATE rating_changes SET rank = $1, mu_before = $2, sigma_before = $3, mu_after = $4, \
                 sigma_after = $5, rating_before = $6, rating_after = $7 WHERE game_id = $8 AND player_id = $9",
            )
            .bind(i64::from(places[i]))
            .bind(before[i].rating.to_string())
            .bind(before[i].uncertainty.to_string())
            .bind(after[i].rating.to_string())
            .bind(after[i].uncertainty.to_string())
            .bind(displayed(before[i]))
            .bind(displayed(after[i]))
            .bind(g.game.as_str())
            .bind(g.players[i].as_str())
            .execute(&mut *conn)
            .await?;
            now.insert(g.players[i].clone(), after[i]);
        }
    }
    for (p, r) in &now {
        sqlx::query(
            "UPDATE ratings SET mu = $1, sigma = $2, rating = $3, deviation = $4, updated_ms = $5 \
             WHERE player_id = $6 AND variant = $7 AND class = $8",
        )
        .bind(r.rating.to_string())
        .bind(r.uncertainty.to_string())
        .bind(displayed(*r))
        .bind(deviation(*r))
        .bind(wall_ms)
        .bind(p.as_str())
        .bind(variant.as_str())
        .bind(class.as_str())
        .execute(&mut *conn)
        .await?;
    }
    tracing::info!(%game, variant, class, ?ranks, replayed = games.len(), "game rated anew after a correction");
    Ok(())
}

/// A row of `rating_changes` as the API shows it.
fn change_row(r: &sqlx::any::AnyRow) -> Result<RatingChange, StoreError> {
    let side: String = r.try_get("side")?;
    let variant: String = r.try_get("variant")?;
    let class: String = r.try_get("class")?;
    let rating = |mu: &str, sigma: &str| -> Result<ShownRating, StoreError> {
        Ok(shown(WengLinRating {
            rating: float(&r.try_get::<String, _>(mu)?)?,
            uncertainty: float(&r.try_get::<String, _>(sigma)?)?,
        }))
    };
    Ok(RatingChange {
        game: r.try_get("game_id")?,
        player: r.try_get("player_id")?,
        side: Side::parse(&side).ok_or_else(|| StoreError::Corrupt(format!("side {side:?}")))?,
        variant: variant
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("variant {variant:?}")))?,
        class: TimeClass::parse(&class).ok_or_else(|| StoreError::Corrupt(format!("class {class:?}")))?,
        rank: r.try_get::<i64, _>("rank")? as u32,
        before: rating("mu_before", "sigma_before")?,
        after: rating("mu_after", "sigma_after")?,
        wall_ms: r.try_get("wall_ms")?,
    })
}

/// The columns [`change_row`] reads.
const CHANGE_COLUMNS: &str = "game_id, player_id, side, variant, class, rank, mu_before, sigma_before, mu_after, \
                              sigma_after, wall_ms";

impl Store {
    /// A game's rating changes, W, B, Y order (empty: not rated).
    pub async fn rating_changes_of_game(&self, game: &str) -> Result<Vec<RatingChange>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {CHANGE_COLUMNS} FROM rating_changes WHERE game_id = $1 ORDER BY side"
        ))
        .bind(game)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<RatingChange> = rows.iter().map(change_row).collect::<Result<_, _>>()?;
        out.sort_by_key(|c| c.side.index());
        Ok(out)
    }

    /// A player's rating changes, oldest first.
    pub async fn rating_history(&self, player: &str) -> Result<Vec<RatingChange>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {CHANGE_COLUMNS} FROM rating_changes WHERE player_id = $1 ORDER BY wall_ms, game_id"
        ))
        .bind(player)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(change_row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{Departure, DrawReason, EliminationReason};

    fn gone(side: Side, reason: EliminationReason, ply: u32) -> Departure {
        Departure {
            side,
            reason,
            ply,
            absorbed_by: None,
        }
    }

    fn result(ending: Ending, outcomes: [Option<Outcome>; 3], eliminations: Vec<Departure>) -> GameResult {
        GameResult {
            ending,
            outcomes,
            eliminations,
            no_shows: Vec::new(),
            placing: None,
            scores: None,
        }
    }

    use EliminationReason as R;
    use Outcome::{Draw as D, Loss as L, Win as Wn};

    /// Every ending and the places it gives W, B, Y.
    #[test]
    fn every_ending_gives_its_ranking() {
        let cases: Vec<(&str, GameResult, Option<[u32; 3]>)> = vec![
            (
                "last standing: Y wins, W mated at 60, B resigned at 90",
                result(
                    Ending::LastStanding { winner: Side::Y },
                    [Some(L), Some(L), Some(Wn)],
                    vec![gone(Side::W, R::Mate, 60), gone(Side::B, R::Resign, 90)],
                ),
                Some([3, 2, 1]),
            ),
            (
                "last standing by time and abandonment",
                result(
                    Ending::LastStanding { winner: Side::W },
                    [Some(Wn), Some(L), Some(L)],
                    vec![gone(Side::Y, R::Time, 30), gone(Side::B, R::Abandon, 31)],
                ),
                Some([1, 2, 3]),
            ),
            (
                "agreed draw of all three",
                result(
                    Ending::Draw {
                        reason: DrawReason::Agreement,
                    },
                    [Some(D); 3],
                    vec![],
                ),
                Some([1, 1, 1]),
            ),
            (
                "a draw of two after the third was eliminated",
                result(
                    Ending::Draw {
                        reason: DrawReason::Length,
                    },
                    [Some(L), Some(D), Some(D)],
                    vec![gone(Side::W, R::Mate, 60)],
                ),
                Some([3, 1, 1]),
            ),
            (
                "the draw-offer rule: the decliner wins, offerer and accepter tie",
                result(
                    Ending::DrawOfferRule { winner: Side::Y },
                    [Some(L), Some(L), Some(Wn)],
                    vec![gone(Side::W, R::DrawOfferRule, 46), gone(Side::B, R::DrawOfferRule, 46)],
                ),
                Some([2, 2, 1]),
            ),
            (
                "the draw-offer rule after an elimination",
                result(
                    Ending::DrawOfferRule { winner: Side::B },
                    [Some(L), Some(Wn), Some(L)],
                    vec![gone(Side::Y, R::Time, 20), gone(Side::W, R::DrawOfferRule, 70)],
                ),
                Some([2, 1, 3]),
            ),
            (
                "adjudicated: one win, a loser still in above one eliminated",
                result(
                    Ending::Adjudicated,
                    [Some(L), Some(Wn), Some(L)],
                    vec![gone(Side::W, R::Time, 12)],
                ),
                Some([3, 1, 2]),
            ),
            (
                "adjudicated: two draws and a loss",
                result(Ending::Adjudicated, [Some(D), Some(L), Some(D)], vec![]),
                Some([1, 3, 1]),
            ),
            (
                "aborted: never rated",
                result(Ending::Aborted { by: Side::B }, [None; 3], vec![]),
                None,
            ),
            (
                "annulled by an arbiter: never rated",
                result(Ending::Annulled, [None; 3], vec![gone(Side::W, R::Mate, 9)]),
                None,
            ),
            (
                "a variant that places its seats (三国暗棋 scoring: a tie for second)",
                GameResult {
                    placing: Some([2, 1, 2]),
                    ..result(Ending::Adjudicated, [Some(L), Some(Wn), Some(L)], vec![])
                },
                Some([2, 1, 2]),
            ),
        ];
        for (what, r, want) in cases {
            assert_eq!(ranking(&r), want, "{what}");
        }
    }

    #[test]
    fn a_win_moves_ratings_as_the_crate_does_and_shows_on_lichess_scale() {
        let start = initial();
        assert_eq!(
            shown(start),
            ShownRating {
                rating: 1500,
                deviation: 350,
                provisional: true,
                mu: 25.0,
                sigma: 25.0 / 3.0
            }
        );
        let after = rate([start; 3], [1, 2, 3]);
        assert!(after[0].rating > after[1].rating && after[1].rating > after[2].rating);
        assert!(
            (after[1].rating - 25.0).abs() < 1e-9,
            "the middle of three equals stays put"
        );
        assert!(after.iter().all(|r| r.uncertainty < start.uncertainty));
        let tie = rate([start; 3], [1, 1, 1]);
        assert!(tie.iter().all(|r| (r.rating - 25.0).abs() < 1e-9));
    }

    /// On the store (SQLite here; Postgres in tests/tests/ratings.rs): the
    /// commit that finishes a rated game rates it, once however often the end
    /// is written again; a casual game's end rates nobody.
    #[tokio::test]
    async fn the_commit_that_finishes_a_rated_game_rates_it_once() {
        use crate::store::Op;
        use protocol::{Phase, TimeControl};
        let path = std::env::temp_dir().join(format!("sanguo-rating-{}.sqlite", rand::random::<u64>()));
        let store = Store::connect(
            &format!("sqlite://{}?mode=rwc", path.display()),
            crate::metrics::Metrics::default(),
        )
        .await
        .expect("store");
        let players = ["pa", "pb", "pc"];
        for p in players {
            store
                .create_player(p, p, Some((p, "hash")), &format!("token-{p}"))
                .await
                .expect("player");
        }
        let settings = |rated| GameSettings {
            variant: Default::default(),
            time_control: TimeControl {
                base_ms: 180_000,
                increment_ms: 2_000,
                per_move_ms: None,
                byoyomi: None,
            },
            direction: Default::default(),
            public: true,
            players_chat: true,
            grace_ms: 60_000,
            rated,
            anqi: None,
        };
        let result = result(
            Ending::LastStanding { winner: Side::Y },
            [Some(L), Some(L), Some(Wn)],
            vec![gone(Side::W, R::Mate, 10), gone(Side::B, R::Resign, 20)],
        );
        let finish = vec![Op::Phase {
            phase: Phase::Finished,
            result: Some(result),
            wall_ms: 5,
        }];
        for (game, rated) in [("rated", true), ("casual", false)] {
            store
                .create_game(game, "pa", &settings(rated), "start", None)
                .await
                .expect("game");
            let seats: Vec<Op> = Side::ALL
                .into_iter()
                .zip(players)
                .map(|(side, p)| Op::Seat {
                    side,
                    player: p.into(),
                    bot: None,
                    wall_ms: 1,
                })
                .collect();
            store.commit(game, 1, &seats).await.expect("seats");
            store.commit(game, 2, &finish).await.expect("finish");
            // The end written again (an arbiter's correction): not rated twice.
            store.commit(game, 3, &finish).await.expect("again");
        }
        assert!(store.rating_changes_of_game("casual").await.unwrap().is_empty());
        let changes = store.rating_changes_of_game("rated").await.unwrap();
        let want = rate([initial(); 3], [3, 2, 1]);
        assert_eq!(changes.len(), 3);
        for (k, c) in changes.iter().enumerate() {
            assert_eq!(
                (c.side, c.player.as_str(), c.rank),
                (Side::ALL[k], players[k], [3, 2, 1][k])
            );
            assert_eq!(c.class, TimeClass::Blitz);
            assert_eq!(
                (c.after.mu, c.after.sigma),
                (want[k].rating, want[k].uncertainty),
                "exact"
            );
        }
        let profile = store.profile("pc").await.unwrap().unwrap();
        assert_eq!(profile.ratings.len(), 1);
        assert_eq!((profile.ratings[0].games, profile.ratings[0].history.len()), (1, 1));
        assert_eq!(profile.ratings[0].current.rating, displayed(want[2]));
        assert_eq!(
            profile.seats[Side::Y.index()].win,
            2,
            "the casual game counts for W/D/L too"
        );
        store.close().await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    /// An arbiter's correction of a rated game's result rates it anew in its
    /// place: its changes, every later game of the pool whose players'
    /// ratings changed through it (and through those, in turn), and the
    /// current ratings follow; a game untouched by it keeps its numbers, and
    /// nobody's count of rated games changes.
    #[tokio::test]
    async fn a_corrected_result_is_rated_anew_with_every_later_game_it_touched() {
        use crate::store::Op;
        use protocol::{Phase, TimeControl};
        let path = std::env::temp_dir().join(format!("sanguo-rerate-{}.sqlite", rand::random::<u64>()));
        let store = Store::connect(
            &format!("sqlite://{}?mode=rwc", path.display()),
            crate::metrics::Metrics::default(),
        )
        .await
        .expect("store");
        for p in ["pa", "pb", "pc", "pd", "pe", "pf", "pg", "ph"] {
            store
                .create_player(p, p, Some((p, "hash")), &format!("token-{p}"))
                .await
                .expect("player");
        }
        let settings = GameSettings {
            variant: Default::default(),
            time_control: TimeControl {
                base_ms: 180_000,
                increment_ms: 2_000,
                per_move_ms: None,
                byoyomi: None,
            },
            direction: Default::default(),
            public: true,
            players_chat: true,
            grace_ms: 60_000,
            rated: true,
            anqi: None,
        };
        // W wins, B and Y lose without leaving: places 1, 2, 2 (and so on).
        let won_by = |side: Side| {
            let mut outcomes = [Some(L); 3];
            outcomes[side.index()] = Some(Wn);
            result(Ending::Adjudicated, outcomes, Vec::new())
        };
        let finish = |result: GameResult, wall_ms: i64| {
            vec![Op::Phase {
                phase: Phase::Finished,
                result: Some(result),
                wall_ms,
            }]
        };
        // g1 a b c (Y wins), g2 a d e, g3 f g h (none of them met g1's
        // players), g4 f g d (d's rating changed through g2).
        let games = [
            ("g1", ["pa", "pb", "pc"], Side::Y, 10),
            ("g2", ["pa", "pd", "pe"], Side::W, 20),
            ("g3", ["pf", "pg", "ph"], Side::B, 30),
            ("g4", ["pf", "pg", "pd"], Side::Y, 40),
        ];
        for (game, players, winner, wall) in games {
            store
                .create_game(game, "pa", &settings, "start", None)
                .await
                .expect("game");
            let seats: Vec<Op> = Side::ALL
                .into_iter()
                .zip(players)
                .map(|(side, p)| Op::Seat {
                    side,
                    player: p.into(),
                    bot: None,
                    wall_ms: 1,
                })
                .collect();
            store.commit(game, 1, &seats).await.expect("seats");
            store
                .commit(game, 2, &finish(won_by(winner), wall))
                .await
                .expect("finish");
        }
        let mus = |changes: &[RatingChange]| changes.iter().map(|c| (c.after.mu, c.after.sigma)).collect::<Vec<_>>();
        let g3_before = mus(&store.rating_changes_of_game("g3").await.unwrap());
        // The arbiter corrects g1: W wins.
        store
            .commit("g1", 3, &finish(won_by(Side::W), 50))
            .await
            .expect("correction");
        let s0 = initial();
        let r1 = rate([s0; 3], [1, 2, 2]);
        let r2 = rate([r1[0], s0, s0], [1, 2, 2]);
        let g3 = store.rating_changes_of_game("g3").await.unwrap();
        assert_eq!(mus(&g3), g3_before, "g3 met nobody whose rating changed");
        let g3_after = g3
            .iter()
            .map(|c| WengLinRating {
                rating: c.after.mu,
                uncertainty: c.after.sigma,
            })
            .collect::<Vec<_>>();
        let r4 = rate([g3_after[0], g3_after[1], r2[1]], [2, 2, 1]);
        for (game, want) in [("g1", r1), ("g2", r2), ("g4", r4)] {
            let got = store.rating_changes_of_game(game).await.unwrap();
            let want: Vec<(f64, f64)> = want.iter().map(|r| (r.rating, r.uncertainty)).collect();
            assert_eq!(mus(&got), want, "{game} exactly as replayed");
        }
        let g1 = store.rating_changes_of_game("g1").await.unwrap();
        assert_eq!(g1.iter().map(|c| c.rank).collect::<Vec<_>>(), [1, 2, 2]);
        assert_eq!(g1[0].before.mu, 25.0);
        let g2 = store.rating_changes_of_game("g2").await.unwrap();
        assert_eq!(g2[0].before.mu, r1[0].rating, "g2 starts from a's corrected rating");
        // Current ratings: each player's last replayed value; counts unchanged.
        for (player, want, games) in [
            ("pa", r2[0], 2),
            ("pb", r1[1], 1),
            ("pe", r2[2], 1),
            ("pd", r4[2], 2),
            ("pf", r4[0], 2),
            ("ph", g3_after[2], 1),
        ] {
            let p = store.profile(player).await.unwrap().unwrap();
            assert_eq!(
                (p.ratings[0].current.mu, p.ratings[0].current.sigma),
                (want.rating, want.uncertainty),
                "{player}"
            );
            assert_eq!(p.ratings[0].games, games, "{player}");
            assert_eq!(p.ratings[0].history.len() as u64, games, "{player}");
        }
        // The same correction again changes nothing.
        store
            .commit("g1", 4, &finish(won_by(Side::W), 60))
            .await
            .expect("again");
        assert_eq!(
            mus(&store.rating_changes_of_game("g4").await.unwrap()),
            r4.iter().map(|r| (r.rating, r.uncertainty)).collect::<Vec<_>>()
        );
        store.close().await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    /// A small deterministic generator for the simulation.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Ranks (1 = smallest) of `xs`, ties averaged.
    fn ranks(xs: &[f64]) -> Vec<f64> {
        let mut idx: Vec<usize> = (0..xs.len()).collect();
        idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
        let mut out = vec![0.0; xs.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
                j += 1;
            }
            for k in i..=j {
                out[idx[k]] = (i + j) as f64 / 2.0 + 1.0;
            }
            i = j + 1;
        }
        out
    }

    fn spearman(a: &[f64], b: &[f64]) -> f64 {
        let (ra, rb) = (ranks(a), ranks(b));
        let n = ra.len() as f64;
        let mean = (n + 1.0) / 2.0;
        let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - mean) * (y - mean)).sum();
        let var = |r: &[f64]| r.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        cov / (var(&ra) * var(&rb)).sqrt()
    }

    /// A population of 60 players with hidden strengths plays 4,000 random
    /// three-player games whose finishing order follows a Plackett-Luce
    /// (logistic) model, with one game in ten drawn by the two best-placed;
    /// the ratings end ordered like the strengths.
    #[test]
    fn a_simulated_population_is_rated_in_order_of_strength() {
        const PLAYERS: usize = 60;
        const GAMES: usize = 4000;
        let mut rng = SplitMix(20261201);
        let strength: Vec<f64> = (0..PLAYERS).map(|_| 4.0 * rng.unit() - 2.0).collect();
        let mut rating = vec![initial(); PLAYERS];
        for _ in 0..GAMES {
            let mut seats = [0usize; 3];
            for k in 0..3 {
                seats[k] = loop {
                    let p = rng.below(PLAYERS);
                    if !seats[..k].contains(&p) {
                        break p;
                    }
                };
            }
            // Plackett-Luce: the first place drawn with weight e^strength
            // among the three, the second among the other two.
            let mut left: Vec<usize> = (0..3).collect();
            let mut places = [0u32; 3];
            for place in 1..=3 {
                let weights: Vec<f64> = left.iter().map(|&k| strength[seats[k]].exp()).collect();
                let mut pick = rng.unit() * weights.iter().sum::<f64>();
                let mut chosen = left.len() - 1;
                for (i, w) in weights.iter().enumerate() {
                    if pick < *w {
                        chosen = i;
                        break;
                    }
                    pick -= w;
                }
                places[left.remove(chosen)] = place;
            }
            if rng.below(10) == 0 {
                for p in &mut places {
                    *p = (*p).max(2) - 1;
                }
            }
            let after = rate(seats.map(|p| rating[p]), places);
            for k in 0..3 {
                rating[seats[k]] = after[k];
            }
        }
        let mu: Vec<f64> = rating.iter().map(|r| r.rating).collect();
        let rho = spearman(&strength, &mu);
        assert!(rho >= 0.9, "Spearman {rho}");
        // After ~200 games each nobody is provisional any more.
        assert!(rating.iter().all(|r| !shown(*r).provisional));
    }
}
