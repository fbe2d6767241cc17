//! The decisions of a room, as a synchronous state machine:
//! `(state, command, now) -> Step`. No IO and no clock: the actor
//! ([`super::actor`]) reads the time, commits the step's writes and only then
//! sends its events. Tests drive it with any times they like.
//!
//! Time is *game time*: milliseconds that run only while the room runs. A
//! restored room continues from the last stored event's time, so the engine's
//! event times never go back and the clocks stand still while the server is
//! down.

use std::collections::{HashMap, VecDeque};

use engine::clock::{Clocks, TimeControl};
use protocol::tournament::ArbiterAction;
use protocol::{
    Channel, Ending, ErrorBody, ErrorCode, GameEvent, GameResult, GameSettings, MAX_CHAT_CHARS, Outcome, Phase,
    SeatInfo, ServerMsg, Side, Snapshot, Status, Variant,
};

use super::bots;
use super::games::{self, Command, Happened, RoomGame, err};
use crate::store::{ArbiterRow, EventRow, Op, Player, StoredGame};

/// Events kept in memory for reconnecting clients; older ones cost a snapshot.
/// A move event carries the legal moves (a few KB), so this bounds a room's
/// memory: 64 events are about 20 rounds.
pub const LOG_KEEP: usize = 64;
/// Lag compensation (lichess's quota): the most credited on one move, ms.
pub const LAG_CREDIT_MAX: u64 = 500;
/// The quota a side starts with and can bank at most, ms.
pub const LAG_QUOTA_MAX: u64 = 1_000;
/// Quota regained per move, ms.
pub const LAG_QUOTA_GAIN: u64 = 100;
/// Chat: lines a writer may send in a burst, then one per `CHAT_REFILL_MS`.
pub const CHAT_BURST: u32 = 5;
/// Chat refill period, ms.
pub const CHAT_REFILL_MS: u64 = 2_000;
/// Chat writers' buckets a room keeps before it forgets the full ones (a
/// full bucket is the same as none: every spectator that ever wrote would
/// otherwise stay in the map for the room's life).
pub const CHAT_BUCKETS_KEPT: usize = 64;
/// Chat lines a game stores per channel (players', spectators') before it
/// refuses more with `chat_full`. The chat table would otherwise grow without
/// bound per game: the rate limit is per writer, and writers can be minted.
/// Per channel, so that a crowd of spectators cannot silence the players, nor
/// the players the spectators. 500 is far above any conversation seen in a
/// game (a writer gets 5 lines, then one per 2 s), and bounds a game's stored
/// chat (and its record) at 2 × 500 lines of at most 500 characters.
pub const CHAT_LINES_PER_CHANNEL: u32 = 500;
/// The most time an arbiter adds at once, ms.
pub const MAX_ADD_TIME_MS: u64 = 3_600_000;
/// The longest reason an arbiter gives, characters.
pub const MAX_REASON_CHARS: usize = 500;
/// How long a full table waits for the seeds of the seated people who have
/// not sent theirs before the room deals without them (三国暗棋's
/// seat-entropy deal; game time, ms). A tournament's tables are filled by the
/// server, so their players send their seeds in this time.
pub const SEED_WAIT_MS: u64 = 10_000;

/// Who looks at a game: the one input of the per-viewer projection. Every
/// path that shows a game to someone — live events, reconnect replays,
/// snapshots, `GET /state`, lobby rows, the bots' input — asks
/// [`Logged::view`] or [`Room::view`] for what this viewer may see, and
/// nothing else leaves the room. In 三国象棋 the seats see the same (the
/// players' chat aside); a variant with hidden pieces projects per seat.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// A connection acting for a seat.
    Seat(Side),
    /// Anyone else: spectators, anonymous HTTP readers, the lobby, logs.
    Spectator,
}

impl Viewer {
    /// The viewer of a connection with this seat (or none).
    pub fn of(side: Option<Side>) -> Viewer {
        side.map_or(Viewer::Spectator, Viewer::Seat)
    }

    /// The seat, for a player.
    pub fn seat(self) -> Option<Side> {
        match self {
            Viewer::Seat(s) => Some(s),
            Viewer::Spectator => None,
        }
    }

    /// A slot per distinct viewer (seats in index order, then spectators), for
    /// caches of per-audience encodings.
    pub fn slot(self) -> usize {
        match self {
            Viewer::Seat(s) => engine::Side::from(s).index(),
            Viewer::Spectator => 3,
        }
    }
}

/// Which viewers get the same copy of an event: the room encodes it once per
/// copy, not once per connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Projection {
    /// One copy for everyone.
    Everyone,
    /// One copy for the seats, another for the spectators.
    PlayersAndSpectators,
    /// A copy for each seat and one for the spectators.
    PerSeat,
}

impl Projection {
    /// The cache slot whose copy `viewer` gets.
    pub fn slot(self, viewer: Viewer) -> usize {
        match (self, viewer) {
            (Projection::Everyone, _) => 0,
            (Projection::PlayersAndSpectators, Viewer::Seat(_)) => 0,
            (Projection::PlayersAndSpectators, Viewer::Spectator) => 3,
            (Projection::PerSeat, v) => v.slot(),
        }
    }
}

/// Who may see an event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Everyone.
    All,
    /// Connections acting for a seat.
    Players,
    /// Connections watching.
    Spectators,
}

impl Audience {
    /// Whether `viewer` sees the event.
    pub fn admits(self, viewer: Viewer) -> bool {
        match self {
            Audience::All => true,
            Audience::Players => viewer.seat().is_some(),
            Audience::Spectators => viewer.seat().is_none(),
        }
    }
}

/// An event with its version and audience.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// The version.
    pub v: u64,
    /// Who sees it.
    pub audience: Audience,
    /// The event.
    pub event: GameEvent,
}

impl Logged {
    /// The event as `viewer` may see it: the whole event, or a bare version
    /// when it is not for this viewer. The only way an event leaves the room.
    pub fn view(&self, viewer: Viewer) -> ServerMsg {
        ServerMsg::Event {
            v: self.v,
            event: self.audience.admits(viewer).then(|| Box::new(self.event.clone())),
        }
    }

    /// [`Logged::view`] serialised without copying the event (a move's
    /// status with its legal moves is a few KB): byte for byte what
    /// `encode(&self.view(viewer))` gives (a test holds them equal). A move's
    /// event is written by hand ([`protocol::event_json`], the legal moves in
    /// one piece); any other event by serde, a status's legal moves written
    /// as one piece ([`protocol::MoveTexts::write_json`]) into the event
    /// written without them, not one JSON string at a time.
    pub fn encode_view(&mut self, viewer: Viewer) -> String {
        let event = self.audience.admits(viewer).then_some(&self.event);
        if let Some(text) = protocol::event_json(self.v, event) {
            return text;
        }
        if event.and_then(status_ref).is_some_and(|s| !s.legal_moves.is_empty()) {
            // `event_json` refused the event: the lean one is serde's too.
            let lean = self.without_moves(|l| l.encode_serde(viewer));
            if let Some(full) = self.encode_listed(&lean) {
                return full;
            }
        }
        self.encode_serde(viewer)
    }

    /// [`Logged::view`] serialised without copying the event: a move's by
    /// hand ([`protocol::event_json`]), anything else by serde.
    fn encode_whole(&self, viewer: Viewer) -> String {
        let event = self.audience.admits(viewer).then_some(&self.event);
        protocol::event_json(self.v, event).unwrap_or_else(|| self.encode_serde(viewer))
    }

