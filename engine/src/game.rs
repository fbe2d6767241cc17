//! The game record and the rules of RULES §6: rounds, requests and their
//! warnings, resignations, draw offers with the three-party vote, the
//! no-progress and length draws, check limits, repetition, abandonment and
//! time.
//!
//! A [`Game`] only ever changes through [`Game::apply`], one timestamped
//! [`Event`] at a time; time and disconnections are inputs, never read from a
//! clock. Replaying the accepted events of a game on a new `Game` rebuilds it
//! exactly (the server restores unfinished games that way).

use std::collections::HashMap;
use std::fmt;

use crate::board::Point;
use crate::explain::IllegalMove;
use crate::position::{Cause, Move, MoveOutcome, Position};
use crate::side::{Direction, Side, Sides};

/// Limits of §6, per phase.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Completed rounds before resigning or offering a draw is allowed.
    pub min_rounds_for_requests: u32,
    /// Draw offers per side over the whole game.
    pub draw_offers_per_side: u8,
    /// Plies without capture or check that draw the game, phase 3 / phase 2.
    pub no_progress_plies: [u32; 2],
    /// Plies of phase 2 that draw the game.
    pub phase2_plies: u32,
    /// Consecutive checks by one side on another that are allowed, phase 3 / phase 2.
    pub consecutive_checks: [u32; 2],
    /// The cumulative check by one side on another that loses (phase 3) or draws (phase 2).
    pub cumulative_checks: [u32; 2],
    /// How often the same checking position may be repeated by a side.
    pub repetitions: u32,
    /// Completed rounds before which abandonment aborts the game.
    pub abort_rounds: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            min_rounds_for_requests: 15,
            draw_offers_per_side: 3,
            no_progress_plies: [90, 40],
            phase2_plies: 80,
            consecutive_checks: [7, 5],
            cumulative_checks: [25, 20],
            repetitions: 3,
            abort_rounds: 3,
        }
    }
}

/// What a side does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Play a move (only at its turn).
    Move(Move),
    /// Resign.
    Resign,
    /// Offer a draw.
    OfferDraw,
    /// Answer the pending draw offer.
    AnswerDraw {
        /// Accept (true) or decline.
        accept: bool,
    },
    /// Its clock ran out (the server's clock decides).
    Timeout,
    /// It left: disconnected past the grace period (the server decides).
    Abandon,
}

/// One input to the game: who, what and when.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// The side acting (or timing out, or abandoning).
    pub side: Side,
    /// What it does.
    pub action: Action,
    /// When, in milliseconds on the caller's clock (recorded, never read here).
    pub at: u64,
}

/// Why a side left the game (or lost it at the end).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EliminationReason {
    /// 将死: no legal move while in check.
    Mate,
    /// 困毙: no legal move, not in check.
    Stalemate,
    /// 猝死: its king was captured.
    SuddenDeath,
    /// It resigned.
    Resign,
    /// Its clock ran out.
    Time,
    /// It abandoned the game.
    Abandon,
    /// Too many consecutive checks on one side.
    PerpetualCheck,
    /// Too many checks in all on one side (phase 3).
    CumulativeChecks,
    /// The same checking position repeated too often (备注6).
    Repetition,
    /// A second resignation or draw offer before round 15.
    PrematureRequest,
    /// It offered or accepted a draw that another side declined.
    DrawOfferRule,
}

impl EliminationReason {
    /// Lowercase words for logs and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            EliminationReason::Mate => "mate",
            EliminationReason::Stalemate => "stalemate",
            EliminationReason::SuddenDeath => "sudden death",
            EliminationReason::Resign => "resignation",
            EliminationReason::Time => "time",
            EliminationReason::Abandon => "abandonment",
            EliminationReason::PerpetualCheck => "perpetual check",
            EliminationReason::CumulativeChecks => "cumulative checks",
            EliminationReason::Repetition => "repetition",
            EliminationReason::PrematureRequest => "premature request",
            EliminationReason::DrawOfferRule => "draw-offer rule",
        }
    }
}

