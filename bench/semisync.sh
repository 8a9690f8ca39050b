#!/usr/bin/env bash
# semisync.sh measures what semi-synchronous commit costs on this machine, in
# one run: sysbench write workloads on a Miraj primary with two secondaries
# at cluster_sync_commit OFF, RECEIVED and APPLIED, and on a MariaDB primary
# with one replica, asynchronous and semi-synchronous (AFTER_SYNC). See
# bench/README-semisync.md.
#
# Every knob is an environment variable; the defaults are the full-size run.
#   BENCH_QUICK=0                 1: quick run: the defaults become TIME=5
#                                 TABLES=2 ROWS=2000 THREADS="1 4"
#   BENCH_TIME=20                 seconds per sysbench run
#   BENCH_TABLES=10               tables loaded by oltp_common prepare
#   BENCH_ROWS=10000              rows per table
#   BENCH_THREADS="1 4 16"        client thread counts
#   BENCH_WORKLOADS="oltp_write_only oltp_insert"
#   BENCH_CONFIGS="miraj-off mariadb-async miraj-received mariadb-semisync miraj-applied"
#                                 configurations, in the order they run for
#                                 each workload and thread count
#   BENCH_SYNC_REPLICAS=1         cluster_sync_replicas (acks per write)
#   BENCH_SYNC_TIMEOUT_MS=10000   cluster_sync_timeout, and MariaDB's
#                                 rpl_semi_sync_master_timeout
#   BENCH_SYNC_TIMEOUT_ACTION=error  cluster_sync_timeout_action (no silent fallback)
#   BENCH_MIRAJ_ACK=written       cluster.toml ack of the secondaries (written|durable)
#   BENCH_MARIADB_BUFFER_POOL=512M  innodb_buffer_pool_size of each mariadbd
#   BENCH_CATCHUP_TIMEOUT=300     seconds the replicas may take to catch up
#                                 after a run before the next one starts
#   BENCH_OUT=bench/results/semisync-latest.md   markdown results file
#   BENCH_KEEP_WORK=0             1 keeps the temp dir (node logs, sysbench logs)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_QUICK=${BENCH_QUICK:-0}
if [[ $BENCH_QUICK == 1 ]]; then
	BENCH_TIME=${BENCH_TIME:-5}
	BENCH_TABLES=${BENCH_TABLES:-2}
	BENCH_ROWS=${BENCH_ROWS:-2000}
	BENCH_THREADS=${BENCH_THREADS:-"1 4"}
fi
BENCH_TIME=${BENCH_TIME:-20}
BENCH_TABLES=${BENCH_TABLES:-10}
BENCH_ROWS=${BENCH_ROWS:-10000}
BENCH_THREADS=${BENCH_THREADS:-"1 4 16"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_write_only oltp_insert"}
BENCH_CONFIGS=${BENCH_CONFIGS:-"miraj-off mariadb-async miraj-received mariadb-semisync miraj-applied"}
BENCH_SYNC_REPLICAS=${BENCH_SYNC_REPLICAS:-1}
BENCH_SYNC_TIMEOUT_MS=${BENCH_SYNC_TIMEOUT_MS:-10000}
BENCH_SYNC_TIMEOUT_ACTION=${BENCH_SYNC_TIMEOUT_ACTION:-error}
BENCH_MIRAJ_ACK=${BENCH_MIRAJ_ACK:-written}
BENCH_MARIADB_BUFFER_POOL=${BENCH_MARIADB_BUFFER_POOL:-512M}
BENCH_CATCHUP_TIMEOUT=${BENCH_CATCHUP_TIMEOUT:-300}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/semisync-latest.md}

# A sysbench run that outlives its --time by this much is hung: it is killed.
readonly runGrace=120
# How long the secondaries (Miraj) or the replica (MariaDB) may take to be
# counted for acknowledgements again before a run: a reconnection after an
# IO thread restart takes well under a second.
readonly ackerTimeout=60
readonly secondaries=(n2 n3)
readonly allConfigs="miraj-off mariadb-async miraj-received mariadb-semisync miraj-applied"

