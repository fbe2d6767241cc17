//! Computer players for 三国暗棋 (variant `anqi`, `shared/RULES-ANQI.md`).
//!
//! **A bot sees only the viewer position.** [`choose_action`] takes an
//! [`AnqiPosition`] and the first thing it does is to forget every face-down
//! identity ([`AnqiPosition::viewer`], a no-op on a viewer position), so even
//! a caller that passes the server's full position by mistake cannot make the
//! bot cheat: the decision is a function of the viewer form, the context and
//! the seed only (a test checks it with two different layouts behind the same
//! viewer form).
//!
//! **Flips are chance nodes.** Every face-down piece is, for someone who only
//! sees the viewer form, equally likely to be any identity of the hidden pool
//! (the full set − face up − captured − removed, §10.1), so a flip at `p`
//! branches into the *distinct* identities of the pool, each weighted by its
//! count, and its value is the weighted mean (expectimax). Determinization
//! (sampling layouts and searching each with full information) was not
//! chosen: inside one sampled layout the search knows what every later flip
//! reveals and so overrates flipping (strategy fusion), and it needs many
//! samples to average that away, while the exact chance node costs at most
//! 14 children and is exact for the first flip.
//!
//! **Three players: paranoid.** As in the first game's bot, the seat to move
//! at the root maximises its utility and both others minimise it; alpha-beta
//! prunes between decision nodes, chance nodes take the full mean. Inside the
//! tree only the few most interesting flips of a node are expanded (those
//! next to face-up pieces), at the root every flip is.
//!
//! **Evaluation** follows the rules' scoring (§8): a seat's score is its
//! team's value on the board (face up, and face down counted from the public
//! pool) plus the points it captured (得失分), reshaped for the race and 收军
//! modes; a teamless seat counts the mean of the unclaimed teams; face-up
//! pieces attacked by another live seat cost part of their value (less if
//! defended). The utility of the root seat is its score minus the mean of its
//! live opponents', plus a bonus per opponent out.
//!
//! Levels: [`Level::One`] plays nearly at random with a small preference for
//! free captures; [`Level::Two`] searches two plies with a quiescence on
//! captures; [`Level::Three`] deepens iteratively (up to five plies) under a
//! node budget and the caller's stop callback.

use engine::anqi::{
    AnqiGame, AnqiPosition, DeadlockScoring, Mode, Move, MoveList, Options, Piece, Point, Role, Settings,
};

use crate::Level;
use crate::rng::Rng;

/// What a bot needs to know about the game besides the position: the mode
/// (annihilation, 收军, race and its target) and the deadlock scoring. They
/// belong to the game record, not to the position text (§11.3), so the
/// server passes them (`AnqiBotContext::from_game` or from its own
/// [`Settings`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AnqiBotContext {
    /// The game's settings (mode, deadlock scoring, no-progress limit).
    pub settings: Settings,
}

impl AnqiBotContext {
    /// The context of a game record (only its public settings are read).
    pub fn from_game(game: &AnqiGame) -> AnqiBotContext {
        AnqiBotContext {
            settings: *game.settings(),
        }
    }
}

/// The search settings of one level.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AnqiConfig {
    /// Deepest iteration, in actions (plies).
    pub max_depth: u32,
    /// Node budget (decision, chance and quiescence nodes).
    pub nodes: u64,
    /// How many flips the root expands (the most interesting ones, see
    /// [`AnqiConfig::inner_flips`]; a flip far from every face-up piece is
    /// worth about the same as any other such flip).
    pub root_flips: usize,
    /// How many flips an inner (non-root) node expands.
    pub inner_flips: usize,
    /// Quiescence depth on captures (0: none).
    pub quiescence: u32,
    /// The largest random noise added to a root action's value.
    pub root_noise: i32,
}

impl AnqiConfig {
    /// The settings of a searching level ([`Level::One`] does not search, it
    /// gets level two's settings here, unused by [`choose_action`]).
    pub const fn of(level: Level) -> AnqiConfig {
        match level {
            Level::One | Level::Two => AnqiConfig {
                max_depth: 2,
                nodes: 30_000,
                root_flips: 32,
                inner_flips: 1,
                quiescence: 3,
                root_noise: 6,
            },
            Level::Three => AnqiConfig {
                max_depth: 4,
                nodes: 500_000,
                root_flips: 8,
                inner_flips: 1,
                quiescence: 4,
                root_noise: 2,
            },
        }
    }
}