impl fmt::Display for EliminationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a game was drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// Every live side accepted a draw offer.
    Agreement,
    /// No capture and no check for too long.
    NoProgress,
    /// Phase 2 went on too long.
    Length,
    /// One side checked the other too often in phase 2.
    CumulativeChecks,
}

/// A side's result.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Won.
    Win,
    /// Drew.
    Draw,
    /// Lost.
    Loss,
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// One side is left.
    LastStanding(Side),
    /// A draw by a §6 rule: the live sides draw.
    Draw(DrawReason),
    /// The draw-offer rule: offerer and accepter lose, the decliner wins.
    DrawOfferRule {
        /// The side that declined and wins.
        winner: Side,
    },
    /// Abandoned before 3 completed rounds: no result.
    Aborted {
        /// Who left.
        by: Side,
    },
}

/// A side's elimination, in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Departure {
    /// Who left.
    pub side: Side,
    /// Why.
    pub reason: EliminationReason,
    /// After how many moves of the game.
    pub ply: u32,
}

/// The final result: each side's outcome, the order of elimination and reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// How it ended.
    pub ending: Ending,
    /// Win, draw or loss per side index (`None` for all when aborted).
    pub outcomes: [Option<Outcome>; 3],
    /// Eliminations in order (the losers of a draw-offer rule last, together).
    pub eliminations: Vec<Departure>,
}

/// What is asked: resign or offer a draw (the premature-request rule counts both).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// A resignation.
    Resign,
    /// A draw offer.
    Draw,
}

/// What an accepted event did, in order, for the record and for broadcasting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A move was played.
    Moved {
        /// The move.
        mv: Move,
        /// Captures, checks and the eliminations it caused on the board.
        outcome: MoveOutcome,
    },
    /// A request before round 15 earned a warning; the next one loses.
    Warned {
        /// Who was warned.
        side: Side,
        /// What it asked.
        request: Request,
    },
    /// A side left the game.
    Eliminated(Departure),
    /// A draw was offered; the listed sides must answer.
    DrawOffered {
        /// The offerer.
        by: Side,
        /// Who must answer.
        to: Sides,
    },
    /// A side answered the pending offer.
    DrawAnswered {
        /// Who answered.
        by: Side,
        /// Its answer.
        accept: bool,
    },
    /// The offer came to nothing; play goes on.
    DrawOfferLapsed {
        /// The offerer.
        by: Side,
    },
    /// The game ended.
    Finished(GameResult),
}

/// Why an event was refused; the game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The game has ended.
    #[error("the game is over")]
    Finished,
    /// The side has left the game.
    #[error("{0} is no longer in the game")]
    NotLive(Side),
    /// Not this side's turn.
    #[error("it is {turn}'s turn, not {side}'s")]
    NotYourTurn {
        /// Who tried.
        side: Side,
        /// Whose turn it is.
        turn: Side,
    },
    /// The move is illegal.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    /// The side has used all its draw offers.
    #[error("{0} has made all {1} draw offers it may make")]
    NoOffersLeft(Side, u8),
    /// A draw offer is already pending.
    #[error("a draw offer by {0} is already pending")]
    OfferPending(Side),
    /// There is no offer this side may answer.
    #[error("there is no draw offer for {0} to answer")]
    NothingToAnswer(Side),
    /// Events must not go back in time.
    #[error("event time {at} is before the previous event's {last}")]
    TimeWentBack {
        /// The event's time.
        at: u64,
        /// The last accepted time.
        last: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Offer {
    by: Side,
    /// Sides asked, and their answers so far.
    asked: Sides,
    accepted: Sides,
    declined: Sides,
}

/// What a caller of [`Game::apply_listed`] keeps of a position between
/// events: its legal moves ([`Position::legal_moves`]) and the sides in
/// check ([`Position::checked`]).
///
/// The moves are on the heap, as many as there are: a caller keeps one
/// listing for each game, and [`Game::apply_listed`] writes the next one
/// into the same buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    pub moves: Vec<Move>,
    pub checked: Sides,
}

