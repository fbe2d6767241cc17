-- What a game must keep from everyone but its room (三国暗棋: the layout of the
-- face-down pieces and the salt of its commitment, RULES-ANQI §10): one row per
-- game that has a secret, written in the same transaction as the step that made
-- it, read only when a room is restored. No HTTP route selects this table.
CREATE TABLE game_secrets (
    game_id TEXT PRIMARY KEY REFERENCES games (id),
    secret  TEXT NOT NULL       -- the variant's own text (server/src/room/games)
);
