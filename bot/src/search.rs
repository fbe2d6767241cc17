//! Three-player search: paranoid alpha-beta and max^n, both with iterative
//! deepening, move ordering and a capture quiescence.
//!
//! **Paranoid** (Sturtevant & Korf 2000): the side to move at the root
//! maximises its utility, the two others are taken as one coalition that
//! minimises it. This turns the game into a two-player one, so alpha-beta
//! pruning works in full and the search goes deep.
//!
//! **Max^n** (Luckhardt & Irani 1986): every side maximises its own
//! utility. Truer to the game, but with no safe pruning between
//! non-zero-sum utilities it reaches much shallower depths for a budget.
//!
//! Both are bounded by a node budget and an injectable stop callback, never
//! by a clock, so the same seed and budget always give the same move.

use arrayvec::ArrayVec;
use engine::{Move, MoveList, Position, Role, Side};

use crate::eval::{INF, MATE, role_value, utilities};
use crate::rng::Rng;

/// Which three-player search to run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The mover against a coalition of both others (alpha-beta).
    Paranoid,
    /// Every side maximises its own utility (no pruning).
    MaxN,
}

/// What a search may do and spend.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// The search algorithm.
    pub algorithm: Algorithm,
    /// Deepest iteration of iterative deepening, in plies.
    pub max_depth: u8,
    /// Node budget: moves played inside the search (quiescence included).
    pub nodes: u64,
    /// Resolve captures (and check evasions) past the horizon.
    pub quiescence: bool,
    /// Order quiet moves by killer moves and the history heuristic.
    pub killers: bool,
    /// The largest random bonus added to a root move's value, so that
    /// equal-looking moves vary with the seed.
    pub root_noise: i32,
}

/// What a search found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The move chosen; `None` when there was no move to choose from.
    pub best: Option<Move>,
    /// Its value for the mover (its utility, see [`crate::eval::utilities`]).
    pub value: i32,
    /// The deepest iteration completed.
    pub depth: u8,
    /// Nodes searched.
    pub nodes: u64,
}

const MAX_PLY: usize = 64;
/// Quiescence plies beyond the horizon.
const QUIESCENCE_PLIES: u8 = 4;
/// Quiescence plies for max^n, which cannot prune.
const MAXN_QUIESCENCE_PLIES: u8 = 2;
/// Captures max^n quiescence looks at per node.
const MAXN_QUIESCENCE_WIDTH: usize = 6;

