//! The room's decisions with time passed in: no runtime, no store.

use protocol::{Byoyomi, Direction, Ending, GameSettings, TimeControl};

use super::*;

fn player(i: usize) -> Player {
    Player::guest(format!("p{i}"), format!("player {i}"))
}

fn settings(tc: TimeControl) -> GameSettings {
    GameSettings {
        variant: Default::default(),
        time_control: tc,
        direction: Direction::Ccw,
        public: true,
        players_chat: true,
        grace_ms: 10_000,
        rated: false,
        anqi: None,
    }
}

/// A room with its three seats taken at time 0 and every player connected.
fn live_room(tc: TimeControl) -> (Room, Vec<Op>) {
    let mut room = Room::new("g".into(), settings(tc)).unwrap();
    let mut ops = Vec::new();
    for (i, side) in Side::ALL.into_iter().enumerate() {
        let (s, step) = room.join(player(i), Some(side), 0, 0).unwrap();
        assert_eq!(s, side);
        ops.extend(step.ops);
        room.connected(Some(side));
    }
    assert_eq!(room.phase, Phase::Live);
    (room, ops)
}

fn legal(room: &Room) -> Vec<String> {
    room.game().status(true).legal_moves.to_vec()
}

fn first_legal(room: &Room) -> String {
    legal(room)[0].clone()
}

fn turn(room: &Room) -> Side {
    room.game().to_move().expect("a seat to move")
}

/// Two games the same in everything they show: the full status (position,
/// counters, offers), the moves, departures and result, the epoch.
fn assert_same_game(a: &dyn RoomGame, b: &dyn RoomGame) {
    assert_eq!(a.status(true), b.status(true));
    assert_eq!(a.moves(), b.moves());
    assert_eq!(a.departures(), b.departures());
    assert_eq!(a.result(), b.result());
    assert_eq!((a.epoch(), a.plies()), (b.epoch(), b.plies()));
    assert_eq!(a.pending_offer_waiting(), b.pending_offer_waiting());
}

fn play(room: &mut Room, now: u64, lag: u64) -> Step {
    let side = turn(room);
    let mv = first_legal(room);
    let ply = room.game().plies();
    room.act(side, Act::Move { ply, mv }, lag, now, 0).unwrap()
}

fn moved_spent(step: &Step) -> u64 {
    step.events
        .iter()
        .find_map(|l| match &l.event {
            GameEvent::Moved { spent_ms, .. } => Some(*spent_ms),
            _ => None,
        })
        .expect("a move")
}

