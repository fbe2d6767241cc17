//! 三国演弈棋 (variant `yanyi`) in a room: [`RoomGame`] over the engine's
//! [`YanyiGame`] (RULES-YANYI, its §9 record rules included).
//!
//! - **Who moves** comes from the engine (`Position::turn`, chosen by 被将先走,
//!   §7.1 step 6), never from a fixed cycle: the clock runs for that seat, and
//!   a seat may move twice before another does.
//! - **Seats** `W`, `B`, `Y` are 吴 (G), 魏 (B), 蜀 (R) (`protocol::yanyi::seat`).
//! - **Record lines**: an alliance, the 汉 force handed over, 杀汉 and
//!   absorptions become `Noted` lines (`protocol::yanyi::noted_*`) after the move
//!   that caused them; eliminations are `Eliminated` with their absorber.
//! - **Held pieces**: the adapter follows each piece's first owner from the
//!   start position, so the status can show which pieces an activation or an
//!   absorption handed to another owner (the position text writes them in
//!   their holder's colour only).
//! - **Bots**: `bot::yanyi::choose_game_move` on a clone of the game (the
//!   whole game is public), so the record's rules (perpetual check,
//!   repetition) are weighed too.

use engine::yanyi::game::{NO_PROGRESS_PLIES, PERPETUAL_CHECKS};
use engine::yanyi::{
    Action, Colour, DrawReason as YDraw, Effect, EliminationReason as YReason, Ending as YEnding, Event, GameError,
    Outcome as YOutcome, Player, Position, YanyiGame, format_position, parse_move, parse_position,
};
use protocol::yanyi::{self as wire, Absorption, HanState, TurnReason, YanyiStatus, seat, seats};
use protocol::{
    Departure, DrawReason, EliminationReason, Ending, ErrorBody, ErrorCode, GameResult, MoveTexts, Outcome,
    PendingOffer, Refusal, Side, Status, Variant,
};

use super::{BotAsk, BotSearch, Command, Happened, RoomGame, err, parse_command};
use crate::room::bots::Halt;

const POINTS: usize = engine::yanyi::board::NUM_POINTS;

/// A 三国演弈棋 game in a room.
#[derive(Clone, Debug)]
pub struct Yanyi {
    game: YanyiGame,
    /// The 汉 force's state (the position cannot tell an alliance from 杀汉).
    han: HanState,
    /// Absorptions so far.
    absorptions: Vec<Absorption>,
    /// The first owner of the piece on each point (by canonical index).
    origin: [Option<Colour>; POINTS],
    /// Every `Noted` line so far, for snapshots and the record.
    notes: Vec<protocol::Note>,
}

fn game_error(e: &GameError) -> ErrorBody {
    let code = match e {
        GameError::Finished => ErrorCode::GameOver,
        GameError::NotLive(_) => ErrorCode::NotLive,
        GameError::NotYourTurn { .. } => ErrorCode::NotYourTurn,
        GameError::Illegal(_) => ErrorCode::IllegalMove,
        GameError::OfferPending(_) => ErrorCode::OfferPending,
        GameError::NothingToAnswer(_) => ErrorCode::NothingToAnswer,
        GameError::TimeWentBack { .. } => ErrorCode::Internal,
    };
    err(code, e.to_string())
}

fn reason(r: YReason) -> EliminationReason {
    match r {
        YReason::Mate => EliminationReason::Mate,
        YReason::Stalemate => EliminationReason::Stalemate,
        YReason::Facing => EliminationReason::Facing,
        YReason::Resign => EliminationReason::Resign,
        YReason::Time => EliminationReason::Time,
        YReason::Abandon => EliminationReason::Abandon,
        YReason::PerpetualCheck => EliminationReason::PerpetualCheck,
    }
}

fn departure(d: &engine::yanyi::Departure) -> Departure {
    Departure {
        side: seat(d.player),
        reason: reason(d.reason),
        ply: d.ply,
        absorbed_by: d.absorbed_by.map(seat),
    }
}

