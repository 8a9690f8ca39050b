// Transactions through JDBC (MariaDB Connector/J): setAutoCommit(false),
// commit(), rollback(), setReadOnly().
//
// Usage: java -cp mariadb-java-client.jar JdbcTx.java HOST PORT DB
//
// With MIRAJ_SSL_CA set (the server's CA file), the connections are made
// over TLS (useSsl, serverSslCert: the server's certificate and address are
// verified against that CA).
//
// Connector/J trusts the server's status flags: setAutoCommit(false) sends
// nothing when the flags say autocommit is already off, and commit() and
// rollback() send nothing unless the flags say a transaction is open. Each
// scenario runs twice: with statements sent as text, and with server-side
// prepared statements (the binary protocol). Prints one line per check;
// exits 1 at the first one that fails.

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;

public class JdbcTx {
    static String url;

    static void check(String what, Object got, Object want) {
        if (!Objects.equals(got, want)) {
            System.out.println("FAIL: " + what + ": got " + got + ", want " + want);
            System.exit(1);
        }
        System.out.println("ok: " + what + ": " + got);
    }

    static long one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    // The driver's copy of SERVER_STATUS_IN_TRANS (Protocol.inTransaction(),
    // reached through the connection's protected getProtocol()).
    static boolean inTransaction(Connection c) throws Exception {
        Object conn = c.unwrap(Class.forName("org.mariadb.jdbc.MariaDbConnection"));
        Method get = conn.getClass().getDeclaredMethod("getProtocol");
        get.setAccessible(true);
        Object protocol = get.invoke(conn);
        Method in = Class.forName("org.mariadb.jdbc.internal.protocol.Protocol").getMethod("inTransaction");
        return (Boolean) in.invoke(protocol);
    }

    static void scenario(String mode, String table) throws Exception {
        String u = url + (mode.equals("server-prepared") ? "&useServerPrepStmts=true" : "");
        try (Connection observer = DriverManager.getConnection(u); Connection c = DriverManager.getConnection(u)) {
            exec(observer, "CREATE TABLE " + table + " (id INT PRIMARY KEY, v INT)");
            String count = "SELECT COUNT(*) FROM " + table;
            check(mode + ": getAutoCommit() after connect", c.getAutoCommit(), true);
            c.setAutoCommit(false);
            check(mode + ": getAutoCommit() after setAutoCommit(false)", c.getAutoCommit(), false);
            check(mode + ": @@autocommit after setAutoCommit(false)", one(c, "SELECT @@autocommit"), 0L);

            try (PreparedStatement ins = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                for (int id = 1; id <= 2; id++) {
                    ins.setInt(1, id);
                    ins.setInt(2, id * 10);
                    ins.executeUpdate();
                }
            }
            check(mode + ": inTransaction() after INSERT", inTransaction(c), true);
            check(mode + ": rows seen by another connection before commit", one(observer, count), 0L);
            c.rollback();
            check(mode + ": inTransaction() after rollback()", inTransaction(c), false);
            check(mode + ": rows after rollback()", one(c, count), 0L);

            exec(c, "INSERT INTO " + table + " VALUES (1, 10), (2, 20)");
            try (PreparedStatement get = c.prepareStatement("SELECT v FROM " + table + " WHERE id = ?")) {
                get.setInt(1, 1);
                try (ResultSet rs = get.executeQuery()) {
                    rs.next();
                    check(mode + ": point select inside the transaction", rs.getInt(1), 10);
                }
            }
            check(mode + ": inTransaction() before commit()", inTransaction(c), true);
            c.commit();
            check(mode + ": inTransaction() after commit()", inTransaction(c), false);
            check(mode + ": rows after commit()", one(observer, count), 2L);

            // Lost update: c reads 10, observer sets 11 (autocommit), c sets
            // 20 and commits: c's commit fails with 1213 / 40001.
            check(mode + ": c reads", one(c, "SELECT v FROM " + table + " WHERE id = 1"), 10L);
            exec(observer, "UPDATE " + table + " SET v = 11 WHERE id = 1");
            exec(c, "UPDATE " + table + " SET v = 20 WHERE id = 1");
            try {
                c.commit();
                check(mode + ": c's commit after a conflicting write", "succeeded (lost update)", "error 1213");
            } catch (SQLException e) {
                check(mode + ": c's commit after a conflicting write", e.getErrorCode() + "/" + e.getSQLState(), "1213/40001");
            }
            check(mode + ": v after the conflict", one(observer, "SELECT v FROM " + table + " WHERE id = 1"), 11L);

            c.setAutoCommit(true);
            check(mode + ": getAutoCommit() after setAutoCommit(true)", c.getAutoCommit(), true);
            check(mode + ": @@autocommit after setAutoCommit(true)", one(c, "SELECT @@autocommit"), 1L);
        }

        // setReadOnly(true), with assureReadOnly so that the driver tells
        // the server (SET SESSION TRANSACTION READ ONLY): a write fails
        // with 1792; setReadOnly(false) writes again.
        try (Connection r = DriverManager.getConnection(u + "&assureReadOnly=true")) {
            r.setReadOnly(true);
            try (PreparedStatement ins = r.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                ins.setInt(1, 9);
                ins.setInt(2, 90);
                try {
                    ins.executeUpdate();
                    check(mode + ": a write after setReadOnly(true)", "succeeded", "error 1792");
                } catch (SQLException e) {
                    check(mode + ": a write after setReadOnly(true)", e.getErrorCode() + "/" + e.getSQLState(), "1792/25006");
                }
                r.setReadOnly(false);
                ins.executeUpdate();
            }
            check(mode + ": rows after setReadOnly(false) and the write", one(r, "SELECT COUNT(*) FROM " + table), 3L);
        }
    }

