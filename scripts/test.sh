#!/usr/bin/env bash
# The project's test command: vet, every package's tests (unit, engine
# suites, system tests with real server processes), then a short run of each
# fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

go vet ./...
go test -count=1 -timeout 30m ./...
if [ -x scripts/fuzz-short.sh ]; then
	scripts/fuzz-short.sh
fi
