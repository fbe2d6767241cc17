//! The game record of 三国演弈棋 and the rules of RULES-YANYI §9:
//! resignation, time, abandonment, abort, draw by agreement, perpetual check,
//! repetition, no progress, dead position and the result.
//!
//! A [`YanyiGame`] only changes through [`YanyiGame::apply`], one timestamped
//! [`Event`] at a time; time and disconnections are inputs, never read from a
//! clock. Replaying the accepted events on a new game rebuilds it exactly.

use std::collections::HashMap;
use std::fmt;

use super::explain::IllegalMove;
use super::piece::{Player, Players, Role};
use super::position::{Cause, Elimination, Move, MoveOutcome, Position};

/// Moves in a row that may give check to the same player, phase 3 / phase 2
/// (the 8th / 6th loses, §9).
pub const PERPETUAL_CHECKS: [u32; 2] = [8, 6];

/// Plies without progress that draw the game, phase 3 / phase 2 (§9).
pub const NO_PROGRESS_PLIES: [u32; 2] = [150, 100];

/// What a player does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Play a move (only at its turn).
    Move(Move),
    /// Resign (any time, on or off turn).
    Resign,
    /// Offer a draw (only at its turn).
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

/// One input: who, what and when.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// The player acting (or timing out, or abandoning).
    pub player: Player,
    /// What it does.
    pub action: Action,
    /// When, in milliseconds on the caller's clock (recorded, never read here).
    pub at: u64,
}

/// Why a player left the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EliminationReason {
    /// 将死: no legal move at its turn, in check.
    Mate,
    /// 困毙: no legal move at its turn, not in check.
    Stalemate,
    /// 见面: its king faced another after a third player's move.
    Facing,
    /// It resigned.
    Resign,
    /// Its clock ran out.
    Time,
    /// It abandoned the game.
    Abandon,
    /// It gave check too often (长将): the move count or a repetition.
    PerpetualCheck,
}

impl EliminationReason {
    /// Lowercase words.
    pub const fn as_str(self) -> &'static str {
        match self {
            EliminationReason::Mate => "mate",
            EliminationReason::Stalemate => "stalemate",
            EliminationReason::Facing => "facing kings",
            EliminationReason::Resign => "resignation",
            EliminationReason::Time => "time",
            EliminationReason::Abandon => "abandonment",
            EliminationReason::PerpetualCheck => "perpetual check",
        }
    }
}

impl fmt::Display for EliminationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Cause> for EliminationReason {
    fn from(c: Cause) -> Self {
        match c {
            Cause::Mate => EliminationReason::Mate,
            Cause::Stalemate => EliminationReason::Stalemate,
            Cause::Facing => EliminationReason::Facing,
        }
    }
}

/// Why a game was drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// Every other live player accepted a draw offer.
    Agreement,
    /// A position occurred for the third time without a single perpetual checker.
    Repetition,
    /// 50 rounds without a capture, an alliance, the emperor's death or an elimination.
    NoProgress,
    /// No live player owns a chariot, horse, cannon or soldier.
    DeadPosition,
}

impl DrawReason {
    /// Lowercase words.
    pub const fn as_str(self) -> &'static str {
        match self {
            DrawReason::Agreement => "agreement",
            DrawReason::Repetition => "repetition",
            DrawReason::NoProgress => "no progress",
            DrawReason::DeadPosition => "dead position",
        }
    }
}

/// A player's result.
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
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// One player is left.
    LastStanding(Player),
    /// Drawn: the live players draw, the eliminated lost.
    Draw(DrawReason),
    /// A player left before all three had moved: no result.
    Aborted {
        /// Who left.
        by: Player,
    },
}

/// A player's elimination, in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Departure {
    /// Who left.
    pub player: Player,
    /// Why.
    pub reason: EliminationReason,
    /// After how many moves of the game.
    pub ply: u32,
    /// Who absorbed its pieces (兵力收编), if anyone.
    pub absorbed_by: Option<Player>,
}

