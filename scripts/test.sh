#!/usr/bin/env bash
# ember's test command: set-up (system packages, venv, configure, build), then the whole suite.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/scripts/setup.sh"
cd "${EMBER_BUILD:-$here/build}"
ctest --output-on-failure -j "${EMBER_TEST_JOBS:-2}" "$@"
