//! 三国暗棋 (RULES-ANQI.md): perft as data, the text examples, the §10.1 property,
//! the game record and the deal, through the public API.

use std::path::PathBuf;

use engine::anqi::deal::{self, GameConfig, VerifyError};
use engine::anqi::notation::{format_position, parse_move, parse_position, record_text};
use engine::anqi::{
    AnqiGame, AnqiPosition, Command, DeadlockScoring, EndReason, GameError, Input, Mode, Move, Options, ParseError,
    Piece, Point, RecordEvent, Refusal, Settings, Team, chance_perft,
};
use proptest::prelude::*;

const SAMPLE_FULL: &str =
    "*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1*r*A*C*K/*N*R*P*c1*p*A*R*n 1 --- 123 -/-/- 1 split1";
const INITIAL_VIEWER: &str = "????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1";
const SALT: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const GAME_ID: &str = "3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f";

fn pos(text: &str) -> AnqiPosition {
    parse_position(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(text: &str) -> Move {
    parse_move(text).unwrap_or_else(|e| panic!("{e}"))
}

fn texts(p: &AnqiPosition) -> Vec<String> {
    p.legal_moves().iter().map(Move::to_string).collect()
}

// --- perft as data ---------------------------------------------------------------

struct Case {
    line: usize,
    chance: bool,
    deep: bool,
    text: String,
    depth: u32,
    nodes: u64,
}

fn cases() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/anqi_perft.txt");
    let data = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, raw) in data.lines().enumerate() {
        let mut line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (mut chance, mut deep) = (false, false);
        loop {
            if let Some(rest) = line.strip_prefix("chance ") {
                chance = true;
                line = rest;
            } else if let Some(rest) = line.strip_prefix("deep ") {
                deep = true;
                line = rest;
            } else {
                break;
            }
        }
        let f: Vec<&str> = line.split(';').map(str::trim).collect();
        assert_eq!(
            f.len(),
            3,
            "anqi_perft.txt:{}: expected `position ; depth ; nodes`",
            i + 1
        );
        out.push(Case {
            line: i + 1,
            chance,
            deep,
            text: f[0].to_owned(),
            depth: f[1].parse().unwrap(),
            nodes: f[2].replace('_', "").parse().unwrap(),
        });
    }
    out
}

