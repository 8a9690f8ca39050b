#!/usr/bin/env bash
# tls.sh measures what TLS on the client port costs: sysbench's
# oltp_point_select and oltp_write_only at 4 threads, over TLS and in the
# clear, against Miraj and a private MariaDB server side by side, in one
# run on this machine. See bench/README.md.
#
# Every knob is an environment variable; the defaults are the full-size run.
#   BENCH_TIME=20                 seconds per server, mode and cell, in two halves
#   BENCH_TABLES=10               tables loaded by oltp_common prepare
#   BENCH_ROWS=10000              rows per table
#   BENCH_THREADS="4"             client thread counts
#   BENCH_WORKLOADS="oltp_point_select oltp_write_only"
#   BENCH_OUT=bench/results/tls-latest.md   markdown results file
#   BENCH_MARIADB_BUFFER_POOL=1G  innodb_buffer_pool_size of the private MariaDB
#   BENCH_KEEP_WORK=0             1 keeps the temp dir (server logs, sysbench logs)
#
# Both servers serve the same certificate (ECDSA P-256, made for the run
# with miraj-cluster-pki) with durable commits. The TLS cells run with
# require_secure_transport=ON on both, so that a sysbench connecting in the
# clear fails the cell instead of measuring the wrong thing.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_TIME=${BENCH_TIME:-20}
BENCH_TABLES=${BENCH_TABLES:-10}
BENCH_ROWS=${BENCH_ROWS:-10000}
BENCH_THREADS=${BENCH_THREADS:-"4"}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-"oltp_point_select oltp_write_only"}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/tls-latest.md}
BENCH_MARIADB_BUFFER_POOL=${BENCH_MARIADB_BUFFER_POOL:-1G}

# A sysbench run that outlives its --time by this much is hung: it is killed.
readonly runGrace=120
readonly modes="plain tls"

# ---------------------------------------------------------------- TLS

# make_certs writes WORK/tls/{cluster-ca.pem,server/node.pem,server/node-key.pem}:
# an authority and a certificate for 127.0.0.1 that both servers serve.
make_certs() {
	"$WORK/bin/miraj-cluster-pki" init-ca --name tls-bench --out "$WORK/tls" >"$WORK/pki.log" 2>&1 ||
		die "miraj-cluster-pki init-ca failed: $(cat "$WORK/pki.log")"
	"$WORK/bin/miraj-cluster-pki" issue-node --ca "$WORK/tls" --id server --san 127.0.0.1 \
		--out "$WORK/tls/server" >>"$WORK/pki.log" 2>&1 || die "miraj-cluster-pki issue-node failed: $(tail -n 5 "$WORK/pki.log")"
	CA=$WORK/tls/cluster-ca.pem CERT=$WORK/tls/server/node.pem KEY=$WORK/tls/server/node-key.pem
}

# sysbench_tls sets SB_TLS to sysbench's options of a TLS connection that
# trusts CA: --mysql-ssl takes a mode and --mysql-ssl-ca a file in sysbench
# 1.1; in 1.0 it is on|off, and the client reads cacert.pem, client-cert.pem
# and client-key.pem from its working directory (SB_DIR, made here, with a
# client certificate of the same authority).
sysbench_tls() {
	local help
	help=$(sysbench --help 2>&1 || true)
	SB_DIR=$WORK
	if grep -q -- '--mysql-ssl=STRING' <<<"$help"; then
		SB_TLS=(--mysql-ssl=REQUIRED --mysql-ssl-ca="$CA")
	elif grep -q -- '--mysql-ssl\[=on|off\]' <<<"$help"; then
		SB_TLS=(--mysql-ssl=on)
		SB_DIR=$WORK/sbtls
		"$WORK/bin/miraj-cluster-pki" issue-node --ca "$WORK/tls" --id sysbench --san 127.0.0.1 \
			--out "$SB_DIR" >>"$WORK/pki.log" 2>&1 || die "miraj-cluster-pki issue-node (client) failed: $(tail -n 5 "$WORK/pki.log")"
		cp "$CA" "$SB_DIR/cacert.pem"
		cp "$SB_DIR/node.pem" "$SB_DIR/client-cert.pem"
		cp "$SB_DIR/node-key.pem" "$SB_DIR/client-key.pem"
	else
		die "this sysbench has no --mysql-ssl option"
	fi
}

