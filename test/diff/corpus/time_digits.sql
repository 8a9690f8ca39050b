-- TIME(n) columns keep n digits after the seconds (they were refused for
-- n < 6, and TIME(6) kept whole seconds): written, sent (the column's
-- decimals and the text), compared and shown with them.
CREATE TABLE tn (id INT PRIMARY KEY, a TIME, b TIME(6), c TIME(3), d TIME(1));
INSERT INTO tn VALUES (1, '12:34:56', '12:34:56.789', '12:34:56.789', '-12:34:56.5'), (2, '01:02:03', '01:02:03.000001', '01:02:03.1', '838:59:59'), (3, NULL, NULL, NULL, NULL);
SELECT * FROM tn ORDER BY id;
SELECT b, c, d FROM tn WHERE id = 1;
SELECT id, c FROM tn WHERE c = '12:34:56.789';
SELECT id FROM tn WHERE c > '12:00:00' AND d < '00:00:00';
SELECT id, b FROM tn WHERE b BETWEEN '01:02:03' AND '01:02:03.5';
SELECT id FROM tn WHERE c IN ('01:02:03.100', '12:34:56.7');
SELECT id, c FROM tn ORDER BY c DESC;
SELECT t1.id, t2.id FROM tn t1 JOIN tn t2 ON t1.c = t2.c ORDER BY t1.id;
SELECT HOUR(c), MINUTE(c), SECOND(c), MICROSECOND(c) FROM tn WHERE id = 1;
-- In arithmetic a TIME(n) is hhmmss with its n digits.
SELECT c + 0, d - 1, b * 1 FROM tn WHERE id = 1;
-- TIME_TO_SEC is a whole number of seconds in MySQL 8.
SELECT TIME_TO_SEC(d), TIME_TO_SEC(c) FROM tn WHERE id = 1;
SELECT MIN(c), MAX(b) FROM tn;
UPDATE tn SET c = '23:59:59.999', d = '00:00:00.1' WHERE id = 2;
SELECT c, d FROM tn WHERE id = 2;
INSERT INTO tn (id, c) VALUES (2, '00:00:01') ON DUPLICATE KEY UPDATE c = '10:11:12.125';
SELECT c FROM tn WHERE id = 2;
ALTER TABLE tn ADD COLUMN e TIME(2) DEFAULT '10:00:00.25';
ALTER TABLE tn MODIFY COLUMN d TIME(4);
SHOW CREATE TABLE tn;
SELECT * FROM tn ORDER BY id;
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, DATETIME_PRECISION, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tn' ORDER BY ORDINAL_POSITION;
SHOW COLUMNS FROM tn;
CREATE TABLE tcopy LIKE tn;
SHOW CREATE TABLE tcopy;
DROP TABLE tcopy;
-- MySQL 8 rounds a fraction to the column's digits, MariaDB truncates it.
INSERT INTO tn (id, c, d) VALUES (4, '12:34:56.7896', '00:00:00.00005');
SELECT c, d FROM tn WHERE id = 4;
DROP TABLE tn;
-- More than 6 digits: refused by both.
CREATE TABLE tbad (t TIME(7));
