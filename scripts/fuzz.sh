#!/bin/sh
# Long fuzzing run: schemathesis against a live `hookline serve`, every /v1 operation, every phase.
#   scripts/fuzz.sh [EXAMPLES_PER_OPERATION]   (default 500)
set -eu
cd "$(dirname "$0")/.."
exec .venv/bin/python -m tests.api.fuzz "${1:-500}"
