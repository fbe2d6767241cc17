\set g random(1, 1000000000)
INSERT INTO bench_events VALUES ('g' || :g || '-' || :client_id, :g, 1, 'W', 'move W72-W54', 1000, 1764560000000, 800, 0, '3599000,3600000,3600000', '0,0,0', 2);
