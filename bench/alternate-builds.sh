#!/usr/bin/env bash
# Two builds compared in one run: `npm run bench -- <suites>` in a checkout of each, alternated
# ROUNDS times (default 2), each run's summary printed, so that a shared machine's swings fall on
# both alike. Each checkout must be installed and built (`npm install`), e.g. made with
# `git worktree add ../before <commit>`.
#
#   bench/alternate-builds.sh ../before ../after results heavy package
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 <before-dir> <after-dir> <suite>..." >&2
  exit 2
fi
before=$1 after=$2
shift 2
for round in $(seq 1 "${ROUNDS:-2}"); do
  for dir in "$before" "$after"; do
    echo "=== round $round: $dir ($(git -C "$dir" rev-parse --short HEAD)) ==="
    (cd "$dir" && node --import tsx bench/run.ts "$@" 2>&1 | sed -n '/== summary ==/,$p')
  done
done
