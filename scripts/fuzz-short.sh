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
	"./internal/sqlserver FuzzCheckHandshakeResponse"
	"./internal/binlog FuzzOpenFile"
	"./internal/sqlserver FuzzParseRegisterSlave"
)

# count_inputs prints how many saved inputs a fuzz target's corpus holds.
count_inputs() {
	if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi
}

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg, $FUZZTIME)"
	corpus="$pkg/testdata/fuzz/$name"
	before=$(count_inputs "$corpus")
	out=$(mktemp)
	if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -parallel "$PARALLEL" 2>&1 | tee "$out"; then
		after=$(count_inputs "$corpus")
		# Go's fuzzer can end with "context deadline exceeded" when the time
		# runs out while it minimizes a new input; a real failure always
		# writes the failing input to testdata/fuzz.
		if [ "$after" -eq "$before" ] && grep -q "context deadline exceeded" "$out"; then
			echo "($name: time ran out during minimization, no failing input: not a failure)"
		else
			rm -f "$out"
			exit 1
		fi
	fi
	rm -f "$out"
done
