#!/usr/bin/env bash
# The project's test command: vet, every package's tests (unit tests, system
# tests with real server processes), go-mysql-server's engine suites against
# our backend (with their pass count), then a short run of each fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

go vet ./...
go test -count=1 -timeout 30m -skip '^TestEngine$' ./...
# The replication core under the race detector.
go test -count=1 -race ./internal/repl/... ./internal/storage/... ./internal/journal/... ./internal/history/... ./internal/sim/...
# The cluster simulator: safety and liveness checkers over 300 seeds
# (10,000: go run ./cmd/miraj-sim --seeds 10000).
go run ./cmd/miraj-sim --seeds 300
if command -v jq >/dev/null 2>&1; then
	scripts/enginetest-count.sh
else
	echo "(jq not installed: running the engine suites without their count)"
	go test -count=1 -run '^TestEngine$' ./internal/sqlserver/
fi
scripts/fuzz-short.sh
