#!/usr/bin/env bash
# ceiling.sh measures what this machine allows in one sysbench cell: Miraj
# and MariaDB, each with durable commits and without, in the same rounds as
# bench/nullserver, a server that does no SQL work (durable commits through
# Miraj's journal, and without). See bench/README.md, "What the machine
# allows".
#
#   CEIL_WORKLOAD=oltp_write_only   sysbench workload
#   CEIL_THREADS=4                  client threads
#   CEIL_TIME=10                    seconds per server and round
#   CEIL_ROUNDS=3                   rounds; each runs every server once, in turn
#   CEIL_WARMUP=5                   seconds of the cell run against each server first, not counted
#   CEIL_OUT=bench/results/ceiling-latest.md   markdown results file
#   BENCH_KEEP_WORK=0               1 keeps the temp dir (logs)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

CEIL_WORKLOAD=${CEIL_WORKLOAD:-oltp_write_only}
CEIL_THREADS=${CEIL_THREADS:-4}
CEIL_TIME=${CEIL_TIME:-10}
CEIL_ROUNDS=${CEIL_ROUNDS:-3}
CEIL_WARMUP=${CEIL_WARMUP:-5}
CEIL_OUT=${CEIL_OUT:-$REPO/bench/results/ceiling-latest.md}
readonly ceilTables=10 ceilRows=10000 runGrace=120

CLK_TCK=$(getconf CLK_TCK)
# cpu_ticks PID: user+system CPU of PID in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# machine_ticks: "busy idle" clock ticks of the whole machine (/proc/stat;
# iowait counts as idle).
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }

# The servers, in the order each round runs them: label, then how the
# server's commits reach the disk.
SERVERS=(miraj mariadb nullserver miraj-nodisk mariadb-nodisk nullserver-nodisk)
declare -A PORT PID DESC
declare -A TPS P95 CPU IDLE # "label round" -> figure

start_servers() {
	start_miraj miraj
	PORT[miraj]=$MIRAJ_PORT PID[miraj]=$MIRAJ_PID
	DESC[miraj]="Miraj, --save-policy commit"
	start_miraj miraj-nodisk --save-policy periodic
	PORT[miraj-nodisk]=$MIRAJ_PORT PID[miraj-nodisk]=$MIRAJ_PID
	DESC[miraj-nodisk]="Miraj, --save-policy periodic (fsync once a second)"
	start_private_mariadb mariadb --skip-log-bin --sync-binlog=0 --innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=1G
	PORT[mariadb]=$MARIADB_PORT PID[mariadb]=$MARIADB_PID
	DESC[mariadb]="MariaDB, innodb_flush_log_at_trx_commit=1"
	start_private_mariadb mariadb-nodisk --skip-log-bin --sync-binlog=0 --innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=1G
	PORT[mariadb-nodisk]=$MARIADB_PORT PID[mariadb-nodisk]=$MARIADB_PID
	DESC[mariadb-nodisk]="MariaDB, innodb_flush_log_at_trx_commit=0 (log written and flushed once a second)"
	local s
	for s in miraj miraj-nodisk mariadb mariadb-nodisk; do
		prepare_db "${PORT[$s]}" sbtest "$ceilTables" "$ceilRows" 1
	done
	start_null nullserver true "nullserver, COMMIT durable (Miraj's journal and group commit)"
	start_null nullserver-nodisk false "nullserver, COMMIT appended, never synced"
}

# start_null LABEL DURABLE DESCRIPTION starts a nullserver on a free port.
start_null() {
	local port
	free_port port
	mkdir -p "$WORK/run-$1"
	"$WORK/nullserver" --addr "127.0.0.1:$port" --journal "$WORK/run-$1/journal" --durable="$2" \
		>"$WORK/run-$1/stderr.log" 2>&1 &
	PID[$1]=$!
	track_pid "${PID[$1]}"
	PORT[$1]=$port
	DESC[$1]=$3
	wait_sql "$1" "${PID[$1]}" "$port" "$WORK/run-$1/stderr.log"
}

# sysbench_cell LOG SECS runs the cell for SECS seconds against the server
# of SB, its output in LOG.
sysbench_cell() {
	waited "$1" timeout $(($2 + runGrace)) sysbench "$CEIL_WORKLOAD" "${SB[@]}" \
		--tables="$ceilTables" --table-size="$ceilRows" --threads="$CEIL_THREADS" --time="$2" \
		--report-interval=0 run
}

