#!/bin/bash
# Server CPU a move (issue 15): one bench.sh run, and in its middle `perf stat`
# on the server for WINDOW seconds, divided by the moves the server counted in
# the same window (its /metrics `sanguo_moves_total`). Also the system calls
# and context switches a move. Kernel time is included (perf stat counts the
# task's whole CPU time), unlike callgrind.sh's instructions.
#
#   tests/capacity/cpu-per-move.sh target/release/sanguo LABEL --games 1000 --think-ms 200 --seconds 25
#
# START (14): seconds into the run at which the window opens (after the games
# have started); WINDOW (10); the run's --seconds must cover both. PORT and
# PG as for bench.sh. Needs `perf` with the syscalls tracepoints (root).
# Output: the window's line, e.g. "LABEL moves=97,000 us/move=53.4
# user=27.9 sys=25.6 context-switches=0.19 sendto=0.09 … sendmsg=2.96 …" (the
# room writes the moves to the sockets with sendmsg, server/src/wire.rs; user and sys: the
# process's user and kernel time a move in the same window, from
# /proc/PID/stat, in clock ticks: ±1 % over 10 s), then bench.sh's latency
# line; bench.sh's whole output in /tmp/cpu-per-move-LABEL.out. The bare
# relay's cost on the same host: tests/capacity/relay-cpu.sh.
set -eu
BIN=$1; LABEL=$2; shift 2
START=${START:-14}; WINDOW=${WINDOW:-10}; PORT=${PORT:-8181}
DIR=$(cd "$(dirname "$0")/../.." && pwd)
OUT=/tmp/cpu-per-move-$LABEL
PORT=$PORT "$DIR/tests/capacity/bench.sh" "$BIN" "$LABEL" "$@" >"$OUT.out" 2>&1 &
BENCH=$!
sleep "$START"
SP=$(pgrep -f "serve --listen 127.0.0.1:$PORT" | head -1)
moves() { curl -s "127.0.0.1:$PORT/metrics" | awk '/^sanguo_moves_total/ {print $2}'; }
M0=$(moves)
read -r U0 S0 < <(awk '{print $14, $15}' "/proc/$SP/stat")
perf stat -x, -e task-clock,context-switches,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_sendmsg,syscalls:sys_enter_epoll_wait \
    -p "$SP" -- sleep "$WINDOW" 2>"$OUT.perf"
read -r U1 S1 < <(awk '{print $14, $15}' "/proc/$SP/stat")
M1=$(moves)
wait $BENCH
TICK=$(getconf CLK_TCK)
awk -F, -v d=$((M1 - M0)) -v l="$LABEL" -v u=$((U1 - U0)) -v s=$((S1 - S0)) -v t="$TICK" '
    BEGIN { printf "%s moves=%d", l, d }
    $3 == "task-clock" { printf " us/move=%.1f user=%.1f sys=%.1f", $1 * 1000 / d, u * 1e6 / t / d, s * 1e6 / t / d }
    $3 != "task-clock" && $3 != "" { n = $3; sub("syscalls:sys_enter_", "", n); printf " %s=%.2f", n, $1 / d }
    END { print "" }' "$OUT.perf"
grep -E "latency_ms" "$OUT.out"
