//! Computer players for 三国演弈棋 (variant `yanyi`, `shared/RULES-YANYI.md`).
//!
//! Three players and the 汉 force, which never moves by itself; one alliance
//! that lasts until the first elimination; 被将先走 (a checked player moves
//! next, so the order is no fixed cycle). The search is the generic
//! paranoid alpha-beta of [`crate::generic`], over this variant's
//! [`SearchPosition`] implementation for [`engine::yanyi::Position`]: the
//! mover at each node comes from the position (`turn()`, i.e. the
//! `MoveOutcome::next` of the move that led there), and the root's ally, while
//! the alliance lasts, plays for the root.
//!
//! - [`choose_move`]: a move for a bare position;
//! - [`choose_game_move`]: a move for a [`YanyiGame`], avoiding the moves the
//!   record's rules (§9: perpetual check, repetition) would punish;
//! - [`eval`]: the evaluation.

pub mod eval;

use engine::yanyi::{Action, Event, Move, Outcome, Player, Position, YanyiGame};

use crate::Level;
use crate::generic::{self, Found, SearchPosition, Settings};
use crate::rng::Rng;

/// The search settings of a level in this variant. Level 1 does not search
/// (see [`choose_move`]); its settings are only used if asked for.
pub const fn settings(level: Level) -> Settings {
    match level {
        Level::One => Settings {
            max_depth: 1,
            nodes: 500,
            quiescence: 0,
            killers: false,
            root_noise: 60,
        },
        Level::Two => Settings {
            max_depth: 3,
            nodes: 4_000,
            quiescence: 3,
            killers: false,
            root_noise: 10,
        },
        Level::Three => Settings {
            max_depth: 8,
            nodes: 60_000,
            quiescence: 4,
            killers: true,
            root_noise: 5,
        },
    }
}

fn seat(p: Player) -> usize {
    p.index()
}

impl SearchPosition for Position {
    type Move = Move;

    fn mover(&self) -> usize {
        seat(self.turn())
    }

    fn is_over(&self) -> bool {
        Position::is_over(self)
    }

    fn is_live(&self, s: usize) -> bool {
        self.live().contains(Player::from_index(s))
    }

    fn same_side(&self, a: usize, b: usize) -> bool {
        a == b || self.allied(Player::from_index(a), Player::from_index(b))
    }

    fn moves(&self) -> Vec<Move> {
        self.legal_moves().to_vec()
    }

    fn capture_order(&self, m: Move) -> i32 {
        match self.piece_at(m.to) {
            Some(victim) => {
                let attacker = self.piece_at(m.from).map_or(0, |p| eval::role_value(p.role));
                eval::capture_value(victim) * 10 - attacker / 10 + 1
            }
            None => 0,
        }
    }

    fn play(&mut self, m: Move) {
        self.play_unchecked(m);
    }

    fn mover_in_check(&self) -> bool {
        self.in_check(self.turn())
    }

    fn utility(&self, s: usize) -> i32 {
        eval::utility(self, Player::from_index(s))
    }

    fn key(&self) -> u64 {
        fx_key(self)
    }

    fn move_index(m: Move) -> usize {
        m.from.index() * 256 + m.to.index()
    }

    fn reckless(&self, s: usize) -> bool {
        let p = Player::from_index(s);
        p != Player::G && self.live().contains(Player::G) && eval::pieces_between_kings(self) == Some(1)
    }
}

/// FxHash over the position's derived `Hash` (placement, mover, live
/// players, alliance, first-move flags).
fn fx_key(pos: &Position) -> u64 {
    use std::hash::{Hash, Hasher};
    struct Fx(u64);
    impl Hasher for Fx {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
            }
            for &b in chunks.remainder() {
                self.write_u64(u64::from(b));
            }
        }
        fn write_u64(&mut self, v: u64) {
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
        }
        fn write_u8(&mut self, v: u8) {
            self.write_u64(u64::from(v));
        }
        fn write_usize(&mut self, v: usize) {
            self.write_u64(v as u64);
        }
    }
    let mut h = Fx(0);
    pos.hash(&mut h);
    h.finish()
}

