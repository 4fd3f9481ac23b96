#!/usr/bin/env bash
# Starts a local Meilisearch for development on 127.0.0.1:7700 with a dev
# master key, if the `meilisearch` binary is installed; says how otherwise.
#   scripts/meili-dev.sh            # foreground
#   MEILI_DB=/tmp/meili scripts/meili-dev.sh &
set -euo pipefail
if ! command -v meilisearch >/dev/null 2>&1; then
  cat >&2 <<'MSG'
meilisearch is not installed. Install a release binary (1.14 or later), e.g.:
  curl -L https://install.meilisearch.com | sh        # then move ./meilisearch onto your PATH
or run the official container:
  docker run --rm -p 7700:7700 -e MEILI_MASTER_KEY=dev-master-key getmeili/meilisearch:v1.44
MSG
  exit 1
fi
export MEILI_MASTER_KEY=${MEILI_MASTER_KEY:-dev-master-key}
echo "Meilisearch on http://127.0.0.1:7700 (export MEILI_URL=http://127.0.0.1:7700 MEILI_MASTER_KEY=$MEILI_MASTER_KEY)" >&2
exec meilisearch --http-addr 127.0.0.1:7700 --db-path "${MEILI_DB:-${TMPDIR:-/tmp}/agentfinder-meili}" --no-analytics
