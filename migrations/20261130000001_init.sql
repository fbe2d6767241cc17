-- The Sanguo store. Written once for both Postgres and SQLite (the server uses
-- sqlx's Any driver): only BIGINT and TEXT columns, ids made by the server,
-- no sequences, no booleans, no timestamps types (ms since the Unix epoch).

CREATE TABLE players (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    username      TEXT UNIQUE,          -- NULL for guests
    password_hash TEXT,                 -- argon2 PHC string; NULL for guests
    created_ms    BIGINT NOT NULL
);

-- Session tokens are stored as their SHA-256: a leaked table grants nothing.
CREATE TABLE sessions (
    token_sha256 TEXT PRIMARY KEY,
    player_id    TEXT NOT NULL REFERENCES players (id),
    created_ms   BIGINT NOT NULL
);

CREATE TABLE games (
    id               TEXT PRIMARY KEY,
    created_by       TEXT NOT NULL REFERENCES players (id),
    phase            TEXT NOT NULL,     -- open | live | finished
    settings         TEXT NOT NULL,     -- protocol::GameSettings as JSON
    initial_position TEXT NOT NULL,     -- RULES §7 position text
    public           BIGINT NOT NULL,   -- 1: listed in the lobby
    v                BIGINT NOT NULL,   -- the last protocol version handed out (committed before it is sent)
    result           TEXT,              -- protocol::GameResult as JSON
    created_ms       BIGINT NOT NULL,
    finished_ms      BIGINT
);
CREATE INDEX games_phase ON games (phase);
CREATE INDEX games_created_by ON games (created_by, phase);

CREATE TABLE seats (
    game_id   TEXT NOT NULL REFERENCES games (id),
    side      TEXT NOT NULL,            -- W | B | Y
    player_id TEXT NOT NULL REFERENCES players (id),
    joined_ms BIGINT NOT NULL,
    PRIMARY KEY (game_id, side),
    UNIQUE (game_id, player_id)
);

-- Every accepted engine event, in order: replaying them rebuilds the game.
CREATE TABLE events (
    game_id   TEXT NOT NULL REFERENCES games (id),
    seq       BIGINT NOT NULL,          -- 0, 1, 2, … per game
    v         BIGINT NOT NULL,          -- the protocol version of its first broadcast event
    side      TEXT NOT NULL,
    action    TEXT NOT NULL,            -- move W72-W54 | resign | offer_draw | accept_draw | decline_draw | timeout | abandon
    at_ms     BIGINT NOT NULL,          -- game time (paused while the server is down)
    wall_ms   BIGINT NOT NULL,
    spent_ms  BIGINT,                   -- moves: time charged
    lag_ms    BIGINT,                   -- moves: lag credit given
    clocks    TEXT,                     -- moves: main time left per side after it, "ms,ms,ms"
    periods   TEXT,                     -- moves: byo-yomi periods left per side after it, "n,n,n"
    PRIMARY KEY (game_id, seq)
);

CREATE TABLE chat (
    game_id   TEXT NOT NULL REFERENCES games (id),
    v         BIGINT NOT NULL,
    channel   TEXT NOT NULL,            -- players | spectators
    player_id TEXT NOT NULL REFERENCES players (id),
    name      TEXT NOT NULL,
    text      TEXT NOT NULL,
    wall_ms   BIGINT NOT NULL,
    PRIMARY KEY (game_id, v)
);
