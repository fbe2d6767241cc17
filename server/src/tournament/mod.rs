//! Tournaments: organizers create them, players register with a code and
//! check in, the organizer pairs rounds (games created seated and started, the
//! tournament's clock running from the round's start), results come from the
//! games as they end, and the organizer acts as arbiter. docs/TOURNAMENTS.md
//! describes the rules; [`pairing`] and [`standings`] are the pure parts.

pub mod api;
pub mod db;
pub mod pairing;
pub mod standings;

use std::collections::HashMap;

use protocol::tournament::{
    Bye, ByeFill, CreateTournament, Entrant, Pairing, PairingSystem, Round, Standing, Standings, Tournament,
    TournamentSettings, TournamentStatus,
};
use protocol::{BOT_LEVELS, ErrorCode, GameSettings, Phase, Side};

use self::db::{EntrantRow, GameRow, NewGame, TournamentRow};
use self::pairing::{History, Met};
use self::standings::{Played, Totals};
use crate::AppState;
use crate::error::ApiError;
use crate::room::core::Room;
use crate::store::{Op, Player, StoreError, wall_ms};

/// Most rounds of a Swiss event.
pub const MAX_ROUNDS: u32 = 30;
/// Most points a result may score.
pub const MAX_POINTS: u32 = 100;
/// The longest name.
pub const MAX_NAME_CHARS: usize = 80;

fn bad(m: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, m)
}

fn state_error(m: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::TournamentState, m)
}

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such tournament")
}

/// Checks a creation request and turns it into settings.
pub fn settings_of(
    c: CreateTournament,
    default_grace_ms: u64,
    min: &crate::http::ClockMinimums,
    now_ms: i64,
) -> Result<TournamentSettings, ApiError> {
    let name = c.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(bad(format!("a tournament's name has 1 to {MAX_NAME_CHARS} characters")));
    }
    let tc = c.time_control.unwrap_or_default();
    crate::http::check_time_control(&tc, min)?;
    let pairing = c.pairing.unwrap_or(PairingSystem::Swiss);
    let rounds = match pairing {
        PairingSystem::Swiss => {
            let r = c.rounds.unwrap_or(5);
            if !(1..=MAX_ROUNDS).contains(&r) {
                return Err(bad(format!("a Swiss event has 1 to {MAX_ROUNDS} rounds")));
            }
            r
        }
        PairingSystem::RoundRobin { group_size } => {
            if !(3..=8).contains(&group_size) {
                return Err(bad("a round robin group has 3 to 8 players"));
            }
            // Set when round 1 is paired: the schedule of the largest group.
            0
        }
    };
    let scoring = c.scoring.unwrap_or_default();
    if scoring.win > MAX_POINTS
        || scoring.bye > MAX_POINTS
        || scoring.win < scoring.draw
        || scoring.draw < scoring.loss
        || scoring.win == scoring.loss
    {
        return Err(bad(format!(
            "scoring: win ≥ draw ≥ loss, win > loss, and at most {MAX_POINTS} points a result"
        )));
    }
    let byes = c.byes.unwrap_or_default();
    if let ByeFill::Bot { level } = byes {
        bye_bot_level(level)?;
    }
    let opens = c.registration_opens_ms.unwrap_or(now_ms);
    if let Some(closes) = c.registration_closes_ms
        && closes <= opens
    {
        return Err(bad("registration must close after it opens"));
    }
    if let Some(g) = c.grace_ms {
        crate::http::check_grace(g, min)?;
    }
    let grace_ms = c.grace_ms.unwrap_or(default_grace_ms);
    let variant = c.variant.unwrap_or_default();
    crate::room::check_playable(variant)?;
    Ok(TournamentSettings {
        name,
        variant,
        time_control: tc,
        direction: c.direction.unwrap_or_default(),
        rounds,
        pairing,
        scoring,
        byes,
        registration_opens_ms: opens,
        registration_closes_ms: c.registration_closes_ms,
        starts_ms: c.starts_ms,
        grace_ms,
        rated: c.rated.unwrap_or(false),
    })
}