/// The value of a won game (the root seat is the last one left).
pub const WIN: i32 = 1_000_000;

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnqiReport {
    /// The chosen action (`None` when the position is over).
    pub best: Option<Move>,
    /// Its value for the seat to move (utility units, a soldier = 20).
    pub value: i32,
    /// The deepest iteration completed.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
}

/// An action for the seat to move of a 三国暗棋 position at `level`, or
/// `None` when the position is over. Deterministic for `(viewer form,
/// context, level, seed)`; `stop` is asked every 1024 nodes with the node
/// count and ends the search when it says `true` (the best action of the
/// deepest completed iteration is returned; at least one legal action always).
///
/// Contract: pass the **viewer** position (`AnqiGame::viewer`, or a copy kept
/// up to date with `play_flip` / `follow_record`). A full position is
/// accepted but converted to its viewer form first, so the bot never uses a
/// face-down identity either way.
pub fn choose_action(
    viewer: &AnqiPosition,
    ctx: &AnqiBotContext,
    level: Level,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Option<Move> {
    // Forget every face-down identity: from here on only the viewer form exists.
    let v = viewer.viewer();
    match level {
        Level::One => nearly_random(&v, seed),
        _ => search(&v, ctx, &AnqiConfig::of(level), seed, stop).best,
    }
}

/// Level one: a uniformly random legal action, except that half of the time
/// it takes the most valuable free capture (one onto a point no other live
/// seat attacks afterwards) when there is one.
pub fn nearly_random(viewer: &AnqiPosition, seed: u64) -> Option<Move> {
    let v = viewer.viewer();
    let moves = v.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let mut rng = Rng::new(seed);
    if rng.below(2) == 0 {
        let opts = v.options();
        let board = Board::of(&v);
        let me = v.seat_to_move()?;
        let best = moves
            .iter()
            .filter_map(|&m| match m {
                Move::Capture { from, to } => {
                    let victim = board.up(to)?;
                    let mut after = board;
                    after.cells[to.index()] = after.cells[from.index()];
                    after.cells[from.index()] = Cell::Empty;
                    let attacked = after.attackers_of(&v, to, me).is_some();
                    (!attacked).then_some((victim.value(opts.enhanced), m))
                }
                _ => None,
            })
            .max_by_key(|&(value, m)| (value, std::cmp::Reverse(m)));
        if let Some((_, m)) = best {
            return Some(m);
        }
    }
    Some(moves[rng.below(moves.len())])
}

/// The search of levels two and three on the viewer form of `viewer`.
pub fn search(
    viewer: &AnqiPosition,
    ctx: &AnqiBotContext,
    cfg: &AnqiConfig,
    seed: u64,
    stop: &mut dyn FnMut(u64) -> bool,
) -> AnqiReport {
    let v = viewer.viewer();
    let Some(root) = v.seat_to_move() else {
        return AnqiReport {
            best: None,
            value: 0,
            depth: 0,
            nodes: 0,
        };
    };
    let mut rng = Rng::new(seed);
    let mut moves: Vec<Move> = v.legal_moves().to_vec();
    // Shuffle first so that equal actions are broken by the seed.
    for i in (1..moves.len()).rev() {
        moves.swap(i, rng.below(i + 1));
    }
    // Keep the most interesting flips (the sort is stable: ties stay shuffled).
    let mut flips: Vec<Move> = moves.iter().copied().filter(|m| matches!(m, Move::Flip(_))).collect();
    if flips.len() > cfg.root_flips.max(1) {
        flips.sort_by_key(|m| match *m {
            Move::Flip(p) => std::cmp::Reverse(flip_interest(&v, p)),
            _ => std::cmp::Reverse(0),
        });
        flips.truncate(cfg.root_flips.max(1));
        moves.retain(|m| !matches!(m, Move::Flip(_)) || flips.contains(m));
    }
    let noise: Vec<i32> = moves
        .iter()
        .map(|_| {
            let n = cfg.root_noise.max(0) as usize;
            rng.below(2 * n + 1) as i32 - n as i32
        })
        .collect();
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(static_order(&v, moves[i])));
    let mut s = Searcher {
        ctx: *ctx,
        cfg: *cfg,
        root,
        nodes: 0,
        stop,
        aborted: false,
    };
    let mut report = AnqiReport {
        best: moves.get(order[0]).copied(),
        value: 0,
        depth: 0,
        nodes: 0,
    };
    if moves.len() == 1 {
        report.value = s.eval(&v);
        return report;
    }
    for depth in 1..=cfg.max_depth.max(1) {
        let mut values = vec![i32::MIN; moves.len()];
        let mut alpha = -WIN * 2;
        for &i in &order {
            let val = s.action(&v, moves[i], depth - 1, alpha, WIN * 2, 1);
            if s.aborted {
                break;
            }
            values[i] = val.saturating_add(noise[i]);
            alpha = alpha.max(values[i]);
        }
        if s.aborted && depth > 1 {
            break;
        }
        let best = order
            .iter()
            .copied()
            .filter(|&i| values[i] != i32::MIN)
            .max_by_key(|&i| values[i]);
        if let Some(b) = best {
            report.best = Some(moves[b]);
            report.value = values[b];
            report.depth = depth;
        }
        if s.aborted {
            break;
        }
        // The next iteration tries the best actions first.
        order.sort_by_key(|&i| std::cmp::Reverse(values[i]));
        if report.value.abs() >= WIN / 2 {
            break;
        }
    }
    report.nodes = s.nodes;
    report
}

