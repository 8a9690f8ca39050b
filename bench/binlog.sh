#!/usr/bin/env bash
# binlog.sh measures what the binary log (--log-bin, §17.13.1) adds to a
# commit: the same workloads on two fresh miraj-servers, one without and one
# with the log (--sync-binlog 0, CRC32), in alternating rounds, in one run.
# See bench/README.md for the machine to run it on (a quiet one: the numbers
# are differences of a few microseconds).
#
#   BENCH_BINLOG_ROUNDS=5        rounds; each measure's median is reported
#   BENCH_BINLOG_SECS=20         seconds of each single-row run
#   BENCH_BINLOG_ROWS=1000       rows of the seq table: the bulk insert makes its square
#   BENCH_OUT=bench/results/binlog-latest.md   markdown results file
#   BENCH_KEEP_WORK=0            1 keeps the temp dir (server logs)
#
# Measures, each on a fresh database per round:
#   single  sysbench oltp_insert, 1 thread: autocommit single-row INSERTs;
#           reported as µs per transaction (1e6 / tps)
#   bulk    INSERT INTO big SELECT … FROM seq a CROSS JOIN seq b (ROWS² rows),
#           one transaction; reported as µs per row
# The spec's figures (§17.13.1, measured on the embedded engine): +15 to
# 25 µs per single-row transaction, about 1 µs per row of a bulk write.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_BINLOG_ROUNDS=${BENCH_BINLOG_ROUNDS:-5}
BENCH_BINLOG_SECS=${BENCH_BINLOG_SECS:-20}
BENCH_BINLOG_ROWS=${BENCH_BINLOG_ROWS:-1000}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/binlog-latest.md}

# single NAME PORT R runs oltp_insert and appends µs per transaction.
single() {
	local logf=$WORK/$1.single.$3.log
	sql "$2" -e "DROP DATABASE IF EXISTS sb; CREATE DATABASE sb"
	sb "$2" sb
	sysbench oltp_insert "${SB[@]}" --tables=1 --table-size=0 prepare >"$logf" 2>&1
	timeout $((BENCH_BINLOG_SECS + 60)) sysbench oltp_insert "${SB[@]}" --tables=1 --threads=1 \
		--time="$BENCH_BINLOG_SECS" --report-interval=0 run >>"$logf" 2>&1
	sysbench_stats "$logf"
	awk -v t="$SB_TPS" 'BEGIN { if (t > 0) printf "%.2f\n", 1e6 / t }' >>"$WORK/times/$1.single"
	log "round $3 $1 single: $(tail -n 1 "$WORK/times/$1.single") µs/txn"
}

# bulk NAME PORT R times the bulk insert and appends µs per row.
bulk() {
	local last=$((BENCH_BINLOG_ROWS - 1)) rows=$((BENCH_BINLOG_ROWS * BENCH_BINLOG_ROWS)) t0 t1
	sql "$2" -e "DROP DATABASE IF EXISTS bulk; CREATE DATABASE bulk"
	sql "$2" bulk -e "CREATE TABLE seq (n INT PRIMARY KEY);
		INSERT INTO seq WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < $last) SELECT n FROM s;
		CREATE TABLE big (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(60) NOT NULL)"
	t0=$(date +%s.%N)
	sql "$2" bulk -e "INSERT INTO big SELECT a.n * $BENCH_BINLOG_ROWS + b.n, b.n, CONCAT('c-', a.n, '-', b.n) FROM seq a CROSS JOIN seq b"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v n="$rows" 'BEGIN { printf "%.3f\n", (b - a) * 1e6 / n }' >>"$WORK/times/$1.bulk"
	log "round $3 $1 bulk: $(tail -n 1 "$WORK/times/$1.bulk") µs/row"
}

median() { percentile 50 "$1"; }

report() {
	local m off on
	{
		echo "# Binary log: commit cost, log off vs on"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)'), --save-policy commit; on: --log-bin --sync-binlog 0 (CRC32)"
		echo "- $BENCH_BINLOG_ROUNDS rounds, off and on alternating; medians. single: sysbench oltp_insert, 1 thread, ${BENCH_BINLOG_SECS}s; bulk: $((BENCH_BINLOG_ROWS * BENCH_BINLOG_ROWS)) rows in one INSERT … SELECT"
		echo "- machine: $(nproc) CPUs; load average at start $LOAD_AT_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "- binary log written by the on server: $(du -sh "$WORK/on/data"/miraj-bin.*.mrb 2>/dev/null | awk '{ s = s $1 " " } END { print s }')"
		echo
		echo "| measure | log off | log on | difference | on / off |"
		echo "|---|--:|--:|--:|--:|"
		for m in single bulk; do
			off=$(median "$WORK/times/off.$m")
			on=$(median "$WORK/times/on.$m")
			echo "| $m ($([[ $m == single ]] && echo µs/txn || echo µs/row)) | $off | $on | $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%+.3f", a - b }') | $(ratio "$on" "$off")× |"
		done
	} | tee "$1"
}

main() {
	ensure_packages mariadb sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-binlog
	mkdir -p "$WORK/times" "$(dirname "$BENCH_OUT")"
	log "building miraj-server"
	(cd "$REPO" && go build -o "$WORK/miraj-server" ./cmd/miraj-server)
	start_miraj off
	local off_port=$MIRAJ_PORT
	start_miraj on --log-bin --server-id 1 --sync-binlog 0
	local on_port=$MIRAJ_PORT
	local r
	for ((r = 1; r <= BENCH_BINLOG_ROUNDS; r++)); do
		single off "$off_port" "$r"
		single on "$on_port" "$r"
		bulk off "$off_port" "$r"
		bulk on "$on_port" "$r"
	done
	report "$BENCH_OUT"
}

main "$@"
