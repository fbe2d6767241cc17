#!/bin/bash
# One capacity measurement on a fresh database: starts the release server
# pinned to CPU 1 (nice -10), runs `loadgen` pinned to CPU 0 with the given
# arguments, prints the load average before and after, stops the server.
#
#   tests/capacity/bench.sh target/release/sanguo LABEL --games 1000 --think-ms 1000 --seconds 20 --json
#   tests/capacity/bench.sh target/release/sanguo variants --variants sanguo,anqi,yanyi --each-alone \
#       --games 1000 --think-ms 1000 --seconds 20     # N games of EACH variant, one table per variant
#
# PG: the Postgres to use (default postgres://postgres@127.0.0.1:5499, a
# cluster of its own so that the other users of the machine's Postgres do
# not share its WAL fsyncs). PORT: the server's port (8181). MSGS: messages per
# second a connection may send (1000, so that zero-think players are not
# limited; the product's default is 20 — set MSGS=20 for flooding runs).
# PGPID: the postmaster.pid of that Postgres (default: the private cluster's,
# /tmp/pgperf/data/postmaster.pid, when it exists): then loadgen also prints
# Postgres's CPU during the measured window and per move (`--postgres-pid`:
# its processes' user + system time, exited backends included), and the run
# the server's group commits (over the whole run, game creation included).
set -eu
BIN=$1; LABEL=$2; shift 2
PG=${PG:-postgres://postgres@127.0.0.1:5499}
PORT=${PORT:-8181}
MSGS=${MSGS:-1000}
DIR=$(cd "$(dirname "$0")/../.." && pwd)
DB=capacity_$(date +%s%N | tail -c 8)
psql -q "$PG/postgres" -c "create database $DB" >/dev/null
ulimit -n 20000
# loadgen's clients all come from 127.0.0.1: the per-address limits are off here (the
# `abuse` tool measures them).
. "$DIR/tests/capacity/unlimited.sh"
env "${UNLIMITED[@]}" RUST_LOG=warn DATABASE_URL="$PG/$DB" setsid nice -n -10 taskset -c 1 "$BIN" serve \
    --listen 127.0.0.1:$PORT --messages-per-second $MSGS >"/tmp/capacity-$LABEL.log" 2>&1 &
SP=$!
for _ in $(seq 100); do curl -sf 127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.1; done
PGPID=${PGPID:-/tmp/pgperf/data/postmaster.pid}
PGARGS=()
[ -r "$PGPID" ] && PGARGS=(--postgres-pid "$(head -1 "$PGPID")")
echo "== $LABEL $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
nice -n -10 taskset -c 0 "$DIR/target/release/loadgen" --url http://127.0.0.1:$PORT --server-pid $SP "${PGARGS[@]}" "$@"
curl -s 127.0.0.1:$PORT/metrics > "/tmp/capacity-$LABEL.metrics"
echo "group_commits $(awk '/^sanguo_store_commit_seconds_count/ {print $2}' "/tmp/capacity-$LABEL.metrics") (whole run)"
awk '{printf "server_cpu_whole_run user %.2f s  system %.2f s\n", $14/100, $15/100}' /proc/$SP/stat
echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
kill $SP; wait $SP 2>/dev/null || true
psql -q "$PG/postgres" -c "drop database $DB" >/dev/null
