-- A finished game's own public record lines (三国演弈棋: alliances, the 汉 force,
-- absorptions; 三国暗棋: claims, passes, and the layout and salt published at the
-- end), as its room showed them to spectators when it finished: a JSON array of
-- protocol `Note`s, written in the transaction that finishes the game. The
-- record of a finished game (`GET /api/games/{id}/record`) reads them here
-- instead of replaying the whole game. Nothing secret: the spectators' view.
CREATE TABLE game_notes (
    game_id TEXT PRIMARY KEY REFERENCES games (id),
    notes   TEXT NOT NULL
);
