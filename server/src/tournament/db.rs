//! The tournament tables (migration `…_tournaments.sql`): plain SQL for
//! Postgres and SQLite alike, like the rest of the store.

use std::collections::HashMap;

use protocol::tournament::{
    ArbiterEntry, Board, OrganizerAction, OrganizerEntry, TournamentSettings, TournamentStatus,
};
use protocol::{GameResult, GameSettings, Phase, Side};
use sqlx::Row;

use crate::store::{Op, Store, StoreError, wall_ms};

/// `$1, $2, …, $n` (n ≥ 1): an `IN` list of bound values.
fn placeholders(n: usize) -> String {
    (1..=n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// A tournament's row with its entrants, games and byes, as listed.
#[derive(Debug)]
pub struct LoadedRows {
    /// The row.
    pub t: TournamentRow,
    /// Entrants in seed order.
    pub entrants: Vec<EntrantRow>,
    /// Every game.
    pub games: Vec<GameRow>,
    /// Byes: round, player, points.
    pub byes: Vec<(u32, String, u32)>,
}

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A tournament row.
#[derive(Clone, Debug)]
pub struct TournamentRow {
    /// Id.
    pub id: String,
    /// Organizer's player id.
    pub organizer: String,
    /// Organizer's name.
    pub organizer_name: String,
    /// Registration code.
    pub code: String,
    /// Settings.
    pub settings: TournamentSettings,
    /// Status as stored (registration or running; finished is derived).
    pub status: TournamentStatus,
    /// The last round paired.
    pub round: u32,
}

/// An entrant row.
#[derive(Clone, Debug)]
pub struct EntrantRow {
    /// Player id.
    pub player: String,
    /// Name.
    pub name: String,
    /// Registration order.
    pub seed: u32,
    /// Checked in.
    pub checked_in: bool,
    /// Withdrawn after this round.
    pub withdrawn_after: Option<u32>,
    /// Round robin group.
    pub group: Option<u32>,
    /// An account (not a guest, not a bot): may play a rated tournament.
    pub account: bool,
}

/// A tournament game row, with its seats, phase and result.
#[derive(Clone, Debug)]
pub struct GameRow {
    /// The game.
    pub game: String,
    /// Round.
    pub round: u32,
    /// Table.
    pub table: u32,
    /// The table's game now (false: aborted by the arbiter).
    pub current: bool,
    /// What replaced it.
    pub replaced_by: Option<String>,
    /// Player ids at W, B, Y.
    pub seats: [String; 3],
    /// Their names (a bot's: `Bot (level N)`).
    pub names: [String; 3],
    /// The bots' levels (`None`: a person).
    pub bots: [Option<bot::Level>; 3],
    /// Phase.
    pub phase: Phase,
    /// Result once finished.
    pub result: Option<GameResult>,
}

/// A new game for a table: its id, settings, start position and the room's
/// first writes (seats, start).
#[derive(Debug)]
pub struct NewGame {
    /// Game id.
    pub id: String,
    /// Settings.
    pub settings: GameSettings,
    /// Start position text.
    pub initial_position: String,
    /// The version after the writes.
    pub v: u64,
    /// The writes.
    pub ops: Vec<Op>,
    /// Round.
    pub round: u32,
    /// Table.
    pub table: u32,
}

fn status_of(s: &str) -> Result<TournamentStatus, StoreError> {
    match s {
        "registration" => Ok(TournamentStatus::Registration),
        "running" => Ok(TournamentStatus::Running),
        "finished" => Ok(TournamentStatus::Finished),
        _ => Err(corrupt("tournament status", s)),
    }
}

fn tournament_row(r: &sqlx::any::AnyRow) -> Result<TournamentRow, StoreError> {
    Ok(TournamentRow {
        id: r.try_get("id")?,
        organizer: r.try_get("organizer")?,
        organizer_name: r.try_get("name")?,
        code: r.try_get("code")?,
        settings: from_json(&r.try_get::<String, _>("settings")?)?,
        status: status_of(&r.try_get::<String, _>("status")?)?,
        round: r.try_get::<i64, _>("round")? as u32,
    })
}

const TOURNAMENT_COLUMNS: &str = "t.id, t.organizer, p.name, t.code, t.settings, t.status, t.round";

impl Store {
    /// Creates a tournament.
    pub async fn create_tournament(
        &self,
        id: &str,
        organizer: &str,
        code: &str,
        settings: &TournamentSettings,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tournaments (id, organizer, code, settings, status, round, created_ms, variant) \
             VALUES ($1, $2, $3, $4, 'registration', 0, $5, $6)",
        )
        .bind(id)
        .bind(organizer)
        .bind(code)
        .bind(to_json(settings))
        .bind(wall_ms())
        .bind(settings.variant.key())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A tournament by id.
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentRow>, StoreError> {
        let q = format!(
            "SELECT {TOURNAMENT_COLUMNS} FROM tournaments t JOIN players p ON p.id = t.organizer WHERE t.id = $1"
        );
        let row = sqlx::query(&q).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(tournament_row).transpose()
    }

    /// A tournament by registration code.
    pub async fn tournament_by_code(&self, code: &str) -> Result<Option<TournamentRow>, StoreError> {
        let q = format!(
            "SELECT {TOURNAMENT_COLUMNS} FROM tournaments t JOIN players p ON p.id = t.organizer WHERE t.code = $1"
        );
        let row = sqlx::query(&q).bind(code).fetch_optional(&self.pool).await?;
        row.as_ref().map(tournament_row).transpose()
    }

    /// The newest tournaments (of one variant, or of all).
    pub async fn tournaments(
        &self,
        variant: Option<protocol::Variant>,
        limit: i64,
    ) -> Result<Vec<TournamentRow>, StoreError> {
        let q = format!(
            "SELECT {TOURNAMENT_COLUMNS} FROM tournaments t JOIN players p ON p.id = t.organizer \
             WHERE ($1 = '' OR t.variant = $1) ORDER BY t.created_ms DESC LIMIT $2"
        );
        let rows = sqlx::query(&q)
            .bind(variant.map_or("", |v| v.key()))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(tournament_row).collect()
    }

    /// The entrants in seed order.
    pub async fn entrants(&self, tournament: &str) -> Result<Vec<EntrantRow>, StoreError> {
        let mut by = self.entrants_where(&[tournament.to_owned()]).await?;
        Ok(by.remove(tournament).unwrap_or_default())
    }

    /// The displayed ratings of `players` (those that have one) of a
    /// variant and time-control class: round 1's seeding.
    pub async fn ratings_of(
        &self,
        players: &[String],
        variant: protocol::Variant,
        class: protocol::players::TimeClass,
    ) -> Result<HashMap<String, i64>, StoreError> {
        if players.is_empty() {
            return Ok(HashMap::new());
        }
        let q = format!(
            "SELECT player_id, rating FROM ratings WHERE variant = $1 AND class = $2 AND player_id IN ({})",
            (3..players.len() + 3)
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut query = sqlx::query(&q).bind(variant.key()).bind(class.key());
        for p in players {
            query = query.bind(p.as_str());
        }
        let mut out = HashMap::new();
        for r in query.fetch_all(&self.pool).await? {
            out.insert(r.try_get("player_id")?, r.try_get::<i64, _>("rating")?);
        }
        Ok(out)
    }

    /// The entrants of the tournaments `ids` (at least one), by tournament,
    /// each in seed order: one query for any number of tournaments.
    async fn entrants_where(&self, ids: &[String]) -> Result<HashMap<String, Vec<EntrantRow>>, StoreError> {
        let q = format!(
            "SELECT e.tournament_id, e.player_id, p.name, p.username, p.bot_level, e.seed, e.checked_in, \
             e.withdrawn_after, e.group_no \
             FROM tournament_players e JOIN players p ON p.id = e.player_id \
             WHERE e.tournament_id IN ({}) ORDER BY e.tournament_id, e.seed",
            placeholders(ids.len())
        );
        let mut query = sqlx::query(&q);
        for id in ids {
            query = query.bind(id.as_str());
        }
        let mut out: HashMap<String, Vec<EntrantRow>> = HashMap::new();
        for r in query.fetch_all(&self.pool).await? {
            out.entry(r.try_get("tournament_id")?).or_default().push(EntrantRow {
                player: r.try_get("player_id")?,
                name: r.try_get("name")?,
                seed: r.try_get::<i64, _>("seed")? as u32,
                checked_in: r.try_get::<i64, _>("checked_in")? != 0,
                withdrawn_after: r.try_get::<Option<i64>, _>("withdrawn_after")?.map(|x| x as u32),
                group: r.try_get::<Option<i64>, _>("group_no")?.map(|x| x as u32),
                account: r.try_get::<Option<String>, _>("username")?.is_some()
                    && r.try_get::<Option<i64>, _>("bot_level")?.is_none(),
            });
        }
        Ok(out)
    }

    /// Registers a player with the next seed; `Conflict` if registered already.
    pub async fn register(&self, tournament: &str, player: &str) -> Result<(), StoreError> {
        // The seed is the next number. Registrations take it one at a time:
        // each first writes the tournament's row (a no-op update), which holds
        // that row's lock until its commit (Postgres; SQLite has one writer),
        // so the next one reads MAX(seed) only after the previous committed.
        // Concurrent registrations therefore all succeed, in some order.
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE tournaments SET round = round WHERE id = $1")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        let r = sqlx::query(
            "INSERT INTO tournament_players (tournament_id, player_id, seed, checked_in, registered_ms) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(seed), 0) + 1 FROM tournament_players WHERE tournament_id = $1), 0, $3)",
        )
        .bind(tournament)
        .bind(player)
        .bind(wall_ms())
        .execute(&mut *tx)
        .await;
        match r {
            Ok(_) => {
                tx.commit().await?;
                Ok(())
            }
            Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Err(StoreError::Conflict),
            Err(e) => Err(e.into()),
        }
    }

    /// Marks a player checked in.
    pub async fn check_in(&self, tournament: &str, player: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE tournament_players SET checked_in = 1 WHERE tournament_id = $1 AND player_id = $2")
            .bind(tournament)
            .bind(player)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Takes back a registration (before round 1: nothing refers to it yet).
    pub async fn unregister(&self, tournament: &str, player: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM tournament_players WHERE tournament_id = $1 AND player_id = $2")
            .bind(tournament)
            .bind(player)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Takes back a withdrawal: the player is paired again from the next round.
    pub async fn reinstate(&self, tournament: &str, player: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE tournament_players SET withdrawn_after = NULL WHERE tournament_id = $1 AND player_id = $2")
            .bind(tournament)
            .bind(player)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Withdraws a player after round `after`.
    pub async fn withdraw(&self, tournament: &str, player: &str, after: u32) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE tournament_players SET withdrawn_after = $1 \
             WHERE tournament_id = $2 AND player_id = $3 AND withdrawn_after IS NULL",
        )
        .bind(i64::from(after))
        .bind(tournament)
        .bind(player)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every game of the tournament (aborted ones too), by round and table.
    pub async fn tournament_games(&self, tournament: &str) -> Result<Vec<GameRow>, StoreError> {
        let mut by = self.games_where(&[tournament.to_owned()]).await?;
        Ok(by.remove(tournament).unwrap_or_default())
    }

    /// The games of the tournaments `ids` (as [`Store::entrants_where`]),
    /// by tournament, each in round, table and creation order.
    async fn games_where(&self, ids: &[String]) -> Result<HashMap<String, Vec<GameRow>>, StoreError> {
        let q = format!(
            "SELECT tg.tournament_id, tg.game_id, tg.round, tg.table_no, tg.current, tg.replaced_by, g.phase, g.result, \
             pw.id AS w, pw.name AS w_name, pw.bot_level AS w_bot, \
             pb.id AS b, pb.name AS b_name, pb.bot_level AS b_bot, \
             py.id AS y, py.name AS y_name, py.bot_level AS y_bot \
             FROM tournament_games tg JOIN games g ON g.id = tg.game_id \
             LEFT JOIN seats sw ON sw.game_id = tg.game_id AND sw.side = 'W' \
             LEFT JOIN players pw ON pw.id = sw.player_id \
             LEFT JOIN seats sb ON sb.game_id = tg.game_id AND sb.side = 'B' \
             LEFT JOIN players pb ON pb.id = sb.player_id \
             LEFT JOIN seats sy ON sy.game_id = tg.game_id AND sy.side = 'Y' \
             LEFT JOIN players py ON py.id = sy.player_id \
             WHERE tg.tournament_id IN ({}) ORDER BY tg.tournament_id, tg.round, tg.table_no, g.created_ms",
            placeholders(ids.len())
        );
        let mut query = sqlx::query(&q);
        for id in ids {
            query = query.bind(id.as_str());
        }
        let mut out: HashMap<String, Vec<GameRow>> = HashMap::new();
        for r in query.fetch_all(&self.pool).await? {
            let row = {
                let phase: String = r.try_get("phase")?;
                let result: Option<String> = r.try_get("result")?;
                let seat = |c: &str| -> Result<String, StoreError> {
                    r.try_get::<Option<String>, _>(c)?
                        .ok_or_else(|| StoreError::Corrupt(format!("tournament game without seat {c}")))
                };
                let bot = |c: &str| -> Result<Option<bot::Level>, StoreError> {
                    r.try_get::<Option<i64>, _>(c)?
                        .map(|n| {
                            u8::try_from(n)
                                .ok()
                                .and_then(bot::Level::from_number)
                                .ok_or_else(|| corrupt("bot level", &n.to_string()))
                        })
                        .transpose()
                };
                GameRow {
                    game: r.try_get("game_id")?,
                    round: r.try_get::<i64, _>("round")? as u32,
                    table: r.try_get::<i64, _>("table_no")? as u32,
                    current: r.try_get::<i64, _>("current")? != 0,
                    replaced_by: r.try_get("replaced_by")?,
                    seats: [seat("w")?, seat("b")?, seat("y")?],
                    names: [seat("w_name")?, seat("b_name")?, seat("y_name")?],
                    bots: [bot("w_bot")?, bot("b_bot")?, bot("y_bot")?],
                    phase: Phase::parse(&phase).ok_or_else(|| corrupt("phase", &phase))?,
                    result: result.map(|x| from_json(&x)).transpose()?,
                }
            };
            out.entry(r.try_get("tournament_id")?).or_default().push(row);
        }
        Ok(out)
    }

    /// Byes: (round, player, points).
    pub async fn byes(&self, tournament: &str) -> Result<Vec<(u32, String, u32)>, StoreError> {
        let mut by = self.byes_where(&[tournament.to_owned()]).await?;
        Ok(by.remove(tournament).unwrap_or_default())
    }

    /// The byes of the tournaments `ids` (as [`Store::entrants_where`]).
    async fn byes_where(&self, ids: &[String]) -> Result<HashMap<String, Vec<(u32, String, u32)>>, StoreError> {
        let q = format!(
            "SELECT tournament_id, round, player_id, points FROM tournament_byes \
             WHERE tournament_id IN ({}) ORDER BY tournament_id, round, player_id",
            placeholders(ids.len())
        );
        let mut query = sqlx::query(&q);
        for id in ids {
            query = query.bind(id.as_str());
        }
        let mut out: HashMap<String, Vec<(u32, String, u32)>> = HashMap::new();
        for r in query.fetch_all(&self.pool).await? {
            out.entry(r.try_get("tournament_id")?).or_default().push((
                r.try_get::<i64, _>("round")? as u32,
                r.try_get("player_id")?,
                r.try_get::<i64, _>("points")? as u32,
            ));
        }
        Ok(out)
    }

    /// The newest `limit` tournaments (of a variant, or all) with their
    /// entrants, games and byes: four queries however many are listed.
    pub async fn tournaments_loaded(
        &self,
        variant: Option<protocol::Variant>,
        limit: i64,
    ) -> Result<Vec<LoadedRows>, StoreError> {
        let rows = self.tournaments(variant, limit).await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = rows.iter().map(|t| t.id.clone()).collect();
        let mut entrants = self.entrants_where(&ids).await?;
        let mut games = self.games_where(&ids).await?;
        let mut byes = self.byes_where(&ids).await?;
        Ok(rows
            .into_iter()
            .map(|t| LoadedRows {
                entrants: entrants.remove(&t.id).unwrap_or_default(),
                games: games.remove(&t.id).unwrap_or_default(),
                byes: byes.remove(&t.id).unwrap_or_default(),
                t,
            })
            .collect())
    }

    /// Inserts a table's game. Cluster mode: owned by this node from its first
    /// row (epoch 1, fenced once the transaction commits: [`Store::owned_from_birth`]).
    async fn insert_game(
        tx: &mut sqlx::AnyConnection,
        organizer: &str,
        g: &NewGame,
        owner: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO games (id, created_by, phase, settings, initial_position, public, v, created_ms, variant, \
             owner_node, owner_epoch) VALUES ($1, $2, 'open', $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(g.id.as_str())
        .bind(organizer)
        .bind(to_json(&g.settings))
        .bind(g.initial_position.as_str())
        .bind(i64::from(g.settings.public))
        .bind(g.v as i64)
        .bind(wall_ms())
        .bind(g.settings.variant.key())
        .bind(owner)
        .bind(i64::from(owner.is_some()))
        .execute(&mut *tx)
        .await?;
        for op in &g.ops {
            Store::write(tx, &g.id, g.v, op).await?;
        }
        Ok(())
    }

    /// Pairs a round in one transaction: its games (seated and started), the
    /// byes, round robin groups and settings, and the tournament's round —
    /// only if the round is still `round - 1` (else `Conflict`: someone else
    /// paired it).
    #[allow(clippy::too_many_arguments)]
    pub async fn start_round(
        &self,
        t: &TournamentRow,
        round: u32,
        games: &[NewGame],
        byes: &[(String, u32)],
        groups: &[(String, u32)],
        settings: &TournamentSettings,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let moved = sqlx::query(
            "UPDATE tournaments SET round = $1, status = 'running', settings = $2 WHERE id = $3 AND round = $4",
        )
        .bind(i64::from(round))
        .bind(to_json(settings))
        .bind(t.id.as_str())
        .bind(i64::from(round - 1))
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        for g in games {
            Self::insert_game(&mut tx, &t.organizer, g, self.creator_node()).await?;
            sqlx::query(
                "INSERT INTO tournament_games (game_id, tournament_id, round, table_no, current) VALUES ($1, $2, $3, $4, 1)",
            )
            .bind(g.id.as_str())
            .bind(t.id.as_str())
            .bind(i64::from(g.round))
            .bind(i64::from(g.table))
            .execute(&mut *tx)
            .await?;
        }
        for (player, points) in byes {
            sqlx::query(
                "INSERT INTO tournament_byes (tournament_id, round, player_id, points) VALUES ($1, $2, $3, $4)",
            )
            .bind(t.id.as_str())
            .bind(i64::from(round))
            .bind(player.as_str())
            .bind(i64::from(*points))
            .execute(&mut *tx)
            .await?;
        }
        for (player, group) in groups {
            sqlx::query("UPDATE tournament_players SET group_no = $1 WHERE tournament_id = $2 AND player_id = $3")
                .bind(i64::from(*group))
                .bind(t.id.as_str())
                .bind(player.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        for g in games {
            self.owned_from_birth(&g.id);
        }
        Ok(())
    }

    /// Replaces an aborted game by a new one at the same table.
    pub async fn replace_game(&self, t: &TournamentRow, old: &str, new: &NewGame) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let moved = sqlx::query(
            "UPDATE tournament_games SET current = 0, replaced_by = $1 WHERE game_id = $2 AND tournament_id = $3 AND current = 1",
        )
        .bind(new.id.as_str())
        .bind(old)
        .bind(t.id.as_str())
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        Self::insert_game(&mut tx, &t.organizer, new, self.creator_node()).await?;
        sqlx::query(
            "INSERT INTO tournament_games (game_id, tournament_id, round, table_no, current) VALUES ($1, $2, $3, $4, 1)",
        )
        .bind(new.id.as_str())
        .bind(t.id.as_str())
        .bind(i64::from(new.round))
        .bind(i64::from(new.table))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.owned_from_birth(&new.id);
        Ok(())
    }

    /// Writes a line of the organizer log.
    async fn log_organizer(
        tx: &mut sqlx::AnyConnection,
        tournament: &str,
        by: &str,
        action: OrganizerAction,
        reason: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tournament_log (tournament_id, wall_ms, by_player, action, reason) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(tournament)
        .bind(wall_ms())
        .bind(by)
        .bind(match action {
            OrganizerAction::Finish => "finish",
            OrganizerAction::Edit => "edit",
            OrganizerAction::Delete => "delete",
            OrganizerAction::Registration => "registration",
        })
        .bind(reason)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    /// Ends a tournament now (logged). `Conflict` if it is finished already.
    pub async fn finish_tournament(&self, tournament: &str, by: &str, reason: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("UPDATE tournaments SET status = 'finished' WHERE id = $1 AND status <> 'finished'")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        Self::log_organizer(&mut tx, tournament, by, OrganizerAction::Finish, reason).await?;
        tx.commit().await?;
        Ok(())
    }

    /// New settings before round 1 (logged). `Conflict` once round 1 is paired.
    pub async fn edit_tournament(
        &self,
        tournament: &str,
        settings: &TournamentSettings,
        by: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("UPDATE tournaments SET settings = $1 WHERE id = $2 AND round = 0")
            .bind(to_json(settings))
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        Self::log_organizer(&mut tx, tournament, by, OrganizerAction::Edit, reason).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Sets when registration closes (`None`: open until the end), logged.
    /// The settings are read and written under the tournament row's lock, so
    /// an edit or a registration at the same instant is ordered with it.
    /// `Conflict` once the tournament is finished.
    pub async fn set_registration_closes(
        &self,
        tournament: &str,
        closes_ms: Option<i64>,
        by: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let locked = sqlx::query("UPDATE tournaments SET round = round WHERE id = $1 AND status <> 'finished'")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        if locked.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        let row = sqlx::query("SELECT settings FROM tournaments WHERE id = $1")
            .bind(tournament)
            .fetch_one(&mut *tx)
            .await?;
        let mut settings: TournamentSettings = from_json(&row.try_get::<String, _>("settings")?)?;
        settings.registration_closes_ms = closes_ms;
        sqlx::query("UPDATE tournaments SET settings = $1 WHERE id = $2")
            .bind(to_json(&settings))
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        Self::log_organizer(&mut tx, tournament, by, OrganizerAction::Registration, reason).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a tournament before round 1 with its registrations (logged).
    /// `Conflict` once round 1 is paired.
    pub async fn delete_tournament(&self, tournament: &str, by: &str, reason: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Taking the row's lock first: a round being paired meanwhile either
        // went first (round > 0: refused) or waits and finds no tournament.
        let locked = sqlx::query("UPDATE tournaments SET round = round WHERE id = $1 AND round = 0")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        if locked.rows_affected() != 1 {
            return Err(StoreError::Conflict);
        }
        sqlx::query("DELETE FROM tournament_players WHERE tournament_id = $1")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM tournaments WHERE id = $1")
            .bind(tournament)
            .execute(&mut *tx)
            .await?;
        Self::log_organizer(&mut tx, tournament, by, OrganizerAction::Delete, reason).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The organizer log of a tournament (deleted ones too), oldest first.
    pub async fn organizer_log(&self, tournament: &str) -> Result<Vec<OrganizerEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT l.by_player, p.name, l.action, l.reason, l.wall_ms FROM tournament_log l \
             JOIN players p ON p.id = l.by_player WHERE l.tournament_id = $1 ORDER BY l.wall_ms",
        )
        .bind(tournament)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let action: String = r.try_get("action")?;
                Ok(OrganizerEntry {
                    tournament: tournament.to_owned(),
                    by: r.try_get("by_player")?,
                    by_name: r.try_get("name")?,
                    action: match action.as_str() {
                        "finish" => OrganizerAction::Finish,
                        "edit" => OrganizerAction::Edit,
                        "delete" => OrganizerAction::Delete,
                        "registration" => OrganizerAction::Registration,
                        _ => return Err(corrupt("organizer action", &action)),
                    },
                    reason: r.try_get("reason")?,
                    wall_ms: r.try_get("wall_ms")?,
                })
            })
            .collect()
    }

    /// The arbiter log of a tournament, oldest first.
    pub async fn arbiter_log(&self, tournament: &str) -> Result<Vec<ArbiterEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT a.game_id, a.by_player, p.name, a.reason, a.action, a.wall_ms, tg.replaced_by \
             FROM arbiter_actions a JOIN tournament_games tg ON tg.game_id = a.game_id \
             JOIN players p ON p.id = a.by_player \
             WHERE tg.tournament_id = $1 ORDER BY a.wall_ms, a.game_id, a.v",
        )
        .bind(tournament)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let action: protocol::tournament::ArbiterAction = from_json(&r.try_get::<String, _>("action")?)?;
                let replaced: Option<String> = r.try_get("replaced_by")?;
                Ok(ArbiterEntry {
                    game: r.try_get("game_id")?,
                    by: r.try_get("by_player")?,
                    by_name: r.try_get("name")?,
                    reason: r.try_get("reason")?,
                    wall_ms: r.try_get("wall_ms")?,
                    replaced_by: replaced.filter(|_| action == protocol::tournament::ArbiterAction::Abort),
                    action,
                })
            })
            .collect()
    }

    /// The unfinished tournament games a player sits in.
    pub async fn boards(&self, player: &str) -> Result<Vec<Board>, StoreError> {
        let rows = sqlx::query(
            "SELECT tg.tournament_id, t.settings, tg.round, tg.table_no, tg.game_id, s.side \
             FROM seats s JOIN tournament_games tg ON tg.game_id = s.game_id \
             JOIN games g ON g.id = s.game_id JOIN tournaments t ON t.id = tg.tournament_id \
             WHERE s.player_id = $1 AND g.phase <> 'finished' AND tg.current = 1 ORDER BY g.created_ms",
        )
        .bind(player)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let settings: TournamentSettings = from_json(&r.try_get::<String, _>("settings")?)?;
                let side: String = r.try_get("side")?;
                Ok(Board {
                    tournament: r.try_get("tournament_id")?,
                    name: settings.name,
                    round: r.try_get::<i64, _>("round")? as u32,
                    table: r.try_get::<i64, _>("table_no")? as u32,
                    game: r.try_get("game_id")?,
                    side: Side::parse(&side).ok_or_else(|| corrupt("side", &side))?,
                })
            })
            .collect()
    }
}