/// The protocol's result of a 三国演弈棋 result.
pub fn result(r: &engine::yanyi::GameResult) -> GameResult {
    let ending = match r.ending {
        YEnding::LastStanding(w) => Ending::LastStanding { winner: seat(w) },
        YEnding::Draw(d) => Ending::Draw {
            reason: match d {
                YDraw::Agreement => DrawReason::Agreement,
                YDraw::Repetition => DrawReason::Repetition,
                YDraw::NoProgress => DrawReason::NoProgress,
                YDraw::DeadPosition => DrawReason::DeadPosition,
            },
        },
        YEnding::Aborted { by } => Ending::Aborted { by: seat(by) },
    };
    let outcomes = r.outcomes.map(|o| {
        o.map(|o| match o {
            YOutcome::Win => Outcome::Win,
            YOutcome::Draw => Outcome::Draw,
            YOutcome::Loss => Outcome::Loss,
        })
    });
    let placing = r.placing();
    GameResult {
        ending,
        outcomes,
        eliminations: r.eliminations.iter().map(departure).collect(),
        no_shows: Vec::new(),
        placing: if placing.iter().all(Option::is_some) {
            Some(placing.map(|p| p.unwrap_or_default()))
        } else {
            None
        },
        scores: None,
    }
}

impl Yanyi {
    /// A new game from the start position.
    pub fn new() -> Yanyi {
        Yanyi::from_position(Position::initial())
    }

    /// A game from any valid position.
    pub fn from_position(position: Position) -> Yanyi {
        let mut origin = [None; POINTS];
        for p in engine::yanyi::Point::all() {
            origin[p.index()] = position.piece_at(p).map(|pc| pc.colour);
        }
        let han = if position.han_static() {
            HanState::Static
        } else {
            // A text without the 汉 force: whoever holds its pieces is not known; call it an alliance's.
            match position.alliance() {
                Some((a, b)) => match Player::ALL.into_iter().find(|&z| z != a && z != b) {
                    Some(z) if position.live().contains(z) => HanState::AlliedTo { holder: seat(z) },
                    _ => HanState::Static,
                },
                None => HanState::Static,
            }
        };
        Yanyi {
            game: YanyiGame::from_position(position),
            han,
            absorptions: Vec::new(),
            origin,
            notes: Vec::new(),
        }
    }

    /// The engine's game.
    pub fn game(&self) -> &YanyiGame {
        &self.game
    }

    fn action(cmd: &Command) -> Result<Action, ErrorBody> {
        Ok(match cmd {
            Command::Play(text) => {
                let m = parse_move(text).map_err(|e| err(ErrorCode::BadMove, format!("move {text:?}: {e}")))?;
                Action::Move(m)
            }
            Command::Resign => Action::Resign,
            Command::OfferDraw => Action::OfferDraw,
            Command::AnswerDraw(accept) => Action::AnswerDraw { accept: *accept },
            Command::Timeout => Action::Timeout,
            Command::Abandon => Action::Abandon,
        })
    }

    /// Why the seat to move is the one it is, from the position and the last mover.
    fn turn_reason(&self) -> TurnReason {
        let pos = self.game.position();
        if self.game.is_finished() || pos.live().count() < 2 {
            return TurnReason::Over;
        }
        if pos.live().count() == 2 {
            return TurnReason::Other;
        }
        let Some(last) = self.game.last_mover() else {
            return TurnReason::Start;
        };
        let mut checked = pos.checked();
        checked.remove(last);
        if checked.count() == 1 && checked.contains(pos.turn()) {
            TurnReason::Check
        } else {
            TurnReason::Cycle
        }
    }

    fn phase(&self) -> usize {
        usize::from(self.game.position().live().count() < 3)
    }

    fn yanyi_status(&self) -> YanyiStatus {
        let pos = self.game.position();
        let held = engine::yanyi::Point::all()
            .filter_map(|p| {
                let now = pos.piece_at(p)?.colour;
                let first = self.origin[p.index()]?;
                (first != now).then(|| (p.to_string(), first.letter().to_string()))
            })
            .collect();
        let phase = self.phase();
        YanyiStatus {
            turn_reason: self.turn_reason(),
            last_mover: self.game.last_mover().map(seat),
            alliance: pos.alliance().map(|(a, b)| [seat(a), seat(b)]),
            han: self.han,
            absorptions: self.absorptions.clone(),
            first_move_pending: seats(pos.pending()),
            held,
            plies_without_progress: self.game.plies_without_progress(),
            no_progress_limit: NO_PROGRESS_PLIES[phase],
            consecutive_checks: Player::ALL.map(|by| {
                Player::ALL.map(|on| {
                    if by == on {
                        0
                    } else {
                        self.game.consecutive_checks(by, on)
                    }
                })
            }),
            perpetual_check_limit: PERPETUAL_CHECKS[phase],
        }
    }

