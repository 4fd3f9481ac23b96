#!/usr/bin/env bash
# Runs the batch job on Hugging Face Jobs with the `hf` CLI (pip install huggingface_hub).
#
#   jobs/hf-job.sh schedule        # daily build + promote, no overlapping runs
#   jobs/hf-job.sh run             # one build now (a manual run)
#   jobs/hf-job.sh backfill I N    # shard I of N of a history backfill (run N of them)
#   jobs/hf-job.sh embed I N       # shard I of N of a first embed (run N of them, then `run`)
#
# Output goes to a Hugging Face bucket mounted read-write at /data (no
# credentials in the job at all), or, with STORE=s3://bucket/prefix, to an
# S3-compatible gateway whose keys are passed as *secrets* (--secrets NAME
# reads the value from your environment; it never appears in the job spec).
set -euo pipefail

IMAGE=${IMAGE:-ghcr.io/agentfinder/agentfinder-skills:latest}
SOURCE=${SOURCE:-https://github.com/huggingface/skills.git}
BUCKET=${BUCKET:-hf://buckets/agentfinder/skills-index}
STORE=${STORE:-/data/index}
SCHEDULE=${SCHEDULE:-@daily}
TIMEOUT=${TIMEOUT:-2h}
FLAVOR=${FLAVOR:-cpu-upgrade}

common=(--flavor "$FLAVOR" --timeout "$TIMEOUT")
if [[ "$STORE" == s3://* ]]; then
  # Credentials as secrets, read from this shell's environment by name.
  common+=(--secrets AWS_ACCESS_KEY_ID --secrets AWS_SECRET_ACCESS_KEY -e "AWS_ENDPOINT=${AWS_ENDPOINT:?set AWS_ENDPOINT}" -e AWS_REGION="${AWS_REGION:-us-east-1}")
else
  common+=(-v "$BUCKET:/data:rw")
fi
if [[ -n "${MEILI_URL:-}" ]]; then
  common+=(--secrets MEILI_MASTER_KEY -e "MEILI_URL=$MEILI_URL")
fi

case "${1:-}" in
  schedule)
    hf jobs scheduled run "${common[@]}" --no-concurrency --name agentfinder-skills-daily \
      "$SCHEDULE" "$IMAGE" \
      agentfinder-skills build --config /etc/agentfinder/pipeline.toml --log-format json --require-embed \
      --source "$SOURCE" --store "$STORE"
    ;;
  run)
    hf jobs run "${common[@]}" --name agentfinder-skills-manual "$IMAGE" \
      agentfinder-skills build --config /etc/agentfinder/pipeline.toml --log-format json --require-embed \
      --source "$SOURCE" --store "$STORE"
    ;;
  backfill)
    shard="${2:?shard number I}/${3:?shard count N}"
    hf jobs run "${common[@]}" --name "agentfinder-skills-backfill-${2}-of-${3}" "$IMAGE" \
      agentfinder-skills backfill --config /etc/agentfinder/pipeline.toml --log-format json --require-embed \
      --source "$SOURCE" --store "$STORE" --shard "$shard"
    ;;
  embed)
    shard="${2:?shard number I}/${3:?shard count N}"
    hf jobs run "${common[@]}" --name "agentfinder-skills-embed-${2}-of-${3}" "$IMAGE" \
      agentfinder-skills build --config /etc/agentfinder/pipeline.toml --log-format json \
      --source "$SOURCE" --store "$STORE" --embed-shard "$shard"
    ;;
  *)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
