#!/usr/bin/env bash
# Runs the sqllogictest corpus against a fresh miraj-server started on a free
# port of 127.0.0.1 and writes the report (docs/sqllogictest.md says how to
# read it). Exit status 1 on a failure that test/slt/known.txt does not list.
#
#   scripts/slt.sh                        select1-5.test and evidence/ (vendored), no time budget
#   MIRAJ_SLT_DIR=~/sqllogictest/test scripts/slt.sh
#                                         the same, then random/ and index/ of that checkout
#   scripts/slt.sh 'select5.test random/expr'
#                                         some files: globs or directories, relative to
#                                         test/slt/corpus (random/… and index/…: to MIRAJ_SLT_DIR)
#
# Settings (environment): MIRAJ_SLT_REPORT (the report's path, default
# slt-report.txt), MIRAJ_SLT_TIMEOUT (each record's timeout, default 20s),
# MIRAJ_SLT_FILE_BUDGET (each file's time budget, default none),
# MIRAJ_SLT_SERVER (a miraj-server binary to run instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRAJ_SLT_FULL=1
export MIRAJ_SLT_REPORT=${MIRAJ_SLT_REPORT:-$PWD/slt-report.txt}
if [ -n "${MIRAJ_SLT_DIR:-}" ]; then
	MIRAJ_SLT_DIR=$(cd "$MIRAJ_SLT_DIR" && pwd)
	if [ -d "$MIRAJ_SLT_DIR/test/random" ]; then
		MIRAJ_SLT_DIR=$MIRAJ_SLT_DIR/test # the checkout's root was given
	fi
	export MIRAJ_SLT_DIR
fi
if [ $# -gt 0 ]; then
	export MIRAJ_SLT_FILES=$1
fi
# -v streams one line per file as it ends; the report has the rest.
set +e
go test -count=1 -timeout 0 -v -run '^TestSQLLogic$' ./test/slt | grep --line-buffered -E 'slt_test.go:[0-9]+: \S+\.test |^(--- |FAIL|ok|PASS)'
status=${PIPESTATUS[0]}
set -e
head -n 2 "$MIRAJ_SLT_REPORT" 2>/dev/null || true
echo "report: $MIRAJ_SLT_REPORT"
exit "$status"