for c in $BENCH_CONFIGS; do
	[[ " $allConfigs " == *" $c "* ]] || die "BENCH_CONFIGS: unknown configuration $c (known: $allConfigs)"
done
case $BENCH_SYNC_TIMEOUT_ACTION in fallback | error | wait) ;; *) die "BENCH_SYNC_TIMEOUT_ACTION must be fallback, error or wait" ;; esac
case $BENCH_MIRAJ_ACK in written | durable) ;; *) die "BENCH_MIRAJ_ACK must be written or durable" ;; esac

# has_config CFG succeeds when CFG is one of BENCH_CONFIGS.
has_config() { [[ " $BENCH_CONFIGS " == *" $1 "* ]]; }
wants_miraj() { [[ " $BENCH_CONFIGS " == *" miraj-"* ]]; }
wants_mariadb() { [[ " $BENCH_CONFIGS " == *" mariadb-"* ]]; }

# ---------------------------------------------------------------- status counters

# read_status ARRAY PORT PATTERN fills the associative ARRAY with the
# SHOW GLOBAL STATUS variables whose name is LIKE PATTERN; fails if the
# server did not answer.
read_status() {
	local -n into=$1
	local out name value
	into=()
	out=$(sql "$2" -N -B -e "SHOW GLOBAL STATUS LIKE '$3'" 2>&1) || {
		log "SHOW GLOBAL STATUS on port $2 failed: $out"
		return 1
	}
	while IFS=$'\t' read -r name value; do
		# shellcheck disable=SC2034 # into is the caller's array
		[[ -n $name ]] && into["$name"]=$value
	done <<<"$out"
	return 0
}

# miraj_var NAME prints a global variable of the primary.
miraj_var() { sql "${CPORT[n1]}" -N -B -e "SELECT @@GLOBAL.$1" 2>/dev/null; }

# miraj_streaming N succeeds when at least N secondaries count toward
# acknowledgements on the primary.
miraj_streaming() {
	local v
	v=$(sql "${CPORT[n1]}" -N -B -e "SHOW GLOBAL STATUS LIKE 'Miraj_cluster_sync_secondaries'" 2>/dev/null | cut -f2) || return 1
	[[ -n $v ]] && ((v >= $1))
}

# miraj_level LEVEL sets the primary's global cluster_sync_commit, which
# sysbench's new sessions follow, and checks that it took.
miraj_level() {
	local want=${1^^} got
	sql "${CPORT[n1]}" -e "SET GLOBAL cluster_sync_commit = '$1'" || die "SET GLOBAL cluster_sync_commit = '$1' failed"
	got=$(miraj_var cluster_sync_commit)
	[[ ${got^^} == "$want" ]] || die "@@GLOBAL.cluster_sync_commit is '$got' after SET GLOBAL … = '$1'"
}

# mariadb_semi_ready succeeds when the primary runs semi-sync with a
# semi-sync replica connected.
mariadb_semi_ready() {
	local -A st
	read_status st "$MDB_P" 'Rpl_semi_sync_master_%' 2>/dev/null || return 1
	[[ ${st[Rpl_semi_sync_master_status]:-} == ON && ${st[Rpl_semi_sync_master_clients]:-0} -ge 1 ]]
}

mariadb_io_running() {
	sql "$MDB_R" -e 'SHOW SLAVE STATUS\G' 2>/dev/null | grep -q 'Slave_IO_Running: Yes'
}

# mariadb_semisync ON|OFF switches semi-sync on both sides: the replica
# registers as a semi-sync replica when its IO thread connects, so the IO
# thread is restarted.
MDB_SEMI=""
mariadb_semisync() {
	[[ $MDB_SEMI == "$1" ]] && return 0
	sql "$MDB_P" -e "SET GLOBAL rpl_semi_sync_master_enabled = $1" || die "rpl_semi_sync_master_enabled = $1 failed"
	sql "$MDB_R" -e "SET GLOBAL rpl_semi_sync_slave_enabled = $1; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD" ||
		die "rpl_semi_sync_slave_enabled = $1 / IO thread restart failed"
	if [[ $1 == ON ]]; then
		wait_until "$ackerTimeout" mariadb_semi_ready ||
			die "MariaDB semi-sync not active ${ackerTimeout}s after enabling it: $(sql "$MDB_P" -N -B -e "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'" | tr '\t\n' '= ')"
	else
		wait_until "$ackerTimeout" mariadb_io_running || die "MariaDB replica IO thread not running after its restart"
	fi
	MDB_SEMI=$1
	log "MariaDB semi-sync $1"
}