fn run_cases(deep: bool) {
    let mut failures = Vec::new();
    let mut n = 0;
    for c in cases().into_iter().filter(|c| c.deep == deep) {
        n += 1;
        let p = parse_position(&c.text).unwrap_or_else(|e| panic!("anqi_perft.txt:{}: {e}", c.line));
        assert_eq!(format_position(&p), c.text, "anqi_perft.txt:{}: canonical text", c.line);
        let got = if c.chance {
            chance_perft(&p, c.depth)
        } else {
            p.perft(c.depth)
        };
        if got != c.nodes {
            failures.push(format!(
                "anqi_perft.txt:{}: {}perft({}) expected {}, got {got}",
                c.line,
                if c.chance { "chance-" } else { "" },
                c.depth,
                c.nodes
            ));
        }
    }
    assert!(n > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn perft_file() {
    assert!(cases().len() >= 40);
    run_cases(false);
}

#[test]
#[ignore = "deep: perft(5) and chance-perft(3) of §12 (a few seconds in release)"]
fn perft_file_deep() {
    run_cases(true);
}

// --- §11.3 --------------------------------------------------------------------------

#[test]
fn the_example_line_of_11_3() {
    let mut p = AnqiPosition::sample();
    assert_eq!(format_position(&p), SAMPLE_FULL);
    assert_eq!(format_position(&p.viewer()), INITIAL_VIEWER);
    let mut record = Vec::new();
    for a in ["+g2", "+i2", "+f2", "+h2", "i2xh2"] {
        let m = mv(a);
        let out = p.play(m).unwrap_or_else(|e| panic!("{e}"));
        record.push(record_text(m, &out));
    }
    assert_eq!(record, ["+g2=A", "+i2=K", "+f2=r", "+h2=C", "i2xh2"]);
    assert_eq!(
        format_position(&p.viewer()),
        "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1"
    );
    let list = texts(&p);
    assert_eq!(list.len(), 31);
    let expected: Vec<String> = "+a1 +b1 +c1 +d1 +f1 +g1 +h1 +i1 +a2 +b2 +c2 +d2 f2-e2 f2xg2 f2-f3 \
                                 +a4 +b4 +c4 +d4 +f4 +g4 +h4 +i4 +a5 +b5 +c5 +d5 +f5 +g5 +h5 +i5"
        .split(' ')
        .map(str::to_owned)
        .collect();
    assert_eq!(list, expected);
    // The viewer form lists the same.
    assert_eq!(texts(&p.viewer()), expected);
}

#[test]
fn claims_c1_and_c2_on_the_first_turns() {
    let mut p = AnqiPosition::sample();
    let o = p.play(mv("+g2")).unwrap();
    assert_eq!(p.team_of_seat(0), Team::new(2));
    assert_eq!(o.happenings.len(), 1);
    // Seat 2 can only flip: no face-up piece of its own (it has none).
    assert!(texts(&p).iter().all(|t| t.starts_with('+')));
    let o = p.play(mv("+i2")).unwrap();
    assert_eq!(o.happenings.len(), 2, "claim then C2: {:?}", o.happenings);
    assert_eq!(p.team_of_seat(1), Team::new(1));
    assert_eq!(p.team_of_seat(2), Team::new(3));
    // Seat 3 (team 3) has no face-up piece yet: flips only, and may flip anything.
    assert_eq!(p.seat_to_move(), Some(2));
    assert!(texts(&p).iter().all(|t| t.starts_with('+')));
}

#[test]
fn a_flip_of_a_claimed_team_decides_nothing() {
    // R-4: seat 2 (teamless) reveals a team-2 piece, already claimed by seat 1.
    let mut p = AnqiPosition::sample();
    p.play(mv("+g2")).unwrap(); // A: seat 1 claims team 2
    let o = p.play(mv("+h2")).unwrap(); // C: team 2, claimed
    assert!(o.happenings.is_empty());
    assert_eq!(p.team_of_seat(1), None);
    assert_eq!(p.seat_to_move(), Some(2));
    // Seat 3 flips k (team 1): claims; C2 gives seat 2 team 3.
    let o = p.play(mv("+g5")).unwrap();
    assert_eq!(o.revealed, Piece::from_char('k'));
    assert_eq!(p.team_of_seat(2), Team::new(1));
    assert_eq!(p.team_of_seat(1), Team::new(3));
    // Seat 1 may now capture... nothing adjacent; seat 1's 仕/炮 on g2/h2 can move.
    assert!(texts(&p).contains(&"g2-f3".to_owned()));
}

#[test]
fn parsing_actions() {
    assert_eq!(mv("+b2"), Move::Flip(Point::parse("b2").unwrap()));
    assert!(matches!(mv("b2-b4"), Move::Move { .. }));
    assert!(matches!(mv("b2xb4"), Move::Capture { .. }));
    for bad in ["+b2=R", "b2b4", "j1-a1", "pass", "+e6", ""] {
        assert!(parse_move(bad).is_err(), "{bad}");
    }
    assert!(parse_move("+b2=R").unwrap_err().to_string().contains("may not name"));
}

#[test]
fn refusals_in_the_games_terms() {
    let mut p = AnqiPosition::sample();
    let why = |p: &AnqiPosition, a: &str| p.check(mv(a)).unwrap_err().reason;
    assert_eq!(
        why(&p, "a1-a3"),
        Refusal::FaceDownCannotMove(Point::parse("a1").unwrap())
    );
    assert_eq!(why(&p, "e3-e4"), Refusal::NoPiece(Point::parse("e3").unwrap()));
    assert_eq!(why(&p, "+e3"), Refusal::NothingToFlip(Point::parse("e3").unwrap()));
    p.play(mv("+g2")).unwrap();
    assert!(matches!(why(&p, "+g2"), Refusal::AlreadyFaceUp(..)));
    assert_eq!(why(&p, "g2-f3"), Refusal::TeamlessCanOnlyFlip);
    for a in ["+i2", "+f2", "+h2", "i2xh2"] {
        p.play(mv(a)).unwrap();
    }
    // Seat 3 to move (team 3), r on f2.
    assert!(matches!(why(&p, "h2-h3"), Refusal::NotYourTeam { .. }));
    assert_eq!(why(&p, "f2xf1"), Refusal::CaptureFaceDown(Point::parse("f1").unwrap()));
    assert_eq!(why(&p, "f2xe2"), Refusal::NothingToCapture(Point::parse("e2").unwrap()));
    assert!(matches!(why(&p, "f2-g3"), Refusal::NotThisPiecesMove(_)));
    let e = p.check(mv("f2xf1")).unwrap_err().to_string();
    assert_eq!(
        e,
        "illegal action f2xf1: the piece on f1 is face down: only face-up pieces can be captured"
    );
    // from-to onto a capturable piece is the capture (§11.2).
    assert_eq!(p.check(mv("f2-g2")).unwrap(), mv("f2xg2"));
    // A viewer cannot flip without the identity.
    let mut v = p.viewer();
    assert!(matches!(
        v.play(mv("+a1")).unwrap_err().reason,
        Refusal::IdentityUnknown(_)
    ));
    assert!(matches!(
        v.play_flip(Point::parse("a1").unwrap(), Piece::from_char('K').unwrap())
            .unwrap_err()
            .reason,
        Refusal::NotInPool(..)
    ));
    v.play_flip(Point::parse("a1").unwrap(), Piece::from_char('N').unwrap())
        .unwrap();
}

#[test]
fn cannons_need_exactly_one_screen() {
    let p = pos("P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1");
    let list = texts(&p);
    assert_eq!(
        list,
        [
            "a1xf1", "a1-a2", "a1-a3", "a1-a4", "e3-e1", "e3-e2", "e3xc3", "e3-d3", "e3-f3", "e3-g3", "e3-h3", "e3-i3",
            "e3-e4", "e3xe5"
        ]
    );
    // a5 is the first piece up the file: no screen before it.
    assert_eq!(p.check(mv("a1xa5")).unwrap_err().reason, Refusal::CannonScreen(0));
    assert_eq!(
        p.check(mv("a1xa5")).unwrap_err().to_string(),
        "illegal action a1xa5: a cannon needs exactly one screen to capture, and there is none"
    );
    // i1 is beyond two pieces (b1, f1).
    assert_eq!(p.check(mv("a1xi1")).unwrap_err().reason, Refusal::CannonScreen(2));
    // The chariot stops at the first piece.
    assert_eq!(
        p.check(mv("e3-a3")).unwrap_err().reason,
        Refusal::PathBlocked(Point::parse("c3").unwrap())
    );
}

#[test]
fn validity_errors_name_the_first_failing_condition() {
    let rule = |text: &str| match parse_position(text) {
        Err(ParseError::Invalid { rule, .. }) => rule.to_owned(),
        Err(e) => format!("other: {e}"),
        Ok(_) => "valid".to_owned(),
    };
    let t = |placement: &str, rest: &str| format!("{placement} {rest}");
    assert_eq!(rule(SAMPLE_FULL), "valid");
    assert_eq!(rule(INITIAL_VIEWER), "valid");
    assert_eq!(
        rule(&t(
            "????1????/????1????/8/????1????/????1????",
            "1 --- 123 -/-/- 1 split1"
        )),
        "V1"
    );
    assert_eq!(
        rule(&t(
            "????1????/????1????/9/????1????/????1??x?",
            "1 --- 123 -/-/- 1 split1"
        )),
        "V1"
    );
    assert_eq!(
        rule(&t(
            "????1????/????1????/?8/????1???1/????1????",
            "1 --- 123 -/-/- 1 split1"
        )),
        "V2"
    );
    assert_eq!(
        rule("*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1*r*A*C*K/*N*R*P*c1*p*A*R? 1 --- 123 -/-/- 1 split1"),
        "V3"
    );
    assert_eq!(
        rule("*e*p*E*e1*p*k*C*N/*c*P*P*r1*a*P*a*n/9/*p*p*P*E1*r*A*C*K/*N*R*P*c1*p*A*R*R 1 --- 123 -/-/- 1 split1"),
        "V4"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1rAK1/????1???? 3 211 123 -/C/- 6 split1"),
        "V5"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1rAK1/????1???? 3 2-- 123 -/C/- 6 split1"),
        "V6"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1rAK1/????1???1 3 213 123 -/C/r 6 split1"),
        "V6"
    );
    // C2 unresolved: one unclaimed team, one teamless live seat.
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1 21- 123 -/-/- 1 split1"),
        "V5"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 2 --- 123 -/-/- 1 split1"),
        "valid"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 2 --- 13 -/-/- 1 split1"),
        "V8"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? - --- 123 -/-/- 1 split1"),
        "V8"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1 --- 1 -/-/- 1 split1"),
        "V8"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1:1 --- 123 -/-/- 1 split1"),
        "V9"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1+double"),
        "V9"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1:2 --- 123 -/-/- 1 split1+double"),
        "V9"
    );
    assert_eq!(
        rule("????1????/????1????/9/????1????/????1???? 1:1 --- 123 -/-/- 1 split1+double"),
        "valid"
    );
    assert!(matches!(parse_position("x y"), Err(ParseError::Fields(2))));
    assert!(rule("????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1+fanchi").starts_with("other"));
    assert_eq!(
        rule("P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1"),
        "valid"
    );
    // V7: seat 3 holds team 3 but no piece of it is left.
    assert_eq!(
        rule("P8/9/4R4/9/Ck6K 1 213 123 PPPPaaeecppppp/AAEERNNCrrnnc/- 40 split1"),
        "V7"
    );
}

#[test]
fn text_round_trips_exactly() {
    for text in [
        SAMPLE_FULL,
        INITIAL_VIEWER,
        "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1",
        "P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1",
        "????1????/????1????/9/????1????/????1???? 1:1 --- 123 -/-/- 1 split2+enhanced+double+fanchi+xqlegs",
    ] {
        assert_eq!(format_position(&pos(text)), text);
    }
    // Captured lists in any order are accepted; output is canonical.
    let p = pos("P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 ppppPPPPeaep/rncAAEERNNC/- 40 split1");
    assert_eq!(
        format_position(&p),
        "P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1"
    );
}

// --- §10.1: the viewer form decides everything but flips ---------------------------

fn layout_from(seed: u64) -> deal::Layout {
    let mut s = seed | 1;
    deal::shuffle(|i| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % (i as u64 + 1)) as u32
    })
}