    /// Follows the first owners through a move (before the board changes are
    /// read again: a capture overwrites the captured piece's entry).
    fn follow(&mut self, from: usize, to: usize) {
        self.origin[to] = self.origin[from].take();
    }
}

impl Default for Yanyi {
    fn default() -> Self {
        Yanyi::new()
    }
}

impl RoomGame for Yanyi {
    fn variant(&self) -> Variant {
        Variant::Yanyi
    }

    fn to_move(&self) -> Option<Side> {
        (!self.game.is_finished()).then(|| seat(self.game.position().turn()))
    }

    fn live(&self) -> Vec<Side> {
        seats(self.game.position().live())
    }

    fn is_finished(&self) -> bool {
        self.game.is_finished()
    }

    fn plies(&self) -> u32 {
        self.game.plies()
    }

    fn epoch(&self) -> usize {
        self.game.events().len()
    }

    fn apply(&mut self, side: Side, cmd: Command, at_ms: u64) -> Result<Vec<Happened>, ErrorBody> {
        let action = Yanyi::action(&cmd)?;
        let player = wire::player(side);
        let effects = self
            .game
            .apply(Event {
                player,
                action,
                at: at_ms,
            })
            .map_err(|e| game_error(&e))?;
        let mut out = Vec::with_capacity(effects.len() + 2);
        for e in effects {
            match e {
                Effect::Moved { mv, outcome } => {
                    self.follow(mv.from.index(), mv.to.index());
                    out.push(Happened::Moved {
                        side: seat(outcome.mover),
                        mv: mv.to_string(),
                        captured: outcome.captured.map(|p| p.to_string()),
                        checks: seats(outcome.checked),
                        revealed: None,
                    });
                    if outcome.emperor_killed {
                        self.han = HanState::Killed {
                            holder: seat(outcome.mover),
                        };
                        out.push(Happened::Noted {
                            side: Some(seat(outcome.mover)),
                            text: wire::noted_emperor_killed(seat(outcome.mover)),
                        });
                    } else if let Some(z) = outcome.han_to {
                        self.han = HanState::AlliedTo { holder: seat(z) };
                    }
                    if let Some((a, b)) = outcome.alliance {
                        out.push(Happened::Noted {
                            side: Some(seat(outcome.mover)),
                            text: wire::noted_alliance(seat(a), seat(b)),
                        });
                    }
                    if let (Some(z), false) = (outcome.han_to, outcome.emperor_killed) {
                        out.push(Happened::Noted {
                            side: Some(seat(outcome.mover)),
                            text: wire::noted_han(seat(z)),
                        });
                    }
                }
                Effect::Eliminated(d) => {
                    out.push(Happened::Eliminated(departure(&d)));
                    if let Some(by) = d.absorbed_by {
                        let a = Absorption {
                            absorbed: seat(d.player),
                            by: seat(by),
                        };
                        self.absorptions.push(a);
                        out.push(Happened::Noted {
                            side: Some(a.by),
                            text: wire::noted_absorbed(a.absorbed, a.by),
                        });
                    }
                }
                Effect::DrawOffered { by, to } => out.push(Happened::DrawOffered {
                    by: seat(by),
                    to: seats(to),
                }),
                Effect::DrawAnswered { by, accept } => out.push(Happened::DrawAnswered { by: seat(by), accept }),
                Effect::DrawOfferLapsed { by } => out.push(Happened::DrawOfferLapsed { by: seat(by) }),
                Effect::Finished(r) => out.push(Happened::Finished(result(&r))),
            }
        }
        let ply = self.game.plies();
        for h in &out {
            if let Happened::Noted { side, text } = h {
                self.notes.push(protocol::Note {
                    ply,
                    side: *side,
                    text: text.clone(),
                });
            }
        }
        Ok(out)
    }

    fn status(&self, legal: bool) -> Status {
        let pos = self.game.position();
        let over = self.game.is_finished();
        Status {
            position: format_position(pos),
            turn: seat(pos.turn()),
            live: self.live(),
            ply: self.game.plies(),
            // A round: three moves (被将先走 makes rounds uneven; this is only a rough count).
            round: self.game.plies() / 3,
            legal_moves: if legal && !over {
                MoveTexts::displayed(pos.legal_moves().iter())
            } else {
                MoveTexts::new()
            },
            clocks: Default::default(),
            counters: None,
            in_check: if over { Vec::new() } else { seats(pos.checked()) },
            pending_offer: self.game.pending_offer().map(|(by, waiting)| PendingOffer {
                by: seat(by),
                waiting: seats(waiting),
            }),
            paused: false,
            anqi: None,
            yanyi: Some(Box::new(self.yanyi_status())),
        }
    }