# ---------------------------------------------------------------- runs

declare -A TPS P95 TXNS IGN CODES FAIL DRAIN
declare -A ACKS ACKAVG ACKMAX FALLB ERRS TMOS EXTRA

# run_cfg CFG WORKLOAD THREADS sets CFG up, runs sysbench WORKLOAD against
# its primary, records tps, p95, errors and the acknowledgement counters
# before and after, then waits until the replicas have caught up so that
# their backlog does not eat into the next run.
run_cfg() {
	local cfg=$1 w=$2 t=$3 key="$1|$2|$3" port pid logf=$WORK/logs/$1-$2-$3.log rc=0
	# shellcheck disable=SC2034 # filled by read_status, read by the *_deltas
	local -A before=() after=()
	case $cfg in
	miraj-*)
		port=${CPORT[n1]} pid=${NPID[n1]}
		miraj_level "${cfg#miraj-}"
		wait_until "$ackerTimeout" miraj_streaming "${#secondaries[@]}" ||
			note "$key: only $(sql "$port" -N -B -e "SHOW GLOBAL STATUS LIKE 'Miraj_cluster_sync_secondaries'" | cut -f2) secondaries streaming before the run"
		read_status before "$port" 'Miraj_cluster_sync%' || true
		;;
	mariadb-*)
		port=$MDB_P pid=$MDB_PPID
		if [[ $cfg == mariadb-semisync ]]; then mariadb_semisync ON; else mariadb_semisync OFF; fi
		read_status before "$port" 'Rpl_semi_sync_master_%' || true
		;;
	esac
	log "$cfg $w threads=$t"
	if ! kill -0 "$pid" 2>/dev/null; then
		FAIL[$key]="server not running"
		note "$key: skipped, the primary is not running"
		return
	fi
	sb "$port" sbtest
	waited "$logf" timeout $((BENCH_TIME + runGrace)) sysbench "$w" "${SB[@]}" \
		--tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" --threads="$t" --time="$BENCH_TIME" \
		--report-interval=0 --verbosity=5 run || rc=$?
	sysbench_stats "$logf"
	TPS[$key]=$SB_TPS P95[$key]=$SB_P95 TXNS[$key]=$SB_TXNS IGN[$key]=$SB_IGN CODES[$key]=$SB_CODES FAIL[$key]=""
	if ((rc != 0)) || [[ -z $SB_TPS ]]; then
		TPS[$key]=""
		FAIL[$key]=$(awk '/FATAL|ALERT|error/ && !/ignored errors/ && n++ < 3' "$logf" | tr '\n' ' ' | cut -c1-300)
		[[ -n ${FAIL[$key]} ]] || FAIL[$key]="sysbench exit status $rc"
		((rc == 124)) && FAIL[$key]="timed out; ${FAIL[$key]}"
		note "$key: sysbench failed: ${FAIL[$key]}"
	fi
	kill -0 "$pid" 2>/dev/null || die "the $cfg primary died during $w threads=$t"
	case $cfg in
	miraj-*)
		read_status after "$port" 'Miraj_cluster_sync%' || true
		miraj_deltas "$key" before after
		drain "$key" miraj_caught_up sbtest "${secondaries[@]}"
		;;
	mariadb-*)
		read_status after "$port" 'Rpl_semi_sync_master_%' || true
		mariadb_deltas "$key" before after
		drain "$key" mariadb_caught_up
		;;
	esac
	log "$key: ${TPS[$key]:-ERR} tps, p95 ${P95[$key]:-?} ms, acks waited ${ACKS[$key]:-?}, ack wait avg ${ACKAVG[$key]:-?} ms, max ${ACKMAX[$key]:-?} ms, fallbacks ${FALLB[$key]:-?}, errors ${ERRS[$key]:-?}"
}

