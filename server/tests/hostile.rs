//! Hostile input, as property tests: the decoding of client frames and the
//! room's handling of every client command, in every state of a game.
//!
//! Properties: nothing panics; a refused frame or command gets a code and
//! words and changes nothing (the whole snapshot and the version are the
//! same after it); an accepted one hands out gap-free versions.
//! `PROPTEST_CASES` scales the runs (the counts below are the defaults).

use proptest::prelude::*;
use protocol::{Channel, Direction, ErrorCode, GameSettings, Phase, Side, TimeControl};
use server::room::core::{Act, Room};
use server::store::Player;
use server::ws::decode;

/// Frames that look like protocol messages, broken in the ways clients break them.
fn hostile_frame() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just("4294967296".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("1e400".to_owned()),
        Just("-0.0".to_owned()),
        Just("99999999999999999999999999999999999999".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| f.to_string()),
    ];
    let value = prop_oneof![
        number.clone(),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
        "[a-zA-Z0-9 \\-]{0,12}".prop_map(|s| format!("{s:?}")),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        (1usize..3000).prop_map(|d| format!("{}{}", "[".repeat(d), "]".repeat(d))),
        (1usize..3000).prop_map(|d| "{\"a\":".repeat(d) + "1" + &"}".repeat(d)),
    ];
    let ty = prop_oneof![
        Just("hello"),
        Just("move"),
        Just("resign"),
        Just("offer_draw"),
        Just("answer_draw"),
        Just("chat"),
        Just("ping"),
        Just("pong"),
        Just("fly"),
        Just("MOVE"),
    ];
    let field = prop_oneof![
        Just("protocol"),
        Just("token"),
        Just("v"),
        Just("ply"),
        Just("mv"),
        Just("accept"),
        Just("channel"),
        Just("text"),
        Just("n"),
        Just("type"),
        Just("extra"),
    ];
    let object = (ty, prop::collection::vec((field, value.clone()), 0..5)).prop_map(|(ty, fields)| {
        let mut s = format!("{{\"type\":\"{ty}\"");
        for (f, v) in fields {
            s += &format!(",\"{f}\":{v}");
        }
        s + "}"
    });
    prop_oneof![
        3 => object,
        1 => value,
        1 => any::<String>(),
        1 => prop::collection::vec(any::<u8>(), 0..200).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        1 => (0usize..20_000).prop_map(|n| format!("{{\"type\":\"chat\",\"channel\":\"players\",\"text\":\"{}\"}}", "x".repeat(n))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    /// Decoding: a message that decodes re-encodes to itself; anything else
    /// is `bad_message` or `frame_too_large` with words.
    #[test]
    fn decoding_never_panics_and_refuses_clearly(text in hostile_frame()) {
        match decode(&text) {
            Ok(m) => {
                let again = serde_json::to_string(&m).unwrap();
                prop_assert_eq!(decode(&again).unwrap(), m);
            }
            Err(e) => {
                prop_assert!(matches!(e.code, ErrorCode::BadMessage | ErrorCode::FrameTooLarge), "{:?}", e);
                prop_assert!(!e.message.is_empty());
                if text.len() > protocol::MAX_FRAME_BYTES {
                    prop_assert_eq!(e.code, ErrorCode::FrameTooLarge);
                }
            }
        }
    }
}

fn player(i: usize) -> Player {
    Player::guest(format!("p{i}"), format!("player {i}"))
}

/// A command as the room receives it from a connection.
#[derive(Clone, Debug)]
enum Command {
    Act(Side, Act),
    Chat(usize, Option<Side>, Channel, String),
    Join(usize, Option<Side>),
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::W), Just(Side::B), Just(Side::Y)]
}