    /// [`Logged::view`] serialised by serde, without copying the event.
    fn encode_serde(&self, viewer: Viewer) -> String {
        #[derive(serde::Serialize)]
        #[serde(tag = "type", rename = "event")]
        struct EventRef<'a> {
            v: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            event: Option<&'a GameEvent>,
        }
        let event = self.audience.admits(viewer).then_some(&self.event);
        serde_json::to_string(&EventRef { v: self.v, event }).unwrap_or_default()
    }

    /// Whether `viewer` sees this event's status with legal moves that are
    /// not its own: the status lists moves and the viewer's seat is not the
    /// one to move. Such a viewer that asked for its own moves only
    /// (`hello`'s `legal_moves: own`) gets [`Logged::encode_lean`].
    pub fn lists_moves_for_another(&self, viewer: Viewer) -> bool {
        status_ref(&self.event).is_some_and(|status| {
            self.audience.admits(viewer) && !status.legal_moves.is_empty() && viewer.seat() != Some(status.turn)
        })
    }

    /// [`Logged::encode_view`] with the status's legal moves left out (an
    /// empty list), without copying the event: the list is set aside while
    /// the event is written.
    pub fn encode_lean(&mut self, viewer: Viewer) -> String {
        self.without_moves(|l| l.encode_whole(viewer))
    }

    /// `write` given the event with its status's legal moves set aside (an
    /// empty list), not copied; they are put back after.
    fn without_moves(&mut self, write: impl FnOnce(&Self) -> String) -> String {
        let moves = status_of(&mut self.event).map(|s| std::mem::take(&mut s.legal_moves));
        let text = write(self);
        if let (Some(status), Some(moves)) = (status_of(&mut self.event), moves) {
            status.legal_moves = moves;
        }
        text
    }

    /// [`Logged::encode_view`] made from the event's [`Logged::encode_lean`]
    /// text, byte for byte (a test holds them equal): the legal moves
    /// written into its empty list, the rest copied, instead of writing the
    /// whole event again. `None` when `lean` has no empty list to fill.
    pub fn encode_listed(&self, lean: &str) -> Option<String> {
        const EMPTY: &str = r#""legal_moves":[]"#;
        let status = status_ref(&self.event)?;
        // The key's quotes are unescaped: inside a JSON string every quote
        // is escaped, so the only match is the status's own field. The
        // status's position (a few hundred bytes) is written before it, at
        // least as long as it is: the search starts past that many bytes.
        let skip = status.position.len();
        let found = match lean.get(skip..) {
            Some(rest) => rest.find(EMPTY)? + skip,
            None => lean.find(EMPTY)?,
        };
        let at = found + EMPTY.len() - 2;
        let mut full = String::with_capacity(lean.len() - 2 + status.legal_moves.json_len());
        full.push_str(&lean[..at]);
        status.legal_moves.write_json(&mut full);
        full.push_str(&lean[at + 2..]);
        Some(full)
    }

    /// Which viewers get the same copy of [`Logged::view`].
    pub fn projection(&self) -> Projection {
        match self.audience {
            Audience::All => Projection::Everyone,
            Audience::Players | Audience::Spectators => Projection::PlayersAndSpectators,
        }
    }
}

/// An event as a room's log keeps it for reconnecting clients: on the heap
/// (a short event takes little room) and without the legal-move list of its
/// status, which is most of a move's size (a few KB; recomputed from the
/// status by the variant, [`games::relist`], when a client replays it,
/// which is rare).
#[derive(Clone, Debug)]
struct Kept {
    v: u64,
    audience: Audience,
    event: Box<GameEvent>,
    /// Whether the status had legal moves (dropped here).
    legal_moves: bool,
}

/// The status an event carries, if any: one match for [`status_ref`] and
/// [`status_of`] (binding by reference or mutably, as the event is given).
macro_rules! status_in {
    ($event:expr) => {
        match $event {
            GameEvent::Started { status }
            | GameEvent::Moved { status, .. }
            | GameEvent::State { status }
            | GameEvent::Restored { status }
            | GameEvent::Arbiter { status, .. } => Some(status),
            _ => None,
        }
    };
}

/// The status an event carries, if any.
fn status_ref(event: &GameEvent) -> Option<&Status> {
    status_in!(event)
}

/// [`status_ref`], to change it.
fn status_of(event: &mut GameEvent) -> Option<&mut Status> {
    status_in!(event)
}

impl Kept {
    /// The event kept, its legal moves left out; into `recycled`'s memory,
    /// the entry the log drops for it, when there is one: the log drops one
    /// event a move once full, and a move's copied into the one it drops
    /// (its box and strings reused, [`refill`]) costs no allocation and no
    /// free of memory long out of the cache.
    fn new(logged: &mut Logged, recycled: Option<Kept>) -> Kept {
        // The list is set aside while the event is copied, not copied and dropped.
        let moves = status_of(&mut logged.event).map(|s| std::mem::take(&mut s.legal_moves));
        let event = match recycled {
            Some(old) => {
                let mut event = old.event;
                refill(&mut event, &logged.event);
                event
            }
            None => Box::new(logged.event.clone()),
        };
        let legal_moves = moves.as_ref().is_some_and(|m| !m.is_empty());
        if let (Some(status), Some(moves)) = (status_of(&mut logged.event), moves) {
            status.legal_moves = moves;
        }
        Kept {
            v: logged.v,
            audience: logged.audience,
            event,
            legal_moves,
        }
    }

    /// The event as it was sent: the variant relists the legal moves from
    /// the status (its position text is canonical and round-trips).
    fn logged(&self, variant: Variant) -> Logged {
        let mut event = (*self.event).clone();
        if self.legal_moves
            && let Some(status) = status_of(&mut event)
        {
            status.legal_moves = games::relist(variant, status);
        }
        Logged {
            v: self.v,
            audience: self.audience,
            event,
        }
    }
}

/// Makes `to` a copy of `from` in the memory `to` holds where it can: a
/// move's event into a move's, field by field, each string and list
/// copied into the one it replaces (`clone_from`); any other pair as a
/// fresh copy. The same as `*to = from.clone()` (a test holds them equal).
/// The patterns name every field, so that a field added to an event or a
/// status cannot be left out.
fn refill(to: &mut GameEvent, from: &GameEvent) {
    let (
        GameEvent::Moved {
            side,
            mv,
            ply,
            spent_ms,
            captured,
            checks,
            revealed,
            status,
        },
        GameEvent::Moved {
            side: from_side,
            mv: from_mv,
            ply: from_ply,
            spent_ms: from_spent,
            captured: from_captured,
            checks: from_checks,
            revealed: from_revealed,
            status: from_status,
        },
    ) = (&mut *to, from)
    else {
        *to = from.clone();
        return;
    };
    *side = *from_side;
    mv.clone_from(from_mv);
    *ply = *from_ply;
    *spent_ms = *from_spent;
    captured.clone_from(from_captured);
    checks.clone_from(from_checks);
    revealed.clone_from(from_revealed);
    refill_status(status, from_status);
}

