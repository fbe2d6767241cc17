-- Tournaments (docs/TOURNAMENTS.md). Same conventions as the init migration.

CREATE TABLE tournaments (
    id          TEXT PRIMARY KEY,
    organizer   TEXT NOT NULL REFERENCES players (id),
    code        TEXT NOT NULL UNIQUE,   -- the registration code of the invitation link
    settings    TEXT NOT NULL,          -- protocol::tournament::TournamentSettings as JSON
    status      TEXT NOT NULL,          -- registration | running | finished
    round       BIGINT NOT NULL,        -- the last round paired (0: none)
    created_ms  BIGINT NOT NULL
);

CREATE TABLE tournament_players (
    tournament_id   TEXT NOT NULL REFERENCES tournaments (id),
    player_id       TEXT NOT NULL REFERENCES players (id),
    seed            BIGINT NOT NULL,    -- registration order, from 1
    checked_in      BIGINT NOT NULL,    -- 1: checked in
    withdrawn_after BIGINT,             -- the last round paired when the player withdrew
    group_no        BIGINT,             -- round robin: the group, from 1
    registered_ms   BIGINT NOT NULL,
    PRIMARY KEY (tournament_id, player_id),
    UNIQUE (tournament_id, seed)
);

-- Every game of a tournament; `current` = 0 for a game the arbiter aborted
-- (`replaced_by` is the table's new game).
CREATE TABLE tournament_games (
    game_id       TEXT PRIMARY KEY REFERENCES games (id),
    tournament_id TEXT NOT NULL REFERENCES tournaments (id),
    round         BIGINT NOT NULL,
    table_no      BIGINT NOT NULL,
    current       BIGINT NOT NULL,
    replaced_by   TEXT
);
CREATE INDEX tournament_games_round ON tournament_games (tournament_id, round);

CREATE TABLE tournament_byes (
    tournament_id TEXT NOT NULL REFERENCES tournaments (id),
    round         BIGINT NOT NULL,
    player_id     TEXT NOT NULL REFERENCES players (id),
    points        BIGINT NOT NULL,
    PRIMARY KEY (tournament_id, round, player_id)
);

-- An arbiter's actions on a game, with who and why; replayed when the game is restored.
CREATE TABLE arbiter_actions (
    game_id   TEXT NOT NULL REFERENCES games (id),
    v         BIGINT NOT NULL,          -- the version of its event
    after_seq BIGINT NOT NULL,          -- engine events accepted before it
    at_ms     BIGINT NOT NULL,          -- game time
    wall_ms   BIGINT NOT NULL,
    by_player TEXT NOT NULL REFERENCES players (id),
    reason    TEXT NOT NULL,
    action    TEXT NOT NULL,            -- protocol::tournament::ArbiterAction as JSON
    PRIMARY KEY (game_id, v)
);
