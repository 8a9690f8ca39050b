-- Transactions and savepoints in one session.
CREATE TABLE acct (id INT PRIMARY KEY, bal DECIMAL(10,2));
INSERT INTO acct VALUES (1, 100.00), (2, 50.00);
START TRANSACTION;
UPDATE acct SET bal = bal - 30 WHERE id = 1;
UPDATE acct SET bal = bal + 30 WHERE id = 2;
SAVEPOINT s1;
UPDATE acct SET bal = 0;
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT id, bal FROM acct ORDER BY id;
BEGIN;
DELETE FROM acct;
ROLLBACK;
SELECT COUNT(*) FROM acct;
ROLLBACK TO SAVEPOINT nosuch;
SET autocommit = 0;
INSERT INTO acct VALUES (3, 1.00);
ROLLBACK;
SET autocommit = 1;
SELECT COUNT(*) FROM acct;
SELECT @@autocommit, @@transaction_isolation;
-- READ COMMITTED is built (it warned that it was not): no warning, and
-- the transaction reads its own writes.
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;
START TRANSACTION;
INSERT INTO acct VALUES (4, 2.00);
SELECT COUNT(*) FROM acct;
COMMIT;
SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SELECT COUNT(*) FROM acct;
DROP TABLE acct;
