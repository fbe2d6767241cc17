//! 三国暗棋 in a room (`shared/RULES-ANQI.md`): [`RoomGame`] over the
//! engine's [`AnqiGame`], which holds the **full** position (every face-down
//! identity). Nothing of it leaves this module except through
//! [`RoomGame::take_secret`] (the layout and salt, to the store's
//! `game_secrets` table, once) and, after the end, the published layout, salt
//! and record (§10.4): every status is built from [`AnqiGame::viewer`], every
//! refusal is decided on the viewer form (§10.1: the same answer as the full
//! form, worded from public facts only), the bot searches the viewer form,
//! and `Debug` prints only the commitment.
//!
//! The deal is the seat-entropy deal of docs/ANQI-DEAL.md §4 (ANQI R-21):
//! at creation the server draws `server_seed` (OS CSPRNG, `server::deal`),
//! which is the game's secret, and publishes its SHA-256; each seat may send
//! a 32-byte seed before the deal; when the room deals, the layout and salt
//! are derived from the server seed, the game id and the three seeds (a
//! missing one is 32 zero bytes), the §10.4 commitment is published and turn 1
//! begins. Nobody — the operator included — chooses the layout: the server
//! is bound to its seed before any seat sends one, and no seat knows it.
//! Games stored before the scheme (a secret of layout and salt) are restored
//! with their plain deal (§10.3). The commitment's `game_id` is the room's id
//! exactly as clients see it (12 base-32 characters; docs/RULES-NOTES.md).

use engine::anqi::deal::{self, Layout};
use engine::anqi::{
    self as anqi_engine, AnqiGame, AnqiPosition, DeadlockScoring, EndReason, GameError, Input, Mode, Move, Options,
    RecordEvent, Settings, StopReason, Team,
};
use protocol::anqi::{self as wire, AnqiOptions, AnqiStatus};
use protocol::{
    Departure, EliminationReason, Ending, ErrorBody, ErrorCode, GameResult, GameSettings, MoveTexts, Outcome,
    PendingOffer, Side, Status, Variant,
};

use super::{BotAsk, BotSearch, Command, Happened, RoomGame, err, parse_seed};
use crate::room::bots::Halt;

/// The layout and salt: the game's secret until it ends. Its `Debug` prints
/// nothing of them.
#[derive(Clone, PartialEq, Eq)]
struct Secret {
    layout: Layout,
    salt: [u8; 32],
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// The stored form of a plain deal: the 32 layout letters, a space, the
    /// 64 salt hex digits.
    fn text(&self) -> String {
        format!("{} {}", deal::layout_text(&self.layout), deal::to_hex(&self.salt))
    }

    fn parse(text: &str) -> Option<Secret> {
        let (layout, salt) = text.split_once(' ')?;
        Some(Secret {
            layout: deal::parse_layout(layout)?,
            salt: deal::parse_hex32(salt)?,
        })
    }
}

/// The stored secret of a seat-entropy game starts with this word, then the
/// server seed's 64 hex digits (a plain deal's is its layout and salt).
const SEATS_SECRET: &str = "seats ";

/// How the game's layout is (or will be) dealt.
#[derive(Clone, PartialEq, Eq)]
enum Dealing {
    /// The plain deal (§10.3), fixed at creation: games stored before the
    /// seat-entropy scheme.
    Plain(Secret),
    /// The seat-entropy deal (docs/ANQI-DEAL.md §4).
    Seats {
        /// The server's seed (secret until the end; its hash is public).
        server_seed: [u8; 32],
        /// The seed each seat sent (public), `None`: none (zero bytes at the deal).
        seeds: [Option<[u8; 32]>; 3],
        /// The layout and salt once dealt.
        dealt: Option<Secret>,
    },
}

impl std::fmt::Debug for Dealing {
    /// Nothing of the secret: the kind of deal only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dealing::Plain(_) => f.write_str("Plain(..)"),
            Dealing::Seats { dealt, .. } => write!(f, "Seats {{ dealt: {} }}", dealt.is_some()),
        }
    }
}

impl Dealing {
    /// The layout and salt, once dealt.
    fn secret(&self) -> Option<&Secret> {
        match self {
            Dealing::Plain(s) => Some(s),
            Dealing::Seats { dealt, .. } => dealt.as_ref(),
        }
    }

    /// The stored form of the game's secret.
    fn text(&self) -> String {
        match self {
            Dealing::Plain(s) => s.text(),
            Dealing::Seats { server_seed, .. } => format!("{SEATS_SECRET}{}", deal::to_hex(server_seed)),
        }
    }

    fn parse(text: &str) -> Option<Dealing> {
        match text.strip_prefix(SEATS_SECRET) {
            Some(hex) => Some(Dealing::Seats {
                server_seed: deal::parse_hex32(hex)?,
                seeds: [None; 3],
                dealt: None,
            }),
            None => Secret::parse(text).map(Dealing::Plain),
        }
    }
}

/// A 三国暗棋 game in a room.
#[derive(Clone)]
pub struct AnqiRoomGame {
    /// The game id as clients see it (the commitment's `game_id`).
    id: String,
    /// The settings' anqi block (defaults applied by its methods).
    options: AnqiOptions,
    /// The record over the full position (secret: never printed, never sent).
    /// Before a seat-entropy deal: a game over the canonical set that is never
    /// played (every layout has the same viewer form, all face down).
    game: AnqiGame,
    /// The deal: its secret, and the seeds.
    dealing: Dealing,
    /// The §10.4 commitment, public from the deal.
    commitment: Option<String>,
    /// Whether the store has been handed the secret.
    secret_taken: bool,
    /// Seeds and the deal accepted: commands of the room that are not the engine's.
    deal_commands: usize,
    /// Board actions so far, with their seat, as the record writes them (`+b2=R`).
    moves: Vec<(Side, String)>,
    /// Seats that stopped playing, in order.
    departures: Vec<Departure>,
    /// The record lines sent as `noted`, with the actions played before each.
    notes: Vec<protocol::Note>,
}

impl std::fmt::Debug for AnqiRoomGame {
    /// The id, the commitment and the public position only: a game printed by
    /// mistake (a log line, a panic) leaks no face-down identity.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnqiRoomGame")
            .field("id", &self.id)
            .field("commitment", &self.commitment)
            .field("viewer", &self.game.viewer().to_string())
            .finish_non_exhaustive()
    }
}

fn seat(side: Side) -> usize {
    side.index()
}

fn side_of(seat: usize) -> Side {
    Side::ALL[seat]
}

/// The engine's options and settings of a game's anqi block.
fn engine_config(o: &AnqiOptions) -> (Options, Settings) {
    let options = Options {
        split2: o.split2,
        enhanced: o.enhanced,
        double: o.double,
        fanchi: o.fanchi,
        xqlegs: o.xqlegs,
    };
    let settings = Settings {
        mode: match o.mode {
            wire::Mode::Annihilation => Mode::Annihilation,
            wire::Mode::Shoujun => Mode::Shoujun,
            wire::Mode::Race => Mode::Race {
                target: o.race_target().unwrap_or(wire::DEFAULT_TARGET),
            },
        },
        scoring: match o.scoring {
            wire::Scoring::Net => DeadlockScoring::Net,
            wire::Scoring::RemainingPoints => DeadlockScoring::RemainingPoints,
            wire::Scoring::RemainingCount => DeadlockScoring::RemainingCount,
        },
        no_progress_rounds: o.rounds(),
    };
    (options, settings)
}

