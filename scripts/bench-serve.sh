#!/usr/bin/env bash
# Search latency of the embedded engine; prints numbers, checks nothing.
# Not part of CI.
#
#   scripts/bench-serve.sh DIR [CLIENTS] [SECONDS]
#
# DIR holds a pipeline.toml whose [output].store has been built (with
# vectors, for hybrid search: [embed] set, the model on this machine).
# Reports, with no Meilisearch:
#   - the one-off local index build (the first search, cache emptied);
#   - `search` from the CLI, once per query of fixtures/eval/queries.json
#     (each a new process: model load and index open included), p50/p99;
#   - `serve`, each query once (one client): what a new query costs;
#   - `serve` under CLIENTS (16) concurrent clients for SECONDS (30),
#     through benches/serve_load.rs: requests/s, p50/p99, and serve's peak RSS.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR=$(cd "$1" && pwd)
CLIENTS=${2:-16}
SECONDS_=${3:-30}
cd "$ROOT"
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/agentfinder-skills
cd "$DIR"
export XDG_CACHE_HOME="$DIR/engine-cache"
unset MEILI_URL
rm -rf "$XDG_CACHE_HOME"

start=$(date +%s.%N)
"$BIN" search "warm up" --limit 1 >/dev/null 2>&1
echo "local index build (first search): $(echo "$(date +%s.%N) - $start" | bc) s, $(du -sm "$XDG_CACHE_HOME" | cut -f1) MB"

python3 - "$BIN" "$ROOT/fixtures/eval/queries.json" <<'PY'
import json, subprocess, sys, time
binary, queries = sys.argv[1], sys.argv[2]
times = []
for q in json.load(open(queries))["queries"]:
    t = time.perf_counter()
    subprocess.run([binary, "search", q["query"], "--limit", "10", "--json"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
pct = lambda p: times[min(int(len(times) * p), len(times) - 1)]
print(f"cli search: queries={len(times)} p50_ms={pct(0.5):.1f} p99_ms={pct(0.99):.1f} (a process per query)")
PY

"$BIN" serve --addr 127.0.0.1:0 --refresh 0 >serve.out 2>serve.err &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
    grep -q "listening on" serve.out 2>/dev/null && break
    sleep 0.1
done
ADDR=$(sed -n 's|listening on http://||p' serve.out | head -1)
# Each query once first: the model loads on the first hybrid query, and a
# query's vector is embedded once (one forward pass, one at a time) and
# then cached, so the load below measures search. The first pass is timed:
# it is what a query never seen before costs.
python3 - "$ADDR" "$ROOT/fixtures/eval/queries.json" <<'PY'
import json, sys, time, urllib.parse, urllib.request
addr, queries = sys.argv[1], sys.argv[2]
times = []
for q in json.load(open(queries))["queries"]:
    t = time.perf_counter()
    urllib.request.urlopen(f"http://{addr}/search?q={urllib.parse.quote_plus(q['query'])}&limit=10").read()
    times.append((time.perf_counter() - t) * 1000)
times.sort()
pct = lambda p: times[min(int(len(times) * p), len(times) - 1)]
print(f"serve, each query first seen (one client): p50_ms={pct(0.5):.1f} p99_ms={pct(0.99):.1f}")
PY
(cd "$ROOT" && cargo bench -q --bench serve_load -- "$ADDR" "$CLIENTS" "$SECONDS_" 2>/dev/null | grep serve_load)
echo "serve peak RSS: $(awk '/VmHWM/ {printf "%d MB", $2/1024}' /proc/$SERVE/status)"
kill -TERM $SERVE
wait $SERVE || true
