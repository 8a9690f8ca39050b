-- Errors of the common codes, with their messages.
CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, n TINYINT UNSIGNED);
CREATE TABLE ch (id INT PRIMARY KEY, p_id INT, FOREIGN KEY fk_p (p_id) REFERENCES p (id));
INSERT INTO p VALUES (1, 'a', 1);
INSERT INTO p VALUES (1, 'b', 1);
INSERT INTO p VALUES (2, NULL, 1);
INSERT INTO p VALUES (2, 'b', -1);
INSERT INTO p VALUES (2, 'b', 256);
INSERT INTO p VALUES (2, 'toolong', 1);
INSERT INTO p VALUES (2, 'b', 'x');
INSERT INTO ch VALUES (1, 99);
INSERT INTO ch VALUES (1, 1);
DELETE FROM p WHERE id = 1;
CREATE TABLE ch2 (id INT PRIMARY KEY, p_id INT, CONSTRAINT fk_c FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE CASCADE);
INSERT INTO ch2 VALUES (1, 42);
SELECT * FROM nopk;
SELECT nosuch FROM p;
SELECT * FROM p WHERE nosuch = 1;
SELEC 1;
SELECT * FROM p WHERE;
CREATE TABLE p (id INT);
DROP TABLE nope;
DROP TABLE p, nope;
USE nodb;
SELECT (SELECT id FROM p UNION SELECT 2);
SELECT 1 FROM p HAVING nosuch > 0;
SELECT COUNT(*), id FROM p;
SELECT 1 / 0;
SELECT CAST('x' AS SIGNED);
INSERT INTO p (id) VALUES (3);
UPDATE p SET n = n - 2;
DROP TABLE ch, ch2, p;
SELECT nosuchfn(1);
-- A row whose values do not match the columns: 1136, naming the row.
CREATE TABLE vc (id INT PRIMARY KEY, name VARCHAR(5), n INT);
INSERT INTO vc VALUES (3, 'c');
INSERT INTO vc (id, name) VALUES (3, 'c', 1);
INSERT INTO vc (id, name) VALUES (3, 'c'), (4);
INSERT INTO vc VALUES (3, 'c', 1), (4, 'd'), (5, 'e', 1);
INSERT INTO vc VALUES (3, 'c'), (4, 'd', 1);
PREPARE s FROM 'INSERT INTO vc VALUES (?)';
SELECT COUNT(*) FROM vc;
DROP TABLE vc;
-- Definitions refused: MySQL's codes and texts.
CREATE TABLE dk (id INT PRIMARY KEY, a INT, KEY ka (a));
DROP DATABASE nosuchdb;
ALTER TABLE dk ADD PRIMARY KEY (a);
CREATE TABLE dk2 (a INT AUTO_INCREMENT, b INT AUTO_INCREMENT, PRIMARY KEY (a));
CREATE TABLE dk3 (a INT AUTO_INCREMENT);
CREATE TABLE dk4 (a INT, KEY k (a), KEY k (a));
SET @@nosuchvar = 1;
CREATE USER dku@localhost;
CREATE USER dku@localhost;
DROP USER dku@localhost;
DROP USER dku@localhost;
SELECT a FROM dk UNION SELECT id, a FROM dk;
DROP TABLE dk;
-- A system variable set to a value it does not take: 1231, 1232 for a
-- word where a number goes, 1115 and 1273 for an unknown character set
-- or collation, 1286 for a storage engine, 1298 and 1649 for a time zone
-- or locale; the variable keeps its value.
SET sql_mode = 'NOSUCHMODE';
SET SESSION sql_mode = 'STRICT_TRANS_TABLES,BOGUS';
SET @@sql_mode = NULL;
SET @sv = 1, sql_mode = 'BAD1';
SELECT COUNT(*) FROM (SELECT 1 AS one) AS kept WHERE @@sql_mode = @@GLOBAL.sql_mode;
SET autocommit = 5;
SET autocommit = 'maybe';
SET sql_mode = 'ANSI_QUOTES', autocommit = 'x';
SET foreign_key_checks = 2;
SET unique_checks = 'x';
SET sql_safe_updates = 7;
SET big_tables = 9;
SET sql_select_limit = 'abc';
SET sql_select_limit = NULL;
SET sql_select_limit = 1.5;
SET @@session.wait_timeout = 'x';
SET NAMES 'nosuchcharset';
SET character_set_client = 'nosuch';
SET collation_connection = 'nosuch_ci';
CREATE TABLE sv (a TEXT) CHARSET nosuch;
SET default_storage_engine = 'NoSuchEngine';
SET time_zone = 'Mars/Olympus';
SET time_zone = '+25:00';
SET time_zone = '-14:00';
SET time_zone = '+05:30';
SELECT @@time_zone;
SET time_zone = 'nowhere';
SELECT @@time_zone;
SET lc_time_names = 'xx_YY';
SELECT @@lc_time_names;
-- A value an ENUM or SET column does not list: 1265, naming the column
-- and the row, nothing written.
CREATE TABLE es (id INT PRIMARY KEY, a ENUM('x','y'), s SET('x','y'));
INSERT INTO es VALUES (1, 'z', 'x');
INSERT INTO es VALUES (2, 'x', 'x,q');
INSERT INTO es VALUES (5, 'x', 'x'), (6, 'y', 'y'), (7, 'q', 'x');
INSERT INTO es (id, s) VALUES (3, 'q');
INSERT INTO es (id, a) VALUES (4, 'q');
SELECT COUNT(*) FROM es;
DROP TABLE es;
-- An UPDATE's value out of its numeric column's range: 1264 in a strict
-- mode, nothing written; with IGNORE or without a strict mode the nearest
-- value the column takes, with 1264 as a warning. Also ON DUPLICATE KEY
-- UPDATE's assignments. (The statements' warnings are compared too.)
CREATE TABLE orng (id INT PRIMARY KEY, n INT UNSIGNED, s TINYINT, u TINYINT UNSIGNED, b BIGINT UNSIGNED, d DECIMAL(5,2), f FLOAT);
INSERT INTO orng VALUES (1, 1, 1, 1, 1, 1, 1), (2, 2, 2, 2, 2, 2, 2);
UPDATE orng SET n = -1 WHERE id = 1;
UPDATE orng SET n = -1;
UPDATE orng SET s = 300 WHERE id = 1;
UPDATE orng SET s = -129 WHERE id = 2;
UPDATE orng SET b = -1 WHERE id = 2;
UPDATE orng SET n = 5000000000 WHERE id = 1;
UPDATE orng SET n = '-1' WHERE id = 1;
UPDATE orng SET n = -1.5 WHERE id = 1;
UPDATE orng SET n = -0.4 WHERE id = 1;
UPDATE orng SET u = 255.4 WHERE id = 1;
UPDATE orng SET u = 255.5 WHERE id = 1;
UPDATE orng SET d = 12345.6 WHERE id = 1;
UPDATE orng SET d = 999.995 WHERE id = 1;
UPDATE orng SET f = 1e300 WHERE id = 1;
UPDATE orng SET b = 18446744073709551615 WHERE id = 1;
UPDATE orng SET b = 18446744073709551616 WHERE id = 2;
UPDATE orng SET s = s * 100 WHERE id = 2;
UPDATE orng SET n = 4294967295, s = -128 WHERE id = 1;
SELECT * FROM orng ORDER BY id;
UPDATE IGNORE orng SET n = -7, s = 1000, d = -5000 WHERE id = 2;
SELECT * FROM orng ORDER BY id;
INSERT INTO orng VALUES (1, 5, 5, 5, 5, 5, 5) ON DUPLICATE KEY UPDATE n = -1;
INSERT INTO orng VALUES (1, 5, 5, 5, 5, 5, 5) ON DUPLICATE KEY UPDATE u = VALUES(u) + 300;
INSERT INTO orng VALUES (3, 5, 5, 5, 5, 5, 5), (1, 5, 5, 5, 5, 5, 5) ON DUPLICATE KEY UPDATE n = n + 1;
INSERT IGNORE INTO orng VALUES (2, 5, 5, 5, 5, 5, 5) ON DUPLICATE KEY UPDATE u = 1000;
SELECT * FROM orng ORDER BY id;
SET sql_mode = '';
UPDATE orng SET n = -7, s = -1000, d = 5000, b = '-3', u = -0.4 WHERE id = 1;
SELECT * FROM orng ORDER BY id;
SET sql_mode = DEFAULT;
DROP TABLE orng;
-- More of go-mysql-server's 1105s, MySQL's codes now: a view named as a
-- table (1050), a built-in function's argument count (1582), REVOKE from
-- and SET PASSWORD FOR a missing account (1141, 1133), a missing table of
-- information_schema (1109), DECIMAL(M,D) with D > M (1427), a TEXT key
-- without a length (1170), an unknown storage engine (1286; a warning
-- without NO_ENGINE_SUBSTITUTION).
CREATE TABLE vt (id INT PRIMARY KEY);
CREATE VIEW vt AS SELECT 1;
SELECT STR_TO_DATE('x', 1, 2);
SELECT CONCAT();
SELECT ABS(1, 2);
REVOKE SELECT ON *.* FROM nosuchuser@localhost;
SET PASSWORD FOR nosuchuser@localhost = 'x';
SELECT * FROM information_schema.nosuch;
CREATE TABLE d5 (a DECIMAL(5, 10));
CREATE TABLE t7 (a TEXT, PRIMARY KEY (a));
CREATE TABLE eb (a INT) ENGINE = NoSuchEngine;
SET sql_mode = '';
CREATE TABLE eb (a INT) ENGINE = NoSuchEngine;
SET sql_mode = DEFAULT;
DROP TABLE eb, vt;
-- A YEAR, BIT, ENUM or SET value the column does not take, in an INSERT
-- and an UPDATE: MySQL's codes naming the column and the row (they were
-- 1105); a date that is none in an UPDATE names its column too.
CREATE TABLE yb (id INT PRIMARY KEY, y YEAR, b BIT(3), e ENUM('a', 'b'), d DATE, tm TIME);
INSERT INTO yb (id, y) VALUES (1, 1800);
INSERT INTO yb (id, y, b) VALUES (2, 2000, 1), (3, 1800, 1);
INSERT INTO yb (id, b) VALUES (4, 8);
INSERT INTO yb (id, tm) VALUES (5, '1000:00:00');
INSERT INTO yb VALUES (6, 2001, 2, 'a', '2020-01-01', '10:00:00');
UPDATE yb SET y = 1800 WHERE id = 6;
UPDATE yb SET b = 8 WHERE id = 6;
UPDATE yb SET e = 'z' WHERE id = 6;
UPDATE yb SET d = '2020-02-30' WHERE id = 6;
INSERT INTO yb (id, e) VALUES (6, 'a') ON DUPLICATE KEY UPDATE e = 'q';
SELECT * FROM yb;
DROP TABLE yb;
-- A TIME beyond ±838:59:59: 1292 in a strict mode, nothing written;
-- otherwise the end of the range with 1264 (it was clamped in silence).
CREATE TABLE tr (id INT PRIMARY KEY, tm TIME);
INSERT INTO tr VALUES (1, '839:00:00');
INSERT INTO tr VALUES (2, '-900:00:00');
INSERT INTO tr VALUES (3, 8390000);
INSERT INTO tr VALUES (4, '838:59:59'), (5, '-838:59:59'), (6, '12:00:00');
INSERT INTO tr VALUES (7, '-838:59:59'), (8, '839:00:01');
UPDATE tr SET tm = '-839:00:00' WHERE id = 6;
UPDATE tr SET tm = 8390000 WHERE id = 6;
INSERT INTO tr VALUES (6, '1:00:00') ON DUPLICATE KEY UPDATE tm = '840:00:00';
INSERT IGNORE INTO tr VALUES (9, '839:00:00');
SET sql_mode = '';
INSERT INTO tr VALUES (10, '839:00:00'), (11, '-900:00:00');
UPDATE tr SET tm = '900:00:00' WHERE id = 4;
SET sql_mode = DEFAULT;
SELECT * FROM tr ORDER BY id;
DROP TABLE tr;
-- A TIME written with days, 'D HH:MM:SS' and its shorter forms (it was
-- refused with 1292).
CREATE TABLE td (id INT PRIMARY KEY, tm TIME);
INSERT INTO td VALUES (1, '1 10:00:00'), (2, '-2 03'), (3, '0 1:2:3'), (4, '34 22:59:59'), (5, '2 03:04');
INSERT INTO td VALUES (6, '35 00:00:00');
INSERT INTO td VALUES (7, '2 3');
INSERT INTO td VALUES (8, '-0 1:2:3'), (9, '1 100:00:00'), (10, ' +1  10:00:00');
UPDATE td SET tm = '3 00:00:01' WHERE id = 3;
INSERT INTO td VALUES (5, '1 00:00:00') ON DUPLICATE KEY UPDATE tm = '4 4:4:4';
SELECT id, tm FROM td ORDER BY id;
SELECT COUNT(*) FROM td WHERE tm = '1 10:00:00';
SELECT id FROM td WHERE tm BETWEEN '1 00:00:00' AND '2 12:00:00' ORDER BY id;
SELECT id FROM td WHERE '2 03:04' = tm;
SELECT id FROM td WHERE tm IN ('1 10:00:00', '0 01:02:03', '-2 03') ORDER BY id;
SELECT id FROM td WHERE tm NOT IN ('1 10:00:00', '9:00:00') ORDER BY id;
DROP TABLE td;
-- FLOAT(M,D) and DOUBLE(M,D) with more decimals than digits: 1427 (it was
-- taken), as DECIMAL's.
CREATE TABLE f1 (id INT, amount FLOAT(4, 6));
CREATE TABLE f2 (a DOUBLE(5, 6));
CREATE TABLE f4 (a REAL(2, 3));
CREATE TABLE f3 (a FLOAT(7, 2), b DOUBLE(10, 4), c REAL(3, 3), d FLOAT(10));
DROP TABLE f3;
-- GROUP BY a column no table has: 1054 (it was 1055, the
-- ONLY_FULL_GROUP_BY check's, about the select list).
CREATE TABLE gb (id INT PRIMARY KEY, v INT);
SELECT id FROM gb GROUP BY nosuch;
SELECT id FROM gb GROUP BY v;
DROP TABLE gb;
-- An aggregate function in WHERE or ON: 1111 (it failed while running
-- with an internal text, "unable to find field with index 3").
CREATE TABLE ag (id INT PRIMARY KEY, x INT);
INSERT INTO ag VALUES (1, 10), (2, 20);
SELECT * FROM ag WHERE SUM(x) > 1;
SELECT id FROM ag WHERE COUNT(*) > 0 AND id = 1;
SELECT a.id FROM ag a JOIN ag b ON MAX(a.x) = b.x;
DELETE FROM ag WHERE SUM(x) > 1;
UPDATE ag SET x = 1 WHERE AVG(x) > 1;
SELECT id FROM ag WHERE x > (SELECT AVG(x) FROM ag);
SELECT id FROM ag GROUP BY id HAVING SUM(x) > 15;
-- A window function over a column of an aggregated query without GROUP
-- BY: 1140 in MySQL's words (its text lacked its arguments).
SELECT SUM(x), RANK() OVER (ORDER BY x) FROM ag;
DROP TABLE ag;
-- 1701, 1359, 1243 and 1172 with their codes (they were 1105).
CREATE TABLE fkp (id INT PRIMARY KEY);
CREATE TABLE fkc (id INT PRIMARY KEY, pid INT, CONSTRAINT fkc_p FOREIGN KEY (pid) REFERENCES fkp (id));
TRUNCATE TABLE fkp;
CREATE TRIGGER fkc_tr BEFORE INSERT ON fkc FOR EACH ROW SET NEW.id = NEW.id;
CREATE TRIGGER fkc_tr BEFORE INSERT ON fkc FOR EACH ROW SET NEW.id = NEW.id;
EXECUTE nosuch_stmt;
DEALLOCATE PREPARE nosuch_stmt;
INSERT INTO fkp VALUES (1), (2);
SELECT id INTO @one FROM fkp;
DROP TRIGGER fkc_tr;
DROP TABLE fkc;
DROP TABLE fkp;
