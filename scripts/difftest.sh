#!/usr/bin/env bash
# Runs the differential corpus (test/diff/corpus/*.sql) against a fresh
# miraj-server and a private MariaDB 10.11, both started on free ports of
# 127.0.0.1, and writes the report (docs/difftest.md says how to read it).
#
#   scripts/difftest.sh                      the whole corpus, report in difftest-report.txt
#   scripts/difftest.sh 'corpus/nulls.sql'   some files (a glob relative to test/diff)
#
# Settings (environment): MIRAJ_DIFF_REPORT (the report's path),
# MIRAJ_DIFF_PROPOSE (write list entries for unexpected differences),
# MIRAJ_DIFF_SERVER (a miraj-server binary to run instead of building one),
# MIRAJ_DIFF_KEEP=1 (keep the servers' data and logs).
# It needs mariadb-server (scripts/install-test-clients.sh installs it) and
# fails without it.
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRAJ_REQUIRE_MARIADB=1
export MIRAJ_DIFF_REPORT=${MIRAJ_DIFF_REPORT:-$PWD/difftest-report.txt}
if [ $# -gt 0 ]; then
	export MIRAJ_DIFF_FILES=$1
fi
status=0
go test -count=1 -timeout 10m -run '^TestDifferential$' ./test/diff || status=$?
head -n 2 "$MIRAJ_DIFF_REPORT" 2>/dev/null || true
echo "report: $MIRAJ_DIFF_REPORT"
exit $status
