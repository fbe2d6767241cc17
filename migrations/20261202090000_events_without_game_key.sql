-- Issue 15: the events table without its foreign key to games. A game's events are written
-- only by its room, after the game's row exists (Store::create_game, or the tournament's
-- insert of its games): the key checked what cannot fail, and cost every move an index probe
-- of games and a key-share lock written on the game's row (on Postgres ~10 µs of its CPU per
-- row, measured with pgbench beside the same table without the key). Rebuilt rather than
-- altered, since SQLite cannot drop a constraint: same columns, same primary key.
CREATE TABLE events_new (
    game_id   TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    v         BIGINT NOT NULL,
    side      TEXT NOT NULL,
    action    TEXT NOT NULL,
    at_ms     BIGINT NOT NULL,
    wall_ms   BIGINT NOT NULL,
    spent_ms  BIGINT,
    lag_ms    BIGINT,
    clocks    TEXT,
    periods   TEXT,
    v_last    BIGINT,
    PRIMARY KEY (game_id, seq)
);
INSERT INTO events_new (game_id, seq, v, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods, v_last)
    SELECT game_id, seq, v, side, action, at_ms, wall_ms, spent_ms, lag_ms, clocks, periods, v_last FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
