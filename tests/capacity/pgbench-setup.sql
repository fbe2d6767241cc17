DROP TABLE IF EXISTS bench_events;
CREATE TABLE bench_events (
    game_id TEXT NOT NULL, seq BIGINT NOT NULL, v BIGINT NOT NULL, side TEXT NOT NULL, action TEXT NOT NULL,
    at_ms BIGINT NOT NULL, wall_ms BIGINT NOT NULL, spent_ms BIGINT, lag_ms BIGINT, clocks TEXT, periods TEXT,
    v_last BIGINT, PRIMARY KEY (game_id, seq));