/// A move for the player to move in `pos` at `level`, or `None` when the game
/// is over. Deterministic for `(pos, level, seed)`; `stop` is asked every
/// 1024 nodes with the node count, and `true` returns the best move so far.
/// Knows nothing of the record (§9); a server calls [`choose_game_move`].
pub fn choose_move(pos: &Position, level: Level, seed: u64, stop: &mut dyn FnMut(u64) -> bool) -> Option<Move> {
    let moves = pos.legal_moves();
    choose_among(pos, &moves, &[], level, seed, stop)
}

fn choose_among(
    pos: &Position,
    moves: &[Move],
    bias: &[i32],
    level: Level,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Option<Move> {
    if pos.is_over() || moves.is_empty() {
        return None;
    }
    if level == Level::One {
        return beginner_move(pos, moves, seed);
    }
    search(pos, moves, bias, level, seed, stop).best
}

/// The generic search of `pos` among `moves` with `level`'s settings.
pub fn search(
    pos: &Position,
    moves: &[Move],
    bias: &[i32],
    level: Level,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Found<Move> {
    generic::search(pos, moves, bias, &settings(level), seed, stop)
}

/// Level 1: an elimination or a free capture (the captured point not
/// attacked by an enemy afterwards) if there is one, the most valuable
/// first; otherwise a uniformly random legal move.
fn beginner_move(pos: &Position, moves: &[Move], seed: u64) -> Option<Move> {
    let mut rng = Rng::new(seed);
    let me = pos.turn();
    let mut best: Option<(i32, Move)> = None;
    for &m in moves {
        let Some(victim) = pos.piece_at(m.to) else { continue };
        let mut child = *pos;
        let out = child.play_unchecked(m);
        let mut value = eval::capture_value(victim);
        if !out.eliminated.is_empty() {
            value += 10_000;
        }
        let free = !child.enemies(me).iter().any(|e| child.attacks(e, m.to));
        if free || !out.eliminated.is_empty() {
            let value = value * 16 + rng.below(16) as i32;
            if best.is_none_or(|b| value > b.0) {
                best = Some((value, m));
            }
        }
    }
    if let Some((_, m)) = best {
        return Some(m);
    }
    Some(moves[rng.below(moves.len())])
}

/// How much worse than its enemies a player must stand before it is happy
/// with a draw by repetition.
pub const DRAW_MARGIN: i32 = 300;

/// A move for the player to move in `game` at `level` (`None` once the game
/// is over), as in [`choose_move`], among the moves the record's rules do not
/// punish: a move that loses at once (the 8th consecutive check on one
/// player, a repetition where the bot is the perpetual checker) is never
/// played unless nothing else is legal; a move that draws (repetition, no
/// progress) is played only when the bot stands worse by [`DRAW_MARGIN`]; a
/// move that wins the game is played at once.
pub fn choose_game_move(game: &YanyiGame, level: Level, seed: u64, stop: &mut dyn FnMut(u64) -> bool) -> Option<Move> {
    if game.is_finished() {
        return None;
    }
    let pos = game.position();
    let me = pos.turn();
    let all = pos.legal_moves();
    let worse = eval::utility(pos, me) - eval::ELIMINATION_BONUS * (3 - pos.live().count() as i32) < -DRAW_MARGIN;
    let at = game.events().last().map_or(0, |e| e.at);
    let mut allowed = Vec::with_capacity(all.len());
    for &m in &all {
        let mut trial = game.clone();
        if trial
            .apply(Event {
                player: me,
                action: Action::Move(m),
                at,
            })
            .is_err()
        {
            continue;
        }
        if let Some(result) = trial.result() {
            match result.outcomes[me.index()] {
                Some(Outcome::Win) => return Some(m),
                Some(Outcome::Draw) if worse => allowed.push(m),
                _ => {}
            }
            continue;
        }
        if trial.position().live().contains(me) {
            allowed.push(m);
        }
    }
    if allowed.is_empty() {
        allowed = all.to_vec();
    }
    choose_among(pos, &allowed, &[], level, seed, stop)
}
