# shellcheck shell=bash
# shellcheck disable=SC2034 # functions set variables for their callers
# lib.sh: helpers shared by the bench/ scripts. Source it, then call
# bench_init once: it installs the cleanup trap.
#
# What a script gets:
#   log, die                   messages on stderr
#   WORK                       temp dir (bench_workdir), removed on exit
#   PIDS, track_pid, stop_pid  every process started is stopped on exit
#   waited LOG CMD...          runs CMD in the background, interruptible
#   free_port VAR              a TCP port nothing listens on
#   sql PORT ARGS...           the mariadb client as root@127.0.0.1
#   wait_sql NAME PID PORT LOG waits until a server answers
#   kib_of / mib_of PID FIELD  VmRSS, VmHWM… of a process
#   sb PORT DB                 sysbench connection options in SB
#   sysbench_stats LOG         parses tps, p95, errors of a sysbench run
#   percentile P FILE          nearest-rank percentile of numbers, one a line
#   ratio, ge                  arithmetic on decimals
#   start_miraj NAME           a miraj-server of our own, on a free port
#   start_private_mariadb      a mariadbd of our own, on a free port
#   note, NOTES                anomalies kept for the report
#   wait_until TIMEOUT CMD...  polls CMD until it succeeds
#   prepare_db                 CREATE DATABASE + sysbench prepare
#   make_cluster, start_node, stop_node, designate_primary, repl_rows,
#   miraj_caught_up            a Miraj cluster (n1 primary) on free ports
#   start_mariadb_pair, mariadb_caught_up   a MariaDB primary + replica
#
# Settings (environment):
#   BENCH_KEEP_WORK=0          1 keeps the temp dir (logs) after the run

BENCH_KEEP_WORK=${BENCH_KEEP_WORK:-0}
# How long a server may take to accept connections, and to stop cleanly
# before it is killed.
BENCH_START_TIMEOUT=${BENCH_START_TIMEOUT:-120}
BENCH_STOP_TIMEOUT=${BENCH_STOP_TIMEOUT:-60}
# Ports are picked below the kernel's ephemeral range (32768+) so that an
# outgoing connection cannot grab one between the check and the bind.
BENCH_PORT_LOW=${BENCH_PORT_LOW:-20000}
BENCH_PORT_HIGH=${BENCH_PORT_HIGH:-32000}

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# ---------------------------------------------------------------- processes

PIDS=() # every process started and not stopped yet, oldest first
WORK=""

track_pid() { PIDS+=("$1"); }

forget_pid() {
	local keep=() p
	for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}

# stop_pid PID [SIGNAL] sends SIGNAL (TERM) and waits for the process to
# exit, then kills it if it outlives BENCH_STOP_TIMEOUT.
stop_pid() {
	local pid=$1 sig=${2:-TERM} deadline=$((SECONDS + BENCH_STOP_TIMEOUT))
	if kill -"$sig" "$pid" 2>/dev/null; then
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid did not stop in ${BENCH_STOP_TIMEOUT}s: killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	forget_pid "$pid"
}

# waited LOG CMD... runs CMD with its output in LOG and returns its status.
# CMD runs in the background and the shell waits for it, because bash runs
# a trap only once the foreground command is done: this way an interrupt
# stops the script (and, through the cleanup, CMD) at once.
waited() {
	local logf=$1 pid rc=0
	shift
	"$@" >"$logf" 2>&1 &
	pid=$!
	track_pid "$pid"
	wait "$pid" || rc=$?
	forget_pid "$pid"
	return "$rc"
}

# bench_cleanup stops every tracked process, newest first (clients before
# the servers they use), and removes WORK unless BENCH_KEEP_WORK=1.
bench_cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[i]}"; done
	if [[ -n $WORK && -d $WORK ]]; then
		if [[ $BENCH_KEEP_WORK == 1 ]]; then
			log "work dir kept: $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# bench_init PREFIX creates WORK (/tmp/PREFIX.XXXXXX) and installs the trap.