    fn result(&self) -> Option<GameResult> {
        self.game.result().map(result)
    }

    fn departures(&self) -> Vec<Departure> {
        self.game.departures().iter().map(departure).collect()
    }

    fn pending_offer_waiting(&self) -> Vec<Side> {
        self.game.pending_offer().map(|(_, w)| seats(w)).unwrap_or_default()
    }

    fn moves(&self) -> Vec<(Side, String)> {
        self.game
            .events()
            .iter()
            .filter_map(|e| match e.action {
                Action::Move(m) => Some((seat(e.player), m.to_string())),
                _ => None,
            })
            .collect()
    }

    fn initial_position(&self) -> String {
        format_position(self.game.initial_position())
    }

    fn notes(&self) -> Vec<protocol::Note> {
        self.notes.clone()
    }

    fn bot_search(&self, side: Side, level: bot::Level, ask: BotAsk, seed: u64) -> BotSearch {
        // The whole game is public: the bot's search owns a clone of it.
        let game = self.game.clone();
        let me = wire::player(side);
        Box::new(move |halt: &Halt| {
            if ask == BotAsk::AnswerOffer {
                return Some(Command::AnswerDraw(accepts_draw(&game, me)));
            }
            let mut stop = |_nodes: u64| halt.stops();
            Some(match bot::yanyi::choose_game_move(&game, level, seed, &mut stop) {
                Some(m) => Command::Play(m.to_string()),
                // No legal move at a live turn cannot happen (a player
                // without one is eliminated before its turn); resigning
                // keeps the game going.
                None => Command::Resign,
            })
        })
    }
}

/// A bot's answer to a draw offer: never while three play (an offer must not
/// let two people gang up on a bot); with two, yes only when it stands worse
/// by [`bot::yanyi::DRAW_MARGIN`].
fn accepts_draw(game: &YanyiGame, me: Player) -> bool {
    let pos = game.position();
    pos.live().count() == 2 && bot::yanyi::eval::utility(pos, me) < -bot::yanyi::DRAW_MARGIN
}

/// Why `mv` is refused in a 三国演弈棋 status (`None`: it is legal).
pub fn explain(status: &Status, mv: &str) -> Result<Option<Refusal>, ErrorBody> {
    let m = parse_move(mv).map_err(|e| err(ErrorCode::BadMove, format!("move {mv:?}: {e}")))?;
    if status.legal_moves.contains(&m.to_string()) {
        return Ok(None);
    }
    Ok(Some(match parse_position(&status.position) {
        Ok(pos) => refusal(&engine::yanyi::explain::explain(&pos, m)),
        Err(_) => Refusal {
            code: "other".to_owned(),
            params: Default::default(),
            message: "the move is not legal here".to_owned(),
        },
    }))
}