/// The level of the bots that fill byes (`byes: {"kind": "bot", "level": n}`),
/// or a `bad_request`.
fn bye_bot_level(n: u8) -> Result<bot::Level, ApiError> {
    bot::Level::from_number(n).ok_or_else(|| {
        bad(format!(
            "byes: a bot's level is {} (weakest) to {}, not {n}",
            BOT_LEVELS.start(),
            BOT_LEVELS.end()
        ))
    })
}

/// Everything known of a tournament, loaded at once.
#[derive(Debug)]
pub struct Loaded {
    /// The row.
    pub t: TournamentRow,
    /// Entrants in seed order.
    pub entrants: Vec<EntrantRow>,
    /// Every game.
    pub games: Vec<GameRow>,
    /// Byes: round, player, points.
    pub byes: Vec<(u32, String, u32)>,
}

impl Loaded {
    /// Loads a tournament (404 when there is none).
    pub async fn load(s: &AppState, id: &str) -> Result<Loaded, ApiError> {
        if id.len() > 64 {
            return Err(not_found());
        }
        let t = s.store.tournament(id).await?.ok_or_else(not_found)?;
        Ok(Loaded {
            entrants: s.store.entrants(id).await?,
            games: s.store.tournament_games(id).await?,
            byes: s.store.byes(id).await?,
            t,
        })
    }

    fn index(&self) -> HashMap<&str, usize> {
        self.entrants
            .iter()
            .enumerate()
            .map(|(i, e)| (e.player.as_str(), i))
            .collect()
    }

    fn current_games(&self) -> impl Iterator<Item = &GameRow> {
        self.games.iter().filter(|g| g.current)
    }

    /// Whether every game of the last round paired is over.
    pub fn round_over(&self) -> bool {
        self.current_games()
            .filter(|g| g.round == self.t.round)
            .all(|g| g.phase == Phase::Finished)
    }

    /// A `tournament_state` refusal once the tournament is over.
    pub fn refuse_when_over(&self) -> Result<(), ApiError> {
        if self.status() == TournamentStatus::Finished {
            return Err(state_error("the tournament is over"));
        }
        Ok(())
    }

    /// Registration, running or finished (the last round over).
    pub fn status(&self) -> TournamentStatus {
        if self.t.round > 0 && self.t.round >= self.t.settings.rounds && self.round_over() {
            TournamentStatus::Finished
        } else {
            self.t.status
        }
    }

    /// Every entrant's totals (current games and byes). A seat that is no
    /// entrant's is a bot's (a bye filled by a bot): it has no totals.
    pub fn totals(&self) -> Vec<Totals> {
        let idx = self.index();
        let played: Vec<Played> = self
            .current_games()
            .map(|g| Played {
                seats: g.seats.each_ref().map(|p| idx.get(p.as_str()).copied()),
                result: g.result.clone().filter(|_| g.phase == Phase::Finished),
            })
            .collect();
        let byes: Vec<(usize, u32)> = self
            .byes
            .iter()
            .filter_map(|(_, p, pts)| Some((*idx.get(p.as_str())?, *pts)))
            .collect();
        standings::totals(self.entrants.len(), &played, &byes, &self.t.settings.scoring)
    }

    /// The standings.
    pub fn standings(&self) -> Standings {
        let totals = self.totals();
        let seeds: Vec<u32> = self.entrants.iter().map(|e| e.seed).collect();
        let done = if self.round_over() {
            self.t.round
        } else {
            self.t.round.saturating_sub(1)
        };
        // A round robin ranks each group on its own: groups of different
        // sizes play different numbers of games and have different byes, so
        // one table across groups would let byes buy places.
        let ranked: Vec<(usize, u32)> = if matches!(self.t.settings.pairing, PairingSystem::RoundRobin { .. })
            && self.entrants.iter().any(|e| e.group.is_some())
        {
            let mut groups: Vec<Option<u32>> = self.entrants.iter().map(|e| e.group).collect();
            groups.sort_unstable_by_key(|g| (g.is_none(), *g));
            groups.dedup();
            groups
                .into_iter()
                .flat_map(|g| {
                    let members: Vec<usize> = (0..self.entrants.len())
                        .filter(|&i| self.entrants[i].group == g)
                        .collect();
                    let t: Vec<Totals> = members.iter().map(|&i| totals[i].clone()).collect();
                    let sd: Vec<u32> = members.iter().map(|&i| seeds[i]).collect();
                    standings::ranking(&t, &sd)
                        .into_iter()
                        .map(|(k, rank)| (members[k], rank))
                        .collect::<Vec<_>>()
                })
                .collect()
        } else {
            standings::ranking(&totals, &seeds)
        };
        Standings {
            tournament: self.t.id.clone(),
            round: done,
            standings: ranked
                .into_iter()
                .map(|(i, rank)| {
                    let e = &self.entrants[i];
                    let x = &totals[i];
                    Standing {
                        rank,
                        player: e.player.clone(),
                        name: e.name.clone(),
                        points: x.points,
                        survival: x.survival,
                        opponents: x.opponents,
                        wins: x.wins,
                        games: x.games,
                        byes: x.byes,
                        seats: x.seats,
                        withdrawn: e.withdrawn_after.is_some(),
                        group: e.group,
                    }
                })
                .collect(),
        }
    }

