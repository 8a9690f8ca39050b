#!/bin/sh
# Runs go-mysql-server's enginetest suites against our backend
# (internal/sqlserver/enginetest_test.go) and prints how many suites ran and
# how many subtests passed, failed and were skipped. Leaf subtests only: a
# suite or a script that holds assertions is not counted itself.
#
#   scripts/enginetest-count.sh              # every suite
#   scripts/enginetest-count.sh '^Queries$'  # suites matching a pattern
#
# Needs jq. Exit status: that of go test.
set -u
cd "$(dirname "$0")/.."
pattern=${1:-.}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -count=1 -json -run "TestEngine/$pattern" ./internal/sqlserver/ >"$out"
status=$?
jq -rs '
  [ .[] | select(.Test != null and (.Action == "pass" or .Action == "fail" or .Action == "skip")) ] as $ev
  | (reduce ($ev[] | .Test | split("/")[:-1] | join("/")) as $p ({}; .[$p] = true)) as $parents
  | ($ev | map(select((.Test | split("/") | length) == 2))) as $suites
  | ($ev | map(select((.Test | split("/") | length) > 2 and ($parents[.Test] | not)))) as $leaves
  | ($suites | map(select(.Action != "skip" or $parents[.Test]))) as $ran
  | ($suites | map(select(.Action == "fail")) | map(.Test | ltrimstr("TestEngine/"))) as $failedSuites
  | "enginetest: suites=\($ran | length) (skipped whole: \($suites | length - ($ran | length)))"
    + " subtests passed=\($leaves | map(select(.Action == "pass")) | length)"
    + " failed=\($leaves | map(select(.Action == "fail")) | length)"
    + " skipped=\($leaves | map(select(.Action == "skip")) | length)"
    + (if ($failedSuites | length) > 0 then "\nsuites with failures: \($failedSuites | join(" "))" else "" end)
' "$out"
exit $status