/// The settings' anqi block, checked (`bad_request` with the reason).
pub fn options_of(settings: &GameSettings) -> Result<AnqiOptions, ErrorBody> {
    let o = settings.anqi.clone().unwrap_or_default();
    o.check()
        .map_err(|why| err(ErrorCode::BadRequest, format!("三国暗棋 options: {why}")))?;
    Ok(o)
}

fn game_error(e: &GameError) -> ErrorBody {
    let code = match e {
        GameError::Over => ErrorCode::GameOver,
        GameError::NoSuchSeat(_) | GameError::NotLive(_) => ErrorCode::NotLive,
        GameError::Illegal(i) if matches!(i.reason, anqi_engine::Refusal::NotYourTurn { .. }) => ErrorCode::NotYourTurn,
        GameError::Illegal(_) => ErrorCode::IllegalMove,
        GameError::ProposalPending => ErrorCode::OfferPending,
        GameError::ProposalsUsed(_) => ErrorCode::NoOffersLeft,
        GameError::NoProposal | GameError::AlreadyAnswered(_) => ErrorCode::NothingToAnswer,
    };
    err(code, e.to_string())
}

/// A command as the engine's (a board action's text parsed; `+b2=R` refused).
fn engine_command(cmd: &Command) -> Result<anqi_engine::Command, ErrorBody> {
    use anqi_engine::Command as C;
    Ok(match cmd {
        Command::Play(text) => C::Play(
            anqi_engine::notation::parse_move(text)
                .map_err(|e| err(ErrorCode::BadMove, format!("action {text:?}: {e}")))?,
        ),
        Command::Resign => C::Resign,
        Command::OfferDraw => C::Propose,
        Command::AnswerDraw(accept) => C::Answer { accept: *accept },
        Command::Timeout => C::Timeout,
        Command::Abandon => C::Abandon,
    })
}

fn stop_reason(r: StopReason) -> EliminationReason {
    match r {
        StopReason::Annihilated => EliminationReason::Annihilated,
        StopReason::Resigned => EliminationReason::Resign,
        StopReason::Timeout => EliminationReason::Time,
        StopReason::Abandoned => EliminationReason::Abandon,
        StopReason::Recovered => EliminationReason::Recovered,
    }
}

fn end_reason(r: EndReason) -> Option<wire::EndReason> {
    Some(match r {
        EndReason::LastSeat => wire::EndReason::LastSeat,
        EndReason::Shoujun => wire::EndReason::Shoujun,
        EndReason::Race => wire::EndReason::Race,
        EndReason::NoProgress => wire::EndReason::NoProgress,
        EndReason::NoAction => wire::EndReason::NoAction,
        EndReason::Agreement => wire::EndReason::Agreement,
        EndReason::Aborted => return None,
    })
}

/// The legal actions a status had, recomputed from its position text (the
/// viewer form: every rule but what a flip reveals is public, §10.1). None
/// once the game is over (its layout is then published).
pub fn relist(status: &Status) -> MoveTexts {
    if status.anqi.as_ref().is_some_and(|a| a.layout.is_some()) {
        return MoveTexts::new();
    }
    anqi_engine::notation::parse_position(&status.position)
        .map(|pos| MoveTexts::displayed(pos.legal_moves().iter()))
        .unwrap_or_default()
}

/// Why an action would be refused, from a status alone (`POST /explain`):
/// decided on its viewer position, worded from public facts only.
pub fn explain(status: &Status, mv: &str) -> Result<Option<protocol::Refusal>, ErrorBody> {
    let m =
        anqi_engine::notation::parse_move(mv).map_err(|e| err(ErrorCode::BadMove, format!("action {mv:?}: {e}")))?;
    if status.legal_moves.contains(&m.to_string()) {
        return Ok(None);
    }
    let refusal = |code: &str, message: String| protocol::Refusal {
        code: code.to_owned(),
        params: Default::default(),
        message,
    };
    if status.anqi.as_ref().is_some_and(|a| a.layout.is_some()) {
        return Ok(Some(refusal("game_over", "the game is over".to_owned())));
    }
    let Ok(pos) = anqi_engine::notation::parse_position(&status.position) else {
        return Ok(Some(refusal("other", "the action is not legal here".to_owned())));
    };
    Ok(match pos.check(m) {
        Ok(_) => None,
        Err(e) => {
            use anqi_engine::Refusal as R;
            let code = match e.reason {
                R::GameOver => "game_over",
                R::NotYourTurn { .. } => "not_your_turn",
                R::NotPlaying => "not_live",
                R::NothingToFlip(_) => "nothing_to_flip",
                R::AlreadyFaceUp(..) => "already_face_up",
                R::NoPiece(_) => "no_piece",
                R::FaceDownCannotMove(_) => "face_down_cannot_move",
                R::TeamlessCanOnlyFlip => "teamless_can_only_flip",
                R::NotYourTeam { .. } => "not_your_piece",
                R::CaptureFaceDown(_) => "capture_face_down",
                R::CaptureOwnTeam(..) => "own_piece",
                R::NothingToCapture(_) => "nothing_to_capture",
                R::RevealedThisTurn(_) => "revealed_this_turn",
                R::PathBlocked(_) => "path_blocked",
                R::CannonScreen(_) => "cannon_screen",
                R::LegBlocked(_) => "leg_blocked",
                R::EyeBlocked(_) => "eye_blocked",
                R::NotThisPiecesMove(_) => "not_this_pieces_move",
                R::IdentityUnknown(_) | R::NotInPool(..) | R::IdentityNamed => "other",
            };
            Some(refusal(code, e.reason.to_string()))
        }
    })
}

impl AnqiRoomGame {
    /// Records a public line of the record: sent as `noted`, kept for snapshots.
    fn note(&mut self, side: Option<Side>, text: String, out: &mut Vec<Happened>) {
        self.notes.push(protocol::Note {
            ply: self.moves.len() as u32,
            side,
            text: text.clone(),
        });
        out.push(Happened::Noted { side, text });
    }

    /// A new game for room `id` with the seat-entropy deal: its server seed
    /// drawn now from the OS CSPRNG, its hash public from now on; dealt by
    /// [`RoomGame::deal`] when the room says so.
    pub fn new(id: &str, settings: &GameSettings) -> Result<AnqiRoomGame, ErrorBody> {
        let options = options_of(settings)?;
        let dealing = Dealing::Seats {
            server_seed: crate::deal::server_seed(),
            seeds: [None; 3],
            dealt: None,
        };
        Self::with_dealing(id, options, dealing, false)
            .map_err(|why| err(ErrorCode::BadRequest, format!("三国暗棋 options: {why}")))
    }

    /// The game of a layout under the options (its deal set for the record).
    fn game_of(options: &AnqiOptions, secret: &Secret) -> Result<AnqiGame, String> {
        let (engine_options, settings) = engine_config(options);
        let initial = match options.teams {
            Some(t) => {
                let teams = t.map(Team::new);
                let [Some(a), Some(b), Some(c)] = teams else {
                    return Err(format!("assigned teams {t:?} are not teams 1, 2, 3"));
                };
                AnqiPosition::from_layout_assigned(&secret.layout, engine_options, [a, b, c])
                    .ok_or_else(|| format!("assigned teams {t:?} are not teams 1, 2, 3"))?
            }
            None => AnqiPosition::from_layout(&secret.layout, engine_options),
        };
        let mut game = AnqiGame::new(initial, settings);
        game.set_deal(&deal::layout_text(&secret.layout), &deal::to_hex(&secret.salt));
        Ok(game)
    }

