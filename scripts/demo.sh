#!/usr/bin/env bash
# The whole local loop: build the fixtures -> verify -> sync Meilisearch -> search.
# Needs a running Meilisearch (scripts/meili-dev.sh) for the last two steps;
# without MEILI_URL it stops after verify and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=${STORE:-./artifacts}
cargo build --release -q -p agentfinder-skills
BIN=${CARGO_TARGET_DIR:-target}/release/agentfinder-skills
"$BIN" build --store "$STORE"
"$BIN" verify --store "$STORE"
if [ -z "${MEILI_URL:-}" ]; then
  echo "MEILI_URL is not set: start scripts/meili-dev.sh and export MEILI_URL and MEILI_MASTER_KEY to sync and search" >&2
  exit 0
fi
"$BIN" sync --store "$STORE"
"$BIN" search "make a small looping gif for a chat reaction" --limit 5
"$BIN" health
