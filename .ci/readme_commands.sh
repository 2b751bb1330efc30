#!/usr/bin/env bash
# Prints the README's first ```sh block: the two commands a newcomer runs on a fresh machine.
# CI runs exactly these lines, so the README cannot promise what CI does not check.
set -euo pipefail
awk '/^```sh$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' "${1:-README.md}"