    /// A game from its deal (`taken`: the store already holds the secret).
    fn with_dealing(id: &str, options: AnqiOptions, dealing: Dealing, taken: bool) -> Result<AnqiRoomGame, String> {
        // Before a seat-entropy deal the game stands on the canonical set: its
        // viewer form (every piece face down) is every layout's, and it is
        // never played (`apply` refuses until the deal).
        let placeholder = Secret {
            layout: deal::shuffle(|i| i),
            salt: [0; 32],
        };
        let secret = dealing.secret().unwrap_or(&placeholder);
        let game = Self::game_of(&options, secret)?;
        let commitment = dealing
            .secret()
            .map(|s| deal::commitment(id, &deal::layout_text(&s.layout), &s.salt));
        Ok(AnqiRoomGame {
            id: id.to_owned(),
            options,
            game,
            dealing,
            commitment,
            secret_taken: taken,
            deal_commands: 0,
            moves: Vec::new(),
            departures: Vec::new(),
            notes: Vec::new(),
        })
    }

    /// A game with the plain deal of `secret` (tests; games stored before the scheme).
    #[cfg(test)]
    fn from_secret(id: &str, options: AnqiOptions, secret: Secret, taken: bool) -> Result<AnqiRoomGame, String> {
        Self::with_dealing(id, options, Dealing::Plain(secret), taken)
    }

    /// A stored game: its secret, its seeds and deal, and its accepted
    /// commands replayed.
    pub fn restore(
        id: &str,
        settings: &GameSettings,
        secret: Option<&str>,
        events: &[(Side, String, u64)],
    ) -> Result<AnqiRoomGame, String> {
        let options = settings.anqi.clone().unwrap_or_default();
        let dealing = secret
            .and_then(Dealing::parse)
            .ok_or_else(|| format!("game {id}: its deal is missing or unreadable"))?;
        let mut g = Self::with_dealing(id, options, dealing, true)?;
        for (i, (side, text, at)) in events.iter().enumerate() {
            let replayed = if let Some(seed) = text.strip_prefix(super::SEED_PREFIX) {
                g.seed(*side, seed)
            } else if text == super::DEAL_TEXT {
                g.deal()
            } else {
                let cmd = super::parse_command(text).ok_or_else(|| format!("event {i}: bad action {text:?}"))?;
                g.apply(*side, cmd, *at).map(drop)
            };
            replayed.map_err(|e| format!("event {i} ({text}) does not replay: {}", e.message))?;
        }
        Ok(g)
    }

    /// The commitment announced when turn 1 begins (§10.4); `None` before the deal.
    pub fn commitment(&self) -> Option<&str> {
        self.commitment.as_deref()
    }

    /// Whether the seat-entropy deal is still to come.
    fn undealt(&self) -> bool {
        self.dealing.secret().is_none()
    }

    /// The public position (the viewer form).
    pub fn viewer(&self) -> AnqiPosition {
        self.game.viewer()
    }

    /// The game result in the protocol's words.
    fn result_of(&self, r: &anqi_engine::GameResult) -> GameResult {
        match (end_reason(r.reason), r.placing) {
            (Some(reason), Some(placing)) => {
                let firsts = placing.iter().filter(|&&p| p == 1).count();
                let outcomes = placing.map(|p| {
                    Some(match (p, firsts) {
                        (1, 1) => Outcome::Win,
                        (1, _) => Outcome::Draw,
                        _ => Outcome::Loss,
                    })
                });
                GameResult {
                    ending: Ending::Anqi { reason },
                    outcomes,
                    eliminations: self.departures.clone(),
                    no_shows: Vec::new(),
                    placing: Some(placing),
                    scores: Some(r.scores),
                }
            }
            _ => {
                // Aborted: the seat that abandoned before its first action.
                let by = self
                    .game
                    .record()
                    .iter()
                    .rev()
                    .find_map(|(_, e)| match e {
                        RecordEvent::Out { seat, .. } => Some(side_of(*seat)),
                        _ => None,
                    })
                    .unwrap_or(Side::W);
                GameResult {
                    ending: Ending::Aborted { by },
                    outcomes: [None; 3],
                    eliminations: self.departures.clone(),
                    no_shows: Vec::new(),
                    placing: None,
                    scores: None,
                }
            }
        }
    }

    fn anqi_status(&self, viewer: &AnqiPosition) -> AnqiStatus {
        let g = &self.game;
        let over = g.is_over();
        let captured = [0, 1, 2].map(|s| {
            anqi_engine::Piece::all()
                .flat_map(|p| std::iter::repeat_n(p.to_string(), viewer.captured_count(s, p) as usize))
                .collect()
        });
        AnqiStatus {
            teams: [0, 1, 2].map(|s| viewer.team_of_seat(s).map(|t| t.number())),
            captured,
            captured_points: [0, 1, 2].map(|s| viewer.captured_points(s)),
            scores: [0, 1, 2].map(|s| g.score(s)),
            hidden: viewer.face_down_count(),
            commitment: self.commitment.clone(),
            server_hash: match &self.dealing {
                Dealing::Seats { server_seed, .. } => Some(deal::server_seed_hash(server_seed)),
                Dealing::Plain(_) => None,
            },
            seeds: match &self.dealing {
                Dealing::Seats { seeds, .. } => Some(seeds.map(|s| s.map(|b| deal::to_hex(&b)))),
                Dealing::Plain(_) => None,
            },
            server_seed: match &self.dealing {
                Dealing::Seats { server_seed, .. } if over => Some(deal::to_hex(server_seed)),
                _ => None,
            },
            mode: self.options.mode,
            target: self.options.race_target(),
            scoring: self.options.scoring,
            no_progress: g.turns_without_progress(),
            no_progress_limit: g.settings().no_progress_rounds * viewer.live_count(),
            proposals_left: [0, 1, 2].map(|s| 3u8.saturating_sub(g.proposals_made(s))),
            proposal: g.pending_proposal().map(|(by, accepted)| wire::Proposal {
                by: side_of(by),
                accepted: (0..3).filter(|&s| accepted[s]).map(side_of).collect(),
            }),
            layout: self
                .dealing
                .secret()
                .filter(|_| over)
                .map(|s| deal::layout_text(&s.layout)),
            salt: self.dealing.secret().filter(|_| over).map(|s| deal::to_hex(&s.salt)),
            record: over.then(|| g.record_lines()),
        }
    }

    /// The seats that must answer the pending proposal.
    fn waiting(&self) -> Vec<Side> {
        match self.game.pending_proposal() {
            Some((_, accepted)) => (0..3)
                .filter(|&s| self.game.position().is_live(s) && !accepted[s])
                .map(side_of)
                .collect(),
            None => Vec::new(),
        }
    }
}

impl RoomGame for AnqiRoomGame {
    fn variant(&self) -> Variant {
        Variant::Anqi
    }

    fn to_move(&self) -> Option<Side> {
        if self.game.is_over() || self.undealt() {
            return None;
        }
        self.game.position().seat_to_move().map(side_of)
    }

    fn live(&self) -> Vec<Side> {
        (0..3)
            .filter(|&s| self.game.position().is_live(s))
            .map(side_of)
            .collect()
    }

    fn is_finished(&self) -> bool {
        self.game.is_over()
    }

    fn plies(&self) -> u32 {
        self.moves.len() as u32
    }

    fn epoch(&self) -> usize {
        self.game.inputs().len() + self.deal_commands
    }

