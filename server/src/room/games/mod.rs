//! What a room asks of a game, in any variant: the [`RoomGame`] trait, one
//! implementation per variant (an adapter around the variant's engine game),
//! and the one place that dispatches on [`protocol::Variant`] to make or
//! restore one ([`new_game`], [`restore_game`], [`relist`]).
//!
//! The room core (`super::core`), the store and the HTTP and WebSocket layers
//! hold a `Box<dyn RoomGame>` and never look inside: clocks, seats, grace
//! periods, chat, arbiters, versions and the per-viewer projection are
//! shared; everything a variant's rules decide is behind the trait.
//!
//! **What may leave a game.** [`RoomGame::status`], the [`Happened`] list of
//! [`RoomGame::apply`], [`RoomGame::result`], [`RoomGame::departures`],
//! [`RoomGame::moves`], [`RoomGame::initial_position`] and
//! [`RoomGame::command_text`] are *public* by contract: a variant with hidden
//! information (三国暗棋's face-down pieces) keeps every secret out of them.
//! The secret itself leaves only through [`RoomGame::take_secret`], to the
//! store's `game_secrets` table, which only the room's restore path reads.

use protocol::{Departure, ErrorBody, ErrorCode, GameResult, GameSettings, MoveTexts, Side, Status, Variant};

pub mod anqi;
pub mod sanguo;
pub mod yanyi;

/// What a seat does (or the server does on its behalf), in any variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// The variant's action text: 三国象棋 `W72-W54`, 三国暗棋 `+b2` / `b2-b4` /
    /// `b2xb4`, 三国演弈棋 `q12-o13`.
    Play(String),
    /// The seat resigns.
    Resign,
    /// The seat offers a draw (三国暗棋: proposes ending by deadlock scoring, 申请计分).
    OfferDraw,
    /// The seat answers the pending offer or proposal.
    AnswerDraw(bool),
    /// The seat's clock ran out (the server decides).
    Timeout,
    /// The seat stayed disconnected past its grace period (the server decides).
    Abandon,
}

/// What an accepted command caused, in order; the room core turns each into
/// a protocol event. Everything here is public.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Happened {
    /// A seat played an action of the board.
    Moved {
        /// Who played.
        side: Side,
        /// The action text, as accepted.
        mv: String,
        /// The piece it captured, in the variant's notation.
        captured: Option<String>,
        /// The seats it gave check to.
        checks: Vec<Side>,
        /// The piece a flip turned face up (三国暗棋).
        revealed: Option<String>,
    },
    /// A premature request earned a warning.
    Warned {
        /// Who.
        side: Side,
        /// What it asked.
        request: protocol::Request,
    },
    /// A seat left the game.
    Eliminated(Departure),
    /// A draw (or scoring) was offered; `to` must answer.
    DrawOffered {
        /// The offerer.
        by: Side,
        /// Who must answer.
        to: Vec<Side>,
    },
    /// A seat answered the pending offer.
    DrawAnswered {
        /// Who.
        by: Side,
        /// Its answer.
        accept: bool,
    },
    /// The offer came to nothing; play goes on.
    DrawOfferLapsed {
        /// The offerer.
        by: Side,
    },
    /// A line of the variant's own record that is none of the above
    /// (三国暗棋 `claim 1 R`, `pass 2`; 三国演弈棋 an alliance made, 汉
    /// activated, pieces absorbed …).
    Noted {
        /// The seat it concerns, if one.
        side: Option<Side>,
        /// The line.
        text: String,
    },
    /// The game ended.
    Finished(GameResult),
}

/// What a bot is asked to decide.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BotAsk {
    /// Its action as the seat to move; with `may_offer`, it may offer a draw
    /// (or propose scoring) instead, if its variant's policy wants to.
    Move {
        /// Whether to weigh an offer first (the room throttles how often).
        may_offer: bool,
    },
    /// Its answer to the pending offer or proposal.
    AnswerOffer,
}

