-- LOAD DATA of a CSV file with quoted fields (@CORPUS@ is this folder).
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(5,2));
LOAD DATA INFILE '@CORPUS@/data/items.csv' INTO TABLE items FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\n' IGNORE 1 LINES;
SELECT id, name, price FROM items ORDER BY id;
DELETE FROM items;
SELECT ROW_COUNT();
LOAD DATA INFILE '@CORPUS@/data/items.csv' INTO TABLE items FIELDS TERMINATED BY ',' ENCLOSED BY '"' IGNORE 1 LINES (id, name, @p) SET price = @p * 2;
SELECT id, name, price FROM items ORDER BY id;
DROP TABLE items;
-- NULL and the word NULL: unquoted NULL is NULL with ENCLOSED BY, quoted
-- "NULL" is the text; \N into a user variable makes it NULL.
CREATE TABLE f (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(5,2) DEFAULT 9.99);
LOAD DATA INFILE '@CORPUS@/data/fields.csv' IGNORE INTO TABLE f FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES;
SELECT id, name, price FROM f ORDER BY id;
SELECT id FROM f WHERE name IS NULL ORDER BY id;
DELETE FROM f;
LOAD DATA INFILE '@CORPUS@/data/fields.csv' IGNORE INTO TABLE f FIELDS TERMINATED BY ',' IGNORE 1 LINES (id, @n, @p) SET name = IFNULL(@n, 'was null'), price = IF(@p IS NULL, 0, @p);
SELECT id, name, price FROM f ORDER BY id;
-- Too few and too many fields, and an empty field for a number, refused
-- in a strict sql_mode.
DELETE FROM f;
LOAD DATA INFILE '@CORPUS@/data/fields.csv' INTO TABLE f FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 5 LINES;
LOAD DATA INFILE '@CORPUS@/data/fields.csv' INTO TABLE f FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 6 LINES;
LOAD DATA INFILE '@CORPUS@/data/fields.csv' INTO TABLE f FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 7 LINES;
SELECT id, name, price FROM f ORDER BY id;
LOAD DATA INFILE '@CORPUS@/data/fields.csv' INTO TABLE f FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 4 LINES;
SELECT COUNT(*) FROM f;
DROP TABLE f;
