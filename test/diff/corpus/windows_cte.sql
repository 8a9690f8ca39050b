-- Window functions and common table expressions.
CREATE TABLE s (id INT PRIMARY KEY, grp CHAR(1), v INT);
INSERT INTO s VALUES (1, 'a', 10), (2, 'a', 20), (3, 'a', 20), (4, 'b', 5), (5, 'b', NULL);
SELECT id, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY v, id) AS rn FROM s ORDER BY id;
SELECT id, RANK() OVER (ORDER BY v DESC) r, DENSE_RANK() OVER (ORDER BY v DESC) dr FROM s ORDER BY id;
SELECT id, SUM(v) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run FROM s ORDER BY id;
SELECT id, LAG(v) OVER (ORDER BY id) AS prev, LEAD(v, 1, -1) OVER (ORDER BY id) AS nxt FROM s ORDER BY id;
SELECT id, FIRST_VALUE(v) OVER (PARTITION BY grp ORDER BY id) AS fv FROM s ORDER BY id;
SELECT grp, AVG(v) OVER (PARTITION BY grp) FROM s ORDER BY id;
SELECT id, NTILE(2) OVER (ORDER BY id) FROM s ORDER BY id;
WITH t AS (SELECT grp, SUM(v) AS total FROM s GROUP BY grp) SELECT grp, total FROM t ORDER BY grp;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r ORDER BY n;
WITH RECURSIVE f(n, x) AS (SELECT 1, 1 UNION ALL SELECT n + 1, x * (n + 1) FROM f WHERE n < 10) SELECT n, x FROM f ORDER BY n;
WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM a, b;
SELECT id, v, PERCENT_RANK() OVER (ORDER BY v) FROM s ORDER BY id;
DROP TABLE s;
-- Ranks of values equal under the collation are equal: 'a' and 'A' are
-- peers under a case-insensitive collation, NULLs are peers.
CREATE TABLE wr (id INT PRIMARY KEY, g INT, s VARCHAR(10)) COLLATE utf8mb4_general_ci;
INSERT INTO wr VALUES (1, 1, 'a'), (2, 1, 'A'), (3, 1, 'b'), (4, 2, 'B'), (5, 2, 'b'), (6, 2, 'c'), (7, 2, NULL), (8, 1, NULL);
SELECT id, s, RANK() OVER (ORDER BY s), DENSE_RANK() OVER (ORDER BY s), RANK() OVER (PARTITION BY g ORDER BY s DESC) FROM wr ORDER BY id;
SELECT id, RANK() OVER w, DENSE_RANK() OVER w FROM wr WINDOW w AS (ORDER BY s, g) ORDER BY id;
-- Named windows beside other windows, and windows built on named ones.
SELECT id, ROW_NUMBER() OVER w, ROW_NUMBER() OVER (ORDER BY id DESC) FROM wr WINDOW w AS (ORDER BY g, id) ORDER BY id;
SELECT id, SUM(id) OVER (w ORDER BY id), COUNT(*) OVER (ORDER BY id) FROM wr WINDOW w AS (PARTITION BY g) ORDER BY id;
SELECT id, SUM(id) OVER w2, SUM(id) OVER w1 FROM wr WINDOW w1 AS (PARTITION BY g), w2 AS (w1 ORDER BY id) ORDER BY id;
DROP TABLE wr;
-- The default frame with an ORDER BY is RANGE BETWEEN UNBOUNDED PRECEDING
-- AND CURRENT ROW: a row's peers (equal ORDER BY values) are in its frame.
CREATE TABLE wf (id INT PRIMARY KEY, g INT, amount INT, x INT, s VARCHAR(10)) COLLATE utf8mb4_general_ci;
INSERT INTO wf VALUES (1, 1, 100, 5, 'b'), (2, 1, 200, 3, 'A'), (3, 1, 200, 7, 'a'), (4, 2, 400, 2, 'c'), (5, 2, 400, NULL, 'C'), (6, 2, 100, 9, NULL);
SELECT id, amount, SUM(amount) OVER (ORDER BY amount) FROM wf ORDER BY id;
SELECT id, COUNT(*) OVER (ORDER BY amount), COUNT(x) OVER (ORDER BY amount), AVG(amount) OVER (ORDER BY amount) FROM wf ORDER BY id;
SELECT id, MIN(x) OVER (ORDER BY amount DESC), MAX(x) OVER (ORDER BY amount) FROM wf ORDER BY id;
SELECT id, MAX(x) OVER w, SUM(x) OVER w FROM wf WINDOW w AS (ORDER BY id) ORDER BY id;
SELECT id, SUM(amount) OVER (PARTITION BY g ORDER BY amount), MAX(x) OVER (PARTITION BY g ORDER BY amount, id) FROM wf ORDER BY id;
SELECT id, COUNT(*) OVER (ORDER BY s), SUM(id) OVER (ORDER BY s, g) FROM wf ORDER BY id;
SELECT id, LAST_VALUE(amount) OVER (ORDER BY amount), FIRST_VALUE(amount) OVER (ORDER BY amount DESC) FROM wf ORDER BY id;
SELECT id, SUM(amount) OVER (ORDER BY amount, id ROWS UNBOUNDED PRECEDING), SUM(amount) OVER (ORDER BY amount RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM wf ORDER BY id;
SELECT id, ROW_NUMBER() OVER (ORDER BY amount, id), RANK() OVER (ORDER BY amount), SUM(amount) OVER () FROM wf ORDER BY id;
DROP TABLE wf;
-- A DATE carried through a recursive CTE stays a DATE.
CREATE TABLE rd (id INT PRIMARY KEY, d DATE, dt DATETIME);
INSERT INTO rd VALUES (1, '2026-02-25', '2026-02-25 10:00:00');
WITH RECURSIVE r AS (SELECT d, 1 AS n FROM rd UNION ALL SELECT d + INTERVAL 1 DAY, n + 1 FROM r WHERE n < 3) SELECT d, n FROM r ORDER BY n;
WITH RECURSIVE r AS (SELECT d, dt, id FROM rd UNION ALL SELECT DATE_ADD(d, INTERVAL 1 MONTH), dt + INTERVAL 1 HOUR, id + 1 FROM r WHERE id < 3) SELECT x.d, x.dt FROM r AS x WHERE x.d > '2026-01-01' ORDER BY x.d DESC;
WITH RECURSIVE dates(d) AS (SELECT CAST('2026-02-25' AS DATE) UNION ALL SELECT d + INTERVAL 1 DAY FROM dates WHERE d < '2026-03-01') SELECT d FROM dates ORDER BY d;
WITH RECURSIVE dates(d) AS (SELECT DATE '2026-02-25' UNION ALL SELECT d + INTERVAL 1 WEEK FROM dates WHERE d < '2026-03-10') SELECT d FROM dates ORDER BY d;
DROP TABLE rd;
