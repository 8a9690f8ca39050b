"""Transactions through SQLAlchemy (ORM Session, engine.begin()).

Usage: sqlalchemy_tx.py pymysql|mysqldb HOST PORT DB

SQLAlchemy leaves autocommit to the DB-API driver's default (off) and ends
transactions with the driver's commit() and rollback(). Prints one line per
check; exits 1 at the first one that fails.
"""
import sys

from sqlalchemy import Column, Integer, create_engine, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, declarative_base

from clientlib import check, check_tls, db, driver_name as driver, host, port, ssl_args
engine = create_engine(f"mysql+{driver}://root:@{host}:{port}/{db}", connect_args=ssl_args)
with engine.connect() as conn:
    check_tls(conn.connection)
Base = declarative_base()


class Item(Base):
    __tablename__ = "items"
    id = Column(Integer, primary_key=True, autoincrement=False)
    v = Column(Integer)


def committed():
    """Rows as another client sees them (the pool rolls the connection back
    when it is returned, so each call reads afresh)."""
    with engine.connect() as conn:
        return conn.execute(text("SELECT COUNT(*) FROM items")).scalar()


Base.metadata.create_all(engine)

with Session(engine) as s:
    s.add_all([Item(id=1, v=10), Item(id=2, v=20)])
    s.flush()
    check("rows inside the Session after flush()", s.query(Item).count(), 2)
    check("rows seen by another connection before commit", committed(), 0)
    s.rollback()
    check("rows after Session.rollback()", committed(), 0)

with Session(engine) as s:
    s.add_all([Item(id=1, v=10), Item(id=2, v=20)])
    s.commit()
check("rows after Session.commit()", committed(), 2)

try:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO items VALUES (3, 30)"))
        conn.execute(text("UPDATE items SET v = 11 WHERE id = 1"))
        conn.execute(text("INSERT INTO items VALUES (1, 99)"))  # duplicate key
    print("FAIL: duplicate key accepted")
    sys.exit(1)
except IntegrityError as e:
    check("engine.begin() failing half-way: error code", e.orig.args[0], 1062)
check("rows after the failed engine.begin() block", committed(), 2)
with engine.connect() as conn:
    check("v of row 1 after the failed block", conn.execute(text("SELECT v FROM items WHERE id = 1")).scalar(), 10)

with engine.begin() as conn:
    conn.execute(text("INSERT INTO items VALUES (3, 30), (4, 40)"))
check("rows after a successful engine.begin() block", committed(), 4)

# An INSERT into a table with an AFTER INSERT trigger (which writes to a
# log table with an AUTO_INCREMENT of its own) answers an OK packet: no
# rows, the rows it inserted, and the id of its first row in the table
# itself (the log table's ids are 4 and 5).
with engine.begin() as conn:
    conn.execute(text("CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))"))
    conn.execute(text("CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))"))
    conn.execute(text("INSERT INTO audit (what) VALUES ('start'), ('start'), ('start')"))
    conn.execute(text("CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('order ', NEW.id))"))
with engine.begin() as conn:
    r = conn.execute(text("INSERT INTO orders (item) VALUES ('pen'), ('ink')"))
    check("INSERT with a trigger: returns_rows", r.returns_rows, False)
    check("INSERT with a trigger: rowcount", r.rowcount, 2)
    check("INSERT with a trigger: lastrowid", r.lastrowid, 1)
with engine.connect() as conn:
    check("the trigger's rows", conn.execute(text("SELECT what FROM audit WHERE n > 3 ORDER BY n")).scalars().all(), ["order 1", "order 2"])
engine.dispose()
print("PASS")
