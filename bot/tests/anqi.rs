//! The 三国暗棋 bots (`bot::anqi`): legal actions, viewer-only decisions,
//! captures, determinism and the stop callback.

use bot::Level;
use bot::anqi::{self, AnqiBotContext, AnqiConfig};
use bot::rng::Rng;
use engine::anqi::{AnqiPosition, Move, Options, Piece, Point, deal};

fn layout(seed: u64) -> [Piece; 32] {
    let mut rng = Rng::new(seed);
    deal::shuffle(|i| rng.below(i as usize + 1) as u32)
}

/// Level three with a small budget, so that tests stay quick.
fn quick3(v: &AnqiPosition, seed: u64) -> Option<Move> {
    let cfg = AnqiConfig {
        nodes: 20_000,
        ..AnqiConfig::of(Level::Three)
    };
    anqi::search(v, &AnqiBotContext::default(), &cfg, seed, &mut |_| false).best
}

fn choose(v: &AnqiPosition, level: Level, seed: u64) -> Option<Move> {
    match level {
        Level::Three => quick3(v, seed),
        _ => anqi::choose_action(v, &AnqiBotContext::default(), level, seed, &mut |_| false),
    }
}

/// Whole games between the levels: every chosen action is legal in the
/// server's full position, and the bots only ever get the viewer form.
#[test]
fn actions_are_legal_in_the_full_position() {
    for g in 0..2u64 {
        let mut full = AnqiPosition::from_layout(&layout(100 + g), Options::default());
        let mut turns = 0;
        while let Some(seat) = full.seat_to_move() {
            let level = Level::ALL[(seat + g as usize) % 3];
            let v = full.viewer();
            let m = anqi::choose_action(&v, &AnqiBotContext::default(), level, turns, &mut |n| n >= 4096)
                .expect("an action while the game is on");
            assert!(full.is_legal(m), "{m} in {full}");
            full.play(m).unwrap();
            turns += 1;
            if turns > 200 {
                break;
            }
        }
        assert!(turns > 20);
    }
}

/// The same viewer form behind two different layouts (the face-down pieces
/// swapped among themselves): every level chooses the same action for the
/// same seed, even when handed the full positions. The decision is a
/// function of the viewer form only; a bot cannot see the layout.
#[test]
fn the_choice_depends_only_on_the_viewer_form() {
    for g in 0..3u64 {
        let first = layout(200 + g);
        let mut full = AnqiPosition::from_layout(&first, Options::default());
        let mut played = Vec::new();
        let mut rng = Rng::new(g);
        for _ in 0..(12 + 6 * g) {
            let moves = full.legal_moves();
            let m = moves[rng.below(moves.len())];
            full.play(m).unwrap();
            played.push(m);
        }
        // Swap the identities of face-down points until the layout differs.
        let down: Vec<usize> = Point::start_points()
            .enumerate()
            .filter(|&(_, p)| matches!(full.piece_at(p), Some((false, _))))
            .map(|(k, _)| k)
            .collect();
        let mut second = first;
        let (a, b) = down
            .iter()
            .flat_map(|&a| down.iter().map(move |&b| (a, b)))
            .find(|&(a, b)| first[a] != first[b])
            .expect("two different hidden identities");
        second.swap(a, b);
        let mut other = AnqiPosition::from_layout(&second, Options::default());
        for &m in &played {
            other.play(m).unwrap();
        }
        assert_ne!(full, other, "the layouts differ");
        assert_eq!(full.viewer(), other.viewer(), "the viewer forms agree");
        for level in Level::ALL {
            for seed in 0..2 {
                let ctx = AnqiBotContext::default();
                let x = anqi::choose_action(&full, &ctx, level, seed, &mut |n| n >= 8192);
                let y = anqi::choose_action(&other, &ctx, level, seed, &mut |n| n >= 8192);
                let z = anqi::choose_action(&full.viewer(), &ctx, level, seed, &mut |n| n >= 8192);
                assert_eq!(x, y, "level {level:?} seed {seed}");
                assert_eq!(x, z, "level {level:?} seed {seed}");
            }
        }
    }
}

/// Seat 1 (team 2) has a chariot on a3 and team 3's chariot stands alone on
/// e3 with nothing to defend it: levels two and three take it.
#[test]
fn a_free_chariot_is_taken() {
    let v: AnqiPosition = "????1????/????1????/R3r4/????1????/1???1???1 1 213 123 -/-/- 7 split1"
        .parse()
        .unwrap();
    let take = Move::Capture {
        from: Point::parse("a3").unwrap(),
        to: Point::parse("e3").unwrap(),
    };
    assert!(v.is_legal(take));
    for seed in 0..5 {
        assert_eq!(choose(&v, Level::Two, seed), Some(take), "level 2 seed {seed}");
        assert_eq!(
            anqi::choose_action(&v, &AnqiBotContext::default(), Level::Three, seed, &mut |n| n >= 60_000),
            Some(take),
            "level 3 seed {seed}"
        );
    }
}

/// Seat 2's general on a3 is attacked by team 3's chariot on e3 (seat 3
/// moves next), which team 3's horse on d1 defends: level two does not flip
/// and leave it hanging, it moves it away or trades it.
#[test]
fn an_attacked_general_is_not_left_hanging() {
    let v: AnqiPosition = "????1????/????1????/K3r4/????1????/1??n1???1 2 213 123 -/-/- 8 split1"
        .parse()
        .unwrap();
    for seed in 0..4 {
        let m = choose(&v, Level::Two, seed).unwrap();
        assert!(!matches!(m, Move::Flip(_)), "seed {seed}: {m}");
        assert!(
            !matches!(choose(&v, Level::Three, seed), Some(Move::Flip(_))),
            "level 3 seed {seed}"
        );
    }
}

