#!/usr/bin/env bash
# Benchmarks at scale; prints numbers, checks nothing. Not part of CI.
#
#   scripts/bench.sh [SKILLS] [BACKFILL_SKILLS] [BACKFILL_COMMITS]
#
# Generates (once, under ${BENCH_DIR:-/tmp/agentfinder-bench}) a synthetic
# repository of SKILLS skills (default 60000) and one of BACKFILL_SKILLS
# skills (default 20000) with BACKFILL_COMMITS commits (default 1000, each
# editing 4 files), then reports: a cold build (wall time, MB/s of
# Markdown, peak RSS, bytes written); markdown-rs parsing alone on all
# cores (the floor); a no-op rebuild; a build after 10 files changed,
# reusing the cold build's parts, against the cold build; and a backfill of
# every commit of the history against one full build (time, bytes, RSS).
set -euo pipefail
cd "$(dirname "$0")/.."
SKILLS=${1:-60000}
BF_SKILLS=${2:-20000}
BF_COMMITS=${3:-1000}
DIR=${BENCH_DIR:-/tmp/agentfinder-bench}
BIG="$DIR/repo-$SKILLS"
HIST="$DIR/history-$BF_SKILLS-$BF_COMMITS"
mkdir -p "$DIR"

cargo build --release -q
BIN=${CARGO_TARGET_DIR:-target}/release/agentfinder-skills
[ -d "$BIG/.git" ] || python3 scripts/generate-skills-repo.py "$BIG" --skills "$SKILLS"
[ -d "$HIST/.git" ] || python3 scripts/generate-skills-repo.py "$HIST" --skills "$BF_SKILLS" --commits "$BF_COMMITS" --changed 4

# run LABEL CMD...: wall seconds and peak RSS (MB) of one command.
run() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >"$DIR/$label.out" 2>"$DIR/$label.err"
  read -r wall rss < "$DIR/time.txt"
  echo "$wall $((rss / 1024))"
}

MB=$(find -L "$BIG" -name SKILL.md -not -path '*/.git/*' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')
rm -rf "$DIR/store-big"
read -r build_s build_rss < <(run build "$BIN" build --quiet --no-embed --repo bench/skills --source "$BIG" --store "$DIR/store-big")
read -r noop_s noop_rss < <(run noop "$BIN" build --quiet --no-embed --repo bench/skills --source "$BIG" --store "$DIR/store-big")
floor_line=$(cargo bench -q --bench parse_floor -- "$BIG" 2>/dev/null | grep parse_floor)
floor_s=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$floor_line")

# Ten files change after the cold build: a copy of the repository gets the
# commit (the benchmark repository stays as generated), built into a copy
# of the cold build's store, so latest/ is the base it reuses.
INC="$DIR/repo-$SKILLS-ten"
rm -rf "$INC" "$DIR/store-inc"
git clone -q "$BIG" "$INC"
for f in $(git -C "$INC" ls-files '*SKILL.md' | head -10); do
  printf '\n## Changed\n\nEdited for the benchmark.\n' >> "$INC/$f"
done
git -C "$INC" -c user.name=bench -c user.email=bench@example.org commit -qam "ten changes"
cp -r "$DIR/store-big" "$DIR/store-inc"
read -r inc_s inc_rss < <(run inc "$BIN" build --quiet --no-embed --repo bench/skills --source "$INC" --store "$DIR/store-inc")

rm -rf "$DIR/store-hist-one" "$DIR/store-hist"
read -r one_s one_rss < <(run one "$BIN" build --quiet --no-embed --repo bench/hist --source "$HIST" --store "$DIR/store-hist-one")
read -r bf_s bf_rss < <(run backfill "$BIN" backfill --quiet --no-embed --repo bench/hist --source "$HIST" --store "$DIR/store-hist")
bytes() { du -sb "$1" | cut -f1; }

echo
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "repository: $SKILLS skills, $MB MB of Markdown"
printf 'build end-to-end:      %8.2f s  %7.1f MB/s  peak RSS %5d MB\n' "$build_s" "$(echo "$MB / $build_s" | bc -l)" "$build_rss"
echo "parse alone (floor):   $floor_line"
printf 'build / parse-alone:   %8.2f x\n' "$(echo "$build_s / $floor_s" | bc -l)"
printf 'cold build wrote:      %8d MB\n' "$(( $(du -sb "$DIR/store-big" | cut -f1) / 1000000 ))"
printf 'no-op rebuild:         %8.2f s  peak RSS %5d MB\n' "$noop_s" "$noop_rss"
printf '10 files changed:      %8.2f s  peak RSS %5d MB  (%.0f%% of the cold build)\n' "$inc_s" "$inc_rss" "$(echo "100 * $inc_s / $build_s" | bc -l)"
echo "$(grep summary "$DIR/build.out")"
echo "$(grep summary "$DIR/inc.out")"
echo
echo "history: $BF_SKILLS skills, $BF_COMMITS commits"
printf 'one full build:        %8.2f s  peak RSS %5d MB\n' "$one_s" "$one_rss"
printf 'backfill all commits:  %8.2f s  peak RSS %5d MB  (%.1f x one build)\n' "$bf_s" "$bf_rss" "$(echo "$bf_s / $one_s" | bc -l)"
one_b=$(bytes "$DIR/store-hist-one"); bf_b=$(bytes "$DIR/store-hist")
printf 'bytes: one build %d MB, backfill %d MB  (%.2f x one build)\n' "$((one_b / 1000000))" "$((bf_b / 1000000))" "$(echo "$bf_b / $one_b" | bc -l)"
echo "$(grep '^backfill:' "$DIR/backfill.out")"