/// [`refill`] for a status.
fn refill_status(to: &mut Status, from: &Status) {
    let Status {
        position,
        turn,
        live,
        ply,
        round,
        legal_moves,
        clocks,
        counters,
        in_check,
        pending_offer,
        paused,
        anqi,
        yanyi,
    } = from;
    to.position.clone_from(position);
    to.turn = *turn;
    to.live.clone_from(live);
    to.ply = *ply;
    to.round = *round;
    to.legal_moves.clone_from(legal_moves);
    to.clocks = *clocks;
    to.counters.clone_from(counters);
    to.in_check.clone_from(in_check);
    to.pending_offer.clone_from(pending_offer);
    to.paused = *paused;
    to.anqi.clone_from(anqi);
    to.yanyi.clone_from(yanyi);
}

/// What a player does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// A move at a ply.
    Move {
        /// The ply the client saw.
        ply: u32,
        /// Move text.
        mv: String,
    },
    /// Resign.
    Resign,
    /// Offer a draw.
    OfferDraw,
    /// Answer the offer.
    AnswerDraw(bool),
    /// The seat's seed for the deal (三国暗棋), as sent: 64 hex digits.
    Seed(String),
}

/// What a step asks of the actor: commit `ops` (with the new version), then
/// send `events` to every connection, then answer the sender.
#[derive(Debug, Default)]
pub struct Step {
    /// Writes to commit first.
    pub ops: Vec<Op>,
    /// Events to broadcast after the commit.
    pub events: Vec<Logged>,
    /// Moves accepted in this step (for metrics).
    pub moves: u32,
}

impl Step {
    /// Whether there is nothing to commit nor send.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.events.is_empty()
    }
}

/// Token bucket for chat.
#[derive(Copy, Clone, Debug)]
struct Bucket {
    tokens: u32,
    last: u64,
}

/// The state of one game's room.
#[derive(Debug)]
pub struct Room {
    /// The game id.
    pub id: String,
    /// Fixed settings.
    pub settings: GameSettings,
    /// Open, live, finished.
    pub phase: Phase,
    /// The game of the settings' variant: everything its rules decide.
    game: Box<dyn RoomGame>,
    clocks: Clocks,
    seats: [Option<Player>; 3],
    /// Live connections per seat.
    online: [u32; 3],
    /// When an absent seat will have abandoned (game time).
    absent_deadline: [Option<u64>; 3],
    /// The last version handed out.
    v: u64,
    log: VecDeque<Kept>,
    /// Board actions in order as the seats sent them (三国暗棋: a flip
    /// without what it revealed), to tell stale from duplicated moves. The
    /// snapshot lists the game's record instead ([`RoomGame::moves`]).
    moves: Vec<(Side, String)>,
    /// Lag quota per side, ms.
    lag_quota: [u64; 3],
    /// The last lag a side's connection reported, ms.
    lag_seen: [u64; 3],
    chat: HashMap<String, Bucket>,
    /// Chat lines stored so far per channel ([`chat_slot`]): counted by the
    /// store when the room is restored, so the cap holds across restarts.
    chat_lines: [u32; 2],
    /// The most chat lines stored per channel.
    chat_cap: u32,
    /// How many events to keep for reconnecting clients.
    log_keep: usize,
    /// An arbiter stopped the clocks.
    paused: bool,
    /// The result an arbiter decided (adjudication or abort), or an abort's
    /// no-shows; the game stays as it was.
    verdict: Option<GameResult>,
    /// A full table waiting for seeds: when the room deals anyway (game time).
    deal_due: Option<u64>,
    /// Seats that joined without a seed by their own request: they
    /// contribute none (zero bytes), and the table does not wait for them.
    no_seed: [bool; 3],
}

/// The index of a chat channel in [`StoredGame::chat_lines`] and the room's count.
pub fn chat_slot(channel: Channel) -> usize {
    match channel {
        Channel::Players => 0,
        Channel::Spectators => 1,
    }
}

fn tc(settings: &GameSettings) -> TimeControl {
    settings.time_control.into()
}

impl Room {
    /// A new open game of the settings' variant (`variant_unavailable` if
    /// rooms cannot play it). Its public start position and its secret, if
    /// any, are for the store: [`Room::initial_position`], [`Room::take_secret`].
    pub fn new(id: String, settings: GameSettings) -> Result<Room, ErrorBody> {
        let game = games::new_game(&id, &settings)?;
        let clocks = Clocks::new(tc(&settings));
        Ok(Room {
            id,
            settings,
            phase: Phase::Open,
            game,
            clocks,
            seats: Default::default(),
            online: [0; 3],
            absent_deadline: [None; 3],
            v: 0,
            log: VecDeque::new(),
            moves: Vec::new(),
            lag_quota: [LAG_QUOTA_MAX; 3],
            lag_seen: [0; 3],
            chat: HashMap::new(),
            chat_lines: [0; 2],
            chat_cap: CHAT_LINES_PER_CHANNEL,
            log_keep: LOG_KEEP,
            paused: false,
            verdict: None,
            deal_due: None,
            no_seed: [false; 3],
        })
    }

    /// Whether a person (not a bot) holds a seat.
    pub fn has_person(&self) -> bool {
        self.seats.iter().flatten().any(|p| p.bot.is_none())
    }

    /// The game's public start position, as stored with the game.
    pub fn initial_position(&self) -> String {
        self.game.initial_position()
    }

    /// The game's secret when it is new (after creation), for the store's
    /// `game_secrets` row; the steps write later ones themselves ([`Op::Secret`]).
    pub fn take_secret(&mut self) -> Option<String> {
        self.game.take_secret()
    }

    /// Keeps the last `n` events (at least 1) for reconnecting clients.
    pub fn set_log_keep(&mut self, n: usize) {
        self.log_keep = n.max(1);
        while self.log.len() > self.log_keep {
            self.log.pop_front();
        }
    }

    /// Stores at most `n` chat lines per channel (then `chat_full`).
    pub fn set_chat_cap(&mut self, n: u32) {
        self.chat_cap = n;
    }

