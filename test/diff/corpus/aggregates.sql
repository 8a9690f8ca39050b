-- Aggregates, GROUP BY, HAVING: result types and exact decimals.
CREATE TABLE m (id INT PRIMARY KEY, grp VARCHAR(5), amount DECIMAL(30,2), qty INT, f DOUBLE);
INSERT INTO m VALUES (1, 'a', 12345678901234567.89, 1, 0.5), (2, 'a', 0.01, 2, 1.5), (3, 'b', 10.00, 3, NULL), (4, 'b', NULL, NULL, 2.0), (5, 'c', -3.50, 0, 0);
SELECT SUM(amount) FROM m;
SELECT AVG(amount) FROM m;
SELECT SUM(qty), AVG(qty), MIN(qty), MAX(qty), COUNT(qty), COUNT(*) FROM m;
SELECT SUM(f), AVG(f) FROM m;
SELECT grp, SUM(amount), COUNT(*) FROM m GROUP BY grp ORDER BY grp;
SELECT grp, SUM(qty) AS s FROM m GROUP BY grp HAVING s > 1 ORDER BY grp;
SELECT grp, SUM(DISTINCT 91), AVG(DISTINCT qty), SUM(DISTINCT amount) FROM m GROUP BY grp ORDER BY grp;
SELECT grp, COUNT(*) FROM m GROUP BY grp HAVING COUNT(*) > 1 ORDER BY grp;
SELECT - SUM(qty) * + qty FROM m WHERE qty = 3 GROUP BY qty, qty;
SELECT - SUM(0) FROM m;
SELECT -0, - 0.0, -0e0;
SELECT SUM(amount) FROM m WHERE id > 100;
SELECT GROUP_CONCAT(grp ORDER BY id SEPARATOR ',') FROM m;
SELECT COUNT(DISTINCT grp) FROM m;
SELECT id /* the key */, grp, qty /* a count */ , f FROM m ORDER BY id;
-- GROUP_CONCAT joins all its expressions; DISTINCT compares their values
-- under the collation.
CREATE TABLE gcw (id INT PRIMARY KEY, g INT, s VARCHAR(10)) COLLATE utf8mb4_general_ci;
INSERT INTO gcw VALUES (1, 1, 'a'), (2, 1, 'A'), (3, 1, 'b'), (4, 2, 'B'), (5, 2, 'c'), (6, 2, NULL);
SELECT GROUP_CONCAT(id, s ORDER BY id) FROM gcw;
SELECT GROUP_CONCAT(DISTINCT s, g ORDER BY g, s) FROM gcw;
SELECT g, GROUP_CONCAT(DISTINCT s ORDER BY s DESC SEPARATOR '|') FROM gcw GROUP BY g ORDER BY g;
SELECT GROUP_CONCAT(DISTINCT id % 2, '-' ORDER BY id % 2) FROM gcw;
SELECT g, GROUP_CONCAT(id, ':', s SEPARATOR ' ') FROM gcw GROUP BY g ORDER BY g;
-- A name two joined tables have: refused in a grouped query, or, in GROUP
-- BY, HAVING and ORDER BY, the select list's column of that name.
SELECT COUNT(id) FROM gcw JOIN gcw g2 ON g2.id = gcw.id + 1;
SELECT GROUP_CONCAT(s ORDER BY gcw.id) FROM gcw JOIN gcw g2 ON g2.id = gcw.id + 1;
SELECT COUNT(*) FROM gcw JOIN gcw g2 ON g2.id = gcw.id + 1 HAVING MAX(id) > 1;
SELECT g2.g, COUNT(*) FROM gcw JOIN gcw g2 ON g2.id = gcw.id + 1 GROUP BY g ORDER BY g;
SELECT g2.g, COUNT(*) FROM gcw JOIN gcw g2 ON g2.id = gcw.id + 1 GROUP BY g HAVING g > 1;
SELECT COUNT(*) FROM gcw JOIN gcw g2 USING (g);
SELECT COUNT(g) FROM gcw JOIN gcw g2 USING (g);
DROP TABLE gcw;
SELECT grp, MAX(amount) FROM m GROUP BY grp WITH ROLLUP;
-- WITH ROLLUP: super-aggregate rows after each group, grouped expressions
-- left out are NULL (in expressions and HAVING too), the total last; not
-- when no row is grouped.
CREATE TABLE ru (a INT, b VARCHAR(5), c INT);
INSERT INTO ru VALUES (1, 'x', 10), (1, 'y', 20), (2, 'x', 30), (2, NULL, 40), (NULL, 'z', 50);
SELECT a, b, SUM(c), COUNT(*) FROM ru GROUP BY a, b WITH ROLLUP;
SELECT a + 1, CONCAT(b, '!'), SUM(c) AS s FROM ru GROUP BY a, b WITH ROLLUP HAVING s > 30;
SELECT a AS x, SUM(c) FROM ru GROUP BY x WITH ROLLUP;
SELECT a, SUM(c) FROM ru GROUP BY 1 WITH ROLLUP;
SELECT a, SUM(c) FROM ru GROUP BY a WITH ROLLUP LIMIT 2;
SELECT * FROM (SELECT a, SUM(c) s FROM ru GROUP BY a WITH ROLLUP) q WHERE s > 60;
SELECT a, COUNT(DISTINCT b), AVG(c), GROUP_CONCAT(b ORDER BY b) FROM ru GROUP BY a WITH ROLLUP;
SELECT SUM(c) FROM ru WHERE c > 1000 GROUP BY a WITH ROLLUP;
SELECT b, COUNT(*) FROM ru GROUP BY b WITH ROLLUP;
SELECT a /* a comment */, SUM(c) FROM ru GROUP BY a WITH ROLLUP;
SELECT a, SUM(c) FROM ru GROUP BY a WITH ROLLUP ORDER BY a DESC;
SELECT a, b, GROUPING(a), GROUPING(a, b) FROM ru GROUP BY a, b WITH ROLLUP;
SELECT 1 WITH ROLLUP;
PREPARE st FROM 'SELECT a, SUM(c) FROM ru WHERE c > ? GROUP BY a WITH ROLLUP';
SET @x = 15;
EXECUTE st USING @x;
DEALLOCATE PREPARE st;
DROP TABLE ru;
SELECT id, grp FROM m GROUP BY grp;
-- ONLY_FULL_GROUP_BY: grouped columns and expressions, aliases, and what
-- the primary key determines (MySQL 8; MariaDB does not follow keys).
SELECT grp, qty FROM m GROUP BY grp ORDER BY grp;
SELECT qty, COUNT(*) FROM m WHERE grp = 'a' GROUP BY grp;
SELECT UPPER(grp), COUNT(*) FROM m GROUP BY UPPER(grp) ORDER BY 1;
SELECT grp AS g, COUNT(*) FROM m GROUP BY g ORDER BY g;
SELECT m.*, COUNT(*) FROM m GROUP BY id ORDER BY id;
SELECT grp, COUNT(*) FROM m GROUP BY grp ORDER BY qty;
SELECT BIT_AND(qty), BIT_OR(qty), STD(qty) FROM m;
SELECT MAX(id), MIN(id) FROM m WHERE id > 1000;
SELECT MAX(id) FROM m WHERE id IN (998, 999);
SELECT MIN(id) FROM m WHERE id > 21 AND id <= 19;
SELECT COUNT(*) FROM m LIMIT 0;
SELECT SUM(qty) FROM m WHERE id BETWEEN 1 AND 3 LIMIT 0;
SELECT COUNT(*), MAX(grp) FROM m;
CREATE TABLE big (n INT);
INSERT INTO big WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 999) SELECT n FROM s;
SELECT SUM(n), AVG(n) FROM big;
-- Correlated subqueries of a grouped query that read a grouped column the
-- select list does not name, in the select list, HAVING and ORDER BY.
CREATE TABLE gh (a INT, v INT);
INSERT INTO gh VALUES (0, 100), (1, 200), (2, 300);
CREATE TABLE gg (a INT, c INT);
INSERT INTO gg SELECT n % 3, n FROM big;
SELECT SUM(c), (SELECT v FROM gh WHERE gh.a = gg.a) AS s FROM gg GROUP BY a ORDER BY 1;
SELECT SUM(c), (SELECT v FROM gh WHERE gh.a = gg.a) FROM gg GROUP BY a ORDER BY 1;
SELECT COUNT(*) FROM gg GROUP BY a HAVING (SELECT v FROM gh WHERE gh.a = gg.a) > 150 ORDER BY 1;
SELECT MAX(c) FROM gg GROUP BY a ORDER BY (SELECT v FROM gh WHERE gh.a = gg.a) DESC;
SELECT MIN(c) AS m, (SELECT MAX(v) FROM gh WHERE gh.a <= gg.a) AS s, (SELECT MAX(v) FROM gh WHERE gh.a <= gg.a) + 1 AS s1 FROM gg GROUP BY a HAVING s > 100 ORDER BY s DESC;
SELECT SUM(c), (SELECT v FROM gh WHERE gh.a = gg.c) FROM gg GROUP BY a ORDER BY 1;
DROP TABLE gh, gg;
SELECT SUM(n * 1000000) FROM big;
DROP TABLE m, big;