/// Same position, level and seed: same action; other seeds may differ.
#[test]
fn deterministic_for_a_seed() {
    let mut full = AnqiPosition::from_layout(&layout(7), Options::default());
    for _ in 0..15 {
        let m = full.legal_moves()[0];
        full.play(m).unwrap();
    }
    let v = full.viewer();
    for level in Level::ALL {
        for seed in [0u64, 1, 99] {
            let a = choose(&v, level, seed);
            let b = choose(&v, level, seed);
            assert_eq!(a, b, "{level:?} seed {seed}");
        }
    }
    let r1 = anqi::search(
        &v,
        &AnqiBotContext::default(),
        &AnqiConfig::of(Level::Two),
        5,
        &mut |_| false,
    );
    let r2 = anqi::search(
        &v,
        &AnqiBotContext::default(),
        &AnqiConfig::of(Level::Two),
        5,
        &mut |_| false,
    );
    assert_eq!(r1, r2);
}

/// The stop callback ends the search: asked after 1024 nodes, it stops
/// there, and the bot still answers with a legal action.
#[test]
fn the_stop_callback_ends_the_search() {
    let mut full = AnqiPosition::from_layout(&layout(11), Options::default());
    for _ in 0..20 {
        let m = *full.legal_moves().last().unwrap();
        full.play(m).unwrap();
    }
    let v = full.viewer();
    let mut asked = 0;
    let r = anqi::search(
        &v,
        &AnqiBotContext::default(),
        &AnqiConfig::of(Level::Three),
        1,
        &mut |n| {
            asked += 1;
            n >= 1024
        },
    );
    assert_eq!(asked, 1);
    assert!(r.nodes < 1100, "{} nodes", r.nodes);
    assert!(full.is_legal(r.best.unwrap()));
    let cfg = AnqiConfig {
        nodes: 30_000,
        ..AnqiConfig::of(Level::Three)
    };
    let unbounded = anqi::search(&v, &AnqiBotContext::default(), &cfg, 1, &mut |_| false);
    assert!(unbounded.nodes > 10 * r.nodes);
    let m = anqi::choose_action(&v, &AnqiBotContext::default(), Level::Three, 1, &mut |_| true).unwrap();
    assert!(full.is_legal(m));
}

/// The outcomes of a flip cover the hidden pool exactly.
#[test]
fn chance_outcomes_cover_the_pool() {
    let mut full = AnqiPosition::from_layout(&layout(3), Options::default());
    for _ in 0..10 {
        let m = full.legal_moves()[1];
        full.play(m).unwrap();
    }
    let v = full.viewer();
    let outcomes = anqi::chance_outcomes(&v);
    assert_eq!(outcomes.iter().map(|&(_, n)| n).sum::<u32>(), v.face_down_count());
    assert!(outcomes.len() <= 12);
}

/// Level one is nearly random, but a free capture is taken about half the time.
#[test]
fn level_one_likes_free_captures() {
    let v: AnqiPosition = "????1????/????1????/R3r4/????1????/1???1???1 1 213 123 -/-/- 7 split1"
        .parse()
        .unwrap();
    let take = Move::Capture {
        from: Point::parse("a3").unwrap(),
        to: Point::parse("e3").unwrap(),
    };
    let taken = (0..100)
        .filter(|&s| anqi::choose_action(&v, &AnqiBotContext::default(), Level::One, s, &mut |_| false) == Some(take))
        .count();
    assert!((30..80).contains(&taken), "{taken}");
    assert_eq!(
        anqi::choose_action(
            &AnqiPosition::sample(),
            &AnqiBotContext::default(),
            Level::One,
            0,
            &mut |_| false
        )
        .map(|m| matches!(m, Move::Flip(_))),
        Some(true)
    );
}

/// A scoring proposal is accepted only by a seat that would be first alone.
#[test]
fn a_proposal_is_accepted_only_when_first() {
    // Seat 1 captured team 3's chariot: net 300 + 50 against 300 and 250.
    let v: AnqiPosition = "????1????/????1????/R8/????1????/1???1???1 2 213 123 r/-/- 8 split1"
        .parse()
        .unwrap();
    let ctx = AnqiBotContext::default();
    assert_eq!(anqi::deadlock_score(&v, 0, &ctx), 350);
    assert!(anqi::answer_proposal(&v, &ctx, 0));
    assert!(!anqi::answer_proposal(&v, &ctx, 1));
    assert!(!anqi::answer_proposal(&v, &ctx, 2));
}

/// The options and modes run through the bots too: `split2 + enhanced +
/// double` in a race, and 收军, played by an `AnqiGame`, every action legal.
#[test]
fn options_and_modes_play_through() {
    use engine::anqi::{AnqiGame, Command, Input, Mode, Settings};
    let cases = [
        (
            Options {
                split2: true,
                enhanced: true,
                double: true,
                ..Options::default()
            },
            Mode::Race { target: 200 },
        ),
        (Options::default(), Mode::Shoujun),
    ];
    for (i, (options, mode)) in cases.into_iter().enumerate() {
        let settings = Settings {
            mode,
            ..Settings::default()
        };
        let ctx = AnqiBotContext { settings };
        let mut game = AnqiGame::new(AnqiPosition::from_layout(&layout(300 + i as u64), options), settings);
        let mut n = 0u64;
        while !game.is_over() && n < 300 {
            let seat = game.position().seat_to_move().unwrap();
            let level = if seat == 0 { Level::Two } else { Level::One };
            let m = anqi::choose_action(&game.viewer(), &ctx, level, n, &mut |k| k >= 4096).unwrap();
            game.apply(Input {
                seat,
                command: Command::Play(m),
                at: n,
            })
            .unwrap();
            n += 1;
        }
        assert!(n > 10);
    }
}
