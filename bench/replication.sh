#!/usr/bin/env bash
# replication.sh measures Miraj's cluster replication on this machine, in one
# run: lag of two secondaries under sysbench oltp_write_only on the primary,
# the primary's throughput with and without them, the seeding throughput of a
# large database to a new node, and, for comparison, the lag of a MariaDB
# asynchronous replica under the same load. See bench/README-replication.md.
#
# Every knob is an environment variable; the defaults are the full-size run.
#   BENCH_QUICK=0                 1: quick run (~2 min): the defaults become
#                                 TIME=5 TABLES=2 ROWS=2000 SEED_MB=64 REPEAT=1
#   BENCH_TIME=20                 seconds per sysbench run
#   BENCH_TABLES=10               tables loaded by oltp_common prepare
#   BENCH_ROWS=10000              rows per table
#   BENCH_THREADS=4               sysbench threads
#   BENCH_REPEAT=2                pairs of runs (without, then with replicas)
#   BENCH_SAMPLE_MS=100           lag sampling interval
#   BENCH_CATCHUP_TIMEOUT=300     seconds a replica may take to catch up
#   BENCH_SEED=1                  0 skips the seeding step
#   BENCH_SEED_MB=1024            size of the database seeded to n4, in MiB of
#                                 checkpoint (the copy the primary sends)
#   BENCH_SEED_ROW_BYTES=211      checkpoint bytes per sysbench row (measured)
#   BENCH_SEED_TABLES=8           tables of the seeded database
#   BENCH_SEED_ROWS=              total rows (default: from SEED_MB / ROW_BYTES)
#   BENCH_SEED_THREADS=2          sysbench prepare threads for that database
#   BENCH_SEED_TIMEOUT=1800       seconds n4 may take to install the copy
#   BENCH_MARIADB=1               0 skips the MariaDB comparison
#   BENCH_MARIADB_BUFFER_POOL=512M  innodb_buffer_pool_size of each mariadbd
#   BENCH_PPROF=0                 1: CPU profiles of the primary (Go pprof) during
#                                 the first run without and the first with replicas
#   BENCH_PPROF_DIR=bench/results/replication-profile  where they go (git-ignored)
#   BENCH_OUT=bench/results/replication-latest.md   markdown results file
#   BENCH_RATE=0                  sysbench --rate (transactions/s) of every run; 0:
#                                 as fast as it goes. A rate both setups reach
#                                 compares the primary's CPU per transaction at
#                                 the same load
#   BENCH_PIN=0                   1: the primary (n1) alone on CPU 0, everything
#                                 else (secondaries, sysbench, sampler) on CPU 1,
#                                 so that the primary's CPU per transaction with
#                                 and without secondaries excludes the competition
#                                 for its CPU (needs taskset and 2 CPUs or more)
#   BENCH_KEEP_WORK=0             1 keeps the temp dir (logs, lag samples)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_QUICK=${BENCH_QUICK:-0}
if [[ $BENCH_QUICK == 1 ]]; then
	BENCH_TIME=${BENCH_TIME:-5}
	BENCH_TABLES=${BENCH_TABLES:-2}
	BENCH_ROWS=${BENCH_ROWS:-2000}
	BENCH_SEED_MB=${BENCH_SEED_MB:-64}
	BENCH_REPEAT=${BENCH_REPEAT:-1}
fi
BENCH_TIME=${BENCH_TIME:-20}
BENCH_TABLES=${BENCH_TABLES:-10}
BENCH_ROWS=${BENCH_ROWS:-10000}
BENCH_THREADS=${BENCH_THREADS:-4}
BENCH_REPEAT=${BENCH_REPEAT:-2}
BENCH_SAMPLE_MS=${BENCH_SAMPLE_MS:-100}
BENCH_CATCHUP_TIMEOUT=${BENCH_CATCHUP_TIMEOUT:-300}
BENCH_SEED=${BENCH_SEED:-1}
BENCH_SEED_MB=${BENCH_SEED_MB:-1024}
BENCH_SEED_ROW_BYTES=${BENCH_SEED_ROW_BYTES:-211}
BENCH_SEED_TABLES=${BENCH_SEED_TABLES:-8}
BENCH_SEED_ROWS=${BENCH_SEED_ROWS:-}
BENCH_SEED_THREADS=${BENCH_SEED_THREADS:-2}
BENCH_SEED_TIMEOUT=${BENCH_SEED_TIMEOUT:-1800}
BENCH_MARIADB=${BENCH_MARIADB:-1}
BENCH_MARIADB_BUFFER_POOL=${BENCH_MARIADB_BUFFER_POOL:-512M}
BENCH_PPROF=${BENCH_PPROF:-0}
BENCH_PPROF_DIR=${BENCH_PPROF_DIR:-$REPO/bench/results/replication-profile}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/replication-latest.md}
BENCH_PIN=${BENCH_PIN:-0}
BENCH_RATE=${BENCH_RATE:-0}
if [[ $BENCH_PIN == 1 && -z ${BENCH_PINNED:-} ]]; then
	command -v taskset >/dev/null 2>&1 || { echo "BENCH_PIN=1 needs taskset (util-linux)" >&2; exit 2; }
	(($(nproc) >= 2)) || { echo "BENCH_PIN=1 needs 2 CPUs" >&2; exit 2; }
	# Everything this script starts runs on CPU 1; start_node moves n1 to CPU 0.
	BENCH_PINNED=1 exec taskset -c 1 bash "$0" "$@"