bench_init() {
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	WORK=$(mktemp -d "/tmp/$1.XXXXXX")
}

# ---------------------------------------------------------------- tools

# ensure_packages CMD... installs mariadb-server, mariadb-client and sysbench
# with apt when one of the commands is missing (needs root).
ensure_packages() {
	local missing=0 c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || [[ -x /usr/sbin/$c ]] || missing=1
	done
	((missing)) || return 0
	[[ $(id -u) == 0 ]] || die "mariadb-server, mariadb-client and sysbench are missing; run as root to install them"
	log "installing mariadb-server mariadb-client sysbench"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server mariadb-client sysbench
}

# port_in_use PORT asks ss (iproute2) whether something listens on PORT,
# or, where ss is missing (minimal containers), tries to connect to it.
port_in_use() {
	if command -v ss >/dev/null 2>&1; then
		[[ -n $(ss -Hltn "sport = :$1") ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# free_port VAR sets VAR to a TCP port on which nothing listens and that this
# run has not handed out yet.
USED_PORTS=" "
free_port() {
	local p i
	for ((i = 0; i < 500; i++)); do
		p=$((BENCH_PORT_LOW + (RANDOM * 32768 + RANDOM) % (BENCH_PORT_HIGH - BENCH_PORT_LOW)))
		[[ $USED_PORTS == *" $p "* ]] && continue
		if ! port_in_use "$p"; then
			USED_PORTS+="$p "
			printf -v "$1" '%s' "$p"
			return 0
		fi
	done
	die "no free port found in $BENCH_PORT_LOW-$BENCH_PORT_HIGH"
}

# sql PORT ARGS... runs the mariadb client as root@127.0.0.1.
sql() {
	local port=$1
	shift
	mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot --connect-timeout=5 "$@"
}

# wait_sql NAME PID PORT LOG waits until the server answers SELECT 1.
wait_sql() {
	local name=$1 pid=$2 port=$3 logf=$4 deadline=$((SECONDS + BENCH_START_TIMEOUT))
	while ((SECONDS < deadline)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$logf" >&2 || true
			die "$name exited during startup (log: $logf)"
		fi
		sql "$port" -e 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	tail -n 20 "$logf" >&2 || true
	die "$name did not accept connections within ${BENCH_START_TIMEOUT}s"
}

# kib_of PID FIELD prints FIELD (VmRSS, VmHWM) of /proc/PID/status in KiB.
kib_of() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# mib_of PID FIELD prints it in MiB, or "n/a" once the process is gone.
mib_of() { awk -v f="$2:" '$1 == f { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo n/a; }

# ---------------------------------------------------------------- sysbench

# sb PORT DB sets SB to the sysbench connection options for 127.0.0.1:PORT.
sb() {
	SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1"
		--mysql-user=root --mysql-password= --mysql-db="$2")
}

# sysbench_stats LOG sets SB_TPS, SB_TXNS (transactions), SB_P95 (ms),
# SB_IGN (ignored errors) and SB_CODES (their error codes) from a sysbench
# run's output.
sysbench_stats() {
	SB_TXNS=$(awk '/^ *transactions:/ { print $2 }' "$1")
	SB_TPS=$(awk '/^ *transactions:/ { gsub(/\(/, "", $3); print $3 }' "$1")
	SB_P95=$(awk '/95th percentile:/ { print $3 }' "$1")
	SB_IGN=$(awk '/ignored errors:/ { print $3 }' "$1")
	SB_CODES=$(grep -o 'Ignoring error [0-9]*' "$1" | awk '{ print $3 }' | sort -u | paste -sd, - || true)
}

# ---------------------------------------------------------------- numbers

# percentile P FILE prints the nearest-rank P-th percentile of the numbers
# in FILE (one a line; empty lines skipped), or nothing if there are none.
percentile() {
	{ grep -v '^$' "$2" || true; } | sort -g | awk -v p="$1" '{ v[NR] = $1 }
		END { if (NR == 0) exit; i = int(p / 100 * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}

# ratio A B prints A/B to three places, enough that a ratio under a target
# never prints as the target (0.998 is not "1.00"); the targets are checked
# on the exact ratio (exact_ratio).
ratio() { [[ -n $1 && -n $2 ]] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'; }
exact_ratio() { [[ -n $1 && -n $2 ]] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.9f", a / b }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# ---------------------------------------------------------------- miraj

# start_miraj NAME [OPTIONS...] starts a fresh WORK/miraj-server (durable
# commits, unless OPTIONS say otherwise: they come last) in WORK/NAME; sets
# MIRAJ_PID and MIRAJ_PORT.
start_miraj() {
	local name=$1 dir=$WORK/$1 port
	shift
	mkdir -p "$dir"
	free_port port
	"$WORK/miraj-server" --root "$dir/data" --port "$port" --bind 127.0.0.1 \
		--save-policy commit "$@" >"$dir/stderr.log" 2>&1 &
	MIRAJ_PID=$!
	track_pid "$MIRAJ_PID"
	MIRAJ_PORT=$port
	wait_sql "miraj-server ($name)" "$MIRAJ_PID" "$port" "$dir/stderr.log"
	log "miraj-server ($name) up: pid $MIRAJ_PID port $port"
}

# ---------------------------------------------------------------- mariadb

# start_private_mariadb NAME [MARIADBD OPTIONS...] starts a fresh mariadbd
# in WORK/NAME and sets MARIADB_PID and MARIADB_PORT. --no-defaults keeps
# /etc/mysql out of it: own datadir, socket, port and pid file, so a system
# MariaDB service is not touched. The options are appended to the command.
start_private_mariadb() {
	local name=$1 dir=$WORK/$1 port mariadbd
	shift
	mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	mkdir -p "$dir"
	mariadb-install-db --no-defaults --datadir="$dir/data" --user=root \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$dir/install.log" 2>&1 || {
		tail -n 20 "$dir/install.log" >&2
		die "mariadb-install-db failed"
	}
	free_port port
	"$mariadbd" --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir" \
		--socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
		--port="$port" --bind-address=127.0.0.1 --skip-name-resolve --max-connections=500 \
		"$@" >"$dir/stderr.log" 2>&1 &
	MARIADB_PID=$!
	track_pid "$MARIADB_PID"
	MARIADB_PORT=$port
	wait_sql "mariadbd ($name)" "$MARIADB_PID" "$port" "$dir/error.log"
	log "mariadbd ($name) up: pid $MARIADB_PID port $port"
}

# ---------------------------------------------------------------- run notes

NOTES=() # anomalies met during the run, for the report

# note MSG logs MSG and keeps it for the report's anomalies.
note() {
	log "NOTE: $*"
	NOTES+=("$*")
}

# wait_until TIMEOUT CMD... polls CMD every 0.1 s; sets WAITED to the
# seconds it took; fails on timeout.
wait_until() {
	local timeout=$1 t0
	shift
	t0=$(date +%s.%N)
	local deadline=$((SECONDS + timeout))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			WAITED=""
			return 1
		fi
		sleep 0.1
	done
	WAITED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# prepare_db PORT DB TABLES ROWS THREADS creates DB and loads it with
# sysbench; sets LOAD_SECS.
prepare_db() {
	local port=$1 db=$2 tables=$3 rows=$4 threads=$5 t0 logf=$WORK/prepare-$1-$2.log
	sql "$port" -e "CREATE DATABASE $db" || die "CREATE DATABASE $db on port $port failed"
	sb "$port" "$db"
	t0=$(date +%s.%N)
	if ! waited "$logf" sysbench oltp_common "${SB[@]}" --tables="$tables" --table-size="$rows" \
		--threads="$threads" prepare; then
		tail -n 20 "$logf" >&2
		die "sysbench prepare of $db on port $port failed (log: $logf)"
	fi
	LOAD_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# ---------------------------------------------------------------- miraj cluster
#
# A cluster of miraj-server nodes on 127.0.0.1, with the binaries in
# WORK/bin (miraj-server, miraj-cluster-pki). Node n1 is always the one
# designated primary.

declare -A CPORT RPORT NPID # per node: client port, inter-node port, pid
# Extra lines for the [cluster] table of every cluster.toml (sync_commit…),
# one key a line; set before make_cluster.
CLUSTER_TOML_EXTRA=""

# make_cluster NODE... writes a CA, a certificate and a cluster.toml per
# node, each with a free client port and a free inter-node port.
make_cluster() {
	local id seeds="" members=""
	for id in "$@"; do
		free_port "CPORT[$id]"
		free_port "RPORT[$id]"
		seeds+="${seeds:+, }\"127.0.0.1:${RPORT[$id]}\""
		members+="${members:+, }\"$id\""
	done
	"$WORK/bin/miraj-cluster-pki" init-ca --name bench --out "$WORK/pki" >"$WORK/pki.log" 2>&1 ||
		die "miraj-cluster-pki init-ca failed: $(cat "$WORK/pki.log")"
	for id in "$@"; do
		"$WORK/bin/miraj-cluster-pki" issue-node --ca "$WORK/pki" --id "$id" --san 127.0.0.1 \
			--out "$WORK/$id" >>"$WORK/pki.log" 2>&1 || die "miraj-cluster-pki issue-node $id failed: $(tail -n 5 "$WORK/pki.log")"
		cat >"$WORK/$id/cluster.toml" <<TOML
[node]
id = "$id"
listen = "127.0.0.1:${RPORT[$id]}"
advertise = "127.0.0.1:${RPORT[$id]}"

[cluster]
name = "bench"
seeds = [$seeds]
tls_cert = "node.pem"
tls_key = "node-key.pem"
tls_ca = "cluster-ca.pem"
members = [$members]
${CLUSTER_TOML_EXTRA}
TOML
	done
}

# start_node ID [MIRAJ-SERVER OPTIONS...] starts (or restarts) a node; its
# output is appended to WORK/ID.log.
start_node() {
	local id=$1
	shift
	"$WORK/bin/miraj-server" --root "$WORK/data-$id" --port "${CPORT[$id]}" --bind 127.0.0.1 \
		--cluster-config "$WORK/$id/cluster.toml" --log "$@" >>"$WORK/$id.log" 2>&1 &
	NPID[$id]=$!
	track_pid "${NPID[$id]}"
	if [[ ${BENCH_PIN:-0} == 1 && $id == n1 ]]; then
		# n1 alone on CPU 0 (bench/replication.sh BENCH_PIN): all its threads,
		# and those it makes later inherit it.
		taskset -a -p -c 0 "${NPID[$id]}" >/dev/null
	fi
	wait_sql "miraj $id" "${NPID[$id]}" "${CPORT[$id]}" "$WORK/$id.log"
	log "miraj $id up: pid ${NPID[$id]}, client port ${CPORT[$id]}, inter-node port ${RPORT[$id]}"
}

stop_node() {
	[[ -n ${NPID[$1]:-} ]] || return 0
	stop_pid "${NPID[$1]}"
	NPID[$1]=""
	log "miraj $1 stopped"
}

# designate_primary makes n1 the primary and waits until it acts as one.
designate_primary() {
	local port=${CPORT[n1]} role="" deadline=$((SECONDS + 60))
	sql "$port" -e "SET GLOBAL cluster_role = 'primary'" || die "SET GLOBAL cluster_role failed"
	while ((SECONDS < deadline)); do
		role=$(sql "$port" -N -B -e 'SELECT @@cluster_role' 2>/dev/null || true)
		[[ $role == PRIMARY ]] && break
		sleep 0.1
	done
	[[ $role == PRIMARY ]] || die "n1 is still $role 60s after its designation"
	log "n1 is PRIMARY of epoch $(sql "$port" -N -B -e 'SELECT @@cluster_epoch')"
}

# repl_rows DB prints "node applied primary" for every secondary of DB, as
# the primary sees it (the primary's own rows have no SENT_LSN).
repl_rows() {
	sql "${CPORT[n1]}" -N -B -e "SELECT NODE_ID, APPLIED_LSN, PRIMARY_LSN FROM information_schema.MIRAJ_REPLICATION
		WHERE \`DATABASE\` = '$1' AND SENT_LSN IS NOT NULL" 2>/dev/null
}

# miraj_caught_up DB NODE... succeeds when every NODE has applied DB up to the
# primary's log end, as the primary sees it and as the node itself reports.
# Both are needed: after sending a copy, the primary counts it as applied
# at once, while the node may still be installing it.
miraj_caught_up() {
	local db=$1 rows id end own
	shift
	rows=$(repl_rows "$db") || return 1
	end=$(sql "${CPORT[n1]}" -N -B -e "SELECT PRIMARY_LSN FROM information_schema.MIRAJ_REPLICATION
		WHERE NODE_ID = @@cluster_node_id AND \`DATABASE\` = '$db'" 2>/dev/null) || return 1
	[[ -n $end ]] || return 1
	for id in "$@"; do
		awk -v id="$id" -v end="$end" '$1 == id && $2 == end { ok = 1 } END { exit !ok }' <<<"$rows" || return 1
		own=$(sql "${CPORT[$id]}" -N -B -e "SELECT APPLIED_LSN FROM information_schema.MIRAJ_REPLICATION
			WHERE NODE_ID = @@cluster_node_id AND \`DATABASE\` = '$db'" 2>/dev/null) || return 1
		[[ $own == "$end" ]] || return 1
	done
}

# ---------------------------------------------------------------- mariadb pair

MDB_P="" MDB_R="" MDB_PPID="" MDB_RPID="" # client ports and pids

# start_mariadb_pair [MARIADBD OPTIONS...] starts a private MariaDB primary
# (binlog in ROW format, sync_binlog=1) and a replica of it (no binlog, one
# SQL thread, GTID positions), both with innodb_flush_log_at_trx_commit=1
# and the given options, and starts replication. Options for one side only
# go in MDB_PRIMARY_OPTS and MDB_REPLICA_OPTS (arrays).
MDB_PRIMARY_OPTS=() MDB_REPLICA_OPTS=()
start_mariadb_pair() {
	start_private_mariadb mariadb-primary --innodb-flush-log-at-trx-commit=1 "$@" --server-id=1 \
		--log-bin=mysql-bin --binlog-format=ROW --sync-binlog=1 "${MDB_PRIMARY_OPTS[@]}"
	MDB_P=$MARIADB_PORT MDB_PPID=$MARIADB_PID
	start_private_mariadb mariadb-replica --innodb-flush-log-at-trx-commit=1 "$@" --server-id=2 \
		--skip-log-bin --relay-log=relay-bin --skip-slave-start "${MDB_REPLICA_OPTS[@]}"
	MDB_R=$MARIADB_PORT MDB_RPID=$MARIADB_PID
	sql "$MDB_R" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$MDB_P, MASTER_USER='root',
		MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos; START SLAVE" || die "CHANGE MASTER / START SLAVE failed"
}

# mariadb_caught_up succeeds when the replica has executed the primary's
# binlog up to its end.
mariadb_caught_up() {
	local m s
	m=$(sql "$MDB_P" -N -B -e 'SHOW MASTER STATUS' 2>/dev/null | awk '{ print $1, $2 }') || return 1
	s=$(sql "$MDB_R" -e 'SHOW SLAVE STATUS\G' 2>/dev/null |
		awk -F': ' '$1 ~ /Relay_Master_Log_File$/ { f = $2 } $1 ~ /Exec_Master_Log_Pos$/ { p = $2 } END { print f, p }') || return 1
	[[ -n $m && $m == "$s" ]]
}
