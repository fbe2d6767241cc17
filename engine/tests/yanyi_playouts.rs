//! Property tests over random playouts of 三国演弈棋: the APIs agree with each other.

use engine::yanyi::game::{Action, Event};
use engine::yanyi::{
    Colour, Player, Position, Reason, Role, YanyiGame, explain::explain, format_position, parse_position, perft,
};
use proptest::prelude::*;

/// A small deterministic generator driven by proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn check_position(pos: &Position) {
    let text = format_position(pos);
    let back = parse_position(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(back, *pos, "{text}");
    assert_eq!(format_position(&back), text);
    for p in Player::ALL {
        if pos.live().contains(p) {
            assert!(pos.king(p).is_some(), "{text}");
        } else {
            assert!(pos.pieces_of(p.colour()).is_empty(), "{text}");
            assert!(!pos.pending().contains(p), "{text}");
        }
    }
    // The one alliance: with three live, allied exactly when the 汉 force is gone.
    if pos.live().count() == 3 {
        assert_eq!(pos.alliance().is_some(), !pos.han_static(), "{text}");
        assert!(!pos.kings_face(), "{text}");
    } else {
        assert_eq!(pos.alliance(), None, "{text}");
    }
    let moves = pos.legal_moves();
    assert!(
        moves.windows(2).all(|w| w[0] < w[1]),
        "canonical order, no duplicates: {text}"
    );
    assert_eq!(perft(pos, 1), moves.len() as u64);
    for m in pos.pseudo_legal_moves() {
        let legal = pos.is_legal(m);
        assert_eq!(legal, moves.contains(&m), "{text}: {m}");
        if !legal {
            let r = explain(pos, m);
            assert!(
                matches!(r, Reason::KingAttacked(_) | Reason::KingsFace(_)),
                "{text}: {m}: {r:?}"
            );
        }
    }
    for m in &moves {
        let mut p = *pos;
        let o = p.play(*m).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(o.mover, pos.turn());
        assert_eq!(o.next, p.turn());
        // Kings are never captured; allies and the static 汉 force never lose pieces.
        if let Some(c) = o.captured {
            assert!(c.role != Role::King || c.colour == Colour::Y, "{text}: {m}");
            if c.colour == Colour::Y {
                assert_eq!(o.piece.role, Role::Horse, "{text}: {m}");
            }
        }
    }
    if pos.is_over() {
        assert!(moves.is_empty());
    } else {
        assert!(!moves.is_empty(), "the side to move always has a move: {text}");
    }
}

/// Right after a move, the mover is not in check unless the move ended its check by
/// alliance or eliminated the others (the legality rule of §5).
fn check_mover_safe(before: &Position, after: &Position, mover: Player) {
    if after.live().contains(mover) && after.live().count() >= 2 && after.alliance() == before.alliance() {
        assert!(
            !after.in_check(mover) || after.live() != before.live(),
            "{}: {mover} left in check",
            format_position(after)
        );
    }
}

fn playout(seed: u64, max_plies: usize) {
    let mut rng = Rng(seed | 1);
    let mut pos = Position::initial();
    let mut game = YanyiGame::new();
    for ply in 0..max_plies {
        check_position(&pos);
        if pos.is_over() {
            break;
        }
        let moves = pos.legal_moves();
        let m = moves[rng.below(moves.len())];
        let before = pos;
        let mover = pos.turn();
        pos.play(m).unwrap();
        check_mover_safe(&before, &pos, mover);
        if !game.is_finished() {
            game.apply(Event {
                player: mover,
                action: Action::Move(m),
                at: ply as u64,
            })
            .unwrap();
            assert_eq!(*game.position(), pos);
        }
    }
    let replayed = YanyiGame::replay(Position::initial(), game.events()).unwrap();
    assert_eq!(replayed, game);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_playouts_agree(seed in any::<u64>()) {
        playout(seed, 300);
    }

    #[test]
    fn variant_trait_agrees(seed in any::<u64>()) {
        use engine::variant::Position as _;
        let mut rng = Rng(seed | 1);
        let mut pos = Position::initial();
        for _ in 0..40 {
            if pos.is_over() { break; }
            let moves = pos.legal_moves();
            let m = moves[rng.below(moves.len())];
            let mut via_trait = pos;
            engine::variant::Position::play(&mut via_trait, m).unwrap();
            pos.play_unchecked(m);
            prop_assert_eq!(via_trait, pos);
            prop_assert_eq!(pos.seat_to_move(), (!pos.is_over()).then(|| pos.turn().index()));
            prop_assert_eq!(engine::variant::Position::perft(&pos, 2), perft(&pos, 2));
        }
    }
}

