#!/usr/bin/env bash
# binlog-replica.sh compares the apply rate of Miraj as the replica of a
# MariaDB source (§17.13.4, docs/binlog-replica.md) with a MariaDB replica
# (one SQL thread) on the same stream, in the same run: sysbench
# oltp_write_only writes a backlog on the source with no replica attached,
# then each replica in turn starts from the empty position and applies the
# whole backlog; the time to catch up gives groups per second. One replica
# runs at a time, so they do not share the cores.
#
# Every knob is an environment variable:
#   BENCH_TIME=30            seconds of sysbench on the source (the backlog)
#   BENCH_TABLES=4           sysbench tables
#   BENCH_ROWS=10000         rows per table
#   BENCH_THREADS=4          sysbench threads
#   BENCH_CATCHUP_TIMEOUT=1800  seconds a replica may take to apply the backlog
#   BENCH_OUT=bench/results/binlog-replica-latest.md   markdown results
#   BENCH_KEEP_WORK=0        1 keeps the temp dir (logs)
#   BENCH_PPROF=0            1 writes a CPU profile of Miraj's catch-up (10 s)
#                            to BENCH_PPROF_DIR (default /tmp/miraj-replica-pprof)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_TIME=${BENCH_TIME:-30}
BENCH_TABLES=${BENCH_TABLES:-4}
BENCH_ROWS=${BENCH_ROWS:-10000}
BENCH_THREADS=${BENCH_THREADS:-4}
BENCH_CATCHUP_TIMEOUT=${BENCH_CATCHUP_TIMEOUT:-1800}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/binlog-replica-latest.md}

# The source's server_id: Miraj's is 1, the MariaDB replica's 2.
SOURCE_ID=3

# var_of PORT NAME prints a global variable of a server.
var_of() { sql "$1" -N -B -e "SELECT @@$2"; }

