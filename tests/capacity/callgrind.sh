#!/bin/bash
# Per-move server CPU in instructions (issue 15). Runs the release server
# under callgrind on a fresh Postgres database and drives it with `loadgen`
# twice — a short and a long run, each on a fresh server — and divides the
# difference of the instructions by the difference of the moves the server
# accepted (its /metrics `sanguo_moves_total`), so that start-up and
# shutdown cancel out. Instruction counts do not depend on what else the
# machine runs: repeatable on a shared machine. Kernel time (system calls:
# socket writes, fsync) is not counted: callgrind sees user space only.
#
#   tests/capacity/callgrind.sh SERVER LOADGEN LABEL [loadgen args…]
#   (default: --games 40 --think-ms 1000; SHORT=20 and LONG=80 seconds)
#
# At 40 games a group commit carries about one move, so the total holds a
# whole commit's fixed cost for nearly every move; at 1,000 games one
# carries ~20. SANGUO_COMMIT_WINDOW_US=250000 in the environment (the
# server inherits it) makes commits of ~15 moves under valgrind, close to
# that: 51.2 k instructions a move on 2026-12-07 (bc4aae2; with the
# calibration below left out whole).
#
# Output: /tmp/callgrind-LABEL-{short,long}.out (callgrind_annotate them)
# and a line "LABEL: N instructions / M moves = X per move (calibration
# left out: A and B)".
#
# CACHE=1 also simulates the caches (cache.sh: a last level of 1 MiB,
# about one core's L2) and prints a second line, the data lines a move
# misses in the first level and in the last, read and written, and the
# lines of code it misses in the first level's instruction cache. The last-level
# misses are the memory a move touches that nothing touched for long: run
# it with many games, e.g. `--games 500 --think-ms 2000` (each room and
# socket then waits about a second between two moves, while 500 others
# move; with 1,000 games the sign-ins outlast the store's 3-second wait for
# a connection under the simulation, and games fail to start). A
# simulation, without the hardware's prefetching: it ranks where a move's
# cold memory is, it does not time it.
# 2026-12-07 (9733f87, 500 games): 230 read and 248 written a move; the
# bare relay (relay-callgrind.sh), 60 and 107. Code (7c997df, 40 games):
# 1,477 lines missed in the first level a move; the relay, 214.
#
# Left out of each run's count: the clock calibration of `quanta` (the rate
# limiters' clock), done once at start-up, all of it under governor's
# `QuantaClock::default`. It loops until its readings agree, so under
# valgrind its count varies from run to run (11.7 to 15.4 million
# instructions seen on 2026-12-07, up to ±2,000 a move in the difference);
# it is not work a move does. (Until 2026-12-07 only its inner closure was
# left out, 4.2–5.6 million: the figures a move before then carry up to
# ~±1,500 of calibration.)
set -eu
BIN=$1; LOADGEN=$2; LABEL=$3; shift 3
. "$(dirname "$0")/unlimited.sh"
ARGS=("$@"); [ ${#ARGS[@]} -eq 0 ] && ARGS=(--games 40 --think-ms 1000)
. "$(dirname "$0")/cache.sh"
PG=${PG:-postgres://postgres@127.0.0.1:5432}
PORT=${PORT:-8191}
SHORT=${SHORT:-20}
LONG=${LONG:-80}

run() { # $1 = part, $2 = seconds; prints "instructions moves calibration"
    local DB=cg_$(date +%s%N | tail -c 8) OUT=/tmp/callgrind-$LABEL-$1.out
    psql -q "$PG/postgres" -c "create database $DB" >/dev/null
    rm -f "$OUT"
    env "${UNLIMITED[@]}" RUST_LOG=warn DATABASE_URL="$PG/$DB" valgrind --tool=callgrind "${CACHE_ARGS[@]}" --callgrind-out-file="$OUT" \
        "$BIN" serve --listen 127.0.0.1:$PORT --messages-per-second 1000 >"/tmp/callgrind-$LABEL-$1.log" 2>&1 &
    local SP=$!
    for _ in $(seq 600); do curl -sf 127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.2; done
    "$LOADGEN" --url http://127.0.0.1:$PORT "${ARGS[@]}" --seconds "$2" >"/tmp/callgrind-$LABEL-$1.loadgen" 2>&1 || true
    local M=$(curl -sf 127.0.0.1:$PORT/metrics | awk '/^sanguo_moves_total/ {print $2}')
    kill -TERM $SP; wait $SP 2>/dev/null || true
    psql -q "$PG/postgres" -c "drop database $DB" >/dev/null
    local IR=$(callgrind_annotate "$OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}')
    local CAL=$(callgrind_annotate --inclusive=yes --threshold=100 "$OUT" 2>/dev/null |
        awk '/governor-[0-9.]+\/src\/clock\/quanta.rs:<governor::clock::quanta::QuantaClock as core::default::Default>::default \[/ {gsub(",","",$1); print $1; exit}')
    echo "$((IR - ${CAL:-0})) $M ${CAL:-0}"
}
read -r I1 M1 C1 < <(run short "$SHORT")
read -r I2 M2 C2 < <(run long "$LONG")
echo "$LABEL: short $I1 Ir / $M1 moves; long $I2 Ir / $M2 moves; $((I2 - I1)) instructions / $((M2 - M1)) moves = $(( (I2 - I1) / (M2 - M1) )) per move (calibration left out: $C1 and $C2)"
cache_line "$LABEL" /tmp/callgrind-$LABEL-short.out /tmp/callgrind-$LABEL-long.out $((M2 - M1))
