-- Joins of every kind with NULLs on either side.
CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(5));
CREATE TABLE b (id INT PRIMARY KEY, a_id INT, w VARCHAR(5), KEY (a_id));
INSERT INTO a VALUES (1, 'one'), (2, 'two'), (3, NULL);
INSERT INTO b VALUES (10, 1, 'x'), (11, 1, 'y'), (12, NULL, 'z'), (13, 9, NULL);
SELECT a.v, b.w FROM a JOIN b ON a.id = b.a_id ORDER BY b.id;
SELECT a.v, b.w FROM a LEFT JOIN b ON a.id = b.a_id ORDER BY a.id, b.id;
SELECT a.v, b.w FROM a RIGHT JOIN b ON a.id = b.a_id ORDER BY b.id;
SELECT COUNT(*) FROM a CROSS JOIN b;
SELECT a.id, b.id FROM a, b WHERE a.id = b.a_id AND b.w <> 'x';
SELECT a.v FROM a WHERE a.id IN (SELECT a_id FROM b) ORDER BY a.id;
SELECT x.v, y.v FROM a x JOIN a y ON x.id < y.id ORDER BY x.id, y.id;
SELECT * FROM a NATURAL JOIN b;
SELECT a.id, b.w FROM a JOIN b USING (id);
SELECT a.v, COUNT(b.id) FROM a LEFT JOIN b ON a.id = b.a_id GROUP BY a.id, a.v ORDER BY a.id;
SELECT id FROM a UNION SELECT a_id FROM b ORDER BY id;
SELECT id FROM a UNION ALL SELECT a_id FROM b;
SELECT v FROM a WHERE id = (SELECT MAX(a_id) FROM b WHERE a_id < 5);
SELECT id FROM a JOIN b ON a.id = b.a_id;
DROP TABLE a, b;
-- Joins on strings equal under the collation, not byte for byte, on
-- tables large enough for a hash join.
CREATE TABLE ha (id INT PRIMARY KEY, s VARCHAR(20));
CREATE TABLE hb (id INT PRIMARY KEY, s VARCHAR(20), b VARCHAR(20) COLLATE utf8mb4_bin);
INSERT INTO ha WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 900) SELECT n, CONCAT('Key', n) FROM r;
INSERT INTO hb WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 900) SELECT n, CONCAT('KEY', n), CONCAT('KEY', n) FROM r;
SELECT COUNT(*) FROM ha JOIN hb ON ha.s = hb.s;
SELECT COUNT(*) FROM ha JOIN hb ON ha.s = hb.s AND ha.id = hb.id + 0;
SELECT COUNT(*) FROM ha WHERE s IN (SELECT s FROM hb);
SELECT COUNT(*) FROM ha WHERE NOT EXISTS (SELECT 1 FROM hb WHERE hb.s = ha.s);
SELECT COUNT(*) FROM ha LEFT JOIN hb ON ha.s = hb.s WHERE hb.id IS NULL;
SELECT COUNT(*) FROM ha JOIN hb ON ha.s = hb.b;
DROP TABLE ha, hb;