impl Listing {
    /// The listing of `pos`, computed in full.
    pub fn of(pos: &Position) -> Listing {
        Listing {
            moves: pos.legal_moves().to_vec(),
            checked: pos.checked(),
        }
    }
}

/// A game: the position, the record of accepted events and every counter of
/// §6. Two games are equal when all of these are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    limits: Limits,
    initial: Position,
    position: Position,
    events: Vec<Event>,
    plies: u32,
    plies_phase3: u32,
    plies_phase2: u32,
    premature: [u8; 3],
    offers_made: [u8; 3],
    offer: Option<Offer>,
    no_progress: u32,
    consecutive: [[u32; 3]; 3],
    cumulative: [[u32; 3]; 3],
    repetitions: HashMap<(Side, Side, Position), u32>,
    departures: Vec<Departure>,
    result: Option<GameResult>,
}

impl Game {
    /// A new game from the initial position.
    pub fn new(direction: Direction) -> Game {
        Game::from_position(Position::initial(direction), Limits::default())
    }

    /// A game starting from any position, with the given limits.
    pub fn from_position(position: Position, limits: Limits) -> Game {
        let mut g = Game {
            limits,
            initial: position,
            position,
            events: Vec::new(),
            plies: 0,
            plies_phase3: 0,
            plies_phase2: 0,
            premature: [0; 3],
            offers_made: [0; 3],
            offer: None,
            no_progress: 0,
            consecutive: [[0; 3]; 3],
            cumulative: [[0; 3]; 3],
            repetitions: HashMap::new(),
            departures: Vec::new(),
            result: None,
        };
        // A start position may already be decided (one side left) or have a mated side to move.
        let mut eff = Vec::new();
        let elim = g.position.resolve_turn();
        g.record_board_eliminations(&elim, &mut eff);
        g.check_end(&mut eff);
        g
    }

    /// Replays accepted events on a new game: the way to restore a game.
    pub fn replay(position: Position, limits: Limits, events: &[Event]) -> Result<Game, (usize, GameError)> {
        let mut g = Game::from_position(position, limits);
        for (i, e) in events.iter().enumerate() {
            g.apply(*e).map_err(|err| (i, err))?;
        }
        Ok(g)
    }