# delta ARRAY_BEFORE ARRAY_AFTER NAME prints after - before of a counter,
# or nothing if either is missing.
delta() {
	local -n b=$1 a=$2
	[[ -n ${b[$3]:-} && -n ${a[$3]:-} ]] && echo $((${a[$3]} - ${b[$3]}))
}

# miraj_deltas KEY BEFORE AFTER turns the primary's cumulative counters
# into this run's figures.
#
# The server keeps, since its start, the number of waits, their mean and
# their largest, in ms to the microsecond. With w0, a0 before and w1, a1
# after, this run's mean is (a1*w1 - a0*w0) / (w1 - w0). A run's max is
# known only when it raised the max; otherwise it is at most the earlier
# max.
miraj_deltas() {
	local key=$1 bn=$2 an=$3 w0 w1 a0 a1 m0 m1 acks txns
	local -n B=$2 A=$3
	ACKS[$key]=$(delta "$bn" "$an" Miraj_cluster_sync_waits || true)
	FALLB[$key]=$(delta "$bn" "$an" Miraj_cluster_sync_fallbacks || true)
	ERRS[$key]=$(delta "$bn" "$an" Miraj_cluster_sync_errors || true)
	TMOS[$key]=$(delta "$bn" "$an" Miraj_cluster_sync_timeouts || true)
	w0=${B[Miraj_cluster_sync_waits]:-} w1=${A[Miraj_cluster_sync_waits]:-}
	a0=${B[Miraj_cluster_sync_wait_avg_ms]:-} a1=${A[Miraj_cluster_sync_wait_avg_ms]:-}
	m0=${B[Miraj_cluster_sync_wait_max_ms]:-} m1=${A[Miraj_cluster_sync_wait_max_ms]:-}
	ACKAVG[$key]="" ACKMAX[$key]=""
	acks=${ACKS[$key]}
	if [[ -n $acks ]] && ((acks > 0)); then
		ACKAVG[$key]=$(awk -v w0="$w0" -v w1="$w1" -v a0="$a0" -v a1="$a1" 'BEGIN {
			v = (a1 * w1 - a0 * w0) / (w1 - w0); if (v < 0) v = 0; printf "%.2f", v }')
		if awk -v a="$m1" -v b="$m0" 'BEGIN { exit !(a > b) }'; then ACKMAX[$key]=$m1; else ACKMAX[$key]="≤$m0"; fi
	fi
	local extra=""
	local c
	c=$(delta "$bn" "$an" Miraj_cluster_sync_cancelled || true)
	[[ -n $c && $c != 0 ]] && extra+="cancelled $c; "
	[[ ${A[Miraj_cluster_sync_degraded_bases]:-0} != 0 ]] && extra+="degraded databases ${A[Miraj_cluster_sync_degraded_bases]}; "
	extra+="secondaries ${B[Miraj_cluster_sync_secondaries]:-?}"
	EXTRA[$key]=$extra
	# What each level promises, checked against the counters.
	if [[ $key == miraj-off* ]]; then
		[[ ${ACKS[$key]:-0} == 0 ]] || note "$key: ${ACKS[$key]} acknowledgement waits at OFF"
	else
		local bad=""
		[[ ${FALLB[$key]:-0} == 0 ]] || bad+=" fallbacks ${FALLB[$key]}"
		[[ ${ERRS[$key]:-0} == 0 ]] || bad+=" errors ${ERRS[$key]}"
		[[ ${TMOS[$key]:-0} == 0 ]] || bad+=" timeouts ${TMOS[$key]}"
		[[ -z $bad ]] || note "$key: writes not confirmed by a secondary:$bad"
		acks=${ACKS[$key]} txns=${TXNS[$key]:-}
		if [[ -n $txns && -n $acks ]] && ((acks < txns)); then
			note "$key: $acks acknowledgement waits for $txns transactions"
		fi
	fi
}