/// A cheap a-priori order: captures by victim value, then moves, then flips.
fn static_order(v: &AnqiPosition, m: Move) -> i32 {
    let e = v.options().enhanced;
    match m {
        Move::Capture { from, to } => {
            let victim = v.piece_at(to).and_then(|(_, id)| id).map_or(0, |id| id.value(e));
            let attacker = v.piece_at(from).and_then(|(_, id)| id).map_or(0, |id| id.value(e));
            1000 + 10 * victim as i32 - attacker as i32
        }
        Move::Move { .. } => 100,
        Move::Flip(_) => 0,
    }
}

struct Searcher<'a> {
    ctx: AnqiBotContext,
    cfg: AnqiConfig,
    root: usize,
    nodes: u64,
    stop: &'a mut dyn FnMut(u64) -> bool,
    aborted: bool,
}

impl Searcher<'_> {
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0 && ((self.stop)(self.nodes) || self.nodes >= self.cfg.nodes) {
            self.aborted = true;
        }
        self.aborted
    }

    /// The value of playing `m` in `v` (a chance node for a flip: the mean
    /// over the outcomes, each searched with a full window, so `alpha` and
    /// `beta` only bound decision nodes).
    fn action(&mut self, v: &AnqiPosition, m: Move, depth: u32, alpha: i32, beta: i32, ply: i32) -> i32 {
        match m {
            Move::Flip(p) => {
                let outcomes = chance_outcomes(v);
                let total: u32 = outcomes.iter().map(|&(_, n)| n).sum();
                let mut sum: i64 = 0;
                for &(id, n) in &outcomes {
                    if self.tick() {
                        return 0;
                    }
                    let mut child = v.clone();
                    let mut out = child.act_unchecked(Move::Flip(p), Some(id));
                    child.finish_action(&mut out);
                    let val = self.node(&child, depth, -WIN * 2, WIN * 2, ply);
                    sum += i64::from(val) * i64::from(n);
                }
                (sum / i64::from(total.max(1))) as i32
            }
            _ => {
                let mover = v.seat_to_move().unwrap_or(self.root);
                let mut child = v.clone();
                child.play_unchecked(m);
                if let Some(val) = self.mode_end(&child, mover, ply) {
                    return val;
                }
                self.node(&child, depth, alpha, beta, ply)
            }
        }
    }

    /// The race end or a 收军 recovery right after `mover` acted, as a value.
    fn mode_end(&self, v: &AnqiPosition, mover: usize, ply: i32) -> Option<i32> {
        let reached = match self.ctx.settings.mode {
            Mode::Annihilation => false,
            Mode::Race { target } => v.captured_points(mover) >= target,
            Mode::Shoujun => v
                .team_of_seat(mover)
                .is_some_and(|t| v.captured_total(mover) >= t.size(v.options().split2)),
        };
        if !reached {
            return None;
        }
        let race = matches!(self.ctx.settings.mode, Mode::Race { .. });
        Some(if mover == self.root {
            WIN - ply
        } else if race {
            -WIN + ply
        } else {
            // Another seat took first place; the root can still be second.
            -WIN / 4 + ply
        })
    }

    fn node(&mut self, v: &AnqiPosition, depth: u32, mut alpha: i32, mut beta: i32, ply: i32) -> i32 {
        if self.tick() {
            return 0;
        }
        let Some(me) = v.seat_to_move() else {
            return self.terminal(v, ply);
        };
        if !v.is_live(self.root) {
            return -WIN + ply;
        }
        if depth == 0 {
            return self.quiescence(v, self.cfg.quiescence, alpha, beta, ply);
        }
        let maximizing = me == self.root;
        let moves = self.inner_actions(v);
        let mut best = if maximizing { -WIN * 2 } else { WIN * 2 };
        for m in moves {
            let val = self.action(v, m, depth - 1, alpha, beta, ply + 1);
            if self.aborted {
                return 0;
            }
            if maximizing {
                best = best.max(val);
                alpha = alpha.max(val);
            } else {
                best = best.min(val);
                beta = beta.min(val);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// The actions an inner node expands: every move and capture (captures
    /// first), and the `inner_flips` flips next to the most face-up pieces.
    fn inner_actions(&self, v: &AnqiPosition) -> MoveList {
        let all = v.legal_moves();
        let mut flips: Vec<(i32, Move)> = Vec::new();
        let mut rest: Vec<(i32, Move)> = Vec::new();
        for m in all {
            match m {
                Move::Flip(p) => flips.push((flip_interest(v, p), m)),
                _ => rest.push((static_order(v, m), m)),
            }
        }
        rest.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
        flips.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
        let mut list = MoveList::new();
        list.extend(rest.into_iter().map(|(_, m)| m));
        list.extend(flips.into_iter().take(self.cfg.inner_flips.max(1)).map(|(_, m)| m));
        list
    }

    fn quiescence(&mut self, v: &AnqiPosition, qdepth: u32, mut alpha: i32, mut beta: i32, ply: i32) -> i32 {
        let stand = self.eval(v);
        let Some(me) = v.seat_to_move() else {
            return stand;
        };
        if qdepth == 0 {
            return stand;
        }
        let maximizing = me == self.root;
        if maximizing {
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
        let mut caps: Vec<(i32, Move)> = v
            .legal_moves()
            .into_iter()
            .filter(|m| matches!(m, Move::Capture { .. }))
            .map(|m| (static_order(v, m), m))
            .collect();
        caps.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
        let mut best = stand;
        for (_, m) in caps.into_iter().take(6) {
            if self.tick() {
                return 0;
            }
            let mut child = v.clone();
            child.play_unchecked(m);
            let val = match self.mode_end(&child, me, ply + 1) {
                Some(x) => x,
                None if child.is_over() => self.terminal(&child, ply + 1),
                None if !child.is_live(self.root) => -WIN + ply,
                None => self.quiescence(&child, qdepth - 1, alpha, beta, ply + 1),
            };
            if self.aborted {
                return 0;
            }
            if maximizing {
                best = best.max(val);
                alpha = alpha.max(val);
            } else {
                best = best.min(val);
                beta = beta.min(val);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    fn terminal(&self, v: &AnqiPosition, ply: i32) -> i32 {
        if !v.is_live(self.root) {
            return -WIN + ply;
        }
        if v.live_count() <= 1 {
            return WIN - ply;
        }
        // A deadlock: placed by the mode's score.
        let me = seat_score(v, self.root, &self.ctx);
        let best_other = (0..3)
            .filter(|&s| s != self.root && v.is_live(s))
            .map(|s| seat_score(v, s, &self.ctx))
            .max()
            .unwrap_or(0);
        match me.cmp(&best_other) {
            std::cmp::Ordering::Greater => WIN / 2 - ply,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Less => -WIN / 2 + ply,
        }
    }

    fn eval(&self, v: &AnqiPosition) -> i32 {
        utility(v, self.root, &self.ctx)
    }
}

/// Seat `seat`'s deadlock score by the rules (§8.5; captured points in
/// `race`): what a scoring proposal would rank by.
pub fn deadlock_score(v: &AnqiPosition, seat: usize, ctx: &AnqiBotContext) -> u32 {
    if let Mode::Race { .. } = ctx.settings.mode {
        return v.captured_points(seat);
    }
    let Some(t) = v.team_of_seat(seat) else { return 0 };
    match ctx.settings.scoring {
        DeadlockScoring::Net => v.value_on_board(t) + v.captured_points(seat),
        DeadlockScoring::RemainingPoints => v.value_on_board(t),
        DeadlockScoring::RemainingCount => v.pieces_on_board(t),
    }
}

/// Whether a bot in `seat` accepts a scoring proposal (申请计分, §8.5): only
/// when ending now by deadlock scoring would place it first alone (its score
/// above every other live seat's). A bot never proposes. Viewer form only.
pub fn answer_proposal(viewer: &AnqiPosition, ctx: &AnqiBotContext, seat: usize) -> bool {
    let v = viewer.viewer();
    if seat > 2 || !v.is_live(seat) {
        return false;
    }
    let mine = deadlock_score(&v, seat, ctx);
    (0..3)
        .filter(|&s| s != seat && v.is_live(s))
        .all(|s| deadlock_score(&v, s, ctx) < mine)
}

/// The outcomes of a flip, as the viewer sees them: the identities of the
/// hidden pool with their counts, where identities of the same team and type
/// (帅 and 将, 兵 and 卒 in split 1) are one outcome, since they move, score
/// and belong alike (the colour of a character changes nothing in the rules).
pub fn chance_outcomes(v: &AnqiPosition) -> Vec<(Piece, u32)> {
    let split2 = v.options().split2;
    let mut out: Vec<(Piece, u32)> = Vec::new();
    for id in v.pool_identities() {
        let n = v.hidden_count(id);
        match out
            .iter_mut()
            .find(|(x, _)| x.team(split2) == id.team(split2) && x.role() == id.role())
        {
            Some((_, m)) => *m += n,
            None => out.push((id, n)),
        }
    }
    out
}

/// How interesting a flip at `p` is inside the tree: the face-up pieces
/// within two steps (a revealed piece there can be captured or capture soon).
fn flip_interest(v: &AnqiPosition, p: Point) -> i32 {
    let mut n = 0;
    for df in -2..=2 {
        for dr in -2..=2 {
            if let Some(q) = Point::at(p.file() + df, p.rank() + dr) {
                if matches!(v.piece_at(q), Some((true, _))) {
                    n += 1;
                }
            }
        }
    }
    n
}

/// Seat `seat`'s score by the game's scoring: its team's value on the board
/// plus its captured points (得失分), reshaped by the mode. A teamless seat
/// counts the mean value of the unclaimed teams (it will hold one of them).
pub fn seat_score(v: &AnqiPosition, seat: usize, ctx: &AnqiBotContext) -> i32 {
    let split2 = v.options().split2;
    let material = match v.team_of_seat(seat) {
        Some(t) => v.value_on_board(t) as i32,
        None => {
            let unclaimed: Vec<i32> = (1..=3)
                .filter_map(engine::anqi::Team::new)
                .filter(|&t| !v.is_claimed(t))
                .map(|t| v.value_on_board(t) as i32)
                .collect();
            if unclaimed.is_empty() {
                0
            } else {
                unclaimed.iter().sum::<i32>() / unclaimed.len() as i32
            }
        }
    };
    let captured = v.captured_points(seat) as i32;
    match ctx.settings.mode {
        Mode::Race { .. } => 2 * captured + material / 3,
        Mode::Shoujun => {
            let need = v.team_of_seat(seat).map_or(11, |t| t.size(split2)) as i32;
            material + captured + 200 * v.captured_total(seat) as i32 / need
        }
        Mode::Annihilation => match ctx.settings.scoring {
            DeadlockScoring::Net => material + captured,
            DeadlockScoring::RemainingPoints | DeadlockScoring::RemainingCount => material + captured / 2,
        },
    }
}

/// The root seat's utility in `v`: its score minus its expected losses to
/// attacks, minus the mean of the same for its live opponents, plus a bonus
/// for each opponent out. Uses only the viewer form (face-down identities
/// are never read).
pub fn utility(v: &AnqiPosition, root: usize, ctx: &AnqiBotContext) -> i32 {
    if !v.is_live(root) {
        return -WIN;
    }
    let board = Board::of(v);
    let mover = v.seat_to_move();
    let net = |s: usize| seat_score(v, s, ctx) - board.threat(v, s, mover == Some(s));
    let mine = net(root);
    let others: Vec<i32> = (0..3).filter(|&s| s != root && v.is_live(s)).map(net).collect();
    if others.is_empty() {
        return WIN;
    }
    let mean = others.iter().sum::<i32>() / others.len() as i32;
    mine - mean + 150 * (2 - others.len() as i32)
}

/// What stands on a point, as the viewer sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cell {
    Empty,
    Down,
    Up(Piece),
}

/// The viewer board, for attack maps.
#[derive(Copy, Clone, Debug)]
struct Board {
    cells: [Cell; 45],
    options: Options,
}

const ORTHO: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const DIAG: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

impl Board {
    fn of(v: &AnqiPosition) -> Board {
        let mut cells = [Cell::Empty; 45];
        for p in Point::all() {
            cells[p.index()] = match v.piece_at(p) {
                None => Cell::Empty,
                Some((true, Some(id))) => Cell::Up(id),
                Some(_) => Cell::Down,
            };
        }
        Board {
            cells,
            options: v.options(),
        }
    }

    fn up(&self, p: Point) -> Option<Piece> {
        match self.cells[p.index()] {
            Cell::Up(id) => Some(id),
            _ => None,
        }
    }

    fn at(&self, f: i32, r: i32) -> Option<(Point, Cell)> {
        Point::at(f, r).map(|p| (p, self.cells[p.index()]))
    }

    /// The occupied face-up points the piece `id` on `from` hits (could
    /// capture if they held another team's piece), as a bit set.
    fn hits(&self, from: Point, id: Piece) -> u64 {
        let (f, r) = (from.file(), from.rank());
        let o = self.options;
        let mut mask = 0u64;
        let hit = |c: Cell, p: Point, mask: &mut u64| {
            if matches!(c, Cell::Up(_)) {
                *mask |= 1 << p.index();
            }
        };
        let slide = |dirs: &[(i32, i32)], mask: &mut u64| {
            for &(df, dr) in dirs {
                let mut k = 1;
                while let Some((p, c)) = self.at(f + df * k, r + dr * k) {
                    if c != Cell::Empty {
                        if matches!(c, Cell::Up(_)) {
                            *mask |= 1 << p.index();
                        }
                        break;
                    }
                    k += 1;
                }
            }
        };
        match id.role() {
            Role::General => {
                slide(&ORTHO, &mut mask);
                if o.enhanced {
                    slide(&DIAG, &mut mask);
                }
            }
            Role::Chariot => slide(&ORTHO, &mut mask),
            Role::Advisor => {
                for &(df, dr) in DIAG.iter().chain(if o.enhanced { &ORTHO[..] } else { &[] }) {
                    if let Some((p, c)) = self.at(f + df, r + dr) {
                        hit(c, p, &mut mask);
                    }
                }
            }
            Role::Elephant if o.enhanced => slide(&DIAG, &mut mask),
            Role::Elephant => {
                for &(df, dr) in &DIAG {
                    let eye = self.at(f + df, r + dr);
                    if o.xqlegs && eye.is_some_and(|(_, c)| c != Cell::Empty) {
                        continue;
                    }
                    if let Some((p, c)) = self.at(f + 2 * df, r + 2 * dr) {
                        hit(c, p, &mut mask);
                    }
                }
            }
            Role::Horse => {
                for (df, dr) in [
                    (1i32, 2i32),
                    (2, 1),
                    (-1, 2),
                    (-2, 1),
                    (1, -2),
                    (2, -1),
                    (-1, -2),
                    (-2, -1),
                ] {
                    if o.xqlegs {
                        let leg = if df.abs() == 2 {
                            self.at(f + df / 2, r)
                        } else {
                            self.at(f, r + dr / 2)
                        };
                        if leg.is_some_and(|(_, c)| c != Cell::Empty) {
                            continue;
                        }
                    }
                    if let Some((p, c)) = self.at(f + df, r + dr) {
                        hit(c, p, &mut mask);
                    }
                }
            }
            Role::Cannon => {
                for &(df, dr) in &ORTHO {
                    let mut k = 1;
                    let mut screen = false;
                    while let Some((p, c)) = self.at(f + df * k, r + dr * k) {
                        if c != Cell::Empty {
                            if screen {
                                hit(c, p, &mut mask);
                                break;
                            }
                            screen = true;
                        }
                        k += 1;
                    }
                }
            }
            Role::Soldier => {
                for &(df, dr) in &ORTHO {
                    if let Some((p, c)) = self.at(f + df, r + dr) {
                        hit(c, p, &mut mask);
                    }
                }
            }
        }
        mask
    }

    /// The capture targets of seat `seat` (face-up pieces of other teams its
    /// face-up pieces hit), as a bit set; empty for a teamless or stopped seat.
    fn targets_of(&self, v: &AnqiPosition, seat: usize) -> u64 {
        let Some(team) = v.team_of_seat(seat).filter(|_| v.is_live(seat)) else {
            return 0;
        };
        let split2 = self.options.split2;
        let mut mask = 0;
        for p in Point::all() {
            if let Cell::Up(id) = self.cells[p.index()] {
                if id.team(split2) == team {
                    mask |= self.hits(p, id);
                }
            }
        }
        mask & !self.team_mask(team)
    }

    fn team_mask(&self, team: engine::anqi::Team) -> u64 {
        let mut mask = 0;
        for p in Point::all() {
            if let Cell::Up(id) = self.cells[p.index()] {
                if id.team(self.options.split2) == team {
                    mask |= 1 << p.index();
                }
            }
        }
        mask
    }

    /// The cheapest piece of a live seat other than `me` that hits `to`, if any.
    fn attackers_of(&self, v: &AnqiPosition, to: Point, me: usize) -> Option<u32> {
        let split2 = self.options.split2;
        let mut best: Option<u32> = None;
        for s in (0..3).filter(|&s| s != me && v.is_live(s)) {
            let Some(team) = v.team_of_seat(s) else { continue };
            for p in Point::all() {
                if let Cell::Up(id) = self.cells[p.index()] {
                    if id.team(split2) == team && self.hits(p, id) & (1 << to.index()) != 0 {
                        let val = id.value(self.options.enhanced);
                        best = Some(best.map_or(val, |b: u32| b.min(val)));
                    }
                }
            }
        }
        best
    }

    /// What seat `seat` expects to lose to attacks on its face-up pieces: most
    /// of the largest loss and a little of the others; a piece defended by
    /// its own team loses only what exceeds the cheapest attacker. The seat to
    /// move may still escape, so its threat counts less.
    fn threat(&self, v: &AnqiPosition, seat: usize, to_move: bool) -> i32 {
        let Some(team) = v.team_of_seat(seat) else { return 0 };
        let split2 = self.options.split2;
        let e = self.options.enhanced;
        let mine = self.team_mask(team);
        let mut attacked = 0u64;
        for s in (0..3).filter(|&s| s != seat) {
            attacked |= self.targets_of(v, s);
        }
        let mut hit = attacked & mine;
        if hit == 0 {
            return 0;
        }
        // Defence: own pieces hitting the point (own-team hits are kept here).
        let mut defended = 0u64;
        for p in Point::all() {
            if let Cell::Up(id) = self.cells[p.index()] {
                if id.team(split2) == team {
                    defended |= self.hits(p, id);
                }
            }
        }
        let (mut max, mut sum) = (0i32, 0i32);
        while hit != 0 {
            let i = hit.trailing_zeros() as usize;
            hit &= hit - 1;
            let Some(p) = Point::new(i) else { continue };
            let Some(id) = self.up(p) else { continue };
            let value = id.value(e) as i32;
            let loss = if defended & (1 << i) != 0 {
                let cheapest = self.attackers_of(v, p, seat).unwrap_or(u32::MAX) as i32;
                (value - cheapest).max(0)
            } else {
                value
            };
            max = max.max(loss);
            sum += loss;
        }
        let rest = sum - max;
        if to_move {
            max / 5 + rest / 10
        } else {
            max * 3 / 5 + rest / 6
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attack map agrees with the engine: the captures it finds for the
    /// seat to move are exactly the legal captures.
    #[test]
    fn attack_map_matches_legal_captures() {
        for seed in 0..30u64 {
            let mut rng = Rng::new(seed);
            let layout = engine::anqi::deal::shuffle(|i| rng.below(i as usize + 1) as u32);
            let options = Options {
                enhanced: seed % 3 == 1,
                ..Options::default()
            };
            let mut full = AnqiPosition::from_layout(&layout, options);
            for _ in 0..200 {
                let Some(seat) = full.seat_to_move() else { break };
                let v = full.viewer();
                let board = Board::of(&v);
                let mut mine = 0u64;
                for m in v.legal_moves() {
                    if let Move::Capture { to, .. } = m {
                        mine |= 1 << to.index();
                    }
                }
                assert_eq!(board.targets_of(&v, seat), mine, "{v}");
                let moves = full.legal_moves();
                let m = moves[rng.below(moves.len())];
                full.play_unchecked(m);
            }
        }
    }
}
