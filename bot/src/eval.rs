//! Static evaluation: material, mobility, king safety and the 先击后攻
//! relations (RULES §4), as one number per side.
//!
//! [`strengths`] scores each side on its own (higher is better for it);
//! [`utilities`] turns those into what each side wants: its own strength
//! against the mean of its live opponents', plus a bonus per opponent
//! already eliminated. Paranoid search reads one side's utility, max^n all
//! three.

use engine::board::{NUM_POINTS, board};
use engine::{Point, Position, Role, Side};

/// A score bound no evaluation reaches.
pub const INF: i32 = 1_000_000;
/// The value of winning (the last side left); eliminated sides get `-MATE`.
/// Search results within `MAX_PLY` of it are decided games.
pub const MATE: i32 = 100_000;
/// What a side gains for each opponent already out of the game.
pub const ELIMINATION_BONUS: i32 = 3_000;

/// Base piece values (centipawn-like). The king is never traded: losing it
/// is elimination, scored by the search.
pub const fn role_value(role: Role) -> i32 {
    match role {
        Role::King => 0,
        Role::Chariot => 900,
        Role::Cannon => 450,
        Role::Horse => 430,
        Role::Prince => 250,
        Role::Consort => 200,
        Role::Elephant => 200,
        Role::Advisor => 180,
        Role::Soldier => 100,
    }
}

/// A piece's value where it stands: soldiers are worth more once out of
/// their own no-soldier zone, and twice as much once they have left their
/// own rectangle (crossed the river, in chess words).
#[inline]
pub fn piece_value(side: Side, role: Role, at: Point) -> i32 {
    if role != Role::Soldier {
        return role_value(role);
    }
    match at.owner() {
        Some(s) if s == side => {
            if board().no_soldier_zone(side).contains(at) {
                100
            } else {
                120
            }
        }
        // A fan, O or another side's rectangle.
        _ => 200,
    }
}

/// Who attacks which points, as the engine's `attacked_by` sees it
/// (captures by the piece rules, hostility aside, own pieces included: an
/// own piece "attacked" is a defended piece).
#[derive(Clone, Debug)]
pub struct AttackMap {
    /// Attacks on each point, per side.
    pub count: [[u8; NUM_POINTS]; 3],
    /// The value of the cheapest attacker of each point, per side (`u16::MAX` if none).
    pub least: [[u16; NUM_POINTS]; 3],
    /// Destinations each side's pieces reach (empty points or other sides'
    /// pieces): an approximation of its number of moves.
    pub mobility: [i32; 3],
}

impl AttackMap {
    /// The attack map of every live side.
    pub fn new(pos: &Position) -> AttackMap {
        let mut map = AttackMap {
            count: [[0; NUM_POINTS]; 3],
            least: [[u16::MAX; NUM_POINTS]; 3],
            mobility: [0; 3],
        };
        for s in pos.live().iter() {
            map.add_side(pos, s);
        }
        map
    }

