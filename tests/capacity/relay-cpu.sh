#!/bin/bash
# The bare relay's CPU a move (issue 15's yardstick): `relay` pinned to CPU 1
# (nice -10) and `loadgen --mode relay` on CPU 0, as bench.sh pins the
# server; from the run's START-th second, `perf stat -e task-clock` on the
# relay for WINDOW seconds, divided by the moves relayed in them (the run's
# moves a second × WINDOW), and its user and kernel time from /proc/PID/stat.
# Run it beside cpu-per-move.sh, alternating, never during a build: the
# server's cost a move is only comparable with the relay's on the same host
# in the same minutes (it has been 22 to 51 µs on the machines seen).
#
#   tests/capacity/relay-cpu.sh LABEL --games 1000 --think-ms 200 --seconds 25
#
# PORT (9191), START (12), WINDOW (10). Output: "LABEL moves/s=9,821
# us/move=34.0 user=9.2 sys=24.8", then loadgen's latency line; loadgen's
# whole output in /tmp/relay-cpu-LABEL.out.
set -eu
LABEL=$1; shift
START=${START:-12}; WINDOW=${WINDOW:-10}; PORT=${PORT:-9191}
DIR=$(cd "$(dirname "$0")/../.." && pwd)
OUT=/tmp/relay-cpu-$LABEL
ulimit -n 20000
setsid nice -n -10 taskset -c 1 "$DIR/target/release/relay" --listen 127.0.0.1:$PORT >"$OUT.log" 2>&1 &
RP=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
nice -n -10 taskset -c 0 "$DIR/target/release/loadgen" --url http://127.0.0.1:$PORT --mode relay \
    --server-pid $RP "$@" >"$OUT.out" 2>&1 &
LG=$!
sleep "$START"
read -r U0 S0 < <(awk '{print $14, $15}' "/proc/$RP/stat")
perf stat -x, -e task-clock -p "$RP" -- sleep "$WINDOW" 2>"$OUT.perf"
read -r U1 S1 < <(awk '{print $14, $15}' "/proc/$RP/stat")
wait $LG
kill $RP; wait $RP 2>/dev/null || true
RATE=$(awk '/^moves_per_s/ {print $2}' "$OUT.out")
awk -F, -v r="$RATE" -v w="$WINDOW" -v l="$LABEL" -v u=$((U1 - U0)) -v s=$((S1 - S0)) -v t="$(getconf CLK_TCK)" '
    $3 == "task-clock" { d = r * w; printf "%s moves/s=%d us/move=%.1f user=%.1f sys=%.1f\n", l, r, $1 * 1000 / d, u * 1e6 / t / d, s * 1e6 / t / d }' "$OUT.perf"
grep -E "latency_ms" "$OUT.out"