    fn apply(&mut self, side: Side, cmd: Command, at_ms: u64) -> Result<Vec<Happened>, ErrorBody> {
        if self.undealt() {
            return Err(err(
                ErrorCode::NotStarted,
                "the layout is not dealt yet: the deal waits for the seats' seeds",
            ));
        }
        let command = engine_command(&cmd)?;
        let s = seat(side);
        let viewer = self.game.viewer();
        // The refusal of an action is decided on the viewer form: the same
        // verdict as the full form (§10.1), in words made of public facts only.
        if let anqi_engine::Command::Play(m) = command {
            if !self.game.is_over() && viewer.is_live(s) {
                if let Some(to_move) = viewer.seat_to_move() {
                    if to_move != s {
                        return Err(err(
                            ErrorCode::NotYourTurn,
                            format!("not your turn: seat {} is to move", to_move + 1),
                        ));
                    }
                }
                viewer
                    .check(m)
                    .map_err(|e| err(ErrorCode::IllegalMove, format!("{m}: {}", e.reason)))?;
            }
        }
        let captured = match command {
            anqi_engine::Command::Play(Move::Capture { to, .. } | Move::Move { to, .. }) => {
                viewer.piece_at(to).and_then(|(up, id)| if up { id } else { None })
            }
            _ => None,
        };
        let pending_before = self.game.pending_proposal().map(|(by, _)| by);
        let events = self
            .game
            .apply(Input {
                seat: s,
                command,
                at: at_ms,
            })
            .map_err(|e| game_error(&e))?;
        let mut out = Vec::new();
        let mut finished = None;
        for e in events {
            match e {
                RecordEvent::Action { seat, action, revealed } => {
                    let record_text = match (action, revealed) {
                        (Move::Flip(p), Some(id)) => format!("+{p}={id}"),
                        _ => action.to_string(),
                    };
                    self.moves.push((side_of(seat), record_text));
                    out.push(Happened::Moved {
                        side: side_of(seat),
                        mv: action.to_string(),
                        captured: captured
                            .filter(|_| matches!(action, Move::Capture { .. }))
                            .map(|p| p.to_string()),
                        checks: Vec::new(),
                        revealed: revealed.map(|p| p.to_string()),
                    });
                }
                RecordEvent::Out { seat, reason } => {
                    let d = Departure {
                        side: side_of(seat),
                        reason: stop_reason(reason),
                        ply: self.moves.len() as u32,
                        absorbed_by: None,
                    };
                    self.note(Some(side_of(seat)), e.to_string(), &mut out);
                    // An abandonment before the seat's first action aborts the
                    // game: nobody stopped playing, the game has no result.
                    let aborting =
                        reason == StopReason::Abandoned && !self.game.stops().iter().any(|&(x, _)| x == seat);
                    if !aborting {
                        self.departures.push(d);
                        out.push(Happened::Eliminated(d));
                    }
                }
                RecordEvent::Shoujun { seat, .. } => {
                    let d = Departure {
                        side: side_of(seat),
                        reason: EliminationReason::Recovered,
                        ply: self.moves.len() as u32,
                        absorbed_by: None,
                    };
                    self.note(Some(side_of(seat)), e.to_string(), &mut out);
                    self.departures.push(d);
                    out.push(Happened::Eliminated(d));
                }
                RecordEvent::Claim { seat, .. } | RecordEvent::Assign { seat, .. } | RecordEvent::Pass { seat } => {
                    self.note(Some(side_of(seat)), e.to_string(), &mut out)
                }
                RecordEvent::Propose { seat } => out.push(Happened::DrawOffered {
                    by: side_of(seat),
                    to: self.waiting(),
                }),
                RecordEvent::Accept { seat } => out.push(Happened::DrawAnswered {
                    by: side_of(seat),
                    accept: true,
                }),
                RecordEvent::Decline { seat } => {
                    out.push(Happened::DrawAnswered {
                        by: side_of(seat),
                        accept: false,
                    });
                    if let Some(by) = pending_before {
                        out.push(Happened::DrawOfferLapsed { by: side_of(by) });
                    }
                }
                RecordEvent::End { .. } => {
                    if let Some(r) = self.game.result() {
                        finished = Some(self.result_of(r));
                    }
                }
                // Published in the status once over.
                RecordEvent::Layout(_) | RecordEvent::Salt(_) => {}
            }
        }
        // A proposal lapses silently in the engine when an action is played or a seat stops.
        if let Some(by) = pending_before {
            let still = self.game.pending_proposal().is_some();
            let answered = out.iter().any(|h| matches!(h, Happened::DrawOfferLapsed { .. }))
                || self.game.result().is_some_and(|r| r.reason == EndReason::Agreement);
            if !still && !answered {
                out.push(Happened::DrawOfferLapsed { by: side_of(by) });
            }
        }
        if let Some(r) = finished {
            out.push(Happened::Finished(r));
        }
        Ok(out)
    }

    fn status(&self, legal: bool) -> Status {
        let viewer = self.game.viewer();
        let over = self.game.is_over();
        Status {
            position: viewer.to_string(),
            turn: viewer.seat_to_move().map_or(Side::W, side_of),
            live: self.live(),
            ply: self.plies(),
            // Turns completed (the position's turn field − 1).
            round: viewer.turn().saturating_sub(1),
            legal_moves: if legal && !over && !self.undealt() {
                MoveTexts::displayed(viewer.legal_moves().iter())
            } else {
                MoveTexts::new()
            },
            clocks: Default::default(),
            counters: None,
            in_check: Vec::new(),
            pending_offer: self.game.pending_proposal().map(|(by, _)| PendingOffer {
                by: side_of(by),
                waiting: self.waiting(),
            }),
            paused: false,
            anqi: Some(Box::new(self.anqi_status(&viewer))),
            yanyi: None,
        }
    }

    fn result(&self) -> Option<GameResult> {
        self.game.result().map(|r| self.result_of(r))
    }

    fn departures(&self) -> Vec<Departure> {
        self.departures.clone()
    }

    fn moves(&self) -> Vec<(Side, String)> {
        self.moves.clone()
    }

    fn pending_offer_waiting(&self) -> Vec<Side> {
        self.waiting()
    }

    fn initial_position(&self) -> String {
        self.game.initial_position().viewer().to_string()
    }

    /// The lines sent as `noted`; once over, also the record's end and the
    /// published `layout` and `salt` (§11.5).
    fn notes(&self) -> Vec<protocol::Note> {
        let mut notes = self.notes.clone();
        if self.game.is_over() {
            let ply = self.moves.len() as u32;
            let lines = self.game.record_lines();
            let tail = lines
                .iter()
                .filter(|l| l.starts_with("end ") || l.starts_with("layout ") || l.starts_with("salt "));
            notes.extend(tail.map(|text| protocol::Note {
                ply,
                side: None,
                text: text.clone(),
            }));
        }
        notes
    }

    /// `bot::anqi` on the viewer form: the layout never enters the closure.
    fn bot_search(&self, side: Side, level: bot::Level, ask: BotAsk, seed: u64) -> BotSearch {
        let viewer = self.game.viewer();
        let ctx = bot::anqi::AnqiBotContext {
            settings: *self.game.settings(),
        };
        let s = seat(side);
        Box::new(move |halt: &Halt| match ask {
            BotAsk::AnswerOffer => Some(Command::AnswerDraw(bot::anqi::answer_proposal(&viewer, &ctx, s))),
            BotAsk::Move { .. } => {
                let mut stop = |_nodes: u64| halt.stops();
                bot::anqi::choose_action(&viewer, &ctx, level, seed, &mut stop).map(|m| Command::Play(m.to_string()))
            }
        })
    }

    /// Seating drawn at random (§3 R-2) unless the game keeps the seats as taken.
    fn draws_seats(&self) -> bool {
        !self.options.fixed_seats
    }

