//! Computer players for Three Kingdoms chess (三国象棋).
//!
//! A pure crate on top of [`engine`]: no IO, no clock, no threads. A search
//! is bounded by a node budget ([`Level::config`]) and an optional stop
//! callback the caller drives from its own clock, and the same seed gives
//! the same move.
//!
//! - [`choose_move`]: a move for the side to move of a [`Game`], avoiding
//!   moves the §6 check rules would punish;
//! - [`random_move`]: the reference random mover;
//! - [`answer_draw`] / [`offer_draw`]: the draw-vote policy (never a
//!   collusion loophole, see [`answer_draw`]);
//! - [`search::search`] and [`eval`]: the search and evaluation themselves;
//! - [`anqi`]: the bots of the second game, 三国暗棋 (hidden pieces), which see
//!   only the viewer position ([`anqi::choose_action`]).
//!
//! [`yanyi`] plays 三国演弈棋 on the variant-generic search of [`generic`].

pub mod anqi;
pub mod eval;
pub mod generic;
pub mod rng;
pub mod search;
pub mod yanyi;

use engine::{Game, Move, MoveList, Position, Role, Side};

pub use search::{Algorithm, Config, Report};

/// How strong a bot plays: each level searches more (and with more
/// features) than the one below. See `bot/README.md` for measured strength.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Shallow paranoid search (2 plies), no quiescence, a small budget and
    /// some randomness: a beginner that still takes what it is given.
    One,
    /// Paranoid search with quiescence, 10k nodes.
    Two,
    /// Paranoid search with quiescence and killer/history ordering, 80k nodes.
    Three,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 3] = [Level::One, Level::Two, Level::Three];

    /// The search settings of this level.
    pub const fn config(self) -> Config {
        match self {
            Level::One => Config {
                algorithm: Algorithm::Paranoid,
                max_depth: 2,
                nodes: 2_000,
                quiescence: false,
                killers: false,
                root_noise: 40,
            },
            Level::Two => Config {
                algorithm: Algorithm::Paranoid,
                max_depth: 6,
                nodes: 10_000,
                quiescence: true,
                killers: false,
                root_noise: 10,
            },
            Level::Three => Config {
                algorithm: Algorithm::Paranoid,
                max_depth: 10,
                nodes: 80_000,
                quiescence: true,
                killers: true,
                root_noise: 5,
            },
        }
    }

    /// The level's number: 1, 2 or 3.
    pub const fn number(self) -> u8 {
        match self {
            Level::One => 1,
            Level::Two => 2,
            Level::Three => 3,
        }
    }

    /// The level numbered 1, 2 or 3.
    pub const fn from_number(n: u8) -> Option<Level> {
        match n {
            1 => Some(Level::One),
            2 => Some(Level::Two),
            3 => Some(Level::Three),
            _ => None,
        }
    }
}

/// The legal moves of the side to move that no §6 check rule punishes: a
/// check that would be the mover's 8th consecutive (phase 2: 6th) or its
/// 25th in all (phase 3) on the same side, or the 4th time it gives check
/// to that side with the same position on the board (备注6), loses the game,
/// unless the move mates; in phase 2 the 20th check draws, which a bot that
/// does not stand worse avoids. If every move is punished, all legal moves (the bot loses either way).
/// Empty when the game is over.
pub fn allowed_moves(game: &Game) -> MoveList {
    if game.is_finished() {
        return MoveList::new();
    }
    let pos = game.position();
    let me = pos.turn();
    let phase = usize::from(pos.live().count() < 3);
    let limits = game.limits();
    let all = pos.legal_moves();
    // In phase 2 the 20th check by either side draws: only a side that
    // stands worse may want that.
    let better = phase == 1 && balance(pos, me) > -100;
    let mut allowed = all.clone();
    allowed.retain(|m| {
        let mut child = *pos;
        let out = child.play_unchecked(*m);
        if !out.eliminated.is_empty() {
            return true;
        }
        out.checks.iter().all(|t| {
            let consecutive = game.consecutive_checks(me, t) + 1;
            let cumulative = game.cumulative_checks(me, t) + 1;
            let repeated = game.checking_repetitions(me, t, &child) + 1;
            consecutive <= limits.consecutive_checks[phase]
                && repeated <= limits.repetitions
                && (cumulative < limits.cumulative_checks[phase] || (phase == 1 && !better))
        })
    });
    if allowed.is_empty() { all } else { allowed }
}

