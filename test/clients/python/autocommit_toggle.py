"""Django-style transactions: autocommit on between transactions, turned off
to begin one, back on after commit() or rollback().

Usage: autocommit_toggle.py MySQLdb|pymysql HOST PORT DB

These are the driver calls Django's transaction.atomic() makes on MySQL
(set_autocommit → conn.autocommit(), nested atomic blocks → savepoints).
The driver skips SET autocommit when the server's flags say it is already in
the wanted mode, so the flags must follow every toggle. Prints one line per
check; exits 1 at the first one that fails.
"""
from clientlib import check, connect, driver, driver_name


def run(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    rows = cur.fetchall()
    cur.close()
    return rows


observer = connect()
observer.autocommit(True)


def committed():
    return run(observer, "SELECT COUNT(*) FROM t")[0][0]


def set_autocommit(conn, on):
    conn.autocommit(on)
    check(f"get_autocommit() after autocommit({on})", conn.get_autocommit(), on)
    check(f"@@autocommit after autocommit({on})", run(conn, "SELECT @@autocommit")[0][0], int(on))


run(observer, "CREATE TABLE t (id INT PRIMARY KEY)")
c = connect()
set_autocommit(c, True)  # Django's connection setup

# atomic() whose body raises: nested block rolled back to its savepoint,
# then the outer block rolled back.
set_autocommit(c, False)
run(c, "INSERT INTO t VALUES (1)")
run(c, "SAVEPOINT s1")
run(c, "INSERT INTO t VALUES (2)")
run(c, "ROLLBACK TO SAVEPOINT s1")
check("rows inside the transaction after ROLLBACK TO SAVEPOINT", run(c, "SELECT COUNT(*) FROM t")[0][0], 1)
check("rows seen by another connection meanwhile", committed(), 0)
c.rollback()
set_autocommit(c, True)
check("rows after the failed atomic block", committed(), 0)

# atomic() that succeeds, with a nested block that fails.
set_autocommit(c, False)
run(c, "INSERT INTO t VALUES (1)")
run(c, "SAVEPOINT s2")
run(c, "INSERT INTO t VALUES (2)")
run(c, "RELEASE SAVEPOINT s2")
run(c, "SAVEPOINT s3")
run(c, "INSERT INTO t VALUES (3)")
run(c, "ROLLBACK TO SAVEPOINT s3")
c.commit()
set_autocommit(c, True)
check("rows after the atomic block committed", run(observer, "SELECT id FROM t ORDER BY id"), ((1,), (2,)))

# Autocommit turned back on without commit() commits, as in MySQL: at
# once, not at the connection's next statement.
set_autocommit(c, False)
run(c, "INSERT INTO t VALUES (4)")
c.autocommit(True)
check("rows after autocommit(True) without commit()", committed(), 3)
check("get_autocommit() after autocommit(True)", c.get_autocommit(), True)
c.close()
check("rows after close", committed(), 3)
observer.close()
print("PASS")
