#!/usr/bin/env bash
# The test command of README.md and CI: make sure the set-up is in place, then run the
# default test suite (slow tests are excluded by pyproject's addopts; run them with
# `scripts/test.sh -m slow`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
