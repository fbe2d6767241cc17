//! The game record of 三国暗棋 (§7, §8, §11.5): modes, deadlock scoring, the
//! no-progress rule, scoring proposals, resignation, time, abandonment and abort.
//!
//! An [`AnqiGame`] changes only through [`AnqiGame::apply`], one timestamped
//! [`Input`] at a time; time and disconnections are inputs decided by the
//! server, never read from a clock. It keeps the **full** position (the
//! server's); [`AnqiGame::viewer`] is what everyone may see. Each accepted input
//! returns the [`RecordEvent`]s it appended, in the order they happened — the
//! §11.5 record tokens are their `Display`.

use std::fmt;

use super::explain::{IllegalAction, Refusal};
use super::position::{AnqiPosition, Happening, Move, Outcome};
use super::{Piece, Point, Team};

/// How the game is won (§8).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// 全灭: play until at most one seat is live or deadlock (the default).
    #[default]
    Annihilation,
    /// 收军 (§8.3): a seat that captured as many pieces as its team's size recovers its army.
    Shoujun,
    /// 先得 N 分 (§8.4): the first seat to reach `target` captured points wins.
    Race {
        /// N (≥ 1; 200 by default, also with `enhanced`, R-17).
        target: u32,
    },
}

/// How live seats are ordered at a deadlock (§8.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum DeadlockScoring {
    /// 得失分: team total − lost + captured (the default).
    #[default]
    Net,
    /// 残存分: the value of the team's pieces on the board.
    RemainingPoints,
    /// 残存数: the number of the team's pieces on the board.
    RemainingCount,
}

/// A game's settings, fixed when it is created.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    /// The mode.
    pub mode: Mode,
    /// The deadlock scoring.
    pub scoring: DeadlockScoring,
    /// The no-progress limit in rounds (10 … 100; 30 by default, R-14).
    pub no_progress_rounds: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: Mode::Annihilation,
            scoring: DeadlockScoring::Net,
            no_progress_rounds: 30,
        }
    }
}

/// What a seat (or the server on its behalf) does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// An action, on the seat's turn (`+b2`, `b2-b4`, `b2xb4`).
    Play(Move),
    /// Resign (at any time).
    Resign,
    /// Its clock ran out (the server's clock decides).
    Timeout,
    /// Disconnected past the grace period (the server decides). Before the seat's first
    /// action this aborts the game.
    Abandon,
    /// Propose ending by deadlock scoring (申请计分, R-15).
    Propose,
    /// Answer the pending proposal.
    Answer {
        /// Accept (true) or decline.
        accept: bool,
    },
}

/// One input: which seat (0 … 2), what, and when (milliseconds on the caller's clock,
/// recorded, never read).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Input {
    /// The seat, 0 … 2.
    pub seat: usize,
    /// What it does.
    pub command: Command,
    /// When.
    pub at: u64,
}

/// Why a seat stopped playing (§7).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// 全灭: no piece of its team on the board.
    Annihilated,
    /// It resigned.
    Resigned,
    /// Its clock ran out.
    Timeout,
    /// It abandoned the game.
    Abandoned,
    /// 收军: it recovered its army (a finish, not a loss).
    Recovered,
}

impl StopReason {
    /// The record's word.
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::Annihilated => "annihilated",
            StopReason::Resigned => "resigned",
            StopReason::Timeout => "timeout",
            StopReason::Abandoned => "abandoned",
            StopReason::Recovered => "recovered",
        }
    }
}

/// Why the game ended (§11.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// At most one seat is live.
    LastSeat,
    /// 收军 left at most one seat live.
    Shoujun,
    /// A seat reached the race target.
    Race,
    /// The no-progress limit (deadlock).
    NoProgress,
    /// No live seat has a legal action (deadlock).
    NoAction,
    /// Every live seat accepted a scoring proposal (deadlock).
    Agreement,
    /// A seat abandoned before its first action: no result.
    Aborted,
}