    /// The public view (`code` for the organizer only).
    pub fn view(&self, viewer: Option<&str>) -> Tournament {
        Tournament {
            id: self.t.id.clone(),
            organizer: self.t.organizer.clone(),
            organizer_name: self.t.organizer_name.clone(),
            settings: self.t.settings.clone(),
            status: self.status(),
            round: self.t.round,
            round_over: self.round_over(),
            players: self
                .entrants
                .iter()
                .map(|e| Entrant {
                    player: e.player.clone(),
                    name: e.name.clone(),
                    seed: e.seed,
                    checked_in: e.checked_in,
                    withdrawn_after: e.withdrawn_after,
                    group: e.group,
                })
                .collect(),
            code: (viewer == Some(self.t.organizer.as_str())).then(|| self.t.code.clone()),
        }
    }

    fn name_of(&self, player: &str) -> String {
        self.entrants
            .iter()
            .find(|e| e.player == player)
            .map_or_else(|| player.to_owned(), |e| e.name.clone())
    }

    /// Round `n`'s pairings (`None` if not paired).
    pub fn round(&self, n: u32) -> Option<Round> {
        if n == 0 || n > self.t.round {
            return None;
        }
        let mut tables: Vec<Pairing> = Vec::new();
        for g in self.games.iter().filter(|g| g.round == n && g.current) {
            let aborted = self
                .games
                .iter()
                .filter(|o| !o.current && o.round == n && o.table == g.table)
                .map(|o| o.game.clone())
                .collect();
            tables.push(Pairing {
                table: g.table,
                game: g.game.clone(),
                // As stored with the seats: a bot's is "Bot (level N)".
                names: g.names.clone(),
                seats: g.seats.clone(),
                result: g.result.clone().filter(|_| g.phase == Phase::Finished),
                aborted,
            });
        }
        tables.sort_by_key(|p| p.table);
        let byes = self
            .byes
            .iter()
            .filter(|(r, _, _)| *r == n)
            .map(|(_, p, pts)| Bye {
                player: p.clone(),
                name: self.name_of(p),
                points: *pts,
            })
            .collect();
        Some(Round { round: n, tables, byes })
    }
}

/// A round's plan: tables of player indices (W, B, Y) and byes.
#[derive(Debug, Default)]
struct Plan {
    tables: Vec<[usize; 3]>,
    /// The players without a table, in groups of those who may share a
    /// table with bots (Swiss: all; round robin: each group's).
    byes: Vec<Vec<usize>>,
    /// Round robin, round 1: each entrant's group.
    groups: Vec<(usize, u32)>,
    /// Round robin, round 1: the number of rounds.
    rounds: Option<u32>,
}

fn histories(l: &Loaded, totals: &[Totals]) -> Vec<History> {
    (0..l.entrants.len())
        .map(|i| History {
            points: totals[i].points,
            // A game at a bot table counts like a bye: nobody gets a second
            // one before everyone has had one.
            byes: totals[i].byes + totals[i].bot_games,
            seats: totals[i].seats,
        })
        .collect()
}