# secure PORT on|off sets require_secure_transport on the server of PORT
# (over TLS, which it takes either way).
secure() {
	sql "$1" --ssl --ssl-ca="$CA" -e "SET GLOBAL require_secure_transport = $2" ||
		die "SET GLOBAL require_secure_transport = $2 on port $1 failed"
}

# ---------------------------------------------------------------- sysbench

# prepare NAME PORT loads the sysbench tables into database sbtest.
prepare() {
	local name=$1 port=$2 logf=$WORK/prepare-$1.log
	sql "$port" -e "CREATE DATABASE sbtest" || die "$name: CREATE DATABASE sbtest failed"
	sb "$port" sbtest
	if ! waited "$logf" sysbench oltp_common "${SB[@]}" --tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" prepare; then
		tail -n 20 "$logf" >&2
		die "$name: sysbench prepare failed (log: $logf)"
	fi
}

declare -A TPS P95 FATAL

# run_cell SERVER PORT PID MODE WORKLOAD THREADS SECS PART runs sysbench for
# SECS seconds and adds the run to the cell's figures: tps (the mean of the
# two parts), p95 latency (the worse part's) and any fatal error.
run_cell() {
	local srv=$1 port=$2 pid=$3 mode=$4 w=$5 t=$6 secs=$7 part=$8 key="$1|$4|$5|$6"
	local logf=$WORK/logs/$srv-$mode-$w-$t-$part.log tps="" fatal="" rc=0 tlsArgs=()
	log "$srv $mode $w threads=$t (part $part)"
	if ! kill -0 "$pid" 2>/dev/null; then
		TPS[$key]="" FATAL[$key]="server not running"
		return
	fi
	[[ $mode == tls ]] && tlsArgs=("${SB_TLS[@]}")
	sb "$port" sbtest
	pushd "$SB_DIR" >/dev/null
	waited "$logf" timeout $((secs + runGrace)) sysbench "$w" "${SB[@]}" "${tlsArgs[@]}" \
		--tables="$BENCH_TABLES" --table-size="$BENCH_ROWS" --threads="$t" --time="$secs" \
		--report-interval=0 --verbosity=5 run || rc=$?
	popd >/dev/null
	sysbench_stats "$logf"
	tps=$SB_TPS
	if ((rc != 0)) || [[ -z $tps ]]; then
		tps=""
		fatal=$(awk '/FATAL|ALERT|error/ && !/ignored errors/ && n++ < 3' "$logf" | tr '\n' ' ' | cut -c1-300)
		[[ -n $fatal ]] || fatal="sysbench exit status $rc"
		log "$srv $mode $w threads=$t failed: $fatal"
	fi
	if [[ $part == 1 ]]; then
		TPS[$key]=$tps P95[$key]=$SB_P95 FATAL[$key]=$fatal
		return
	fi
	if [[ -z ${TPS[$key]:-} || -z $tps ]]; then
		TPS[$key]=""
	else
		TPS[$key]=$(awk -v a="${TPS[$key]}" -v b="$tps" 'BEGIN { printf "%.2f", (a + b) / 2 }')
	fi
	P95[$key]=$(awk -v a="${P95[$key]:-0}" -v b="${SB_P95:-0}" 'BEGIN { print (a > b ? a : b) }')
	FATAL[$key]="${FATAL[$key]:-}${FATAL[$key]:+${fatal:+; }}$fatal"
}

# ---------------------------------------------------------------- report