const OPTION_SETS: [Options; 6] = [
    Options {
        split2: false,
        enhanced: false,
        double: false,
        fanchi: false,
        xqlegs: false,
    },
    Options {
        split2: true,
        enhanced: false,
        double: false,
        fanchi: false,
        xqlegs: false,
    },
    Options {
        split2: false,
        enhanced: true,
        double: false,
        fanchi: false,
        xqlegs: false,
    },
    Options {
        split2: false,
        enhanced: false,
        double: true,
        fanchi: false,
        xqlegs: false,
    },
    Options {
        split2: true,
        enhanced: true,
        double: true,
        fanchi: true,
        xqlegs: false,
    },
    Options {
        split2: false,
        enhanced: false,
        double: true,
        fanchi: false,
        xqlegs: true,
    },
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn viewer_and_full_agree(seed in any::<u64>(), picks in proptest::collection::vec(any::<u32>(), 200), opt in 0usize..6, assigned in any::<bool>()) {
        let layout = layout_from(seed);
        let options = OPTION_SETS[opt];
        let mut full = if assigned {
            AnqiPosition::from_layout_assigned(&layout, options, [Team::new(3).unwrap(), Team::new(1).unwrap(), Team::new(2).unwrap()]).unwrap()
        } else {
            AnqiPosition::from_layout(&layout, options)
        };
        let mut viewer = full.viewer();
        for pick in picks {
            prop_assert_eq!(&viewer, &full.viewer());
            let text = format_position(&full);
            prop_assert_eq!(format_position(&pos(&text)), text.clone());
            prop_assert_eq!(pos(&text), full.clone());
            let vtext = format_position(&viewer);
            prop_assert_eq!(pos(&vtext), viewer.clone());
            let moves = full.legal_moves();
            prop_assert_eq!(viewer.legal_moves(), moves.clone());
            prop_assert_eq!(full.count_legal(), moves.len());
            if moves.is_empty() {
                prop_assert!(full.is_over());
                break;
            }
            let m = moves[pick as usize % moves.len()];
            prop_assert!(full.is_legal(m));
            let out = full.play(m).unwrap();
            let vout = match m {
                Move::Flip(p) => viewer.play_flip(p, out.revealed.unwrap()).unwrap(),
                _ => viewer.play(m).unwrap(),
            };
            prop_assert_eq!(&vout, &out);
        }
    }
}

