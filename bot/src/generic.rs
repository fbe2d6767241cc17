//! A paranoid alpha-beta search written once for any three-player variant
//! whose rules fit [`SearchPosition`].
//!
//! The player to move at the root (and, while they are allied, its ally)
//! maximises the root's utility; every other player minimises it. Who moves
//! at a node is always asked of the position ([`SearchPosition::mover`]),
//! never derived from a cycle: a variant where a checked player moves out
//! of turn (三国演弈棋's 被将先走) searches correctly, because alpha-beta
//! only needs to know at each node whether it maximises or minimises.
//!
//! Iterative deepening, a transposition table (keys from
//! [`SearchPosition::key`]), the hash move first, captures by MVV-LVA,
//! optional killer moves, a capture quiescence, a node budget and a stop
//! callback asked every 1024 nodes. Deterministic for a seed: the only
//! randomness is the seeded shuffle and noise of the root moves.
//!
//! The first game (三国象棋) keeps its own tuned search in
//! [`crate::search`]; this one serves 三国演弈棋 ([`crate::yanyi`]).

use crate::rng::Rng;

/// A mate or elimination is worth this much (minus the distance in plies).
pub const MATE: i32 = 1_000_000;
/// Larger than any value.
pub const INF: i32 = 2_000_000;

/// What the generic search needs to know of a variant's position. Seats are
/// `0..3`; a seat that has left the game stays a seat.
pub trait SearchPosition: Copy {
    /// A move of the variant.
    type Move: Copy + Eq + std::fmt::Debug;

    /// The seat to move.
    fn mover(&self) -> usize;
    /// Whether the game is over (one player left).
    fn is_over(&self) -> bool;
    /// Whether `seat` is still in the game.
    fn is_live(&self, seat: usize) -> bool;
    /// Whether `a` and `b` play for the same side now (themselves, or allies):
    /// the search lets `b` maximise `a`'s utility when `a` is the root.
    fn same_side(&self, a: usize, b: usize) -> bool;
    /// The legal moves of the seat to move.
    fn moves(&self) -> Vec<Self::Move>;
    /// The ordering value of a capture (most valuable victim, least valuable
    /// attacker); 0 for a move that captures nothing.
    fn capture_order(&self, m: Self::Move) -> i32;
    /// Plays a legal move with all its consequences.
    fn play(&mut self, m: Self::Move);
    /// Whether the seat to move is in check.
    fn mover_in_check(&self) -> bool;
    /// `seat`'s utility: about `-MATE` once it is out, `MATE` once it has won,
    /// otherwise a heuristic value (a soldier ≈ 100).
    fn utility(&self, seat: usize) -> i32;
    /// A hash of the whole position (placement, mover, alliance, flags).
    fn key(&self) -> u64;
    /// A small number per move for the killer/history tables, `< 65536`.
    fn move_index(m: Self::Move) -> usize;
    /// Whether `seat`, having just moved into this position, has put itself
    /// at a risk no player takes for another's sake (in 三国演弈棋: kings
    /// about to face, which eliminates both). A player of the coalition
    /// against the root does not make such a move while it has another:
    /// paranoia short of suicide. `false` by default.
    fn reckless(&self, seat: usize) -> bool {
        let _ = seat;
        false
    }
}

/// What the generic search may do and spend.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    /// Deepest iteration of iterative deepening, in plies.
    pub max_depth: u8,
    /// Node budget: positions searched (quiescence included).
    pub nodes: u64,
    /// Quiescence plies on captures past the horizon (0: none).
    pub quiescence: u8,
    /// Order quiet moves by killer moves and the history heuristic.
    pub killers: bool,
    /// The largest random bonus added to a root move's value.
    pub root_noise: i32,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<M> {
    /// The move chosen; `None` when there was no move.
    pub best: Option<M>,
    /// Its value for the root (its utility).
    pub value: i32,
    /// The deepest iteration completed.
    pub depth: u8,
    /// Nodes searched.
    pub nodes: u64,
}

const TABLE_SIZE: usize = 1 << 15;
const MAX_PLY: usize = 64;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Copy, Clone, Debug)]
struct Entry<M> {
    key: u64,
    depth: i8,
    value: i32,
    bound: Bound,
    best: Option<M>,
}