/// Swiss: `ratings` holds the entrants' ratings of the event's variant and
/// class for round 1 (seeded by rating when any has one), empty otherwise.
fn swiss_plan(l: &Loaded, active: &[usize], ratings: &HashMap<String, i64>) -> Plan {
    let totals = l.totals();
    let seeds: Vec<u32> = l.entrants.iter().map(|e| e.seed).collect();
    let hist_all = histories(l, &totals);
    // Standings order among the active players.
    let order: Vec<usize> = standings::ranking(&totals, &seeds)
        .into_iter()
        .map(|(i, _)| i)
        .filter(|i| active.contains(i))
        .collect();
    let pos: HashMap<usize, usize> = order.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let hist: Vec<History> = order.iter().map(|&i| hist_all[i].clone()).collect();
    let idx = l.index();
    let mut met = Met::default();
    for g in l.current_games() {
        // Bots are no entrants: only the people of a table met.
        let local: Vec<usize> = g
            .seats
            .iter()
            .filter_map(|p| idx.get(p.as_str()).and_then(|i| pos.get(i)).copied())
            .collect();
        for (k, &a) in local.iter().enumerate() {
            for &b in &local[k + 1..] {
                met.add(a, b);
            }
        }
    }
    let rated: Vec<Option<i64>> = order
        .iter()
        .map(|&i| ratings.get(&l.entrants[i].player).copied())
        .collect();
    let first = if l.t.round == 0 {
        pairing::first_round_by_rating(&rated, &hist)
    } else {
        None
    };
    let p = first.unwrap_or_else(|| pairing::swiss(&hist, &met));
    Plan {
        tables: p.tables.into_iter().map(|t| t.map(|k| order[k])).collect(),
        byes: vec![p.byes.into_iter().map(|k| order[k]).collect()],
        ..Plan::default()
    }
}

fn round_robin_plan(l: &Loaded, active: &[usize], group_size: u32, round: u32) -> Result<Plan, ApiError> {
    let mut plan = Plan::default();
    // Groups: dealt at round 1 among the players checked in, then fixed.
    let groups: Vec<Vec<usize>> = if round == 1 {
        let g = pairing::groups(active.len(), group_size as usize).ok_or_else(|| {
            state_error(format!(
                "{} players checked in cannot make round robin groups of {group_size} (each needs 3 or more)",
                active.len()
            ))
        })?;
        let groups: Vec<Vec<usize>> = g
            .into_iter()
            .map(|v| v.into_iter().map(|k| active[k]).collect())
            .collect();
        for (gi, members) in groups.iter().enumerate() {
            for &m in members {
                plan.groups.push((m, gi as u32 + 1));
            }
        }
        groups
    } else {
        let mut by_group: Vec<Vec<usize>> = Vec::new();
        for (i, e) in l.entrants.iter().enumerate() {
            if let Some(g) = e.group {
                let gi = g as usize - 1;
                if by_group.len() <= gi {
                    by_group.resize(gi + 1, Vec::new());
                }
                by_group[gi].push(i);
            }
        }
        by_group
    };
    let schedules: Vec<Vec<Vec<[usize; 3]>>> = groups.iter().map(|g| pairing::round_robin(g)).collect();
    if round == 1 {
        plan.rounds = Some(schedules.iter().map(Vec::len).max().unwrap_or(0) as u32);
    }
    let totals = l.totals();
    let hist = histories(l, &totals);
    for (g, schedule) in groups.iter().zip(&schedules) {
        let tables = schedule.get(round as usize - 1).cloned().unwrap_or_default();
        let mut seated = Vec::new();
        for t in tables {
            // A table with a withdrawn player is not played: the others sit out.
            if t.iter().all(|p| active.contains(p)) {
                plan.tables.push(pairing::seat(t, &hist));
                seated.extend(t);
            }
        }
        plan.byes.push(
            g.iter()
                .copied()
                .filter(|p| active.contains(p) && !seated.contains(p))
                .collect(),
        );
    }
    Ok(plan)
}

/// The bot tables of a round whose byes bots fill: the players without a
/// table (`byes`, in groups of those who may sit together), two by two
/// within each group, seated by [`pairing::seat_with_bots`]; `None` seats are
/// bots.
fn bot_tables(byes: &[Vec<usize>], hist: &[History]) -> Vec<[Option<usize>; 3]> {
    byes.iter()
        .flat_map(|g| g.chunks(2))
        .map(|people| pairing::seat_with_bots(people, hist))
        .collect()
}