// --- The game record --------------------------------------------------------------

fn input(seat: usize, command: Command) -> Input {
    Input { seat, command, at: 0 }
}

fn play(g: &mut AnqiGame, a: &str) -> Vec<String> {
    let seat = g.position().seat_to_move().expect("someone to move");
    g.apply(input(seat, Command::Play(mv(a))))
        .unwrap_or_else(|e| panic!("{a}: {e}"))
        .iter()
        .map(RecordEvent::to_string)
        .collect()
}

#[test]
fn the_record_of_the_example_line() {
    let mut g = AnqiGame::new(AnqiPosition::sample(), Settings::default());
    g.set_deal(deal::layout_text(&layout_of_sample()).as_str(), SALT);
    assert_eq!(play(&mut g, "+g2"), ["+g2=A", "claim 1 2"]);
    assert_eq!(play(&mut g, "+i2"), ["+i2=K", "claim 2 1", "assign 3 3"]);
    play(&mut g, "+f2");
    play(&mut g, "+h2");
    assert_eq!(play(&mut g, "i2-h2"), ["i2xh2"]);
    assert_eq!(
        format_position(&g.viewer()),
        "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1"
    );
    // Not your turn.
    let e = g.apply(input(0, Command::Play(mv("+a1")))).unwrap_err();
    assert_eq!(e.to_string(), "illegal action +a1: not your turn: seat 3 is to move");
    // Resignations: seat 1 out of turn, then seat 3 on its turn: seat 2 is last.
    let ev: Vec<String> = g
        .apply(input(0, Command::Resign))
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(ev, ["out 1 resigned"]);
    let ev: Vec<String> = g
        .apply(input(2, Command::Resign))
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(ev[0], "out 3 resigned");
    assert_eq!(ev[1], "end last-seat 3,1,2");
    assert_eq!(ev[2], format!("layout {}", engine::anqi::SAMPLE_LAYOUT));
    assert_eq!(ev[3], format!("salt {SALT}"));
    assert!(g.is_over());
    assert_eq!(g.apply(input(1, Command::Resign)), Err(GameError::Over));
    // The published record verifies.
    let commitment = deal::commitment_hex(GAME_ID, engine::anqi::SAMPLE_LAYOUT, SALT);
    assert_eq!(
        commitment,
        "a35cfd40c26e404c87d1541cccdc183ecea1fc70128f2861a9ce725f5d27370c"
    );
    let record = g.record_lines();
    let cfg = GameConfig::default();
    deal::verify(GAME_ID, &commitment, engine::anqi::SAMPLE_LAYOUT, SALT, &record, &cfg).unwrap();
    // A changed flip outcome does not.
    let mut bad = record.clone();
    bad[0] = "+g2=C".into();
    assert!(matches!(
        deal::verify(GAME_ID, &commitment, engine::anqi::SAMPLE_LAYOUT, SALT, &bad, &cfg),
        Err(VerifyError::Mismatch { line: 1, .. })
    ));
    let mut salt = SALT.to_owned();
    salt.replace_range(0..2, "ff");
    assert_eq!(
        deal::verify(GAME_ID, &commitment, engine::anqi::SAMPLE_LAYOUT, &salt, &record, &cfg).unwrap_err(),
        VerifyError::Commitment
    );
}