/// A move for the side to move of `game` at `level`, or `None` when the game
/// is over. Deterministic for a given `(game, level, seed)`.
pub fn choose_move(game: &Game, level: Level, seed: u64) -> Option<Move> {
    choose_move_with(game, &level.config(), seed, &mut |_| false)
}

/// [`choose_move`] with explicit settings and a stop callback: `stop` is
/// asked every 1024 nodes with the node count so far; when it says `true`
/// the best move found until then is returned. A server passes a closure
/// reading its clock; the search itself never does.
pub fn choose_move_with(game: &Game, cfg: &Config, seed: u64, stop: &mut dyn FnMut(u64) -> bool) -> Option<Move> {
    let moves = allowed_moves(game);
    let bias = progress_bias(game, &moves);
    search::search_biased(game.position(), &moves, &bias, cfg, seed, stop).best
}

/// The largest bonus for a capture or a check when a draw by the §6 length
/// rules is about to end a game the bot does not stand clearly worse in.
pub const PROGRESS_BONUS: i32 = 350;

/// Root bonuses steering a bot toward captures as the no-progress draw (90 plies in phase 3, 40 in phase 2) or
/// the phase-2 length draw (80 plies) comes near: nothing until a quarter
/// of the limit, then growing to [`PROGRESS_BONUS`] at the limit. A bot that
/// stands clearly worse is happy with the draw and gets no bonus.
fn progress_bias(game: &Game, moves: &[Move]) -> Vec<i32> {
    let pos = game.position();
    let phase = usize::from(pos.live().count() < 3);
    let limits = game.limits();
    let urgency = |done: u32, limit: u32| -> i32 {
        let start = limit / 4;
        if limit == 0 || done <= start {
            0
        } else {
            ((done - start) as i32 * PROGRESS_BONUS / (limit - start).max(1) as i32).min(PROGRESS_BONUS)
        }
    };
    let mut bonus = urgency(game.plies_without_progress(), limits.no_progress_plies[phase]);
    if phase == 1 {
        bonus = bonus.max(urgency(game.phase2_plies(), limits.phase2_plies));
    }
    if bonus == 0 || balance(pos, pos.turn()) < -100 {
        return Vec::new();
    }
    moves
        .iter()
        .map(|&m| {
            let mut child = *pos;
            let out = child.play_unchecked(m);
            // Checks reset the counter without changing much and spend the
            // check limits (in phase 2 the 20th draws): only captures count.
            if out.captured.is_some() { bonus } else { 0 }
        })
        .collect()
}

/// A search of a bare position (no §6 counters known): the report with the
/// move, its value, the depth reached and the nodes spent.
pub fn analyse(pos: &Position, cfg: &Config, seed: u64) -> Report {
    let moves = pos.legal_moves();
    search::search(pos, &moves, cfg, seed, &mut |_| false)
}

/// A uniformly random legal move of the side to move (`None` if it has none):
/// the reference opponent of the strength benchmark.
pub fn random_move(pos: &Position, seed: u64) -> Option<Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    Some(moves[rng::Rng::new(seed).below(moves.len())])
}

/// How much worse than its opponent (in evaluation units, a soldier ≈ 100)
/// a side must stand in phase 2 before it takes a draw.
pub const DRAW_ACCEPT_MARGIN: i32 = 250;