/// Searches `pos` among `root_moves` (the legal moves the caller allows).
/// `stop` is asked every 1024 nodes with the node count; returning `true`
/// ends the search with the best move of the deepest work done.
pub fn search(
    pos: &Position,
    root_moves: &[Move],
    cfg: &Config,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Report {
    search_biased(pos, root_moves, &[], cfg, seed, stop)
}

/// [`search`] with a bonus added to the value of each root move
/// (`bias[i]` for `root_moves[i]`; missing entries count 0): how a caller
/// that knows the game's counters steers toward captures and checks when
/// a no-progress draw looms.
pub fn search_biased(
    pos: &Position,
    root_moves: &[Move],
    bias: &[i32],
    cfg: &Config,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Report {
    let mut report = Report {
        best: root_moves.first().copied(),
        value: 0,
        depth: 0,
        nodes: 0,
    };
    if root_moves.len() <= 1 || pos.is_over() {
        return report;
    }
    let mut rng = Rng::new(seed);
    let mut s = Searcher {
        root: pos.turn(),
        cfg: *cfg,
        nodes: 0,
        stopped: false,
        stop,
        killers: [[None; 2]; MAX_PLY],
        history: vec![0; 184 * 184],
        table: if cfg.algorithm == Algorithm::Paranoid {
            vec![Entry::default(); TABLE_SIZE]
        } else {
            Vec::new()
        },
    };
    // Root moves: shuffled (so ties break by the seed), then captures first.
    let mut order: Vec<(Move, i32, i32)> = root_moves
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let noise = if cfg.root_noise > 0 {
                rng.below(cfg.root_noise as usize + 1) as i32
            } else {
                0
            };
            (m, noise + bias.get(i).copied().unwrap_or(0), 0)
        })
        .collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
    for entry in &mut order {
        entry.2 = capture_score(pos, entry.0);
    }
    order.sort_by_key(|e| std::cmp::Reverse(e.2));

    for depth in 1..=cfg.max_depth.max(1) {
        let mut best: Option<(Move, i32)> = None;
        let mut scored = Vec::with_capacity(order.len());
        for &(m, noise, _) in &order {
            let mut child = *pos;
            child.play_unchecked(m);
            if s.tick() {
                break;
            }
            let alpha = best.map_or(-INF, |(_, v)| v);
            let v = match cfg.algorithm {
                Algorithm::Paranoid => s.paranoid(&child, i32::from(depth) - 1, 1, alpha - noise, INF),
                Algorithm::MaxN => s.maxn(&child, i32::from(depth) - 1, 1)[s.root.index()],
            };
            if s.stopped {
                break;
            }
            let v = v.saturating_add(noise);
            scored.push((m, noise, v));
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((m, v));
            }
        }
        // A partial iteration still counts: the previous best was searched
        // first, so anything that beat it is at least as good.
        if let Some((m, v)) = best {
            report.best = Some(m);
            report.value = v;
        }
        if s.stopped {
            break;
        }
        report.depth = depth;
        // Next iteration: best first (alpha-beta values below the best are
        // only bounds, but their order is still a fair guess).
        scored.sort_by_key(|e| std::cmp::Reverse(e.2));
        order = scored;
        if report.value.abs() >= MATE - MAX_PLY as i32 {
            break;
        }
    }
    report.nodes = s.nodes;
    report
}

/// MVV-LVA: captures first, the most valuable victim by the least valuable
/// attacker first; 0 for a quiet move.
fn capture_score(pos: &Position, m: Move) -> i32 {
    let Some(victim) = pos.piece_at(m.to) else { return 0 };
    let attacker = pos.piece_at(m.from).map_or(0, |p| role_value(p.role));
    let v = if victim.role == Role::King {
        5_000
    } else {
        role_value(victim.role)
    };
    100_000 + 8 * v - attacker / 8
}

struct Searcher<'a> {
    root: Side,
    cfg: Config,
    nodes: u64,
    stopped: bool,
    stop: &'a mut dyn FnMut(u64) -> bool,
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Vec<u32>,
    table: Vec<Entry>,
}

/// A transposition-table entry (paranoid search only: its values are the
/// root side's, so they stay valid across the whole search).
#[derive(Copy, Clone, Debug, Default)]
struct Entry {
    key: u64,
    best: Option<Move>,
    value: i32,
    depth: i8,
    bound: Bound,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Bound {
    #[default]
    Exact,
    /// The value is at least this.
    Lower,
    /// The value is at most this.
    Upper,
}

/// Entries in the transposition table (a power of two).
const TABLE_SIZE: usize = 1 << 16;

/// FxHash over the position's derived `Hash`: placement, side to move, live
/// sides and retaliation flags all take part, so equal keys mean equal
/// positions but for the rare collision.
fn position_key(pos: &Position) -> u64 {
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

type Scored = ArrayVec<(i32, Move), { engine::position::MAX_MOVES }>;

impl Searcher<'_> {
    /// Counts a node; true when the search must stop.
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.cfg.nodes || (self.nodes & 1023 == 0 && (self.stop)(self.nodes)) {
            self.stopped = true;
        }
        self.stopped
    }

    /// The root's value of a finished game, or `None` if it goes on for the root.
    fn terminal(&self, pos: &Position, ply: usize) -> Option<i32> {
        if !pos.live().contains(self.root) {
            Some(-MATE + ply as i32)
        } else if pos.live().count() == 1 {
            Some(MATE - ply as i32)
        } else {
            None
        }
    }