fn layout_of_sample() -> deal::Layout {
    deal::parse_layout(engine::anqi::SAMPLE_LAYOUT).unwrap()
}

#[test]
fn abandoning_before_the_first_action_aborts() {
    let mut g = AnqiGame::new(AnqiPosition::sample(), Settings::default());
    play(&mut g, "+g2");
    let ev: Vec<String> = g
        .apply(input(2, Command::Abandon))
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(ev, ["out 3 abandoned", "end aborted -"]);
    assert_eq!(g.result().unwrap().placing, None);
    // After its first action, abandoning is resigning.
    let mut g = AnqiGame::new(AnqiPosition::sample(), Settings::default());
    play(&mut g, "+g2");
    let ev: Vec<String> = g
        .apply(input(0, Command::Abandon))
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(ev, ["out 1 abandoned"]);
    assert!(!g.is_over());
}

#[test]
fn proposals_need_every_live_seat() {
    let mut g = AnqiGame::new(AnqiPosition::sample(), Settings::default());
    for a in ["+g2", "+i2", "+f2", "+h2", "i2xh2"] {
        play(&mut g, a);
    }
    g.apply(input(0, Command::Propose)).unwrap();
    assert_eq!(g.apply(input(1, Command::Propose)), Err(GameError::ProposalPending));
    g.apply(input(1, Command::Answer { accept: true })).unwrap();
    assert_eq!(
        g.apply(input(1, Command::Answer { accept: true })),
        Err(GameError::AlreadyAnswered(1))
    );
    // The next action lapses it.
    play(&mut g, "+a1");
    assert_eq!(
        g.apply(input(2, Command::Answer { accept: true })),
        Err(GameError::NoProposal)
    );
    g.apply(input(0, Command::Propose)).unwrap();
    g.apply(input(2, Command::Answer { accept: false })).unwrap();
    g.apply(input(0, Command::Propose)).unwrap();
    g.apply(input(1, Command::Answer { accept: true })).unwrap();
    let ev: Vec<String> = g
        .apply(input(2, Command::Answer { accept: true }))
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    // Net scores: seat 1 (team 2) 300 − 35 = 265, seat 2 (team 1) 300 + 35 = 335, seat 3 (team 3) 300.
    assert_eq!(ev, ["accept 3", "end agreement 3,1,2"]);
    assert_eq!(g.result().unwrap().scores, [265, 335, 300]);
    assert_eq!(g.result().unwrap().reason, EndReason::Agreement);
    let mut g = AnqiGame::new(AnqiPosition::sample(), Settings::default());
    for _ in 0..3 {
        g.apply(input(0, Command::Propose)).unwrap();
        g.apply(input(1, Command::Answer { accept: false })).unwrap();
    }
    assert_eq!(g.apply(input(0, Command::Propose)), Err(GameError::ProposalsUsed(0)));
}

