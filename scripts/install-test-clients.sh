#!/usr/bin/env bash
# Installs the client libraries of the transaction matrix
# (test/system TestClientTransactions, scripts in test/clients) on Debian 12:
# PyMySQL, MySQLdb and SQLAlchemy for Debian's python3, MariaDB Connector/J
# and a JDK, node and npm, then mysql2 into test/clients/node/node_modules;
# mariadb-server, the reference server of the differential tests
# (test/diff, which start a private mariadbd of their own); and
# mariadb-client (mariadb-dump, mariadb) for test/system's dump test;
# haproxy for test/system's HAProxy failover test.
#
# Idempotent: it looks for each client first, and runs apt-get (with one
# apt-get update) only when something is missing. Node and Java count as
# present whatever package brought them (a NodeSource nodejs ships its own
# npm, and Debian's npm package would conflict with it).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
# Debian's modules are seen by /usr/bin/python3 only (not by a pyenv or
# venv python3 that may come first on PATH).
python_module() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $1" >/dev/null 2>&1; }
python_module pymysql || missing+=(python3-pymysql)
python_module MySQLdb || missing+=(python3-mysqldb)
python_module sqlalchemy || missing+=(python3-sqlalchemy)
[ -f /usr/share/java/mariadb-java-client.jar ] || missing+=(libmariadb-java)
# The tests run JdbcTx.java with java's source launcher, which needs a JDK
# (its compiler), not only a JRE.
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
{ command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } && command -v mariadb-install-db >/dev/null 2>&1 ||
	missing+=(mariadb-server)
# mariadb-dump and mariadb for the dump tests (TestDumpAllDatabasesRestores,
# TestDumpUnderGlobalReadLockIsConsistent), mariadb-admin for TestAdminTool.
{ command -v mariadb-dump && command -v mariadb-admin; } >/dev/null 2>&1 || missing+=(mariadb-client)
# haproxy for TestHAProxyFailover (docs/haproxy.cfg through a failover).
{ command -v haproxy || [ -x /usr/sbin/haproxy ]; } >/dev/null 2>&1 || missing+=(haproxy)

if [ ${#missing[@]} -gt 0 ]; then
	echo "install-test-clients: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# mysql2 from the npm registry, at the versions of package-lock.json; again
# when the lock file changed since the last install.
node_dir=test/clients/node
if [ ! -f "$node_dir/node_modules/mysql2/package.json" ] ||
	[ "$node_dir/package-lock.json" -nt "$node_dir/node_modules/.package-lock.json" ]; then
	echo "install-test-clients: npm ci in $node_dir"
	(cd "$node_dir" && npm ci --no-audit --no-fund)
fi
echo "install-test-clients: all clients present"
