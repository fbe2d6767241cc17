-- Ratings (issue 16, docs/RATINGS.md): a Weng-Lin rating per player, variant
-- and time-control class, and every change a rated game made, keyed by game
-- (a game is rated once). μ and σ are TEXT (the shortest decimal text that
-- reads back to the same f64: the store holds only BIGINT and TEXT); the
-- displayed rating is a BIGINT beside them for ordering leaderboards.

CREATE TABLE ratings (
    player_id  TEXT NOT NULL REFERENCES players (id),
    variant    TEXT NOT NULL,       -- sanguo | anqi | yanyi
    class      TEXT NOT NULL,       -- bullet | blitz | rapid | classical
    mu         TEXT NOT NULL,
    sigma      TEXT NOT NULL,
    rating     BIGINT NOT NULL,     -- round(1500 + 42 (mu - 25))
    deviation  BIGINT NOT NULL,     -- round(42 sigma); provisional above 150
    games      BIGINT NOT NULL,     -- rated games played
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (player_id, variant, class)
);
CREATE INDEX ratings_board ON ratings (variant, class, deviation, rating);

CREATE TABLE rating_changes (
    game_id       TEXT NOT NULL REFERENCES games (id),
    player_id     TEXT NOT NULL REFERENCES players (id),
    side          TEXT NOT NULL,    -- W | B | Y
    variant       TEXT NOT NULL,
    class         TEXT NOT NULL,
    rank          BIGINT NOT NULL,  -- 1 = first; equal ranks are ties
    mu_before     TEXT NOT NULL,
    sigma_before  TEXT NOT NULL,
    mu_after      TEXT NOT NULL,
    sigma_after   TEXT NOT NULL,
    rating_before BIGINT NOT NULL,
    rating_after  BIGINT NOT NULL,
    wall_ms       BIGINT NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX rating_changes_player ON rating_changes (player_id, wall_ms);