    fn take_secret(&mut self) -> Option<String> {
        if self.secret_taken {
            return None;
        }
        self.secret_taken = true;
        Some(self.dealing.text())
    }

    fn awaits_deal(&self) -> bool {
        self.undealt()
    }

    fn has_seed(&self, side: Side) -> bool {
        match &self.dealing {
            Dealing::Seats { seeds, .. } => seeds[seat(side)].is_some(),
            Dealing::Plain(_) => true,
        }
    }

    /// A seat's seed: once per seat, before the deal; published at once.
    fn seed(&mut self, side: Side, seed: &str) -> Result<(), ErrorBody> {
        let bytes = parse_seed(seed)?;
        let Dealing::Seats { seeds, dealt, .. } = &mut self.dealing else {
            return Err(err(
                ErrorCode::BadRequest,
                "this game was dealt by the plain deal: it takes no seeds",
            ));
        };
        if dealt.is_some() {
            return Err(err(
                ErrorCode::BadRequest,
                "the layout is dealt already: a seed counts only before the deal",
            ));
        }
        if seeds[seat(side)].is_some() {
            return Err(err(
                ErrorCode::BadRequest,
                format!("{side} sent its seed already: a seat sends one seed"),
            ));
        }
        seeds[seat(side)] = Some(bytes);
        self.deal_commands += 1;
        Ok(())
    }