/// Who takes a seat of a table.
#[derive(Debug)]
enum TableSeat {
    /// An entrant.
    Person(Player),
    /// A new bot of this level (a bye filled by a bot).
    Bot(bot::Level),
}

/// Builds a table's game: a room with the three seats taken, so the game is
/// live and W's clock runs from the round's start (a bot at W moves at once).
/// A bot seat is a new bot player, stored with the seat.
fn table_game(
    settings: &TournamentSettings,
    seats: [TableSeat; 3],
    round: u32,
    table: u32,
) -> Result<(Room, NewGame), ApiError> {
    // A rated tournament's games are rated games — but a bot never plays a
    // rated game: a bot table's game stays casual (docs/RATINGS.md).
    let rated = settings.rated && seats.iter().all(|s| matches!(s, TableSeat::Person(_)));
    let game_settings = GameSettings {
        variant: settings.variant,
        time_control: settings.time_control,
        direction: settings.direction,
        public: true,
        players_chat: true,
        grace_ms: settings.grace_ms,
        rated,
        // 三国暗棋 draws its seating unless it is fixed: a tournament fixes it
        // (its pairing rotates the seats, RULES-ANQI R-2).
        anqi: (settings.variant == protocol::Variant::Anqi).then(|| protocol::anqi::AnqiOptions {
            fixed_seats: true,
            ..Default::default()
        }),
    };
    let id = crate::http::game_id();
    let mut room = Room::new(id.clone(), game_settings.clone())?;
    // The game's secret, if its variant has one, goes in with its first writes.
    let mut ops: Vec<_> = room.take_secret().map(Op::Secret).into_iter().collect();
    let wall = wall_ms();
    for (side, seat) in Side::ALL.into_iter().zip(seats) {
        let (_, step) = match seat {
            TableSeat::Person(p) => room.join(p, Some(side), 0, wall)?,
            TableSeat::Bot(level) => room.add_bot(
                format!("bot-{}", crate::http::random_hex(8)),
                level,
                Some(side),
                0,
                wall,
            )?,
        };
        ops.extend(step.ops);
    }
    let new = NewGame {
        id,
        settings: game_settings,
        initial_position: room.initial_position(),
        v: room.v(),
        ops,
        round,
        table,
    };
    Ok((room, new))
}

fn player_of(e: &EntrantRow) -> Player {
    // Seats only carry id and name; the account flag is not stored with them.
    Player::guest(e.player.clone(), e.name.clone())
}

