"""Runs queries through psycopg2, SQLAlchemy and pandas (Debian's
python3-psycopg2, python3-sqlalchemy, python3-pandas) for sluice's client
tests (tests/clients_test.go). Run it with the system Python, which has
Debian's packages:

    /usr/bin/python3 client.py POSTGRES_URL COMMAND

Commands:

    queries  the statements on standard input, each after a line "--@@ NAME"
    params   statements with parameters of every type, as Python values
    meta     SQLAlchemy's inspector and pandas.read_sql

Each answer is one JSON line: {"name", "cols", "types", "rows"} or
{"name", "error", "sqlstate"}. Values are JSON numbers for numeric types
(numeric as its exact text), strings for text, dates and timestamps (ISO),
booleans, null.
"""

import datetime
import decimal
import json
import sys

import psycopg2


def value(v):
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    if isinstance(v, list):  # a Postgres array, decoded to a list
        return [value(x) for x in v]
    return v


def emit(name, fn):
    try:
        out = fn()
        out["name"] = name
    except Exception as e:  # noqa: BLE001 - every failure is reported
        pgcode = getattr(e, "pgcode", None) or getattr(getattr(e, "orig", None), "pgcode", None)
        out = {"name": name, "error": "%s: %s" % (type(e).__name__, str(e).strip()), "sqlstate": pgcode}
    print(json.dumps(out, default=str), flush=True)


def run(conn, sql, args=None):
    def fn():
        with conn.cursor() as cur:
            cur.execute(sql, args)
            rows = [[value(v) for v in r] for r in cur.fetchall()]
            return {
                "cols": [d.name for d in cur.description],
                "types": [str(d.type_code) for d in cur.description],
                "rows": rows,
            }

    return fn


def statements(text):
    out, name, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("--@@ "):
            if name is not None:
                out.append((name, "\n".join(lines)))
            name, lines = line[5:].strip(), []
        else:
            lines.append(line)
    if name is not None:
        out.append((name, "\n".join(lines)))
    return out


def queries(url):
    conn = psycopg2.connect(url)
    conn.autocommit = True
    for name, sql in statements(sys.stdin.read()):
        emit(name, run(conn, sql))


def params(url):
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cases = [
        ("int", "select n_name from nation where n_nationkey = %s", (7,)),
        ("bigint", "select count(*) from orders where o_orderkey < %s", (5000000000,)),
        ("double", "select count(*) from customer where c_acctbal > %s", (5000.5,)),
        ("numeric", "select count(*) from lineitem where l_extendedprice > %s", (decimal.Decimal("50000.25"),)),
        ("text", "select c_custkey, c_name from customer where c_mktsegment = %s order by c_custkey limit 5",
         ("BUILDING",)),
        ("bool", "select n_name from nation where (n_nationkey < 3) = %s order by n_name", (True,)),
        ("date", "select count(*) from orders where o_orderdate < %s", (datetime.date(1995, 3, 15),)),
        ("date_object", "select count(*) from orders where o_orderdate >= %s", (datetime.date(1995, 3, 15),)),
        ("timestamp", "select count(*) from orders where cast(o_orderdate as timestamp) < %s",
         (datetime.datetime(1995, 3, 15, 12, 30),)),
        ("timestamp_eq", "select count(*) from orders where cast(o_orderdate as timestamp) = %s",
         (datetime.datetime(1995, 3, 15),)),
        ("limit", "select o_orderkey from orders order by o_orderkey limit %s", (7,)),
        ("mixed", "select c_custkey, c_acctbal from customer where c_mktsegment = %s and c_acctbal > %s"
                  " and c_nationkey = %s order by c_custkey limit %s",
         ("MACHINERY", decimal.Decimal("1000.5"), 3, 4)),
    ]
    for name, sql, args in cases:
        emit(name, run(conn, sql, args))


def meta(url):
    import pandas
    import sqlalchemy

    engine = sqlalchemy.create_engine(url.replace("postgres://", "postgresql+psycopg2://", 1))

    def rows(name, vals):
        emit(name, lambda: {"cols": ["value"], "types": ["json"], "rows": [[v] for v in vals()]})

    def insp():
        return sqlalchemy.inspect(engine)

    rows("get_schema_names", lambda: insp().get_schema_names())
    rows("get_table_names", lambda: insp().get_table_names())
    rows("get_view_names", lambda: insp().get_view_names())
    rows("has_table", lambda: [insp().has_table("nation"), insp().has_table("nosuch")])
    rows("get_columns", lambda: [
        {"name": c["name"], "type": str(c["type"]), "nullable": c["nullable"], "default": c["default"],
         "autoincrement": c["autoincrement"]}
        for c in insp().get_columns("nation")])
    rows("get_columns_orders", lambda: [
        {"name": c["name"], "type": str(c["type"]), "nullable": c["nullable"]} for c in insp().get_columns("orders")])
    rows("get_pk_constraint", lambda: [insp().get_pk_constraint("nation")])
    rows("get_foreign_keys", lambda: insp().get_foreign_keys("nation"))
    rows("get_indexes", lambda: insp().get_indexes("nation"))
    rows("get_unique_constraints", lambda: insp().get_unique_constraints("nation"))

    def frame(df):
        return {"cols": list(df.columns), "types": [str(t) for t in df.dtypes],
                "rows": [[value(v.item() if hasattr(v, "item") else v) for v in r] for r in df.itertuples(index=False)]}

    sql = "select n_nationkey, n_name, n_regionkey from nation order by n_nationkey"
    emit("read_sql", lambda: frame(pandas.read_sql(sql, engine)))
    emit("read_sql_chunks", lambda: frame(pandas.concat(list(pandas.read_sql(sql, engine, chunksize=7)))))
    with engine.connect() as c:
        emit("read_sql_params", lambda: frame(pandas.read_sql(
            sqlalchemy.text("select n_name from nation where n_regionkey = :r order by n_name"), c, params={"r": 2})))
    # A server-side (named) cursor: psycopg2 sends DECLARE ... CURSOR and FETCH.
    with engine.connect().execution_options(stream_results=True) as c:
        emit("read_sql_stream", lambda: frame(pandas.concat(list(pandas.read_sql(sql, c, chunksize=7)))))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: client.py POSTGRES_URL queries|params|meta")
    url, cmd = sys.argv[1], sys.argv[2]
    {"queries": queries, "params": params, "meta": meta}[cmd](url)


if __name__ == "__main__":
    main()
