package planner

import "testing"

func TestMaskFromPaths(t *testing.T) {
	for in, want := range map[string]string{
		`select * from 's3://b/x.parquet'`:                                 `select * from "s3://b/x.parquet"`,
		`select * from t join 's3://b/x.csv' x on t.a = x.a`:               `select * from t join "s3://b/x.csv" x on t.a = x.a`,
		`select * from t, 's3://b/x.csv' where a = 'x'`:                    `select * from t, "s3://b/x.csv" where a = 'x'`,
		`select 'a', 'b' from t where x in ('c', 'd')`:                     `select 'a', 'b' from t where x in ('c', 'd')`,
		`select * from (select 1, 'x' from 's3://b/y.json') s`:             `select * from (select 1, 'x' from "s3://b/y.json") s`,
		`select * from read_csv('s3://b/x.csv', delim = '|')`:              `select * from read_csv('s3://b/x.csv', delim = '|')`,
		`select * from 's3://b/it''s.csv'`:                                 `select * from 's3://b/it''s.csv'`,
		`copy t from 'x.csv'`:                                              `copy t from 'x.csv'`,
		`select extract(year from '2020-01-01'::date) from 's3://b/x.csv'`: `select extract(year from '2020-01-01'::date) from "s3://b/x.csv"`,
		`select substring('abc' from 2), trim(both 'x' from 'xax')`:        `select substring('abc' from 2), trim(both 'x' from 'xax')`,
		`select a is distinct from 'x', a is not distinct from 'y' from t`: `select a is distinct from 'x', a is not distinct from 'y' from t`,
		`select (select 1 from 's3://b/y.csv')`:                            `select (select 1 from "s3://b/y.csv")`,
		`select * from read_parquet(['s3://b/x/', 's3://b/y'], a=1)`:       `select * from read_parquet(('s3://b/x/', 's3://b/y'), a=1)`,
		`select [1, 2], read_csv from t`:                                   `select [1, 2], read_csv from t`,
	} {
		if got := maskFromPaths(in); got != want {
			t.Errorf("maskFromPaths(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestReadCallText(t *testing.T) {
	r := &ReadCall{Func: "read_csv", Format: "csv", Path: "s3://b/it's/", Options: map[string]string{"quote": "'", "delim": "|"}}
	if got, want := r.Text(), `read_csv('s3://b/it''s/', delim='|', quote='''')`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for p, want := range map[string]string{"s3://b/x.parquet": "parquet", "s3://b/x.CSV.gz": "csv", "s3://b/x.jsonl": "json", "s3://b/x/": "", "s3://b/x.txt": ""} {
		if got := FormatOfPath(p); got != want {
			t.Errorf("FormatOfPath(%s) = %q, want %q", p, got, want)
		}
	}
}

func TestMaskStructArgs(t *testing.T) {
	for in, want := range map[string]string{
		`select * from read_csv('x', types={'a': 'VARCHAR', 'b:c': 'DATE'})`: `select * from read_csv('x', types=('a', 'VARCHAR', 'b:c', 'DATE'))`,
		`select * from read_csv('x', columns => {'a':'INT'})`:                `select * from read_csv('x', columns => ('a','INT'))`,
		`select '{' from read_csv('x')`:                                      `select '{' from read_csv('x')`,
		`select * from t where s = {'a': 1}`:                                 `select * from t where s = {'a': 1}`,
	} {
		if got := maskStructArgs(in); got != want {
			t.Errorf("maskStructArgs(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}