/// Pairs and starts the next round (organizer only).
pub async fn pair_next_round(s: &AppState, organizer: &Player, id: &str) -> Result<Round, ApiError> {
    let l = Loaded::load(s, id).await?;
    if l.t.organizer != organizer.id {
        return Err(ApiError::new(ErrorCode::Forbidden, "only the organizer pairs rounds"));
    }
    let round = l.t.round + 1;
    if l.status() == TournamentStatus::Finished || (l.t.round > 0 && l.t.round >= l.t.settings.rounds) {
        return Err(state_error("every round has been paired"));
    }
    if !l.round_over() {
        let open: Vec<String> = l
            .current_games()
            .filter(|g| g.round == l.t.round && g.phase != Phase::Finished)
            .map(|g| format!("table {} ({})", g.table, g.game))
            .collect();
        return Err(state_error(format!(
            "round {} is not over: {} (finish or adjudicate them)",
            l.t.round,
            open.join(", ")
        )));
    }
    if round == 1
        && let Some(start) = l.t.settings.starts_ms
        && wall_ms() < start
    {
        return Err(state_error(format!(
            "round 1 may not start before {start} (ms since the epoch)"
        )));
    }
    let active: Vec<usize> = l
        .entrants
        .iter()
        .enumerate()
        .filter(|(_, e)| e.checked_in && e.withdrawn_after.is_none())
        .map(|(i, _)| i)
        .collect();
    if active.len() < 3 {
        return Err(state_error(format!(
            "{} players are checked in; a table needs 3",
            active.len()
        )));
    }
    let plan = match l.t.settings.pairing {
        PairingSystem::Swiss => {
            // Round 1 is seeded by rating when players have one.
            let ratings = if round == 1 {
                let ids: Vec<String> = active.iter().map(|&i| l.entrants[i].player.clone()).collect();
                s.store
                    .ratings_of(
                        &ids,
                        l.t.settings.variant,
                        protocol::players::TimeClass::of(&l.t.settings.time_control),
                    )
                    .await?
            } else {
                HashMap::new()
            };
            swiss_plan(&l, &active, &ratings)
        }
        PairingSystem::RoundRobin { group_size } => round_robin_plan(&l, &active, group_size, round)?,
    };
    let mut settings = l.t.settings.clone();
    if let Some(r) = plan.rounds {
        settings.rounds = r;
    }
    let person = |i: usize| TableSeat::Person(player_of(&l.entrants[i]));
    let mut tables: Vec<[TableSeat; 3]> = plan.tables.iter().map(|t| t.map(person)).collect();
    let mut byes: Vec<(String, u32)> = Vec::new();
    match settings.byes {
        ByeFill::Points => {
            for &i in plan.byes.iter().flatten() {
                byes.push((l.entrants[i].player.clone(), settings.scoring.bye));
            }
        }
        ByeFill::Bot { level } => {
            // Checked at creation; a stored level that is not one is corrupt.
            let level = bye_bot_level(level)
                .map_err(|_| ApiError::new(ErrorCode::Internal, "the tournament's bye bot level is invalid"))?;
            for seats in bot_tables(&plan.byes, &histories(&l, &l.totals())) {
                tables.push(seats.map(|p| p.map_or(TableSeat::Bot(level), person)));
            }
        }
    }
    let mut rooms = Vec::new();
    let mut games = Vec::new();
    for (k, t) in tables.into_iter().enumerate() {
        let (room, new) = table_game(&settings, t, round, k as u32 + 1)?;
        rooms.push(room);
        games.push(new);
    }
    let groups: Vec<(String, u32)> = plan
        .groups
        .iter()
        .map(|&(i, g)| (l.entrants[i].player.clone(), g))
        .collect();
    match s
        .store
        .start_round(&l.t, round, &games, &byes, &groups, &settings)
        .await
    {
        Ok(()) => {}
        Err(StoreError::Conflict) => return Err(state_error("the round was paired meanwhile")),
        Err(e) => return Err(e.into()),
    }
    for room in rooms {
        s.rooms.start(room, Default::default(), 0).await?;
    }
    tracing::info!(tournament = %id, round, tables = games.len(), byes = byes.len(), "round paired");
    let l = Loaded::load(s, id).await?;
    l.round(round)
        .ok_or_else(|| ApiError::new(ErrorCode::Internal, "the round vanished"))
}

/// Starts a new game at the table of an aborted one (same players, same
/// seats; a bot's seat goes to a new bot of the same level).
pub async fn repair_table(s: &AppState, l: &Loaded, old: &GameRow) -> Result<String, ApiError> {
    let idx = l.index();
    let mut seats = Vec::with_capacity(3);
    for (p, bot) in old.seats.iter().zip(old.bots) {
        let seat = match (idx.get(p.as_str()), bot) {
            (Some(&i), _) => TableSeat::Person(player_of(&l.entrants[i])),
            (None, Some(level)) => TableSeat::Bot(level),
            (None, None) => {
                return Err(ApiError::new(
                    ErrorCode::Internal,
                    "a seated player is neither an entrant nor a bot",
                ));
            }
        };
        seats.push(seat);
    }
    let seats: [TableSeat; 3] = seats
        .try_into()
        .map_err(|_| ApiError::new(ErrorCode::Internal, "a table has three seats"))?;
    let (room, new) = table_game(&l.t.settings, seats, old.round, old.table)?;
    match s.store.replace_game(&l.t, &old.game, &new).await {
        Ok(()) => {}
        Err(StoreError::Conflict) => return Err(state_error("the game was replaced meanwhile")),
        Err(e) => return Err(e.into()),
    }
    s.rooms.start(room, Default::default(), 0).await?;
    Ok(new.id)
}