fi

# A sysbench run that outlives its --time by this much is hung: it is killed.
readonly runGrace=120
# Primary tps with two secondaries / tps with none.
readonly targetRatio=0.9
readonly nodes=(n1 n2 n3 n4)

# ---------------------------------------------------------------- waits and logs

# wait_idle PID TIMEOUT waits until PID has used less than a tenth of a CPU
# over one second (background checkpoints done), at most TIMEOUT seconds;
# sets WAITED.
wait_idle() {
	local pid=$1 deadline=$((SECONDS + $2)) t0 a b
	t0=$(date +%s.%N)
	while ((SECONDS < deadline)); do
		a=$(cpu_ticks "$pid")
		sleep 1
		b=$(cpu_ticks "$pid")
		(((b - a) * 10 < CLK_TCK)) && break
	done
	WAITED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# log_time LINE prints the epoch seconds of a miraj log line (time=…).
log_time() {
	local ts
	ts=$(sed -n 's/^time=\([^ ]*\).*/\1/p' <<<"$1")
	[[ -n $ts ]] && date -u -d "$ts" +%s.%N
}

# wait_log FILE PATTERN TIMEOUT PID waits for a line matching PATTERN (grep
# -E) in FILE and prints it; fails on timeout or if PID exits.
wait_log() {
	local file=$1 pat=$2 deadline=$((SECONDS + $3)) pid=$4 line
	while ((SECONDS < deadline)); do
		line=$(grep -E -m1 "$pat" "$file" 2>/dev/null || true)
		if [[ -n $line ]]; then
			printf '%s\n' "$line"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# ---------------------------------------------------------------- workload

declare -A TPS TXNS LOGBYTES P95 IGN CODES FAIL LAGFILE DRAIN

# miraj_lsn prints the primary's log end of sbtest.
miraj_lsn() {
	sql "${CPORT[n1]}" -N -B -e "SELECT PRIMARY_LSN FROM information_schema.MIRAJ_REPLICATION
		WHERE NODE_ID = @@cluster_node_id AND \`DATABASE\` = 'sbtest'"
}

# mariadb_pos prints the MariaDB primary's binlog file and position.
mariadb_pos() { sql "$MDB_P" -N -B -e 'SHOW MASTER STATUS' | awk '{ print $1, $2 }'; }

# CPU_WATCH lists "name:pid" of the server processes whose CPU time run_load
# records in CPU[KEY] ("name=seconds, ...").
CPU_WATCH=()
declare -A CPU CPUTX
CLK_TCK=$(getconf CLK_TCK)

# cpu_ticks PID prints the user+system CPU time of PID in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run_load KEY PORT SERVERPID [SAMPLER ARGS...] runs oltp_write_only on the
# primary at PORT. With sampler arguments, bench/lagsample samples the lag
# during the run into WORK/lag-KEY.tsv.
run_load() {
	local key=$1 port=$2 pid=$3 logf=$WORK/sysbench-$1.log rc=0 spid=""
	shift 3
	log "oltp_write_only, $BENCH_THREADS threads, ${BENCH_TIME}s: $key"
	if (($# > 0)); then
		LAGFILE[$key]=$WORK/lag-$key.tsv
		"$WORK/bin/lagsample" -interval "${BENCH_SAMPLE_MS}ms" -drain-timeout "${BENCH_CATCHUP_TIMEOUT}s" \
			-out "${LAGFILE[$key]}" "$@" 2>"$WORK/lagsample-$key.log" &
		spid=$!
		track_pid "$spid"
	fi
	local w ticks=() ppid=""
	if [[ $BENCH_PPROF == 1 && ($key == miraj-none-1 || $key == miraj-with-1) ]] && ((BENCH_TIME > 2)); then
		curl -s -o "$WORK/cpu-$key.pprof" \
			"http://127.0.0.1:$PPROF_PORT/debug/pprof/profile?seconds=$((BENCH_TIME - 2))" &
		ppid=$!
		track_pid "$ppid"
	fi
	for w in "${CPU_WATCH[@]}"; do ticks+=("$(cpu_ticks "${w#*:}")"); done
	sb "$port" sbtest
	waited "$logf" timeout $((BENCH_TIME + runGrace)) sysbench oltp_write_only "${SB[@]}" \
		--tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" --threads="$BENCH_THREADS" \
		--time="$BENCH_TIME" --rate="$BENCH_RATE" --report-interval=0 --verbosity=5 run || rc=$?
	RUN_END=$(date +%s.%N)
	local ends=()
	for w in "${CPU_WATCH[@]}"; do ends+=("$(cpu_ticks "${w#*:}")"); done
	if [[ -n $spid ]]; then
		# The load is over: the sampler goes on until every replica has
		# applied everything, and says how long that took.
		kill -USR1 "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
		forget_pid "$spid"
		local ms
		ms=$(sed -n 's/^drained_ms=//p' "$WORK/lagsample-$key.log")
		case $ms in
		"") DRAIN[$key]="" ;;
		timeout)
			DRAIN[$key]="not within ${BENCH_CATCHUP_TIMEOUT}s"
			note "$key: replicas had not caught up ${BENCH_CATCHUP_TIMEOUT}s after the load"
			;;
		*) DRAIN[$key]=$(awk -v m="$ms" 'BEGIN { printf "%.1f", m / 1000 }') ;;
		esac
	fi
	local i cpu=""
	for i in "${!CPU_WATCH[@]}"; do
		w=${CPU_WATCH[i]}
		cpu+="${cpu:+, }${w%%:*} $(awk -v a="${ticks[i]}" -v b="${ends[i]}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", (b - a) / hz }')"
	done
	CPU[$key]=$cpu
	if [[ -n $ppid ]]; then
		wait "$ppid" 2>/dev/null || true
		forget_pid "$ppid"
		save_profile "$key"
	fi
	# CPU time of the primary (first watched process) per transaction, in ms.
	CPUTX[$key]=""
	if ((${#CPU_WATCH[@]} > 0)); then
		CPUTX[$key]=$(awk -v a="${ticks[0]}" -v b="${ends[0]}" -v hz="$CLK_TCK" \
			-v n="$(awk '/^ *transactions:/ { print $2 }' "$logf")" 'BEGIN { if (n > 0) printf "%.2f", (b - a) / hz * 1000 / n }')
	fi
	sysbench_stats "$logf"
	TPS[$key]=$SB_TPS TXNS[$key]=$SB_TXNS P95[$key]=$SB_P95 IGN[$key]=$SB_IGN CODES[$key]=$SB_CODES FAIL[$key]=""
	if ((rc != 0)) || [[ -z $SB_TPS ]]; then
		TPS[$key]=""
		FAIL[$key]=$(awk '/FATAL|ALERT|error/ && !/ignored errors/ && n++ < 3' "$logf" | tr '\n' ' ' | cut -c1-300)
		[[ -n ${FAIL[$key]} ]] || FAIL[$key]="sysbench exit status $rc"
		note "$key: sysbench failed: ${FAIL[$key]}"
	fi
	kill -0 "$pid" 2>/dev/null || die "the primary died during $key"
	log "$key: ${TPS[$key]:-ERR} tps, p95 ${P95[$key]:-?} ms, ignored errors ${IGN[$key]:-?} ${CODES[$key]:+(${CODES[$key]})}"
}

# save_profile KEY copies the CPU profile of run KEY to BENCH_PPROF_DIR
# with its top functions (flat and cumulative) as text.
PROFILE_NOTES=()
save_profile() {
	local key=$1 f=$WORK/cpu-$1.pprof d=$BENCH_PPROF_DIR
	if [[ ! -s $f ]]; then
		note "$key: no CPU profile could be taken"
		return
	fi
	mkdir -p "$d"
	[[ -f $d/.gitignore ]] || echo '*' >"$d/.gitignore"
	cp "$f" "$d/$key.pprof"
	(cd "$REPO" && go tool pprof -top -nodecount=30 "$WORK/bin/miraj-server" "$f") >"$d/$key-flat.txt" 2>&1 || true
	(cd "$REPO" && go tool pprof -top -cum -nodecount=40 "$WORK/bin/miraj-server" "$f") >"$d/$key-cum.txt" 2>&1 || true
	PROFILE_NOTES+=("$key: $d/$key.pprof, $d/$key-flat.txt, $d/$key-cum.txt")
}

# drain KEY CHECK... waits until the replicas have caught up after run KEY.
# The time it took comes from the sampler (100 ms resolution); where the
# sampler gave none, it is measured here (coarser: one client per poll).
drain() {
	local key=$1
	shift
	if wait_until "$BENCH_CATCHUP_TIMEOUT" "$@"; then
		if [[ -z ${DRAIN[$key]:-} ]]; then
			DRAIN[$key]="≤$(awk -v a="$RUN_END" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
		fi
		log "$key: replicas caught up ${DRAIN[$key]}s after the end of the load"
	else
		[[ ${DRAIN[$key]:-} == not* ]] || note "$key: replicas had not caught up ${BENCH_CATCHUP_TIMEOUT}s after the load"
		DRAIN[$key]="not within ${BENCH_CATCHUP_TIMEOUT}s"
	fi
}

# ---------------------------------------------------------------- steps

miraj_throughput() {
	local rep port=${CPORT[n1]} p0 p1
	for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
		stop_node n2
		stop_node n3
		CPU_WATCH=("n1:${NPID[n1]}")
		run_load "miraj-none-$rep" "$port" "${NPID[n1]}"
		start_node n2
		start_node n3
		log "waiting for n2 and n3 to catch up on sbtest"
		if wait_until "$BENCH_CATCHUP_TIMEOUT" miraj_caught_up sbtest n2 n3; then
			log "n2 and n3 caught up in ${WAITED}s"
		else
			note "run $rep: n2/n3 had not caught up on sbtest ${BENCH_CATCHUP_TIMEOUT}s after their start: $(repl_rows sbtest | tr '\n' ';')"
		fi
		p0=$(miraj_lsn)
		CPU_WATCH=("n1:${NPID[n1]}" "n2:${NPID[n2]}" "n3:${NPID[n3]}")
		run_load "miraj-with-$rep" "$port" "${NPID[n1]}" -mode miraj -primary "127.0.0.1:$port" -db sbtest
		p1=$(miraj_lsn)
		LOGBYTES[miraj-with-$rep]=$((p1 - p0))
		drain "miraj-with-$rep" miraj_caught_up sbtest n2 n3
	done
	MIRAJ_STATUS=$(sql "$port" -t -e 'SHOW CLUSTER STATUS' 2>&1 || true)
}

# watch_view T0 prints, every 0.25 s, the seconds since T0, n4's STATE,
# LAG_BYTES and SYNC in the primary's MIRAJ_NODES, then "|" and n4's
# APPLIED_LSN and PRIMARY_LSN of sbseed in its MIRAJ_REPLICATION.
watch_view() {
	local t0=$1 v r
	while :; do
		v=$(sql "${CPORT[n1]}" -N -B -e "SELECT STATE, LAG_BYTES, SYNC FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n4'" 2>/dev/null | tr '\t' ' ' || true)
		r=$(repl_rows sbseed | awk '$1 == "n4" { print $2, $3 }' || true)
		printf '%s %s | %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" "$v" "$r"
		sleep 0.25
	done
}

declare -A SEED
miraj_seeding() {
	local port=${CPORT[n1]} rows per t0 line tins trecv tfin secs bytes
	# The secondaries would apply the whole load too: on 2 cores that slows
	# the fill and triples the memory. They are stopped; n4 alone is seeded.
	stop_node n2
	stop_node n3
	if [[ -n $BENCH_SEED_ROWS ]]; then
		rows=$BENCH_SEED_ROWS
	else
		rows=$(awk -v mb="$BENCH_SEED_MB" -v b="$BENCH_SEED_ROW_BYTES" 'BEGIN { printf "%d", mb * 1048576 / b }')
	fi
	per=$(((rows + BENCH_SEED_TABLES - 1) / BENCH_SEED_TABLES))
	SEED[rows]=$((per * BENCH_SEED_TABLES))
	log "filling sbseed: $BENCH_SEED_TABLES tables x $per rows (~${BENCH_SEED_MB} MiB)"
	prepare_db "$port" sbseed "$BENCH_SEED_TABLES" "$per" "$BENCH_SEED_THREADS"
	SEED[fill_s]=$LOAD_SECS
	SEED[disk_mb]=$(du -sm "$WORK/data-n1/sbseed" | awk '{ print $1 }')
	SEED[p_rss_before]=$(mib_of "${NPID[n1]}" VmRSS)
	SEED[p_hwm_before]=$(mib_of "${NPID[n1]}" VmHWM)
	log "sbseed filled in ${LOAD_SECS}s (${SEED[disk_mb]} MiB on disk); primary VmHWM ${SEED[p_hwm_before]} MiB"
	# The fill leaves checkpoints being written in the background: let them
	# finish so that the copy does not compete with them.
	wait_idle "${NPID[n1]}" 300
	SEED[idle_s]=$WAITED
	log "primary idle after ${WAITED}s"

	log "starting n4 (empty): it must receive a copy of every database"
	t0=$(date +%s.%N)
	# What the primary reports of n4 meanwhile, every 0.25 s.
	watch_view "$t0" >"$WORK/seed-view.txt" 2>&1 &
	local wpid=$!
	track_pid "$wpid"
	start_node n4
	if ! line=$(wait_log "$WORK/n4.log" 'copy of database sbseed installed' "$BENCH_SEED_TIMEOUT" "${NPID[n4]}"); then
		stop_pid "$wpid"
		note "n4 did not install sbseed within ${BENCH_SEED_TIMEOUT}s; n4 log tail: $(tail -n 5 "$WORK/n4.log" | tr '\n' ' ')"
		return
	fi
	stop_pid "$wpid"
	tins=$(log_time "$line")
	SEED[e2e_s]=$(awk -v a="$t0" -v b="$tins" 'BEGIN { printf "%.2f", b - a }')
	line=$(grep -E -m1 'receiving a copy of database sbseed' "$WORK/n4.log" || true)
	trecv=$(log_time "$line" || true)
	line=$(wait_log "$WORK/n1.log" 'seeding of database sbseed for n4 finished' 30 "${NPID[n1]}" || true)
	tfin=$(log_time "$line" || true)
	# Where the time goes: n4's start to the first byte of the copy, the
	# transfer (the primary's own figure), and the install on n4 (from the
	# primary's last byte to n4's "installed" line).
	SEED[start_s]=$(awk -v a="$t0" -v b="$trecv" 'BEGIN { if (b != "") printf "%.2f", b - a }')
	SEED[install_s]=$(awk -v a="$tfin" -v b="$tins" 'BEGIN { if (a != "") printf "%.2f", b - a }')
	# The states the primary showed for n4, each with the time it was first
	# seen, and when it first reported n4's sbseed fully applied.
	SEED[view_states]=$(awk '$2 != "" && $2 != prev { printf "%s%s from +%ss", sep, $2, $1; sep = ", "; prev = $2 }' "$WORK/seed-view.txt")
	SEED[view_applied_s]=$(awk -F'|' '{ split($1, a, " "); split($2, b, " ") } b[1] != "" && b[1] == b[2] { print a[1]; exit }' "$WORK/seed-view.txt")
	SEED[installed_rel_s]=$(awk -v a="$t0" -v b="$tins" 'BEGIN { printf "%.2f", b - a }')
	if [[ -n ${SEED[view_applied_s]} ]] && ge "${SEED[installed_rel_s]}" "$(awk -v v="${SEED[view_applied_s]}" 'BEGIN { print v + 1 }')"; then
		note "the primary reported n4's sbseed as applied up to its log end (APPLIED_LSN = PRIMARY_LSN) from +${SEED[view_applied_s]}s after n4's start, while n4 installed the copy only at +${SEED[installed_rel_s]}s (states seen: ${SEED[view_states]})"
	fi
	bytes=$(sed -n 's/.*finished: \([0-9]*\) bytes in \([0-9.]*\) s.*/\1/p' <<<"$line")
	secs=$(sed -n 's/.*finished: \([0-9]*\) bytes in \([0-9.]*\) s.*/\2/p' <<<"$line")
	SEED[bytes]=$bytes SEED[primary_s]=$secs
	SEED[mib]=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }')
	SEED[primary_mibs]=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s }')
	SEED[e2e_mibs]=$(awk -v b="$bytes" -v s="${SEED[e2e_s]}" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s }')
	SEED[all_lines]=$(grep -E 'seeding of database .* for n4 (started|finished)' "$WORK/n1.log" | sed 's/^time=[^ ]* level=[A-Z]* msg=//' || true)
	log "sbseed: ${SEED[mib]} MiB sent in ${secs}s by the primary (${SEED[primary_mibs]} MiB/s); n4 start to installed ${SEED[e2e_s]}s (${SEED[e2e_mibs]} MiB/s)"
	if wait_until 120 miraj_caught_up sbseed n4 && wait_until 120 miraj_caught_up sbtest n4; then
		SEED[catchup]="yes"
	else
		SEED[catchup]="no"
		note "n4 did not reach the primary's log end after the copy: $(repl_rows sbseed | tr '\n' ';')"
	fi
	SEED[p_hwm]=$(mib_of "${NPID[n1]}" VmHWM)
	SEED[n4_hwm]=$(mib_of "${NPID[n4]}" VmHWM)
	SEED[n4_rss]=$(mib_of "${NPID[n4]}" VmRSS)
	# The copy must hold every row.
	local i a b bad=0
	for ((i = 1; i <= BENCH_SEED_TABLES; i++)); do
		a=$(sql "$port" -N -B -e "SELECT COUNT(*) FROM sbseed.sbtest$i" 2>&1)
		b=$(sql "${CPORT[n4]}" -N -B -e "SELECT COUNT(*) FROM sbseed.sbtest$i" 2>&1)
		[[ $a == "$b" ]] || {
			bad=1
			note "sbseed.sbtest$i: $a rows on the primary, $b on n4"
		}
	done
	SEED[rows_ok]=$([[ $bad == 0 ]] && echo "yes" || echo "NO")
}

mariadb_replication() {
	local rep p0 p1
	start_mariadb_pair --innodb-buffer-pool-size="$BENCH_MARIADB_BUFFER_POOL"
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into the MariaDB primary"
	prepare_db "$MDB_P" sbtest "$BENCH_TABLES" "$BENCH_ROWS" 1
	LOAD_MARIADB=$LOAD_SECS
	for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
		sql "$MDB_R" -e 'STOP SLAVE' || note "STOP SLAVE failed"
		CPU_WATCH=("primary:$MDB_PPID" "replica:$MDB_RPID")
		run_load "mariadb-none-$rep" "$MDB_P" "$MDB_PPID"
		sql "$MDB_R" -e 'START SLAVE' || note "START SLAVE failed"
		if wait_until "$BENCH_CATCHUP_TIMEOUT" mariadb_caught_up; then
			log "MariaDB replica caught up in ${WAITED}s"
		else
			note "MariaDB replica had not caught up in ${BENCH_CATCHUP_TIMEOUT}s: $(sql "$MDB_R" -e 'SHOW SLAVE STATUS\G' 2>&1 | grep -E 'Running|Error|Behind' | tr -s ' ' | tr '\n' ';')"
		fi
		p0=$(mariadb_pos)
		run_load "mariadb-with-$rep" "$MDB_P" "$MDB_PPID" -mode mariadb -primary "127.0.0.1:$MDB_P" \
			-replica "127.0.0.1:$MDB_R"
		p1=$(mariadb_pos)
		# Same binlog file: the bytes it grew by. Otherwise unknown.
		[[ ${p0% *} == "${p1% *}" ]] && LOGBYTES[mariadb-with-$rep]=$((${p1#* } - ${p0#* }))
		drain "mariadb-with-$rep" mariadb_caught_up
	done
	MARIADB_HWM="$(mib_of "$MDB_PPID" VmHWM) / $(mib_of "$MDB_RPID" VmHWM)"
}

# ---------------------------------------------------------------- report

# mean KEYPREFIX prints the mean tps of the runs KEYPREFIX-1..REPEAT, or
# nothing if one failed.
mean_tps() {
	local rep v s=""
	for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
		v=${TPS[$1-$rep]:-}
		[[ -n $v ]] || return 0
		s+="$v "
	done
	awk -v s="$s" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; printf "%.2f", t / n }'
}

# lag_row SYSTEM NODE PREFIX prints a markdown row of lag percentiles of NODE
# over the sampled runs PREFIX-1..REPEAT.
lag_row() {
	local sys=$1 node=$2 prefix=$3 rep f all="$WORK/lagall-$1-$2" n b50 b99 bmax s50 s99 smax drains=""
	: >"$all"
	for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
		f=${LAGFILE[$prefix-$rep]:-}
		[[ -n $f && -f $f ]] && awk -F'\t' -v n="$node" 'NR > 1 && $2 == "load" && $3 == n { print $4 "\t" $5 }' "$f" >>"$all"
		drains+="${drains:+, }${DRAIN[$prefix-$rep]:-n/a}"
	done
	n=$(wc -l <"$all")
	cut -f1 "$all" >"$all.b"
	cut -f2 "$all" >"$all.s"
	b50=$(percentile 50 "$all.b") b99=$(percentile 99 "$all.b") bmax=$(percentile 100 "$all.b")
	s50=$(percentile 50 "$all.s") s99=$(percentile 99 "$all.s") smax=$(percentile 100 "$all.s")
	# Log bytes per committed transaction over these runs, to express the
	# byte lag in transactions (Miraj's journal and MariaDB's binlog do not
	# spend the same bytes on a transaction).
	local lb=0 tx=0 bpt=""
	for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
		[[ -n ${LOGBYTES[$prefix-$rep]:-} && -n ${TXNS[$prefix-$rep]:-} ]] || continue
		lb=$((lb + ${LOGBYTES[$prefix-$rep]})) tx=$((tx + ${TXNS[$prefix-$rep]}))
	done
	((tx > 0)) && bpt=$(awk -v b="$lb" -v t="$tx" 'BEGIN { printf "%.0f", b / t }')
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$sys" "$node" "$n" "${b50:-n/a}" "${b99:-n/a}" \
		"${bmax:-n/a}" "${bpt:-n/a}" "$(in_txns "$b50" "$bpt") / $(in_txns "$b99" "$bpt")" \
		"$(fmt_s "$s50")" "$(fmt_s "$s99")" "$(fmt_s "$smax")" "$drains"
}

# in_txns BYTES BYTES_PER_TXN prints BYTES in transactions (one decimal).
in_txns() { [[ -n $1 && -n $2 ]] && awk -v b="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%.1f", b / p }' || echo n/a; }

fmt_s() { [[ -n $1 ]] && awk -v v="$1" 'BEGIN { printf "%.2f", v }' || echo n/a; }

sampler_line() {
	local f rep out=""
	for f in "$WORK"/lagsample-*.log; do
		[[ -f $f ]] || continue
		out+="- $(basename "$f" .log | sed 's/^lagsample-//'): $(grep -v '^drained_ms=' "$f")"$'\n'
	done
	printf '%s' "$out"
}

report() {
	local out=$1 rep k mn mw r st mdn mdw mr
	mn=$(mean_tps miraj-none) mw=$(mean_tps miraj-with)
	r=$(ratio "$mw" "$mn" || true)
	if [[ -z $r ]]; then st="n/a"; elif ge "$r" "$targetRatio"; then st="met"; else st="MISSED"; fi
	{
		echo "# Miraj replication benchmark"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)'), default save policy (commit), ack = written"
		echo "- $(sysbench --version): oltp_write_only, ${BENCH_TABLES} tables x ${BENCH_ROWS} rows, ${BENCH_THREADS} threads, ${BENCH_TIME}s per run, ${BENCH_REPEAT} pair(s) of runs$( ((BENCH_RATE > 0)) && echo ", --rate=${BENCH_RATE} (every run offered the same load)")"
		if [[ $BENCH_PIN == 1 ]]; then
			echo "- machine: $(nproc --all) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load average at start: ${LOAD_AT_START}; pinned (BENCH_PIN=1): the primary n1 alone on CPU 0 (GOMAXPROCS 1), every other process (secondaries, sysbench, sampler) on CPU 1"
		else
			echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load average at start: ${LOAD_AT_START}; every process (nodes, sysbench, sampler) shares these CPUs"
		fi
		echo "- lag sampled every ${BENCH_SAMPLE_MS} ms during the runs with replicas (bench/lagsample, one connection)"
		echo
		echo "Figures are indicative: the machine may be shared with other work."
		echo
		echo "## Primary throughput (oltp_write_only)"
		echo
		echo "| system | run | replicas | tps | p95 ms | ignored errors | CPU s used by the servers | primary CPU ms/txn | replicas caught up after the load |"
		echo "|---|---:|---|---:|---:|---:|---|---:|---|"
		for k in miraj mariadb; do
			[[ $k == mariadb && $BENCH_MARIADB != 1 ]] && continue
			for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
				printf '| %s | %s | none | %s | %s | %s | %s | %s | |\n' "$k" "$rep" "${TPS[$k-none-$rep]:-ERR}" "${P95[$k-none-$rep]:-}" \
					"${IGN[$k-none-$rep]:-}${CODES[$k-none-$rep]:+ (${CODES[$k-none-$rep]})}" "${CPU[$k-none-$rep]:-}" "${CPUTX[$k-none-$rep]:-}"
				printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$k" "$rep" "$([[ $k == miraj ]] && echo "n2, n3" || echo "1 replica")" \
					"${TPS[$k-with-$rep]:-ERR}" "${P95[$k-with-$rep]:-}" \
					"${IGN[$k-with-$rep]:-}${CODES[$k-with-$rep]:+ (${CODES[$k-with-$rep]})}" "${CPU[$k-with-$rep]:-}" \
					"${CPUTX[$k-with-$rep]:-}" "${DRAIN[$k-with-$rep]:+${DRAIN[$k-with-$rep]} s}"
			done
		done
		echo
		echo "- **Miraj: tps with 2 secondaries / tps with none = ${r:-n/a} (mean ${mw:-?} / ${mn:-?}); target >= ${targetRatio}: ${st}**"
		if [[ $BENCH_MARIADB == 1 ]]; then
			mdn=$(mean_tps mariadb-none) mdw=$(mean_tps mariadb-with)
			mr=$(ratio "$mdw" "$mdn" || true)
			echo "- MariaDB (for comparison): tps with its replica running / replica stopped = ${mr:-n/a} (mean ${mdw:-?} / ${mdn:-?}); Miraj primary tps / MariaDB primary tps with replicas: $(ratio "$mw" "$mdw" || echo n/a)"
		fi
		echo
		echo "CPU s: user + system CPU seconds each server process used during the run (the replicas' share is CPU the"
		echo "primary and sysbench did not get on this machine). Primary CPU ms/txn: the primary's CPU time per committed"
		echo "transaction, which separates the cost of replication on the primary itself from the competition for CPU."
		echo "Runs alternate: without replicas, then with them."
		echo
		echo "## Replication lag during the load"
		echo
		echo "Miraj: bytes = PRIMARY_LSN - APPLIED_LSN of the secondary's sbtest row in information_schema.MIRAJ_REPLICATION"
		echo "on the primary; seconds = LAG_SECONDS of SHOW CLUSTER STATUS (age of the secondary's last applied batch"
		echo "while it lags, 0 when up to date). MariaDB: bytes = primary's binlog Position - replica's Exec_Master_Log_Pos;"
		echo "seconds = Seconds_Behind_Master (whole seconds). Percentiles are nearest-rank over every sample of the runs with"
		echo "replicas. log bytes/txn = growth of the primary's log during those runs / transactions committed: the byte lag"
		echo "divided by it (txns) compares the two systems. The last column is how long after the end of the load every"
		echo "replica had a byte lag of 0 (the sampler goes on after the load; one figure per run)."
		echo
		echo "| system | replica | samples | bytes p50 | bytes p99 | bytes max | log bytes/txn | txns p50 / p99 | s p50 | s p99 | s max | caught up after load (s) |"
		echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
		lag_row Miraj n2 miraj-with
		lag_row Miraj n3 miraj-with
		if [[ $BENCH_MARIADB == 1 ]]; then
			lag_row MariaDB replica mariadb-with
		fi
		echo
		echo "MariaDB setup: two private mariadbd $("$(command -v mariadbd || echo /usr/sbin/mariadbd)" --version | awk '{ print $3 }'), primary log_bin, binlog_format=ROW, sync_binlog=1,"
		echo "innodb_flush_log_at_trx_commit=1; replica innodb_flush_log_at_trx_commit=1, no binlog, one SQL thread"
		echo "(slave_parallel_threads=0), MASTER_USE_GTID=slave_pos; buffer pool $BENCH_MARIADB_BUFFER_POOL each."
		[[ $BENCH_MARIADB == 1 ]] && echo "MariaDB load time ${LOAD_MARIADB:-?}s; VmHWM primary / replica: ${MARIADB_HWM:-?} MiB."
		echo
		echo "Sampler pace:"
		echo
		sampler_line
		if [[ $BENCH_SEED == 1 ]]; then
			echo
			echo "## Seeding a new node"
			echo
			echo "sbseed: ${SEED[rows]:-?} sysbench rows in $BENCH_SEED_TABLES tables (asked: ${BENCH_SEED_MB} MiB), loaded in ${SEED[fill_s]:-?}s"
			echo "(${SEED[disk_mb]:-?} MiB of journal and checkpoints on the primary's disk). n2 and n3 stopped; n4 started empty"
			echo "once the primary was idle (${SEED[idle_s]:-?}s after the fill: background checkpoints). Bytes and primary seconds from the primary's log line"
			echo "\`seeding of database sbseed for n4 finished: B bytes in S s\`; end to end = from n4's start to its log line"
			echo "\`copy of database sbseed installed\` (includes process start, link set-up and the copies of the other databases)."
			echo
			echo "| database | copy MiB | primary s | primary MiB/s | n4 start to installed s | end-to-end MiB/s | n4 caught up | row counts equal |"
			echo "|---|---:|---:|---:|---:|---:|---|---|"
			echo "| sbseed | ${SEED[mib]:-?} | ${SEED[primary_s]:-?} | ${SEED[primary_mibs]:-?} | ${SEED[e2e_s]:-?} | ${SEED[e2e_mibs]:-?} | ${SEED[catchup]:-?} | ${SEED[rows_ok]:-?} |"
			echo
			echo "Where n4's time went: start to the first byte of the copy ${SEED[start_s]:-?} s; transfer ${SEED[primary_s]:-?} s"
			echo "(the primary's figure: it ends when the last chunk is handed to the link); install on n4 ${SEED[install_s]:-?} s"
			echo "(from the primary's last chunk to n4's \`installed\` line: the copy is written to a second file, fsync'd, then"
			echo "read back and rebuilt into tables)."
			echo
			echo "What the primary reported of n4 meanwhile (MIRAJ_NODES, MIRAJ_REPLICATION, polled every 0.25 s): states"
			echo "${SEED[view_states]:-?}; n4's sbseed APPLIED_LSN = PRIMARY_LSN from +${SEED[view_applied_s]:-never}s;"
			echo "n4 had the copy installed at +${SEED[installed_rel_s]:-?}s."
			echo
			echo "Memory (VmHWM, MiB): primary ${SEED[p_hwm_before]:-?} before n4 started, ${SEED[p_hwm]:-?} after the copy;"
			echo "n4 ${SEED[n4_hwm]:-?} (VmRSS ${SEED[n4_rss]:-?} once installed)."
			echo
			echo "Primary's seeding log lines for n4:"
			echo
			echo '```'
			printf '%s\n' "${SEED[all_lines]:-none}"
			echo '```'
		fi
		echo
		echo "## Cluster status at the end of the throughput runs (on n1)"
		echo
		echo '```'
		printf '%s\n' "${MIRAJ_STATUS:-n/a}"
		echo '```'
		if ((${#PROFILE_NOTES[@]} > 0)); then
			echo
			echo "## CPU profiles of the primary"
			echo
			printf -- '- %s\n' "${PROFILE_NOTES[@]}"
		fi
		echo
		echo "## Anomalies"
		echo
		if ((${#NOTES[@]} == 0)); then
			echo "- none noted by the script"
		else
			printf -- '- %s\n' "${NOTES[@]}"
		fi
		echo
		echo "Warnings and errors in the Miraj logs (time stripped, duplicates counted):"
		echo
		echo '```'
		miraj_log_issues
		echo '```'
	} >"$out"
	cat "$out"
}

# miraj_log_issues prints the WARN/ERROR lines of every node log, without
# their time, each once with its count (the empty root password warning,
# expected here, left out).
miraj_log_issues() {
	local id found=0 lines
	for id in "${nodes[@]}"; do
		[[ -f $WORK/$id.log ]] || continue
		lines=$(grep -E 'level=(WARN|ERROR)|panic' "$WORK/$id.log" | grep -v 'root accounts created with an empty password' | sed 's/^time=[^ ]* //' | sort | uniq -c | sort -rn | head -n 15 || true)
		[[ -n $lines ]] || continue
		found=1
		echo "$id:"
		printf '%s\n' "$lines"
	done
	((found)) || echo "(none)"
}

# ---------------------------------------------------------------- main

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-bench-repl
	mkdir -p "$WORK/bin" "$(dirname "$BENCH_OUT")"

	log "building miraj-server, miraj-cluster-pki and lagsample"
	(cd "$REPO" && go build -o "$WORK/bin/" ./cmd/miraj-server ./cmd/miraj-cluster-pki ./bench/lagsample)

	make_cluster "${nodes[@]}"
	local pprof=()
	if [[ $BENCH_PPROF == 1 ]]; then
		free_port PPROF_PORT
		pprof=(--pprof "127.0.0.1:$PPROF_PORT")
	fi
	start_node n1 "${pprof[@]}"
	designate_primary
	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into sbtest on n1"
	prepare_db "${CPORT[n1]}" sbtest "$BENCH_TABLES" "$BENCH_ROWS" 1
	log "loaded in ${LOAD_SECS}s"

	miraj_throughput
	# Keep the results so far should a later step fail.
	report "$BENCH_OUT" >/dev/null
	if [[ $BENCH_SEED == 1 ]]; then
		miraj_seeding
		report "$BENCH_OUT" >/dev/null
	fi
	local id
	for id in n4 n3 n2 n1; do stop_node "$id"; done

	if [[ $BENCH_MARIADB == 1 ]]; then
		mariadb_replication
		stop_pid "$MDB_RPID"
		stop_pid "$MDB_PPID"
	fi

	report "$BENCH_OUT"
	log "results written to $BENCH_OUT"
}

main "$@"
