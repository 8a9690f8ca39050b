#!/usr/bin/env bash
# bulk.sh compares Miraj with a private MariaDB server on bulk statements of
# a million rows, on this machine, in one run. See bench/README.md.
#
#   BENCH_BULK_ROUNDS=3        rounds; each statement's median is reported
#   BENCH_BULK_ROWS=1000       rows of the seq table: the cross join makes its square
#   BENCH_OUT=bench/results/bulk-latest.md   markdown results file
#   BENCH_MARIADB_BUFFER_POOL=1G  innodb_buffer_pool_size of the private MariaDB
#   BENCH_KEEP_WORK=0          1 keeps the temp dir (server logs)
#
# The statements, each in autocommit on a fresh database per round, with
# durable commits on both sides (Miraj --save-policy commit, MariaDB
# innodb_flush_log_at_trx_commit=1):
#   insert_select  INSERT INTO big SELECT … FROM seq a CROSS JOIN seq b (1M rows)
#   copy           INSERT INTO big2 SELECT * FROM big (big2 made LIKE big)
#   update_all     UPDATE big SET k = k + 1
#   delete_all     DELETE FROM big2
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"

BENCH_BULK_ROUNDS=${BENCH_BULK_ROUNDS:-3}
BENCH_BULK_ROWS=${BENCH_BULK_ROWS:-1000}
BENCH_OUT=${BENCH_OUT:-$REPO/bench/results/bulk-latest.md}
BENCH_MARIADB_BUFFER_POOL=${BENCH_MARIADB_BUFFER_POOL:-1G}

# Target: Miraj's time / MariaDB's time, for the statements the target names.
readonly targetRatio=1.5
readonly statements="insert_select copy update_all delete_all"
readonly targeted=" insert_select copy "

# statement NAME prints the SQL of a timed statement.
statement() {
	case $1 in
	insert_select) echo "INSERT INTO big SELECT a.n * $BENCH_BULK_ROWS + b.n, b.n, CONCAT('c-', a.n, '-', b.n), 'pad' FROM seq a CROSS JOIN seq b" ;;
	copy) echo "INSERT INTO big2 SELECT * FROM big" ;;
	update_all) echo "UPDATE big SET k = k + 1" ;;
	delete_all) echo "DELETE FROM big2" ;;
	esac
}

# setup PORT makes a fresh database bulk with the seq table and empty big, big2.
setup() {
	local last=$((BENCH_BULK_ROWS - 1))
	sql "$1" -e "DROP DATABASE IF EXISTS bulk; CREATE DATABASE bulk"
	sql "$1" bulk -e "CREATE TABLE seq (n INT PRIMARY KEY);
		INSERT INTO seq WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < $last) SELECT n FROM s;
		CREATE TABLE big (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k));
		CREATE TABLE big2 LIKE big"
}

# timed PORT NAME runs statement NAME and prints its seconds.
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	sql "$1" bulk -e "$(statement "$2")"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# contents PORT prints what the statements left, to compare the servers.
contents() {
	sql "$1" bulk -N -e "SELECT COUNT(*), SUM(k), SUM(LENGTH(c)) FROM big; SELECT COUNT(*) FROM big2" | tr '\t' ' ' | paste -sd' ' -
}

# round SERVER PORT R runs every statement once on SERVER, keeping the times
# in WORK/times/SERVER.NAME.
round() {
	local s
	setup "$2"
	for s in $statements; do
		timed "$2" "$s" >>"$WORK/times/$1.$s"
		echo >>"$WORK/times/$1.$s"
		log "round $3 $1 $s: $(tail -n 1 "$WORK/times/$1.$s")s"
	done
	contents "$2" >"$WORK/contents.$1"
}

median() { percentile 50 "$1"; }

report() {
	local s m d r verdict all_ok=1
	{
		echo "# Bulk statements: Miraj vs MariaDB"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "- miraj: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (dirty)'), --save-policy commit"
		echo "- mariadb: $("$MARIADBD" --version | awk '{print $3}'), innodb_flush_log_at_trx_commit=1, binlog off, buffer pool $BENCH_MARIADB_BUFFER_POOL"
		echo "- rows: seq of $BENCH_BULK_ROWS, big and big2 of $((BENCH_BULK_ROWS * BENCH_BULK_ROWS)); $BENCH_BULK_ROUNDS rounds, Miraj and MariaDB alternating; medians"
		echo "- machine: $(nproc) CPUs; load average at start $LOAD_AT_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "- contents after the last round (count, SUM(k), SUM(LENGTH(c)) of big; count of big2): Miraj $(cat "$WORK/contents.miraj"), MariaDB $(cat "$WORK/contents.mariadb")"
		echo
		echo "| statement | Miraj s | MariaDB s | Miraj / MariaDB | target |"
		echo "|---|--:|--:|--:|---|"
		for s in $statements; do
			m=$(median "$WORK/times/miraj.$s")
			d=$(median "$WORK/times/mariadb.$s")
			r=$(ratio "$m" "$d")
			verdict=""
			if [[ $targeted == *" $s "* ]]; then
				if ge "$targetRatio" "$r"; then
					verdict="≤ ${targetRatio}×: met"
				else
					verdict="≤ ${targetRatio}×: missed"
					all_ok=0
				fi
			fi
			echo "| $s | $m | $d | ${r}× | $verdict |"
		done
		echo
		echo "\`$(statement insert_select)\`, then \`$(statement copy)\`, \`$(statement update_all)\`, \`$(statement delete_all)\`."
		if [[ $(cat "$WORK/contents.miraj") != "$(cat "$WORK/contents.mariadb")" ]]; then
			echo
			echo "**The servers' contents differ.**"
			all_ok=0
		fi
		((all_ok)) && echo && echo "Every target met."
	} | tee "$1"
}

main() {
	ensure_packages mariadbd mariadb mariadb-install-db
	command -v go >/dev/null 2>&1 || die "go is not in PATH: it is needed to build miraj-server"
	MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
	bench_init miraj-bulk
	mkdir -p "$WORK/times" "$(dirname "$BENCH_OUT")"
	log "building miraj-server"
	(cd "$REPO" && go build -o "$WORK/miraj-server" ./cmd/miraj-server)
	start_miraj miraj
	start_private_mariadb mariadb --skip-log-bin --innodb-flush-log-at-trx-commit=1 \
		--innodb-buffer-pool-size="$BENCH_MARIADB_BUFFER_POOL"
	local r
	for ((r = 1; r <= BENCH_BULK_ROUNDS; r++)); do
		round miraj "$MIRAJ_PORT" "$r"
		round mariadb "$MARIADB_PORT" "$r"
	done
	report "$BENCH_OUT"
	log "results written to $BENCH_OUT"
}

main "$@"