/// The standings as CSV: a header line, then one line per player.
pub fn standings_csv(st: &Standings) -> String {
    let mut out = String::from("rank,player,name,points,survival,opponents,wins,games,byes,w,b,y,withdrawn,group\n");
    for r in &st.standings {
        // Names are letters, digits, '_' and '-' (accounts) or guest-…: no quoting
        // needed, but quote anyway so any name stays one field.
        let name = format!("\"{}\"", r.name.replace('"', "\"\""));
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.rank,
            r.player,
            name,
            r.points,
            r.survival,
            r.opponents,
            r.wins,
            r.games,
            r.byes,
            r.seats[0],
            r.seats[1],
            r.seats[2],
            r.withdrawn,
            r.group.map_or(String::new(), |g| g.to_string())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(v: serde_json::Value) -> Result<TournamentSettings, ApiError> {
        let c: CreateTournament = serde_json::from_value(v).expect("a creation request");
        settings_of(c, 60_000, &crate::http::ClockMinimums::default(), 0)
    }

    /// A round robin of `n` players checked in, nothing played yet.
    fn round_robin(n: u32, group_size: u32) -> Loaded {
        let s = settings(serde_json::json!({
            "name": "rr", "pairing": { "kind": "round_robin", "group_size": group_size },
            "byes": { "kind": "bot", "level": 2 }
        }))
        .expect("valid settings");
        Loaded {
            t: TournamentRow {
                id: "t".into(),
                organizer: "o".into(),
                organizer_name: "o".into(),
                code: "C".into(),
                settings: s,
                status: TournamentStatus::Registration,
                round: 0,
            },
            entrants: (0..n)
                .map(|i| EntrantRow {
                    player: format!("p{i}"),
                    name: format!("p{i}"),
                    seed: i + 1,
                    checked_in: true,
                    withdrawn_after: None,
                    group: None,
                    account: true,
                })
                .collect(),
            games: Vec::new(),
            byes: Vec::new(),
        }
    }

    #[test]
    fn a_bye_bot_level_must_be_a_bot_level() {
        for level in [1, 2, 3] {
            let s = settings(serde_json::json!({ "name": "t", "byes": { "kind": "bot", "level": level } }));
            assert_eq!(s.map(|s| s.byes).ok(), Some(ByeFill::Bot { level }));
        }
        for level in [0, 4, 255] {
            let e = settings(serde_json::json!({ "name": "t", "byes": { "kind": "bot", "level": level } }))
                .expect_err("refused");
            assert_eq!(e.0.code, ErrorCode::BadRequest);
            assert!(e.0.message.contains("level"), "{}", e.0.message);
        }
    }

    #[test]
    fn round_robin_bot_tables_keep_to_one_group() {
        // 10 players in groups of 5: each round one table per group and two
        // players of the group at a bot table.
        let l = round_robin(10, 5);
        let active: Vec<usize> = (0..10).collect();
        let plan = round_robin_plan(&l, &active, 5, 1).expect("a plan");
        let group: HashMap<usize, u32> = plan.groups.iter().copied().collect();
        assert_eq!(plan.tables.len(), 2);
        let hist = vec![History::default(); 10];
        let tables = bot_tables(&plan.byes, &hist);
        assert_eq!(tables.len(), 2);
        for t in &tables {
            let people: Vec<usize> = t.iter().flatten().copied().collect();
            assert_eq!(people.len(), 2, "{t:?}");
            assert_eq!(group[&people[0]], group[&people[1]], "{t:?}");
        }
        let mut everyone: Vec<usize> = plan
            .tables
            .iter()
            .flatten()
            .chain(tables.iter().flatten().flatten())
            .copied()
            .collect();
        everyone.sort_unstable();
        assert_eq!(everyone, active);
        // 8 in groups of 4: one person of each group alone with two bots.
        let l = round_robin(8, 4);
        let active: Vec<usize> = (0..8).collect();
        let plan = round_robin_plan(&l, &active, 4, 1).expect("a plan");
        let tables = bot_tables(&plan.byes, &vec![History::default(); 8]);
        assert_eq!(tables.len(), 2);
        assert!(tables.iter().all(|t| t.iter().flatten().count() == 1));
    }

    #[test]
    fn three_players_left_over_make_two_bot_tables() {
        // Two by two: 0 and 1 share a table, 2 is alone. 1 had W: it sits B.
        let mut hist = vec![History::default(); 3];
        hist[1].seats = [1, 0, 0];
        let tables = bot_tables(&[vec![0, 1, 2]], &hist);
        assert_eq!(tables, vec![[Some(0), Some(1), None], [Some(2), None, None]]);
    }
}