/// A 三国演弈棋 refusal as a code and parameters (protocol/README.md,
/// "Explain", 三国演弈棋): players as seats (`W` 吴, `B` 魏, `Y` 蜀), pieces as
/// colour and role (`GC`, `YR`: the position text's letters).
pub fn refusal(reason: &engine::yanyi::Reason) -> Refusal {
    use engine::yanyi::Reason as R;
    let seat = |p: engine::yanyi::Player| protocol::Side::ALL[p.index()].to_string();
    let piece = |p: engine::yanyi::Piece| p.to_string();
    let (code, params): (&str, Vec<(&str, String)>) = match reason {
        R::GameOver => ("game_over", vec![]),
        R::NotYourTurn { turn, .. } => ("not_your_turn", vec![("turn", seat(*turn))]),
        R::NoPiece(p) => ("no_piece", vec![("point", p.to_string())]),
        R::HanNeverMoves(pc) => ("han_never_moves", vec![("piece", piece(*pc))]),
        R::NotYourPiece { piece: pc, turn } => {
            let mut params = vec![("piece", piece(*pc)), ("turn", seat(*turn))];
            if let Some(owner) = pc.colour.player() {
                params.push(("owner", seat(owner)));
            }
            ("not_your_piece", params)
        }
        R::NotThisPiecesMove(pc) => ("not_this_pieces_move", vec![("piece", piece(*pc))]),
        R::KingOutsidePalace => ("king_outside_palace", vec![]),
        R::AdvisorOutsidePalace => ("advisor_outside_palace", vec![]),
        R::ElephantOutsideCamp => ("elephant_outside_camp", vec![]),
        R::HorseOffBoard => ("horse_off_board", vec![]),
        R::SoldierNoRetreat { depth } => ("soldier_no_retreat", vec![("depth", depth.to_string())]),
        R::PathBlocked(p) => ("path_blocked", vec![("point", p.to_string())]),
        R::CannonScreen(n) => ("cannon_screen", vec![("count", n.to_string())]),
        R::CannonFirstMove => ("cannon_first_move", vec![]),
        R::OwnPiece(pc) => ("own_piece", vec![("piece", piece(*pc))]),
        R::AllyPiece { piece: pc, ally } => ("ally_piece", vec![("piece", piece(*pc)), ("ally", seat(*ally))]),
        R::HanCannotBeTaken(pc) => ("han_cannot_be_taken", vec![("piece", piece(*pc))]),
        R::EmperorOnlyByHorse => ("emperor_only_by_horse", vec![]),
        R::KingNeverCaptured(pc) => {
            let owner = pc.colour.player().map(seat).unwrap_or_default();
            ("king_never_captured", vec![("piece", piece(*pc)), ("owner", owner)])
        }
        R::KingAttacked(by) => (
            "king_attacked",
            vec![("by", by.iter().map(seat).collect::<Vec<_>>().join(","))],
        ),
        R::KingsFace(p) => ("kings_face", vec![("side", seat(*p))]),
    };
    Refusal {
        code: code.to_owned(),
        params: params.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        message: reason.to_string(),
    }
}

/// The legal moves of a status, recomputed from its position text.
pub fn relist(status: &Status) -> MoveTexts {
    parse_position(&status.position)
        .map(|pos| MoveTexts::displayed(pos.legal_moves().iter()))
        .unwrap_or_default()
}

/// A new game, or one from the position text `initial` (empty: the start).
pub fn new_game(initial: Option<&str>) -> Result<Yanyi, ErrorBody> {
    match initial {
        None | Some("") => Ok(Yanyi::new()),
        Some(text) => parse_position(text)
            .map(Yanyi::from_position)
            .map_err(|e| err(ErrorCode::BadRequest, format!("position: {e}"))),
    }
}