/// Long playouts that force captures reach alliances, 杀汉 and eliminations.
#[test]
fn aggressive_playouts_reach_every_event() {
    let (mut alliances, mut kills, mut eliminations, mut absorbed) = (0, 0, 0, 0);
    for seed in 1..=60u64 {
        let mut rng = Rng(seed * 7919);
        let mut pos = Position::initial();
        for _ in 0..600 {
            check_position(&pos);
            if pos.is_over() {
                break;
            }
            let moves = pos.legal_moves();
            let special: Vec<_> = moves
                .iter()
                .copied()
                .filter(|m| {
                    pos.piece_at(m.to).is_some() || (pos.piece_at(m.from).unwrap().role == Role::Horse && m.to.x() <= 1)
                })
                .collect();
            let m = if !special.is_empty() && rng.below(3) > 0 {
                special[rng.below(special.len())]
            } else {
                moves[rng.below(moves.len())]
            };
            let o = pos.play(m).unwrap();
            alliances += usize::from(o.alliance.is_some() && !o.emperor_killed);
            kills += usize::from(o.emperor_killed);
            eliminations += o.eliminated.len();
            absorbed += o.eliminated.iter().filter(|e| e.absorbed_by.is_some()).count();
        }
    }
    assert!(
        alliances > 0 && kills > 0 && eliminations > 0 && absorbed > 0,
        "{alliances} {kills} {eliminations} {absorbed}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Parsing never panics; whatever parses is canonical after one round.
    #[test]
    fn parsing_never_panics(
        tokens in proptest::collection::vec(("[GBRYX][KAENRCPQ]@[a-r][0-9]{1,2}", any::<bool>()), 0..12),
        turn in "[GBRX]",
        alliance in "(-|GB|GR|BR|BG|X)",
        pending in "(-|G|B|R|GB|GR|BR|GBR|RG)",
    ) {
        let base = ["GK@q9", "BK@i17", "RK@i1", "BP@i14", "YK@a9"];
        let mut all: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        for (t, keep) in tokens {
            if keep { all.push(t); }
        }
        let text = format!("{} {turn} {alliance} {pending}", all.join(","));
        if let Ok(p) = parse_position(&text) {
            let canon = format_position(&p);
            prop_assert_eq!(parse_position(&canon).unwrap(), p);
        }
        let _ = engine::yanyi::parse_move(&text);
    }
}

/// A crowded text (more chariots than a game can have) still generates without overflow.
#[test]
fn crowded_positions_do_not_overflow() {
    let mut tokens = vec![
        "RK@i1".to_owned(),
        "BK@i17".to_owned(),
        "BP@i14".to_owned(),
        "GK@q9".to_owned(),
    ];
    for p in engine::yanyi::Point::all() {
        let (x, y) = (p.x(), p.y());
        if (x % 2 == 0 && y % 2 == 1)
            && !["i1", "i17", "i14", "q9", "i15", "i16", "i2", "i3"].contains(&p.to_string().as_str())
        {
            let c = "G";
            let r = if x % 4 == 0 { "R" } else { "N" };
            tokens.push(format!("{c}{r}@{p}"));
        }
    }
    let text = format!("{} G BR -", tokens.join(","));
    let p = parse_position(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let n = p.legal_moves().len();
    assert!(n > 200, "{n}");
    assert!(perft(&p, 2) > 0);
}
