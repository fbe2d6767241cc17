-- Computer players: a bot is a player row of its own per seat it fills (so
-- seats(game_id, player_id) stays unique), with its level 1-3. NULL for people.
ALTER TABLE players ADD COLUMN bot_level BIGINT;
