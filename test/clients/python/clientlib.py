"""What the client scripts share: their arguments (DRIVER HOST PORT DB), a
connection through the DB-API driver named, and the check that prints one
line and exits 1 at the first failure.

With MIRAJ_SSL_CA set (the server's CA file), every connection is made over
TLS with that CA (PyMySQL also verifies the server's certificate and
address against it), and the first one checks that the session says so."""
import importlib
import os
import sys

driver_name, host, port, db = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The DB-API module (pymysql or MySQLdb); SQLAlchemy's scripts name a
# dialect instead and do not connect through it.
driver = importlib.import_module(driver_name) if driver_name in ("pymysql", "MySQLdb") else None


ssl_ca = os.environ.get("MIRAJ_SSL_CA")
# The options of a TLS connection, for the DB-API drivers and SQLAlchemy's
# connect_args alike.
ssl_args = {"ssl": {"ca": ssl_ca}} if ssl_ca else {}
_tls_checked = False


def connect():
    if driver_name == "MySQLdb":
        conn = driver.connect(host=host, port=port, user="root", passwd="", db=db, **ssl_args)
    else:
        conn = driver.connect(host=host, port=port, user="root", password="", database=db, **ssl_args)
    check_tls(conn)
    return conn


def check_tls(conn):
    """Over TLS, the first connection checks that its session is encrypted
    (the cursor is a DB-API one, or SQLAlchemy's raw connection's)."""
    global _tls_checked
    if not ssl_ca or _tls_checked:
        return
    _tls_checked = True
    cur = conn.cursor()
    cur.execute("SHOW STATUS LIKE 'Ssl_cipher'")
    cipher = cur.fetchone()[1]
    cur.close()
    if isinstance(cipher, bytes):
        cipher = cipher.decode()
    if not cipher:
        print("FAIL: the session over TLS has no Ssl_cipher")
        sys.exit(1)
    print(f"ok: TLS, cipher {cipher}")


def check(what, got, want):
    if got != want:
        print(f"FAIL: {what}: got {got!r}, want {want!r}")
        sys.exit(1)
    print(f"ok: {what}: {got!r}")