/// A bot's search, owning only what that bot may see, to run on a blocking
/// thread: it asks its [`Halt`](super::bots::Halt) whether to stop (every
/// 1024 nodes: the deadline, the room's cancel flag, the pacing of games of
/// bots alone), and returns the command the bot chooses (`None`: it found none).
pub type BotSearch = Box<dyn FnOnce(&super::bots::Halt) -> Option<Command> + Send>;

/// A game of one variant, as a room plays it. Seats are [`Side`]s on the
/// wire in every variant (`W`, `B`, `Y` = seat 1, 2, 3).
pub trait RoomGame: Send + Sync + std::fmt::Debug {
    /// The variant.
    fn variant(&self) -> Variant;

    /// The seat whose clock runs (三国演弈棋: chosen by 被将先走); `None` when over.
    fn to_move(&self) -> Option<Side>;

    /// The live seats, in turn order.
    fn live(&self) -> Vec<Side>;

    /// Whether `side` is still in the game.
    fn is_live(&self, side: Side) -> bool {
        self.live().contains(&side)
    }

    /// Whether the game has a result.
    fn is_finished(&self) -> bool;

    /// Seat actions played so far (a move message carries this number).
    fn plies(&self) -> u32;

    /// Commands accepted so far: a bot's answer computed at another epoch is
    /// stale, and the store numbers events by it.
    fn epoch(&self) -> usize;

    /// Applies a command of `side` at game time `at_ms`, atomically: on `Err`
    /// nothing changed. The one legality check of a move is here (the core
    /// does not probe first). Errors carry the protocol's codes (`bad_move`
    /// for text that does not parse, `illegal_move`, `not_your_turn`, …).
    fn apply(&mut self, side: Side, cmd: Command, at_ms: u64) -> Result<Vec<Happened>, ErrorBody>;

    /// The public state of play (never a face-down identity): position text
    /// (三国暗棋: the viewer form), turn, live, ply, round, the legal moves of
    /// the seat to move when `legal`, in_check, the pending offer, the
    /// variant's own block. The room fills `clocks` and `paused`.
    fn status(&self, legal: bool) -> Status;

    /// The result, once the rules decided one (an arbiter's verdict is the room's).
    fn result(&self) -> Option<GameResult>;

    /// The seats that left, in order.
    fn departures(&self) -> Vec<Departure>;

    /// Every board action played, in order, with its seat, as the record
    /// writes it (the snapshot's `moves`; 三国暗棋: a flip with what it
    /// revealed, `+g2=A`). The core tells a resent move from a stale one by
    /// the actions as sent, which it keeps itself.
    fn moves(&self) -> Vec<(Side, String)>;

    /// The seats that must answer an offer or proposal now (empty: none pending).
    fn pending_offer_waiting(&self) -> Vec<Side>;

    /// The public start position, stored as the game's `initial_position`
    /// (三国暗棋: the viewer form — every piece face down).
    fn initial_position(&self) -> String;

    /// Every public line of the variant's own record so far, in order: what
    /// [`Happened::Noted`] said, and what the variant publishes once over
    /// (三国暗棋: the layout and salt). Snapshots and records carry them.
    /// Default: none.
    fn notes(&self) -> Vec<protocol::Note> {
        Vec::new()
    }

    /// The §6-style limits of the game, for clients (三国象棋 only).
    fn limits(&self) -> Option<protocol::Limits> {
        None
    }

    /// The text stored for a command (the events table's `action` column);
    /// [`restore_game`] reads it back. The record (`GET
    /// /api/games/{id}/record`) shows it as it is, so it is public. Every
    /// variant keeps one convention, which the default writes: a board
    /// action is `move ` and its text (the record lists these as moves), the
    /// others `resign`, `offer_draw`, `accept_draw`, `decline_draw`,
    /// `timeout`, `abandon`. Never `|` nor `;` (the store joins rows with them).
    fn command_text(&self, cmd: &Command) -> String {
        command_text(cmd)
    }