    fn add_side(&mut self, pos: &Position, s: Side) {
        let b = board();
        let phase2 = pos.live().count() < 3;
        let si = s.index();
        let occupied = |q: Point| pos.piece_at(q).is_some();
        let own = |q: Point| pos.piece_at(q).is_some_and(|pc| pc.side == s);
        for from in pos.pieces_of(s).iter() {
            let Some(piece) = pos.piece_at(from) else { continue };
            let v = role_value(piece.role).max(1) as u16;
            let hit = |q: Point, map: &mut AttackMap| {
                let i = q.index();
                map.count[si][i] = map.count[si][i].saturating_add(1);
                if v < map.least[si][i] {
                    map.least[si][i] = v;
                }
                if !own(q) {
                    map.mobility[si] += 1;
                }
            };
            match piece.role {
                Role::Chariot => {
                    for ray in b.rays(from) {
                        for &q in b.ray_points(ray) {
                            hit(q, self);
                            if occupied(q) {
                                break;
                            }
                        }
                    }
                }
                Role::Cannon => {
                    for ray in b.rays(from) {
                        let mut screened = false;
                        for &q in b.ray_points(ray) {
                            if !screened {
                                if occupied(q) {
                                    screened = true;
                                } else {
                                    // A quiet move, not an attack.
                                    self.mobility[si] += 1;
                                }
                            } else if occupied(q) {
                                hit(q, self);
                                break;
                            }
                        }
                    }
                }
                Role::Horse => {
                    for r in b.ri_from(from) {
                        if !occupied(r.leg) && r.to != Point::O {
                            hit(r.to, self);
                        }
                    }
                }
                Role::Elephant => {
                    let mut region = b.rectangle(s);
                    if phase2 {
                        region = region.union(b.fans());
                        for o in pos.live().iter() {
                            region = region.union(b.rectangle(o));
                        }
                    }
                    for t in b.tian_from(from) {
                        if !occupied(t.eye) && region.contains(t.to) {
                            hit(t.to, self);
                        }
                    }
                }
                Role::Prince => {
                    for &q in b.neighbours(from).iter().chain(b.diagonals(from)) {
                        hit(q, self);
                    }
                }
                Role::King => {
                    let region = b.king_region(s);
                    for &q in b.neighbours(from) {
                        if region.contains(q) {
                            hit(q, self);
                        }
                    }
                }
                Role::Consort => {
                    let region = b.king_region(s);
                    for &q in b.neighbours(from).iter().chain(b.drawn_diagonals(from)) {
                        if region.contains(q) {
                            hit(q, self);
                        }
                    }
                }
                Role::Advisor => {
                    let region = b.palace(s);
                    for &q in b.drawn_diagonals(from) {
                        if region.contains(q) {
                            hit(q, self);
                        }
                    }
                }
                Role::Soldier => {
                    let zone = b.no_soldier_zone(s);
                    let in_zone = zone.contains(from);
                    let fwd = if in_zone { b.forward(from, s) } else { None };
                    for ray in b.rays(from) {
                        let pts = b.ray_points(ray);
                        let q1 = pts[0];
                        if (in_zone && Some(q1) != fwd) || zone.contains(q1) {
                            continue;
                        }
                        hit(q1, self);
                        if phase2 && !occupied(q1) && pts.len() > 1 && !zone.contains(pts[1]) {
                            hit(pts[1], self);
                        }
                    }
                }
            }
        }
    }
}

/// The sides that may capture `s`'s pieces freely, and the one that may
/// only hit back (先击后攻): in phase 3 threat(s) attacks s at will, while
/// target(s) needs the retaliation right; in phase 2 the opponent attacks freely.
fn enemies(pos: &Position, s: Side) -> (Side, Option<Side>) {
    let d = pos.direction();
    if pos.live().count() == 3 {
        (d.prev(s), Some(d.next(s)))
    } else {
        (pos.next_live_after(s), None)
    }
}

/// How dangerous the surroundings of `s`'s king are (a penalty, ≥ 0).
fn king_danger(pos: &Position, map: &AttackMap, s: Side) -> i32 {
    let Some(k) = pos.king(s) else { return 0 };
    let b = board();
    let (free, latent) = enemies(pos, s);
    let region = b.king_region(s);
    // Attacks on the king's point and the points it could step to: the
    // free attacker counts fully, the retaliating one a third.
    let mut zone_hits = 0i32;
    let mut weigh = |q: Point| {
        zone_hits += 3 * i32::from(map.count[free.index()][q.index()]);
        if let Some(l) = latent {
            zone_hits += i32::from(map.count[l.index()][q.index()]);
        }
    };
    weigh(k);
    for &q in b.neighbours(k) {
        if region.contains(q) {
            weigh(q);
        }
    }
    let mut danger = 6 * zone_hits;
    // Open lines: an enemy chariot behind one piece (a pin or a discovered
    // check), an enemy cannon with a clear line (a screen dropped in checks)
    // or behind two pieces (one leaving checks).
    let enemy = |side: Side| side == free || Some(side) == latent;
    for ray in b.rays(k) {
        let mut between = 0;
        for &q in b.ray_points(ray) {
            let Some(pc) = pos.piece_at(q) else { continue };
            if enemy(pc.side) {
                let w = if pc.side == free { 3 } else { 1 };
                danger += w * match (pc.role, between) {
                    (Role::Chariot, 1) => 12,
                    (Role::Cannon, 0) => 15,
                    (Role::Cannon, 2) => 8,
                    (Role::King, 0 | 1) => 6,
                    _ => 0,
                };
            }
            between += 1;
            if between > 2 {
                break;
            }
        }
    }
    // The king outside its palace (it flew there) is exposed.
    if !b.palace(s).contains(k) && !b.king_region(s).contains(k) {
        danger += 60;
    }
    danger
}