#[test]
fn race_and_shoujun_and_scoring() {
    // Seat 1 (team 2) to move with cannon and chariot; a1xf1 takes r (50).
    let text = "P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1";
    let race = Settings {
        mode: Mode::Race { target: 200 },
        ..Settings::default()
    };
    let mut g = AnqiGame::new(pos(text), race);
    // Seat 1 has 4·20 + 15 + 15 + 15 + 5·20 = 225 captured already... the race counts after an action.
    assert_eq!(g.score(0), 225);
    let ev = play(&mut g, "a1xf1");
    assert_eq!(ev, ["a1xf1", "end race 1,2,3"]);
    // 收军: seat 1 (team 2, size 10) has 12 captured: the next action recovers.
    let mut g = AnqiGame::new(
        pos(text),
        Settings {
            mode: Mode::Shoujun,
            ..Settings::default()
        },
    );
    let ev = play(&mut g, "e3-e4");
    assert_eq!(ev, ["e3-e4", "shoujun 1 a1=C e4=R"]);
    assert!(!g.is_over());
    assert_eq!(
        format_position(g.position()),
        "P3a3c/9/2n6/9/1k3r2K 2 213 23 PPPPaeeppppp/AAEERNNCrnc/-/RC 41 split1"
    );
    // Remaining points scoring counts pieces on the board.
    let g = AnqiGame::new(
        pos(text),
        Settings {
            scoring: DeadlockScoring::RemainingCount,
            ..Settings::default()
        },
    );
    assert_eq!([g.score(0), g.score(1), g.score(2)], [2, 3, 4]);
}

#[test]
fn the_no_progress_rule_counts_turns() {
    let text = "P3a3c/9/2n1R4/9/Ck3r2K 1 213 123 PPPPaeeppppp/AAEERNNCrnc/- 40 split1";
    let mut g = AnqiGame::new(
        pos(text),
        Settings {
            no_progress_rounds: 10,
            ..Settings::default()
        },
    );
    // Shuffle moves only: 30 turns (10 rounds × 3 live seats).
    let mut n = 0;
    while !g.is_over() {
        let p = g.position();
        let m = p
            .legal_moves()
            .into_iter()
            .find(|m| matches!(m, Move::Move { .. }))
            .expect("a quiet move");
        let seat = p.seat_to_move().unwrap();
        g.apply(input(seat, Command::Play(m))).unwrap();
        n += 1;
        assert!(n <= 30);
    }
    assert_eq!(n, 30);
    assert_eq!(g.result().unwrap().reason, EndReason::NoProgress);
}