/// Whether `side` accepts the pending draw offer (`false` if there is none
/// for it to answer).
///
/// **Phase 3: never.** Under the one-accepts-one-declines rule declining
/// dominates accepting whatever the third side answers: if it accepts,
/// declining wins the game outright where accepting would only draw; if it
/// declines, accepting loses at once where declining plays on. So a bot
/// never accepts there, however bad its position: a bot can never be the
/// accomplice of an offer aimed at the third side, nor its victim.
///
/// **Phase 2** (two sides, no third party to collude against): accept when
/// a search at `level` says the bot stands clearly worse (by
/// [`DRAW_ACCEPT_MARGIN`]), or when the position is dead equal: within a
/// small margin and neither side has a piece that can attack (no chariot,
/// cannon, horse, prince or soldier).
pub fn answer_draw(game: &Game, side: Side, level: Level) -> bool {
    answer_draw_with(game, side, level, &mut |_| false)
}

/// [`answer_draw`] with a stop callback for the search it may run (when
/// `side` is to move), as in [`choose_move_with`]: a server bounds it by the
/// clock. A stopped search answers from the best it found so far.
pub fn answer_draw_with(game: &Game, side: Side, level: Level, stop: &mut dyn FnMut(u64) -> bool) -> bool {
    let Some((_, waiting)) = game.pending_offer() else {
        return false;
    };
    if !waiting.contains(side) || game.is_finished() {
        return false;
    }
    let pos = game.position();
    if pos.live().count() != 2 {
        return false;
    }
    let value = value_for(pos, side, level, stop);
    value <= -DRAW_ACCEPT_MARGIN || (value.abs() <= 50 && no_attackers(pos))
}

/// Whether `side` should offer a draw now: only in phase 2 (in phase 3 an
/// offer one side accepts and the other declines loses for the offerer),
/// only once requests are allowed (no warnings), with offers left, and only
/// when it stands clearly worse or the position is dead equal. A bot never
/// offers twice in a row without the position changing much: the caller
/// decides how often to ask.
pub fn offer_draw(game: &Game, side: Side, level: Level) -> bool {
    offer_draw_with(game, side, level, &mut |_| false)
}

/// [`offer_draw`] with a stop callback for its search, as in [`answer_draw_with`].
pub fn offer_draw_with(game: &Game, side: Side, level: Level, stop: &mut dyn FnMut(u64) -> bool) -> bool {
    let pos = game.position();
    if game.is_finished()
        || pos.live().count() != 2
        || !pos.live().contains(side)
        || !game.requests_allowed()
        || game.pending_offer().is_some()
        || game.draw_offers_made(side) >= game.limits().draw_offers_per_side
    {
        return false;
    }
    let value = value_for(pos, side, level, stop);
    value <= -DRAW_ACCEPT_MARGIN || (value.abs() <= 50 && no_attackers(pos))
}

/// `side`'s static balance: its utility without the bonus for the sides
/// already gone (0 is even).
fn balance(pos: &Position, side: Side) -> i32 {
    eval::utility(pos, side) - eval::ELIMINATION_BONUS * (3 - pos.live().count() as i32)
}

/// `side`'s balance in the position (its utility without the bonus for the
/// sides already gone, so 0 is even): a search when it is to move, else the
/// static evaluation.
fn value_for(pos: &Position, side: Side, level: Level, stop: &mut dyn FnMut(u64) -> bool) -> i32 {
    let value = if pos.turn() == side {
        let mut cfg = level.config();
        cfg.root_noise = 0;
        search::search(pos, &pos.legal_moves(), &cfg, 0, stop).value
    } else {
        eval::utility(pos, side)
    };
    if value.abs() >= eval::MATE / 2 {
        return value;
    }
    value - eval::ELIMINATION_BONUS * (3 - pos.live().count() as i32)
}

/// No live side has a piece that could ever attack a king: a dead draw.
fn no_attackers(pos: &Position) -> bool {
    pos.pieces().all(|(_, pc)| {
        !matches!(
            pc.role,
            Role::Chariot | Role::Cannon | Role::Horse | Role::Prince | Role::Soldier
        )
    })
}
