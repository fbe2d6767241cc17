//! 三国象棋 in a room: [`RoomGame`] over the engine's [`Game`] (RULES.md),
//! exactly as rooms played it before variants: the engine's events are the
//! commands, its effects the [`Happened`] list, its §6 counters and limits
//! the status's `counters` and the snapshot's `limits`.

use std::time::Instant;

use engine::board::NUM_POINTS;
use engine::game::{Action, Event, GameError};
use engine::{Effect, Game, Listing, Move, Point, format_position, parse_move, parse_position};
use protocol::{
    Counters, Departure, ErrorBody, ErrorCode, GameResult, GameSettings, MoveTexts, PendingOffer, Side, Status,
    TextPiece, Variant,
};

use super::{BotAsk, BotSearch, Command, Happened, RoomGame, err};
use crate::room::bots::Halt;

/// A 三国象棋 game in a room.
#[derive(Clone, Debug)]
pub struct SanguoGame {
    game: Game,
    /// The legal moves of the game's position and the sides in check,
    /// listed once after each event ([`Game::apply_listed`]): for the status
    /// that carries them, and the moves as the next move's one legality
    /// check. `None` until the first event after a start or a restore (then
    /// they are computed where needed), and once the game is over. Only
    /// `apply` changes the game, and it always replaces this listing: it is
    /// never stale. Its moves are on the heap, and the next event's listing
    /// is written over them in place.
    listed: Option<Listing>,
}

/// Two games are equal when their engine games are: the list is derived
/// from the position.
impl PartialEq for SanguoGame {
    fn eq(&self, other: &SanguoGame) -> bool {
        self.game == other.game
    }
}

impl Eq for SanguoGame {}

fn game_error(e: &GameError) -> ErrorBody {
    let code = match e {
        GameError::Finished => ErrorCode::GameOver,
        GameError::NotLive(_) => ErrorCode::NotLive,
        GameError::NotYourTurn { .. } => ErrorCode::NotYourTurn,
        GameError::Illegal(_) => ErrorCode::IllegalMove,
        GameError::NoOffersLeft(..) => ErrorCode::NoOffersLeft,
        GameError::OfferPending(_) => ErrorCode::OfferPending,
        GameError::NothingToAnswer(_) => ErrorCode::NothingToAnswer,
        GameError::TimeWentBack { .. } => ErrorCode::Internal,
    };
    err(code, e.to_string())
}

/// A command as an engine action; a move whose text does not parse is `bad_move`.
fn action_of(cmd: &Command) -> Result<Action, ErrorBody> {
    Ok(match cmd {
        Command::Play(mv) => {
            Action::Move(parse_move(mv).map_err(|e| err(ErrorCode::BadMove, format!("move {mv:?}: {e}")))?)
        }
        Command::Resign => Action::Resign,
        Command::OfferDraw => Action::OfferDraw,
        Command::AnswerDraw(accept) => Action::AnswerDraw { accept: *accept },
        Command::Timeout => Action::Timeout,
        Command::Abandon => Action::Abandon,
    })
}

/// The legal moves of a 三国象棋 status, from its position text (canonical
/// and round-tripping, RULES §7: they are the ones the status had).
pub fn relist(status: &Status) -> MoveTexts {
    parse_position(&status.position)
        .map(|pos| texts(&pos.legal_moves()))
        .unwrap_or_default()
}

/// Each point's name as a [`TextPiece`], made and checked at compile time;
/// a table in one place (a `static`), not a constant copied where it is used.
static PIECES: [TextPiece; NUM_POINTS] = {
    const fn piece(i: usize) -> TextPiece {
        let (bytes, len) = Point::from_index(i).name_bytes();
        match TextPiece::new(bytes, len) {
            Some(piece) => piece,
            None => panic!("a point's name is not a move text's piece"),
        }
    }
    let mut pieces = [piece(0); NUM_POINTS];
    let mut i = 1;
    while i < NUM_POINTS {
        pieces[i] = piece(i);
        i += 1;
    }
    pieces
};

/// The texts of `moves` (`W51-W41`, [`Move::parts`]), written from the two
/// points' names ([`PIECES`]) into one string as they are sent
/// ([`MoveTexts::from_pairs`]).
fn texts(moves: &[Move]) -> MoveTexts {
    MoveTexts::from_pairs(moves.iter().map(|m| (PIECES[m.from.index()], PIECES[m.to.index()])))
}

