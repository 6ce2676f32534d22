#!/usr/bin/env bash
# The README's main job: embedded server, superhero, questions, a separation, a tournament.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/demo.py