    /// The search of a bot in `side`, owning only what that bot may see
    /// (三国暗棋: the viewer position, never the layout).
    fn bot_search(&self, side: Side, level: bot::Level, ask: BotAsk, seed: u64) -> BotSearch;

    /// Whether a bot to move should weigh offering a draw at all now (the
    /// variant's bot policy, e.g. 三国象棋: only with two seats left). The
    /// room asks before throttling. Default: never.
    fn bot_weighs_offer(&self) -> bool {
        false
    }

    /// A secret the store keeps durably where only rooms read it (三国暗棋:
    /// the layout and salt), asked after creation and after each step;
    /// `Some` once, when it is new. Default: none.
    fn take_secret(&mut self) -> Option<String> {
        None
    }

    /// Whether a joining player's seat is drawn at random among the free
    /// ones, whatever it asked for (三国暗棋 R-2: nobody chooses to act
    /// first). Default: no, the seat asked for.
    fn draws_seats(&self) -> bool {
        false
    }

    /// Whether the game waits for a deal before turn 1 (三国暗棋's
    /// seat-entropy deal, docs/ANQI-DEAL.md §4): until [`RoomGame::deal`]
    /// there is no seat to move and every command is refused. Default: no.
    fn awaits_deal(&self) -> bool {
        false
    }

    /// Whether `side` sent its seed for the deal. Default: yes (no seeds).
    fn has_seed(&self, side: Side) -> bool {
        let _ = side;
        true
    }

    /// `side`'s seed for the deal (64 lowercase hex digits), public once
    /// accepted and stored as [`SEED_PREFIX`] and the text; on `Err` nothing
    /// changed. Default: refused (the variant takes no seeds).
    fn seed(&mut self, side: Side, seed: &str) -> Result<(), ErrorBody> {
        let _ = (side, seed);
        Err(err(
            ErrorCode::BadRequest,
            format!(
                "{} takes no seeds: only 三国暗棋 deals from them",
                self.variant().title()
            ),
        ))
    }

    /// Deals now, with the seeds sent so far (stored as [`DEAL_TEXT`]).
    /// Default: nothing to deal.
    fn deal(&mut self) -> Result<(), ErrorBody> {
        Ok(())
    }
}

/// A seat's seed as the wire carries it: 64 lowercase hex digits.
pub fn parse_seed(text: &str) -> Result<[u8; 32], ErrorBody> {
    engine::anqi::deal::parse_hex32(text).ok_or_else(|| {
        err(
            ErrorCode::BadRequest,
            format!(
                "a seed is 32 bytes written as 64 lowercase hex digits (0-9, a-f), not {:?}",
                text.chars().take(80).collect::<String>()
            ),
        )
    })
}

/// The stored text of a seed (the events table's `action`): this and the hex.
pub const SEED_PREFIX: &str = "seed ";
/// The stored text of the deal.
pub const DEAL_TEXT: &str = "deal";

/// A refusal with its code and words (every adapter's errors).
pub(crate) fn err(code: ErrorCode, message: impl Into<String>) -> ErrorBody {
    ErrorBody {
        code,
        message: message.into(),
    }
}

/// The error for a variant rooms cannot play yet.
pub fn unavailable(variant: Variant) -> ErrorBody {
    ErrorBody {
        code: ErrorCode::VariantUnavailable,
        message: format!("{} ({variant}) cannot be played on this server yet", variant.title()),
    }
}

/// Whether rooms can play `variant` (the one list of playable variants).
pub fn is_playable(variant: Variant) -> bool {
    match variant {
        Variant::Sanguo | Variant::Anqi | Variant::Yanyi => true,
    }
}

/// How [`RoomGame::command_text`]'s convention begins a move's text (the
/// move's own text follows).
pub const PLAY: &str = "move ";

