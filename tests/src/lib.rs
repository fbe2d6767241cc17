//! Shared helpers for the black-box tests: scripted games computed with the
//! engine, a test server on `127.0.0.1:0` with a fresh database, and
//! WebSocket/HTTP clients speaking the protocol.

use engine::{Action, Direction, Event, Game, Move, Side};

/// A small deterministic generator (no dependency on `rand`'s algorithms).
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Picks a move: a capture when there is one (the game moves on), else any,
/// avoiding captures when `quiet`.
pub fn pick(game: &Game, rng: &mut Lcg, quiet: bool) -> Move {
    let pos = game.position();
    let moves = pos.legal_moves();
    let captures: Vec<Move> = moves.iter().copied().filter(|m| pos.piece_at(m.to).is_some()).collect();
    let quiets: Vec<Move> = moves.iter().copied().filter(|m| pos.piece_at(m.to).is_none()).collect();
    let pool = if quiet {
        if quiets.is_empty() { &captures } else { &quiets }
    } else if captures.is_empty() {
        &quiets
    } else {
        &captures
    };
    pool[rng.below(pool.len())]
}

/// A whole game by the capture-first policy: the moves and who played them.
pub fn scripted_game(seed: u64) -> (Vec<(Side, Move)>, Game) {
    let mut game = Game::new(Direction::Ccw);
    let mut rng = Lcg(seed);
    let mut moves = Vec::new();
    let mut at = 0;
    while !game.is_finished() {
        let side = game.position().turn();
        let m = pick(&game, &mut rng, false);
        at += 1;
        game.apply(Event {
            side,
            action: Action::Move(m),
            at,
        })
        .unwrap();
        moves.push((side, m));
    }
    (moves, game)
}

pub mod harness;
pub mod procfs;

/// POSTs `body` as JSON (with a bearer `token`) and decodes the JSON answer; a non-2xx status is an
/// error carrying the server's body. Shared by the tools (`loadgen`, `crashtest`).
pub async fn post<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    body: &impl serde::Serialize,
    timeout: std::time::Duration,
) -> anyhow::Result<T> {
    use anyhow::Context as _;
    let mut req = http.post(url).json(body).timeout(timeout);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.with_context(|| format!("POST {url}"))?;
    let status = resp.status();
    if !status.is_success() {
        anyhow::bail!("POST {url}: {status}: {}", resp.text().await.unwrap_or_default());
    }
    Ok(resp.json().await?)
}

/// A new guest session (`POST /api/sessions` on the server at `base`). Shared by the tools.
pub async fn guest(
    http: &reqwest::Client,
    base: &str,
    timeout: std::time::Duration,
) -> anyhow::Result<protocol::Session> {
    post(
        http,
        &format!("{base}/api/sessions"),
        None,
        &serde_json::json!({}),
        timeout,
    )
    .await
}

/// Settings of a private game with an hour on every clock and no increment, whose players may
/// stay away `grace_ms`: games seeded straight into a store (restore tests, the `restart` tool).
pub fn hour_game_settings(grace_ms: u64) -> protocol::GameSettings {
    protocol::GameSettings {
        variant: Default::default(),
        time_control: protocol::TimeControl {
            base_ms: 3_600_000,
            increment_ms: 0,
            per_move_ms: None,
            byoyomi: None,
        },
        direction: Default::default(),
        public: false,
        players_chat: true,
        grace_ms,
        rated: false,
        anqi: None,
    }
}