impl EndReason {
    /// The record's word.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::LastSeat => "last-seat",
            EndReason::Shoujun => "shoujun",
            EndReason::Race => "race",
            EndReason::NoProgress => "no-progress",
            EndReason::NoAction => "no-action",
            EndReason::Agreement => "agreement",
            EndReason::Aborted => "aborted",
        }
    }
}

/// One event of the record (§11.5). `Display` is the record token.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RecordEvent {
    /// An action, as the record writes it (`+b2=R`, `b2-b4`, `b2xb4`).
    Action {
        /// The seat, 0 … 2.
        seat: usize,
        /// The action (canonical).
        action: Move,
        /// What a flip revealed.
        revealed: Option<Piece>,
    },
    /// C1.
    Claim {
        /// Seat 0 … 2.
        seat: usize,
        /// The team.
        team: Team,
    },
    /// C2, C3, or §9.2 (assigned teams open the record of a fresh game).
    Assign {
        /// Seat 0 … 2.
        seat: usize,
        /// The team.
        team: Team,
    },
    /// An automatic pass.
    Pass {
        /// Seat 0 … 2.
        seat: usize,
    },
    /// A seat stopped playing (not 收军, which is its own event).
    Out {
        /// Seat 0 … 2.
        seat: usize,
        /// Why.
        reason: StopReason,
    },
    /// 收军: the seat's pieces removed, in index order, face-down ones revealed.
    Shoujun {
        /// Seat 0 … 2.
        seat: usize,
        /// `(point, identity, was_face_up)`.
        removed: Vec<(Point, Piece, bool)>,
    },
    /// A scoring proposal.
    Propose {
        /// Seat 0 … 2.
        seat: usize,
    },
    /// An acceptance.
    Accept {
        /// Seat 0 … 2.
        seat: usize,
    },
    /// A refusal (the proposal lapses).
    Decline {
        /// Seat 0 … 2.
        seat: usize,
    },
    /// The end: why, and the places of seats 1, 2, 3 (`None` when aborted).
    End {
        /// Why.
        reason: EndReason,
        /// Places (1 … 3, ties share).
        placing: Option<[u8; 3]>,
    },
    /// After the end: the layout (§10.3).
    Layout(String),
    /// After the end: the salt, 64 hex digits.
    Salt(String),
}

impl fmt::Display for RecordEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordEvent::Action { action, revealed, .. } => match (action, revealed) {
                (Move::Flip(p), Some(id)) => write!(f, "+{p}={id}"),
                _ => write!(f, "{action}"),
            },
            RecordEvent::Claim { seat, team } => write!(f, "claim {} {team}", seat + 1),
            RecordEvent::Assign { seat, team } => write!(f, "assign {} {team}", seat + 1),
            RecordEvent::Pass { seat } => write!(f, "pass {}", seat + 1),
            RecordEvent::Out { seat, reason } => write!(f, "out {} {}", seat + 1, reason.as_str()),
            RecordEvent::Shoujun { seat, removed } => {
                write!(f, "shoujun {}", seat + 1)?;
                for (p, id, up) in removed {
                    write!(f, " {}{p}={id}", if *up { "" } else { "+" })?;
                }
                Ok(())
            }
            RecordEvent::Propose { seat } => write!(f, "propose {}", seat + 1),
            RecordEvent::Accept { seat } => write!(f, "accept {}", seat + 1),
            RecordEvent::Decline { seat } => write!(f, "decline {}", seat + 1),
            RecordEvent::End { reason, placing } => match placing {
                Some(p) => write!(f, "end {} {},{},{}", reason.as_str(), p[0], p[1], p[2]),
                None => write!(f, "end {} -", reason.as_str()),
            },
            RecordEvent::Layout(l) => write!(f, "layout {l}"),
            RecordEvent::Salt(s) => write!(f, "salt {s}"),
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GameResult {
    /// Why it ended.
    pub reason: EndReason,
    /// Places of seats 1, 2, 3 (`None` when aborted).
    pub placing: Option<[u8; 3]>,
    /// Each seat's score by the mode (deadlock score, or captured points in `race`).
    pub scores: [u32; 3],
}