# warm_up LABEL runs the cell against LABEL's server for CEIL_WARMUP seconds
# (the first seconds after a load run slower: the loaded tables' garbage).
warm_up() {
	((CEIL_WARMUP > 0)) || return 0
	sb "${PORT[$1]}" sbtest
	sysbench_cell "$WORK/warmup-$1.log" "$CEIL_WARMUP" || die "$1: sysbench failed (log: $WORK/warmup-$1.log)"
}

# run_one LABEL ROUND runs the cell against LABEL's server.
run_one() {
	local s=$1 r=$2 logf=$WORK/run-$1-$2.log c0 c1 m0 m1
	sb "${PORT[$s]}" sbtest
	c0=$(cpu_ticks "${PID[$s]}")
	m0=$(machine_ticks)
	sysbench_cell "$logf" "$CEIL_TIME" || die "$s: sysbench failed (log: $logf)"
	c1=$(cpu_ticks "${PID[$s]}")
	m1=$(machine_ticks)
	sysbench_stats "$logf"
	[[ -n $SB_TPS ]] || die "$s: no figures in $logf"
	TPS[$s $r]=$SB_TPS
	P95[$s $r]=$SB_P95
	CPU[$s $r]=$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" -v n="$SB_TXNS" 'BEGIN { printf "%.0f", (b - a) / hz / n * 1e6 }')
	IDLE[$s $r]=$(awk -v a="$m0" -v b="$m1" 'BEGIN { split(a, x, " "); split(b, y, " ");
		busy = y[1] - x[1]; idle = y[2] - x[2]; printf "%.0f", 100 * idle / (busy + idle) }')
	log "round $r $s: $SB_TPS tps, p95 $SB_P95 ms, ${CPU[$s $r]} µs server CPU a transaction, ${IDLE[$s $r]} % idle"
}

# mean LABEL FIELD_ARRAY_NAME: the mean over the rounds.
mean() {
	local -n a=$2
	local r vals=()
	for ((r = 1; r <= CEIL_ROUNDS; r++)); do vals+=("${a[$1 $r]}"); done
	printf '%s\n' "${vals[@]}" | awk '{ s += $1 } END { printf "%.1f", s / NR }'
}

report() {
	local s r rounds base
	base=$(mean mariadb TPS)
	{
		echo "# What this machine allows: $CEIL_WORKLOAD at $CEIL_THREADS clients"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "- mariadb: $(mariadbd --version 2>/dev/null | awk '{ print $3 }' || echo unknown), binlog off, buffer pool 1G"
		echo "- sysbench $(sysbench --version | awk '{ print $2 }'): $ceilTables tables x $ceilRows rows, ${CEIL_TIME}s per server and round, $CEIL_ROUNDS rounds, the servers in turn (after ${CEIL_WARMUP}s of the cell each, not counted)"
		echo "- machine: $(nproc) CPUs, load average at start: $LOAD_AT_START"
		echo
		echo "nullserver (bench/nullserver) answers every statement without doing its work: it stands for a"
		echo "server whose SQL costs nothing. Ratios are to MariaDB with durable commits (the benchmark's)."
		echo
		echo "| server | tps by round | mean tps | ratio | p95 ms (worst) | server CPU µs/tx | machine idle % |"
		echo "|---|---|--:|--:|--:|--:|--:|"
		for s in "${SERVERS[@]}"; do
			rounds=""
			for ((r = 1; r <= CEIL_ROUNDS; r++)); do rounds+="${rounds:+ / }${TPS[$s $r]}"; done
			local worst
			worst=$(for ((r = 1; r <= CEIL_ROUNDS; r++)); do echo "${P95[$s $r]}"; done | sort -g | tail -1)
			echo "| ${DESC[$s]} | $rounds | $(mean "$s" TPS) | $(ratio "$(mean "$s" TPS)" "$base")x | $worst | $(mean "$s" CPU) | $(mean "$s" IDLE) |"
		done
		echo
		echo "1.5 x MariaDB's durable rate: $(awk -v b="$base" 'BEGIN { printf "%.0f", 1.5 * b }') transactions a second."
	} >"$CEIL_OUT"
	log "wrote $CEIL_OUT"
	cat "$CEIL_OUT"
}

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	bench_init miraj-ceiling
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	log "building miraj-server and nullserver"
	(cd "$REPO" && go build -o "$WORK/miraj-server" ./cmd/miraj-server && go build -o "$WORK/nullserver" ./bench/nullserver)
	start_servers
	local r s
	for s in "${SERVERS[@]}"; do warm_up "$s"; done
	for ((r = 1; r <= CEIL_ROUNDS; r++)); do
		for s in "${SERVERS[@]}"; do run_one "$s" "$r"; done
	done
	report
}

main "$@"
