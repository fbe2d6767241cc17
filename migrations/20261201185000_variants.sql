-- Game systems (variants): every game and tournament names its variant in a
-- column of its own, so lists filter by it without reading the settings JSON.
-- Rows stored before variants existed are 三国象棋 games.
ALTER TABLE games ADD COLUMN variant TEXT NOT NULL DEFAULT 'sanguo';
CREATE INDEX games_variant_phase ON games (variant, phase, public);
ALTER TABLE tournaments ADD COLUMN variant TEXT NOT NULL DEFAULT 'sanguo';