/// Rebuilds a game from its start position and its stored commands.
pub fn restore(initial: &str, events: &[(Side, String, u64)]) -> Result<Yanyi, String> {
    let mut g = new_game(Some(initial)).map_err(|e| e.message)?;
    for (i, (side, text, at)) in events.iter().enumerate() {
        let cmd = parse_command(text).ok_or_else(|| format!("event {i}: unknown command {text:?}"))?;
        g.apply(*side, cmd, *at)
            .map_err(|e| format!("event {i} ({side} {text}): {}", e.message))?;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    use super::*;

    const HAN: &str = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";

    /// A game from a §11 scenario: placement without the 汉 force, seat... fields 3–4 `- -`.
    fn scenario(placement: &str, turn: &str) -> Yanyi {
        new_game(Some(&format!("{placement},{HAN} {turn} - -"))).unwrap()
    }

    fn play(g: &mut Yanyi, side: Side, mv: &str) -> Vec<Happened> {
        g.apply(side, Command::Play(mv.to_owned()), 0)
            .unwrap_or_else(|e| panic!("{side} {mv}: {e:?}"))
    }

    fn noted(h: &[Happened]) -> Vec<String> {
        h.iter()
            .filter_map(|x| match x {
                Happened::Noted { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    fn yanyi(g: &Yanyi) -> YanyiStatus {
        *g.status(true).yanyi.unwrap()
    }

    #[test]
    fn checked_player_moves_first_and_the_clock_follows_it() {
        // §11 scenario 1: 蜀 (seat Y) checks 魏 (B); 吴 (W) is skipped.
        let mut g = scenario("RK@h1,RP@i4,GP@n9,GK@q9,RC@e10,BP@i14,BA@h17,BK@i17,BA@j17", "R");
        assert_eq!(g.to_move(), Some(Side::Y));
        let h = play(&mut g, Side::Y, "e10-i10");
        assert!(
            matches!(&h[0], Happened::Moved { side: Side::Y, checks, .. } if checks == &vec![Side::B]),
            "{h:?}"
        );
        assert_eq!(g.to_move(), Some(Side::B), "被将先走: 魏 answers");
        let st = g.status(true);
        assert_eq!(st.turn, Side::B);
        assert_eq!(st.legal_moves.len(), 4);
        assert_eq!(st.in_check, vec![Side::B]);
        assert_eq!(st.yanyi.as_ref().unwrap().turn_reason, TurnReason::Check);
        assert_eq!(st.yanyi.as_ref().unwrap().last_mover, Some(Side::Y));
        assert!(st.counters.is_none());
        // 吴 may not move out of turn, and nothing changes.
        let before = g.epoch();
        let e = g.apply(Side::W, Command::Play("q9-p9".into()), 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotYourTurn);
        assert_eq!(g.epoch(), before);
        play(&mut g, Side::B, "h17-i16");
        assert_eq!(g.to_move(), Some(Side::Y), "next(魏) = 蜀 moves again");
        assert_eq!(yanyi(&g).turn_reason, TurnReason::Cycle);
        assert_eq!(g.plies(), 2);
    }

    #[test]
    fn mate_absorbs_by_the_last_mover_rule() {
        let placement = "RK@h1,GC@m5,RC@i9,GK@q9,GC@m12,BA@h17,BK@i17,BA@j17";
        // §11 scenario 3: 吴's cannon behind 蜀's mates 魏 and 吴 absorbs.
        let mut g = scenario(placement, "G");
        let h = play(&mut g, Side::W, "m5-i5");
        let out: Vec<&Departure> = h
            .iter()
            .filter_map(|x| match x {
                Happened::Eliminated(d) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].side, out[0].reason, out[0].absorbed_by),
            (Side::B, EliminationReason::Mate, Some(Side::W))
        );
        assert_eq!(noted(&h), vec!["absorbed B W"]);
        assert_eq!(g.to_move(), Some(Side::Y));
        assert_eq!(g.live(), vec![Side::W, Side::Y]);
        let y = yanyi(&g);
        assert_eq!(
            y.absorptions,
            vec![Absorption {
                absorbed: Side::B,
                by: Side::W
            }]
        );
        assert_eq!(y.held.get("h17").map(String::as_str), Some("B"), "{:?}", y.held);
        assert_eq!(y.held.get("j17").map(String::as_str), Some("B"));
        assert_eq!(y.turn_reason, TurnReason::Other);
        assert_eq!(g.departures().len(), 1);
        // §11 scenario 4: in front of 蜀's cannon, 蜀 absorbs.
        let mut g = scenario(placement, "G");
        let h = play(&mut g, Side::W, "m12-i12");
        assert_eq!(noted(&h), vec!["absorbed B Y"]);
        assert!(g.status(false).position.contains("RA@h17"));
        assert!(g.status(false).legal_moves.is_empty(), "no legal list unless asked");
    }

    #[test]
    fn alliance_hands_the_han_force_to_the_third() {
        // §11 scenario 5: 吴's horse on 魏's point allies 吴 and 魏; 汉 goes to 蜀.
        let mut g = scenario("RK@i1,RP@i4,GN@c7,GP@n9,GK@q9,BR@q12,BP@i14,BK@i17", "G");
        assert_eq!(yanyi(&g).han, HanState::Static);
        let h = play(&mut g, Side::W, "c7-a8");
        assert_eq!(noted(&h), vec!["alliance W B", "han Y"]);
        assert_eq!(
            g.notes(),
            vec![
                protocol::Note {
                    ply: 1,
                    side: Some(Side::W),
                    text: "alliance W B".into()
                },
                protocol::Note {
                    ply: 1,
                    side: Some(Side::W),
                    text: "han Y".into()
                },
            ]
        );
        let y = yanyi(&g);
        assert_eq!(y.alliance, Some([Side::W, Side::B]));
        assert_eq!(y.han, HanState::AlliedTo { holder: Side::Y });
        for p in ["d7", "d9", "d11", "c9"] {
            assert_eq!(y.held.get(p).map(String::as_str), Some("Y"), "{p}: {:?}", y.held);
        }
        assert_eq!(g.to_move(), Some(Side::B));
        // allies may not capture each other: the engine refuses, nothing changes
        let before = g.status(true);
        assert!(g.apply(Side::B, Command::Play("q12-q9".into()), 0).is_err());
        assert_eq!(g.status(true), before);
    }

    #[test]
    fn killing_the_emperor_allies_the_other_two() {
        // §11 scenario 7
        let mut g = scenario("RK@i1,RP@i4,GN@b7,GP@n9,GK@q9,BP@i14,BK@i17", "G");
        let h = play(&mut g, Side::W, "b7-a9");
        assert!(
            matches!(&h[0], Happened::Moved { captured: Some(c), .. } if c == "YK"),
            "{h:?}"
        );
        assert_eq!(noted(&h), vec!["emperor_killed W", "alliance B Y"]);
        let y = yanyi(&g);
        assert_eq!(y.han, HanState::Killed { holder: Side::W });
        assert_eq!(y.alliance, Some([Side::B, Side::Y]));
        assert_eq!(g.to_move(), Some(Side::B));
    }

    #[test]
    fn facing_ends_the_game_with_a_placing() {
        // §11 scenario 8: 吴 makes 魏 and 蜀 face; both leave, 吴 wins.
        let mut g = scenario("RK@i1,GR@i9,GK@q9,BA@h17,BK@i17", "G");
        let h = play(&mut g, Side::W, "i9-j9");
        let reasons: Vec<EliminationReason> = h
            .iter()
            .filter_map(|x| match x {
                Happened::Eliminated(d) => Some(d.reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, vec![EliminationReason::Facing, EliminationReason::Facing]);
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(r.ending, Ending::LastStanding { winner: Side::W });
        assert_eq!(
            r.outcomes,
            [Some(Outcome::Win), Some(Outcome::Loss), Some(Outcome::Loss)]
        );
        assert_eq!(r.placing.map(|p| p[0]), Some(1));
        assert!(g.is_finished());
        assert_eq!(g.to_move(), None);
        assert_eq!(g.result().as_ref(), Some(r));
        let e = g.apply(Side::W, Command::Resign, 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::GameOver);
    }

    #[test]
    fn a_game_from_the_start_aborts_then_resigns_and_draws() {
        // Leaving before everyone moved aborts.
        let mut g = Yanyi::new();
        play(&mut g, Side::W, "q12-o13");
        let h = g.apply(Side::B, Command::Resign, 5).unwrap();
        assert!(
            matches!(&h[..], [Happened::Finished(r)] if r.ending == Ending::Aborted { by: Side::B } && r.placing.is_none())
        );
        // After everyone moved: resignation eliminates without absorption, then a draw by agreement.
        let mut g = Yanyi::new();
        for (s, mv) in [(Side::W, "q12-o13"), (Side::B, "e14-e13"), (Side::Y, "e4-e5")] {
            play(&mut g, s, mv);
        }
        assert!(yanyi(&g).first_move_pending.is_empty());
        let h = g.apply(Side::B, Command::Resign, 10).unwrap();
        assert!(
            matches!(&h[0], Happened::Eliminated(d) if d.side == Side::B && d.reason == EliminationReason::Resign && d.absorbed_by.is_none()),
            "{h:?}"
        );
        assert_eq!(g.live(), vec![Side::W, Side::Y]);
        assert_eq!(g.to_move(), Some(Side::W));
        // only the seat to move offers
        assert_eq!(
            g.apply(Side::Y, Command::OfferDraw, 11).unwrap_err().code,
            ErrorCode::NotYourTurn
        );
        let h = g.apply(Side::W, Command::OfferDraw, 12).unwrap();
        assert!(matches!(&h[..], [Happened::DrawOffered { by: Side::W, to }] if to == &vec![Side::Y]));
        assert_eq!(g.pending_offer_waiting(), vec![Side::Y]);
        let h = g.apply(Side::Y, Command::AnswerDraw(true), 13).unwrap();
        let Some(Happened::Finished(r)) = h.last() else {
            panic!("{h:?}")
        };
        assert_eq!(
            r.ending,
            Ending::Draw {
                reason: DrawReason::Agreement
            }
        );
        assert_eq!(
            r.outcomes,
            [Some(Outcome::Draw), Some(Outcome::Loss), Some(Outcome::Draw)]
        );
        assert_eq!(r.placing, Some([1, 3, 1]));
    }

    #[test]
    fn bad_input_changes_nothing() {
        let mut g = Yanyi::new();
        let before = g.status(true);
        for (side, cmd, code) in [
            (Side::W, Command::Play("z1-z2".into()), ErrorCode::BadMove),
            (Side::W, Command::Play("q12-q11".into()), ErrorCode::IllegalMove),
            (Side::W, Command::Play("o6-l6".into()), ErrorCode::IllegalMove),
            (Side::B, Command::Play("e14-e13".into()), ErrorCode::NotYourTurn),
            (Side::B, Command::AnswerDraw(true), ErrorCode::NothingToAnswer),
        ] {
            assert_eq!(g.apply(side, cmd, 0).unwrap_err().code, code);
        }
        assert_eq!(g.status(true), before);
        assert_eq!(g.epoch(), 0);
    }

    #[test]
    fn restore_replays_the_stored_commands() {
        let mut g = Yanyi::new();
        let mut stored = Vec::new();
        for (i, (s, cmd)) in [
            (Side::W, Command::Play("q12-o13".into())),
            (Side::B, Command::Play("e14-e13".into())),
            (Side::Y, Command::OfferDraw),
            (Side::W, Command::AnswerDraw(false)),
            (Side::Y, Command::Play("e4-e5".into())),
        ]
        .into_iter()
        .enumerate()
        {
            stored.push((s, g.command_text(&cmd), i as u64));
            g.apply(s, cmd, i as u64).unwrap();
        }
        assert_eq!(stored[2].1, "offer_draw");
        assert_eq!(stored[4].1, "move e4-e5");
        let initial = format_position(&Position::initial());
        let r = restore(&initial, &stored).unwrap();
        assert_eq!(r.status(true), g.status(true));
        assert_eq!(r.epoch(), g.epoch());
        let mut bad = stored.clone();
        bad[1].1 = "move e14-e11".into();
        assert!(restore(&initial, &bad).unwrap_err().contains("event 1"));
    }

    #[test]
    fn a_bot_moves_for_the_seat_to_move_on_its_own_clone() {
        let g = Yanyi::new();
        let search = g.bot_search(Side::W, bot::Level::Two, BotAsk::Move { may_offer: false }, 7);
        let far = Instant::now() + std::time::Duration::from_secs(20);
        let Some(Command::Play(mv)) = search(&Halt::new(far, &AtomicBool::new(false), None)) else {
            panic!("no move")
        };
        assert!(g.status(true).legal_moves.contains(&mv), "{mv}");
        // while three play a bot declines every draw offer
        let answer = g.bot_search(Side::B, bot::Level::One, BotAsk::AnswerOffer, 7)(&Halt::new(
            far,
            &AtomicBool::new(false),
            None,
        ));
        assert!(matches!(answer, Some(Command::AnswerDraw(false))));
    }

    fn explained(position: &str, mv: &str) -> Refusal {
        let pos = engine::yanyi::parse_position(position).unwrap();
        let m = engine::yanyi::parse_move(mv).unwrap();
        assert!(!pos.is_legal(m), "{mv} is legal in {position}");
        refusal(&engine::yanyi::explain::explain(&pos, m))
    }

    #[test]
    fn yanyi_refusals_speak_seats_and_the_games_words() {
        let start = engine::yanyi::format_position(&engine::yanyi::Position::initial());
        // the first-move cannon (吴 = seat W moves first)
        let r = explained(&start, "o6-l6");
        assert_eq!(r.code, "cannon_first_move", "{r:?}");
        // a static 汉 piece, and another player's piece
        let r = explained(&start, "d9-e9");
        assert_eq!(r.code, "han_never_moves");
        assert_eq!(r.params["piece"], "YR");
        let r = explained(&start, "i1-i2");
        assert_eq!(r.code, "not_your_piece");
        assert_eq!(r.params["owner"], "Y", "蜀 is seat Y");
        assert_eq!(r.params["turn"], "W", "吴 is seat W");
        // §11 scenario 9: own facing
        let han = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";
        let r = explained(&format!("RK@i1,BR@i9,GK@q9,BA@h17,BK@i17,{han} B - -"), "i9-j9");
        assert_eq!(r.code, "kings_face");
        assert_eq!(r.params["side"], "Y");
        // §11 scenario 6: the chariot d9, now 蜀's, would check q9
        let r = explained(&format!("RK@i1,RP@i4,GN@c7,GK@q9,BP@i14,BK@i17,{han} G - -"), "c7-a8");
        assert_eq!(r.code, "king_attacked");
        assert_eq!(r.params["by"], "Y");
    }

    #[test]
    fn explain_answers_from_a_public_status() {
        let g = Yanyi::new();
        let st = g.status(true);
        assert_eq!(explain(&st, "q12-o13").unwrap(), None, "legal");
        let r = explain(&st, "o6-l6").unwrap().unwrap();
        assert_eq!(r.code, "cannon_first_move");
        assert_eq!(explain(&st, "W72-W54").unwrap_err().code, ErrorCode::BadMove);
    }
}