    /// [`Game::replay`] for events this program accepted before (a store's
    /// record of games it played): moves are played without the legality
    /// test, [`Position::play_unchecked`] instead of [`Position::play`];
    /// every other rule is applied as by [`Game::apply`]. On events that
    /// [`Game::apply`] accepted, from the same position and limits, the game
    /// is the one [`Game::replay`] builds, at about 60 % of the cost per move.
    ///
    /// Misused on a move that was not legal where it stands, the position's
    /// invariants break (see [`Position::play_unchecked`]); a cheap guard still
    /// refuses a move that does not start from a piece of the side to move or
    /// that lands on one of its own pieces.
    pub fn replay_trusted(position: Position, limits: Limits, events: &[Event]) -> Result<Game, (usize, GameError)> {
        let mut g = Game::from_position(position, limits);
        for (i, e) in events.iter().enumerate() {
            g.apply_with(*e, false, None).map_err(|err| (i, err))?;
        }
        Ok(g)
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The position the game started from.
    pub fn initial_position(&self) -> &Position {
        &self.initial
    }

    /// Every accepted event, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Moves played so far.
    pub fn plies(&self) -> u32 {
        self.plies
    }

    /// Completed rounds: ⌊plies in phase 3 / 3⌋ + ⌊plies in phase 2 / 2⌋.
    pub fn rounds_completed(&self) -> u32 {
        self.plies_phase3 / 3 + self.plies_phase2 / 2
    }

    /// Plies since the last capture or check (restarts when phase 2 begins).
    pub fn plies_without_progress(&self) -> u32 {
        self.no_progress
    }

    /// Plies played in phase 2.
    pub fn phase2_plies(&self) -> u32 {
        self.plies_phase2
    }

    /// Consecutive checks by `by` on `on` (restart when phase 2 begins).
    pub fn consecutive_checks(&self, by: Side, on: Side) -> u32 {
        self.consecutive[by.index()][on.index()]
    }

    /// Checks in all by `by` on `on` (restart when phase 2 begins).
    pub fn cumulative_checks(&self, by: Side, on: Side) -> u32 {
        self.cumulative[by.index()][on.index()]
    }

    /// How often `by` has given check to `on` with exactly `position` on the
    /// board (RULES §6 备注6; counted in the current phase). The move that
    /// would make it more than [`Limits::repetitions`] loses, unless it mates.
    pub fn checking_repetitions(&self, by: Side, on: Side, position: &Position) -> u32 {
        self.repetitions.get(&(by, on, *position)).copied().unwrap_or(0)
    }

    /// Warnings a side has had for premature requests.
    pub fn warnings(&self, side: Side) -> u8 {
        self.premature[side.index()]
    }

    /// Draw offers a side has made.
    pub fn draw_offers_made(&self, side: Side) -> u8 {
        self.offers_made[side.index()]
    }

    /// The pending draw offer: who offered and who has yet to answer.
    pub fn pending_offer(&self) -> Option<(Side, Sides)> {
        self.offer.as_ref().map(|o| {
            let mut waiting = o.asked;
            for s in o.accepted.iter().chain(o.declined.iter()) {
                waiting.remove(s);
            }
            (o.by, waiting)
        })
    }

    /// Eliminations so far, in order.
    pub fn departures(&self) -> &[Departure] {
        &self.departures
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// Whether the game is over.
    pub fn is_finished(&self) -> bool {
        self.result.is_some()
    }

    /// Whether requests (resign, draw offer) are allowed without a warning.
    pub fn requests_allowed(&self) -> bool {
        self.rounds_completed() >= self.limits.min_rounds_for_requests
    }

    /// Applies one event. On error nothing changes; on success the event is
    /// recorded and its effects are returned in order.
    pub fn apply(&mut self, event: Event) -> Result<Vec<Effect>, GameError> {
        self.apply_with(event, true, None)
    }

    /// [`Game::apply`] for a caller that lists the legal moves after every
    /// event (a server sends them to its players, with the sides in check):
    /// `legal` holds the [`Listing`] of the current position or `None` when
    /// not known. A move found there is not tested again, and the test for a
    /// mated side that follows it lists the next side's moves instead of
    /// looking for one. On success `legal` holds the listing of the
    /// position after the event (`None` once the game is over); on error
    /// nothing changed. Effects and game are those of [`Game::apply`].
    pub fn apply_listed(&mut self, event: Event, legal: &mut Option<Listing>) -> Result<Vec<Effect>, GameError> {
        if let Some(l) = legal.as_ref() {
            debug_assert_eq!(l, &Listing::of(&self.position), "a stale listing");
        }
        let listed = matches!((event.action, legal.as_ref()), (Action::Move(m), Some(l)) if l.moves.contains(&m));
        // A listed move writes the next listing over the one it was found
        // in (past every refusal: it cannot fail then), and the position
        // that listing is of into `after`.
        let mut after = None;
        let slot = legal.as_mut().filter(|_| listed).map(|l| (l, &mut after));
        let eff = self.apply_with(event, !listed, slot)?;
        if self.is_finished() {
            *legal = None;
        } else if after != Some(self.position) {
            // Not a listed move, or a penalty changed the position after it.
            *legal = Some(Listing::of(&self.position));
        }
        if let Some(l) = legal.as_ref() {
            debug_assert_eq!(l, &Listing::of(&self.position), "a wrong listing");
        }
        Ok(eff)
    }

    /// [`Game::apply`]; with `check_moves` false a move is trusted to be
    /// legal (see [`Game::replay_trusted`]).
    /// With `listing`, an unchecked move leaves there the listing after it
    /// ([`Position::play_listing`]) and the position it is of; nothing is
    /// written there on a refusal.
    fn apply_with(
        &mut self,
        event: Event,
        check_moves: bool,
        listing: Option<(&mut Listing, &mut Option<Position>)>,
    ) -> Result<Vec<Effect>, GameError> {
        if self.result.is_some() {
            return Err(GameError::Finished);
        }
        if let Some(last) = self.events.last()
            && event.at < last.at
        {
            return Err(GameError::TimeWentBack {
                at: event.at,
                last: last.at,
            });
        }
        let side = event.side;
        if !self.position.live().contains(side) {
            return Err(GameError::NotLive(side));
        }
        let mut eff = Vec::new();
        match event.action {
            Action::Move(m) => {
                let turn = self.position.turn();
                if side != turn {
                    return Err(GameError::NotYourTurn { side, turn });
                }
                let outcome = if check_moves {
                    self.position.play(m)?
                } else {
                    let own = |p: Point| self.position.piece_at(p).is_some_and(|p| p.side == turn);
                    if !own(m.from) || own(m.to) {
                        return Err(GameError::Illegal(crate::explain::explain(&self.position, m)));
                    }
                    match listing {
                        Some((l, after)) => {
                            let (outcome, checked) = self.position.play_listing(m, &mut l.moves);
                            l.checked = checked;
                            *after = Some(self.position);
                            outcome
                        }
                        None => self.position.play_unchecked(m),
                    }
                };
                self.after_move(m, outcome, &mut eff);
            }
            Action::Resign => {
                if !self.requests_allowed() {
                    self.premature_request(side, Request::Resign, &mut eff);
                } else {
                    self.eliminate(side, EliminationReason::Resign, &mut eff);
                }
            }
            Action::OfferDraw => {
                if let Some(o) = &self.offer {
                    return Err(GameError::OfferPending(o.by));
                }
                if self.offers_made[side.index()] >= self.limits.draw_offers_per_side {
                    return Err(GameError::NoOffersLeft(side, self.limits.draw_offers_per_side));
                }
                if !self.requests_allowed() {
                    self.premature_request(side, Request::Draw, &mut eff);
                } else {
                    self.offers_made[side.index()] += 1;
                    let mut asked = self.position.live();
                    asked.remove(side);
                    self.offer = Some(Offer {
                        by: side,
                        asked,
                        accepted: Sides::EMPTY,
                        declined: Sides::EMPTY,
                    });
                    eff.push(Effect::DrawOffered { by: side, to: asked });
                }
            }
            Action::AnswerDraw { accept } => {
                let Some(o) = self.offer.as_mut() else {
                    return Err(GameError::NothingToAnswer(side));
                };
                if !o.asked.contains(side) || o.accepted.contains(side) || o.declined.contains(side) {
                    return Err(GameError::NothingToAnswer(side));
                }
                if accept {
                    o.accepted.insert(side);
                } else {
                    o.declined.insert(side);
                }
                eff.push(Effect::DrawAnswered { by: side, accept });
                self.settle_offer(false, &mut eff);
            }
            Action::Timeout => self.eliminate(side, EliminationReason::Time, &mut eff),
            Action::Abandon => {
                if self.rounds_completed() < self.limits.abort_rounds {
                    let result = GameResult {
                        ending: Ending::Aborted { by: side },
                        outcomes: [None; 3],
                        eliminations: self.departures.clone(),
                    };
                    self.offer = None;
                    self.result = Some(result.clone());
                    eff.push(Effect::Finished(result));
                } else {
                    self.eliminate(side, EliminationReason::Abandon, &mut eff);
                }
            }
        }
        self.events.push(event);
        Ok(eff)
    }

    fn premature_request(&mut self, side: Side, request: Request, eff: &mut Vec<Effect>) {
        self.premature[side.index()] += 1;
        if self.premature[side.index()] >= 2 {
            self.eliminate(side, EliminationReason::PrematureRequest, eff);
        } else {
            eff.push(Effect::Warned { side, request });
        }
    }

    fn after_move(&mut self, m: Move, outcome: MoveOutcome, eff: &mut Vec<Effect>) {
        let s = outcome.mover;
        let three_before = self.position.live().count() + outcome.eliminated.len() as u32 == 3;
        self.plies += 1;
        if three_before {
            self.plies_phase3 += 1;
        } else {
            self.plies_phase2 += 1;
        }
        let progress = outcome.captured.is_some() || !outcome.checks.is_empty();
        let checks = outcome.checks;
        let board_eliminations = outcome.eliminated.clone();
        eff.push(Effect::Moved { mv: m, outcome });
        let phase_changed = !board_eliminations.is_empty();
        self.record_board_eliminations(&board_eliminations, eff);
        if self.check_end(eff) {
            return;
        }
        if phase_changed {
            // A new phase: its counters started afresh in `record_board_eliminations`.
            return;
        }
        let phase = usize::from(!three_before);
        // No capture and no check.
        self.no_progress = if progress { 0 } else { self.no_progress + 1 };
        // Check counters, then their penalties (a move that mates is never penalised:
        // it would have eliminated the side above).
        let mut penalty: Option<EliminationReason> = None;
        let mut draw: Option<DrawReason> = None;
        for t in Side::ALL {
            if t == s {
                continue;
            }
            let (si, ti) = (s.index(), t.index());
            if checks.contains(t) {
                self.consecutive[si][ti] += 1;
                self.cumulative[si][ti] += 1;
                let key = (s, t, self.position);
                let rep = self.repetitions.entry(key).or_insert(0);
                *rep += 1;
                if self.consecutive[si][ti] > self.limits.consecutive_checks[phase] {
                    penalty = penalty.or(Some(EliminationReason::PerpetualCheck));
                }
                if *rep > self.limits.repetitions {
                    penalty = penalty.or(Some(EliminationReason::Repetition));
                }
                if self.cumulative[si][ti] >= self.limits.cumulative_checks[phase] {
                    if phase == 0 {
                        penalty = penalty.or(Some(EliminationReason::CumulativeChecks));
                    } else {
                        draw = draw.or(Some(DrawReason::CumulativeChecks));
                    }
                }
            } else {
                self.consecutive[si][ti] = 0;
            }
        }
        if let Some(reason) = penalty {
            self.eliminate(s, reason, eff);
            return;
        }
        if self.no_progress >= self.limits.no_progress_plies[phase] {
            draw = draw.or(Some(DrawReason::NoProgress));
        }
        if phase == 1 && self.plies_phase2 >= self.limits.phase2_plies {
            draw = draw.or(Some(DrawReason::Length));
        }
        if let Some(d) = draw {
            self.finish_draw(d, eff);
            return;
        }
        // The offer lapses when the offerer's next turn begins.
        if self.offer.as_ref().is_some_and(|o| o.by == self.position.turn()) {
            self.settle_offer(true, eff);
        }
    }

    /// Resolves the pending offer once every side asked has answered, or at
    /// its lapse (`lapsing`: unanswered counts as declined).
    fn settle_offer(&mut self, lapsing: bool, eff: &mut Vec<Effect>) {
        let Some(o) = self.offer.clone() else { return };
        let mut declined = o.declined;
        if lapsing {
            for s in o.asked.iter() {
                if !o.accepted.contains(s) {
                    declined.insert(s);
                }
            }
        }
        let answered = o.accepted.count() + declined.count();
        if answered < o.asked.count() {
            return;
        }
        self.offer = None;
        if declined.is_empty() {
            self.finish_draw(DrawReason::Agreement, eff);
        } else if o.accepted.is_empty() {
            eff.push(Effect::DrawOfferLapsed { by: o.by });
        } else {
            // One accepted, the other declined (phase 3): offerer and accepter lose.
            let winner = declined.iter().next().unwrap();
            let ply = self.plies;
            for s in [o.by].into_iter().chain(o.accepted.iter()) {
                let d = Departure {
                    side: s,
                    reason: EliminationReason::DrawOfferRule,
                    ply,
                };
                self.departures.push(d);
                eff.push(Effect::Eliminated(d));
            }
            let mut outcomes = [Some(Outcome::Loss); 3];
            outcomes[winner.index()] = Some(Outcome::Win);
            let result = GameResult {
                ending: Ending::DrawOfferRule { winner },
                outcomes,
                eliminations: self.departures.clone(),
            };
            self.result = Some(result.clone());
            eff.push(Effect::Finished(result));
        }
    }

    fn finish_draw(&mut self, reason: DrawReason, eff: &mut Vec<Effect>) {
        self.offer = None;
        let mut outcomes = [Some(Outcome::Loss); 3];
        for s in self.position.live().iter() {
            outcomes[s.index()] = Some(Outcome::Draw);
        }
        let result = GameResult {
            ending: Ending::Draw(reason),
            outcomes,
            eliminations: self.departures.clone(),
        };
        self.result = Some(result.clone());
        eff.push(Effect::Finished(result));
    }

    /// Removes a side for a reason other than a board elimination.
    fn eliminate(&mut self, side: Side, reason: EliminationReason, eff: &mut Vec<Effect>) {
        let d = Departure {
            side,
            reason,
            ply: self.plies,
        };
        self.departures.push(d);
        eff.push(Effect::Eliminated(d));
        let more = self.position.remove(side);
        self.record_board_eliminations(&more, eff);
        self.new_phase(eff);
        self.check_end(eff);
    }

    fn record_board_eliminations(&mut self, elims: &[crate::position::Elimination], eff: &mut Vec<Effect>) {
        for e in elims {
            let reason = match e.cause {
                Cause::Mate { in_check: true } => EliminationReason::Mate,
                Cause::Mate { in_check: false } => EliminationReason::Stalemate,
                Cause::SuddenDeath => EliminationReason::SuddenDeath,
            };
            let d = Departure {
                side: e.side,
                reason,
                ply: self.plies,
            };
            self.departures.push(d);
            eff.push(Effect::Eliminated(d));
        }
        if !elims.is_empty() {
            self.new_phase(eff);
        }
    }

    /// Counters restart when phase 2 begins; a pending offer lapses.
    fn new_phase(&mut self, eff: &mut Vec<Effect>) {
        self.no_progress = 0;
        self.consecutive = [[0; 3]; 3];
        self.cumulative = [[0; 3]; 3];
        self.repetitions.clear();
        if let Some(o) = self.offer.take() {
            eff.push(Effect::DrawOfferLapsed { by: o.by });
        }
    }

    /// Ends the game when one side is left. Returns whether it is over.
    fn check_end(&mut self, eff: &mut Vec<Effect>) -> bool {
        if self.result.is_some() {
            return true;
        }
        if self.position.live().count() > 1 {
            return false;
        }
        let mut outcomes = [Some(Outcome::Loss); 3];
        let winner = self.position.live().iter().next();
        if let Some(w) = winner {
            outcomes[w.index()] = Some(Outcome::Win);
        }
        let result = GameResult {
            ending: Ending::LastStanding(winner.unwrap_or(Side::W)),
            outcomes,
            eliminations: self.departures.clone(),
        };
        self.offer = None;
        self.result = Some(result.clone());
        eff.push(Effect::Finished(result));
        true
    }
}
