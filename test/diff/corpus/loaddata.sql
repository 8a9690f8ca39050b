-- LOAD DATA of a CSV file with quoted fields (@CORPUS@ is this folder).
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(5,2));
LOAD DATA INFILE '@CORPUS@/data/items.csv' INTO TABLE items FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\n' IGNORE 1 LINES;
SELECT id, name, price FROM items ORDER BY id;
DELETE FROM items;
SELECT ROW_COUNT();
LOAD DATA INFILE '@CORPUS@/data/items.csv' INTO TABLE items FIELDS TERMINATED BY ',' ENCLOSED BY '"' IGNORE 1 LINES (id, name, @p) SET price = @p * 2;
SELECT id, name, price FROM items ORDER BY id;
DROP TABLE items;