/// Why an input was refused. The game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The game is over.
    #[error("the game is over")]
    Over,
    /// There is no such seat.
    #[error("there is no seat {0}")]
    NoSuchSeat(usize),
    /// The seat no longer plays.
    #[error("seat {} is no longer playing", .0 + 1)]
    NotLive(usize),
    /// An action refused by the rules (includes "not your turn").
    #[error(transparent)]
    Illegal(#[from] IllegalAction),
    /// A proposal is already pending.
    #[error("a scoring proposal is already pending")]
    ProposalPending,
    /// The seat has made its 3 proposals.
    #[error("seat {} has made its three proposals", .0 + 1)]
    ProposalsUsed(usize),
    /// No proposal to answer.
    #[error("there is no scoring proposal to answer")]
    NoProposal,
    /// The proposer or a seat that accepted cannot answer.
    #[error("seat {} has already answered the proposal", .0 + 1)]
    AlreadyAnswered(usize),
}

/// A 三国暗棋 game: settings, the full position, the record.
#[derive(Clone, Debug)]
pub struct AnqiGame {
    settings: Settings,
    initial: AnqiPosition,
    position: AnqiPosition,
    inputs: Vec<Input>,
    record: Vec<(u64, RecordEvent)>,
    /// Seats that stopped, in order (recoveries included).
    stops: Vec<(usize, StopReason)>,
    race_winner: Option<usize>,
    acted: [bool; 3],
    proposals_made: [u8; 3],
    /// The proposer and the seats that accepted (bit mask, the proposer included).
    pending: Option<(usize, u8)>,
    turns_without_progress: u32,
    progress_this_turn: bool,
    result: Option<GameResult>,
    reveal: Option<(String, String)>,
}

impl AnqiGame {
    /// A new game from a full initial position (from a layout, teams assigned or not).
    ///
    /// A fresh start with assigned teams (§9.2: turn 1, every piece face down, seats
    /// holding teams) opens the record with `assign s t` for each such seat (§11.5).
    pub fn new(initial: AnqiPosition, settings: Settings) -> AnqiGame {
        let fresh = initial.turn() == 1 && initial.face_down_count() == 32;
        let record = (0..3)
            .filter(|_| fresh)
            .filter_map(|seat| {
                initial
                    .team_of_seat(seat)
                    .map(|team| (0, RecordEvent::Assign { seat, team }))
            })
            .collect();
        AnqiGame {
            settings,
            position: initial.clone(),
            initial,
            inputs: Vec::new(),
            record,
            stops: Vec::new(),
            race_winner: None,
            acted: [false; 3],
            proposals_made: [0; 3],
            pending: None,
            turns_without_progress: 0,
            progress_this_turn: false,
            result: None,
            reveal: None,
        }
    }

    /// Records the layout and salt to publish after the end (§10.4, §11.5): the record
    /// then ends with `layout …` and `salt …`.
    pub fn set_deal(&mut self, layout: &str, salt_hex: &str) {
        self.reveal = Some((layout.to_owned(), salt_hex.to_owned()));
        if self.result.is_some() && !self.record.iter().any(|(_, e)| matches!(e, RecordEvent::Layout(_))) {
            let at = self.record.last().map_or(0, |(t, _)| *t);
            self.record.push((at, RecordEvent::Layout(layout.to_owned())));
            self.record.push((at, RecordEvent::Salt(salt_hex.to_owned())));
        }
    }

