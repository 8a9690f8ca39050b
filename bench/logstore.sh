#!/usr/bin/env bash
# logstore.sh measures what a log-store node costs against a full secondary,
# in one run on this machine: n1 primary, n2 a full secondary, n3 a
# log-store node (kind = "log-store"); sysbench oltp_write_only on n1 for
# BENCH_TIME seconds over a loaded table; per node, CPU time per committed
# transaction, resident memory at the end and bytes on disk. Then the
# latency figure: RECEIVED commits with the log store as the semi-sync
# partner vs with a far secondary (20 ms each way) as the partner
# (test/system TestLogStoreLatency). Results in BENCH_OUT.
#
#   BENCH_TIME=60          seconds of load
#   BENCH_TABLES=1         tables
#   BENCH_ROWS=1000000     rows per table
#   BENCH_THREADS=4        sysbench threads
#   BENCH_LATENCY=1        0 skips the latency figure
#   BENCH_OUT=bench/results/logstore-latest.md
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_TIME=${BENCH_TIME:-60}
BENCH_TABLES=${BENCH_TABLES:-1}
BENCH_ROWS=${BENCH_ROWS:-1000000}
BENCH_THREADS=${BENCH_THREADS:-4}
BENCH_LATENCY=${BENCH_LATENCY:-1}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/logstore-latest.md}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
disk_mib() { du -sm "$1" 2>/dev/null | awk '{ print $1 }'; }
# heap_mib ID: the Go heap in use of a node (its /metrics, the runtime.s
# count): RSS also holds pages the runtime has not returned to the system.
heap_mib() {
	curl -s "http://127.0.0.1:${HPORT[$1]}/metrics" | awk '$1 == "go_memstats_heap_inuse_bytes" { printf "%.0f", $2 / 1048576 }'
}

main() {
	ensure_packages sysbench mariadb
	bench_init miraj-bench-logstore
	mkdir -p "$WORK/bin" "$(dirname "$BENCH_OUT")"
	log "building miraj-server and miraj-cluster-pki"
	(cd "$REPO" && go build -o "$WORK/bin/" ./cmd/miraj-server ./cmd/miraj-cluster-pki)
	make_cluster n1 n2 n3
	sed -i "s/^advertise = .*/&\nkind = \"log-store\"/" "$WORK/n3/cluster.toml"
	declare -gA HPORT
	local id
	for id in n1 n2 n3; do free_port "HPORT[$id]"; done
	start_node n1 --http "127.0.0.1:${HPORT[n1]}"
	designate_primary
	start_node n2 --http "127.0.0.1:${HPORT[n2]}"
	start_node n3 --http "127.0.0.1:${HPORT[n3]}"
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows"
	prepare_db "${CPORT[n1]}" sbtest "$BENCH_TABLES" "$BENCH_ROWS" 2
	wait_until 600 miraj_caught_up sbtest n2 || die "n2 did not catch up after the load"
	sleep 5
	local t0=() t1=() logf=$WORK/sysbench.log
	for id in n1 n2 n3; do t0+=("$(cpu_ticks "${NPID[$id]}")"); done
	sb "${CPORT[n1]}" sbtest
	log "oltp_write_only, $BENCH_THREADS threads, ${BENCH_TIME}s"
	waited "$logf" sysbench oltp_write_only "${SB[@]}" --tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" \
		--threads="$BENCH_THREADS" --time="$BENCH_TIME" --report-interval=0 run || die "sysbench failed: $(tail -n 5 "$logf")"
	wait_until 300 miraj_caught_up sbtest n2 || note "n2 had not caught up 300 s after the load"
	sleep 2
	for id in n1 n2 n3; do t1+=("$(cpu_ticks "${NPID[$id]}")"); done
	sleep 10 # the runtime's GC cycles after the load
	sysbench_stats "$logf"
	local txns=$SB_TXNS hz
	hz=$(getconf CLK_TCK)
	{
		echo "# Log-store node vs full secondary ($(date -u +%Y-%m-%d), $(git -C "$REPO" rev-parse --short HEAD))"
		echo
		echo "oltp_write_only on n1, $BENCH_THREADS threads, ${BENCH_TIME}s, ${BENCH_TABLES}x${BENCH_ROWS} rows: $SB_TPS tps, $txns transactions."
		echo
		echo "| node | kind | CPU per committed transaction | Go heap in use | resident memory (VmRSS) | peak (VmHWM) | data directory on disk |"
		echo "|---|---|--:|--:|--:|--:|--:|"
		local i=0 kind
		for id in n1 n2 n3; do
			kind=primary
			[[ $id == n2 ]] && kind="full secondary"
			[[ $id == n3 ]] && kind="log-store node"
			echo "| $id | $kind | $(awk -v a="${t0[i]}" -v b="${t1[i]}" -v hz="$hz" -v n="$txns" 'BEGIN { printf "%.3f ms", (b - a) / hz * 1000 / n }') | $(heap_mib "$id") MiB | $(mib_of "${NPID[$id]}" VmRSS) MiB | $(mib_of "${NPID[$id]}" VmHWM) MiB | $(disk_mib "$WORK/data-$id") MiB |"
			i=$((i + 1))
		done
		echo
		echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	} >"$BENCH_OUT"
	for id in n3 n2 n1; do stop_node "$id"; done
	if [[ $BENCH_LATENCY == 1 ]]; then
		log "latency: RECEIVED with the log store vs a far secondary as the partner"
		(cd "$REPO" && MIRAJ_LOGSTORE_LATENCY=1 go test -count=1 -run '^TestLogStoreLatency$' -v ./test/system/) >"$WORK/latency.log" 2>&1 ||
			die "TestLogStoreLatency failed: $(tail -n 20 "$WORK/latency.log")"
		{
			echo
			echo "## RECEIVED commit latency (one session, single-row INSERT)"
			echo
			echo '```'
			grep -E 'one-way delay|p50' "$WORK/latency.log" | sed 's/^ *logstore_test.go:[0-9]*: //'
			echo '```'
		} >>"$BENCH_OUT"
	fi
	cat "$BENCH_OUT"
}

main "$@"