    // An INSERT into a table with an AFTER INSERT trigger (which writes to
    // a log table with an AUTO_INCREMENT of its own) answers an OK packet:
    // an update count, not a result set, and as generated key the id of its
    // first row in the table itself (the log table's ids are 4 and 5).
    static void triggerInsert(String mode, String u, String suffix) throws Exception {
        String orders = "orders_" + suffix, audit = "audit_" + suffix;
        try (Connection c = DriverManager.getConnection(u)) {
            exec(c, "CREATE TABLE " + orders + " (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20))");
            exec(c, "CREATE TABLE " + audit + " (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))");
            exec(c, "INSERT INTO " + audit + " (what) VALUES ('start'), ('start'), ('start')");
            exec(c, "CREATE TRIGGER " + orders + "_ai AFTER INSERT ON " + orders + " FOR EACH ROW INSERT INTO " + audit
                    + " (what) VALUES (CONCAT('order ', NEW.id))");
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO " + orders + " (item) VALUES (?), (?)", Statement.RETURN_GENERATED_KEYS)) {
                ins.setString(1, "pen");
                ins.setString(2, "ink");
                check(mode + ": INSERT with a trigger: execute() answers a result set", ins.execute(), false);
                check(mode + ": INSERT with a trigger: getUpdateCount()", ins.getUpdateCount(), 2);
                try (ResultSet keys = ins.getGeneratedKeys()) {
                    check(mode + ": INSERT with a trigger: a generated key", keys.next(), true);
                    check(mode + ": INSERT with a trigger: first generated key", keys.getLong(1), 1L);
                }
            }
            check(mode + ": the trigger's rows", one(c, "SELECT COUNT(*) FROM " + audit + " WHERE n > 3 AND what IN ('order 1', 'order 2')"), 2L);
        }
    }

    public static void main(String[] args) throws Exception {
        url = "jdbc:mariadb://" + args[0] + ":" + args[1] + "/" + args[2] + "?user=root&password=";
        String ca = System.getenv("MIRAJ_SSL_CA");
        if (ca != null && !ca.isEmpty()) {
            url += "&useSsl=true&serverSslCert=" + ca;
            try (Connection c = DriverManager.getConnection(url);
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SHOW STATUS LIKE 'Ssl_cipher'")) {
                rs.next();
                check("TLS: the session has a cipher", !rs.getString(2).isEmpty(), true);
            }
        }
        scenario("text", "t_text");
        scenario("server-prepared", "t_prep");
        triggerInsert("text", url, "text");
        triggerInsert("server-prepared", url + "&useServerPrepStmts=true", "prep");
        System.out.println("PASS");
    }
}
