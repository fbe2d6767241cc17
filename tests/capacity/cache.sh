# Sourced by callgrind.sh and relay-callgrind.sh: with CACHE=1 in the
# environment, valgrind also simulates the caches (--cache-sim): the first
# level's instruction and data caches as the host's, and a last level of
# CACHE_LL bytes (default 1 MiB, 8-way: about one core's L2; the levels past
# it are shared with whatever else the host runs).
#   valgrind --tool=callgrind "${CACHE_ARGS[@]}" …
#   cache_line LABEL SHORT.out LONG.out MOVES
# prints "LABEL cache: L1 misses read R write W, last-level misses read R
# write W, code lines missed in L1 I and in the last level J a move": the
# difference of the two runs' misses divided by the difference of their
# moves, as for the instructions. The code misses count the lines of code
# a move runs that the first level's instruction cache (valgrind takes its
# size from the host: 32 KiB on the 2026-12-07 hosts) no longer holds. The
# simulation sees user space only; the kernel's own code, run in every
# system call, evicts more on a real core.
CACHE_ARGS=()
[ -n "${CACHE:-}" ] && CACHE_ARGS=(--cache-sim=yes "--LL=${CACHE_LL:-1048576},8,64")

cache_line() {
    [ -n "${CACHE:-}" ] || return 0
    # PROGRAM TOTALS: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw, each with its (100.0%).
    local totals='/PROGRAM TOTALS/ {gsub(",",""); print $9, $11, $15, $17, $7, $13; exit}'
    local A1 B1 C1 D1 E1 F1 A2 B2 C2 D2 E2 F2
    read -r A1 B1 C1 D1 E1 F1 < <(callgrind_annotate "$2" 2>/dev/null | awk "$totals")
    read -r A2 B2 C2 D2 E2 F2 < <(callgrind_annotate "$3" 2>/dev/null | awk "$totals")
    echo "$1 cache: L1 misses read $(( (A2 - A1) / $4 )) write $(( (B2 - B1) / $4 )), last-level misses read $(( (C2 - C1) / $4 )) write $(( (D2 - D1) / $4 )), code lines missed in L1 $(( (E2 - E1) / $4 )) and in the last level $(( (F2 - F1) / $4 )) a move"
}
