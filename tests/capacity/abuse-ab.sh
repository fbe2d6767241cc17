#!/bin/bash
# Issue 18's measurement, repeated: ROUNDS rounds of two runs each, one with no
# attacker and one under attack, in alternating order (quiet first in odd
# rounds, attacked first in even ones), every run on a fresh server and a fresh
# database. A run: the server `taskset -c 1` (default settings: the limits
# are on), the honest players `taskset -c 0 loadgen --spread-addresses --games
# GAMES --seconds DURATION --think-ms 1000` (each game from a loopback address of
# its own), and in the attacked runs `taskset -c 0 nice -n 19 abuse
# --attack-only DURATION+10` started 5 s before them (its addresses 127.0.0.2–127.0.0.50).
# Prints one line per run, then the medians of each kind and their ratio: on a
# host whose quiet runs vary by more than the goal's 25 % from one minute to the
# next, one pair proves nothing and the medians of several are what compare.
#
#   tests/capacity/abuse-ab.sh target/release/sanguo 6                   # every attack
#   ATTACKS=bots tests/capacity/abuse-ab.sh target/release/sanguo 4      # one attack
#
# PG: the Postgres (default postgres://postgres@127.0.0.1:5432). PORT: the
# server's (8282). GAMES (200), DURATION (60 s). OUT: where each run's JSON and
# server log go (/tmp/abuse-ab). SERVER_ENV: extra environment for the server
# (e.g. "SANGUO_BOTS_ALONE_PERCENT=100").
set -eu
BIN=$(realpath "$1"); ROUNDS=${2:-4}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
PORT=${PORT:-8282}
GAMES=${GAMES:-200}
SECONDS_=${DURATION:-60}
ATTACKS=${ATTACKS:-sessions,logins,sockets,bots}
OUT=${OUT:-/tmp/abuse-ab}
DIR=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
ulimit -n 20000
if curl -s -o /dev/null "127.0.0.1:$PORT/healthz"; then
    echo "port $PORT is in use" >&2
    exit 1
fi

# run KIND N: one run; appends "KIND p50 p99 p999 moves/s cpu% rss_peak_mib errors" to $OUT/runs.
run() {
    local kind=$1 n=$2 db sp ap=
    db=abuse_ab_$(date +%s%N | tail -c 8)
    psql -q "$PG/postgres" -c "create database $db" >/dev/null
    # shellcheck disable=SC2086
    env RUST_LOG=warn ${SERVER_ENV:-} DATABASE_URL="$PG/$db" setsid taskset -c 1 "$BIN" serve \
        --listen 127.0.0.1:$PORT >"$OUT/$kind-$n.log" 2>&1 &
    sp=$!
    for _ in $(seq 100); do curl -sf 127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.1; done
    if [ "$kind" = attacked ]; then
        setsid taskset -c 0 nice -n 19 "$DIR/target/release/abuse" --url http://127.0.0.1:$PORT \
            --server-pid $sp --attack-only $((SECONDS_ + 10)) --attacks "$ATTACKS" \
            >"$OUT/$kind-$n.attack.json" 2>/dev/null &
        ap=$!
        sleep 5
    fi
    taskset -c 0 "$DIR/target/release/loadgen" --url http://127.0.0.1:$PORT --server-pid $sp --json \
        --spread-addresses --games "$GAMES" --seconds "$SECONDS_" --think-ms 1000 >"$OUT/$kind-$n.json"
    # The attack lasts until a few seconds past the honest run; its report comes 10 s later.
    if [ -n "$ap" ]; then wait "$ap" || true; fi
    local rss; rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$sp/status)
    curl -s 127.0.0.1:$PORT/metrics >"$OUT/$kind-$n.metrics"
    kill $sp; wait $sp 2>/dev/null || true
    for _ in $(seq 50); do kill -0 $sp 2>/dev/null || break; sleep 0.1; done
    psql -q "$PG/postgres" -c "drop database $db" >/dev/null
    python3 - "$OUT/$kind-$n.json" "$kind" "$rss" "$OUT/$kind-$n.metrics" >>"$OUT/runs" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["latency_ms"]
# The server's own view from its /metrics histograms: a person's move from
# its frame read to its broadcast, and a commit; the mean, and the bucket
# bound under which 99 % fall.
def hist(name):
    buckets, total, count = [], 0.0, 0
    for line in open(sys.argv[4]):
        if line.startswith(name + "_bucket{le=\"") and "+Inf" not in line:
            buckets.append((float(line.split('"')[1]), int(line.split()[-1])))
        elif line.startswith(name + "_sum "):
            total = float(line.split()[-1])
        elif line.startswith(name + "_count "):
            count = int(line.split()[-1])
    p99 = next((b for b, c in buckets if c >= 0.99 * count), float("inf"))
    return round(1000 * total / max(count, 1), 2), p99 * 1000
mv, cm = hist("sanguo_move_latency_seconds"), hist("sanguo_store_commit_seconds")
print(sys.argv[2], l["p50"], l["p99"], l["p999"], round(r["moves_per_s"], 1), round(r["server_cpu_pct"] or 0), sys.argv[3], r["errors"], *mv, *cm)
EOF
    tail -1 "$OUT/runs" | awk -v t="$(date -u +%T)" '{printf "%s %-8s p50 %6.2f  p99 %7.2f  p999 %7.2f ms  %7.1f moves/s  server CPU %3d%%  RSS peak %s MiB  errors %s  server: move mean %.2f p99<=%g, commit mean %.2f p99<=%g ms\n", t, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}'
}

: >"$OUT/runs"
echo "== $(date -u +%T) $BIN, $ROUNDS rounds, attacks $ATTACKS, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $(seq "$ROUNDS"); do
    if [ $((n % 2)) = 1 ]; then run quiet "$n"; run attacked "$n"; else run attacked "$n"; run quiet "$n"; fi
done
python3 - "$OUT/runs" <<'EOF'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
med = {}
for kind in ("quiet", "attacked"):
    p99 = [float(r[2]) for r in runs if r[0] == kind]
    med[kind] = statistics.median(p99)
    print(f"{kind:8} p99 median {med[kind]:.2f} ms  (runs: {', '.join(f'{x:.2f}' for x in p99)})")
print(f"attacked / quiet, medians of p99: {med['attacked'] / med['quiet']:.3f}")
EOF
