-- The cluster (issue 17, docs/CLUSTER.md): which node owns each game, fenced by an epoch.
-- A single node (no --nats-url) never reads or writes these columns.
ALTER TABLE games ADD COLUMN owner_node TEXT;          -- nodes.id of the owner; NULL: nobody
ALTER TABLE games ADD COLUMN owner_epoch BIGINT NOT NULL DEFAULT 0; -- raised by every takeover; every commit checks it
CREATE INDEX games_owner ON games (owner_node);

-- One row per running node: its lease, by the database's clock (ms since the Unix epoch).
CREATE TABLE nodes (
    id          TEXT PRIMARY KEY,  -- name-<random>, new at every start
    lease_until BIGINT NOT NULL,
    started_ms  BIGINT NOT NULL
);