# mariadb_deltas KEY BEFORE AFTER: the same for MariaDB. Its counters are
# exact: Rpl_semi_sync_master_tx_wait_time is the total wait in µs.
mariadb_deltas() {
	local key=$1 bn=$2 an=$3 wt wn acks txns
	local -n A=$3
	ACKS[$key]=$(delta "$bn" "$an" Rpl_semi_sync_master_yes_tx || true)
	FALLB[$key]=$(delta "$bn" "$an" Rpl_semi_sync_master_no_tx || true)
	ERRS[$key]="n/a" TMOS[$key]="n/a" ACKMAX[$key]="n/a"
	wt=$(delta "$bn" "$an" Rpl_semi_sync_master_tx_wait_time || true)
	wn=$(delta "$bn" "$an" Rpl_semi_sync_master_tx_waits || true)
	ACKAVG[$key]=""
	[[ -n $wt && -n $wn ]] && ((wn > 0)) && ACKAVG[$key]=$(awk -v t="$wt" -v n="$wn" 'BEGIN { printf "%.2f", t / n / 1000 }')
	EXTRA[$key]="master_status ${A[Rpl_semi_sync_master_status]:-?}, clients ${A[Rpl_semi_sync_master_clients]:-?}"
	if [[ $key == mariadb-async* ]]; then
		[[ ${ACKS[$key]:-0} == 0 ]] || note "$key: ${ACKS[$key]} semi-sync acknowledged transactions while async"
	else
		[[ ${FALLB[$key]:-0} == 0 ]] || note "$key: ${FALLB[$key]} transactions committed without the replica's ack (Rpl_semi_sync_master_no_tx)"
		[[ ${A[Rpl_semi_sync_master_status]:-} == ON ]] || note "$key: Rpl_semi_sync_master_status is ${A[Rpl_semi_sync_master_status]:-?} after the run (fell back to async)"
		acks=${ACKS[$key]} txns=${TXNS[$key]:-}
		if [[ -n $txns && -n $acks ]] && ((acks < txns)); then
			note "$key: $acks acknowledged transactions (yes_tx) for $txns sysbench transactions"
		fi
	fi
}

# drain KEY CHECK... waits until the replicas have caught up after run KEY
# and records how long it took.
drain() {
	local key=$1
	shift
	if wait_until "$BENCH_CATCHUP_TIMEOUT" "$@"; then
		DRAIN[$key]=$WAITED
	else
		DRAIN[$key]="not in ${BENCH_CATCHUP_TIMEOUT}"
		note "$key: replicas had not caught up ${BENCH_CATCHUP_TIMEOUT}s after the run"
	fi
}

# ---------------------------------------------------------------- report

# cell CFG W T prints "tps (p95)" of a run, ERR if it failed, empty if not run.
cell() {
	local k="$1|$2|$3"
	has_config "$1" || return 0
	if [[ -n ${TPS[$k]:-} ]]; then printf '%s (%s)' "${TPS[$k]}" "${P95[$k]:-?}"; else printf 'ERR'; fi
}

# rcell A B W T prints tps(A) / tps(B) for workload W at T threads.
rcell() {
	local r
	r=$(ratio "${TPS[$1|$3|$4]:-}" "${TPS[$2|$3|$4]:-}" || true)
	printf '%s' "${r:+${r}x}"
}

label() {
	case $1 in
	miraj-off) echo "Miraj async (OFF)" ;;
	miraj-received) echo "Miraj RECEIVED" ;;
	miraj-applied) echo "Miraj APPLIED" ;;
	mariadb-async) echo "MariaDB async" ;;
	mariadb-semisync) echo "MariaDB semi-sync" ;;
	esac
}