/// A command's stored text by [`RoomGame::command_text`]'s convention.
pub fn command_text(cmd: &Command) -> String {
    match cmd {
        // Written every move: without the formatting machinery.
        Command::Play(mv) => [PLAY, mv].concat(),
        Command::Resign => "resign".into(),
        Command::OfferDraw => "offer_draw".into(),
        Command::AnswerDraw(true) => "accept_draw".into(),
        Command::AnswerDraw(false) => "decline_draw".into(),
        Command::Timeout => "timeout".into(),
        Command::Abandon => "abandon".into(),
    }
}

/// A stored command text read back ([`RoomGame::command_text`]'s convention).
pub fn parse_command(text: &str) -> Option<Command> {
    Some(match text {
        "resign" => Command::Resign,
        "offer_draw" => Command::OfferDraw,
        "accept_draw" => Command::AnswerDraw(true),
        "decline_draw" => Command::AnswerDraw(false),
        "timeout" => Command::Timeout,
        "abandon" => Command::Abandon,
        _ => Command::Play(text.strip_prefix(PLAY)?.to_owned()),
    })
}

/// A new game of `settings.variant` for the room `id`.
pub fn new_game(id: &str, settings: &GameSettings) -> Result<Box<dyn RoomGame>, ErrorBody> {
    match settings.variant {
        Variant::Sanguo => Ok(Box::new(sanguo::SanguoGame::new(settings))),
        Variant::Anqi => Ok(Box::new(anqi::AnqiRoomGame::new(id, settings)?)),
        Variant::Yanyi => Ok(Box::new(yanyi::Yanyi::new())),
    }
}

/// A stored game of `settings.variant` rebuilt: its public start position
/// (`initial`, as [`RoomGame::initial_position`] gave it), its secret (as
/// [`RoomGame::take_secret`] gave it) and its accepted commands in order
/// (seat, [`RoomGame::command_text`], game time). The store holds only
/// commands the game accepted, so an adapter may replay them trusted.
pub fn restore_game(
    id: &str,
    settings: &GameSettings,
    initial: &str,
    secret: Option<&str>,
    events: &[(Side, String, u64)],
) -> Result<Box<dyn RoomGame>, String> {
    match settings.variant {
        Variant::Sanguo => Ok(Box::new(sanguo::SanguoGame::restore(settings, initial, events)?)),
        // The public start position is the viewer form: the deal is the secret.
        Variant::Anqi => Ok(Box::new(anqi::AnqiRoomGame::restore(id, settings, secret, events)?)),
        Variant::Yanyi => Ok(Box::new(yanyi::restore(initial, events)?)),
    }
}

/// Whether `mv` is legal in a public status, and if not why (`None`: legal):
/// the variant's own refusal, by code and parameters. Text that is no move of
/// the variant is `bad_move`.
pub fn explain(variant: Variant, status: &Status, mv: &str) -> Result<Option<protocol::Refusal>, ErrorBody> {
    match variant {
        Variant::Sanguo => sanguo::explain(status, mv),
        Variant::Anqi => anqi::explain(status, mv),
        Variant::Yanyi => yanyi::explain(status, mv),
    }
}

/// Whether games of `variant` have record lines of their own
/// ([`RoomGame::notes`]): a record of one asks the game's room for them.
pub fn has_notes(variant: Variant) -> bool {
    match variant {
        Variant::Sanguo => false,
        Variant::Anqi | Variant::Yanyi => true,
    }
}

/// The legal moves a status had, recomputed from the status alone (the
/// room's log drops them to save memory and relists them when a client
/// replays an event). Empty when they cannot be recomputed.
pub fn relist(variant: Variant, status: &Status) -> MoveTexts {
    match variant {
        Variant::Sanguo => sanguo::relist(status),
        Variant::Anqi => anqi::relist(status),
        Variant::Yanyi => yanyi::relist(status),
    }
}