# report writes the markdown results to BENCH_OUT and prints them: each
# cell's rates, Miraj / MariaDB in each mode, and each server's rate over
# TLS / in the clear.
report() {
	local out=$1 w t mode m d
	{
		echo "# TLS on the client port: Miraj vs MariaDB, sysbench"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: ${MIRAJ_BUILT}, --save-policy commit"
		echo "- mariadb: $("$MARIADBD" --version | awk '{ print $3 }'), innodb_flush_log_at_trx_commit=1, binlog off, buffer pool $BENCH_MARIADB_BUFFER_POOL"
		echo "- certificate: ECDSA P-256 (both servers); sysbench TLS options: ${SB_TLS[*]/$CA/CA}"
		echo "- $(sysbench --version): ${BENCH_TABLES} tables x ${BENCH_ROWS} rows, ${BENCH_TIME}s per server, mode and cell (two halves: Miraj, MariaDB, MariaDB, Miraj), threads: ${BENCH_THREADS}"
		echo "- machine: $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load average at start: ${LOAD_AT_START}"
		echo
		echo "Figures are indicative: the machine may be shared with other work."
		echo
		echo "| workload | threads | mode | Miraj tps | MariaDB tps | Miraj/MariaDB | Miraj p95 ms | MariaDB p95 ms |"
		echo "|---|---:|---|---:|---:|---:|---:|---:|"
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				for mode in $modes; do
					m=${TPS[miraj|$mode|$w|$t]:-} d=${TPS[mariadb|$mode|$w|$t]:-}
					printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$w" "$t" "$mode" "${m:-ERR}" "${d:-ERR}" \
						"$(ratio "$m" "$d" || true)" "${P95[miraj|$mode|$w|$t]:-}" "${P95[mariadb|$mode|$w|$t]:-}"
				done
			done
		done
		echo
		echo "TLS / in the clear (tps), each server against itself:"
		echo
		echo "| workload | threads | Miraj | MariaDB |"
		echo "|---|---:|---:|---:|"
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				printf '| %s | %s | %s | %s |\n' "$w" "$t" \
					"$(ratio "${TPS[miraj|tls|$w|$t]:-}" "${TPS[miraj|plain|$w|$t]:-}" || true)" \
					"$(ratio "${TPS[mariadb|tls|$w|$t]:-}" "${TPS[mariadb|plain|$w|$t]:-}" || true)"
			done
		done
		local k any=0
		for k in "${!FATAL[@]}"; do
			[[ -n ${FATAL[$k]} ]] || continue
			((any++)) || {
				echo
				echo "Failed runs:"
				echo
			}
			printf -- '- %s: %s\n' "$k" "${FATAL[$k]}"
		done
	} >"$out"
	cat "$out"
}

# ---------------------------------------------------------------- main

main() {
	ensure_packages mariadbd mariadb mariadb-install-db sysbench
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-tls-bench
	mkdir -p "$WORK/logs" "$WORK/bin" "$(dirname "$BENCH_OUT")"

	log "building miraj-server and miraj-cluster-pki"
	MIRAJ_BUILT="$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)')"
	(cd "$REPO" && go build -o "$WORK/bin" ./cmd/miraj-server ./cmd/miraj-cluster-pki)
	cp "$WORK/bin/miraj-server" "$WORK/miraj-server" # start_miraj runs WORK/miraj-server
	make_certs
	sysbench_tls

	start_miraj miraj --ssl-cert "$CERT" --ssl-key "$KEY" --ssl-ca "$CA"
	start_private_mariadb mariadb --skip-log-bin --sync-binlog=0 --innodb-flush-log-at-trx-commit=1 \
		--innodb-buffer-pool-size="$BENCH_MARIADB_BUFFER_POOL" --ssl-cert="$CERT" --ssl-key="$KEY" --ssl-ca="$CA"

	log "loading ${BENCH_TABLES}x${BENCH_ROWS} rows into each server"
	prepare miraj "$MIRAJ_PORT"
	prepare mariadb "$MARIADB_PORT"

	# Same workload, mode and thread count on both servers back to back, in
	# two halves ordered Miraj, MariaDB, MariaDB, Miraj: drift in the
	# machine's speed during a cell hits both alike.
	local w t mode half=$(((BENCH_TIME + 1) / 2))
	for mode in $modes; do
		if [[ $mode == tls ]]; then
			secure "$MIRAJ_PORT" ON
			secure "$MARIADB_PORT" ON
		fi
		for w in $BENCH_WORKLOADS; do
			for t in $BENCH_THREADS; do
				run_cell miraj "$MIRAJ_PORT" "$MIRAJ_PID" "$mode" "$w" "$t" "$half" 1
				run_cell mariadb "$MARIADB_PORT" "$MARIADB_PID" "$mode" "$w" "$t" "$half" 1
				run_cell mariadb "$MARIADB_PORT" "$MARIADB_PID" "$mode" "$w" "$t" "$half" 2
				run_cell miraj "$MIRAJ_PORT" "$MIRAJ_PID" "$mode" "$w" "$t" "$half" 2
			done
		done
		if [[ $mode == tls ]]; then
			secure "$MIRAJ_PORT" OFF
			secure "$MARIADB_PORT" OFF
		fi
	done
	stop_pid "$MIRAJ_PID"
	stop_pid "$MARIADB_PID"

	report "$BENCH_OUT"
	log "results written to $BENCH_OUT"
}

main "$@"