#[test]
fn random_games_verify_and_replay() {
    let settings = [
        Settings::default(),
        Settings {
            mode: Mode::Shoujun,
            ..Settings::default()
        },
        Settings {
            mode: Mode::Race { target: 200 },
            scoring: DeadlockScoring::RemainingPoints,
            no_progress_rounds: 10,
        },
        Settings {
            scoring: DeadlockScoring::RemainingCount,
            no_progress_rounds: 10,
            ..Settings::default()
        },
    ];
    let mut ends = std::collections::BTreeMap::new();
    for seed in 1..=80u64 {
        let layout = layout_from(seed * 7919);
        let options = OPTION_SETS[(seed % 6) as usize];
        let teams = (seed % 5 == 0).then(|| [3, 2, 1].map(|t| Team::new(t).unwrap()));
        let initial = match teams {
            Some(t) => AnqiPosition::from_layout_assigned(&layout, options, t).unwrap(),
            None => AnqiPosition::from_layout(&layout, options),
        };
        let config = GameConfig {
            options,
            teams,
            settings: settings[(seed % 4) as usize],
        };
        let mut g = AnqiGame::new(initial, config.settings);
        let layout_text = deal::layout_text(&layout);
        g.set_deal(&layout_text, SALT);
        let mut s = seed;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut steps = 0;
        while !g.is_over() && steps < 20000 {
            steps += 1;
            let r = rnd();
            let to_move = g.position().seat_to_move().unwrap();
            let command = if r % 400 == 0 {
                Command::Resign
            } else if r % 450 == 1 {
                Command::Propose
            } else if r % 97 == 2 && g.pending_proposal().is_some() {
                Command::Answer { accept: r % 2 == 0 }
            } else {
                let moves = g.position().legal_moves();
                // Prefer captures, so that games end.
                let caps: Vec<Move> = moves
                    .iter()
                    .copied()
                    .filter(|m| matches!(m, Move::Capture { .. }))
                    .collect();
                Command::Play(if !caps.is_empty() && r % 3 != 0 {
                    caps[(r >> 8) as usize % caps.len()]
                } else {
                    moves[(r >> 8) as usize % moves.len()]
                })
            };
            let seat = match command {
                Command::Answer { .. } => (0..3)
                    .find(|&x| g.position().is_live(x) && !g.pending_proposal().unwrap().1[x])
                    .unwrap_or(to_move),
                Command::Propose => (r as usize >> 3) % 3,
                _ => to_move,
            };
            let _ = g.apply(Input {
                seat,
                command,
                at: steps,
            });
        }
        assert!(g.is_over(), "seed {seed}: not over after {steps} inputs");
        let result = g.result().unwrap().clone();
        *ends.entry(result.reason.as_str()).or_insert(0) += 1;
        let record = g.record_lines();
        assert!(record.last().unwrap().starts_with("salt "));
        let commitment = deal::commitment_hex(GAME_ID, &layout_text, SALT);
        let replayed = deal::verify(GAME_ID, &commitment, &layout_text, SALT, &record, &config)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", record.join("\n")));
        assert_eq!(replayed.result().unwrap().reason, result.reason);
        assert_eq!(replayed.result().unwrap().placing, result.placing);
        assert_eq!(replayed.position(), g.position());
        if teams.is_some() {
            assert_eq!(record[..3], ["assign 1 3", "assign 2 2", "assign 3 1"]);
        }
        // A viewer follows the record to the same public position.
        let mut follower = g.initial_position().viewer();
        engine::anqi::follow_record(&mut follower, &record)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", record.join("\n")));
        assert_eq!(follower, g.viewer(), "seed {seed}");
        // Replaying the inputs rebuilds the same game.
        let again = AnqiGame::replay(g.initial_position().clone(), config.settings, g.inputs()).unwrap();
        assert_eq!(again.record_lines()[..], record[..record.len() - 2]);
        // Every flip of the record revealed the layout's identity.
        for line in &record {
            if let Some(rest) = line.strip_prefix('+') {
                let (p, id) = rest.split_once('=').unwrap();
                let k = Point::parse(p).unwrap().start_index().unwrap();
                assert_eq!(layout[k].char().to_string(), id);
            }
        }
    }
    assert!(ends.len() >= 3, "{ends:?}");
    assert!(ends.contains_key("shoujun") && ends.contains_key("race"), "{ends:?}");
}

