"""Transactions through a DB-API driver in its default mode (autocommit off).

Usage: dbapi_tx.py pymysql|MySQLdb HOST PORT DB

The driver decides from the server's status flags whether to send
SET autocommit=0 at connect: when the flags lie, every statement commits on
its own and rollback() undoes nothing. Prints one line per check; exits 1 at
the first one that fails.
"""
import sys

from clientlib import check, connect, driver, driver_name

SERVER_STATUS_IN_TRANS = 0x0001


def one(conn, sql, args=None):
    cur = conn.cursor()
    cur.execute(sql, args)
    row = cur.fetchone()
    cur.close()
    return row


def in_trans(conn):
    """The driver's copy of SERVER_STATUS_IN_TRANS, where it keeps one."""
    return bool(conn.server_status & SERVER_STATUS_IN_TRANS) if hasattr(conn, "server_status") else None


def count(conn):
    return one(conn, "SELECT COUNT(*) FROM t")[0]


setup = connect()
setup.autocommit(True)
setup.cursor().execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")

c = connect()
check("get_autocommit() after connect (DB-API default)", c.get_autocommit(), False)
check("@@autocommit agrees", one(c, "SELECT @@autocommit")[0], 0)

c.cursor().execute("INSERT INTO t VALUES (1, 10)")
if hasattr(c, "server_status"):
    check("driver sees IN_TRANS after INSERT", in_trans(c), True)
c.rollback()
if hasattr(c, "server_status"):
    check("driver sees no IN_TRANS after rollback()", in_trans(c), False)
check("rows after rollback()", count(c), 0)
check("rows after rollback(), other connection", count(setup), 0)

cur = c.cursor()
cur.executemany("INSERT INTO t VALUES (%s, %s)", [(1, 10), (2, 20), (3, 30)])
check("rows before commit(), other connection", count(setup), 0)
c.commit()
check("rows after commit(), other connection", count(setup), 3)

# A failing statement inside the transaction is undone alone; the rest of
# the transaction goes on and rolls back whole.
c.cursor().execute("UPDATE t SET v = 11 WHERE id = 1")
try:
    c.cursor().execute("INSERT INTO t VALUES (2, 99)")
    print("FAIL: duplicate key accepted")
    sys.exit(1)
except driver.IntegrityError as e:
    check("duplicate key error code", e.args[0], 1062)
check("v of row 1 inside the transaction", one(c, "SELECT v FROM t WHERE id = 1")[0], 11)
c.rollback()
check("v of row 1 after rollback()", one(setup, "SELECT v FROM t WHERE id = 1")[0], 10)
c.close()

# Lost update: A reads 10 (no FOR UPDATE), B sets 11 and commits, A sets 20
# and commits: A's commit fails with 1213 and B's 11 stays.
a, b = connect(), connect()
check("A reads", one(a, "SELECT v FROM t WHERE id = 1")[0], 10)
b.cursor().execute("UPDATE t SET v = 11 WHERE id = 1")
b.commit()
a.cursor().execute("UPDATE t SET v = 20 WHERE id = 1")
try:
    a.commit()
    print("FAIL: A's commit succeeded: lost update")
    sys.exit(1)
except driver.OperationalError as e:
    check("A's commit error code", e.args[0], 1213)
check("v after the conflict", one(setup, "SELECT v FROM t WHERE id = 1")[0], 11)
# A's transaction is over: A starts afresh and sees B's write.
check("A reads after the conflict", one(a, "SELECT v FROM t WHERE id = 1")[0], 11)
a.rollback()
a.close()
b.close()

# An INSERT into a table with an AFTER INSERT trigger (which writes to a
# log table with an AUTO_INCREMENT of its own) answers an OK packet, as any
# INSERT does: no result set, the rows it inserted, and the id of its first
# row in the table itself (the log table's ids are 4 and 5).
for sql in (
    "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))",
    "CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))",
    "INSERT INTO audit (what) VALUES ('start'), ('start'), ('start')",
    "CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('order ', NEW.id))",
):
    setup.cursor().execute(sql)
c = connect()
cur = c.cursor()
cur.execute("INSERT INTO orders (item) VALUES ('pen'), ('ink')")
check("INSERT with a trigger: description (None: no result set)", cur.description, None)
check("INSERT with a trigger: rowcount", cur.rowcount, 2)
check("INSERT with a trigger: lastrowid", cur.lastrowid, 1)
c.commit()
cur = setup.cursor()
cur.execute("SELECT what FROM audit WHERE n > 3 ORDER BY n")
check("the trigger's rows", [r[0] for r in cur.fetchall()], ["order 1", "order 2"])
c.close()
setup.close()
print("PASS")
