#!/usr/bin/env bash
# Runs every fuzz target (decoders of bytes that come from outside) for a short time each
# (FUZZTIME, 10s by default). Used by CI; run locally before a change to a
# decoder. Go runs one fuzz target per invocation, hence the loop.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
# One worker per target keeps the machine usable for other work.
PARALLEL="${FUZZ_PARALLEL:-1}"

targets=(
	"./internal/config FuzzParse"
	"./internal/transport FuzzReadFrame"
	"./internal/transport FuzzDecodeHello"
	"./internal/transport FuzzCheckFileName"
	"./internal/epoch FuzzCheck"
	"./internal/journal FuzzDecodeFrame"
	"./internal/repl FuzzDecodeSubscribe"
)

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg, $FUZZTIME)"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -parallel "$PARALLEL"
done