#[test]
fn c3_gives_the_most_valuable_unclaimed_team_then_c2() {
    // Seat 1 (team 2) flips the last face-down piece; seat 2 is teamless with nothing left
    // to claim: team 3 (r 50 + n 35) is worth more than team 1 (K 50 + p 20).
    let mut p = pos("rn6K/9/AAEERNNCC/9/*p3R4 1 2-- 123 PPPPPkaaeernccpppp/-/- 50 split1");
    let out = p.play(mv("+a1")).unwrap();
    assert_eq!(
        out.happenings.to_vec(),
        [
            engine::anqi::Happening::Assign {
                seat: 1,
                team: Team::new(3).unwrap()
            },
            engine::anqi::Happening::Assign {
                seat: 2,
                team: Team::new(1).unwrap()
            },
        ]
    );
    assert_eq!(
        format_position(&p),
        "rn6K/9/AAEERNNCC/9/p3R4 2 231 123 PPPPPkaaeernccpppp/-/- 51 split1"
    );
    let mut g = AnqiGame::new(
        pos("rn6K/9/AAEERNNCC/9/*p3R4 1 2-- 123 PPPPPkaaeernccpppp/-/- 50 split1"),
        Settings::default(),
    );
    assert_eq!(play(&mut g, "+a1"), ["+a1=p", "assign 2 3", "assign 3 1"]);
}

#[test]
fn double_turns_and_fanchi() {
    let text = "8r/3*k5/3R5/9/9 1:2 213 123 KPPPPPaaeernnccppppp/AAEERNNCC/- 10 split1+double";
    let mut p = pos(text);
    p.play(mv("+d4")).unwrap();
    assert_eq!(
        format_position(&p),
        "8r/3k5/3R5/9/9 1:1:d4 213 123 KPPPPPaaeernnccppppp/AAEERNNCC/- 10 split1+double"
    );
    assert_eq!(
        p.check(mv("d3xd4")).unwrap_err().reason,
        Refusal::RevealedThisTurn(Point::parse("d4").unwrap())
    );
    assert!(texts(&p).iter().all(|t| !t.contains('x')));
    p.play(mv("d3-d2")).unwrap();
    assert_eq!(
        format_position(&p),
        "8r/3k5/9/3R5/9 2:2 213 123 KPPPPPaaeernnccppppp/AAEERNNCC/- 11 split1+double"
    );
    // With fanchi the revealed piece may be taken at once: seat 2 is annihilated.
    let mut p = pos(&text.replace("+double", "+double+fanchi"));
    p.play(mv("+d4")).unwrap();
    assert_eq!(p.seat_to_move(), Some(0));
    assert_eq!(p.actions_left(), 1);
    let out = p.play(mv("d3xd4")).unwrap();
    assert_eq!(
        out.happenings.to_vec(),
        [engine::anqi::Happening::Annihilated { seat: 1 }]
    );
    assert_eq!(
        format_position(&p),
        "8r/3R5/9/9/9 3:2 213 13 KPPPPPkaaeernnccppppp/AAEERNNCC/- 11 split1+double+fanchi"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Mutated texts never panic the parser; whatever parses re-reads to the same position.
    #[test]
    fn mutated_texts_never_panic(base in 0usize..4, at in any::<usize>(), with in proptest::sample::select(
        "?*KAERNCPkaerncp0123456789/:- -+xsplit".chars().collect::<Vec<char>>()), remove in any::<bool>()) {
        let texts = [
            SAMPLE_FULL,
            INITIAL_VIEWER,
            "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1",
            "8r/3*k5/3R5/9/9 1:2 213 123 KPPPPPaaeernnccppppp/AAEERNNCC/- 10 split1+double",
        ];
        let mut chars: Vec<char> = texts[base].chars().collect();
        let i = at % chars.len();
        if remove { chars.remove(i); } else { chars[i] = with; }
        let text: String = chars.into_iter().collect();
        if let Ok(p) = parse_position(&text) {
            let again = format_position(&p);
            prop_assert_eq!(pos(&again), p);
        }
    }
}
