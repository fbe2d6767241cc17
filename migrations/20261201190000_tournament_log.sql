-- What an organizer did to a tournament as a whole (finish, edit, delete), with who and why
-- (docs/TOURNAMENTS.md, "Organizer"). No reference to tournaments: the lines outlive a deleted one.
CREATE TABLE tournament_log (
    tournament_id TEXT NOT NULL,
    wall_ms       BIGINT NOT NULL,
    by_player     TEXT NOT NULL REFERENCES players (id),
    action        TEXT NOT NULL,     -- finish | edit | delete
    reason        TEXT NOT NULL
);
CREATE INDEX tournament_log_by_tournament ON tournament_log (tournament_id, wall_ms);
