#!/bin/bash
# The bare relay's instructions a move (issue 15's yardstick, as
# callgrind.sh counts the server's): `relay` under callgrind, driven by
# `loadgen --mode relay` twice — a short and a long run, each on a fresh
# relay — and the difference of the instructions divided by the difference
# of the moves the load generator counted, so that start-up and shutdown
# cancel out. Like callgrind.sh, user space only; repeatable on a shared
# machine. 13.0 k a move on 2026-12-07 (the server: 51.2 k).
#
#   tests/capacity/relay-callgrind.sh RELAY LOADGEN LABEL [loadgen args…]
#   (default: --games 40 --think-ms 1000; SHORT=15 and LONG=45 seconds)
#
# PORT (9291). Output: /tmp/callgrind-relay-LABEL-{short,long}.out and a line
# "LABEL: N instructions / M moves = X per move". CACHE=1 (and CACHE_LL) as
# in callgrind.sh: the caches simulated, and a second line with the
# misses a move (data and code).
set -eu
RELAY=$1; LOADGEN=$2; LABEL=$3; shift 3
ARGS=("$@"); [ ${#ARGS[@]} -eq 0 ] && ARGS=(--games 40 --think-ms 1000)
PORT=${PORT:-9291}
SHORT=${SHORT:-15}
LONG=${LONG:-45}
ulimit -n 20000
. "$(dirname "$0")/cache.sh"

run() { # $1 = part, $2 = seconds; prints "instructions moves"
    local OUT=/tmp/callgrind-relay-$LABEL-$1.out
    rm -f "$OUT"
    valgrind --tool=callgrind "${CACHE_ARGS[@]}" --callgrind-out-file="$OUT" "$RELAY" --listen 127.0.0.1:$PORT \
        >"/tmp/callgrind-relay-$LABEL-$1.log" 2>&1 &
    local RP=$!
    for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.2; done
    "$LOADGEN" --url http://127.0.0.1:$PORT --mode relay "${ARGS[@]}" --seconds "$2" \
        >"/tmp/callgrind-relay-$LABEL-$1.loadgen" 2>&1 || true
    kill -TERM $RP; wait $RP 2>/dev/null || true
    local IR=$(callgrind_annotate "$OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}')
    local M=$(awk '/^moves / {print $2}' "/tmp/callgrind-relay-$LABEL-$1.loadgen")
    echo "$IR $M"
}
read -r I1 M1 < <(run short "$SHORT")
read -r I2 M2 < <(run long "$LONG")
echo "$LABEL: short $I1 Ir / $M1 moves; long $I2 Ir / $M2 moves; $((I2 - I1)) instructions / $((M2 - M1)) moves = $(( (I2 - I1) / (M2 - M1) )) per move"
cache_line "$LABEL" /tmp/callgrind-relay-$LABEL-short.out /tmp/callgrind-relay-$LABEL-long.out $((M2 - M1))
