#!/usr/bin/env bash
# sysbench.sh compares Miraj with a private MariaDB server under the standard
# sysbench OLTP workloads, on this machine, in one run. See bench/README.md.
#
# Every knob is an environment variable; the defaults are the full-size run.
#   BENCH_TIME=20                 seconds per server and cell, in two halves
#   BENCH_TABLES=10               tables loaded by oltp_common prepare
#   BENCH_ROWS=10000              rows per table
#   BENCH_THREADS="1 4 16"        client thread counts
#   BENCH_WORKLOADS="oltp_point_select oltp_read_only oltp_write_only oltp_read_write
#     oltp_insert oltp_update_index oltp_update_non_index oltp_delete select_random_ranges"
#   BENCH_OUT=bench/results/latest.md   markdown results file
#   BENCH_MEM=1                   0 skips the peak-memory step
#   BENCH_MEM_ROWS=1000000        rows loaded into one table for the memory step
#   BENCH_MEM_MARIADB=1           0 skips MariaDB in the memory step
#   BENCH_PROFILE=0               1 records a perf CPU profile of miraj-server
#   BENCH_PROFILE_WORKLOAD=oltp_read_write  workload run under perf
#   BENCH_PROFILE_THREADS=4       threads of that run
#   BENCH_PROFILE_DIR=bench/results/profile  where perf.data and the report go
#   BENCH_MARIADB_BUFFER_POOL=1G  innodb_buffer_pool_size of the private MariaDB
#   BENCH_KEEP_WORK=0             1 keeps the temp dir (server logs, sysbench logs)
#   BENCH_MIRAJ_ARGS=""           more miraj-server options (e.g. "--http 127.0.0.1:0"
#                                 to measure the metrics' cost)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_TIME=${BENCH_TIME:-20}
BENCH_TABLES=${BENCH_TABLES:-10}
BENCH_ROWS=${BENCH_ROWS:-10000}
BENCH_THREADS=${BENCH_THREADS:-"1 4 16"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only oltp_read_write oltp_insert oltp_update_index oltp_update_non_index oltp_delete select_random_ranges"}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/latest.md}
BENCH_MEM=${BENCH_MEM:-1}
BENCH_MEM_ROWS=${BENCH_MEM_ROWS:-1000000}
BENCH_MEM_MARIADB=${BENCH_MEM_MARIADB:-1}
BENCH_PROFILE=${BENCH_PROFILE:-0}
BENCH_PROFILE_WORKLOAD=${BENCH_PROFILE_WORKLOAD:-oltp_read_write}
BENCH_PROFILE_THREADS=${BENCH_PROFILE_THREADS:-4}
BENCH_PROFILE_DIR=${BENCH_PROFILE_DIR:-$REPO/bench/results/profile}
BENCH_MARIADB_BUFFER_POOL=${BENCH_MARIADB_BUFFER_POOL:-1G}

# A sysbench run that outlives its --time by this much is hung: it is killed.
readonly runGrace=120

# Targets: Miraj tps / MariaDB tps. Every workload at every thread count
# at least as fast as MariaDB; write-only at 4 threads half as fast again.
readonly targetPointSelect1=1.0 targetWriteOnly4=1.5 targetFloor=1.0

# ---------------------------------------------------------------- servers

# start_mariadb NAME starts a fresh private mariadbd in WORK/NAME, set up as
# the benchmark wants it (binlog off, durable commits, BENCH_MARIADB_BUFFER_POOL);
# sets MARIADB_PID and MARIADB_PORT.
start_mariadb() {
	start_private_mariadb "$1" --skip-log-bin --sync-binlog=0 --innodb-flush-log-at-trx-commit=1 \
		--innodb-buffer-pool-size="$BENCH_MARIADB_BUFFER_POOL"
}

# ---------------------------------------------------------------- sysbench

# prepare NAME PORT DB TABLES ROWS loads the sysbench tables and sets
# LOAD_SECS to the time it took.
prepare() {
	local name=$1 port=$2 db=$3 tables=$4 rows=$5 t0 logf=$WORK/prepare-$1-$3.log
	sql "$port" -e "CREATE DATABASE $db" || die "$name: CREATE DATABASE $db failed"
	sb "$port" "$db"
	t0=$(date +%s.%N)
	if ! waited "$logf" sysbench oltp_common "${SB[@]}" --tables="$tables" --table-size="$rows" prepare; then
		tail -n 20 "$logf" >&2
		die "$name: sysbench prepare failed (log: $logf)"
	fi
	LOAD_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

declare -A TPS P95 IGN CODES FATAL

# run_cell SERVER PORT PID WORKLOAD THREADS SECS PART runs sysbench for SECS
# seconds and adds the run to the cell's figures: tps (the mean of the
# parts, which last alike), p95 latency (the worst part's), ignored
# (retried) errors and any fatal error.
run_cell() {
	local srv=$1 port=$2 pid=$3 w=$4 t=$5 secs=$6 part=$7 key="$1|$4|$5"
	local logf=$WORK/logs/$srv-$w-$t-$part.log tps="" fatal=""
	log "$srv $w threads=$t (part $part)"
	if ! kill -0 "$pid" 2>/dev/null; then
		TPS[$key]="" FATAL[$key]="server not running"
		log "$srv is not running: skipped"
		return
	fi
	local rc=0
	sb "$port" sbtest
	waited "$logf" timeout $((secs + runGrace)) sysbench "$w" "${SB[@]}" \
		--tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" --threads="$t" --time="$secs" \
		--report-interval=0 --verbosity=5 run || rc=$?
	sysbench_stats "$logf"
	tps=$SB_TPS
	if ((rc != 0)) || [[ -z $tps ]]; then
		tps=""
		fatal=$(awk '/FATAL|ALERT|error/ && !/ignored errors/ && n++ < 3' "$logf" | tr '\n' ' ' | cut -c1-300)
		[[ -n $fatal ]] || fatal="sysbench exit status $rc"
		((rc == 124)) && fatal="timed out; $fatal"
		log "$srv $w threads=$t failed: $fatal"
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		local why
		why=$(awk '/panic|fatal|FATAL|ERROR/ && n++ < 2' "$WORK/$srv"/*.log 2>/dev/null | tr '\n' ' ' | cut -c1-300 || true)
		fatal="server died during the run: $why; $fatal"
		log "$srv died during $w threads=$t"
	fi
	if [[ $part == 1 ]]; then
		TPS[$key]=$tps P95[$key]=$SB_P95 IGN[$key]=$SB_IGN CODES[$key]=$SB_CODES FATAL[$key]=$fatal
		return
	fi
	if [[ -z ${TPS[$key]:-} || -z $tps ]]; then
		TPS[$key]=""
	else
		TPS[$key]=$(awk -v a="${TPS[$key]}" -v b="$tps" 'BEGIN { printf "%.2f", (a + b) / 2 }')
	fi
	P95[$key]=$(awk -v a="${P95[$key]:-0}" -v b="${SB_P95:-0}" 'BEGIN { print (a > b ? a : b) }')
	IGN[$key]=$((${IGN[$key]:-0} + ${SB_IGN:-0}))
	CODES[$key]=$(printf '%s,%s' "${CODES[$key]:-}" "$SB_CODES" | tr ',' '\n' | grep -v '^$' | sort -u | paste -sd, - || true)
	FATAL[$key]="${FATAL[$key]:-}${FATAL[$key]:+${fatal:+; }}$fatal"
}

# ---------------------------------------------------------------- report

# target_of WORKLOAD THREADS prints the minimum ratio asked of Miraj.
target_of() {
	case "$1/$2" in
	oltp_point_select/1) echo "$targetPointSelect1" ;;
	oltp_write_only/4) echo "$targetWriteOnly4" ;;
	*) echo "$targetFloor" ;;
	esac
}

# report writes the markdown results to BENCH_OUT and prints them.
report() {
	local out=$1 w t k m d r tg st
	{
		echo "# Miraj vs MariaDB, sysbench OLTP"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: ${MIRAJ_BUILT}, --save-policy commit"
		echo "- mariadb: $("$MARIADBD" --version | awk '{ print $3 }'), innodb_flush_log_at_trx_commit=1, binlog off, buffer pool $BENCH_MARIADB_BUFFER_POOL"
		echo "- $(sysbench --version): ${BENCH_TABLES} tables x ${BENCH_ROWS} rows, ${BENCH_TIME}s per server and cell (two halves: Miraj, MariaDB, MariaDB, Miraj), threads: ${BENCH_THREADS}"
		echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load average at start: ${LOAD_AT_START}"
		echo "- load time: Miraj ${LOAD_MIRAJ}s, MariaDB ${LOAD_MARIADB}s"
		echo
		echo "Figures are indicative: the machine may be shared with other work."
		echo
		printf '| %-17s | %7s | %10s | %11s | %6s | %11s | %12s | %-13s |\n' \
			workload threads "Miraj tps" "MariaDB tps" ratio "Miraj p95ms" "MariaDB p95ms" target
		printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s|\n' ------------------- -------- ----------- ------------ ------- ------------ ------------- ---------------
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				m=${TPS[miraj|$w|$t]:-} d=${TPS[mariadb|$w|$t]:-}
				r=$(ratio "$m" "$d" || true)
				tg=$(target_of "$w" "$t")
				if [[ -z $r ]]; then
					st="n/a"
				elif ge "$(exact_ratio "$m" "$d")" "$tg"; then
					st="met"
				else
					st="MISSED"
				fi
				printf '| %-17s | %7s | %10s | %11s | %6s | %11s | %12s | %-13s |\n' \
					"$w" "$t" "${m:-ERR}" "${d:-ERR}" "${r:+${r}x}" "${P95[miraj|$w|$t]:-}" \
					"${P95[mariadb|$w|$t]:-}" ">=${tg}x $st"
			done
		done
		echo
		echo "Targets:"
		echo
		summary_line "point select at 1 thread >= ${targetPointSelect1}x" oltp_point_select 1
		summary_line "write-only at 4 threads >= ${targetWriteOnly4}x" oltp_write_only 4
		floor_line
		echo
		echo "Errors (sysbench retries 1213 deadlocks, 1020 and 1205 and counts them as ignored errors):"
		echo
		echo "| server | workload | threads | ignored errors | codes | fatal error |"
		echo "|---|---|---:|---:|---|---|"
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				for k in miraj mariadb; do
					printf '| %s | %s | %s | %s | %s | %s |\n' "$k" "$w" "$t" "${IGN[$k|$w|$t]:-}" \
						"${CODES[$k|$w|$t]:-}" "$(printf '%s' "${FATAL[$k|$w|$t]:-}" | tr '|' '/')"
				done
			done
		done
		echo
		echo "Miraj RSS after the benchmark: VmHWM ${MIRAJ_BENCH_HWM_MB} MiB (${BENCH_TABLES}x${BENCH_ROWS} rows loaded); MariaDB VmHWM ${MARIADB_BENCH_HWM_MB} MiB."
		if [[ -n ${MEM_SECTION:-} ]]; then
			echo
			printf '%s\n' "$MEM_SECTION"
		fi
		if [[ -n ${PROFILE_SECTION:-} ]]; then
			echo
			printf '%s\n' "$PROFILE_SECTION"
		fi
	} >"$out"
	cat "$out"
}

summary_line() {
	local label=$1 w=$2 t=$3 r tg
	if [[ " $BENCH_WORKLOADS " != *" $w "* || " $BENCH_THREADS " != *" $t "* ]]; then
		echo "- $label: not run"
		return
	fi
	r=$(ratio "${TPS[miraj|$w|$t]:-}" "${TPS[mariadb|$w|$t]:-}" || true)
	tg=$(target_of "$w" "$t")
	if [[ -z $r ]]; then
		echo "- $label: n/a (a run failed)"
	elif ge "$(exact_ratio "${TPS[miraj|$w|$t]:-}" "${TPS[mariadb|$w|$t]:-}")" "$tg"; then
		echo "- $label: met (${r}x)"
	else
		echo "- $label: MISSED (${r}x)"
	fi
}

floor_line() {
	local w t r worst="" worstAt="" failed=0
	for w in $BENCH_WORKLOADS; do
		for t in $BENCH_THREADS; do
			r=$(exact_ratio "${TPS[miraj|$w|$t]:-}" "${TPS[mariadb|$w|$t]:-}" || true)
			if [[ -z $r ]]; then
				failed=1
				continue
			fi
			if [[ -z $worst ]] || ! ge "$r" "$worst"; then
				worst=$r worstAt="$w, threads=$t"
			fi
		done
	done
	local note="" shown
	((failed)) && note=", some runs failed"
	shown=$(awk -v r="$worst" 'BEGIN { printf "%.3f", r }')
	if [[ -z $worst ]]; then
		echo "- no workload below ${targetFloor}x: n/a (no complete pair)"
	elif ge "$worst" "$targetFloor"; then
		echo "- no workload below ${targetFloor}x: met (worst ${shown}x, $worstAt$note)"
	else
		echo "- no workload below ${targetFloor}x: MISSED (worst ${shown}x, $worstAt$note)"
	fi
}

# ---------------------------------------------------------------- memory

# mem_one KIND loads BENCH_MEM_ROWS rows into one table on a fresh server of
# KIND (miraj or mariadb) and appends a markdown row of its memory use to
# MEM_ROWS. It runs in the main shell so that cleanup knows its server.
MEM_ROWS=""
mem_one() {
	local kind=$1 pid port before hwm after secs disk
	if [[ $kind == miraj ]]; then
		start_miraj mem-miraj
		pid=$MIRAJ_PID port=$MIRAJ_PORT
	else
		start_mariadb mem-mariadb
		pid=$MARIADB_PID port=$MARIADB_PORT
	fi
	before=$(kib_of "$pid" VmRSS)
	log "$kind: loading $BENCH_MEM_ROWS rows for the memory step"
	prepare "$kind" "$port" sbmem 1 "$BENCH_MEM_ROWS"
	secs=$LOAD_SECS
	hwm=$(kib_of "$pid" VmHWM)
	after=$(kib_of "$pid" VmRSS)
	disk=$(du -sk "$WORK/mem-$kind/data" | awk '{ print $1 }')
	stop_pid "$pid"
	[[ -z $MEM_ROWS ]] || MEM_ROWS+=$'\n'
	MEM_ROWS+=$(awk -v k="$kind" -v b="$before" -v h="$hwm" -v a="$after" -v n="$BENCH_MEM_ROWS" -v s="$secs" -v d="$disk" 'BEGIN {
		printf "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s |", k, b/1024, a/1024, h/1024, (h-b)/1024*1e6/n, d/1024, s }')
}

mem_step() {
	mem_one miraj
	if [[ $BENCH_MEM_MARIADB == 1 ]]; then
		mem_one mariadb
	fi
	MEM_SECTION="Peak memory: ${BENCH_MEM_ROWS} rows loaded into one table by sysbench prepare on a fresh server.
RSS per 1M rows = (VmHWM after load - VmRSS before) scaled to 1,000,000 rows. MariaDB's figure
is bounded by its buffer pool (${BENCH_MARIADB_BUFFER_POOL}); Miraj keeps every row in memory.

| server | RSS before MiB | RSS after MiB | VmHWM MiB | MiB per 1M rows | data dir MiB | load s |
|---|---:|---:|---:|---:|---:|---:|
$MEM_ROWS"
}

# ---------------------------------------------------------------- profile

# perf_event prints a perf event that works here (cycles, else the cpu-clock
# software event that also works in VMs), or nothing.
perf_event() {
	local ev
	for ev in cycles cpu-clock; do
		if perf stat -x, -e "$ev" true 2>&1 >/dev/null | grep -q "[0-9],.*$ev"; then
			echo "$ev"
			return
		fi
	done
}

profile_step() {
	local dir=$BENCH_PROFILE_DIR ev
	if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
		if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
			log "installing linux-perf"
			DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf >/dev/null || true
		fi
	fi
	ev=""
	if command -v perf >/dev/null 2>&1 && perf version >/dev/null 2>&1; then ev=$(perf_event); fi
	if [[ -z $ev ]]; then
		PROFILE_SECTION="CPU profile: unavailable (perf missing or no usable perf event on this machine)."
		log "profiling unavailable"
		return
	fi
	mkdir -p "$dir"
	log "profiling miraj-server under $BENCH_PROFILE_WORKLOAD threads=$BENCH_PROFILE_THREADS (event $ev)"
	perf record -e "$ev" -F 999 -g -p "$MIRAJ_PID" -o "$dir/perf.data" -- sleep "$BENCH_TIME" \
		>"$dir/perf-record.log" 2>&1 &
	local perfPid=$!
	track_pid "$perfPid"
	sb "$MIRAJ_PORT" sbtest
	waited "$dir/sysbench.log" sysbench "$BENCH_PROFILE_WORKLOAD" "${SB[@]}" --tables="$BENCH_TABLES" \
		--table-size="$BENCH_ROWS" --threads="$BENCH_PROFILE_THREADS" --time="$BENCH_TIME" run || true
	wait "$perfPid" || true
	forget_pid "$perfPid"
	perf report -i "$dir/perf.data" --stdio --no-children --sort symbol --percent-limit 0.5 -g none \
		>"$dir/report.txt" 2>/dev/null || true
	perf report -i "$dir/perf.data" --stdio --children --sort symbol --percent-limit 2 -g none \
		>"$dir/report-children.txt" 2>/dev/null || true
	local shown=${dir#"$REPO"/}
	PROFILE_SECTION="CPU profile of miraj-server under $BENCH_PROFILE_WORKLOAD, threads=$BENCH_PROFILE_THREADS, event $ev
(separate run, not part of the table above): $shown/perf.data, self time in $shown/report.txt,
inclusive time in $shown/report-children.txt. Top self-time symbols:

\`\`\`
$(awk '!/^#/ && NF && n++ < 25 { sub(/ +- +- *$/, ""); print }' "$dir/report.txt")
\`\`\`"
}

# ---------------------------------------------------------------- main

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-bench
	mkdir -p "$WORK/logs" "$(dirname "$BENCH_OUT")"

	log "building miraj-server"
	# The commit the binary is built from, and whether the tree differs
	# from it then (not when the run ends: the tree may change meanwhile).
	MIRAJ_BUILT="$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)')"
	(cd "$REPO" && go build -o "$WORK/miraj-server" ./cmd/miraj-server)

	# shellcheck disable=SC2086 # BENCH_MIRAJ_ARGS: words on purpose
	start_miraj miraj ${BENCH_MIRAJ_ARGS:-}
	start_mariadb mariadb

	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into Miraj"
	prepare miraj "$MIRAJ_PORT" sbtest "$BENCH_TABLES" "$BENCH_ROWS"
	LOAD_MIRAJ=$LOAD_SECS
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into MariaDB"
	prepare mariadb "$MARIADB_PORT" sbtest "$BENCH_TABLES" "$BENCH_ROWS"
	LOAD_MARIADB=$LOAD_SECS
	log "load time: Miraj ${LOAD_MIRAJ}s, MariaDB ${LOAD_MARIADB}s"

	# Same workload and thread count on both servers back to back, in two
	# halves ordered Miraj, MariaDB, MariaDB, Miraj: drift in the machine's
	# speed during a cell (the disk's above all) hits both alike.
	local w t half=$(((BENCH_TIME + 1) / 2))
	for w in $BENCH_WORKLOADS; do
		for t in $BENCH_THREADS; do
			run_cell miraj "$MIRAJ_PORT" "$MIRAJ_PID" "$w" "$t" "$half" 1
			run_cell mariadb "$MARIADB_PORT" "$MARIADB_PID" "$w" "$t" "$half" 1
			run_cell mariadb "$MARIADB_PORT" "$MARIADB_PID" "$w" "$t" "$half" 2
			run_cell miraj "$MIRAJ_PORT" "$MIRAJ_PID" "$w" "$t" "$half" 2
		done
	done
	MIRAJ_BENCH_HWM_MB=$(mib_of "$MIRAJ_PID" VmHWM)
	MARIADB_BENCH_HWM_MB=$(mib_of "$MARIADB_PID" VmHWM)

	if [[ $BENCH_PROFILE == 1 ]]; then
		profile_step
	fi
	stop_pid "$MIRAJ_PID"
	stop_pid "$MARIADB_PID"

	if [[ $BENCH_MEM == 1 ]]; then
		# Keep the main results should the long memory step fail.
		report "$BENCH_OUT" >/dev/null
		mem_step
	fi

	report "$BENCH_OUT"
	log "results written to $BENCH_OUT"
}

main "$@"
