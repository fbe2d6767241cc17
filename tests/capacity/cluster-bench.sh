#!/bin/bash
# The cost of the relay hop (issue 17): the same load against one node, then against a cluster of
# NODES nodes (default 3) on one database and one NATS, with every game made on a random node and
# every socket opened on a random node (`loadgen --url A,B,C`), so that about two sockets in three
# are relayed. Servers on CPU 1, loadgen on CPU 0 (as bench.sh). Prints loadgen's report for each.
#
#   tests/capacity/cluster-bench.sh target/release/sanguo --games 1000 --think-ms 1000 --seconds 20
#
# PG: Postgres (default the machine's, postgres://postgres@127.0.0.1:5432). NATS: nats://127.0.0.1:4222.
set -eu
BIN=$1; shift
PG=${PG:-postgres://postgres@127.0.0.1:5432}
NATS=${NATS:-nats://127.0.0.1:4222}
NODES=${NODES:-3}
DIR=$(cd "$(dirname "$0")/../.." && pwd)
. "$DIR/tests/capacity/unlimited.sh"
ulimit -n 20000
run() { # label nodes nats(0|1)
  local label=$1 n=$2 cluster=$3
  shift 3
  local db=cluster_$(date +%s%N | tail -c 8)
  psql -q "$PG/postgres" -c "create database $db" >/dev/null
  local pids=() urls=()
  for i in $(seq 1 "$n"); do
    local port=$((8280 + i))
    local extra=()
    [ "$cluster" = 1 ] && extra=(--nats-url "$NATS" --node-name "b$i")
    env "${UNLIMITED[@]}" RUST_LOG=warn DATABASE_URL="$PG/$db" setsid nice -n -10 taskset -c 1 "$BIN" serve \
        --listen 127.0.0.1:$port --messages-per-second 1000 "${extra[@]}" >"/tmp/cluster-bench-$label-$i.log" 2>&1 &
    pids+=($!)
    urls+=("http://127.0.0.1:$port")
    for _ in $(seq 100); do curl -sf 127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
  done
  local joined; joined=$(IFS=,; echo "${urls[*]}")
  echo "== $label ($n node(s)) $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n -10 taskset -c 0 "$DIR/target/release/loadgen" --url "$joined" "$@"
  echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  for p in "${pids[@]}"; do kill "$p"; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  psql -q "$PG/postgres" -c "drop database $db with (force)" >/dev/null
}
run single 1 0 "$@"
run cluster "$NODES" 1 "$@"