/// The final result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// How it ended.
    pub ending: Ending,
    /// Win, draw or loss per seat (G, B, R); all `None` when aborted.
    pub outcomes: [Option<Outcome>; 3],
    /// Eliminations in order, with reasons and absorbers.
    pub eliminations: Vec<Departure>,
}

impl GameResult {
    /// The placing of each seat (G, B, R): 1 for the winner (or for every
    /// player who drew), then the eliminated in reverse order of elimination
    /// (the first one out places last). `None` for all when aborted.
    pub fn placing(&self) -> [Option<u8>; 3] {
        if matches!(self.ending, Ending::Aborted { .. }) {
            return [None; 3];
        }
        let mut out = [None; 3];
        let mut top = 0u8;
        for (i, o) in self.outcomes.iter().enumerate() {
            if matches!(o, Some(Outcome::Win | Outcome::Draw)) {
                out[i] = Some(1);
                top += 1;
            }
        }
        let mut next = top + 1;
        for d in self.eliminations.iter().rev() {
            if out[d.player.index()].is_none() {
                out[d.player.index()] = Some(next);
                next += 1;
            }
        }
        out
    }
}

/// What an accepted event did, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A move was played.
    Moved {
        /// The move.
        mv: Move,
        /// Captures, alliance, activation, checks, eliminations and the next player.
        outcome: MoveOutcome,
    },
    /// A player left the game.
    Eliminated(Departure),
    /// A draw was offered; the listed players must answer.
    DrawOffered {
        /// The offerer.
        by: Player,
        /// Who must accept.
        to: Players,
    },
    /// A player answered the pending offer.
    DrawAnswered {
        /// Who answered.
        by: Player,
        /// Its answer.
        accept: bool,
    },
    /// The offer came to nothing; play goes on.
    DrawOfferLapsed {
        /// The offerer.
        by: Player,
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
    /// The player has left the game.
    #[error("{0} is no longer in the game")]
    NotLive(Player),
    /// Not this player's turn.
    #[error("not your turn: it is {turn}'s turn, not {player}'s")]
    NotYourTurn {
        /// Who tried.
        player: Player,
        /// Whose turn it is.
        turn: Player,
    },
    /// The move is illegal.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    /// A draw offer is already pending.
    #[error("a draw offer by {0} is already pending")]
    OfferPending(Player),
    /// There is no offer this player may answer.
    #[error("there is no draw offer for {0} to answer")]
    NothingToAnswer(Player),
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
    by: Player,
    asked: Players,
    accepted: Players,
}

/// One move of the record, for the repetition rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Ply {
    mover: Player,
    /// The players this move gave check to.
    checks: Players,
}

/// A game of 三国演弈棋: the position, the record and every counter of §9.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YanyiGame {
    initial: Position,
    position: Position,
    events: Vec<Event>,
    plies: u32,
    last_mover: Option<Player>,
    offer: Option<Offer>,
    no_progress: u32,
    consecutive: [[u32; 3]; 3],
    /// The moves since the last capture or elimination (repetition needs
    /// no older ones): the one at `i` led from the `i`-th position of that
    /// stretch (the first its start) to the next.
    moves: Vec<Ply>,
    /// Each position of that stretch, with where it stood in it: the
    /// number of `moves` played before it. (Only these are kept, not the
    /// positions in order as well: nothing reads them, and at several
    /// hundred bytes each they were most of a long game's memory.)
    seen: HashMap<Position, Vec<usize>>,
    departures: Vec<Departure>,
    result: Option<GameResult>,
}

impl Default for YanyiGame {
    fn default() -> Self {
        YanyiGame::new()
    }
}

impl YanyiGame {
    /// A new game from the initial position.
    pub fn new() -> YanyiGame {
        YanyiGame::from_position(Position::initial())
    }