struct Searcher<'a, P: SearchPosition> {
    root: usize,
    cfg: Settings,
    nodes: u64,
    stopped: bool,
    stop: &'a mut dyn FnMut(u64) -> bool,
    table: Vec<Option<Entry<P::Move>>>,
    killers: [[Option<P::Move>; 2]; MAX_PLY],
    history: Vec<i32>,
}

/// Searches `pos` among `root_moves` (the legal moves the caller allows;
/// `bias[i]` is added to the value of `root_moves[i]`, missing entries 0).
/// `stop` is asked every 1024 nodes with the node count; `true` ends the
/// search with the best move of the deepest work done.
pub fn search<P: SearchPosition>(
    pos: &P,
    root_moves: &[P::Move],
    bias: &[i32],
    cfg: &Settings,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Found<P::Move> {
    let mut found = Found {
        best: root_moves.first().copied(),
        value: 0,
        depth: 0,
        nodes: 0,
    };
    if root_moves.len() <= 1 || pos.is_over() {
        return found;
    }
    let mut rng = Rng::new(seed);
    let mut s = Searcher::<P> {
        root: pos.mover(),
        cfg: *cfg,
        nodes: 0,
        stopped: false,
        stop,
        table: vec![None; TABLE_SIZE],
        killers: [[None; 2]; MAX_PLY],
        history: if cfg.killers { vec![0; 1 << 16] } else { Vec::new() },
    };
    // (move, noise + bias, ordering key)
    let mut order: Vec<(P::Move, i32, i32)> = root_moves
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
    for e in &mut order {
        e.2 = pos.capture_order(e.0);
    }
    order.sort_by_key(|e| std::cmp::Reverse(e.2));
    for depth in 1..=cfg.max_depth.max(1) {
        let mut best: Option<(P::Move, i32, i32)> = None; // (move, total, raw)
        let mut scores = Vec::with_capacity(order.len());
        for (i, &(m, extra, _)) in order.iter().enumerate() {
            let mut child = *pos;
            child.play(m);
            let alpha = best.map_or(-INF, |b| b.1 - extra);
            let v = s.node(&child, i32::from(depth) - 1, 1, alpha, INF);
            if s.stopped {
                break;
            }
            scores.push((i, v + extra));
            if best.is_none_or(|b| v + extra > b.1) {
                best = Some((m, v + extra, v));
            }
        }
        if let Some((m, _, raw)) = best {
            // A stopped iteration counts only if its first move (the previous
            // best) was searched: then its best is at least as good.
            if !s.stopped || !scores.is_empty() {
                found.best = Some(m);
                found.value = raw;
            }
        }
        if s.stopped {
            break;
        }
        found.depth = depth;
        // The best first, the others by their value in this iteration.
        let mut ranked: Vec<(P::Move, i32, i32)> = scores.iter().map(|&(i, v)| (order[i].0, order[i].1, v)).collect();
        ranked.sort_by_key(|e| std::cmp::Reverse(e.2));
        order = ranked;
        if found.value.abs() >= MATE / 2 || s.nodes >= cfg.nodes {
            break;
        }
    }
    found.nodes = s.nodes;
    found
}

impl<P: SearchPosition> Searcher<'_, P> {
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.cfg.nodes || (self.nodes % 1024 == 0 && (self.stop)(self.nodes)) {
            self.stopped = true;
        }
        self.stopped
    }

    /// The root's value of a finished or leaf position, mates by distance.
    fn value(&self, pos: &P, ply: usize) -> i32 {
        let v = pos.utility(self.root);
        if v >= MATE / 2 {
            v - ply as i32
        } else if v <= -MATE / 2 {
            v + ply as i32
        } else {
            v
        }
    }

    fn ordered(&self, pos: &P, moves: Vec<P::Move>, hash: Option<P::Move>, ply: usize) -> Vec<(i32, P::Move)> {
        let mut scored: Vec<(i32, P::Move)> = moves
            .into_iter()
            .map(|m| {
                let c = pos.capture_order(m);
                let s = if Some(m) == hash {
                    1 << 30
                } else if c > 0 {
                    (1 << 20) + c
                } else if self.cfg.killers {
                    if ply < MAX_PLY && self.killers[ply].contains(&Some(m)) {
                        1 << 19
                    } else {
                        self.history[P::move_index(m)].min((1 << 18) - 1)
                    }
                } else {
                    0
                };
                (s, m)
            })
            .collect();
        scored.sort_by_key(|e| std::cmp::Reverse(e.0));
        scored
    }

    fn node(&mut self, pos: &P, depth: i32, ply: usize, mut alpha: i32, mut beta: i32) -> i32 {
        if pos.is_over() || !pos.is_live(self.root) {
            return self.value(pos, ply);
        }
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return if self.cfg.quiescence > 0 {
                self.quiesce(pos, ply, alpha, beta, self.cfg.quiescence)
            } else {
                self.value(pos, ply)
            };
        }
        if self.tick() {
            return 0;
        }
        let key = pos.key();
        let slot = (key as usize) & (TABLE_SIZE - 1);
        let mut hash_move = None;
        if let Some(e) = self.table[slot]
            && e.key == key
        {
            hash_move = e.best;
            if i32::from(e.depth) >= depth && e.value.abs() < MATE / 2 {
                match e.bound {
                    Bound::Exact => return e.value,
                    Bound::Lower if e.value >= beta => return e.value,
                    Bound::Upper if e.value <= alpha => return e.value,
                    _ => {}
                }
            }
        }
        let moves = pos.moves();
        if moves.is_empty() {
            return self.value(pos, ply);
        }
        let maximise = pos.same_side(self.root, pos.mover());
        let (alpha0, beta0) = (alpha, beta);
        let mut best = if maximise { -INF } else { INF };
        let mut best_move = None;
        let mover = pos.mover();
        let ordered = self.ordered(pos, moves, hash_move, ply);
        let children: Vec<P> = ordered
            .iter()
            .map(|&(_, m)| {
                let mut c = *pos;
                c.play(m);
                c
            })
            .collect();
        // The coalition does not blunder its own king for the root's sake
        // (unless every move does).
        let careful = !maximise && children.iter().any(|c| !c.reckless(mover));
        for (&(_, m), child) in ordered.iter().zip(&children) {
            if careful && child.reckless(mover) {
                continue;
            }
            let v = self.node(child, depth - 1, ply + 1, alpha, beta);
            if self.stopped {
                return 0;
            }
            if maximise {
                if v > best {
                    best = v;
                    best_move = Some(m);
                }
                alpha = alpha.max(v);
            } else {
                if v < best {
                    best = v;
                    best_move = Some(m);
                }
                beta = beta.min(v);
            }
            if alpha >= beta {
                if self.cfg.killers && pos.capture_order(m) == 0 {
                    if ply < MAX_PLY && self.killers[ply][0] != Some(m) {
                        self.killers[ply][1] = self.killers[ply][0];
                        self.killers[ply][0] = Some(m);
                    }
                    let h = &mut self.history[P::move_index(m)];
                    *h = h.saturating_add(depth * depth);
                }
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
        self.table[slot] = Some(Entry {
            key,
            depth: depth.min(i32::from(i8::MAX)) as i8,
            value: best,
            bound,
            best: best_move,
        });
        best
    }

    /// Captures past the horizon; a player in check on the first
    /// quiescence ply looks at every move (no standing pat).
    fn quiesce(&mut self, pos: &P, ply: usize, mut alpha: i32, mut beta: i32, left: u8) -> i32 {
        if pos.is_over() || !pos.is_live(self.root) {
            return self.value(pos, ply);
        }
        if self.tick() {
            return 0;
        }
        let maximise = pos.same_side(self.root, pos.mover());
        let evasions = left == self.cfg.quiescence && pos.mover_in_check();
        let stand = self.value(pos, ply);
        let mut best = if evasions {
            if maximise { -INF } else { INF }
        } else {
            stand
        };
        if !evasions {
            if maximise {
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
            if left == 0 {
                return stand;
            }
        }
        let mut moves = pos.moves();
        if moves.is_empty() {
            return stand;
        }
        if !evasions {
            moves.retain(|&m| pos.capture_order(m) > 0);
        }
        for (_, m) in self.ordered(pos, moves, None, MAX_PLY) {
            let mut child = *pos;
            child.play(m);
            let v = self.quiesce(&child, ply + 1, alpha, beta, left.saturating_sub(1));
            if self.stopped {
                return 0;
            }
            if maximise {
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
}
