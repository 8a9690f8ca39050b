"""What the client scripts share: their arguments (DRIVER HOST PORT DB), a
connection through the DB-API driver named, and the check that prints one
line and exits 1 at the first failure."""
import importlib
import sys

driver_name, host, port, db = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The DB-API module (pymysql or MySQLdb); SQLAlchemy's scripts name a
# dialect instead and do not connect through it.
driver = importlib.import_module(driver_name) if driver_name in ("pymysql", "MySQLdb") else None


def connect():
    if driver_name == "MySQLdb":
        return driver.connect(host=host, port=port, user="root", passwd="", db=db)
    return driver.connect(host=host, port=port, user="root", password="", database=db)


def check(what, got, want):
    if got != want:
        print(f"FAIL: {what}: got {got!r}, want {want!r}")
        sys.exit(1)
    print(f"ok: {what}: {got!r}")