    /// A game from any position.
    pub fn from_position(position: Position) -> YanyiGame {
        let mut g = YanyiGame {
            initial: position,
            position,
            events: Vec::new(),
            plies: 0,
            last_mover: None,
            offer: None,
            no_progress: 0,
            consecutive: [[0; 3]; 3],
            moves: Vec::new(),
            seen: HashMap::new(),
            departures: Vec::new(),
            result: None,
        };
        g.remember();
        let mut eff = Vec::new();
        if !g.check_end(&mut eff) {
            g.check_dead(&mut eff);
        }
        g
    }

    /// Replays accepted events on a new game: the way to restore one.
    pub fn replay(position: Position, events: &[Event]) -> Result<YanyiGame, (usize, GameError)> {
        let mut g = YanyiGame::from_position(position);
        for (i, e) in events.iter().enumerate() {
            g.apply(*e).map_err(|err| (i, err))?;
        }
        Ok(g)
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The start position.
    pub fn initial_position(&self) -> &Position {
        &self.initial
    }

    /// Every accepted event, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Moves played.
    pub fn plies(&self) -> u32 {
        self.plies
    }

    /// The last player that moved.
    pub fn last_mover(&self) -> Option<Player> {
        self.last_mover
    }

    /// Plies since the last capture, alliance, emperor's death or elimination.
    pub fn plies_without_progress(&self) -> u32 {
        self.no_progress
    }

    /// Moves in a row of `by` that gave check to `on`.
    pub fn consecutive_checks(&self, by: Player, on: Player) -> u32 {
        self.consecutive[by.index()][on.index()]
    }

    /// The pending draw offer: who offered and who has yet to answer.
    pub fn pending_offer(&self) -> Option<(Player, Players)> {
        self.offer.as_ref().map(|o| (o.by, Players(o.asked.0 & !o.accepted.0)))
    }

    /// Eliminations so far, in order.
    pub fn departures(&self) -> &[Departure] {
        &self.departures
    }

    /// The result, once over.
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// Whether the game is over.
    pub fn is_finished(&self) -> bool {
        self.result.is_some()
    }

    fn phase(&self) -> usize {
        usize::from(self.position.live().count() < 3)
    }

    fn remember(&mut self) {
        let i = self.moves.len();
        self.seen.entry(self.position).or_default().push(i);
    }

    /// Starts the stretch of positions repetition looks at anew from the
    /// position now: none before it can occur again.
    fn restart_stretch(&mut self) {
        self.moves.clear();
        self.seen.clear();
        self.remember();
    }

    /// Applies one event. On error nothing changes; on success the event is
    /// recorded and its effects returned in order.
    pub fn apply(&mut self, event: Event) -> Result<Vec<Effect>, GameError> {
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
        let p = event.player;
        if !self.position.live().contains(p) {
            return Err(GameError::NotLive(p));
        }
        let turn = self.position.turn();
        let mut eff = Vec::new();
        match event.action {
            Action::Move(m) => {
                if p != turn {
                    return Err(GameError::NotYourTurn { player: p, turn });
                }
                let outcome = self.position.play(m)?;
                self.after_move(m, outcome, &mut eff);
            }
            Action::OfferDraw => {
                if p != turn {
                    return Err(GameError::NotYourTurn { player: p, turn });
                }
                if let Some(o) = &self.offer {
                    return Err(GameError::OfferPending(o.by));
                }
                let mut asked = self.position.live();
                asked.remove(p);
                self.offer = Some(Offer {
                    by: p,
                    asked,
                    accepted: Players::EMPTY,
                });
                eff.push(Effect::DrawOffered { by: p, to: asked });
            }
            Action::AnswerDraw { accept } => {
                let Some(o) = self.offer.as_mut() else {
                    return Err(GameError::NothingToAnswer(p));
                };
                if !o.asked.contains(p) || o.accepted.contains(p) {
                    return Err(GameError::NothingToAnswer(p));
                }
                eff.push(Effect::DrawAnswered { by: p, accept });
                if accept {
                    o.accepted.insert(p);
                    if o.accepted == o.asked {
                        self.offer = None;
                        self.finish_draw(DrawReason::Agreement, &mut eff);
                    }
                } else {
                    let by = o.by;
                    self.offer = None;
                    eff.push(Effect::DrawOfferLapsed { by });
                }
            }
            Action::Resign | Action::Timeout | Action::Abandon => {
                if !self.position.pending().is_empty() {
                    // Before all three have moved: no result.
                    let result = GameResult {
                        ending: Ending::Aborted { by: p },
                        outcomes: [None; 3],
                        eliminations: self.departures.clone(),
                    };
                    self.offer = None;
                    self.result = Some(result.clone());
                    eff.push(Effect::Finished(result));
                } else {
                    let reason = match event.action {
                        Action::Resign => EliminationReason::Resign,
                        Action::Timeout => EliminationReason::Time,
                        _ => EliminationReason::Abandon,
                    };
                    self.remove(p, reason, &mut eff);
                }
            }
        }
        self.events.push(event);
        Ok(eff)
    }

    /// Removes `p` off the board (resignation, time, abandonment, perpetual check).
    fn remove(&mut self, p: Player, reason: EliminationReason, eff: &mut Vec<Effect>) {
        let d = Departure {
            player: p,
            reason,
            ply: self.plies,
            absorbed_by: None,
        };
        self.departures.push(d);
        eff.push(Effect::Eliminated(d));
        let more = self.position.remove_player(p, self.last_mover);
        self.record_board_eliminations(&more, eff);
        self.new_phase(eff);
        if !self.check_end(eff) {
            self.check_dead(eff);
        }
    }

    fn record_board_eliminations(&mut self, elims: &[Elimination], eff: &mut Vec<Effect>) {
        for e in elims {
            let d = Departure {
                player: e.player,
                reason: e.cause.into(),
                ply: self.plies,
                absorbed_by: e.absorbed_by,
            };
            self.departures.push(d);
            eff.push(Effect::Eliminated(d));
        }
    }

    /// Counters restart when a player leaves (the start of phase 2); a pending offer lapses.
    fn new_phase(&mut self, eff: &mut Vec<Effect>) {
        self.no_progress = 0;
        self.consecutive = [[0; 3]; 3];
        self.restart_stretch();
        if let Some(o) = self.offer.take() {
            eff.push(Effect::DrawOfferLapsed { by: o.by });
        }
    }

    fn after_move(&mut self, m: Move, outcome: MoveOutcome, eff: &mut Vec<Effect>) {
        let s = outcome.mover;
        self.plies += 1;
        self.last_mover = Some(s);
        let progress = outcome.captured.is_some()
            || outcome.alliance.is_some()
            || outcome.emperor_killed
            || !outcome.eliminated.is_empty();
        let captured = outcome.captured.is_some();
        let elims = outcome.eliminated.clone();
        eff.push(Effect::Moved { mv: m, outcome });
        // Checks given by this move: a piece of s attacks the king of an enemy t.
        let mut checks = Players::EMPTY;
        for t in self.position.enemies(s).iter() {
            if let Some(k) = self.position.king(t)
                && self.position.attacks(s, k)
            {
                checks.insert(t);
            }
        }
        if !elims.is_empty() {
            self.record_board_eliminations(&elims, eff);
            self.new_phase(eff);
            if !self.check_end(eff) {
                self.check_dead(eff);
            }
            return;
        }
        let phase = self.phase();
        // Perpetual check by count.
        for t in Player::ALL {
            if t == s {
                continue;
            }
            let c = &mut self.consecutive[s.index()][t.index()];
            if checks.contains(t) {
                *c += 1;
            } else {
                *c = 0;
            }
        }
        let over_limit = Player::ALL.into_iter().find(|&t| {
            t != s
                && self.consecutive[s.index()][t.index()] >= PERPETUAL_CHECKS[phase]
                && self.position.has_legal_move(t)
        });
        if over_limit.is_some() {
            self.remove(s, EliminationReason::PerpetualCheck, eff);
            return;
        }
        // Repetition. No move adds a piece, so after a capture the board
        // holds fewer pieces than in any earlier position, and none of those
        // can occur again: the stretch of positions kept starts anew (as at
        // an elimination), and a long game keeps only its last stretch.
        if captured {
            self.restart_stretch();
        } else {
            self.moves.push(Ply { mover: s, checks });
            self.remember();
        }
        let occurrences = &self.seen[&self.position];
        if occurrences.len() >= 3 {
            let first = occurrences[0];
            let since = &self.moves[first..];
            let checkers: Vec<Player> = Player::ALL
                .into_iter()
                .filter(|&x| {
                    let mine: Vec<&Ply> = since.iter().filter(|p| p.mover == x).collect();
                    !mine.is_empty()
                        && Player::ALL
                            .into_iter()
                            .any(|t| t != x && mine.iter().all(|p| p.checks.contains(t)))
                })
                .collect();
            if let [loser] = checkers[..] {
                self.remove(loser, EliminationReason::PerpetualCheck, eff);
            } else {
                self.finish_draw(DrawReason::Repetition, eff);
            }
            return;
        }
        // No progress.
        self.no_progress = if progress { 0 } else { self.no_progress + 1 };
        if self.no_progress >= NO_PROGRESS_PLIES[phase] {
            self.finish_draw(DrawReason::NoProgress, eff);
            return;
        }
        if self.check_dead(eff) {
            return;
        }
        // The offer lapses when the offerer's next turn begins.
        if let Some(o) = &self.offer
            && o.by == self.position.turn()
        {
            let by = o.by;
            self.offer = None;
            eff.push(Effect::DrawOfferLapsed { by });
        }
    }

    fn finish_draw(&mut self, reason: DrawReason, eff: &mut Vec<Effect>) {
        self.offer = None;
        let mut outcomes = [Some(Outcome::Loss); 3];
        for p in self.position.live().iter() {
            outcomes[p.index()] = Some(Outcome::Draw);
        }
        let result = GameResult {
            ending: Ending::Draw(reason),
            outcomes,
            eliminations: self.departures.clone(),
        };
        self.result = Some(result.clone());
        eff.push(Effect::Finished(result));
    }

    /// Draw at once when no live player owns a chariot, horse, cannon or soldier.
    fn check_dead(&mut self, eff: &mut Vec<Effect>) -> bool {
        if self.result.is_some() {
            return true;
        }
        let pos = &self.position;
        let alive = pos.live().iter().any(|p| {
            pos.pieces_of(p.colour()).iter().any(|q| {
                matches!(
                    pos.piece_at(q).map(|pc| pc.role),
                    Some(Role::Chariot | Role::Horse | Role::Cannon | Role::Soldier)
                )
            })
        });
        if alive {
            return false;
        }
        self.finish_draw(DrawReason::DeadPosition, eff);
        true
    }

    /// Ends the game when one player is left.
    fn check_end(&mut self, eff: &mut Vec<Effect>) -> bool {
        if self.result.is_some() {
            return true;
        }
        if self.position.live().count() > 1 {
            return false;
        }
        let mut outcomes = [Some(Outcome::Loss); 3];
        let winner = self.position.live().iter().next().unwrap_or(self.position.turn());
        outcomes[winner.index()] = Some(Outcome::Win);
        let result = GameResult {
            ending: Ending::LastStanding(winner),
            outcomes,
            eliminations: self.departures.clone(),
        };
        self.offer = None;
        self.result = Some(result.clone());
        eff.push(Effect::Finished(result));
        true
    }
}