    fn ordered(
        &self,
        pos: &Position,
        moves: &MoveList,
        ply: usize,
        captures_only: bool,
        hash_move: Option<Move>,
    ) -> Scored {
        let mut out = Scored::new();
        let killers = if self.cfg.killers && ply < MAX_PLY {
            self.killers[ply]
        } else {
            [None; 2]
        };
        for &m in moves {
            let c = capture_score(pos, m);
            if captures_only && c == 0 {
                continue;
            }
            let score = if Some(m) == hash_move {
                1_000_000
            } else if c > 0 {
                c
            } else if killers[0] == Some(m) {
                90_000
            } else if killers[1] == Some(m) {
                89_000
            } else if self.cfg.killers {
                self.history[m.from.index() * 184 + m.to.index()].min(80_000) as i32
            } else {
                0
            };
            out.push((score, m));
        }
        out.sort_by_key(|e| std::cmp::Reverse(e.0));
        out
    }

    fn reward(&mut self, pos: &Position, m: Move, depth: i32, ply: usize) {
        if !self.cfg.killers || pos.piece_at(m.to).is_some() || ply >= MAX_PLY {
            return;
        }
        let k = &mut self.killers[ply];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
        let h = &mut self.history[m.from.index() * 184 + m.to.index()];
        *h = h.saturating_add((depth * depth) as u32);
    }

