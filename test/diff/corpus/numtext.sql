-- Text written into numeric columns: '' and '  ' are not numbers (1366),
-- '12abc' is a number with more after it (1265); refused in a strict
-- sql_mode, warnings (and 0 or the leading number) with IGNORE or without
-- a strict mode.
CREATE TABLE n (id INT PRIMARY KEY, i INT, d DECIMAL(6,2), f DOUBLE);
INSERT INTO n VALUES (1, '', 0, 0);
INSERT INTO n VALUES (2, ' ', 0, 0);
INSERT INTO n VALUES (3, '12abc', 0, 0);
INSERT INTO n VALUES (4, 0, '3.5x', 0);
INSERT INTO n VALUES (5, 0, 0, '1e');
INSERT INTO n VALUES (6, ' 7 ', '+1.25', '.5');
INSERT INTO n VALUES (7, '-', 0, 0);
INSERT INTO n VALUES (8, 1, 1, 1), (9, 'x9', 2, 2);
SELECT * FROM n ORDER BY id;
INSERT IGNORE INTO n VALUES (10, '', '2z', 'abc'), (11, '4 4', '', '5');
SELECT * FROM n ORDER BY id;
UPDATE n SET i = '' WHERE id = 6;
UPDATE n SET d = '8 apples' WHERE id = 6;
UPDATE IGNORE n SET i = '9 lives', f = '' WHERE id = 6;
SELECT * FROM n ORDER BY id;
SET SESSION sql_mode = '';
INSERT INTO n VALUES (12, 'abc', '1.5.5', '');
UPDATE n SET i = '3-4' WHERE id = 12;
SELECT * FROM n ORDER BY id;
SET SESSION sql_mode = DEFAULT;
DROP TABLE n;