fn move_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[WBY][0-9]{2}-[WBY][0-9]{2}",
        "[WBY][0-9]{1,4}-?[A-Z0-9]{0,5}",
        any::<String>(),
        Just(String::new()),
        (0usize..10_000).prop_map(|n| "W".repeat(n)),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    let ply = prop_oneof![0u32..8, any::<u32>(), Just(u32::MAX)];
    let act = prop_oneof![
        4 => (ply, move_text()).prop_map(|(ply, mv)| Act::Move { ply, mv }),
        1 => Just(Act::Resign),
        1 => Just(Act::OfferDraw),
        1 => any::<bool>().prop_map(Act::AnswerDraw),
    ];
    let channel = prop_oneof![Just(Channel::Players), Just(Channel::Spectators)];
    prop_oneof![
        4 => (side(), act).prop_map(|(s, a)| Command::Act(s, a)),
        1 => (0usize..5, prop::option::of(side()), channel, prop_oneof![any::<String>(), (0usize..2000).prop_map(|n| "字".repeat(n))])
            .prop_map(|(p, s, c, t)| Command::Chat(p, s, c, t)),
        1 => (0usize..5, prop::option::of(side())).prop_map(|(p, s)| Command::Join(p, s)),
    ]
}

/// A room in a state chosen by `stage`: open with 0–2 seats, live after
/// `plies` legal moves, or finished.
fn room_at(stage: u8, plies: u8, pick: u64) -> Room {
    let settings = GameSettings {
        variant: Default::default(),
        time_control: TimeControl::default(),
        direction: Direction::Ccw,
        public: true,
        players_chat: stage % 2 == 0,
        grace_ms: 10_000,
        rated: false,
        anqi: None,
    };
    let mut room = Room::new("g".into(), settings).unwrap();
    let seats = if stage < 3 { stage } else { 3 };
    for (i, s) in Side::ALL.into_iter().enumerate().take(seats as usize) {
        room.join(player(i), Some(s), 0, 0).unwrap();
    }
    if room.phase != Phase::Live {
        return room;
    }
    let mut now = 0;
    let mut k = pick;
    let target = if stage == 4 { u32::MAX } else { u32::from(plies) };
    while room.phase == Phase::Live && room.game().plies() < target {
        let moves = room.game().status(true).legal_moves;
        k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let m = moves[((k >> 33) % moves.len() as u64) as usize].to_owned();
        let s: Side = room.game().to_move().expect("a seat to move");
        now += 10;
        let ply = room.game().plies();
        room.act(s, Act::Move { ply, mv: m }, 0, now, 0).unwrap();
    }
    room
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Every command in every state: refusals have words and change
    /// nothing; acceptances hand out the next versions, gap-free.
    #[test]
    fn the_room_refuses_cleanly_and_changes_nothing_when_it_refuses(
        stage in 0u8..5,
        plies in 0u8..40,
        pick in any::<u64>(),
        commands in prop::collection::vec(command(), 1..24),
    ) {
        let mut room = room_at(stage, plies, pick);
        let mut now = 1_000_000;
        for c in commands {
            now += 7;
            let before = room.snapshot(now);
            let v = room.v();
            let outcome = match &c {
                Command::Act(s, a) => room.act(*s, a.clone(), 0, now, 0),
                Command::Chat(p, s, ch, t) => room.chat(&player(*p), *s, *ch, t, now, 0),
                Command::Join(p, s) => room.join(player(*p), *s, now, 0).map(|(_, step)| step),
            };
            match outcome {
                Ok(step) => {
                    let vs: Vec<u64> = step.events.iter().map(|l| l.v).collect();
                    let expect: Vec<u64> = (v + 1..=room.v()).collect();
                    prop_assert_eq!(vs, expect, "{:?}", c);
                }
                Err(e) => {
                    prop_assert!(!e.message.is_empty());
                    prop_assert!(e.code != ErrorCode::Internal, "{:?} → {:?}", c, e);
                    prop_assert_eq!(room.v(), v);
                    prop_assert_eq!(&room.snapshot(now), &before, "{:?} → {:?}", c, e);
                }
            }
        }
    }
}
