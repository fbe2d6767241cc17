//! The player's side of the site: time-control classes, ratings, rating
//! changes, profiles, leaderboards and sessions (issue 16). How ratings are
//! computed: `docs/RATINGS.md`.

use serde::{Deserialize, Serialize};

use crate::{Outcome, Phase, Side, TimeControl, Variant};

/// A time-control class, by a game's estimated duration per player
/// ([`TimeClass::estimated_ms`]), with lichess's bounds: bullet under 3
/// minutes, blitz under 8, rapid under 25, classical from 25.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TimeClass {
    /// Under 3 minutes.
    Bullet,
    /// 3 to 8 minutes.
    Blitz,
    /// 8 to 25 minutes.
    Rapid,
    /// 25 minutes and more.
    Classical,
}

impl TimeClass {
    /// Every class, fastest first.
    pub const ALL: [TimeClass; 4] = [
        TimeClass::Bullet,
        TimeClass::Blitz,
        TimeClass::Rapid,
        TimeClass::Classical,
    ];

    /// The name used in APIs and storage.
    pub const fn key(self) -> &'static str {
        match self {
            TimeClass::Bullet => "bullet",
            TimeClass::Blitz => "blitz",
            TimeClass::Rapid => "rapid",
            TimeClass::Classical => "classical",
        }
    }

    /// The class named `key`.
    pub fn parse(key: &str) -> Option<TimeClass> {
        TimeClass::ALL.into_iter().find(|c| c.key() == key)
    }

    /// A player's estimated time for a game of 40 of its own moves, ms: main
    /// time + 40 × increment, as lichess estimates; byo-yomi adds 25 moves
    /// played in the first period (a player in byo-yomi moves within the
    /// period) and each further period once. A per-move limit only caps
    /// moves and adds nothing.
    pub fn estimated_ms(tc: &TimeControl) -> u64 {
        let byoyomi = tc.byoyomi.map_or(0, |b| {
            if b.periods == 0 {
                0
            } else {
                b.period_ms.saturating_mul(25 + u64::from(b.periods) - 1)
            }
        });
        tc.base_ms
            .saturating_add(tc.increment_ms.saturating_mul(40))
            .saturating_add(byoyomi)
    }

    /// The class of a time control.
    pub fn of(tc: &TimeControl) -> TimeClass {
        match TimeClass::estimated_ms(tc) {
            ms if ms < 180_000 => TimeClass::Bullet,
            ms if ms < 480_000 => TimeClass::Blitz,
            ms if ms < 1_500_000 => TimeClass::Rapid,
            _ => TimeClass::Classical,
        }
    }
}

/// A rating as shown: `rating` = round(1500 + 42 × (μ − 25)), `deviation` =
/// round(42 × σ) (the Weng-Lin start μ = 25, σ = 25/3 shows as 1500 ± 350,
/// lichess's start), provisional while the deviation is above 150 (about 20 rated games).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShownRating {
    /// The displayed rating.
    pub rating: i64,
    /// Its uncertainty on the same scale.
    pub deviation: i64,
    /// Shown with a "?": too few games to trust it yet.
    pub provisional: bool,
    /// Weng-Lin μ.
    pub mu: f64,
    /// Weng-Lin σ.
    pub sigma: f64,
}

/// What one rated game did to one player's rating (in the game's record and
/// in the player's history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RatingChange {
    /// The game.
    pub game: String,
    /// The player.
    pub player: String,
    /// Its seat.
    pub side: Side,
    /// The rating's variant.
    pub variant: Variant,
    /// The rating's class.
    pub class: TimeClass,
    /// The place the result gave (1 = first; equal places are ties).
    pub rank: u32,
    /// Before the game.
    pub before: ShownRating,
    /// After the game.
    pub after: ShownRating,
    /// When it was applied, ms since the Unix epoch.
    pub wall_ms: i64,
}

/// One rating of a player, with its history (oldest first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlayerRating {
    /// The variant.
    pub variant: Variant,
    /// The class.
    pub class: TimeClass,
    /// The rating now.
    pub current: ShownRating,
    /// Rated games played.
    pub games: u64,
    /// Its place on the leaderboard (absent while provisional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// Every change, oldest first: the game, when, and the rating after it.
    pub history: Vec<RatingPoint>,
}

