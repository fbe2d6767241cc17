-- A finished game's final state as its room showed it to spectators when it
-- finished (the protocol `Snapshot` as JSON: status, moves, departures, the
-- variant's own record lines — 三国演弈棋: alliances, the 汉 force, absorptions;
-- 三国暗棋: claims, passes, and the layout and salt published at the end —,
-- result), written in the transaction that finishes the game, for the variants
-- with record lines of their own. `GET /api/games/{id}/record` and `/state` of
-- a finished game read it instead of replaying the whole game (the version,
-- the seats and the result are read fresh from their own tables). Nothing
-- secret: the spectators' view.
CREATE TABLE game_finals (
    game_id  TEXT PRIMARY KEY REFERENCES games (id),
    snapshot TEXT NOT NULL
);
