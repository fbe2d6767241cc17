//! The evaluation of a 三国演弈棋 position for each player (a soldier ≈ 100).
//!
//! A player's *strength* is its material, the mobility of its chariots and
//! cannons, advanced pieces near an enemy king, and its king's safety
//! (checks, attacked palace points, a king on the file of the other king
//! with a single piece between: 见面 lets the third player eliminate both).
//! Its *utility* is its strength plus half its ally's, minus the mean of its
//! enemies', plus a bonus per player already gone (absorbing the first one
//! shows up as material, since the pieces become the absorber's own).

use engine::yanyi::board::{Dir, camp, step};
use engine::yanyi::{Piece, Player, Point, Position, Role};

use crate::generic::MATE;

/// What a piece is worth on its own (the king nothing: it is never taken).
pub const fn role_value(role: Role) -> i32 {
    match role {
        Role::King => 0,
        Role::Advisor => 150,
        Role::Elephant => 150,
        Role::Horse => 450,
        Role::Chariot => 900,
        Role::Cannon => 450,
        Role::Soldier => 100,
    }
}

/// What capturing `victim` gains: its value, the emperor's the 汉 force he
/// hands over (three chariots and a cannon, less the alliance it provokes).
pub fn capture_value(victim: Piece) -> i32 {
    if victim == Piece::EMPEROR {
        1_500
    } else {
        role_value(victim.role)
    }
}

/// Per player already out of the game, for each survivor.
pub const ELIMINATION_BONUS: i32 = 2_000;
/// How much of its ally's strength a player counts as its own (per mille).
pub const ALLY_SHARE: i32 = 500;

/// `s`'s depth of `p`: lines counted from its own back line (1 = back line).
fn depth(s: Player, p: Point) -> i32 {
    let (x, y) = (i32::from(p.x()), i32::from(p.y()));
    match s {
        Player::R => 17 - y,
        Player::B => y + 1,
        Player::G => 17 - x,
    }
}

/// Empty points a slider on `p` reaches along its four lines.
fn reach(pos: &Position, p: Point) -> i32 {
    let mut n = 0;
    for d in Dir::ALL {
        let mut q = step(p, d);
        while let Some(t) = q {
            if pos.piece_at(t).is_some() {
                break;
            }
            n += 1;
            q = step(t, d);
        }
    }
    n
}

/// The strength of each player (0 for players out of the game).
pub fn strengths(pos: &Position) -> [i32; 3] {
    let mut out = [0; 3];
    let kings: [Option<Point>; 3] = Player::ALL.map(|p| pos.king(p));
    for s in pos.live().iter() {
        let colour = s.colour();
        let home = camp(colour);
        let mut v = 0;
        for p in pos.pieces_of(colour).iter() {
            let Some(pc) = pos.piece_at(p) else { continue };
            v += role_value(pc.role);
            match pc.role {
                Role::Soldier => {
                    let d = depth(s, p);
                    if d >= 6 {
                        v += 60 + 10 * (d - 6).min(6);
                    }
                }
                Role::Chariot | Role::Cannon | Role::Horse => {
                    if pc.role != Role::Horse {
                        v += 2 * reach(pos, p);
                    }
                    if !home.contains(p) {
                        v += 10;
                    }
                    // Pressure: near an enemy king.
                    for e in pos.enemies(s).iter() {
                        if let Some(k) = kings[e.index()] {
                            let dist = (i32::from(p.x()) - i32::from(k.x())).abs()
                                + (i32::from(p.y()) - i32::from(k.y())).abs();
                            if dist <= 5 {
                                v += 6 * (6 - dist);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        v += king_safety(pos, s);
        out[s.index()] = v;
    }
    out
}

/// Checks, attacked points around the king, and the 见面 danger.
fn king_safety(pos: &Position, s: Player) -> i32 {
    let Some(k) = pos.king(s) else { return 0 };
    let enemies = pos.enemies(s);
    let mut v = 0;
    if pos.in_check(s) {
        v -= if pos.turn() == s { 40 } else { 120 };
    }
    for d in Dir::ALL {
        if let Some(q) = step(k, d)
            && enemies.iter().any(|e| pos.attacks(e, q))
        {
            v -= 15;
        }
    }
    // 魏 and 蜀 on one file with a single piece between: the third player
    // may remove it (or it moves) and both kings face.
    if s != Player::G
        && let Some(between) = pieces_between_kings(pos)
    {
        if between == 1 {
            v -= if pos.live().contains(Player::G) { 250 } else { 60 };
        } else if between == 2 {
            v -= 30;
        }
    }
    v
}

/// The pieces between 魏's and 蜀's kings when they stand on one file.
pub fn pieces_between_kings(pos: &Position) -> Option<u32> {
    let (kb, kr) = (pos.king(Player::B)?, pos.king(Player::R)?);
    if kb.x() != kr.x() {
        return None;
    }
    let mut between = 0;
    let mut q = step(kb, Dir::South);
    while let Some(t) = q {
        if t == kr {
            break;
        }
        if pos.piece_at(t).is_some() {
            between += 1;
        }
        q = step(t, Dir::South);
    }
    Some(between)
}

/// `s`'s utility: `-MATE` once out, `MATE` once alone, otherwise its
/// strength plus [`ALLY_SHARE`] of its ally's, minus its enemies' mean,
/// plus [`ELIMINATION_BONUS`] per player gone.
pub fn utility(pos: &Position, s: Player) -> i32 {
    if !pos.live().contains(s) {
        return -MATE;
    }
    if pos.is_over() {
        return MATE;
    }
    let st = strengths(pos);
    let mut v = st[s.index()];
    for o in pos.live().iter() {
        if o != s && pos.allied(s, o) {
            v += st[o.index()] * ALLY_SHARE / 1000;
        }
    }
    let enemies = pos.enemies(s);
    if !enemies.is_empty() {
        v -= enemies.iter().map(|e| st[e.index()]).sum::<i32>() / enemies.count() as i32;
    }
    v + ELIMINATION_BONUS * (3 - pos.live().count() as i32)
}
