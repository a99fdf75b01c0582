// Client runs queries through pgjdbc (Debian's libpostgresql-jdbc-java) for
// sluice's client tests (tests/clients_test.go). It runs as a source file:
//
//	java -cp /usr/share/java/postgresql.jar Client.java JDBC_URL COMMAND
//
// Commands:
//
//	queries  the statements on standard input, each after a line "--@@ NAME"
//	params   statements with parameters of every type, set the way JDBC
//	         users set them (setInt, setLong, setDouble, setBigDecimal,
//	         setString, setBoolean, setDate, setTimestamp, LIMIT ?)
//	meta     the DatabaseMetaData journey of a schema browser
//
// Each answer is one JSON line: {"name", "cols", "types", "rows"} or
// {"name", "error", "sqlstate"}. Values are JSON numbers for numeric types,
// strings for text and for dates and timestamps (ISO), booleans, null.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

public class Client {
    interface Body {
        ResultSet run() throws SQLException;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Client JDBC_URL queries|params|meta");
            System.exit(2);
        }
        try (Connection c = DriverManager.getConnection(args[0])) {
            switch (args[1]) {
                case "queries":
                    queries(c);
                    break;
                case "params":
                    params(c);
                    break;
                case "meta":
                    meta(c);
                    break;
                default:
                    System.err.println("unknown command " + args[1]);
                    System.exit(2);
            }
        }
    }

    // queries runs each statement of standard input twice: as a plain
    // Statement and as a PreparedStatement (the extended protocol); a
    // statement without rows (SET) answers no columns.
    static void queries(Connection c) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String[]> stmts = new ArrayList<>();
        String name = null;
        StringBuilder sql = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("--@@ ")) {
                if (name != null) {
                    stmts.add(new String[] {name, sql.toString()});
                }
                name = line.substring(5).trim();
                sql.setLength(0);
            } else {
                sql.append(line).append('\n');
            }
        }
        if (name != null) {
            stmts.add(new String[] {name, sql.toString()});
        }
        for (String[] s : stmts) {
            try (Statement st = c.createStatement()) {
                emit(s[0] + "/statement", () -> st.execute(s[1]) ? st.getResultSet() : null, false);
            }
            try (PreparedStatement ps = c.prepareStatement(s[1])) {
                emit(s[0] + "/prepared", () -> ps.execute() ? ps.getResultSet() : null, false);
            }
        }
    }

    static void params(Connection c) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("select n_name from nation where n_nationkey = ?")) {
            ps.setInt(1, 7);
            emit("int", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select count(*) from orders where o_orderkey < ?")) {
            ps.setLong(1, 5000000000L);
            emit("bigint", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select count(*) from customer where c_acctbal > ?")) {
            ps.setDouble(1, 5000.5);
            emit("double", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select count(*) from lineitem where l_extendedprice > ?")) {
            ps.setBigDecimal(1, new BigDecimal("50000.25"));
            emit("numeric", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "select c_custkey, c_name from customer where c_mktsegment = ? order by c_custkey limit 5")) {
            ps.setString(1, "BUILDING");
            emit("text", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "select n_name from nation where (n_nationkey < 3) = ? order by n_name")) {
            ps.setBoolean(1, true);
            emit("bool", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select count(*) from orders where o_orderdate < ?")) {
            ps.setDate(1, java.sql.Date.valueOf("1995-03-15"));
            emit("date", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select count(*) from orders where o_orderdate >= ?")) {
            ps.setObject(1, LocalDate.of(1995, 3, 15));
            emit("date_object", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "select count(*) from orders where cast(o_orderdate as timestamp) < ?")) {
            ps.setTimestamp(1, java.sql.Timestamp.valueOf("1995-03-15 12:30:00"));
            emit("timestamp", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "select count(*) from orders where cast(o_orderdate as timestamp) = ?")) {
            ps.setTimestamp(1, java.sql.Timestamp.valueOf("1995-03-15 00:00:00"));
            emit("timestamp_eq", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement("select o_orderkey from orders order by o_orderkey limit ?")) {
            ps.setInt(1, 7);
            emit("limit", ps::executeQuery, false);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "select c_custkey, c_acctbal from customer where c_mktsegment = ? and c_acctbal > ? and c_nationkey = ?"
                        + " order by c_custkey limit ?")) {
            ps.setString(1, "MACHINERY");
            ps.setBigDecimal(2, new BigDecimal("1000.5"));
            ps.setLong(3, 3L);
            ps.setInt(4, 4);
            emit("mixed", ps::executeQuery, false);
        }
    }

    // meta is what a schema browser (DBeaver, DataGrip, Metabase) asks
    // DatabaseMetaData for; every value is read with getString.
    static void meta(Connection c) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        emit("getTables", () -> md.getTables(null, "public", "%", new String[] {"TABLE"}), true);
        emit("getTables_all", () -> md.getTables(null, null, "%", null), true);
        emit("getTables_pattern", () -> md.getTables(null, "public", "p%", null), true);
        emit("getColumns", () -> md.getColumns(null, "public", "nation", "%"), true);
        emit("getColumns_orders", () -> md.getColumns(null, "public", "orders", "o\\_order%"), true);
        emit("getPrimaryKeys", () -> md.getPrimaryKeys(null, "public", "nation"), true);
        emit("getImportedKeys", () -> md.getImportedKeys(null, "public", "nation"), true);
        emit("getExportedKeys", () -> md.getExportedKeys(null, "public", "nation"), true);
        emit("getIndexInfo", () -> md.getIndexInfo(null, "public", "nation", false, true), true);
        emit("getTableTypes", md::getTableTypes, true);
        emit("getSchemas", md::getSchemas, true);
        emit("getCatalogs", md::getCatalogs, true);
        emitValue("getSQLKeywords", md.getSQLKeywords());
        emitValue("getDatabaseProductVersion", md.getDatabaseProductVersion());
        emitValue("getIdentifierQuoteString", md.getIdentifierQuoteString());
    }

    static void emitValue(String name, String v) {
        System.out.println("{\"name\":" + quote(name) + ",\"cols\":[\"value\"],\"types\":[\"text\"],\"rows\":[["
                + (v == null ? "null" : quote(v)) + "]]}");
    }

    // emit runs body and prints its rows as one JSON line (or its error).
    static void emit(String name, Body body, boolean strings) {
        StringBuilder out = new StringBuilder();
        out.append("{\"name\":").append(quote(name));
        try (ResultSet rs = body.run()) {
            if (rs == null) { // a statement without rows
                System.out.println(out.append(",\"cols\":[],\"types\":[],\"rows\":[]}"));
                System.out.flush();
                return;
            }
            ResultSetMetaData md = rs.getMetaData();
            int n = md.getColumnCount();
            out.append(",\"cols\":[");
            for (int i = 1; i <= n; i++) {
                out.append(i > 1 ? "," : "").append(quote(md.getColumnLabel(i)));
            }
            out.append("],\"types\":[");
            for (int i = 1; i <= n; i++) {
                out.append(i > 1 ? "," : "").append(quote(strings ? "text" : md.getColumnTypeName(i)));
            }
            out.append("],\"rows\":[");
            boolean first = true;
            while (rs.next()) {
                out.append(first ? "[" : ",[");
                first = false;
                for (int i = 1; i <= n; i++) {
                    out.append(i > 1 ? "," : "").append(strings ? jsonString(rs.getString(i)) : value(rs, md, i));
                }
                out.append("]");
            }
            out.append("]}");
        } catch (SQLException e) {
            out.setLength(0);
            out.append("{\"name\":").append(quote(name)).append(",\"error\":").append(quote(String.valueOf(e.getMessage())))
                    .append(",\"sqlstate\":").append(jsonString(e.getSQLState())).append("}");
        }
        System.out.println(out);
        System.out.flush();
    }

    static String value(ResultSet rs, ResultSetMetaData md, int i) throws SQLException {
        switch (md.getColumnTypeName(i)) {
            case "date": {
                LocalDate d = rs.getObject(i, LocalDate.class);
                return d == null ? "null" : quote(d.toString());
            }
            case "timestamp": {
                LocalDateTime t = rs.getObject(i, LocalDateTime.class);
                return t == null ? "null" : quote(t.toString());
            }
        }
        Object v = rs.getObject(i);
        if (v == null) {
            return "null";
        }
        if (v instanceof BigDecimal) {
            return ((BigDecimal) v).toPlainString();
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d) ? v.toString() : quote(v.toString());
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        return quote(v.toString());
    }

    static String jsonString(String s) {
        return s == null ? "null" : quote(s);
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }
}
