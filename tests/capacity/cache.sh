# Sourced by callgrind.sh and relay-callgrind.sh: with CACHE=1 in the
# environment, valgrind also simulates the data caches (--cache-sim), with a
# last level of CACHE_LL bytes (default 1 MiB, 8-way: about one core's L2;
# the levels past it are shared with whatever else the host runs).
#   valgrind --tool=callgrind "${CACHE_ARGS[@]}" …
#   cache_line LABEL SHORT.out LONG.out MOVES
# prints "LABEL cache: L1 misses read R write W, last-level misses read R
# write W a move": the difference of the two runs' misses divided by the
# difference of their moves, as for the instructions.
CACHE_ARGS=()
[ -n "${CACHE:-}" ] && CACHE_ARGS=(--cache-sim=yes "--LL=${CACHE_LL:-1048576},8,64")

cache_line() {
    [ -n "${CACHE:-}" ] || return 0
    # PROGRAM TOTALS: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw, each with its (100.0%).
    local totals='/PROGRAM TOTALS/ {gsub(",",""); print $9, $11, $15, $17; exit}'
    local A1 B1 C1 D1 A2 B2 C2 D2
    read -r A1 B1 C1 D1 < <(callgrind_annotate "$2" 2>/dev/null | awk "$totals")
    read -r A2 B2 C2 D2 < <(callgrind_annotate "$3" 2>/dev/null | awk "$totals")
    echo "$1 cache: L1 misses read $(( (A2 - A1) / $4 )) write $(( (B2 - B1) / $4 )), last-level misses read $(( (C2 - C1) / $4 )) write $(( (D2 - D1) / $4 )) a move"
}
