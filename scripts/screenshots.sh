#!/usr/bin/env bash
# `npm run screenshots`: regenerates docs/images/traffic-panel.png, terminal-live-view.png and doctor.png
# from a real session (scripts/screenshots.ts says how). The tools are the real-VS-Code test tier's
# (code-server and a headless Chromium, installed once per machine by scripts/setup-code-server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
setup_status=0
tools_env="$(bash scripts/setup-code-server.sh)" || setup_status=$?
if [ "$setup_status" -eq 3 ]; then
  echo "screenshots: the tools cannot be had here: $tools_env (see test/vscode/README.md)" >&2
  exit 1
fi
[ "$setup_status" -eq 0 ] || exit "$setup_status"
eval "$tools_env"
exec node --import tsx scripts/screenshots.ts "$@"