    /// Rebuilds a room from the store at game time `now` (the last event's
    /// time): the variant replays every stored command from the public start
    /// position and the game's secret; clocks come back as stored after the
    /// last move and the side to move's turn starts afresh; every seat gets a
    /// fresh grace period. Returns the room and the step announcing it.
    pub fn restore(stored: StoredGame) -> Result<(Room, Step, u64), String> {
        let mut events = Vec::with_capacity(stored.events.len());
        let mut clocks = Clocks::new(tc(&stored.settings));
        for e in &stored.events {
            if let Some((remaining, periods)) = e.clocks {
                clocks = Clocks::restore(tc(&stored.settings), remaining, periods);
            }
            events.push((e.side, e.action.clone(), e.at_ms));
        }
        let game = games::restore_game(
            &stored.id,
            &stored.settings,
            &stored.initial_position,
            stored.secret.as_deref(),
            &events,
        )?;
        // The actions as the seats sent them (what a resent move is told
        // by): the stored command texts of the board actions, not the
        // game's record (三国暗棋 records a flip with what it revealed).
        let moves = stored
            .events
            .iter()
            .filter_map(|e| e.action.strip_prefix("move ").map(|m| (e.side, m.to_owned())))
            .collect();
        // Arbiter actions: time added since the last move's stored clocks,
        // and whether the clocks stand paused.
        let after_last_move = stored
            .events
            .iter()
            .rposition(|e| e.clocks.is_some())
            .map_or(0, |i| i + 1);
        let mut paused = false;
        for a in &stored.arbiter {
            match a.action {
                ArbiterAction::AddTime { side, ms } if a.after_seq as usize >= after_last_move => {
                    clocks.add_time(side.into(), ms);
                }
                ArbiterAction::Pause => paused = true,
                // A verdict ends the game and the pause with it, as it did live.
                ArbiterAction::Resume | ArbiterAction::Adjudicate { .. } | ArbiterAction::Abort => paused = false,
                _ => {}
            }
        }
        // The arbiter's verdict (or correction), or an abort's no-shows:
        // results the engine does not rebuild.
        let verdict = if stored.phase == Phase::Finished && stored.result != game.result() {
            stored.result.clone()
        } else {
            None
        };
        // An arbiter's verdict stopped the clock of the seat to move: the room
        // charged it the turn it was thinking on (as a flag or a resignation
        // would), which no event row holds. Charge it again from the last
        // event to the verdict, less the time the clocks stood paused.
        if verdict.is_some()
            && let Some(turn) = game.to_move()
            && let Some(last) = stored.events.last()
            && let Some(end) = stored.arbiter.iter().rev().find(|a| {
                a.after_seq as usize == stored.events.len()
                    && matches!(a.action, ArbiterAction::Adjudicate { .. } | ArbiterAction::Abort)
            })
        {
            let mut paused_since = None;
            let mut paused_ms = 0;
            for a in stored
                .arbiter
                .iter()
                .filter(|a| a.after_seq as usize == stored.events.len())
            {
                match a.action {
                    ArbiterAction::Pause => paused_since = Some(a.at_ms),
                    ArbiterAction::Resume => {
                        paused_ms += paused_since.take().map_or(0, |p| a.at_ms.saturating_sub(p));
                    }
                    _ => {}
                }
                if std::ptr::eq(a, end) {
                    break;
                }
            }
            paused_ms += paused_since.map_or(0, |p| end.at_ms.saturating_sub(p));
            clocks.start_turn(turn.into(), last.at_ms);
            clocks.remove(turn.into(), end.at_ms.saturating_sub(paused_ms).max(last.at_ms));
        }
        let now = stored
            .events
            .last()
            .map(|e| e.at_ms)
            .into_iter()
            .chain(stored.arbiter.iter().map(|a| a.at_ms))
            .max()
            .unwrap_or(0);
        let mut room = Room {
            id: stored.id,
            settings: stored.settings,
            phase: stored.phase,
            game,
            clocks,
            seats: stored.seats,
            online: [0; 3],
            absent_deadline: [None; 3],
            v: stored.v,
            log: VecDeque::new(),
            moves,
            lag_quota: [LAG_QUOTA_MAX; 3],
            lag_seen: [0; 3],
            chat: HashMap::new(),
            chat_lines: stored.chat_lines,
            chat_cap: CHAT_LINES_PER_CHANNEL,
            log_keep: LOG_KEEP,
            paused,
            verdict,
            deal_due: None,
            no_seed: [false; 3],
        };
        let mut step = Step::default();
        // A full table that was waiting for seeds waits afresh (its seeds are
        // stored with the game; the clocks have not started).
        if room.phase == Phase::Open && room.game.awaits_deal() && room.seats.iter().all(Option::is_some) {
            room.deal_due = Some(now + SEED_WAIT_MS);
        }
        if room.phase == Phase::Live
            && let Some(turn) = room.game.to_move()
        {
            room.clocks.start_turn(turn.into(), now);
            if room.paused {
                room.clocks.pause(now);
            } else {
                for s in room.game.live() {
                    if room.bot_at(s).is_none() {
                        room.absent_deadline[s.index()] = Some(now + room.settings.grace_ms);
                    }
                }
            }
            let status = room.status(now);
            room.push(&mut step, Audience::All, GameEvent::Restored { status });
        }
        Ok((room, step, now))
    }

    /// The last version handed out.
    pub fn v(&self) -> u64 {
        self.v
    }

    /// The game.
    pub fn game(&self) -> &dyn RoomGame {
        self.game.as_ref()
    }

    /// The seat a player holds.
    pub fn seat_of(&self, player: &str) -> Option<Side> {
        Side::ALL
            .into_iter()
            .find(|s| self.seats[s.index()].as_ref().is_some_and(|p| p.id == player))
    }

    fn push(&mut self, step: &mut Step, audience: Audience, event: GameEvent) {
        self.v += 1;
        let mut logged = Logged {
            v: self.v,
            audience,
            event,
        };
        // The last entry dropped takes the new one.
        let mut recycled = None;
        while self.log.len() >= self.log_keep {
            recycled = self.log.pop_front();
        }
        self.log.push_back(Kept::new(&mut logged, recycled));
        step.events.push(logged);
    }

    /// The state of play at `now`: the game's public status, with the
    /// room's clocks and pause.
    pub fn status(&self, now: u64) -> Status {
        let playing = self.phase == Phase::Live && !self.game.is_finished() && !self.paused;
        let mut status = self.game.status(playing);
        status.clocks = self.clocks.view(now).map(protocol::Clock::from);
        status.paused = self.paused;
        status
    }

    /// With the finish, the store keeps the game's final state as the
    /// spectators see it, its own record lines included (the record and the
    /// state of a finished game read it, they do not replay the game):
    /// variants with record lines of their own only.
    fn keep_final(&self, step: &mut Step, now: u64) {
        if games::has_notes(self.settings.variant) {
            step.ops.push(Op::Final(Box::new(self.view(Viewer::Spectator, now))));
        }
    }

    /// The result: the game's, or the arbiter's verdict.
    pub fn result(&self) -> Option<GameResult> {
        self.verdict.clone().or_else(|| self.game.result())
    }