/// Why `mv` is refused in a 三国象棋 status (`None`: it is legal).
pub fn explain(status: &Status, mv: &str) -> Result<Option<protocol::Refusal>, ErrorBody> {
    let m = parse_move(mv).map_err(|e| err(ErrorCode::BadMove, format!("move {mv:?}: {e}")))?;
    if status.legal_moves.contains(&m.to_string()) {
        return Ok(None);
    }
    Ok(Some(match parse_position(&status.position) {
        Ok(pos) => protocol::Refusal::from(&engine::explain::explain(&pos, m)),
        Err(_) => protocol::Refusal {
            code: "other".to_owned(),
            params: Default::default(),
            message: "the move is not legal here".to_owned(),
        },
    }))
}

impl SanguoGame {
    /// A new game in the settings' direction of play.
    pub fn new(settings: &GameSettings) -> SanguoGame {
        SanguoGame {
            game: Game::new(settings.direction.into()),
            listed: None,
        }
    }

    /// A stored game: the start position's text and the stored commands.
    /// The store holds only commands the engine accepted (committed before
    /// anyone saw them): their moves need no second legality test.
    pub fn restore(
        settings: &GameSettings,
        initial: &str,
        events: &[(Side, String, u64)],
    ) -> Result<SanguoGame, String> {
        let _ = settings;
        let initial = parse_position(initial).map_err(|e| e.to_string())?;
        let events = events
            .iter()
            .map(|(side, text, at)| {
                let action = super::parse_command(text)
                    .and_then(|cmd| action_of(&cmd).ok())
                    .ok_or_else(|| format!("bad action {text:?}"))?;
                Ok(Event {
                    side: (*side).into(),
                    action,
                    at: *at,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let game = Game::replay_trusted(initial, engine::game::Limits::default(), &events)
            .map_err(|(i, e)| format!("event {i} does not replay: {e}"))?;
        Ok(SanguoGame { game, listed: None })
    }

    /// The engine's game.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

impl RoomGame for SanguoGame {
    fn variant(&self) -> Variant {
        Variant::Sanguo
    }

    fn to_move(&self) -> Option<Side> {
        (!self.game.is_finished()).then(|| self.game.position().turn().into())
    }

    fn live(&self) -> Vec<Side> {
        self.game.position().live_in_order().map(Side::from).collect()
    }

    fn is_live(&self, side: Side) -> bool {
        self.game.position().live().contains(side.into())
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
        let action = action_of(&cmd)?;
        let event = Event {
            side: side.into(),
            action,
            at: at_ms,
        };
        // The one legality check of a move is against the list the last
        // status carried; the next list comes out of the mate test after it.
        let applied = self.game.apply_listed(event, &mut self.listed);
        let effects = applied.map_err(|e| match (&e, &cmd) {
            (GameError::Illegal(_), Command::Play(mv)) => err(ErrorCode::IllegalMove, format!("{mv}: {e}")),
            _ => game_error(&e),
        })?;
        Ok(effects
            .into_iter()
            .map(|e| match e {
                Effect::Moved { mv, outcome } => Happened::Moved {
                    side: outcome.mover.into(),
                    mv: mv.to_string(),
                    captured: outcome.captured.map(|p| p.to_string()),
                    checks: protocol::sides(outcome.checks),
                    revealed: None,
                },
                Effect::Warned { side, request } => Happened::Warned {
                    side: side.into(),
                    request: match request {
                        engine::game::Request::Resign => protocol::Request::Resign,
                        engine::game::Request::Draw => protocol::Request::Draw,
                    },
                },
                Effect::Eliminated(d) => Happened::Eliminated(d.into()),
                Effect::DrawOffered { by, to } => Happened::DrawOffered {
                    by: by.into(),
                    to: protocol::sides(to),
                },
                Effect::DrawAnswered { by, accept } => Happened::DrawAnswered { by: by.into(), accept },
                Effect::DrawOfferLapsed { by } => Happened::DrawOfferLapsed { by: by.into() },
                Effect::Finished(r) => Happened::Finished(GameResult::from(&r)),
            })
            .collect())
    }

    fn status(&self, legal: bool) -> Status {
        let game = &self.game;
        let pos = game.position();
        Status {
            position: format_position(pos),
            turn: pos.turn().into(),
            live: self.live(),
            ply: game.plies(),
            round: game.rounds_completed(),
            legal_moves: if legal && !game.is_finished() {
                let computed;
                let moves = match &self.listed {
                    Some(l) => &l.moves[..],
                    None => {
                        computed = pos.legal_moves();
                        &computed[..]
                    }
                };
                texts(moves)
            } else {
                MoveTexts::new()
            },
            clocks: Default::default(),
            counters: Some(Counters::of(game)),
            in_check: if game.is_finished() {
                Vec::new()
            } else {
                protocol::sides(self.listed.as_ref().map_or_else(|| pos.checked(), |l| l.checked))
            },
            pending_offer: game.pending_offer().map(|(by, waiting)| PendingOffer {
                by: by.into(),
                waiting: protocol::sides(waiting),
            }),
            paused: false,
            anqi: None,
            yanyi: None,
        }
    }

    fn result(&self) -> Option<GameResult> {
        self.game.result().map(GameResult::from)
    }

    fn departures(&self) -> Vec<Departure> {
        self.game.departures().iter().map(|&d| d.into()).collect()
    }

    fn moves(&self) -> Vec<(Side, String)> {
        self.game
            .events()
            .iter()
            .filter_map(|e| match e.action {
                Action::Move(m) => Some((e.side.into(), m.to_string())),
                _ => None,
            })
            .collect()
    }

    fn pending_offer_waiting(&self) -> Vec<Side> {
        self.game
            .pending_offer()
            .map(|(_, waiting)| protocol::sides(waiting))
            .unwrap_or_default()
    }

    fn initial_position(&self) -> String {
        format_position(self.game.initial_position())
    }

    fn limits(&self) -> Option<protocol::Limits> {
        Some(self.game.limits().into())
    }

    /// The trait's convention, a move in its canonical text (RULES §7).
    fn command_text(&self, cmd: &Command) -> String {
        // A move's canonical text, written every move without the
        // formatting machinery. One that does not parse is refused by
        // `apply`, never stored.
        if let Command::Play(mv) = cmd
            && let Ok(m) = parse_move(mv)
        {
            let [from, dash, to] = m.parts();
            return [super::PLAY, from, dash, to].concat();
        }
        super::command_text(cmd)
    }

    /// The engine's bot on a copy of the game. Draw votes (the policy is
    /// `bot::answer_draw`'s): declines in phase 3; in phase 2 accepts only
    /// when it stands clearly worse or the position is dead. With
    /// `may_offer` it spends a third of its time at most weighing an offer.
    fn bot_search(&self, side: Side, level: bot::Level, ask: BotAsk, seed: u64) -> BotSearch {
        let game = self.game.clone();
        let side: engine::Side = side.into();
        Box::new(move |halt: &Halt| {
            let mut stop = |_nodes: u64| halt.stops();
            match ask {
                BotAsk::AnswerOffer => Some(Command::AnswerDraw(bot::answer_draw_with(
                    &game, side, level, &mut stop,
                ))),
                BotAsk::Move { may_offer } => {
                    if may_offer {
                        let now = Instant::now();
                        let until = now + halt.deadline().saturating_duration_since(now) / 3;
                        let mut stop_offer = |_nodes: u64| halt.stops_by(until);
                        if bot::offer_draw_with(&game, side, level, &mut stop_offer) {
                            return Some(Command::OfferDraw);
                        }
                    }
                    Some(match bot::choose_move_with(&game, &level.config(), seed, &mut stop) {
                        Some(m) => Command::Play(m.to_string()),
                        // No legal move at a live turn cannot happen (a side
                        // without one is mated before its turn); resigning
                        // keeps the game going.
                        None => Command::Resign,
                    })
                }
            }
        })
    }

    /// Phase 2 only (two seats left): in phase 3 a bot never offers.
    fn bot_weighs_offer(&self) -> bool {
        self.game.position().live().count() == 2
    }
}

#[cfg(test)]
mod tests {
    use protocol::{Direction, TimeControl};

    use super::*;
    use crate::room::games::{self, parse_command};

    /// The texts written from the names table are the moves' display texts,
    /// for every move of positions met in play.
    #[test]
    fn legal_move_texts_are_the_moves_texts() {
        let mut game = SanguoGame::new(&settings());
        let mut checked = 0;
        for ply in 0..120 {
            checked += 1;
            let pos = *game.game.position();
            let moves = pos.legal_moves();
            let listed = texts(&moves);
            let expected: Vec<String> = moves.iter().map(Move::to_string).collect();
            assert_eq!(listed, expected, "ply {ply}");
            let Some(&m) = moves.get(ply * 7 % moves.len().max(1)) else {
                break;
            };
            let side = game.to_move().expect("a side to move");
            if game.apply(side, Command::Play(m.to_string()), ply as u64).is_err() || game.is_finished() {
                break;
            }
        }
        assert!(checked > 30, "only {checked} positions looked at");
    }

    /// Every point's piece is its name, met in play or not: written as a
    /// move's text, from and to the point, it reads `name-name`.
    #[test]
    fn every_points_piece_is_its_name() {
        for p in Point::all() {
            let piece = PIECES[p.index()];
            let text = format!("{}-{}", p.name(), p.name());
            assert_eq!(MoveTexts::from_pairs([(piece, piece)]), [text.as_str()], "{p}");
        }
        assert_eq!(Point::all().count(), NUM_POINTS);
    }

    fn settings() -> GameSettings {
        GameSettings {
            variant: Variant::Sanguo,
            time_control: TimeControl::default(),
            direction: Direction::Ccw,
            public: true,
            players_chat: true,
            grace_ms: 0,
            rated: false,
            anqi: None,
        }
    }

    #[test]
    fn every_command_text_reads_back_as_the_same_command() {
        let game = SanguoGame::new(&settings());
        for cmd in [
            Command::Play("W72-W54".into()),
            Command::Resign,
            Command::OfferDraw,
            Command::AnswerDraw(true),
            Command::AnswerDraw(false),
            Command::Timeout,
            Command::Abandon,
        ] {
            let text = game.command_text(&cmd);
            assert!(!text.contains(['|', ';']), "{text}");
            assert_eq!(parse_command(&text), Some(cmd.clone()), "{text}");
            assert_eq!(text, games::command_text(&cmd), "sanguo keeps the convention");
        }
        assert_eq!(parse_command("castle"), None);
    }

    #[test]
    fn a_refused_command_says_why_in_protocol_codes_and_changes_nothing() {
        let mut game = SanguoGame::new(&settings());
        let before = game.clone();
        let cases = [
            (Side::W, Command::Play("W72-".into()), ErrorCode::BadMove),
            (Side::W, Command::Play("W24-Y82".into()), ErrorCode::IllegalMove),
            (Side::B, Command::Play("B72-B54".into()), ErrorCode::NotYourTurn),
            (Side::W, Command::AnswerDraw(true), ErrorCode::NothingToAnswer),
        ];
        for (side, cmd, code) in cases {
            let e = game.apply(side, cmd.clone(), 10).unwrap_err();
            assert_eq!(e.code, code, "{cmd:?}: {}", e.message);
            assert!(!e.message.is_empty());
            assert_eq!(game, before, "{cmd:?} changed nothing");
        }
    }

    #[test]
    fn a_game_restored_from_its_command_texts_is_the_same_game() {
        let mut game = SanguoGame::new(&settings());
        let mut stored = Vec::new();
        for at in 1..=12u64 {
            let side = game.to_move().unwrap();
            let mv = game.status(true).legal_moves[(at as usize * 7) % 20].to_owned();
            let cmd = Command::Play(mv.clone());
            stored.push((side, game.command_text(&cmd), at));
            let happened = game.apply(side, cmd, at).unwrap();
            assert!(
                matches!(&happened[0], Happened::Moved { side: s, mv: m, revealed: None, .. } if *s == side && *m == mv)
            );
        }
        let side = game.to_move().unwrap();
        stored.push((side, game.command_text(&Command::Resign), 13));
        let happened = game.apply(side, Command::Resign, 13).unwrap();
        assert_eq!(
            happened,
            vec![Happened::Warned {
                side,
                request: protocol::Request::Resign
            }],
            "a resignation before round 15 is a warning"
        );
        let back = SanguoGame::restore(&settings(), &game.initial_position(), &stored).unwrap();
        assert_eq!(back, game);
        assert_eq!(back.moves().len(), 12);
        assert_eq!(back.epoch(), 13);
        let bad = [(Side::W, "move nowhere".to_owned(), 1)];
        assert!(SanguoGame::restore(&settings(), &game.initial_position(), &bad).is_err());
    }

    #[test]
    fn the_status_is_todays_sanguo_status() {
        let game = SanguoGame::new(&settings());
        let status = game.status(true);
        assert_eq!(status.legal_moves, relist(&status));
        assert!(!status.legal_moves.is_empty());
        assert!(game.status(false).legal_moves.is_empty());
        assert!(status.counters.is_some() && status.anqi.is_none() && status.yanyi.is_none());
        let json = serde_json::to_value(&status).unwrap();
        assert!(json.get("anqi").is_none() && json.get("yanyi").is_none() && json.get("counters").is_some());
        assert_eq!(explain(&status, &status.legal_moves[0]).unwrap(), None);
        let refusal = explain(&status, "W24-Y82").unwrap().unwrap();
        assert_eq!(refusal.code, "no_retaliation_right");
        assert_eq!(explain(&status, "nonsense").unwrap_err().code, ErrorCode::BadMove);
    }
}