    /// Replays inputs on a new game; the first refused one is returned with its index.
    pub fn replay(initial: AnqiPosition, settings: Settings, inputs: &[Input]) -> Result<AnqiGame, (usize, GameError)> {
        let mut g = AnqiGame::new(initial, settings);
        for (i, input) in inputs.iter().enumerate() {
            g.apply(*input).map_err(|e| (i, e))?;
        }
        Ok(g)
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// The current full position (server only: it holds the hidden identities).
    pub fn position(&self) -> &AnqiPosition {
        &self.position
    }
    /// The current viewer position (what every seat and spectator sees).
    pub fn viewer(&self) -> AnqiPosition {
        self.position.viewer()
    }
    /// The initial full position.
    pub fn initial_position(&self) -> &AnqiPosition {
        &self.initial
    }
    /// The accepted inputs.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }
    /// The record with timestamps.
    pub fn record(&self) -> &[(u64, RecordEvent)] {
        &self.record
    }
    /// The record as §11.5 tokens, one per line.
    pub fn record_lines(&self) -> Vec<String> {
        self.record.iter().map(|(_, e)| e.to_string()).collect()
    }
    /// The result, once the game is over.
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }
    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.result.is_some()
    }
    /// Completed turns in a row without progress (§8.5).
    pub fn turns_without_progress(&self) -> u32 {
        self.turns_without_progress
    }
    /// The pending proposal: the proposer and the seats that accepted so far.
    pub fn pending_proposal(&self) -> Option<(usize, [bool; 3])> {
        self.pending.map(|(s, m)| (s, [0, 1, 2].map(|i| m & (1 << i) != 0)))
    }
    /// Proposals seat s has made.
    pub fn proposals_made(&self, seat: usize) -> u8 {
        self.proposals_made[seat]
    }
    /// The seats that stopped, in order, and why.
    pub fn stops(&self) -> &[(usize, StopReason)] {
        &self.stops
    }

    /// Seat s's score by the mode now: captured points in `race`, else its deadlock score.
    pub fn score(&self, seat: usize) -> u32 {
        let p = &self.position;
        if let Mode::Race { .. } = self.settings.mode {
            return p.captured_points(seat);
        }
        let Some(t) = p.team_of_seat(seat) else {
            return 0;
        };
        match self.settings.scoring {
            DeadlockScoring::Net => p.value_on_board(t) + p.captured_points(seat),
            DeadlockScoring::RemainingPoints => p.value_on_board(t),
            DeadlockScoring::RemainingCount => p.pieces_on_board(t),
        }
    }

    fn push(&mut self, at: u64, e: RecordEvent, out: &mut Vec<RecordEvent>) {
        out.push(e.clone());
        self.record.push((at, e));
    }

    fn push_happenings(&mut self, at: u64, o: &Outcome, out: &mut Vec<RecordEvent>, count: bool) {
        for h in &o.happenings {
            match *h {
                Happening::Claim { seat, team } => self.push(at, RecordEvent::Claim { seat, team }, out),
                Happening::Assign { seat, team } => self.push(at, RecordEvent::Assign { seat, team }, out),
                Happening::Pass { seat, .. } => {
                    if count {
                        self.turns_without_progress += 1;
                    }
                    self.push(at, RecordEvent::Pass { seat }, out)
                }
                Happening::Annihilated { seat } => {
                    self.stops.push((seat, StopReason::Annihilated));
                    if count {
                        self.turns_without_progress = 0;
                    }
                    self.progress_this_turn = true;
                    self.push(
                        at,
                        RecordEvent::Out {
                            seat,
                            reason: StopReason::Annihilated,
                        },
                        out,
                    )
                }
            }
        }
    }

    /// Applies one input; returns the record events it appended.
    pub fn apply(&mut self, input: Input) -> Result<Vec<RecordEvent>, GameError> {
        if self.result.is_some() {
            return Err(GameError::Over);
        }
        let seat = input.seat;
        if seat > 2 {
            return Err(GameError::NoSuchSeat(seat));
        }
        if !self.position.is_live(seat) {
            return Err(GameError::NotLive(seat));
        }
        let mut out = Vec::new();
        let at = input.at;
        match input.command {
            Command::Play(m) => self.play(seat, m, at, &mut out)?,
            Command::Resign => self.stop(seat, StopReason::Resigned, at, &mut out),
            Command::Timeout => self.stop(seat, StopReason::Timeout, at, &mut out),
            Command::Abandon => {
                if !self.acted[seat] {
                    self.push(
                        at,
                        RecordEvent::Out {
                            seat,
                            reason: StopReason::Abandoned,
                        },
                        &mut out,
                    );
                    self.end(EndReason::Aborted, at, &mut out);
                } else {
                    self.stop(seat, StopReason::Abandoned, at, &mut out);
                }
            }
            Command::Propose => {
                if self.pending.is_some() {
                    return Err(GameError::ProposalPending);
                }
                if self.proposals_made[seat] >= 3 {
                    return Err(GameError::ProposalsUsed(seat));
                }
                self.proposals_made[seat] += 1;
                self.pending = Some((seat, 1 << seat));
                self.push(at, RecordEvent::Propose { seat }, &mut out);
            }
            Command::Answer { accept } => {
                let Some((proposer, mask)) = self.pending else {
                    return Err(GameError::NoProposal);
                };
                if mask & (1 << seat) != 0 {
                    return Err(GameError::AlreadyAnswered(seat));
                }
                if accept {
                    let mask = mask | (1 << seat);
                    self.pending = Some((proposer, mask));
                    self.push(at, RecordEvent::Accept { seat }, &mut out);
                    if (0..3).all(|s| !self.position.is_live(s) || mask & (1 << s) != 0) {
                        self.pending = None;
                        self.end(EndReason::Agreement, at, &mut out);
                    }
                } else {
                    self.pending = None;
                    self.push(at, RecordEvent::Decline { seat }, &mut out);
                }
            }
        }
        self.inputs.push(input);
        Ok(out)
    }

    fn play(&mut self, seat: usize, m: Move, at: u64, out: &mut Vec<RecordEvent>) -> Result<(), GameError> {
        let pos = &self.position;
        if let Some(to_move) = pos.seat_to_move() {
            if to_move != seat {
                return Err(IllegalAction {
                    action: m,
                    reason: Refusal::NotYourTurn { to_move: to_move + 1 },
                }
                .into());
            }
        }
        let m = pos.check(m)?;
        // A proposal lapses when the next action is played before all have accepted.
        self.pending = None;
        let turn_before = pos.turn();
        let mut next = self.position.clone();
        let o = next.act_unchecked(m, None);
        self.position = next;
        self.acted[seat] = true;
        if matches!(m, Move::Flip(_) | Move::Capture { .. }) {
            self.progress_this_turn = true;
        }
        self.push(
            at,
            RecordEvent::Action {
                seat,
                action: m,
                revealed: o.revealed,
            },
            out,
        );
        self.push_happenings(at, &o, out, false);
        // 收军 for the seat that acted (§8.3).
        let mut recovered_last = false;
        if self.settings.mode == Mode::Shoujun && self.position.is_live(seat) {
            if let Some(t) = self.position.team_of_seat(seat) {
                if self.position.captured_total(seat) >= t.size(self.position.options().split2) {
                    if let Some(removed) = self.position.recover_army(seat, &[]) {
                        self.stops.push((seat, StopReason::Recovered));
                        self.progress_this_turn = true;
                        recovered_last = true;
                        self.push(
                            at,
                            RecordEvent::Shoujun {
                                seat,
                                removed: removed.to_vec(),
                            },
                            out,
                        );
                    }
                }
            }
        }
        // The race end (§8.4).
        let race = match self.settings.mode {
            Mode::Race { target } => self.position.captured_points(seat) >= target,
            _ => false,
        };
        // Settling needs to know what the action flipped (`s:1:p`), not its other events.
        let mut rest = Outcome {
            flipped: o.flipped,
            ..Outcome::default()
        };
        self.position.finish_action(&mut rest);
        if race {
            self.race_winner = Some(seat);
            self.end(EndReason::Race, at, out);
            return Ok(());
        }
        let turn_done = self.position.is_over()
            || self.position.turn() != turn_before
            || self.position.seat_to_move() != Some(seat);
        if turn_done {
            if self.progress_this_turn {
                self.turns_without_progress = 0;
            } else {
                self.turns_without_progress += 1;
            }
            self.progress_this_turn = false;
        }
        self.push_happenings(at, &rest, out, true);
        if rest
            .happenings
            .iter()
            .any(|h| matches!(h, Happening::Annihilated { .. }))
        {
            recovered_last = false;
        }
        self.check_end(at, recovered_last, out);
        Ok(())
    }

    fn stop(&mut self, seat: usize, reason: StopReason, at: u64, out: &mut Vec<RecordEvent>) {
        self.pending = None;
        let Some(o) = self.position.stop_seat(seat) else {
            return;
        };
        self.stops.push((seat, reason));
        self.turns_without_progress = 0;
        self.progress_this_turn = false;
        self.push(at, RecordEvent::Out { seat, reason }, out);
        self.push_happenings(at, &o, out, true);
        self.check_end(at, false, out);
    }

    fn check_end(&mut self, at: u64, recovered_last: bool, out: &mut Vec<RecordEvent>) {
        let p = &self.position;
        if p.is_over() {
            let reason = if p.live_count() <= 1 {
                if recovered_last {
                    EndReason::Shoujun
                } else {
                    EndReason::LastSeat
                }
            } else {
                EndReason::NoAction
            };
            self.end(reason, at, out);
        } else if self.turns_without_progress >= self.settings.no_progress_rounds * p.live_count() {
            self.end(EndReason::NoProgress, at, out);
        }
    }

    /// The placing of §8.2 at the end.
    fn placing(&self) -> [u8; 3] {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &(s, r) in &self.stops {
            if r == StopReason::Recovered {
                groups.push(vec![s]);
            }
        }
        if let Some(w) = self.race_winner {
            groups.push(vec![w]);
        }
        let mut live: Vec<usize> = (0..3)
            .filter(|&s| self.position.is_live(s) && self.race_winner != Some(s))
            .collect();
        live.sort_by_key(|&s| std::cmp::Reverse(self.score(s)));
        let mut i = 0;
        while i < live.len() {
            let mut group = vec![live[i]];
            while i + 1 < live.len() && self.score(live[i + 1]) == self.score(live[i]) {
                i += 1;
                group.push(live[i]);
            }
            groups.push(group);
            i += 1;
        }
        for &(s, r) in self.stops.iter().rev() {
            if r != StopReason::Recovered {
                groups.push(vec![s]);
            }
        }
        let mut placing = [3u8; 3];
        let mut before = 0;
        for g in groups {
            for &s in &g {
                placing[s] = before + 1;
            }
            before += g.len() as u8;
        }
        placing
    }

    fn end(&mut self, reason: EndReason, at: u64, out: &mut Vec<RecordEvent>) {
        let placing = (reason != EndReason::Aborted).then(|| self.placing());
        let scores = [0, 1, 2].map(|s| self.score(s));
        self.result = Some(GameResult {
            reason,
            placing,
            scores,
        });
        self.push(at, RecordEvent::End { reason, placing }, out);
        if let Some((layout, salt)) = self.reveal.clone() {
            self.push(at, RecordEvent::Layout(layout), out);
            self.push(at, RecordEvent::Salt(salt), out);
        }
    }
}