# fallback_line prints the totals of the fallback counters over the runs
# of the semi-sync configurations.
fallback_line() {
	local k fb=0 er=0 to=0 no=0 runs=0 mruns=0
	for k in "${!ACKS[@]}"; do
		case $k in
		miraj-received* | miraj-applied*)
			runs=$((runs + 1))
			fb=$((fb + ${FALLB[$k]:-0})) er=$((er + ${ERRS[$k]:-0})) to=$((to + ${TMOS[$k]:-0}))
			;;
		mariadb-semisync*)
			mruns=$((mruns + 1))
			no=$((no + ${FALLB[$k]:-0}))
			;;
		esac
	done
	((runs > 0)) && echo "- Miraj RECEIVED/APPLIED, $runs runs: fallbacks $fb, errors $er, timeouts $to$( ((fb + er + to == 0)) && echo ' — every write was acknowledged by a secondary')"
	((mruns > 0)) && echo "- MariaDB semi-sync, $mruns runs: Rpl_semi_sync_master_no_tx $no$( ((no == 0)) && echo ' — no transaction fell back to async')"
	return 0
}

report() {
	local out=$1 w t c k mariadbd
	mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	{
		echo "# Semi-synchronous commit: Miraj vs MariaDB"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)'); primary n1 + secondaries n2, n3 on 127.0.0.1, every node --save-policy commit, ack = \"$BENCH_MIRAJ_ACK\"; cluster_sync_replicas = ${MIRAJ_GLOBALS[replicas]:-?}, cluster_sync_timeout = ${MIRAJ_GLOBALS[timeout]:-?} ms, cluster_sync_timeout_action = ${MIRAJ_GLOBALS[action]:-?}"
		if wants_mariadb; then
			echo "- mariadb: $("$mariadbd" --version | awk '{ print $3 }'), primary + 1 replica; both innodb_flush_log_at_trx_commit=1; primary log_bin, binlog_format=ROW, sync_binlog=1; replica no binlog, one SQL thread, sync_relay_log default (${MDB_SYNC_RELAY:-?}); semi-sync: rpl_semi_sync_master_wait_point=${MDB_WAIT_POINT:-?}, rpl_semi_sync_master_timeout=${BENCH_SYNC_TIMEOUT_MS} ms; buffer pool $BENCH_MARIADB_BUFFER_POOL each"
		fi
		echo "- $(sysbench --version): ${BENCH_TABLES} tables x ${BENCH_ROWS} rows, ${BENCH_TIME}s per run, threads: ${BENCH_THREADS}"
		echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)); load average at start ${LOAD_AT_START}, at end $(cut -d' ' -f1-3 /proc/loadavg); every server (3 Miraj nodes, 2 mariadbd) and sysbench share these CPUs"
		echo
		if [[ $BENCH_QUICK == 1 ]] || ((BENCH_TIME < 10)); then
			echo "**Quick run (${BENCH_TIME}s per run): it checks that every step works; its figures are not a measurement.**"
			echo
		fi
		echo "Figures are indicative: the machine may be shared with other work. For each workload and thread count"
		echo "the configurations run back to back in the order: $(for c in $BENCH_CONFIGS; do printf '%s; ' "$(label "$c")"; done | sed 's/; $//')."
		echo
		echo "## Throughput: tps (p95 ms)"
		echo
		printf '| workload | threads |'
		for c in $allConfigs; do printf ' %s |' "$(label "$c")"; done
		echo ' RECEIVED / MariaDB semi | APPLIED / MariaDB semi | Miraj async / MariaDB async |'
		echo '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				printf '| %s | %s |' "$w" "$t"
				for c in $allConfigs; do printf ' %s |' "$(cell "$c" "$w" "$t")"; done
				printf ' %s | %s | %s |\n' "$(rcell miraj-received mariadb-semisync "$w" "$t")" \
					"$(rcell miraj-applied mariadb-semisync "$w" "$t")" "$(rcell miraj-off mariadb-async "$w" "$t")"
			done
		done
		echo
		echo "Fallbacks over the whole run:"
		echo
		fallback_line
		echo
		echo "## Acknowledgements per run"
		echo
		echo "Miraj: counters Miraj_cluster_sync_* read on the primary before and after each run. acks = waits started"
		echo "(one per commit that wrote); fallbacks / errors / timeouts are the writes not confirmed by a secondary."
		echo "The server exposes the mean and max wait since its start in ms to the microsecond; a run's own mean is computed"
		echo "from the readings before and after it (see miraj_deltas in the script); the max is the server's max, exact when this run"
		echo "raised it, otherwise shown as ≤ the earlier max. MariaDB: acks = Rpl_semi_sync_master_yes_tx, fallbacks ="
		echo "Rpl_semi_sync_master_no_tx (committed without the replica's ack), avg = delta of"
		echo "Rpl_semi_sync_master_tx_wait_time / delta of Rpl_semi_sync_master_tx_waits (exact, µs shown in ms)."
		echo "Caught up: seconds after the run until the replicas had applied everything (the next run starts after it)."
		echo
		echo "| workload | threads | configuration | tps | txns | ignored errors | acks | ack wait avg ms | ack wait max ms | fallbacks | errors | timeouts | caught up s | state | failure |"
		echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				for c in $BENCH_CONFIGS; do
					k="$c|$w|$t"
					printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$w" "$t" "$(label "$c")" \
						"${TPS[$k]:-ERR}" "${TXNS[$k]:-}" "${IGN[$k]:-}${CODES[$k]:+ (${CODES[$k]})}" "${ACKS[$k]:-}" \
						"${ACKAVG[$k]:-}" "${ACKMAX[$k]:-}" "${FALLB[$k]:-}" "${ERRS[$k]:-}" "${TMOS[$k]:-}" \
						"${DRAIN[$k]:-}" "${EXTRA[$k]:-}" "$(printf '%s' "${FAIL[$k]:-}" | tr '|' '/')"
				done
			done
		done
		if wants_miraj; then
			echo
			echo "## Cluster status at the end (on n1)"
			echo
			echo '```'
			printf '%s\n' "${MIRAJ_STATUS:-n/a}"
			echo '```'
		fi
		echo
		echo "## Anomalies"
		echo
		if ((${#NOTES[@]} == 0)); then
			echo "- none noted by the script"
		else
			printf -- '- %s\n' "${NOTES[@]}"
		fi
		if wants_miraj; then
			echo
			echo "Warnings and errors in the Miraj logs (time stripped, duplicates counted):"
			echo
			echo '```'
			miraj_log_issues
			echo '```'
		fi
	} >"$out"
	cat "$out"
}

# miraj_log_issues prints the WARN/ERROR lines of every node log, without
# their time, each once with its count (the empty root password warning,
# expected here, left out).
miraj_log_issues() {
	local id found=0 lines
	for id in n1 "${secondaries[@]}"; do
		[[ -f $WORK/$id.log ]] || continue
		lines=$(grep -E 'level=(WARN|ERROR)|panic' "$WORK/$id.log" | grep -v 'root accounts created with an empty password' | sed 's/^time=[^ ]* //' | sort | uniq -c | sort -rn | head -n 15 || true)
		[[ -n $lines ]] || continue
		found=1
		echo "$id:"
		printf '%s\n' "$lines"
	done
	((found)) || echo "(none)"
}

# ---------------------------------------------------------------- set-up

declare -A MIRAJ_GLOBALS
miraj_setup() {
	local id v
	# The initial globals come from cluster.toml (§17.8.2); the level starts
	# OFF and is set with SET GLOBAL before each run.
	CLUSTER_TOML_EXTRA="ack = \"$BENCH_MIRAJ_ACK\"
sync_commit = \"off\"
sync_replicas = $BENCH_SYNC_REPLICAS
sync_timeout_ms = $BENCH_SYNC_TIMEOUT_MS
sync_timeout_action = \"$BENCH_SYNC_TIMEOUT_ACTION\""
	make_cluster n1 "${secondaries[@]}"
	# All three up before the designation, so that n1's promotion finds
	# its peers (§17.3).
	for id in n1 "${secondaries[@]}"; do start_node "$id" --save-policy commit; done
	designate_primary
	MIRAJ_GLOBALS[replicas]=$(miraj_var cluster_sync_replicas)
	MIRAJ_GLOBALS[timeout]=$(miraj_var cluster_sync_timeout)
	MIRAJ_GLOBALS[action]=$(miraj_var cluster_sync_timeout_action)
	v=$(miraj_var cluster_sync_commit)
	log "n1 globals: cluster_sync_commit=$v replicas=${MIRAJ_GLOBALS[replicas]} timeout=${MIRAJ_GLOBALS[timeout]} action=${MIRAJ_GLOBALS[action]}"
	[[ ${MIRAJ_GLOBALS[replicas]} == "$BENCH_SYNC_REPLICAS" && ${MIRAJ_GLOBALS[timeout]} == "$BENCH_SYNC_TIMEOUT_MS" &&
		${MIRAJ_GLOBALS[action],,} == "$BENCH_SYNC_TIMEOUT_ACTION" && ${v^^} == OFF ]] ||
		die "the primary's cluster_sync_* globals do not match cluster.toml"
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into sbtest on n1"
	prepare_db "${CPORT[n1]}" sbtest "$BENCH_TABLES" "$BENCH_ROWS" 1
	log "loaded in ${LOAD_SECS}s; waiting for n2 and n3"
	wait_until "$BENCH_CATCHUP_TIMEOUT" miraj_caught_up sbtest "${secondaries[@]}" ||
		die "n2/n3 had not caught up on sbtest ${BENCH_CATCHUP_TIMEOUT}s after the load: $(repl_rows sbtest | tr '\n' ';')"
	wait_until "$ackerTimeout" miraj_streaming "${#secondaries[@]}" ||
		die "n2 and n3 are not both streaming: $(sql "${CPORT[n1]}" -t -e 'SHOW CLUSTER STATUS' 2>&1)"
	log "n2 and n3 caught up and streaming"
}

mariadb_setup() {
	MDB_PRIMARY_OPTS=(--rpl-semi-sync-master-wait-point=AFTER_SYNC --rpl-semi-sync-master-timeout="$BENCH_SYNC_TIMEOUT_MS")
	start_mariadb_pair --innodb-buffer-pool-size="$BENCH_MARIADB_BUFFER_POOL"
	MDB_WAIT_POINT=$(sql "$MDB_P" -N -B -e 'SELECT @@rpl_semi_sync_master_wait_point')
	MDB_SYNC_RELAY=$(sql "$MDB_R" -N -B -e 'SELECT @@sync_relay_log')
	[[ $MDB_WAIT_POINT == AFTER_SYNC ]] || die "MariaDB rpl_semi_sync_master_wait_point is $MDB_WAIT_POINT"
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into the MariaDB primary"
	prepare_db "$MDB_P" sbtest "$BENCH_TABLES" "$BENCH_ROWS" 1
	wait_until "$BENCH_CATCHUP_TIMEOUT" mariadb_caught_up ||
		die "the MariaDB replica had not caught up ${BENCH_CATCHUP_TIMEOUT}s after the load"
	MDB_SEMI=OFF
	log "MariaDB loaded in ${LOAD_SECS}s, replica caught up"
}

# ---------------------------------------------------------------- main

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-bench-semisync
	mkdir -p "$WORK/bin" "$WORK/logs" "$(dirname "$BENCH_OUT")"

	if wants_miraj; then
		log "building miraj-server and miraj-cluster-pki"
		(cd "$REPO" && go build -o "$WORK/bin/" ./cmd/miraj-server ./cmd/miraj-cluster-pki)
		miraj_setup
	fi
	if wants_mariadb; then
		mariadb_setup
	fi

	# Every configuration of a workload and thread count back to back, so
	# that drift in the machine's load hits them alike.
	local w t c
	for w in $BENCH_WORKLOADS; do
		for t in $BENCH_THREADS; do
			for c in $BENCH_CONFIGS; do run_cfg "$c" "$w" "$t"; done
			# Keep the results so far should a later run fail.
			report "$BENCH_OUT" >/dev/null
		done
	done

	if wants_miraj; then
		MIRAJ_STATUS=$(sql "${CPORT[n1]}" -t -e 'SHOW CLUSTER STATUS' 2>&1 || true)
		for c in n3 n2 n1; do stop_node "$c"; done
	fi
	if wants_mariadb; then
		stop_pid "$MDB_RPID"
		stop_pid "$MDB_PPID"
	fi
	report "$BENCH_OUT"
	log "results written to $BENCH_OUT"
}

main "$@"