fn eliminated(step: &Step) -> Vec<(Side, protocol::EliminationReason)> {
    step.events
        .iter()
        .filter_map(|l| match &l.event {
            GameEvent::Eliminated(d) => Some((d.side, d.reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn fischer_increment_and_a_flag_by_timer() {
    let (mut room, _) = live_room(TimeControl {
        base_ms: 1_000,
        increment_ms: 500,
        per_move_ms: None,
        byoyomi: None,
    });
    let step = play(&mut room, 300, 0);
    assert_eq!(moved_spent(&step), 300);
    assert_eq!(room.status(300).clocks[0].remaining_ms, 1_200);
    // B's clock runs from 300: it flags after 1300, the timer looks just after.
    assert_eq!(room.next_wakeup(), Some(1_301));
    assert!(room.tick(1_300, 0).is_empty());
    let step = room.tick(1_301, 0);
    assert_eq!(eliminated(&step), [(Side::B, protocol::EliminationReason::Time)]);
    let status = room.status(1_301);
    assert_eq!(status.turn, Side::Y);
    assert!(status.clocks[2].running);
    assert!(matches!(step.ops[0], Op::Event(ref e) if e.action == "timeout"));
    // A client that reconnects from a snapshot still learns why B's pieces are gone.
    let departures = room.snapshot(1_301).departures;
    assert_eq!(departures.len(), 1);
    assert_eq!(
        (departures[0].side, departures[0].reason),
        (Side::B, protocol::EliminationReason::Time)
    );
}

#[test]
fn lag_credit_is_bounded_by_the_quota() {
    let (mut room, _) = live_room(TimeControl::default());
    // 2 s of claimed lag: at most 500 ms credited.
    let step = play(&mut room, 3_000, 2_000);
    assert_eq!(moved_spent(&step), 2_500);
    assert_eq!(room.lag_quota[0], LAG_QUOTA_MAX - LAG_CREDIT_MAX + LAG_QUOTA_GAIN);
    // A small lag is credited in full.
    let step = play(&mut room, 4_000, 40);
    assert_eq!(moved_spent(&step), 960);
}

#[test]
fn byoyomi_periods_then_the_flag() {
    let (mut room, _) = live_room(TimeControl {
        base_ms: 100,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: Some(Byoyomi {
            periods: 2,
            period_ms: 1_000,
        }),
    });
    // W overruns one period: it is consumed.
    play(&mut room, 1_500, 0);
    let w = room.status(1_500).clocks[0];
    assert_eq!((w.remaining_ms, w.periods_left), (0, 1));
    play(&mut room, 1_600, 0);
    play(&mut room, 1_700, 0);
    // W's turn from 1700: one period of 1000 left.
    assert_eq!(room.next_wakeup(), Some(2_701));
    let step = room.tick(2_701, 0);
    assert_eq!(eliminated(&step), [(Side::W, protocol::EliminationReason::Time)]);
}

/// The clocks stored with the step's event rows of `action`.
fn stored_clocks(step: &Step, action: &str) -> Option<([u64; 3], [u32; 3])> {
    step.ops.iter().find_map(|o| match o {
        Op::Event(e) if e.action == action => e.clocks,
        _ => None,
    })
}

#[test]
fn a_side_that_leaves_on_its_turn_is_charged_for_it_everywhere() {
    let byo = TimeControl {
        base_ms: 1_000,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: Some(Byoyomi {
            periods: 2,
            period_ms: 1_000,
        }),
    };
    for tc in [TimeControl::default(), byo] {
        let (mut room, mut ops) = live_room(tc);
        ops.extend(play(&mut room, 500, 0).ops);
        // B flags: its clock shows 0 (not the time it had when its turn began),
        // in the status, the snapshot, the stored row and after a restore.
        let flag = room.next_wakeup().unwrap();
        let step = room.tick(flag, 0);
        assert_eq!(eliminated(&step), [(Side::B, protocol::EliminationReason::Time)]);
        let b = room.snapshot(flag).status.clocks[1];
        assert_eq!((b.remaining_ms, b.periods_left, b.running), (0, 0, false), "{tc:?}");
        let w = room.status(flag).clocks[0].remaining_ms;
        assert_eq!(stored_clocks(&step, "timeout").map(|c| (c.0[1], c.1[1])), Some((0, 0)));
        ops.extend(step.ops);
        // Y resigns on its turn after 300 ms, twice (the first is a warning).
        let mut step = room.act(Side::Y, Act::Resign, 0, flag + 100, 0).unwrap();
        step.ops
            .extend(room.act(Side::Y, Act::Resign, 0, flag + 300, 0).unwrap().ops);
        let y = room.status(flag + 1_000).clocks[2];
        assert_eq!(y.remaining_ms, tc.base_ms - 300, "{tc:?}: Y is charged its turn");
        assert_eq!(room.phase, Phase::Finished);
        let p = tc.byoyomi.map_or(0, |b| b.periods);
        assert_eq!(
            stored_clocks(&step, "resign"),
            Some(([w, 0, tc.base_ms - 300], [p, 0, p]))
        );
        ops.extend(step.ops);
        let (restored, _, _) = Room::restore(stored_from(&room, &ops, Phase::Finished, room.result())).unwrap();
        let clocks = restored.status(1_000_000).clocks;
        assert_eq!(clocks.map(|c| c.remaining_ms), [w, 0, tc.base_ms - 300]);
        assert!(clocks.iter().all(|c| !c.running));
    }
}

#[test]
fn a_move_after_the_flag_is_a_timeout() {
    let (mut room, _) = live_room(TimeControl {
        base_ms: 3_600_000,
        increment_ms: 0,
        per_move_ms: Some(500),
        byoyomi: None,
    });
    let step = play(&mut room, 501, 0);
    assert_eq!(eliminated(&step), [(Side::W, protocol::EliminationReason::Time)]);
    assert_eq!(room.game().plies(), 0);
}

#[test]
fn stale_duplicate_and_out_of_turn_moves_change_nothing() {
    let (mut room, _) = live_room(TimeControl::default());
    let first = first_legal(&room);
    play(&mut room, 10, 0);
    let v = room.v();
    let code = |r: Result<Step, ErrorBody>| r.map(|_| ()).unwrap_err().code;
    let dup = room.act(
        Side::W,
        Act::Move {
            ply: 0,
            mv: first.clone(),
        },
        0,
        20,
        0,
    );
    assert_eq!(code(dup), ErrorCode::DuplicateMove);
    let b_move = first_legal(&room);
    let stale = room.act(
        Side::B,
        Act::Move {
            ply: 0,
            mv: b_move.clone(),
        },
        0,
        20,
        0,
    );
    assert_eq!(code(stale), ErrorCode::StaleMove);
    let turn = room.act(
        Side::Y,
        Act::Move {
            ply: 1,
            mv: b_move.clone(),
        },
        0,
        20,
        0,
    );
    assert_eq!(code(turn), ErrorCode::NotYourTurn);
    let illegal = room.act(
        Side::B,
        Act::Move {
            ply: 1,
            mv: "B52-O".into(),
        },
        0,
        20,
        0,
    );
    assert_eq!(code(illegal), ErrorCode::IllegalMove);
    let bad = room.act(
        Side::B,
        Act::Move {
            ply: 1,
            mv: "🐎".into(),
        },
        0,
        20,
        0,
    );
    assert_eq!(code(bad), ErrorCode::BadMove);
    assert_eq!((room.v(), room.game().plies()), (v, 1));
}

#[test]
fn reconnecting_clients_get_missed_events_or_none() {
    let (mut room, _) = live_room(TimeControl::default());
    room.set_log_keep(4);
    let mut sent = Vec::new();
    for t in 1..=6 {
        sent.extend(play(&mut room, t * 10, 0).events);
    }
    let v = room.v();
    assert_eq!(room.missed_since(v).map(|m| m.len()), Some(0));
    assert_eq!(room.missed_since(v - 2).map(|m| m.len()), Some(2));
    // The full log's entries are written into those it drops: replayed,
    // they are the events as they were sent, legal moves and all.
    assert_eq!(room.missed_since(v - 4), Some(sent[sent.len() - 4..].to_vec()));
    assert!(room.missed_since(v - 5).is_none(), "too old: snapshot");
    assert!(room.missed_since(v + 1).is_none(), "unknown: snapshot");
}

#[test]
fn absence_past_the_grace_aborts_early() {
    let (mut room, _) = live_room(TimeControl::default());
    let step = room.disconnected(Some(Side::B), 1_000);
    assert!(matches!(
        step.events[0].event,
        GameEvent::Presence {
            side: Side::B,
            online: false,
            grace_ms: Some(10_000)
        }
    ));
    assert_eq!(room.next_wakeup(), Some(11_000));
    // Back in time: no abandonment.
    room.connected(Some(Side::B));
    assert!(room.tick(11_000, 0).is_empty());
    room.disconnected(Some(Side::B), 20_000);
    let step = room.tick(30_000, 0);
    let finished = step.events.iter().find_map(|l| match &l.event {
        GameEvent::Finished { result } => Some(result.ending),
        _ => None,
    });
    assert_eq!(finished, Some(Ending::Aborted { by: Side::B }));
    assert_eq!(room.phase, Phase::Finished);
}

#[test]
fn chat_is_rate_limited_and_channelled() {
    let (mut room, _) = live_room(TimeControl::default());
    for _ in 0..CHAT_BURST {
        room.chat(&player(0), Some(Side::W), Channel::Players, "hi", 0, 0)
            .unwrap();
    }
    let e = room
        .chat(&player(0), Some(Side::W), Channel::Players, "hi", 0, 0)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimited);
    assert!(
        room.chat(&player(0), Some(Side::W), Channel::Players, "hi", CHAT_REFILL_MS, 0)
            .is_ok()
    );
    let e = room
        .chat(&player(1), Some(Side::B), Channel::Spectators, "psst", 0, 0)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::BadChat);
    let e = room.chat(&player(7), None, Channel::Players, "psst", 0, 0).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotAPlayer);
    let step = room.chat(&player(7), None, Channel::Spectators, "nice", 0, 0).unwrap();
    assert_eq!(step.events[0].audience, Audience::Spectators);
    assert_eq!(
        step.events[0].view(Viewer::Seat(Side::W)),
        ServerMsg::Event {
            v: room.v(),
            event: None
        }
    );
}

#[test]
fn a_restored_room_continues_where_the_store_left_it() {
    let (mut room, mut ops) = live_room(TimeControl::default());
    for t in 1..=7 {
        ops.extend(play(&mut room, t * 1_000, 0).ops);
    }
    ops.extend(room.act(Side::B, Act::Resign, 0, 7_500, 0).unwrap().ops);
    let events: Vec<EventRow> = ops
        .iter()
        .filter_map(|o| match o {
            Op::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect();
    let seats = Side::ALL.map(|s| Some(player(s.index())));
    let stored = StoredGame {
        arbiter: Vec::new(),
        result: None,
        id: "g".into(),
        phase: Phase::Live,
        settings: room.settings.clone(),
        initial_position: room.initial_position(),
        secret: None,
        seats,
        events,
        v: room.v(),
        chat_lines: [0; 2],
    };
    let (restored, step, now) = Room::restore(stored).unwrap();
    assert_eq!(now, 7_500);
    assert_same_game(restored.game(), room.game());
    assert_eq!(restored.v(), room.v() + 1, "the restored event");
    assert!(matches!(step.events[0].event, GameEvent::Restored { .. }));
    // Clocks as stored after the last move; the side to move starts its turn afresh.
    let before = room.status(7_000).clocks;
    let after = restored.status(7_500).clocks;
    for i in 0..3 {
        assert_eq!(after[i].remaining_ms, before[i].remaining_ms, "side {i}");
    }
    // Everyone has a fresh grace period.
    assert_eq!(restored.next_wakeup(), Some(7_500 + 10_000));
}

/// Random commands — moves (legal, illegal, stale), requests, answers, chat,
/// presence and time — on many games: nothing panics, versions grow by one
/// per event, and a room restored from the writes equals the original.
#[test]
fn random_commands_keep_versions_and_restore_exactly() {
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _game in 0..40 {
        let tc = TimeControl {
            base_ms: 20_000 + next(40_000),
            increment_ms: next(3) * 1_000,
            per_move_ms: (next(2) == 0).then(|| 5_000 + next(10_000)),
            byoyomi: (next(2) == 0).then(|| Byoyomi {
                periods: 1 + next(3) as u32,
                period_ms: 1_000 + next(5_000),
            }),
        };
        let (mut room, mut ops) = live_room(tc);
        let mut now = 0;
        let mut v = room.v();
        for _ in 0..400 {
            if room.phase == Phase::Finished {
                break;
            }
            now += next(3_000);
            let side = Side::ALL[next(3) as usize];
            let result = match next(20) {
                0 => Ok(room.tick(now, 0)),
                1 => room.act(side, Act::Resign, next(300), now, 0),
                2 => room.act(side, Act::OfferDraw, next(300), now, 0),
                3 => room.act(side, Act::AnswerDraw(next(2) == 0), next(300), now, 0),
                4 => room.chat(&player(side.index()), Some(side), Channel::Players, "gg", now, 0),
                5 => Ok(room.disconnected(Some(side), now)),
                6 => Ok(room.connected(Some(side))),
                7 => room.act(
                    side,
                    Act::Move {
                        ply: next(5) as u32,
                        mv: "W52-W53".into(),
                    },
                    0,
                    now,
                    0,
                ),
                _ => {
                    let step = room.tick(now, 0);
                    for l in &step.events {
                        v += 1;
                        assert_eq!(l.v, v, "gap-free versions");
                    }
                    ops.extend(step.ops);
                    let moves = legal(&room);
                    if room.phase != Phase::Live || moves.is_empty() {
                        continue;
                    }
                    let turn = turn(&room);
                    let mv = moves[next(moves.len() as u64) as usize].clone();
                    let ply = room.game().plies();
                    room.act(turn, Act::Move { ply, mv }, next(200), now, 0)
                }
            };
            if let Ok(step) = result {
                for l in &step.events {
                    v += 1;
                    assert_eq!(l.v, v, "gap-free versions");
                }
                ops.extend(step.ops);
            }
            assert_eq!(room.v(), v);
        }
        let stored = stored_from(&room, &ops, room.phase, None);
        let (restored, step, at) = Room::restore(stored).unwrap();
        // The game in full: position, record and every §6 counter (the
        // restore replays the stored moves without testing them again).
        assert_same_game(restored.game(), room.game());
        assert_eq!(restored.result(), room.result());
        assert_eq!(restored.clocks.remaining(), room.clocks.remaining());
        assert_eq!(restored.clocks.periods_left(), room.clocks.periods_left());
        // What a player sees is what the live room showed, but for the clock
        // of the side to move (its turn starts afresh at the restore).
        let live = room.status(at);
        let back = restored.status(at);
        assert_eq!(
            Status {
                clocks: live.clocks,
                ..back.clone()
            },
            live
        );
        if room.phase == Phase::Live && !room.game().is_finished() {
            assert!(matches!(&step.events[0].event, GameEvent::Restored { status } if *status == back));
        } else {
            assert!(step.is_empty(), "a finished game is not announced");
        }
    }
}

#[test]
fn bots_sit_always_present_and_are_asked_to_move_and_to_answer() {
    let mut room = Room::new("g".into(), settings(TimeControl::default())).unwrap();
    let (side, step) = room
        .add_bot("bot-1".into(), bot::Level::Two, Some(Side::B), 0, 0)
        .unwrap();
    assert_eq!(side, Side::B);
    // The seat is written with the bot's player row; it shows as a bot, online.
    assert!(matches!(
        &step.ops[0],
        Op::Seat { side: Side::B, bot: Some((name, bot::Level::Two)), .. } if name == "Bot (level 2)"
    ));
    let seat = room.snapshot(0).seats[1].clone().unwrap();
    assert_eq!((seat.bot, seat.online), (Some(2), true));
    assert!(room.bot_job(0).is_none(), "nothing to do before the game starts");
    // Same rules as a person: a taken seat is refused.
    let taken = room
        .add_bot("bot-2".into(), bot::Level::One, Some(Side::B), 0, 0)
        .unwrap_err();
    assert_eq!(taken.code, ErrorCode::SeatTaken);
    room.join(player(0), Some(Side::W), 0, 0).unwrap();
    room.connected(Some(Side::W));
    let (side, _) = room.add_bot("bot-3".into(), bot::Level::One, None, 0, 0).unwrap();
    assert_eq!(side, Side::Y);
    assert_eq!(room.phase, Phase::Live);
    // No grace period runs for a bot: nothing to wake for but W's flag.
    assert_eq!(room.next_wakeup(), Some(600_000 + 1));
    assert!(room.bot_job(0).is_none(), "W, a person, is to move");
    play(&mut room, 1_000, 0);
    let job = room.bot_job(1_000).unwrap();
    assert_eq!(
        (job.side, job.level, job.task),
        (Side::B, bot::Level::Two, bots::Task::Move { ply: 1 })
    );
    assert_eq!(job.epoch, room.epoch());
    assert_eq!(
        job.think_ms,
        bots::think_ms(&TimeControl::default(), &room.clocks.view(1_000)[1])
    );
    // A bot's move is an ordinary action of its seat.
    let mv = first_legal(&room);
    room.act(Side::B, Act::Move { ply: 1, mv }, 0, 1_200, 0).unwrap();
    assert_eq!(room.bot_job(1_200).unwrap().side, Side::Y);
    // A pending offer waiting for a bot comes before any move.
    let mut live = live_room(TimeControl::default()).0;
    for t in 0..45 {
        play(&mut live, t * 10, 0);
    }
    live.seats[2] = Some(Player::new_bot("bot-y".into(), bot::Level::One));
    assert_eq!(live.bot_job(500), None, "W, a person, is to move");
    live.act(Side::W, Act::OfferDraw, 0, 500, 0).unwrap();
    let job = live.bot_job(500).unwrap();
    assert_eq!((job.side, job.task), (Side::Y, bots::Task::AnswerDraw));
    live.act(Side::Y, Act::AnswerDraw(false), 0, 600, 0).unwrap();
    assert_eq!(live.bot_job(600), None, "B, a person, has yet to answer; W is to move");
}

fn stored_from(room: &Room, ops: &[Op], phase: Phase, result: Option<GameResult>) -> StoredGame {
    StoredGame {
        arbiter: ops
            .iter()
            .filter_map(|o| match o {
                Op::Arbiter(a) => Some(a.clone()),
                _ => None,
            })
            .collect(),
        result,
        id: "g".into(),
        phase,
        settings: room.settings.clone(),
        initial_position: room.initial_position(),
        secret: None,
        seats: Side::ALL.map(|s| Some(player(s.index()))),
        events: ops
            .iter()
            .filter_map(|o| match o {
                Op::Event(e) => Some(e.clone()),
                _ => None,
            })
            .collect(),
        v: room.v(),
        chat_lines: chat_lines(ops),
    }
}

/// Chat lines per channel in writes, as the store counts its rows.
fn chat_lines(ops: &[Op]) -> [u32; 2] {
    let mut n = [0; 2];
    for o in ops {
        if let Op::Chat { channel, .. } = o {
            n[chat_slot(*channel)] += 1;
        }
    }
    n
}

/// A game stores at most its cap of chat lines per channel: one more is
/// refused with `chat_full` and changes nothing (no version, no rate token),
/// the other channel still takes lines, and a room restored from the store
/// counts the stored lines and refuses as before.
#[test]
fn chat_is_capped_per_channel_and_a_restored_room_still_refuses() {
    let (mut room, mut ops) = live_room(TimeControl::default());
    room.set_chat_cap(3);
    // Three writers, so the rate limit is not what refuses.
    for i in 0..3 {
        let step = room
            .chat(&player(10 + i), None, Channel::Spectators, "hi", 1_000, 0)
            .unwrap();
        ops.extend(step.ops);
    }
    let v = room.v();
    let e = room
        .chat(&player(20), None, Channel::Spectators, "one more", 2_000, 0)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ChatFull);
    assert_eq!(room.v(), v, "a refused line changes nothing");
    let step = room
        .chat(&player(0), Some(Side::W), Channel::Players, "gl", 2_000, 0)
        .unwrap();
    ops.extend(step.ops);

    let stored = stored_from(&room, &ops, Phase::Live, None);
    assert_eq!(stored.chat_lines, [1, 3]);
    let (mut back, _, now) = Room::restore(stored).unwrap();
    back.set_chat_cap(3);
    let e = back
        .chat(&player(21), None, Channel::Spectators, "after the restart", now, 0)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ChatFull);
    for (i, side) in [(1, Side::B), (2, Side::Y)] {
        back.chat(&player(i), Some(side), Channel::Players, "still here", now, 0)
            .unwrap();
    }
    let e = back
        .chat(&player(0), Some(Side::W), Channel::Players, "and me", now, 0)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ChatFull, "the players' channel is full at 3 as well");
}

/// A verdict on a paused game ends the pause: live, and after a restore (a
/// restored room stayed paused: found by the `room_commands` fuzz target).
#[test]
fn a_verdict_on_a_paused_game_ends_the_pause_live_and_restored() {
    for verdict in [
        ArbiterAction::Abort,
        ArbiterAction::Adjudicate {
            outcomes: [Outcome::Win, Outcome::Loss, Outcome::Loss],
        },
    ] {
        let (mut room, mut ops) = live_room(TimeControl::default());
        let arbiter = player(9);
        ops.extend(play(&mut room, 1_000, 0).ops);
        ops.extend(
            room.arbiter(&arbiter, ArbiterAction::Pause, "a dispute", 1_500, 0)
                .unwrap()
                .ops,
        );
        ops.extend(room.arbiter(&arbiter, verdict, "decided", 2_000, 0).unwrap().ops);
        assert_eq!(room.phase, Phase::Finished);
        assert!(!room.is_paused());
        let stored = stored_from(&room, &ops, Phase::Finished, room.result());
        let (back, _, at) = Room::restore(stored).unwrap();
        assert!(!back.is_paused(), "{verdict:?}");
        assert_eq!(back.status(at).paused, room.status(at).paused);
    }
}

#[test]
fn an_arbiter_pauses_adds_time_and_resumes_and_a_restore_keeps_both() {
    let (mut room, mut ops) = live_room(TimeControl::default());
    let arbiter = player(9);
    ops.extend(play(&mut room, 1_000, 0).ops);
    // Bad input changes nothing.
    let v = room.v();
    assert_eq!(
        room.arbiter(&arbiter, ArbiterAction::Pause, " ", 1_500, 0)
            .unwrap_err()
            .code,
        ErrorCode::BadRequest
    );
    let too_much = ArbiterAction::AddTime {
        side: Side::B,
        ms: MAX_ADD_TIME_MS + 1,
    };
    assert_eq!(
        room.arbiter(&arbiter, too_much, "why", 1_500, 0).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert_eq!(
        room.arbiter(&arbiter, ArbiterAction::Resume, "why", 1_500, 0)
            .unwrap_err()
            .code,
        ErrorCode::BadRequest
    );
    assert_eq!(room.v(), v);

    // B's clock runs from 1 000; paused at 3 000 it shows 2 s spent, however long the pause.
    let step = room
        .arbiter(&arbiter, ArbiterAction::Pause, "a phone rang", 3_000, 0)
        .unwrap();
    assert!(matches!(&step.ops[0], Op::Arbiter(a) if a.by == "p9" && a.reason == "a phone rang" && a.after_seq == 1));
    ops.extend(step.ops);
    let base = TimeControl::default().base_ms;
    assert_eq!(room.status(60_000).clocks[1].remaining_ms, base - 2_000);
    assert!(room.status(60_000).paused && room.status(60_000).legal_moves.is_empty());
    assert_eq!(room.next_wakeup(), None, "no flag, no abandonment while paused");
    assert!(room.tick(10_000_000, 0).is_empty());
    let mv = first_legal(&room);
    assert_eq!(
        room.act(Side::B, Act::Move { ply: 1, mv }, 0, 60_000, 0)
            .unwrap_err()
            .code,
        ErrorCode::Paused
    );
    assert_eq!(
        room.act(Side::W, Act::Resign, 0, 60_000, 0).unwrap_err().code,
        ErrorCode::Paused
    );
    let add = ArbiterAction::AddTime {
        side: Side::Y,
        ms: 30_000,
    };
    ops.extend(room.arbiter(&arbiter, add, "clock fault", 61_000, 0).unwrap().ops);
    assert_eq!(room.status(61_000).clocks[2].remaining_ms, base + 30_000);

    // Restored while paused: still paused, the added time kept.
    let (restored, _, now) = Room::restore(stored_from(&room, &ops, Phase::Live, None)).unwrap();
    assert_eq!(now, 61_000);
    assert!(restored.is_paused());
    assert_eq!(restored.status(70_000).clocks[2].remaining_ms, base + 30_000);
    assert_eq!(restored.next_wakeup(), None);

    ops.extend(
        room.arbiter(&arbiter, ArbiterAction::Resume, "go on", 62_000, 0)
            .unwrap()
            .ops,
    );
    assert!(!room.is_paused());
    assert_eq!(room.status(63_000).clocks[1].remaining_ms, base - 3_000);
    // Moves again; the time added before the move is in its stored clocks, not added twice.
    ops.extend(play(&mut room, 64_000, 0).ops);
    let (restored, _, _) = Room::restore(stored_from(&room, &ops, Phase::Live, None)).unwrap();
    assert!(!restored.is_paused());
    assert_eq!(restored.status(64_000).clocks, room.status(64_000).clocks);
}

#[test]
fn an_arbiter_adjudicates_or_aborts_and_the_verdict_is_restored() {
    let (mut room, mut ops) = live_room(TimeControl::default());
    let arbiter = player(9);
    // A side that has left can only lose.
    ops.extend(room.act(Side::Y, Act::Resign, 0, 10, 0).unwrap().ops);
    ops.extend(room.act(Side::Y, Act::Resign, 0, 20, 0).unwrap().ops);
    let draw_for_all = ArbiterAction::Adjudicate {
        outcomes: [Outcome::Draw; 3],
    };
    assert_eq!(
        room.arbiter(&arbiter, draw_for_all, "why", 30, 0).unwrap_err().code,
        ErrorCode::BadRequest
    );
    let verdict = ArbiterAction::Adjudicate {
        outcomes: [Outcome::Draw, Outcome::Draw, Outcome::Loss],
    };
    let step = room.arbiter(&arbiter, verdict, "the hall closes", 40, 0).unwrap();
    assert!(matches!(step.events.last().unwrap().event, GameEvent::Finished { .. }));
    ops.extend(step.ops);
    assert_eq!(room.phase, Phase::Finished);
    let result = room.result().unwrap();
    assert_eq!(result.ending, Ending::Adjudicated);
    assert_eq!(result.eliminations.len(), 1);
    assert_eq!(
        room.arbiter(&arbiter, ArbiterAction::Pause, "late", 50, 0)
            .unwrap_err()
            .code,
        ErrorCode::GameOver
    );
    let (restored, step, _) = Room::restore(stored_from(&room, &ops, Phase::Finished, Some(result.clone()))).unwrap();
    assert!(step.is_empty());
    assert_eq!(restored.snapshot(0).result, Some(result));

    let (mut other, _) = live_room(TimeControl::default());
    other
        .arbiter(&arbiter, ArbiterAction::Abort, "wrong set-up", 5, 0)
        .unwrap();
    assert_eq!(other.result().unwrap().ending, Ending::Annulled);
    assert_eq!(other.result().unwrap().outcomes, [None; 3]);
}

#[test]
fn a_verdict_charges_the_clock_that_ran_and_a_restore_shows_the_same_clocks() {
    let tc = TimeControl {
        base_ms: 600_000,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: None,
    };
    let (mut room, mut ops) = live_room(tc);
    let arbiter = player(9);
    let mv = first_legal(&room);
    ops.extend(room.act(Side::W, Act::Move { ply: 0, mv }, 0, 1_000, 0).unwrap().ops);
    let thinking = turn(&room);
    // The clocks stand paused for 2 s of the 7 s before the verdict.
    ops.extend(
        room.arbiter(&arbiter, ArbiterAction::Pause, "noise", 3_000, 0)
            .unwrap()
            .ops,
    );
    ops.extend(
        room.arbiter(&arbiter, ArbiterAction::Resume, "quiet", 5_000, 0)
            .unwrap()
            .ops,
    );
    let verdict = ArbiterAction::Adjudicate {
        outcomes: [Outcome::Draw, Outcome::Draw, Outcome::Draw],
    };
    ops.extend(
        room.arbiter(&arbiter, verdict, "the hall closes", 8_000, 0)
            .unwrap()
            .ops,
    );
    let live = room.snapshot(9_000).status.clocks;
    assert_eq!(
        live[thinking.index()].remaining_ms,
        600_000 - 5_000,
        "charged the 5 s it ran"
    );
    let result = room.result();
    let (restored, _, _) = Room::restore(stored_from(&room, &ops, Phase::Finished, result)).unwrap();
    assert_eq!(
        restored.snapshot(9_000).status.clocks,
        live,
        "the restored game shows the charged clocks"
    );
}

#[test]
fn an_arbiter_corrects_the_result_of_a_game_over_and_the_correction_is_restored() {
    let (mut room, mut ops) = live_room(TimeControl::default());
    let arbiter = player(9);
    // B, then Y resign twice each: W is the last one standing.
    for side in [Side::B, Side::B, Side::Y, Side::Y] {
        let now = 10 + ops.len() as u64;
        ops.extend(room.act(side, Act::Resign, 0, now, 0).unwrap().ops);
    }
    assert_eq!(room.phase, Phase::Finished);
    assert_eq!(room.result().unwrap().ending, Ending::LastStanding { winner: Side::W });
    // Only the result can change once the game is over.
    assert_eq!(
        room.arbiter(&arbiter, ArbiterAction::Abort, "late", 100, 0)
            .unwrap_err()
            .code,
        ErrorCode::GameOver
    );
    // B resigned by a slip of the hand: the arbiter gives B and W a draw.
    let fixed = ArbiterAction::Adjudicate {
        outcomes: [Outcome::Draw, Outcome::Draw, Outcome::Loss],
    };
    let step = room
        .arbiter(&arbiter, fixed, "B's resignation was a slip", 200, 0)
        .unwrap();
    assert!(matches!(&step.ops[0], Op::Arbiter(a) if a.by == "p9" && a.reason == "B's resignation was a slip"));
    assert!(
        step.ops
            .iter()
            .any(|o| matches!(o, Op::Phase { result: Some(r), .. } if r.ending == Ending::Adjudicated))
    );
    assert!(matches!(step.events.last().unwrap().event, GameEvent::Finished { .. }));
    ops.extend(step.ops);
    let result = room.result().unwrap();
    assert_eq!(
        result.outcomes,
        [Some(Outcome::Draw), Some(Outcome::Draw), Some(Outcome::Loss)]
    );
    let (restored, _, _) = Room::restore(stored_from(&room, &ops, Phase::Finished, Some(result.clone()))).unwrap();
    assert_eq!(restored.result(), Some(result));
}

#[test]
fn a_resent_move_of_a_side_out_of_the_game_is_a_duplicate() {
    let (mut room, _) = live_room(TimeControl::default());
    let mut played = Vec::new();
    for t in 1..=10 {
        let turn = turn(&room);
        let mv = first_legal(&room);
        play(&mut room, t * 1_000, 0);
        played.push((turn, mv));
    }
    // B resigns before the 15th round twice: a warning, then B loses and is out; the game goes on.
    room.act(Side::B, Act::Resign, 0, 10_500, 0).unwrap();
    room.act(Side::B, Act::Resign, 0, 10_600, 0).unwrap();
    assert_eq!(room.phase, Phase::Live);
    assert!(!room.game.is_live(Side::B));
    let v = room.v();
    // B's client reconnects after a crash and resends its last move: it counted.
    let (side, mv) = played[7].clone();
    assert_eq!(side, Side::B);
    let e = room.act(Side::B, Act::Move { ply: 7, mv }, 0, 11_000, 0).unwrap_err();
    assert_eq!(e.code, ErrorCode::DuplicateMove);
    // Anything else from B is refused as out of the game.
    let e = room
        .act(
            Side::B,
            Act::Move {
                ply: 11,
                mv: played[7].1.clone(),
            },
            0,
            11_000,
            0,
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotLive);
    assert_eq!(room.v(), v, "refusals change nothing");
}

#[test]
fn one_copy_per_distinct_viewer() {
    let seats = [Side::W, Side::B, Side::Y].map(Viewer::Seat);
    let slots = |p: Projection| {
        let mut s: Vec<usize> = seats.iter().chain([&Viewer::Spectator]).map(|&v| p.slot(v)).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    assert_eq!(slots(Projection::Everyone), 1);
    assert_eq!(slots(Projection::PlayersAndSpectators), 2);
    assert_eq!(slots(Projection::PerSeat), 4);
    // Every event of a room is viewed through its projection: the players' chat
    // reaches the three seats as one copy and the spectators as a bare version.
    let (mut room, _) = live_room(TimeControl::default());
    let step = room
        .chat(&player(1), Some(Side::B), Channel::Players, "hi", 0, 0)
        .unwrap();
    let l = &step.events[0];
    assert_eq!(l.projection(), Projection::PlayersAndSpectators);
    for &s in &seats {
        assert_eq!(l.view(s), l.view(seats[0]));
    }
    assert!(matches!(
        l.view(Viewer::Spectator),
        ServerMsg::Event { event: None, .. }
    ));
    assert_eq!(Viewer::of(None), Viewer::Spectator);
    assert_eq!(Viewer::of(Some(Side::Y)).seat(), Some(Side::Y));
}

/// A 三国演弈棋 room keeps its final state with its finish (the spectators'
/// view, its record lines included, in the finishing step before the phase):
/// the record and the state of a finished game read it instead of replaying
/// it. 三国象棋 has no record lines and keeps nothing.
#[test]
fn the_finish_keeps_the_variants_record_lines() {
    let tc = TimeControl {
        base_ms: 600_000,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: None,
    };
    let mut s = settings(tc);
    s.variant = protocol::Variant::Yanyi;
    let mut room = Room::new("y".into(), s).unwrap();
    for (i, side) in Side::ALL.into_iter().enumerate() {
        room.join(player(i), Some(side), 0, 0).unwrap();
        room.connected(Some(side));
    }
    // the 19-move line of tests/tests/yanyi.rs: an alliance, then 魏 mated and absorbed by 吴
    let line = [
        "q12-o13", "l17-k15", "f1-g3", "o13-m12", "k15-i16", "g3-f5", "m12-l14", "e17-e16", "f5-e7", "q9-p9",
        "e16-e17", "e7-d5", "p9-q9", "e17-e16", "d5-c7", "q9-p9", "e16-e17", "c7-a8", "l14-j15",
    ];
    for (ply, mv) in line.into_iter().enumerate() {
        let side = turn(&room);
        let step = room
            .act(
                side,
                Act::Move {
                    ply: ply as u32,
                    mv: mv.into(),
                },
                0,
                100 * ply as u64 + 100,
                0,
            )
            .unwrap();
        assert!(
            !step.ops.iter().any(|o| matches!(o, Op::Final(_))),
            "nothing kept before the finish"
        );
    }
    let live = room.snapshot(5_000).notes;
    let texts: Vec<&str> = live.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(texts, ["alliance B Y", "han W", "absorbed B W"]);
    // 蜀 resigns: 吴 is left, the step keeps the lines before it finishes the game
    let step = room.act(Side::Y, Act::Resign, 0, 5_000, 0).unwrap();
    let kept = step
        .ops
        .iter()
        .position(|o| matches!(o, Op::Final(s) if s.notes == live));
    let finish = step.ops.iter().position(|o| {
        matches!(
            o,
            Op::Phase {
                phase: Phase::Finished,
                ..
            }
        )
    });
    assert!(kept.is_some() && finish.is_some() && kept < finish, "{:?}", step.ops);
    let Some(Op::Final(kept)) = kept.map(|i| &step.ops[i]) else {
        unreachable!()
    };
    assert_eq!(**kept, room.snapshot(5_000), "the spectators' view at the finish");

    // 三国象棋: nothing to keep
    let (mut room, _) = live_room(TimeControl { base_ms: 1_000, ..tc });
    let mut ops = Vec::new();
    // the clocks run out one after the other
    for k in 1..10 {
        if room.phase == Phase::Finished {
            break;
        }
        ops.extend(room.tick(k * 10_000, 0).ops);
    }
    assert_eq!(room.phase, Phase::Finished);
    assert!(ops.iter().any(|o| matches!(
        o,
        Op::Phase {
            phase: Phase::Finished,
            ..
        }
    )));
    assert!(!ops.iter().any(|o| matches!(o, Op::Final(_))));
}

/// The chat's rate buckets do not grow with every writer a room ever had:
/// full ones are forgotten once there are many, and a writer still limited
/// stays limited.
#[test]
fn chat_buckets_of_past_writers_are_forgotten() {
    let (mut room, _) = live_room(TimeControl::default());
    // More lines than a game stores by default: the buckets are the point here.
    room.set_chat_cap(u32::MAX);
    let mut now = 0;
    for i in 0..1000 {
        let watcher = player(100 + i);
        room.chat(&watcher, None, Channel::Spectators, "hi", now, 0).unwrap();
        now += CHAT_REFILL_MS;
    }
    assert!(room.chat.len() <= CHAT_BUCKETS_KEPT, "{} buckets", room.chat.len());
    // A flooder keeps its empty bucket however many others write.
    let flooder = player(5000);
    for _ in 0..CHAT_BURST {
        room.chat(&flooder, None, Channel::Spectators, "x", now, 0).unwrap();
    }
    for i in 0..(2 * CHAT_BUCKETS_KEPT) {
        let _ = room.chat(&player(6000 + i), None, Channel::Spectators, "y", now, 0);
    }
    let refused = room.chat(&flooder, None, Channel::Spectators, "x", now, 0).unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited);
}

#[test]
fn a_copy_is_written_without_copying_the_event() {
    let (mut room, _) = live_room(TimeControl::default());
    let mv = room.status(0).legal_moves[0].to_owned();
    let mut step = room.act(Side::W, Act::Move { ply: 0, mv }, 0, 0, 0).unwrap();
    // and a players' chat line: the spectators' copy is a bare version
    let chat = room
        .chat(&player(1), Some(Side::B), Channel::Players, "hi", 0, 0)
        .unwrap();
    step.events.extend(chat.events);
    assert!(step.events.iter().any(|l| matches!(l.event, GameEvent::Moved { .. })));
    let viewers = [Side::W, Side::B, Side::Y].map(Viewer::Seat);
    for l in &mut step.events {
        for v in viewers.into_iter().chain([Viewer::Spectator]) {
            assert_eq!(l.encode_view(v), serde_json::to_string(&l.view(v)).unwrap(), "{v:?}");
        }
    }
    // The copy without the legal moves is the event with an empty list, and
    // the copy with them is made from it byte for byte.
    let mut moved = step.events[0].clone();
    let GameEvent::Moved { status, .. } = &moved.event else {
        panic!("the move first")
    };
    let mut bare = status.clone();
    assert!(!bare.legal_moves.is_empty());
    bare.legal_moves.clear();
    assert!(moved.lists_moves_for_another(Viewer::Seat(Side::Y)));
    assert!(moved.lists_moves_for_another(Viewer::Spectator));
    assert!(!moved.lists_moves_for_another(Viewer::Seat(Side::B)), "B is to move");
    let full = moved.encode_view(Viewer::Spectator);
    let lean = moved.encode_lean(Viewer::Spectator);
    match serde_json::from_str::<ServerMsg>(&lean).unwrap() {
        ServerMsg::Event { event: Some(e), .. } => match *e {
            GameEvent::Moved { status, .. } => assert_eq!(status, bare),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert_eq!(moved.encode_view(Viewer::Spectator), full, "the list is put back");
    assert_eq!(moved.encode_listed(&lean).as_deref(), Some(full.as_str()));
    // A chat line has no status to list.
    let chat = step.events.last_mut().unwrap();
    assert!(!chat.lists_moves_for_another(Viewer::Seat(Side::Y)));
    let text = chat.encode_view(Viewer::Seat(Side::Y));
    assert_eq!(chat.encode_listed(&text), None);
}

#[test]
fn every_copy_with_legal_moves_is_what_serde_writes_in_every_variant() {
    let tc = TimeControl {
        base_ms: 600_000,
        increment_ms: 0,
        per_move_ms: None,
        byoyomi: None,
    };
    let mut seed: u64 = 0x1157;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let viewers = [
        Viewer::Seat(Side::W),
        Viewer::Seat(Side::B),
        Viewer::Seat(Side::Y),
        Viewer::Spectator,
    ];
    for variant in [
        protocol::Variant::Sanguo,
        protocol::Variant::Anqi,
        protocol::Variant::Yanyi,
    ] {
        let mut s = settings(tc);
        s.variant = variant;
        let mut room = Room::new("v".into(), s).unwrap();
        for (i, side) in Side::ALL.into_iter().enumerate() {
            room.join(player(i), Some(side), 0, 0).unwrap();
            room.connected(Some(side));
        }
        if variant == protocol::Variant::Anqi {
            for (i, side) in Side::ALL.into_iter().enumerate() {
                room.act(side, Act::Seed(format!("{i:02x}").repeat(32)), 0, 0, 0)
                    .unwrap();
            }
        }
        let mut listed = 0;
        for ply in 0..200 {
            if room.phase == Phase::Finished {
                break;
            }
            let moves = legal(&room);
            assert!(
                !moves.is_empty(),
                "{variant:?} ply {ply}: {:?}",
                room.game().status(true)
            );
            let mv = moves[next(moves.len())].clone();
            let side = turn(&room);
            let mut step = room.act(side, Act::Move { ply, mv }, 0, ply as u64 * 10, 0).unwrap();
            for l in &mut step.events {
                for v in viewers {
                    let whole = serde_json::to_string(&l.view(v)).unwrap();
                    listed += usize::from(whole.contains(r#""legal_moves":[""#));
                    assert_eq!(l.encode_view(v), whole, "{variant:?} ply {ply} {v:?}");
                    if l.lists_moves_for_another(v) {
                        let lean = l.encode_lean(v);
                        assert_eq!(l.encode_listed(&lean).as_deref(), Some(whole.as_str()));
                    }
                }
            }
        }
        assert!(listed > 100, "{variant:?}: {listed} copies listed moves");
    }
}

/// A kept event written into the memory of the one it replaces is the same
/// as a copy, whatever the two events were: moves with and without a
/// capture, checks, a flip's piece, a check in the status, a draw offer,
/// and events of other kinds either way round.
#[test]
fn an_event_refilled_is_a_copy() {
    let (mut room, _) = live_room(TimeControl::default());
    let mut events: Vec<GameEvent> = Vec::new();
    for t in 1..=4 {
        events.extend(play(&mut room, t * 10, 0).events.into_iter().map(|l| l.event));
    }
    let status = events
        .iter()
        .find_map(|e| match e {
            GameEvent::Moved { status, .. } => Some(status.clone()),
            _ => None,
        })
        .expect("a move");
    let mut rich = status.clone();
    rich.in_check = vec![Side::B];
    rich.live = vec![Side::W, Side::Y];
    rich.pending_offer = Some(protocol::PendingOffer {
        by: Side::W,
        waiting: vec![Side::Y],
    });
    rich.paused = true;
    rich.position.push_str(" and longer");
    events.push(GameEvent::Moved {
        side: Side::Y,
        mv: "a much longer move text than any".into(),
        ply: 9,
        spent_ms: 7,
        captured: Some("BR".into()),
        checks: vec![Side::W, Side::B],
        revealed: Some("R".into()),
        status: rich,
    });
    events.push(GameEvent::State { status });
    assert!(events.len() >= 6);
    for from in &events {
        for to in &events {
            let mut refilled = to.clone();
            refill(&mut refilled, from);
            assert_eq!(&refilled, from);
        }
    }
}