/// Each side's strength: material, mobility, king safety and the captures
/// about to happen. Indexed by side; eliminated sides get 0.
pub fn strengths(pos: &Position, map: &AttackMap) -> [i32; 3] {
    let mut e = [0i32; 3];
    let live = pos.live();
    for s in live.iter() {
        let si = s.index();
        let mut material = 0;
        for p in pos.pieces_of(s).iter() {
            if let Some(pc) = pos.piece_at(p) {
                material += piece_value(s, pc.role, p);
            }
        }
        e[si] = material + 2 * map.mobility[si] - king_danger(pos, map, s) + pressure(pos, map, s);
    }
    // Captures about to happen (先击后攻). The side to move takes one piece of
    // the sides it may capture now; the side after it, one of its own
    // target's. Pieces attacked only by a side that needs the retaliation
    // right are safe and cost nothing.
    if live.count() >= 2 {
        let mover = pos.turn();
        let best = best_capture(pos, map, mover, |t| pos.hostile(mover, t));
        if let Some((victim, gain)) = best {
            e[victim.index()] -= gain * 7 / 10;
        }
        let next = pos.next_live_after(mover);
        let next_target = pos.next_live_after(next);
        if next != mover {
            let best = best_capture(pos, map, next, |t| t == next_target);
            if let Some((victim, gain)) = best {
                e[victim.index()] -= gain * 3 / 10;
            }
        }
    }
    e
}

/// Initiative against the side `s` may attack freely (its target; in
/// phase 2 the opponent): a share of the value of each of its pieces `s`
/// attacks, and a bonus for each attacking piece out of `s`'s rectangle
/// (more in its target's).
/// Without it a paranoid search, which expects both others to gang up,
/// sits still and the game ends in the no-progress draw.
fn pressure(pos: &Position, map: &AttackMap, s: Side) -> i32 {
    let target = pos.next_live_after(s);
    if target == s {
        return 0;
    }
    let mut bonus = 0;
    for p in pos.pieces_of(target).iter() {
        if map.count[s.index()][p.index()] > 0
            && let Some(pc) = pos.piece_at(p)
        {
            bonus += if pc.role == Role::King {
                40
            } else {
                role_value(pc.role).min(450) / 10
            };
        }
    }
    let b = board();
    for p in pos.pieces_of(s).iter() {
        if let Some(pc) = pos.piece_at(p)
            && matches!(pc.role, Role::Chariot | Role::Horse | Role::Cannon | Role::Prince)
            && !b.rectangle(s).contains(p)
        {
            bonus += if b.rectangle(target).contains(p) { 30 } else { 10 };
        }
    }
    bonus
}

/// The most valuable capture `by` has against the sides `may_take` allows:
/// an undefended piece is worth all of its value, a defended one what it
/// is worth over the cheapest attacker.
fn best_capture(pos: &Position, map: &AttackMap, by: Side, may_take: impl Fn(Side) -> bool) -> Option<(Side, i32)> {
    let mut best: Option<(Side, i32)> = None;
    for t in pos.live().iter() {
        if t == by || !may_take(t) {
            continue;
        }
        for p in pos.pieces_of(t).iter() {
            let i = p.index();
            if map.count[by.index()][i] == 0 {
                continue;
            }
            let Some(pc) = pos.piece_at(p) else { continue };
            if pc.role == Role::King {
                continue;
            }
            let v = piece_value(t, pc.role, p);
            let gain = if map.count[t.index()][i] > 0 {
                v - i32::from(map.least[by.index()][i])
            } else {
                v
            };
            if gain > 0 && best.is_none_or(|(_, g)| gain > g) {
                best = Some((t, gain));
            }
        }
    }
    best
}

/// What each side wants, indexed by side: its strength against the mean of
/// its live opponents', plus [`ELIMINATION_BONUS`] per opponent gone.
/// An eliminated side gets `-MATE`, the last side left `MATE`.
pub fn utilities(pos: &Position) -> [i32; 3] {
    let live = pos.live();
    let mut u = [-MATE; 3];
    if live.count() == 1 {
        for s in live.iter() {
            u[s.index()] = MATE;
        }
        return u;
    }
    let map = AttackMap::new(pos);
    let e = strengths(pos, &map);
    let n = live.count() as i32;
    let total: i32 = live.iter().map(|s| e[s.index()]).sum();
    for s in live.iter() {
        let others = (total - e[s.index()]) / (n - 1);
        u[s.index()] = e[s.index()] - others + ELIMINATION_BONUS * (3 - n);
    }
    u
}

/// One side's utility (see [`utilities`]).
pub fn utility(pos: &Position, side: Side) -> i32 {
    utilities(pos)[side.index()]
}
