#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets/) for a bounded time each, from seed corpora
# made here from the project's own data (the perft files' positions, the protocol's example
# frames), and prints one line per target: runs, corpus size, and whether it found a crash.
# Not part of `cargo test` (issue 18: a benchmark-style script). Needs cargo-fuzz
# (`cargo install cargo-fuzz`) and a nightly toolchain (libFuzzer's sanitizer flags), or
# RUSTC_BOOTSTRAP=1 on stable with `--sanitizer none`, which this script falls back to.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET=60] [TARGET…]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(client_msg position_text move_text room_commands)

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
  extra=(--sanitizer none)
fi

work="${FUZZ_WORK:-target/fuzz-work}"
mkdir -p "$work"

# Seeds: position texts of every perft file, prefixed by the variant's byte (0 sanguo, 1 anqi,
# 2 yanyi); move lines from each variant's first legal moves; the protocol's example frames.
seed() { # dir name bytes-from-stdin
  mkdir -p "$work/corpus/$1"
  cat > "$work/corpus/$1/$2"
}
n=0
for f in engine/tests/perft.txt:0 engine/tests/anqi_perft.txt:1 engine/tests/yanyi_perft.txt:2; do
  file="${f%%:*}"; byte="${f##*:}"
  [ -f "$file" ] || continue
  grep -v '^#' "$file" | grep -v '^\s*$' | sed -E 's/ ; [0-9]+ ; [0-9]+\s*$//' | sort -u | head -40 | while IFS= read -r pos; do
    n=$((n + 1))
    { printf "\\x0$byte"; printf '%s' "$pos"; } | seed position_text "$byte-$(printf '%s' "$pos" | sha1sum | cut -c1-12)"
  done
done
for v in sanguo:0 anqi:1 yanyi:2; do
  key="${v%%:*}"; byte="${v##*:}"
  moves="$(cargo run -q --release -p server -- moves --variant "$key" 2>/dev/null | head -8 || true)"
  { printf "\\x0$byte"; printf '%s\n' "$moves"; } | seed move_text "$key-first-moves"
done
grep -oE '^\{"type":"[a-z_]+".*\}$' protocol/README.md | sort -u | head -60 | while IFS= read -r frame; do
  printf '%s' "$frame" | seed client_msg "$(printf '%s' "$frame" | sha1sum | cut -c1-12)"
done

# room_commands: per variant, its settings (600 s, no increment, 10 s grace, chat cap 8), three
# joins, for 三国暗棋 a tick past the wait for seeds, then the side to move's legal moves
# (the byte layout of fuzz/fuzz_targets/room_commands.rs).
joins='\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x02\x02\x00\x00'
moves=''
for k in $(seq 1 80); do moves+="\\x0a\\x02\\x03\\x$(printf '%02x' $((k * 37 % 200)))\\x00"; done
for v in 'sanguo:\x00\x04\x00\x00\x00\x00\x01\x01\x07:' \
         'anqi:\x01\x04\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x07:\x00\x07\x0e\x00' \
         'yanyi:\x02\x04\x00\x00\x00\x00\x01\x01\x07:'; do
  IFS=: read -r key settings tick <<<"$v"
  printf "$settings$joins$tick$moves" | seed room_commands "$key-three-join-and-play"
done

status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  log="$work/$t.log"
  if "${fuzz[@]}" run "${extra[@]}" "$t" "$work/corpus/$t" -- \
      -max_total_time="$secs" -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 >"$log" 2>&1; then
    verdict="no crash"
  else
    verdict="CRASH (see $log and $work/artifacts/$t/)"
    status=1
  fi
  runs="$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')"
  corpus="$(ls "$work/corpus/$t" | wc -l)"
  echo "$t: ${secs}s, $runs runs, corpus $corpus, $verdict"
done
exit $status
