#!/usr/bin/env bash
# The project's test command: vet, every package's tests (unit tests, system
# tests with real server processes), go-mysql-server's engine suites against
# our backend (with their pass count), then a short run of each fuzz target.
# Each stage prints its elapsed time; the total comes last.
#
# The fast tier alone (no system tests, no engine suites, no corpora; under
# two minutes): scripts/test.sh --short, or go test -short ./...
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
# stage NAME COMMAND…: runs COMMAND and prints how long it took.
stage() {
	local name=$1 t0=$SECONDS
	shift
	echo "=== stage $name"
	"$@"
	echo "=== stage $name: $((SECONDS - t0))s"
}

if [[ ${1:-} == --short ]]; then
	stage vet go vet ./...
	stage fast-tests go test -count=1 -short ./...
	echo "=== total: $((SECONDS - started))s"
	exit 0
fi

stage vet go vet ./...
stage tests go test -count=1 -timeout 30m -skip '^TestEngine$' ./...
# The replication core under the race detector.
stage race go test -count=1 -race ./internal/repl/... ./internal/storage/... ./internal/journal/... ./internal/history/... ./internal/sim/...
# The cluster simulator: safety and liveness checkers over 300 seeds
# (10,000: go run ./cmd/miraj-sim --seeds 10000).
stage simulator go run ./cmd/miraj-sim --seeds 300
if command -v jq >/dev/null 2>&1; then
	stage engine-suites scripts/enginetest-count.sh
else
	echo "(jq not installed: running the engine suites without their count)"
	stage engine-suites go test -count=1 -run '^TestEngine$' ./internal/sqlserver/
fi
stage fuzz scripts/fuzz-short.sh
echo "=== total: $((SECONDS - started))s"
