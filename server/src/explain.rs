//! `POST /api/games/{id}/explain`: why the engine refuses a move, so that a
//! client can tell a newcomer in the game's own words (translated from the
//! refusal's code) instead of silently dropping the attempt.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use protocol::{ErrorCode, ExplainMove, Explanation, Phase, Refusal};

use crate::AppState;
use crate::error::ApiError;
use crate::http::{ApiJson, Game, find_game};

/// The route, merged into the server's router.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/games/{id}/explain", post(explain))
}

async fn explain(
    State(s): State<AppState>,
    Path(id): Path<String>,
    ApiJson(ExplainMove { mv }): ApiJson<ExplainMove>,
) -> Result<Json<Explanation>, ApiError> {
    if mv.len() > 16 {
        return Err(ApiError::new(ErrorCode::BadMove, "a move is at most 16 characters"));
    }
    if id.len() > 64 {
        return Err(ApiError::new(ErrorCode::NotFound, "no such game"));
    }
    // A finished game is read from the store, never made a room again.
    let snap = match find_game(&s, &id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no such game"))?
    {
        Game::Room(room) => room.snapshot().await?,
        Game::Finished(snap) => (*snap).clone(),
    };
    let bad = |e: &dyn std::fmt::Display| ApiError::new(ErrorCode::BadMove, format!("move {mv:?}: {e}"));
    // Each game system reads its own notation and explains in its own words.
    let text = match snap.settings.variant {
        engine::Variant::Yanyi => engine::yanyi::parse_move(&mv).map_err(|e| bad(&e))?.to_string(),
        _ => engine::parse_move(&mv).map_err(|e| bad(&e))?.to_string(),
    };
    Ok(Json(explanation(&snap, mv, &text)))
}

/// The explanation of the move `text` (canonical notation of the game's
/// variant) in the snapshot's position.
fn explanation(snap: &protocol::Snapshot, mv: String, text: &str) -> Explanation {
    if snap.status.legal_moves.iter().any(|m| m == text) {
        return Explanation {
            mv,
            legal: true,
            refusal: None,
        };
    }
    let refusal = if snap.phase != Phase::Live || snap.status.paused {
        // No move is legal while the game is not played (open, over, paused).
        Refusal {
            code: match snap.phase {
                Phase::Open => "not_started",
                Phase::Finished => "game_over",
                Phase::Live => "paused",
            }
            .to_owned(),
            params: Default::default(),
            message: "no move can be played now".to_owned(),
        }
    } else {
        let other = || Refusal {
            code: "other".to_owned(),
            params: Default::default(),
            message: "the move is not legal here".to_owned(),
        };
        match snap.settings.variant {
            engine::Variant::Yanyi => {
                match (
                    engine::yanyi::parse_position(&snap.status.position),
                    engine::yanyi::parse_move(text),
                ) {
                    (Ok(pos), Ok(m)) => yanyi_refusal(&engine::yanyi::explain::explain(&pos, m)),
                    _ => other(),
                }
            }
            _ => match (engine::parse_position(&snap.status.position), engine::parse_move(text)) {
                (Ok(pos), Ok(m)) => Refusal::from(&engine::explain::explain(&pos, m)),
                _ => other(),
            },
        }
    };
    Explanation {
        mv,
        legal: false,
        refusal: Some(refusal),
    }
}

/// A 三国演弈棋 refusal as a code and parameters (protocol/README.md,
/// "Explain", 三国演弈棋): players as seats (`W` 吴, `B` 魏, `Y` 蜀), pieces as
/// colour and role (`GC`, `YR`: the position text's letters).
pub fn yanyi_refusal(reason: &engine::yanyi::Reason) -> Refusal {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn yanyi_reason(position: &str, mv: &str) -> Refusal {
        let pos = engine::yanyi::parse_position(position).unwrap();
        let m = engine::yanyi::parse_move(mv).unwrap();
        assert!(!pos.is_legal(m), "{mv} is legal in {position}");
        yanyi_refusal(&engine::yanyi::explain::explain(&pos, m))
    }

    #[test]
    fn yanyi_refusals_speak_seats_and_the_games_words() {
        let start = engine::yanyi::format_position(&engine::yanyi::Position::initial());
        // the first-move cannon (吴 = seat W moves first)
        let r = yanyi_reason(&start, "o6-l6");
        assert_eq!(r.code, "cannon_first_move", "{r:?}");
        // a static 汉 piece, and another player's piece
        let r = yanyi_reason(&start, "d9-e9");
        assert_eq!(r.code, "han_never_moves");
        assert_eq!(r.params["piece"], "YR");
        let r = yanyi_reason(&start, "i1-i2");
        assert_eq!(r.code, "not_your_piece");
        assert_eq!(r.params["owner"], "Y", "蜀 is seat Y");
        assert_eq!(r.params["turn"], "W", "吴 is seat W");
        // §11 scenario 9: own facing
        let han = "YR@d7,YK@a9,YC@c9,YR@d9,YR@d11";
        let r = yanyi_reason(&format!("RK@i1,BR@i9,GK@q9,BA@h17,BK@i17,{han} B - -"), "i9-j9");
        assert_eq!(r.code, "kings_face");
        assert_eq!(r.params["side"], "Y");
        // §11 scenario 6: the chariot d9, now 蜀's, would check q9
        let r = yanyi_reason(&format!("RK@i1,RP@i4,GN@c7,GK@q9,BP@i14,BK@i17,{han} G - -"), "c7-a8");
        assert_eq!(r.code, "king_attacked");
        assert_eq!(r.params["by"], "Y");
    }
}
