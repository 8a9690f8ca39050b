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
