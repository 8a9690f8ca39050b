-- Stored procedures and triggers: the columns of a procedure's result,
-- its parameters from one CALL to the next, assignments in bodies.
CREATE TABLE rt (a INT, b VARCHAR(5));
INSERT INTO rt VALUES (1, 'q'), (2, 'r');
CREATE PROCEDURE rp(IN x INT) BEGIN DECLARE z INT DEFAULT 7; SELECT x, z, x+1, x AS xx, a, rt.b, CONCAT(b, x), (SELECT MAX(a) FROM rt) FROM rt ORDER BY a; END;
CREATE PROCEDURE rq(x VARCHAR(5)) SELECT x, UPPER(x), @rv := x;
CREATE PROCEDURE rs(IN x INT, OUT y INT) SET y = x * 3;
CREATE PROCEDURE rw(IN n INT, OUT total INT) BEGIN DECLARE i INT DEFAULT 0; SET total = 0; WHILE i < n DO SET i = i + 1; SET total = total + i; END WHILE; END;
CALL rp(4);
CALL rq('hey');
CALL rp(5);
CALL rs(5, @ro);
SELECT @ro;
CALL rw(4, @rt);
SELECT @rt;
CALL rq('b');
SELECT @rv;
CREATE TABLE rlog (v INT);
CREATE TRIGGER rtr BEFORE INSERT ON rlog FOR EACH ROW SET @rlast := NEW.v, @rn := 2, @rm = (SELECT @rk := 5);
INSERT INTO rlog VALUES (42);
SELECT @rlast, @rn, @rm, @rk;
DROP TRIGGER rtr;
DROP PROCEDURE rp;
DROP PROCEDURE rq;
DROP PROCEDURE rs;
DROP PROCEDURE rw;
DROP TABLE rlog;
DROP TABLE rt;
CREATE TABLE rdq (id INT PRIMARY KEY);
INSERT INTO rdq VALUES (1), (2), (3);
CREATE PROCEDURE rdel() BEGIN DELETE QUICK FROM rdq WHERE id = 1; DELETE IGNORE FROM rdq WHERE id = 2; END;
CALL rdel();
SELECT id FROM rdq;
DROP PROCEDURE rdel;
DROP TABLE rdq;
-- CALL with a wrong number of arguments: 1318 (it was 1105).
CREATE PROCEDURE p2args(a INT, b INT) SELECT a + b AS s;
CALL p2args(1);
CALL p2args(1, 2, 3);
CALL p2args(1, 2);
DROP PROCEDURE p2args;
-- DROP … IF EXISTS of a procedure or trigger that does not exist: a note.
DROP PROCEDURE IF EXISTS nope;
DROP PROCEDURE IF EXISTS NoPe2;
DROP TRIGGER IF EXISTS nope;