/// A point of a rating history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RatingPoint {
    /// The game.
    pub game: String,
    /// When, ms since the Unix epoch.
    pub wall_ms: i64,
    /// The displayed rating after it.
    pub rating: i64,
}

/// A game of a player's profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileGame {
    /// The game.
    pub game: String,
    /// The variant.
    pub variant: Variant,
    /// The clock.
    pub time_control: TimeControl,
    /// Rated or casual.
    pub rated: bool,
    /// Open, live or finished.
    pub phase: Phase,
    /// The player's seat.
    pub side: Side,
    /// The player's outcome (absent: not finished, or aborted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The names at the seats W, B, Y.
    pub names: [Option<String>; 3],
    /// The rating change of a rated game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating_change: Option<i64>,
    /// Created, ms since the Unix epoch.
    pub created_ms: i64,
}

/// Wins, draws and losses at one seat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatTally {
    /// Won.
    pub win: u64,
    /// Drew.
    pub draw: u64,
    /// Lost.
    pub loss: u64,
}

/// `GET /api/players/{id}`: a player's page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlayerProfile {
    /// The id.
    pub id: String,
    /// The display name.
    pub name: String,
    /// Whether it has an account (false: guest).
    pub account: bool,
    /// A computer player: its level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<u8>,
    /// Joined, ms since the Unix epoch.
    pub created_ms: i64,
    /// Ratings per variant and class, with history.
    pub ratings: Vec<PlayerRating>,
    /// W/D/L per seat W, B, Y (finished games with outcomes).
    pub seats: [SeatTally; 3],
    /// The latest games (at most 50), newest first.
    pub games: Vec<ProfileGame>,
}

/// A line of `GET /api/leaderboard`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardEntry {
    /// The place, from 1.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// Its name.
    pub name: String,
    /// The rating.
    pub rating: ShownRating,
    /// Rated games played.
    pub games: u64,
}

/// A line of `GET /api/sessions`: one of the player's sessions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionInfo {
    /// Its id (for `DELETE /api/sessions/{id}`): the SHA-256 of its token, hex.
    pub id: String,
    /// Created, ms since the Unix epoch.
    pub created_ms: i64,
    /// Expires, ms since the Unix epoch.
    pub expires_ms: i64,
    /// The session of this request.
    pub current: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Byoyomi;

    fn tc(base_s: u64, inc_s: u64, byo: Option<(u32, u64)>) -> TimeControl {
        TimeControl {
            base_ms: base_s * 1000,
            increment_ms: inc_s * 1000,
            per_move_ms: None,
            byoyomi: byo.map(|(periods, s)| Byoyomi {
                periods,
                period_ms: s * 1000,
            }),
        }
    }

    #[test]
    fn classes_follow_the_estimated_duration() {
        let cases = [
            (tc(60, 0, None), TimeClass::Bullet),
            (tc(120, 1, None), TimeClass::Bullet), // 160 s
            (tc(180, 0, None), TimeClass::Blitz),
            (tc(180, 2, None), TimeClass::Blitz),
            (tc(300, 5, None), TimeClass::Rapid), // 500 s
            (tc(600, 5, None), TimeClass::Rapid),
            (tc(900, 15, None), TimeClass::Classical),     // 1500 s
            (tc(0, 0, Some((1, 5))), TimeClass::Bullet),   // 125 s
            (tc(0, 0, Some((3, 10))), TimeClass::Blitz),   // 270 s
            (tc(600, 0, Some((3, 30))), TimeClass::Rapid), // 600 + 810 s
            (tc(1200, 0, Some((5, 30))), TimeClass::Classical),
        ];
        for (t, want) in cases {
            assert_eq!(TimeClass::of(&t), want, "{t:?}: {} ms", TimeClass::estimated_ms(&t));
        }
        for c in TimeClass::ALL {
            assert_eq!(TimeClass::parse(c.key()), Some(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.key());
        }
        assert_eq!(TimeClass::parse("hyper"), None);
    }
}