    /// The seat-entropy deal (docs/ANQI-DEAL.md §4.2): a missing seed is 32
    /// zero bytes. The commitment is public from now on.
    fn deal(&mut self) -> Result<(), ErrorBody> {
        let Dealing::Seats {
            server_seed,
            seeds,
            dealt: dealt @ None,
        } = &mut self.dealing
        else {
            return Err(err(ErrorCode::BadRequest, "the layout is dealt already"));
        };
        let (layout, salt) = deal::seat_entropy_deal(server_seed, &self.id, &seeds.map(|s| s.unwrap_or([0; 32])));
        let secret = Secret { layout, salt };
        let game = Self::game_of(&self.options, &secret).map_err(|why| err(ErrorCode::Internal, why))?;
        self.commitment = Some(deal::commitment(&self.id, &deal::layout_text(&layout), &salt));
        *dealt = Some(secret);
        self.game = game;
        self.deal_commands += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    use super::*;
    use engine::anqi::SAMPLE_LAYOUT;

    const ID: &str = "k7pq2xw9mde4";

    fn settings(anqi: Option<AnqiOptions>) -> GameSettings {
        GameSettings {
            variant: Variant::Anqi,
            time_control: protocol::TimeControl::default(),
            direction: protocol::Direction::Ccw,
            public: true,
            players_chat: true,
            grace_ms: 60_000,
            rated: false,
            anqi,
        }
    }

    /// A game over the sample layout (RULES-ANQI §10.4) with salt 0x00 … 0x1f.
    fn sample(options: AnqiOptions) -> AnqiRoomGame {
        let secret = Secret {
            layout: deal::parse_layout(SAMPLE_LAYOUT).unwrap(),
            salt: std::array::from_fn(|i| i as u8),
        };
        AnqiRoomGame::from_secret(ID, options, secret, false).unwrap()
    }

    fn play(g: &mut AnqiRoomGame, side: Side, mv: &str) -> Vec<Happened> {
        g.apply(side, Command::Play(mv.into()), 0)
            .unwrap_or_else(|e| panic!("{mv}: {e:?}"))
    }

    #[test]
    fn the_commitment_of_a_sanguo_id_is_the_documented_test_vector() {
        let g = sample(AnqiOptions::default());
        assert_eq!(
            g.commitment(),
            Some("6bc45fd45bfeb73d12a4ca17fc4ee053650e655e6881315178f767060560aef0")
        );
        assert_eq!(
            deal::preimage(ID, SAMPLE_LAYOUT, &deal::to_hex(&g.dealing.secret().unwrap().salt)).len(),
            125
        );
    }

    #[test]
    fn a_new_game_shows_only_the_viewer_form_and_hands_its_secret_once() {
        let mut g = AnqiRoomGame::new(ID, &settings(None)).unwrap();
        let secret = g.take_secret().expect("the secret, once");
        assert_eq!(g.take_secret(), None);
        let server_seed = deal::parse_hex32(secret.strip_prefix("seats ").expect("a seat-entropy game")).unwrap();
        // Before the deal: the server's hash, no commitment, nobody to move.
        let st = g.status(true);
        assert_eq!(
            st.position,
            "????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1"
        );
        assert_eq!(g.initial_position(), st.position);
        assert!(st.legal_moves.is_empty());
        let a = st.anqi.clone().unwrap();
        assert_eq!(a.server_hash, Some(deal::server_seed_hash(&server_seed)));
        assert_eq!(
            (a.commitment, a.seeds, a.server_seed),
            (None, Some([None, None, None]), None)
        );
        assert!(g.awaits_deal() && g.to_move().is_none());
        let e = g.apply(Side::W, Command::Play("+a1".into()), 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotStarted, "{}", e.message);
        // Seeds: bad text refused, one per seat, public at once.
        let (s1, s3) = ([0x11u8; 32], [0xc3u8; 32]);
        for bad in ["zz", "", &"AB".repeat(32), &"ab".repeat(31), &"ab".repeat(33)] {
            assert_eq!(g.seed(Side::W, bad).unwrap_err().code, ErrorCode::BadRequest, "{bad:?}");
        }
        assert_eq!(g.epoch(), 0, "a refused seed changes nothing");
        g.seed(Side::W, &deal::to_hex(&s1)).unwrap();
        let again = g.seed(Side::W, &deal::to_hex(&s3)).unwrap_err();
        assert!(again.message.contains("already"), "{}", again.message);
        g.seed(Side::Y, &deal::to_hex(&s3)).unwrap();
        assert!(g.has_seed(Side::W) && !g.has_seed(Side::B) && g.has_seed(Side::Y));
        assert_eq!(
            g.status(false).anqi.unwrap().seeds,
            Some([Some(deal::to_hex(&s1)), None, Some(deal::to_hex(&s3))])
        );
        // The deal: B sent nothing, 32 zero bytes.
        g.deal().unwrap();
        assert!(!g.awaits_deal());
        assert_eq!(g.epoch(), 3);
        let (layout, salt) = deal::seat_entropy_deal(&server_seed, ID, &[s1, [0; 32], s3]);
        let layout = deal::layout_text(&layout);
        assert_eq!(g.commitment(), Some(deal::commitment(ID, &layout, &salt).as_str()));
        assert!(
            g.seed(Side::B, &deal::to_hex(&s1))
                .unwrap_err()
                .message
                .contains("dealt")
        );
        assert!(g.deal().is_err(), "one deal");
        let st = g.status(true);
        assert_eq!(st.legal_moves.len(), 32);
        assert!(st.legal_moves.iter().all(|m| m.starts_with('+')));
        assert_eq!(g.to_move(), Some(Side::W));
        let json = serde_json::to_string(&st).unwrap();
        let debug = format!("{g:?}");
        let salt = deal::to_hex(&salt);
        for text in [&json, &debug] {
            assert!(!text.contains(&layout) && !text.contains(&salt), "{text}");
            assert!(!text.contains(&secret[6..]), "no server seed: {text}");
            assert!(!text.contains('*'), "no full-form position: {text}");
        }
        // A flip reveals the derived layout's identity.
        let h = play(&mut g, Side::W, "+a1");
        assert!(
            matches!(&h[0], Happened::Moved { revealed: Some(r), .. } if r.chars().next() == layout.chars().next()),
            "{h:?}"
        );
        // A restored game is the same game: its seeds, its deal, its actions.
        let hex = |b: &[u8; 32]| format!("seed {}", deal::to_hex(b));
        let events = [
            (Side::W, hex(&s1), 0),
            (Side::Y, hex(&s3), 0),
            (Side::W, "deal".to_owned(), 0),
            (Side::W, "move +a1".to_owned(), 0),
        ];
        let r = AnqiRoomGame::restore(ID, &settings(None), Some(&secret), &events).unwrap();
        assert_eq!((r.status(true), r.epoch()), (g.status(true), g.epoch()));
        // Restored before the deal, it still waits, with its seeds.
        let r = AnqiRoomGame::restore(ID, &settings(None), Some(&secret), &events[..1]).unwrap();
        assert!(r.awaits_deal() && r.has_seed(Side::W) && !r.has_seed(Side::Y));
        // A game stored with a plain deal (before the scheme) is restored as it was.
        let plain = format!("{SAMPLE_LAYOUT} {}", deal::to_hex(&[7; 32]));
        let r = AnqiRoomGame::restore(ID, &settings(None), Some(&plain), &[]).unwrap();
        assert!(!r.awaits_deal());
        assert_eq!(r.status(false).anqi.unwrap().server_hash, None);
    }

    #[test]
    fn a_full_table_deals_when_its_people_sent_their_seeds_or_the_wait_is_over() {
        use crate::room::core::{Act, Room, SEED_WAIT_MS};
        use crate::store::{Op, Player};
        let person = |i: usize| Player::guest(format!("p{i}"), format!("player {i}"));
        let fixed = || {
            settings(Some(AnqiOptions {
                fixed_seats: true,
                ..AnqiOptions::default()
            }))
        };
        let stored = |ops: &[Op]| -> Vec<String> {
            ops.iter()
                .filter_map(|o| match o {
                    Op::Event(e) => Some(e.action.clone()),
                    _ => None,
                })
                .collect()
        };
        let seed = |b: u8| deal::to_hex(&[b; 32]);
        // Everyone seeds with the join: the last join deals and starts.
        let mut room = Room::new("a".into(), fixed()).unwrap();
        let secret = room.take_secret().unwrap();
        room.join_seeded(person(0), Some(Side::W), Some(&seed(1)), 0, 0)
            .unwrap();
        // A bad seed is refused and seats nobody.
        let e = room
            .join_seeded(person(1), Some(Side::B), Some("xyz"), 0, 0)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(room.seat_of("p1").is_none());
        room.join_seeded(person(1), Some(Side::B), Some(&seed(2)), 0, 0)
            .unwrap();
        let (_, step) = room
            .join_seeded(person(2), Some(Side::Y), Some(&seed(3)), 5, 0)
            .unwrap();
        assert_eq!(stored(&step.ops), [format!("seed {}", seed(3)), "deal".to_owned()]);
        assert_eq!(room.phase, protocol::Phase::Live);
        let server_seed = deal::parse_hex32(&secret["seats ".len()..]).unwrap();
        let (layout, salt) = deal::seat_entropy_deal(&server_seed, "a", &[[1; 32], [2; 32], [3; 32]]);
        let st = room.status(5);
        assert_eq!(
            st.anqi.unwrap().commitment,
            Some(deal::commitment("a", &deal::layout_text(&layout), &salt))
        );
        assert_eq!(st.legal_moves.len(), 32);
        // A seat that sent none: the full table waits for it, at most SEED_WAIT_MS.
        let mut room = Room::new("b".into(), fixed()).unwrap();
        room.join_seeded(person(0), Some(Side::W), Some(&seed(1)), 0, 0)
            .unwrap();
        room.join(person(1), Some(Side::B), 0, 0).unwrap();
        room.add_bot("bot-1".into(), bot::Level::One, Some(Side::Y), 100, 0)
            .unwrap();
        assert_eq!(room.phase, protocol::Phase::Open);
        assert_eq!(room.next_wakeup(), Some(100 + SEED_WAIT_MS));
        let e = room
            .act(
                Side::W,
                Act::Move {
                    ply: 0,
                    mv: "+a1".into(),
                },
                0,
                200,
                0,
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotStarted);
        assert!(room.tick(SEED_WAIT_MS, 0).is_empty(), "not yet");
        // B's seed arrives: the last one the table waits for (the bot sends none).
        let e = room.act(Side::W, Act::Seed(seed(9)), 0, 300, 0).unwrap_err();
        assert!(e.message.contains("already"), "{}", e.message);
        let step = room.act(Side::B, Act::Seed(seed(2)), 0, 300, 0).unwrap();
        assert_eq!(stored(&step.ops), [format!("seed {}", seed(2)), "deal".to_owned()]);
        assert_eq!(room.phase, protocol::Phase::Live);
        let e = room.act(Side::Y, Act::Seed(seed(3)), 0, 400, 0).unwrap_err();
        assert!(e.message.contains("dealt"), "{}", e.message);
        // Nobody sends one: the room deals with zero seeds when the wait is over.
        let mut room = Room::new("c".into(), fixed()).unwrap();
        for (i, side) in Side::ALL.into_iter().enumerate() {
            room.join(person(i), Some(side), 0, 0).unwrap();
        }
        assert_eq!(room.next_wakeup(), Some(SEED_WAIT_MS));
        let step = room.tick(SEED_WAIT_MS, 0);
        assert_eq!(stored(&step.ops), ["deal"]);
        assert_eq!(room.phase, protocol::Phase::Live);
        assert_eq!(room.game().to_move(), Some(Side::W));
        // Players who asked for their seats without a seed contribute none: the
        // table does not wait for them (one that sends a seed is waited for by no one either).
        let mut room = Room::new("f".into(), fixed()).unwrap();
        room.join_seeded(person(0), Some(Side::W), None, 0, 0).unwrap();
        room.join_seeded(person(1), Some(Side::B), Some(&seed(2)), 0, 0)
            .unwrap();
        let (_, step) = room.join_seeded(person(2), Some(Side::Y), None, 0, 0).unwrap();
        assert_eq!(stored(&step.ops), ["deal"]);
        assert_eq!(room.phase, protocol::Phase::Live);
        assert_eq!(room.status(0).anqi.unwrap().seeds, Some([None, Some(seed(2)), None]));
        // Three bots: dealt at once with zero seeds.
        let mut room = Room::new("d".into(), fixed()).unwrap();
        for (i, side) in Side::ALL.into_iter().enumerate() {
            room.add_bot(format!("bot-{i}"), bot::Level::One, Some(side), 0, 0)
                .unwrap();
        }
        assert_eq!(room.phase, protocol::Phase::Live);
        // 三国象棋 takes no seed: refused, nobody seated.
        let mut sanguo = settings(None);
        sanguo.variant = Variant::Sanguo;
        sanguo.anqi = None;
        let mut room = Room::new("e".into(), sanguo).unwrap();
        let e = room.join_seeded(person(0), None, Some(&seed(1)), 0, 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(room.seat_of("p0").is_none());
    }

    /// A room's snapshot lists a flip as the record writes it (`+g2=A`) both
    /// live and after a restore (live rooms listed `+g2`, restored ones
    /// `+g2=A`: found by the `room_commands` fuzz target), and a flip resent
    /// after a reconnect is `duplicate_move` in both (a restored room said
    /// `stale_move`: it told a resent action by the record's text).
    #[test]
    fn a_flip_is_listed_as_recorded_and_a_resent_flip_is_a_duplicate_live_and_restored() {
        use crate::room::core::{Act, Room, Viewer};
        use crate::store::{Op, Player, StoredGame};
        let mut room = Room::new(ID.into(), settings(None)).unwrap();
        let secret = room.take_secret();
        let mut ops = Vec::new();
        for (i, side) in Side::ALL.into_iter().enumerate() {
            let player = Player::guest(format!("p{i}"), format!("player {i}"));
            let (_, step) = room.join_seeded(player, Some(side), None, 0, 0).unwrap();
            ops.extend(step.ops);
        }
        assert_eq!(room.phase, protocol::Phase::Live);
        let turn = room.game().to_move().unwrap();
        let flip = room
            .status(0)
            .legal_moves
            .iter()
            .find(|m| m.starts_with('+'))
            .unwrap()
            .to_owned();
        let act = || Act::Move {
            ply: 0,
            mv: flip.clone(),
        };
        let step = room.act(turn, act(), 0, 1_000, 0).unwrap();
        ops.extend(step.ops);
        let revealed = step
            .events
            .iter()
            .find_map(|l| match &l.event {
                protocol::GameEvent::Moved { mv, revealed, .. } => {
                    assert_eq!(mv, &flip, "the live event carries the action as sent");
                    revealed.clone()
                }
                _ => None,
            })
            .unwrap();
        let recorded = format!("{flip}={revealed}");
        assert_eq!(
            room.view(Viewer::Spectator, 1_000).moves,
            std::slice::from_ref(&recorded)
        );
        assert_eq!(
            room.act(turn, act(), 0, 1_100, 0).unwrap_err().code,
            ErrorCode::DuplicateMove
        );

        let seats = Side::ALL.map(|s| {
            room.seat_of(&format!("p{}", s.index()))
                .map(|_| Player::guest(format!("p{}", s.index()), format!("player {}", s.index())))
        });
        let stored = StoredGame {
            id: ID.into(),
            phase: room.phase,
            settings: room.settings.clone(),
            initial_position: room.initial_position(),
            seats,
            events: ops
                .iter()
                .filter_map(|o| match o {
                    Op::Event(e) => Some(e.clone()),
                    _ => None,
                })
                .collect(),
            v: room.v(),
            arbiter: Vec::new(),
            result: None,
            secret,
            chat_lines: [0; 2],
        };
        let (mut back, _, at) = Room::restore(stored).unwrap();
        assert_eq!(back.view(Viewer::Spectator, at).moves, [recorded]);
        assert_eq!(
            back.act(turn, act(), 0, at, 0).unwrap_err().code,
            ErrorCode::DuplicateMove
        );
    }

    #[test]
    fn flips_reveal_the_layout_claim_teams_and_capture_as_the_example_line() {
        let mut g = sample(AnqiOptions::default());
        let h = play(&mut g, Side::W, "+g2");
        assert_eq!(
            h,
            vec![
                Happened::Moved {
                    side: Side::W,
                    mv: "+g2".into(),
                    captured: None,
                    checks: vec![],
                    revealed: Some("A".into())
                },
                Happened::Noted {
                    side: Some(Side::W),
                    text: "claim 1 2".into()
                },
            ]
        );
        let h = play(&mut g, Side::B, "+i2");
        assert!(h.contains(&Happened::Noted {
            side: Some(Side::Y),
            text: "assign 3 3".into()
        }));
        play(&mut g, Side::Y, "+f2");
        play(&mut g, Side::W, "+h2");
        let h = play(&mut g, Side::B, "i2xh2");
        assert!(matches!(&h[0], Happened::Moved { captured: Some(c), revealed: None, .. } if c == "C"));
        let st = g.status(true);
        assert_eq!(
            st.position,
            "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1"
        );
        assert_eq!(st.legal_moves.len(), 31);
        let a = st.anqi.unwrap();
        assert_eq!(a.teams, [Some(2), Some(1), Some(3)]);
        assert_eq!(a.captured, [vec![], vec!["C".to_owned()], vec![]]);
        assert_eq!(a.captured_points, [0, 35, 0]);
        assert_eq!(a.hidden, 28);
        assert_eq!(g.plies(), 5);
        assert_eq!(g.moves()[0], (Side::W, "+g2=A".to_owned()));
        // The room's log relists the legal actions from a status alone.
        assert_eq!(relist(&g.status(false)), g.status(true).legal_moves);
        // Explain, from the status alone, in public words.
        let st = g.status(true);
        assert_eq!(explain(&st, "f2-e2").unwrap(), None);
        let r = explain(&st, "a1-a3").unwrap().unwrap();
        assert_eq!(r.code, "face_down_cannot_move", "{}", r.message);
        assert_eq!(explain(&st, "h2xg2").unwrap().unwrap().code, "not_your_piece");
        assert_eq!(explain(&st, "i2-i3").unwrap().unwrap().code, "no_piece");
        assert_eq!(explain(&st, "+b2=R").unwrap_err().code, ErrorCode::BadMove);
        // The noted lines, with the actions played before each.
        let notes: Vec<(u32, String)> = g.notes().into_iter().map(|n| (n.ply, n.text)).collect();
        assert_eq!(
            notes,
            [(1, "claim 1 2"), (2, "claim 2 1"), (2, "assign 3 3")].map(|(p, t)| (p, t.to_owned()))
        );
    }

    #[test]
    fn refusals_change_nothing_and_never_name_a_hidden_piece() {
        let mut g = sample(AnqiOptions::default());
        play(&mut g, Side::W, "+g2");
        let before = (g.status(true), g.epoch(), g.plies());
        for (side, cmd, code) in [
            (Side::W, "+a1", ErrorCode::NotYourTurn),
            (Side::B, "+b2=R", ErrorCode::BadMove),
            (Side::B, "zz", ErrorCode::BadMove),
            (Side::B, "+g2", ErrorCode::IllegalMove),
            (Side::B, "a1-a3", ErrorCode::IllegalMove),
            (Side::B, "g2-g3", ErrorCode::IllegalMove),
        ] {
            let e = g.apply(side, Command::Play(cmd.into()), 0).unwrap_err();
            assert_eq!(e.code, code, "{cmd}: {}", e.message);
            // a1 holds N in the sample layout: the refusal does not say so
            assert!(!e.message.contains('N') || cmd == "+b2=R", "{cmd}: {}", e.message);
        }
        let e = g.apply(Side::B, Command::AnswerDraw(true), 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::NothingToAnswer);
        assert_eq!((g.status(true), g.epoch(), g.plies()), before);
    }

    #[test]
    fn a_race_ends_with_placing_scores_and_the_published_deal_that_verifies() {
        let opts = AnqiOptions {
            mode: wire::Mode::Race,
            target: Some(30),
            ..AnqiOptions::default()
        };
        let mut g = sample(opts.clone());
        let mut commands = Vec::new();
        for (side, mv) in [(Side::W, "+g2"), (Side::B, "+i2"), (Side::Y, "+f2"), (Side::W, "+h2")] {
            play(&mut g, side, mv);
            commands.push((side, g.command_text(&Command::Play(mv.into())), 0));
        }
        let h = play(&mut g, Side::B, "i2xh2");
        commands.push((Side::B, "move i2xh2".to_owned(), 0));
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(
            r.ending,
            Ending::Anqi {
                reason: wire::EndReason::Race
            }
        );
        assert_eq!(r.placing.unwrap()[1], 1);
        assert_eq!(r.scores.unwrap()[1], 35);
        assert_eq!(r.outcomes[1], Some(Outcome::Win));
        assert!(g.is_finished() && g.to_move().is_none());
        let st = g.status(true);
        assert!(st.legal_moves.is_empty());
        assert!(relist(&st).is_empty(), "a finished game has no legal action");
        let tail: Vec<String> = g.notes().into_iter().rev().take(3).map(|n| n.text).collect();
        assert!(
            tail[0].starts_with("salt ") && tail[1] == format!("layout {SAMPLE_LAYOUT}"),
            "{tail:?}"
        );
        assert!(tail[2].starts_with("end race "), "{tail:?}");
        let a = st.anqi.unwrap();
        assert_eq!(a.layout.as_deref(), Some(SAMPLE_LAYOUT));
        let salt = a.salt.unwrap();
        let record = a.record.unwrap();
        let (options, settings) = engine_config(&opts);
        deal::verify(
            ID,
            a.commitment.as_deref().unwrap(),
            SAMPLE_LAYOUT,
            &salt,
            &record,
            &deal::GameConfig {
                options,
                teams: None,
                settings,
            },
        )
        .unwrap();
        // Restored from the store's commands, it is the same game.
        let secret = format!("{SAMPLE_LAYOUT} {salt}");
        let s = settings_with(opts);
        let r = AnqiRoomGame::restore(ID, &s, Some(&secret), &commands).unwrap();
        assert_eq!(r.status(true), g.status(true));
        assert_eq!(r.result(), g.result());
    }

    fn settings_with(o: AnqiOptions) -> GameSettings {
        settings(Some(o))
    }

    #[test]
    fn the_scoring_proposal_is_the_draw_offer() {
        let mut g = sample(AnqiOptions::default());
        play(&mut g, Side::W, "+g2");
        let h = g.apply(Side::B, Command::OfferDraw, 0).unwrap();
        assert_eq!(
            h,
            vec![Happened::DrawOffered {
                by: Side::B,
                to: vec![Side::W, Side::Y]
            }]
        );
        assert_eq!(g.pending_offer_waiting(), vec![Side::W, Side::Y]);
        let h = g.apply(Side::W, Command::AnswerDraw(false), 0).unwrap();
        assert_eq!(
            h,
            vec![
                Happened::DrawAnswered {
                    by: Side::W,
                    accept: false
                },
                Happened::DrawOfferLapsed { by: Side::B }
            ]
        );
        // An action lets a pending proposal lapse.
        g.apply(Side::Y, Command::OfferDraw, 0).unwrap();
        let h = play(&mut g, Side::B, "+i2");
        assert_eq!(h.last(), Some(&Happened::DrawOfferLapsed { by: Side::Y }));
        // Everyone accepts: the game ends by deadlock scoring.
        g.apply(Side::Y, Command::OfferDraw, 0).unwrap();
        g.apply(Side::W, Command::AnswerDraw(true), 0).unwrap();
        let h = g.apply(Side::B, Command::AnswerDraw(true), 0).unwrap();
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(
            r.ending,
            Ending::Anqi {
                reason: wire::EndReason::Agreement
            }
        );
        assert_eq!(g.status(false).anqi.unwrap().proposals_left, [3, 2, 1]);
    }

    #[test]
    fn abandoning_before_the_first_action_aborts_and_publishes_the_deal() {
        let mut g = sample(AnqiOptions::default());
        play(&mut g, Side::W, "+g2");
        let h = g.apply(Side::B, Command::Abandon, 0).unwrap();
        assert!(!h.iter().any(|x| matches!(x, Happened::Eliminated(_))), "{h:?}");
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(r.ending, Ending::Aborted { by: Side::B });
        assert_eq!(r.outcomes, [None; 3]);
        let a = g.status(false).anqi.unwrap();
        assert_eq!(a.layout.as_deref(), Some(SAMPLE_LAYOUT));
        assert!(a.record.unwrap().iter().any(|l| l == "end aborted -"));
    }

    #[test]
    fn resignations_leave_the_last_seat_first() {
        let mut g = sample(AnqiOptions::default());
        play(&mut g, Side::W, "+g2");
        let h = g.apply(Side::Y, Command::Resign, 0).unwrap();
        assert!(h.contains(&Happened::Eliminated(Departure {
            side: Side::Y,
            reason: EliminationReason::Resign,
            ply: 1,
            absorbed_by: None,
        })));
        assert_eq!(g.live(), vec![Side::W, Side::B]);
        let h = g.apply(Side::W, Command::Resign, 0).unwrap();
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(r.placing, Some([2, 1, 3]));
        assert_eq!(
            r.ending,
            Ending::Anqi {
                reason: wire::EndReason::LastSeat
            }
        );
        assert_eq!(g.departures().len(), 2);
    }

    #[test]
    fn a_room_draws_the_seating_unless_the_seats_are_fixed() {
        use crate::room::core::Room;
        use crate::store::Player;
        let person = |i: usize| Player::guest(format!("p{i}"), format!("player {i}"));
        // Everyone asks for W: with drawn seats the first joiner lands in every
        // seat over many rooms, and each table ends full with distinct seats.
        let mut first = [0u32; 3];
        for n in 0..300 {
            let mut room = Room::new(format!("g{n}"), settings(None)).unwrap();
            let mut sides = Vec::new();
            for i in 0..3 {
                let (side, _) = room.join(person(i), Some(Side::W), 0, 0).unwrap();
                sides.push(side);
            }
            first[sides[0].index()] += 1;
            sides.sort();
            assert_eq!(sides, Side::ALL.to_vec());
        }
        assert!(first.iter().all(|&n| (60..140).contains(&n)), "{first:?}");
        // Fixed seats: the seat asked for, as in 三国象棋.
        let fixed = AnqiOptions {
            fixed_seats: true,
            ..AnqiOptions::default()
        };
        let mut room = Room::new("f".into(), settings(Some(fixed))).unwrap();
        assert_eq!(room.join(person(0), Some(Side::Y), 0, 0).unwrap().0, Side::Y);
        assert_eq!(
            room.join(person(1), Some(Side::Y), 0, 0).unwrap_err().code,
            ErrorCode::SeatTaken
        );
    }

    #[test]
    fn bad_options_are_refused_at_creation() {
        let e = AnqiRoomGame::new(
            ID,
            &settings(Some(AnqiOptions {
                xqlegs: true,
                ..AnqiOptions::default()
            })),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(e.message.contains("double"), "{}", e.message);
    }

    #[test]
    fn assigned_teams_open_the_record_and_the_bot_plays_from_the_viewer_form() {
        let mut g = sample(AnqiOptions {
            teams: Some([3, 1, 2]),
            ..AnqiOptions::default()
        });
        assert_eq!(g.status(false).anqi.unwrap().teams, [Some(3), Some(1), Some(2)]);
        for level in [bot::Level::One, bot::Level::Two] {
            let search = g.bot_search(Side::W, level, BotAsk::Move { may_offer: false }, 7);
            let cancel = AtomicBool::new(false);
            let halt = Halt::new(Instant::now() + std::time::Duration::from_secs(5), &cancel, None);
            let Some(Command::Play(mv)) = search(&halt) else {
                panic!("the bot found no action")
            };
            assert!(g.status(true).legal_moves.contains(&mv), "{mv}");
        }
        play(&mut g, Side::W, "+a1");
        let search = g.bot_search(Side::B, bot::Level::One, BotAsk::AnswerOffer, 1);
        assert!(matches!(
            search(&Halt::new(Instant::now(), &AtomicBool::new(false), None)),
            Some(Command::AnswerDraw(_))
        ));
    }
}
