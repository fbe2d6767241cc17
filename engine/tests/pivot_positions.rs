//! Random sparse positions with the kings on their file 5 and pieces on the
//! lines through O: the legality shortcut's view through O (and every other
//! shortcut) meets positions that playouts from the start seldom reach.
//! `legal_moves` and `checked` check each shortcut against the full
//! computation by debug assertions (`cargo test`, not `--release`).

use engine::position::Setup;
use engine::{Direction, Piece, Point, Position, Role, Side, Sides};

/// xorshift64, a fixed seed: the same positions every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The roles the tests place besides the kings (the first test the first
/// six only: the pieces that act along the lines through O and their
/// neighbours).
const ROLES: [Role; 8] = [
    Role::Chariot,
    Role::Cannon,
    Role::Horse,
    Role::Soldier,
    Role::Elephant,
    Role::Prince,
    Role::Advisor,
    Role::Consort,
];

/// An empty board in a random direction of play with the live sides' kings
/// alone: all three sides when `three` says so, else two (one left out at
/// random), each king where `king_at` puts it.
fn kings_alone(
    rng: &mut Rng,
    three: impl FnOnce(&mut Rng) -> bool,
    king_at: impl Fn(&mut Rng, Side) -> Point,
) -> Setup {
    let mut setup = Setup::initial(if rng.below(2) == 0 {
        Direction::Ccw
    } else {
        Direction::Cw
    });
    setup.board = [None; 184];
    let out = Side::from_index(rng.below(3));
    let three = three(rng);
    setup.live = Sides::EMPTY;
    for s in Side::ALL.into_iter().filter(|&s| three || s != out) {
        setup.live.insert(s);
        setup.board[king_at(rng, s).index()] = Some(Piece {
            side: s,
            role: Role::King,
        });
    }
    setup
}

#[test]
fn kings_on_their_file_5() {
    let roles = &ROLES[..6];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut tested = 0;
    for _ in 0..50_000 {
        let mut setup = kings_alone(
            &mut rng,
            |rng| rng.below(2) == 0,
            |rng, s| Point::rect(s, 5, 1 + rng.below(4) as u8),
        );
        let sides: Vec<Side> = setup.live.iter().collect();
        for _ in 0..rng.below(8) {
            // Half of them on a file 5 or O.
            let p = if rng.below(2) == 0 {
                match rng.below(5) {
                    0 => Point::O,
                    _ => Point::rect(Side::from_index(rng.below(3)), 5, 1 + rng.below(6) as u8),
                }
            } else {
                Point::from_index(rng.below(184))
            };
            if setup.board[p.index()].is_none() {
                let side = sides[rng.below(sides.len())];
                let role = roles[rng.below(roles.len())];
                setup.board[p.index()] = Some(Piece { side, role });
            }
        }
        setup.turn = sides[rng.below(sides.len())];
        setup.no_king_capture = rng.below(4) == 0;
        let Ok(pos) = Position::from_setup(&setup) else {
            continue;
        };
        tested += 1;
        let moves = pos.legal_moves();
        assert!(moves.windows(2).all(|w| w[0] < w[1]), "canonical order: {pos:?}");
        let _ = pos.checked();
    }
    assert!(tested > 40_000, "only {tested} positions were valid");
}

/// Random positions of three sides (some of two) with up to 20 pieces near
/// the palaces, the kings in theirs (half of them on file 5), and standing
/// checks and retaliation rights at random: many nodes whose king is
/// attacked by its target or its threat, with pieces a move away from
/// checking the other kings, which playouts from the start seldom reach.
/// As above, debug assertions check every shortcut of `legal_moves` and
/// `checked` against the full computation.
#[test]
fn kings_under_attack_near_their_palaces() {
    let roles = &ROLES[..];
    let mut rng = Rng(0x0fed_cba9_8765_4321);
    let mut tested = 0;
    let mut checked = 0;
    for _ in 0..100_000 {
        let mut setup = kings_alone(
            &mut rng,
            |rng| rng.below(4) != 0,
            |rng, s| {
                let file = if rng.below(2) == 0 { 5 } else { 4 + rng.below(3) as u8 };
                Point::rect(s, file, 1 + rng.below(3) as u8)
            },
        );
        let three = setup.live.count() == 3;
        let sides: Vec<Side> = setup.live.iter().collect();
        for _ in 0..rng.below(21) {
            // Most of them near a palace, some on O.
            let p = match rng.below(8) {
                0 => Point::O,
                1 => Point::from_index(rng.below(184)),
                _ => Point::rect(
                    Side::from_index(rng.below(3)),
                    2 + rng.below(7) as u8,
                    1 + rng.below(6) as u8,
                ),
            };
            if setup.board[p.index()].is_none() {
                let side = sides[rng.below(sides.len())];
                let role = roles[rng.below(roles.len())];
                setup.board[p.index()] = Some(Piece { side, role });
            }
        }
        setup.turn = sides[rng.below(sides.len())];
        if three {
            for (a, b) in [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)] {
                let pair = (Side::from_index(a), Side::from_index(b));
                match rng.below(6) {
                    0 => setup.retaliation.push(pair),
                    1 => setup.standing.push(pair),
                    _ => {}
                }
            }
        }
        let Ok(pos) = Position::from_setup(&setup) else {
            continue;
        };
        tested += 1;
        checked += usize::from(pos.is_check());
        let moves = pos.legal_moves();
        assert!(moves.windows(2).all(|w| w[0] < w[1]), "canonical order: {pos:?}");
        let _ = pos.checked();
    }
    assert!(tested > 40_000, "only {tested} positions were valid");
    assert!(checked > tested / 10, "only {checked} of {tested} positions in check");
}
