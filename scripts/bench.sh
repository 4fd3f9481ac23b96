#!/usr/bin/env bash
# Benchmarks at scale; prints numbers, checks nothing. Not part of CI.
#
#   scripts/bench.sh [SKILLS] [BACKFILL_SKILLS] [BACKFILL_COMMITS]
#
# Generates (once, under ${BENCH_DIR:-/tmp/agentfinder-bench}) a synthetic
# repository of SKILLS skills (default 60000) and one of BACKFILL_SKILLS
# skills (default 100) with BACKFILL_COMMITS commits (default 1000), then
# reports: end-to-end build wall time, MB/s of Markdown and peak RSS;
# markdown-rs parsing alone on all cores (the floor) and the ratio; a no-op
# rebuild; and a backfill of all commits against one full build.
set -euo pipefail
cd "$(dirname "$0")/.."
SKILLS=${1:-60000}
BF_SKILLS=${2:-100}
BF_COMMITS=${3:-1000}
DIR=${BENCH_DIR:-/tmp/agentfinder-bench}
BIG="$DIR/repo-$SKILLS"
HIST="$DIR/history-$BF_SKILLS-$BF_COMMITS"
mkdir -p "$DIR"

cargo build --release -q
BIN=${CARGO_TARGET_DIR:-target}/release/agentfinder-skills
[ -d "$BIG/.git" ] || python3 scripts/generate-skills-repo.py "$BIG" --skills "$SKILLS"
[ -d "$HIST/.git" ] || python3 scripts/generate-skills-repo.py "$HIST" --skills "$BF_SKILLS" --commits "$BF_COMMITS"

# run LABEL CMD...: wall seconds and peak RSS (MB) of one command.
run() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >"$DIR/$label.out" 2>"$DIR/$label.err"
  read -r wall rss < "$DIR/time.txt"
  echo "$wall $((rss / 1024))"
}

MB=$(find -L "$BIG" -name SKILL.md -not -path '*/.git/*' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')
rm -rf "$DIR/store-big"
read -r build_s build_rss < <(run build "$BIN" build --quiet --source "$BIG" --store "$DIR/store-big")
read -r noop_s noop_rss < <(run noop "$BIN" build --quiet --source "$BIG" --store "$DIR/store-big")
floor_line=$(cargo bench -q --bench parse_floor -- "$BIG" 2>/dev/null | grep parse_floor)
floor_s=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$floor_line")

rm -rf "$DIR/store-hist-one" "$DIR/store-hist"
read -r one_s one_rss < <(run one "$BIN" build --quiet --source "$HIST" --store "$DIR/store-hist-one")
read -r bf_s bf_rss < <(run backfill "$BIN" backfill --quiet --source "$HIST" --store "$DIR/store-hist")

echo
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "repository: $SKILLS skills, $MB MB of Markdown"
printf 'build end-to-end:      %8.2f s  %7.1f MB/s  peak RSS %5d MB\n' "$build_s" "$(echo "$MB / $build_s" | bc -l)" "$build_rss"
echo "parse alone (floor):   $floor_line"
printf 'build / parse-alone:   %8.2f x\n' "$(echo "$build_s / $floor_s" | bc -l)"
printf 'no-op rebuild:         %8.2f s  peak RSS %5d MB\n' "$noop_s" "$noop_rss"
echo "$(grep summary "$DIR/build.out")"
echo
echo "history: $BF_SKILLS skills, $BF_COMMITS commits"
printf 'one full build:        %8.2f s  peak RSS %5d MB\n' "$one_s" "$one_rss"
printf 'backfill all commits:  %8.2f s  peak RSS %5d MB  (%.1f x one build)\n' "$bf_s" "$bf_rss" "$(echo "$bf_s / $one_s" | bc -l)"
echo "$(grep '^backfill:' "$DIR/backfill.out")"