/// Why a record cannot be followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("record line {line} '{text}': {why}")]
pub struct FollowError {
    /// 1-based line number.
    pub line: usize,
    /// The line.
    pub text: String,
    /// Why, in words.
    pub why: String,
}

/// Follows a record (§11.5 tokens, one per line) on a position, typically the initial
/// **viewer** position: flips reveal what the record says (`+b2=R`), moves and captures
/// are played, `out s resigned|timeout|abandoned` stops the seat, and a `shoujun` line
/// removes the pieces it names, between the action and its settling as the game does.
/// Automatic events (claims, assignments, passes, annihilations) are reproduced by
/// settling and are not re-applied; proposals, `end`, `layout` and `salt` change nothing.
/// This is how a bot or a spectator's client follows a game without hidden information.
pub fn follow_record(pos: &mut AnqiPosition, lines: &[String]) -> Result<(), FollowError> {
    let err = |i: usize, why: String| FollowError {
        line: i + 1,
        text: lines[i].clone(),
        why,
    };
    let parse_seat = |w: Option<&str>| -> Option<usize> {
        match w {
            Some("1") => Some(0),
            Some("2") => Some(1),
            Some("3") => Some(2),
            _ => None,
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_str();
        let mut words = line.split(' ');
        let first = words.next().unwrap_or("");
        match first {
            "claim" | "assign" | "pass" | "propose" | "accept" | "decline" | "end" | "layout" | "salt" | "shoujun" => {}
            "out" => {
                let seat = parse_seat(words.next()).ok_or_else(|| err(i, "no such seat".into()))?;
                match words.next() {
                    Some("annihilated") => {}
                    Some("abandoned") if lines.get(i + 1).is_some_and(|l| l.starts_with("end aborted")) => {}
                    Some("resigned" | "timeout" | "abandoned") => {
                        pos.stop_seat(seat)
                            .ok_or_else(|| err(i, "the seat is not playing".into()))?;
                    }
                    _ => return Err(err(i, "unknown reason".into())),
                }
            }
            action => {
                let (text, identity) = match action.split_once('=') {
                    Some((t, id)) => {
                        let id = id.chars().next().and_then(Piece::from_char);
                        (t, Some(id.ok_or_else(|| err(i, "not a piece letter".into()))?))
                    }
                    None => (action, None),
                };
                let m = super::notation::parse_move(text).map_err(|e| err(i, e.to_string()))?;
                let m = pos.check(m).map_err(|e| err(i, e.reason.to_string()))?;
                let seat = pos.seat_to_move().unwrap_or(0);
                if let Move::Flip(p) = m {
                    let Some(id) = identity else {
                        return Err(err(i, "a flip in the record names what it revealed".into()));
                    };
                    let ok = match pos.piece_at(p) {
                        Some((false, None)) => pos.hidden_count(id) > 0,
                        Some((false, Some(x))) => x == id,
                        _ => false,
                    };
                    if !ok {
                        return Err(err(i, format!("{id} cannot be the face-down piece on {p}")));
                    }
                }
                // The automatic events that follow the action, then maybe its 收军.
                let mut j = i + 1;
                while j < lines.len()
                    && (lines[j].starts_with("claim ")
                        || lines[j].starts_with("assign ")
                        || lines[j].ends_with(" annihilated"))
                {
                    j += 1;
                }
                let shoujun = lines.get(j).filter(|l| l.starts_with("shoujun "));
                let mut out = pos.act_unchecked(m, identity);
                if let Some(sj) = shoujun {
                    let mut told = Vec::new();
                    for w in sj.split(' ').skip(2) {
                        if let Some(rest) = w.strip_prefix('+') {
                            let (p, id) = rest.split_once('=').ok_or_else(|| err(j, "bad removal".into()))?;
                            let p = Point::parse(p).ok_or_else(|| err(j, "bad point".into()))?;
                            let id = id
                                .chars()
                                .next()
                                .and_then(Piece::from_char)
                                .ok_or_else(|| err(j, "bad piece".into()))?;
                            if pos.piece_at(p) == Some((false, None)) {
                                told.push((p, id));
                            }
                        }
                    }
                    pos.recover_army(seat, &told)
                        .ok_or_else(|| err(j, "the removal does not fit".into()))?;
                }
                pos.finish_action(&mut out);
            }
        }
        i += 1;
    }
    Ok(())
}
