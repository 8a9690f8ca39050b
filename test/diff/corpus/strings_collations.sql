-- Strings, comparisons under the default collation, and functions.
CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20));
INSERT INTO w VALUES (1, 'apple'), (2, 'Apple'), (3, 'APPLE '), (4, 'banana'), (5, 'Äpfel');
SELECT id FROM w WHERE s = 'apple' ORDER BY id;
SELECT COUNT(DISTINCT s) FROM w;
SELECT s FROM w ORDER BY s, id;
SELECT id FROM w WHERE s LIKE 'a%' ORDER BY id;
SELECT id FROM w WHERE s LIKE BINARY 'a%' ORDER BY id;
SELECT 'a' = 'A', 'a' = 'a ', BINARY 'a' = 'A', 'abc' < 'abd';
SELECT CONCAT('a', NULL), CONCAT_WS('-', 'a', NULL, 'b'), LENGTH('héllo'), CHAR_LENGTH('héllo');
SELECT UPPER('straße'), LOWER('ÀB'), REVERSE('abc'), REPEAT('ab', 3), LPAD('7', 3, '0');
SELECT SUBSTRING('hello', 2, 3), LOCATE('l', 'hello'), REPLACE('aaa', 'a', 'b'), TRIM('  x  ');
SELECT FORMAT(1234567.891, 2), HEX('abc'), CAST(12.5 AS CHAR), CAST('12abc' AS SIGNED);
SELECT 'abc' + 1;
SELECT s, LENGTH(s) FROM w WHERE id = 3;
SELECT s, COUNT(*) FROM w GROUP BY s ORDER BY s;
SELECT DISTINCT s FROM w ORDER BY s;
SELECT s FROM w WHERE id < 3 UNION SELECT 'APPLE' ORDER BY s;
DROP TABLE w;