    /// Whether an arbiter paused the clocks.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    fn seat_info(&self, side: Side) -> Option<SeatInfo> {
        self.seats[side.index()]
            .as_ref()
            .map(|p| p.seat_info(self.online[side.index()] > 0))
    }

    /// The level of the bot in a seat (`None`: a person, or nobody).
    pub fn bot_at(&self, side: Side) -> Option<bot::Level> {
        self.seats[side.index()].as_ref().and_then(|p| p.bot)
    }

    /// What a bot of this game has to think about now, if anything: the
    /// answer to a pending draw offer first (in seat order), then the move of
    /// the side to move. `None` unless the game is live.
    pub fn bot_job(&self, now: u64) -> Option<bots::Job> {
        if self.phase != Phase::Live || self.game.is_finished() || self.paused {
            return None;
        }
        let epoch = self.game.epoch();
        if let Some((side, level)) = self
            .game
            .pending_offer_waiting()
            .into_iter()
            .find_map(|s| self.bot_at(s).map(|l| (s, l)))
        {
            return Some(bots::Job {
                side,
                level,
                epoch,
                task: bots::Task::AnswerDraw,
                think_ms: bots::ANSWER_MS,
            });
        }
        let turn = self.game.to_move()?;
        let level = self.bot_at(turn)?;
        let view = self.clocks.view(now)[turn.index()];
        Some(bots::Job {
            side: turn,
            level,
            epoch,
            task: bots::Task::Move { ply: self.game.plies() },
            think_ms: bots::think_ms(&self.settings.time_control, &view),
        })
    }

    /// The number of commands the game accepted so far: a bot's answer
    /// computed for another epoch is stale.
    pub fn epoch(&self) -> usize {
        self.game.epoch()
    }

    /// The spectators' view at `now` (what an anonymous reader may see).
    pub fn snapshot(&self, now: u64) -> Snapshot {
        self.view(Viewer::Spectator, now)
    }

    /// The state at `now` as `viewer` may see it: every snapshot a connection
    /// or an HTTP reader gets is made here. (三国象棋 hides nothing from
    /// anyone in a snapshot: the chat is not in it.)
    pub fn view(&self, viewer: Viewer, now: u64) -> Snapshot {
        let _ = viewer;
        Snapshot {
            id: self.id.clone(),
            v: self.v,
            phase: self.phase,
            settings: self.settings.clone(),
            seats: Side::ALL.map(|s| self.seat_info(s)),
            status: self.status(now),
            // The game's record of the actions (三国暗棋: a flip with what it
            // revealed, `+g2=A`), live and restored alike.
            moves: self.game.moves().into_iter().map(|(_, m)| m).collect(),
            departures: self.game.departures(),
            limits: self.game.limits(),
            notes: self.game.notes(),
            result: self.result(),
        }
    }

    /// What a (re)connecting client holding version `last` must receive: the
    /// missed events, or `None` when a snapshot is needed.
    pub fn missed_since(&self, last: u64) -> Option<Vec<Logged>> {
        if last > self.v {
            return None;
        }
        if last == self.v {
            return Some(Vec::new());
        }
        let first = self.log.front()?.v;
        if last + 1 < first {
            return None;
        }
        let variant = self.settings.variant;
        Some(
            self.log
                .iter()
                .filter(|l| l.v > last)
                .map(|k| k.logged(variant))
                .collect(),
        )
    }

    /// When the room must look at the time again (a flag or the end of a grace period).
    pub fn next_wakeup(&self) -> Option<u64> {
        if self.phase == Phase::Open {
            return self.deal_due;
        }
        if self.phase != Phase::Live || self.paused {
            return None;
        }
        let flag = self.clocks.deadline().map(|(side, at)| {
            let s: Side = side.into();
            at + 1 + self.lag_allowance(s)
        });
        self.absent_deadline.iter().flatten().copied().chain(flag).min()
    }

    fn lag_allowance(&self, side: Side) -> u64 {
        let i = side.index();
        self.lag_seen[i].min(self.lag_quota[i]).min(LAG_CREDIT_MAX)
    }

    /// Takes a seat for a player.
    pub fn join(
        &mut self,
        player: Player,
        side: Option<Side>,
        now: u64,
        wall_ms: i64,
    ) -> Result<(Side, Step), ErrorBody> {
        self.seat(player, side, None, false, now, wall_ms)
    }

    /// Takes a seat for a player who asked for it (`POST …/join`), with the
    /// seat's seed for the deal (三国暗棋, 64 hex digits) if it sends one: a
    /// bad seed, or a seed for a game that takes none, is refused and nothing
    /// changes. A player who joins without a seed contributes none: a full
    /// table does not wait for it (a seat the server placed — tournaments,
    /// quick pairing, seeks — may send its seed later, [`Room::seed`]).
    pub fn join_seeded(
        &mut self,
        player: Player,
        side: Option<Side>,
        seed: Option<&str>,
        now: u64,
        wall_ms: i64,
    ) -> Result<(Side, Step), ErrorBody> {
        self.seat(player, side, seed, true, now, wall_ms)
    }

    fn seat(
        &mut self,
        player: Player,
        side: Option<Side>,
        seed: Option<&str>,
        asked: bool,
        now: u64,
        wall_ms: i64,
    ) -> Result<(Side, Step), ErrorBody> {
        if self.phase != Phase::Open {
            return Err(err(ErrorCode::NotOpen, "the game is not waiting for players"));
        }
        if let Some(s) = self.seat_of(&player.id) {
            return Err(err(ErrorCode::AlreadySeated, format!("you already sit at {s}")));
        }
        if let Some(seed) = seed {
            // Checked before the seat is taken: a refusal changes nothing.
            games::parse_seed(seed)?;
            if !self.game.awaits_deal() {
                return Err(err(
                    ErrorCode::BadRequest,
                    format!(
                        "this {} game takes no seed: only 三国暗棋's seat-entropy deal does",
                        self.settings.variant.title()
                    ),
                ));
            }
        }
        let side = if self.game.draws_seats() {
            // The variant draws the seating (三国暗棋 R-2): each joiner gets a
            // free seat uniformly at random (the OS-seeded CSPRNG), whatever it
            // asked for, so that a full table is a uniform permutation.
            let free: Vec<Side> = Side::ALL
                .into_iter()
                .filter(|s| self.seats[s.index()].is_none())
                .collect();
            *free
                .get(rand::random_range(0..free.len().max(1)))
                .ok_or_else(|| err(ErrorCode::NotOpen, "no free seat"))?
        } else {
            match side {
                Some(s) if self.seats[s.index()].is_some() => {
                    return Err(err(ErrorCode::SeatTaken, format!("seat {s} is taken")));
                }
                Some(s) => s,
                None => Side::ALL
                    .into_iter()
                    .find(|s| self.seats[s.index()].is_none())
                    .ok_or_else(|| err(ErrorCode::NotOpen, "no free seat"))?,
            }
        };
        let mut step = Step::default();
        step.ops.push(Op::Seat {
            side,
            player: player.id.clone(),
            bot: player.bot.map(|l| (player.name.clone(), l)),
            wall_ms,
        });
        self.seats[side.index()] = Some(player);
        let seat = self.seat_info(side).unwrap_or_else(|| unreachable_seat(side));
        self.push(&mut step, Audience::All, GameEvent::Joined { side, seat });
        if let Some(seed) = seed {
            self.take_seed(side, seed, now, wall_ms, &mut step)?;
        } else if asked {
            self.no_seed[side.index()] = true;
        }
        if self.seats.iter().all(Option::is_some) {
            if self.game.awaits_deal() && self.waits_for_seeds() {
                // The people who sent no seed yet get a little time to send it.
                self.deal_due = Some(now + SEED_WAIT_MS);
            } else {
                self.begin(now, wall_ms, &mut step)?;
            }
        }
        Ok((side, step))
    }

    /// A seat's seed: taken by the game, stored as a command, and published
    /// (a `state` event whose status lists the seeds).
    fn take_seed(&mut self, side: Side, seed: &str, now: u64, wall_ms: i64, step: &mut Step) -> Result<(), ErrorBody> {
        self.game.seed(side, seed)?;
        step.ops.push(Op::Event(EventRow {
            seq: self.game.epoch() as u64 - 1,
            v: self.v + 1,
            side,
            action: format!("{}{seed}", games::SEED_PREFIX),
            at_ms: now,
            wall_ms,
            spent_ms: None,
            lag_ms: None,
            clocks: None,
        }));
        let status = self.status(now);
        self.push(step, Audience::All, GameEvent::State { status });
        Ok(())
    }

    /// A seated player's seed sent after its join (the `seed` message): taken
    /// until the deal; when it is the last one a full table waits for, the
    /// room deals and turn 1 begins.
    pub fn seed(&mut self, side: Side, seed: &str, now: u64, wall_ms: i64) -> Result<Step, ErrorBody> {
        if self.phase == Phase::Finished {
            return Err(err(ErrorCode::GameOver, "the game is over"));
        }
        // The game refuses in its own words: a bad seed, a second one, one
        // after the deal, or any in a variant without seeds.
        let mut step = Step::default();
        self.take_seed(side, seed, now, wall_ms, &mut step)?;
        if self.seats.iter().all(Option::is_some) && !self.waits_for_seeds() {
            self.begin(now, wall_ms, &mut step)?;
        }
        Ok(step)
    }

    /// Whether a seated person may still send a seed the table waits for:
    /// not a bot, not one who joined without a seed, not one who sent it.
    fn waits_for_seeds(&self) -> bool {
        Side::ALL
            .into_iter()
            .any(|s| self.bot_at(s).is_none() && !self.no_seed[s.index()] && !self.game.has_seed(s))
    }

    /// The table is full (and its seeds are in): deals if the game waits for
    /// its deal, then the game goes live and turn 1 begins.
    fn begin(&mut self, now: u64, wall_ms: i64, step: &mut Step) -> Result<(), ErrorBody> {
        self.deal_due = None;
        if self.game.awaits_deal() {
            self.game.deal()?;
            step.ops.push(Op::Event(EventRow {
                seq: self.game.epoch() as u64 - 1,
                v: self.v + 1,
                side: Side::W,
                action: games::DEAL_TEXT.to_owned(),
                at_ms: now,
                wall_ms,
                spent_ms: None,
                lag_ms: None,
                clocks: None,
            }));
        }
        self.phase = Phase::Live;
        step.ops.push(Op::Phase {
            phase: Phase::Live,
            result: None,
            wall_ms,
        });
        if let Some(turn) = self.game.to_move() {
            self.clocks.start_turn(turn.into(), now);
        }
        for s in Side::ALL {
            if self.online[s.index()] == 0 && self.bot_at(s).is_none() {
                self.absent_deadline[s.index()] = Some(now + self.settings.grace_ms);
            }
        }
        let status = self.status(now);
        self.push(step, Audience::All, GameEvent::Started { status });
        Ok(())
    }

    /// Fills a free seat (the first in W, B, Y order if `side` is `None`) with
    /// a bot of `level` whose player id is `id` (unique, e.g. `bot-` and
    /// random hex): the same rules as [`Room::join`]; the seat is written
    /// with the bot's player row. The bot is always present (no grace
    /// period); its moves come from the actor ([`super::bots`]).
    pub fn add_bot(
        &mut self,
        id: String,
        level: bot::Level,
        side: Option<Side>,
        now: u64,
        wall_ms: i64,
    ) -> Result<(Side, Step), ErrorBody> {
        self.join(Player::new_bot(id, level), side, now, wall_ms)
    }

    /// A connection for `side` (or a spectator) arrived.
    pub fn connected(&mut self, side: Option<Side>) -> Step {
        let mut step = Step::default();
        let Some(side) = side else { return step };
        let i = side.index();
        self.online[i] += 1;
        if self.online[i] == 1 && self.phase != Phase::Finished {
            self.absent_deadline[i] = None;
            self.push(
                &mut step,
                Audience::All,
                GameEvent::Presence {
                    side,
                    online: true,
                    grace_ms: None,
                },
            );
        }
        step
    }

    /// A connection for `side` (or a spectator) left.
    pub fn disconnected(&mut self, side: Option<Side>, now: u64) -> Step {
        let mut step = Step::default();
        let Some(side) = side else { return step };
        let i = side.index();
        self.online[i] = self.online[i].saturating_sub(1);
        if self.online[i] == 0 && self.phase != Phase::Finished {
            let live = self.phase == Phase::Live && self.game.is_live(side);
            let grace = live.then_some(self.settings.grace_ms);
            if live {
                self.absent_deadline[i] = Some(now + self.settings.grace_ms);
            }
            self.push(
                &mut step,
                Audience::All,
                GameEvent::Presence {
                    side,
                    online: false,
                    grace_ms: grace,
                },
            );
        }
        step
    }

    /// A player acts for its seat. `lag_ms`: the connection's measured one-way lag.
    pub fn act(&mut self, side: Side, act: Act, lag_ms: u64, now: u64, wall_ms: i64) -> Result<Step, ErrorBody> {
        if let Act::Seed(seed) = &act {
            return self.seed(side, seed, now, wall_ms);
        }
        // A move resent after a reconnect that was already played is answered as such
        // whatever happened since (the side mated, the game over, the clocks paused):
        // the client learns that its move counted.
        if let Act::Move { ply, mv } = &act
            && let Some((s, m)) = self.moves.get(*ply as usize)
            && *s == side
            && m == mv
        {
            return Err(err(
                ErrorCode::DuplicateMove,
                format!(
                    "{mv} was already played at ply {ply}; the game is at ply {}",
                    self.game.plies()
                ),
            ));
        }
        match self.phase {
            Phase::Open => return Err(err(ErrorCode::NotStarted, "the game has not started")),
            Phase::Finished => return Err(err(ErrorCode::GameOver, "the game is over")),
            Phase::Live => {}
        }
        if self.paused {
            return Err(err(
                ErrorCode::Paused,
                "an arbiter paused the clocks; wait until they run again",
            ));
        }
        if !self.game.is_live(side) {
            return Err(err(ErrorCode::NotLive, format!("{side} is no longer in the game")));
        }
        self.lag_seen[side.index()] = lag_ms;
        let cmd = match act {
            Act::Move { ply, mv } => {
                let current = self.game.plies();
                if ply < current {
                    let dup = self
                        .moves
                        .get(ply as usize)
                        .is_some_and(|(s, m)| *s == side && *m == mv);
                    return Err(if dup {
                        err(
                            ErrorCode::DuplicateMove,
                            format!("{mv} was already played at ply {ply}; the game is at ply {current}"),
                        )
                    } else {
                        err(
                            ErrorCode::StaleMove,
                            format!("ply {ply} is over; the game is at ply {current}"),
                        )
                    });
                }
                if ply > current {
                    return Err(err(
                        ErrorCode::StaleMove,
                        format!("ply {ply} is ahead; the game is at ply {current}"),
                    ));
                }
                match self.game.to_move() {
                    Some(turn) if turn == side => {}
                    Some(turn) => {
                        return Err(err(
                            ErrorCode::NotYourTurn,
                            format!("it is {turn}'s turn, not {side}'s"),
                        ));
                    }
                    None => return Err(err(ErrorCode::GameOver, "the game is over")),
                }
                // The move's one legality check is the game's `apply` below.
                Command::Play(mv)
            }
            Act::Resign => Command::Resign,
            Act::OfferDraw => Command::OfferDraw,
            Act::AnswerDraw(accept) => Command::AnswerDraw(accept),
            // Taken at the top, before the phase is looked at.
            Act::Seed(_) => return Err(err(ErrorCode::BadRequest, "a seed is not an action of play")),
        };
        let mut step = Step::default();
        let mut spent = None;
        let mut lag_credit = None;
        let clocks_before = self.clocks.clone();
        let quota_before = self.lag_quota;
        if matches!(cmd, Command::Play(_)) {
            let i = side.index();
            let credit = lag_ms.min(self.lag_quota[i]).min(LAG_CREDIT_MAX);
            match self.clocks.finish_turn(side.into(), now, credit) {
                Ok(s) => {
                    self.lag_quota[i] = (self.lag_quota[i] - credit + LAG_QUOTA_GAIN).min(LAG_QUOTA_MAX);
                    spent = Some(s);
                    lag_credit = Some(credit);
                }
                Err(_) => {
                    // Too late: the flag falls instead of the move (whatever
                    // the move was: it is not looked at).
                    self.apply(side, Command::Timeout, now, wall_ms, None, &mut step)?;
                    return Ok(step);
                }
            }
        }
        if let Err(e) = self.apply(
            side,
            cmd,
            now,
            wall_ms,
            spent.map(|s| (s, lag_credit.unwrap_or(0))),
            &mut step,
        ) {
            // Refused by the game: nothing changed, the clocks included.
            self.clocks = clocks_before;
            self.lag_quota = quota_before;
            return Err(e);
        }
        Ok(step)
    }

    /// Applies a command to the game and turns what happened into writes and
    /// events. On `Err` nothing changed (but the clocks, which the caller
    /// restores).
    fn apply(
        &mut self,
        side: Side,
        cmd: Command,
        now: u64,
        wall_ms: i64,
        spent_lag: Option<(u64, u64)>,
        step: &mut Step,
    ) -> Result<(), ErrorBody> {
        let played = matches!(cmd, Command::Play(_));
        let text = self.game.command_text(&cmd);
        let happened = self.game.apply(side, cmd, now)?;
        // Clocks: eliminated sides stop, charged for the turn they were
        // thinking on (a flag leaves 0); the next side's turn starts.
        let mut charged = false;
        for h in &happened {
            if let Happened::Eliminated(d) = h {
                let s: engine::Side = d.side.into();
                charged |= self.clocks.running() == Some(s);
                self.clocks.remove(s, now);
                self.absent_deadline[d.side.index()] = None;
            }
        }
        let finished = self.game.is_finished();
        if finished {
            if let Some(s) = self.clocks.running() {
                charged = true;
                self.clocks.remove(s, now);
            }
            // An abandonment that aborts the game: every other side whose
            // grace is over as well is a no-show too (tournaments score them
            // all as losses).
            if let Some(r) = self.game.result()
                && let Ending::Aborted { by } = r.ending
            {
                let others = Side::ALL
                    .into_iter()
                    .filter(|&s| s != by && self.absent_deadline[s.index()].is_some_and(|d| d <= now));
                let no_shows: Vec<Side> = std::iter::once(by).chain(others).collect();
                if no_shows.len() > 1 {
                    self.verdict = Some(GameResult { no_shows, ..r });
                }
            }
            self.absent_deadline = [None; 3];
        } else if let Some(turn) = self.game.to_move() {
            let turn: engine::Side = turn.into();
            if played || self.clocks.running() != Some(turn) {
                self.clocks.start_turn(turn, now);
            }
        }
        let seq = self.game.epoch() as u64 - 1;
        let first_v = self.v + 1;
        let (spent_ms, lag_ms) = match spent_lag {
            Some((s, l)) => (Some(s), Some(l)),
            None => (None, None),
        };
        step.ops.push(Op::Event(EventRow {
            seq,
            v: first_v,
            side,
            action: text,
            at_ms: now,
            wall_ms,
            spent_ms,
            lag_ms,
            clocks: (spent_ms.is_some() || charged).then(|| (self.clocks.remaining(), self.clocks.periods_left())),
        }));
        if let Some(secret) = self.game.take_secret() {
            step.ops.push(Op::Secret(secret));
        }
        // Used once (by the move, or the state event): taken, not copied.
        let mut status = Some(self.status(now));
        let mut moved = false;
        for h in happened {
            let event = match h {
                Happened::Moved {
                    side,
                    mv,
                    captured,
                    checks,
                    revealed,
                } => {
                    moved = true;
                    step.moves += 1;
                    self.moves.push((side, mv.clone()));
                    GameEvent::Moved {
                        side,
                        mv,
                        ply: self.moves.len() as u32 - 1,
                        spent_ms: spent_ms.unwrap_or(0),
                        captured,
                        checks,
                        revealed,
                        status: status.take().unwrap_or_else(|| self.status(now)),
                    }
                }
                Happened::Warned { side, request } => GameEvent::Warned { side, request },
                Happened::Eliminated(d) => GameEvent::Eliminated(d),
                Happened::DrawOffered { by, to } => GameEvent::DrawOffered { by, to },
                Happened::DrawAnswered { by, accept } => GameEvent::DrawAnswered { by, accept },
                Happened::DrawOfferLapsed { by } => GameEvent::DrawOfferLapsed { by },
                Happened::Noted { side, text } => GameEvent::Noted { side, text },
                Happened::Finished(r) => {
                    // The state first (the board as it ended), then the result.
                    if !moved {
                        moved = true;
                        let status = status.take().unwrap_or_else(|| self.status(now));
                        self.push(step, Audience::All, GameEvent::State { status });
                    }
                    GameEvent::Finished {
                        result: self.verdict.clone().unwrap_or(r),
                    }
                }
            };
            self.push(step, Audience::All, event);
        }
        if !moved {
            let status = status.take().unwrap_or_else(|| self.status(now));
            self.push(step, Audience::All, GameEvent::State { status });
        }
        if finished {
            self.phase = Phase::Finished;
            self.keep_final(step, now);
            step.ops.push(Op::Phase {
                phase: Phase::Finished,
                result: self.result(),
                wall_ms,
            });
        }
        Ok(())
    }

    /// Looks at the time: flags and abandonments due by `now`.
    pub fn tick(&mut self, now: u64, wall_ms: i64) -> Step {
        let mut step = Step::default();
        if self.phase == Phase::Open
            && self.deal_due.is_some_and(|d| d <= now)
            && let Err(e) = self.begin(now, wall_ms, &mut step)
        {
            tracing::error!(game = %self.id, error = %e.message, "the deal failed");
        }
        while self.phase == Phase::Live && !self.paused {
            if let Some((side, _)) = self.clocks.deadline() {
                let side: Side = side.into();
                let allowance = self.lag_allowance(side);
                if self.clocks.flagged(now.saturating_sub(allowance)) == Some(side.into()) {
                    if self
                        .apply(side, Command::Timeout, now, wall_ms, None, &mut step)
                        .is_err()
                    {
                        break;
                    }
                    continue;
                }
            }
            let due = Side::ALL
                .into_iter()
                .find(|s| self.absent_deadline[s.index()].is_some_and(|d| d <= now));
            match due {
                Some(s) => {
                    self.absent_deadline[s.index()] = None;
                    if self.game.is_live(s) {
                        let _ = self.apply(s, Command::Abandon, now, wall_ms, None, &mut step);
                    }
                }
                None => break,
            }
        }
        step
    }

    /// A tournament arbiter acts on the game (the caller checked the right to).
    /// Pause and resume stop and restart the clocks (and the abandonment
    /// timers: an absent player gets a fresh grace period on resume); add
    /// time gives a live side main time; adjudicate and abort end the game
    /// with the arbiter's outcomes or with no result. Logged with who and why.
    pub fn arbiter(
        &mut self,
        by: &Player,
        action: ArbiterAction,
        reason: &str,
        now: u64,
        wall_ms: i64,
    ) -> Result<Step, ErrorBody> {
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
            return Err(err(
                ErrorCode::BadRequest,
                format!("an arbiter's reason has 1 to {MAX_REASON_CHARS} characters"),
            ));
        }
        // A finished game's result may be corrected (adjudicated anew), nothing else.
        let correcting = self.phase == Phase::Finished;
        if correcting && !matches!(action, ArbiterAction::Adjudicate { .. }) {
            return Err(err(
                ErrorCode::GameOver,
                "the game is over: only its result can be corrected (adjudicate)",
            ));
        }
        if self.phase == Phase::Open && action != ArbiterAction::Abort {
            return Err(err(ErrorCode::NotStarted, "the game has not started"));
        }
        let live = self.game.live();
        let mut verdict = None;
        match action {
            ArbiterAction::Pause => {
                if self.paused {
                    return Err(err(ErrorCode::Paused, "the clocks are already paused"));
                }
                self.clocks.pause(now);
                self.paused = true;
            }
            ArbiterAction::Resume => {
                if !self.paused {
                    return Err(err(ErrorCode::BadRequest, "the clocks are not paused"));
                }
                self.clocks.resume(now);
                self.paused = false;
                for s in &live {
                    let i = s.index();
                    self.absent_deadline[i] = (self.online[i] == 0).then_some(now + self.settings.grace_ms);
                }
            }
            ArbiterAction::AddTime { side, ms } => {
                if ms == 0 || ms > MAX_ADD_TIME_MS {
                    return Err(err(ErrorCode::BadRequest, "ms is 1 to 3,600,000 (an hour)"));
                }
                if !live.contains(&side) {
                    return Err(err(ErrorCode::NotLive, format!("{side} is no longer in the game")));
                }
                self.clocks.add_time(side.into(), ms);
            }
            ArbiterAction::Adjudicate { outcomes } => {
                let wins = outcomes.iter().filter(|o| **o == Outcome::Win).count();
                let draws = outcomes.iter().filter(|o| **o == Outcome::Draw).count();
                if wins > 1 || (wins == 1 && draws > 0) || wins + draws == 0 {
                    return Err(err(
                        ErrorCode::BadRequest,
                        "outcomes: one win and two losses, or draws for some and losses for the rest",
                    ));
                }
                // A side that left must lose — unless the result of a game over
                // is being corrected (the arbiter may find the departure wrong).
                if let Some(s) = Side::ALL
                    .into_iter()
                    .find(|s| !correcting && !live.contains(s) && outcomes[s.index()] != Outcome::Loss)
                {
                    return Err(err(
                        ErrorCode::BadRequest,
                        format!("{s} has left the game: its outcome is a loss"),
                    ));
                }
                verdict = Some(GameResult {
                    ending: Ending::Adjudicated,
                    outcomes: outcomes.map(Some),
                    eliminations: self.game.departures(),
                    no_shows: Vec::new(),
                    placing: None,
                    scores: None,
                });
            }
            ArbiterAction::Abort => {
                verdict = Some(GameResult {
                    ending: Ending::Annulled,
                    outcomes: [None; 3],
                    eliminations: self.game.departures(),
                    no_shows: Vec::new(),
                    placing: None,
                    scores: None,
                });
            }
        }
        let mut step = Step::default();
        step.ops.push(Op::Arbiter(ArbiterRow {
            v: self.v + 1,
            after_seq: self.game.epoch() as u64,
            at_ms: now,
            wall_ms,
            by: by.id.clone(),
            by_name: by.name.clone(),
            reason: reason.to_owned(),
            action,
        }));
        if verdict.is_some() {
            if let Some(s) = self.clocks.running() {
                self.clocks.remove(s, now);
            }
            self.absent_deadline = [None; 3];
            self.paused = false;
            self.phase = Phase::Finished;
            self.verdict = verdict.clone();
        }
        let status = self.status(now);
        self.push(
            &mut step,
            Audience::All,
            GameEvent::Arbiter {
                by: by.name.clone(),
                action,
                reason: reason.to_owned(),
                status,
            },
        );
        if let Some(result) = verdict {
            self.keep_final(&mut step, now);
            step.ops.push(Op::Phase {
                phase: Phase::Finished,
                result: Some(result.clone()),
                wall_ms,
            });
            self.push(&mut step, Audience::All, GameEvent::Finished { result });
        }
        Ok(step)
    }

    /// A chat line. `side`: the writer's seat in this game, if any.
    pub fn chat(
        &mut self,
        player: &Player,
        side: Option<Side>,
        channel: Channel,
        text: &str,
        now: u64,
        wall_ms: i64,
    ) -> Result<Step, ErrorBody> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_CHAT_CHARS {
            return Err(err(
                ErrorCode::BadChat,
                format!("a chat line has 1 to {MAX_CHAT_CHARS} characters"),
            ));
        }
        let audience = match (channel, side) {
            (Channel::Players, None) => {
                return Err(err(
                    ErrorCode::NotAPlayer,
                    "only seated players write in the players' channel",
                ));
            }
            (Channel::Players, Some(_)) if !self.settings.players_chat => {
                return Err(err(ErrorCode::ChatDisabled, "the players' chat is off in this game"));
            }
            (Channel::Players, Some(_)) => Audience::Players,
            (Channel::Spectators, Some(_)) if self.phase != Phase::Finished => {
                return Err(err(
                    ErrorCode::BadChat,
                    "players cannot write to spectators during the game",
                ));
            }
            // After the game the spectators' channel is everyone's: players and
            // watchers talk it over.
            (Channel::Spectators, _) if self.phase == Phase::Finished => Audience::All,
            (Channel::Spectators, _) => Audience::Spectators,
        };
        // Before the rate limit: a refused line takes no token.
        if self.chat_lines[chat_slot(channel)] >= self.chat_cap {
            return Err(err(
                ErrorCode::ChatFull,
                format!(
                    "this game's {} channel holds as many lines as it keeps ({})",
                    channel.as_str(),
                    self.chat_cap
                ),
            ));
        }
        if self.chat.len() >= CHAT_BUCKETS_KEPT && !self.chat.contains_key(&player.id) {
            self.chat.retain(|_, b| {
                let refill = now.saturating_sub(b.last) / CHAT_REFILL_MS;
                u64::from(b.tokens) + refill < u64::from(CHAT_BURST)
            });
        }
        let b = self.chat.entry(player.id.clone()).or_insert(Bucket {
            tokens: CHAT_BURST,
            last: now,
        });
        let refill = (now.saturating_sub(b.last) / CHAT_REFILL_MS) as u32;
        if refill > 0 {
            b.tokens = (b.tokens + refill).min(CHAT_BURST);
            b.last += u64::from(refill) * CHAT_REFILL_MS;
        }
        if b.tokens == 0 {
            return Err(err(ErrorCode::RateLimited, "too many chat lines; wait a little"));
        }
        b.tokens -= 1;
        self.chat_lines[chat_slot(channel)] += 1;
        let mut step = Step::default();
        step.ops.push(Op::Chat {
            v: self.v + 1,
            channel,
            player: player.id.clone(),
            name: player.name.clone(),
            text: text.to_owned(),
            wall_ms,
        });
        self.push(
            &mut step,
            audience,
            GameEvent::Chat {
                channel,
                from: player.name.clone(),
                side,
                text: text.to_owned(),
            },
        );
        Ok(step)
    }
}

fn unreachable_seat(side: Side) -> SeatInfo {
    SeatInfo {
        player: String::new(),
        name: side.to_string(),
        online: false,
        bot: None,
    }
}

#[cfg(test)]
mod tests;