# groups_in POS sums the sequence numbers of a GTID list (one domain here:
# the number of groups the source wrote).
groups_in() { awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, g, "-"); n += g[3] } print n }' <<<"$1"; }

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	bench_init miraj-binlog-replica
	mkdir -p "$(dirname "$BENCH_OUT")"
	log "building miraj-server"
	MIRAJ_BUILT="$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)')"
	(cd "$REPO" && go build -o "$WORK/miraj-server" ./cmd/miraj-server)

	start_private_mariadb source --innodb-flush-log-at-trx-commit=1 --server-id=$SOURCE_ID \
		--log-bin=mariadb-bin --binlog-format=ROW --sync-binlog=1
	SRC=$MARIADB_PORT
	sql "$SRC" -e "CREATE USER repl@'%' IDENTIFIED BY 'replpw'; GRANT REPLICATION SLAVE ON *.* TO repl@'%'"
	prepare_db "$SRC" sbtest "$BENCH_TABLES" "$BENCH_ROWS" "$BENCH_THREADS"
	sb "$SRC" sbtest
	log "sysbench oltp_write_only on the source for ${BENCH_TIME}s (the backlog)"
	sysbench oltp_write_only "${SB[@]}" --tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" \
		--threads="$BENCH_THREADS" --time="$BENCH_TIME" --report-interval=0 run >"$WORK/sysbench.log" 2>&1 ||
		die "sysbench run failed: $(tail -n 5 "$WORK/sysbench.log")"
	sysbench_stats "$WORK/sysbench.log"
	POS=$(var_of "$SRC" gtid_binlog_pos)
	BACKLOG_GROUPS=$(groups_in "$POS")
	log "backlog: $BACKLOG_GROUPS groups, source at $POS (sysbench $SB_TPS tps)"

	# Miraj.
	local pprof_port="" prof_pid=""
	if [[ ${BENCH_PPROF:-0} == 1 ]]; then
		free_port pprof_port
		start_miraj miraj-replica --pprof "127.0.0.1:$pprof_port"
	else
		start_miraj miraj-replica
	fi
	local mp=$MIRAJ_PORT t0 t1
	t0=$(date +%s.%N)
	sql "$mp" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$SRC, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos; START SLAVE"
	if [[ -n $pprof_port ]]; then
		local pdir=${BENCH_PPROF_DIR:-/tmp/miraj-replica-pprof}
		mkdir -p "$pdir"
		curl -s -o "$pdir/cpu.pprof" "http://127.0.0.1:$pprof_port/debug/pprof/profile?seconds=10" &
		prof_pid=$!
	fi
	r=$(sql "$mp" -N -B -e "SELECT MASTER_GTID_WAIT('$POS', $BENCH_CATCHUP_TIMEOUT)")
	t1=$(date +%s.%N)
	[[ $r == 0 ]] || die "Miraj did not catch up: $(sql "$mp" -e 'SHOW SLAVE STATUS\G' | grep -E 'Running|Error')"
	MIRAJ_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	MIRAJ_RATE=$(awk -v n="$BACKLOG_GROUPS" -v s="$MIRAJ_SECS" 'BEGIN { printf "%.0f", n / s }')
	log "Miraj applied $BACKLOG_GROUPS groups in ${MIRAJ_SECS}s: $MIRAJ_RATE groups/s"
	[[ -z $prof_pid ]] || { wait "$prof_pid"; log "CPU profile: ${BENCH_PPROF_DIR:-/tmp/miraj-replica-pprof}/cpu.pprof"; }
	stop_pid "$MIRAJ_PID"

	# MariaDB, one SQL thread.
	start_private_mariadb mariadb-replica --innodb-flush-log-at-trx-commit=1 --server-id=2 \
		--skip-log-bin --relay-log=relay-bin --skip-slave-start --slave-parallel-threads=0
	local rp=$MARIADB_PORT
	t0=$(date +%s.%N)
	sql "$rp" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$SRC, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos; START SLAVE"
	r=$(sql "$rp" -N -B -e "SELECT MASTER_GTID_WAIT('$POS', $BENCH_CATCHUP_TIMEOUT)")
	t1=$(date +%s.%N)
	[[ $r == 0 ]] || die "the MariaDB replica did not catch up"
	MDB_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	MDB_RATE=$(awk -v n="$BACKLOG_GROUPS" -v s="$MDB_SECS" 'BEGIN { printf "%.0f", n / s }')
	log "MariaDB applied $BACKLOG_GROUPS groups in ${MDB_SECS}s: $MDB_RATE groups/s"
	RATIO=$(awk -v a="$MIRAJ_RATE" -v b="$MDB_RATE" 'BEGIN { printf "%.2f", a / b }')
	log "Miraj / MariaDB: ${RATIO}×"

	{
		echo "# Binary log replica: apply rate, Miraj vs MariaDB"
		echo
		echo "Run $(date -u +%Y-%m-%dT%H:%MZ), miraj-server $MIRAJ_BUILT, $(mariadbd --version | awk '{print $3}'), $(nproc) cores."
		echo "Backlog: sysbench oltp_write_only, ${BENCH_TIME}s, $BENCH_TABLES tables × $BENCH_ROWS rows, $BENCH_THREADS threads: $BACKLOG_GROUPS groups."
		echo
		echo "| replica | catch-up (s) | groups/s |"
		echo "| --- | ---: | ---: |"
		echo "| Miraj (internal session, one transaction per group) | $MIRAJ_SECS | $MIRAJ_RATE |"
		echo "| MariaDB (one SQL thread, relay log) | $MDB_SECS | $MDB_RATE |"
		echo
		echo "Miraj / MariaDB: **${RATIO}×** (groups/s). Row events are applied by storage writes"
		echo "(docs/binlog-replica.md, \"How rows are applied\"); the run is noisy on a shared machine:"
		echo "repeat it and compare the ratios."
	} >"$BENCH_OUT"
	log "results in $BENCH_OUT"
}

main "$@"
