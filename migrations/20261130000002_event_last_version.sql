-- The version of the last event a committed step broadcast. A move is then a
-- single INSERT (one round trip, no explicit transaction) and the game's
-- version is restored as the largest of games.v, events.v_last and chat.v.
ALTER TABLE events ADD COLUMN v_last BIGINT;