    /// Paranoid alpha-beta: the root side maximises, the others minimise.
    fn paranoid(&mut self, pos: &Position, depth: i32, ply: usize, mut alpha: i32, mut beta: i32) -> i32 {
        if let Some(v) = self.terminal(pos, ply) {
            return v;
        }
        if depth <= 0 || ply + 1 >= MAX_PLY {
            return if self.cfg.quiescence {
                self.quiesce(pos, ply, alpha, beta, 0)
            } else {
                utilities(pos)[self.root.index()]
            };
        }
        let key = position_key(pos);
        let slot = key as usize & (TABLE_SIZE - 1);
        let entry = self.table[slot];
        let mut hash_move = None;
        if entry.key == key {
            hash_move = entry.best;
            if i32::from(entry.depth) >= depth {
                let v = entry.value;
                match entry.bound {
                    Bound::Exact => return v,
                    Bound::Lower if v >= beta => return v,
                    Bound::Upper if v <= alpha => return v,
                    _ => {}
                }
            }
        }
        let (alpha0, beta0) = (alpha, beta);
        let moves = pos.legal_moves();
        let max = pos.turn() == self.root;
        let mut best = if max { -INF } else { INF };
        let mut best_move = None;
        for (_, m) in self.ordered(pos, &moves, ply, false, hash_move) {
            let mut child = *pos;
            child.play_unchecked(m);
            if self.tick() {
                return best;
            }
            let v = self.paranoid(&child, depth - 1, ply + 1, alpha, beta);
            if self.stopped {
                return best;
            }
            if (max && v > best) || (!max && v < best) {
                best = v;
                best_move = Some(m);
            }
            if max {
                alpha = alpha.max(v);
            } else {
                beta = beta.min(v);
            }
            if alpha >= beta {
                self.reward(pos, m, depth, ply);
                break;
            }
        }
        let bound = if best <= alpha0 {
            Bound::Upper
        } else if best >= beta0 {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table[slot] = Entry {
            key,
            best: best_move,
            value: best,
            depth: depth as i8,
            bound,
        };
        best
    }

    /// Captures only (all moves when in check), with stand-pat for every side.
    fn quiesce(&mut self, pos: &Position, ply: usize, mut alpha: i32, mut beta: i32, qply: u8) -> i32 {
        if let Some(v) = self.terminal(pos, ply) {
            return v;
        }
        let max = pos.turn() == self.root;
        let in_check = pos.is_check();
        let stand = utilities(pos)[self.root.index()];
        if qply >= QUIESCENCE_PLIES || ply + 1 >= MAX_PLY {
            return stand;
        }
        // Evasions are searched in full only right past the horizon.
        let in_check = in_check && qply == 0;
        let mut best = if in_check {
            if max { -INF } else { INF }
        } else {
            if max {
                if stand >= beta {
                    return stand;
                }
                alpha = alpha.max(stand);
            } else {
                if stand <= alpha {
                    return stand;
                }
                beta = beta.min(stand);
            }
            stand
        };
        let moves = pos.legal_moves();
        for (_, m) in self.ordered(pos, &moves, ply, !in_check, None) {
            if !in_check && !self.worth_resolving(pos, m, max, qply) {
                continue;
            }
            let mut child = *pos;
            child.play_unchecked(m);
            if self.tick() {
                return best;
            }
            let v = self.quiesce(&child, ply + 1, alpha, beta, qply + 1);
            if self.stopped {
                return best;
            }
            if max {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// Whether a capture is worth a quiescence node: the coalition only
    /// takes the root's pieces (taking each other's helps the root), and
    /// after the first quiescence ply only captures of a piece worth at
    /// least the capturer (or a king) are followed.
    fn worth_resolving(&self, pos: &Position, m: Move, max: bool, qply: u8) -> bool {
        let (Some(victim), Some(attacker)) = (pos.piece_at(m.to), pos.piece_at(m.from)) else {
            return false;
        };
        if !max && victim.side != self.root {
            return false;
        }
        qply == 0 || victim.role == Role::King || role_value(victim.role) >= role_value(attacker.role)
    }

    /// Max^n: every side picks the child best for itself.
    fn maxn(&mut self, pos: &Position, depth: i32, ply: usize) -> [i32; 3] {
        if pos.is_over() || !pos.live().contains(self.root) {
            return terminal_vector(pos, ply);
        }
        if depth <= 0 || ply + 1 >= MAX_PLY {
            return if self.cfg.quiescence {
                self.maxn_quiesce(pos, ply, 0)
            } else {
                utilities(pos)
            };
        }
        let me = pos.turn().index();
        let moves = pos.legal_moves();
        let mut best: Option<[i32; 3]> = None;
        for (_, m) in self.ordered(pos, &moves, ply, false, None) {
            let mut child = *pos;
            child.play_unchecked(m);
            if self.tick() {
                break;
            }
            let v = self.maxn(&child, depth - 1, ply + 1);
            if self.stopped {
                break;
            }
            if best.is_none_or(|b| v[me] > b[me]) {
                best = Some(v);
            }
        }
        best.unwrap_or_else(|| utilities(pos))
    }

    fn maxn_quiesce(&mut self, pos: &Position, ply: usize, qply: u8) -> [i32; 3] {
        if pos.is_over() || !pos.live().contains(self.root) {
            return terminal_vector(pos, ply);
        }
        let mut best = utilities(pos);
        if qply >= MAXN_QUIESCENCE_PLIES {
            return best;
        }
        let me = pos.turn().index();
        let moves = pos.legal_moves();
        let caps = self.ordered(pos, &moves, ply, true, None);
        for &(_, m) in caps.iter().take(MAXN_QUIESCENCE_WIDTH) {
            let mut child = *pos;
            child.play_unchecked(m);
            if self.tick() {
                break;
            }
            let v = self.maxn_quiesce(&child, ply + 1, qply + 1);
            if self.stopped {
                break;
            }
            if v[me] > best[me] {
                best = v;
            }
        }
        best
    }
}

/// Utilities of a position where the game (or the root's part in it) is
/// decided, with the distance folded in: quicker wins, slower losses.
fn terminal_vector(pos: &Position, ply: usize) -> [i32; 3] {
    let mut u = utilities(pos);
    for v in &mut u {
        if *v >= MATE {
            *v = MATE - ply as i32;
        } else if *v <= -MATE {
            *v = -MATE + ply as i32;
        }
    }
    u
}
