// Runs queries through node-postgres (pg, pinned in package-lock.json) for
// sluice's client tests (tests/clients_test.go):
//
//	node client.js POSTGRES_URL COMMAND
//
// Commands:
//
//	queries  the statements on standard input, each after a line "--@@ NAME",
//	         each as a plain query (simple protocol) and as a named
//	         prepared statement (extended protocol)
//	params   statements with parameters of every type, as JavaScript values
//	binary   the statements on standard input, results asked in binary
//
// Each answer is one JSON line: {"name", "cols", "types", "rows"} or
// {"name", "error", "sqlstate"}. node-postgres gives int8 and numeric as
// strings (exact), dates and timestamps as Date (printed as their local
// wall time).
'use strict';

const { Client } = require('pg');

// A date or timestamp column comes back as a Date at that local wall
// time (node-postgres reads them in the process's time zone): print the
// local wall time.
function localTime(d, dateOnly) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  const day = `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  if (dateOnly) {
    return day;
  }
  return `${day} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function value(v, oid) {
  if (v instanceof Date) {
    return localTime(v, oid === 1082);
  }
  if (typeof v === 'bigint') {
    return v.toString();
  }
  if (typeof v === 'number' && !Number.isFinite(v)) {
    return String(v);
  }
  return v;
}

async function emit(client, name, query) {
  let out;
  try {
    const res = await client.query(query);
    out = {
      name,
      cols: res.fields.map((f) => f.name),
      types: res.fields.map((f) => String(f.dataTypeID)),
      rows: res.rows.map((r) => r.map((v, i) => value(v, res.fields[i].dataTypeID))),
    };
  } catch (e) {
    out = { name, error: String(e.message), sqlstate: e.code || null };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

function statements(text) {
  const out = [];
  let name = null;
  let lines = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('--@@ ')) {
      if (name !== null) {
        out.push([name, lines.join('\n')]);
      }
      name = line.slice(5).trim();
      lines = [];
    } else {
      lines.push(line);
    }
  }
  if (name !== null) {
    out.push([name, lines.join('\n')]);
  }
  return out;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) {
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function queries(client) {
  for (const [name, sql] of statements(await readStdin())) {
    await emit(client, name + '/simple', { text: sql, rowMode: 'array' });
    await emit(client, name + '/prepared', { name: 'stmt_' + name, text: sql, rowMode: 'array' });
  }
}

// binary: the statements on standard input, each asking for its results
// in binary format (columns the server has no binary form for come as
// text, as the RowDescription says).
async function binary(client) {
  for (const [name, sql] of statements(await readStdin())) {
    await emit(client, name + '/binary', { text: sql, rowMode: 'array', binary: true });
  }
}

async function params(client) {
  const cases = [
    ['int', 'select n_name from nation where n_nationkey = $1', [7]],
    ['bigint', 'select count(*) from orders where o_orderkey < $1', [5000000000n]],
    ['double', 'select count(*) from customer where c_acctbal > $1', [5000.5]],
    ['numeric', 'select count(*) from lineitem where l_extendedprice > $1', ['50000.25']],
    ['text', 'select c_custkey, c_name from customer where c_mktsegment = $1 order by c_custkey limit 5', ['BUILDING']],
    ['bool', 'select n_name from nation where (n_nationkey < 3) = $1 order by n_name', [true]],
    // A Date is sent as its local time with the offset (TZ is set by the test).
    ['date', 'select count(*) from orders where o_orderdate < $1', [new Date(1995, 2, 15)]],
    ['date_object', 'select count(*) from orders where o_orderdate >= $1', [new Date(1995, 2, 15)]],
    ['timestamp', 'select count(*) from orders where cast(o_orderdate as timestamp) < $1', [new Date(1995, 2, 15, 12, 30)]],
    ['timestamp_eq', 'select count(*) from orders where cast(o_orderdate as timestamp) = $1', [new Date(1995, 2, 15)]],
    ['limit', 'select o_orderkey from orders order by o_orderkey limit $1', [7]],
    ['mixed', 'select c_custkey, c_acctbal from customer where c_mktsegment = $1 and c_acctbal > $2' +
      ' and c_nationkey = $3 order by c_custkey limit $4', ['MACHINERY', '1000.5', 3, 4]],
  ];
  for (const [name, text, values] of cases) {
    await emit(client, name, { text, values, rowMode: 'array' });
  }
}

async function main() {
  const [url, cmd] = process.argv.slice(2);
  const run = { queries, params, binary }[cmd];
  if (!url || !run) {
    process.stderr.write('usage: node client.js POSTGRES_URL queries|params|binary\n');
    process.exit(2);
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await run(client);
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  process.stderr.write(String(e.stack || e) + '\n');
  process.exit(1);
});
