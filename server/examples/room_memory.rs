//! The memory of one game's room in play, by variant: the heap bytes a room
//! holds (its game, its last events for reconnecting clients, its record)
//! after 0, 64 and 200 plies of random legal play, counted by an allocator
//! that tallies every allocation (`stats_alloc`), plus the room's own size.
//! Issue 15's memory per game: `loadgen --mode rooms` measures rooms that
//! have not moved; this measures rooms that have.
//!
//!     cargo run -p server --example room_memory [GAMES]
//!
//! (A debug build counts the same bytes as a release build, and builds in a
//! fraction of the time: the release profile links the whole program.)
//!
//! GAMES (default 20) games of each variant, the moves drawn from the same
//! fixed seed (三国暗棋's deal also draws the server's own secret, so its
//! games differ from run to run); prints the mean bytes a room holds at
//! each ply it reached, with how many games reached it.

use std::alloc::System;

use protocol::{Direction, GameSettings, Phase, Side, TimeControl, Variant};
use server::room::core::{Act, Room};
use server::store::Player;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const CHECKPOINTS: [u32; 3] = [0, 64, 200];

fn player(i: usize) -> Player {
    Player::guest(format!("p{i}"), format!("player {i}"))
}

/// A live room of `variant`, its three seats taken as `POST …/join` takes
/// them: each with its seed for the deal when the game awaits one (as the
/// web client joins a 三国暗棋 table), so the table deals at once.
fn live_room(variant: Variant) -> Room {
    let settings = GameSettings {
        variant,
        time_control: TimeControl::default(),
        direction: Direction::Ccw,
        public: true,
        players_chat: true,
        grace_ms: 10_000,
        rated: false,
        anqi: None,
    };
    let mut room = Room::new("memory".into(), settings).expect("a room");
    for (i, side) in Side::ALL.into_iter().enumerate() {
        let seed = room.game().awaits_deal().then(|| format!("{i:02x}").repeat(32));
        room.join_seeded(player(i), Some(side), seed.as_deref(), 0, 0)
            .expect("a seat");
        room.connected(Some(side));
    }
    assert_eq!(room.phase, Phase::Live, "{variant:?}");
    room
}

/// Plays one random game of `variant`; the bytes its room holds at each
/// checkpoint it reached.
fn one_game(variant: Variant, rng: &mut u64) -> [Option<isize>; CHECKPOINTS.len()] {
    let mut at = [None; CHECKPOINTS.len()];
    let region = Region::new(GLOBAL);
    let mut room = live_room(variant);
    let held = |region: &Region<System>, room: &Room| {
        let c = region.change();
        // (`bytes_allocated` and `bytes_deallocated` count a reallocation's
        // growth or shrinking; `bytes_reallocated` is the same once more.)
        c.bytes_allocated as isize - c.bytes_deallocated as isize + std::mem::size_of_val(room) as isize
    };
    for ply in 0..=CHECKPOINTS[CHECKPOINTS.len() - 1] {
        if let Some(k) = CHECKPOINTS.iter().position(|&c| c == ply) {
            at[k] = Some(held(&region, &room));
        }
        if room.phase != Phase::Live {
            break;
        }
        let side = room.game().to_move().expect("a seat to move");
        let moves = room.game().status(true).legal_moves.to_vec();
        *rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mv = moves[(*rng >> 33) as usize % moves.len()].clone();
        room.act(side, Act::Move { ply, mv }, 0, u64::from(ply) * 10, 0)
            .expect("a legal move");
    }
    at
}

fn main() {
    let games: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("GAMES: a number"))
        .unwrap_or(20);
    // The engines' tables are built once, on first use: not a room's.
    for variant in Variant::ALL {
        one_game(variant, &mut 1);
    }
    println!("variant  games  bytes a room holds at ply {CHECKPOINTS:?} (mean over the games that reached it)");
    for variant in Variant::ALL {
        let mut rng = 0x5eed;
        let mut sum = [0isize; CHECKPOINTS.len()];
        let mut reached = [0usize; CHECKPOINTS.len()];
        for _ in 0..games {
            for (k, b) in one_game(variant, &mut rng).into_iter().enumerate() {
                if let Some(b) = b {
                    sum[k] += b;
                    reached[k] += 1;
                }
            }
        }
        let cells: Vec<String> = (0..CHECKPOINTS.len())
            .map(|k| match reached[k] {
                0 => "—".to_owned(),
                n => format!("{} ({n})", sum[k] / n as isize),
            })
            .collect();
        println!("{}  {games}  {}", variant.key(), cells.join("  "));
    }
}
