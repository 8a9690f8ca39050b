// Transactions through mysql2: beginTransaction / commit / rollback.
//
// Usage: node tx.js HOST PORT DB
//
// With MIRAJ_SSL_CA set (the server's CA file), the connections are made
// over TLS, verifying the server's certificate and address against it.
//
// mysql2 hands the status flags of each OK packet to the caller
// (ResultSetHeader.serverStatus): they must say IN_TRANS exactly while the
// transaction is open, and ResultSetHeader.warningStatus the statement's
// warning count. Prints one line per check; exits 1 at the first one that
// fails.
'use strict';

const fs = require('fs');
const mysql = require('mysql2/promise');

const SERVER_STATUS_IN_TRANS = 0x0001;
const SERVER_STATUS_AUTOCOMMIT = 0x0002;
const [host, port, database] = process.argv.slice(2);

function check(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    console.log(`FAIL: ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    process.exit(1);
  }
  console.log(`ok: ${what}: ${JSON.stringify(got)}`);
}

function inTrans(header) {
  return (header.serverStatus & SERVER_STATUS_IN_TRANS) !== 0;
}

async function main() {
  const opts = { host, port: Number(port), user: 'root', password: '', database };
  if (process.env.MIRAJ_SSL_CA) {
    opts.ssl = { ca: fs.readFileSync(process.env.MIRAJ_SSL_CA) };
  }
  const observer = await mysql.createConnection(opts);
  if (opts.ssl) {
    const [rows] = await observer.query("SHOW STATUS LIKE 'Ssl_cipher'");
    check('TLS: the session has a cipher', rows[0].Value !== '', true);
  }
  const count = async () => (await observer.query('SELECT COUNT(*) AS n FROM t'))[0][0].n;
  await observer.query('CREATE TABLE t (id INT PRIMARY KEY, v INT)');

  const c = await mysql.createConnection(opts);
  let [h] = await c.query('INSERT INTO t VALUES (100, 0)');
  check('AUTOCOMMIT in the OK packet of an autocommitted INSERT', (h.serverStatus & SERVER_STATUS_AUTOCOMMIT) !== 0, true);
  check('IN_TRANS in the OK packet of an autocommitted INSERT', inTrans(h), false);
  // The warning count of an OK packet, by which drivers decide whether
  // to ask for the warnings: text protocol, then a prepared statement
  // (execute: COM_STMT_EXECUTE).
  [h] = await c.query('INSERT IGNORE INTO t VALUES (100, 1)');
  check('warnings in the OK packet of INSERT IGNORE of a duplicate key', h.warningStatus, 1);
  [h] = await c.execute('INSERT IGNORE INTO t VALUES (?, ?)', [100, 1]);
  check('warnings in the OK packet of a prepared INSERT IGNORE of a duplicate key', h.warningStatus, 1);
  [h] = await c.execute('UPDATE t SET v = ? WHERE id = ?', [2, 100]);
  check('warnings in the OK packet of a prepared UPDATE without any', h.warningStatus, 0);
  await c.query('DELETE FROM t');

  [h] = await c.beginTransaction();
  check('IN_TRANS after beginTransaction()', inTrans(h), true);
  [h] = await c.query('INSERT INTO t VALUES (1, 10), (2, 20)');
  check('IN_TRANS after INSERT', inTrans(h), true);
  check('rows seen by another connection before commit', await count(), 0);
  [h] = await c.rollback();
  check('IN_TRANS after rollback()', inTrans(h), false);
  check('rows after rollback()', await count(), 0);

  await c.beginTransaction();
  await c.execute('INSERT INTO t VALUES (?, ?)', [1, 10]); // prepared statements too
  await c.execute('INSERT INTO t VALUES (?, ?)', [2, 20]);
  [h] = await c.execute('UPDATE t SET v = v + 1 WHERE id = ?', [1]);
  check('IN_TRANS after a prepared UPDATE', inTrans(h), true);
  [h] = await c.commit();
  check('IN_TRANS after commit()', inTrans(h), false);
  check('rows after commit()', await count(), 2);

  // A failing statement inside: undone alone, then the whole rolled back.
  await c.beginTransaction();
  await c.query('UPDATE t SET v = 99 WHERE id = 2');
  let code = null;
  try {
    await c.query('INSERT INTO t VALUES (1, 0)');
  } catch (e) {
    code = e.errno;
  }
  check('duplicate key inside the transaction', code, 1062);
  await c.rollback();
  check('rows after rollback()', (await observer.query('SELECT id, v FROM t ORDER BY id'))[0].map((r) => [r.id, r.v]), [[1, 11], [2, 20]]);

  // An INSERT into a table with an AFTER INSERT trigger (which writes to
  // a log table with an AUTO_INCREMENT of its own) answers an OK packet: a
  // ResultSetHeader, not rows, with the rows it inserted and the id of its
  // first row in the table itself (not the log table's, from 4 on).
  await observer.query('CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))');
  await observer.query('CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))');
  await observer.query("INSERT INTO audit (what) VALUES ('start'), ('start'), ('start')");
  await observer.query("CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('order ', NEW.id))");
  [h] = await c.query("INSERT INTO orders (item) VALUES ('pen'), ('ink')");
  check('INSERT with a trigger: the answer', h.constructor.name, 'ResultSetHeader');
  check('INSERT with a trigger: affectedRows', h.affectedRows, 2);
  check('INSERT with a trigger: insertId', h.insertId, 1);
  [h] = await c.execute('INSERT INTO orders (item) VALUES (?), (?)', ['pad', 'cap']);
  check('prepared INSERT with a trigger: the answer', h.constructor.name, 'ResultSetHeader');
  check('prepared INSERT with a trigger: affectedRows', h.affectedRows, 2);
  check('prepared INSERT with a trigger: insertId', h.insertId, 3);
  check("the trigger's rows", (await observer.query('SELECT what FROM audit WHERE n > 3 ORDER BY n'))[0].map((r) => r.what),
    ['order 1', 'order 2', 'order 3', 'order 4']);

  await c.end();
  await observer.end();
  console.log('PASS');
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack || e}`);
  process.exit(1);
});
