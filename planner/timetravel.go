package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Time travel over Iceberg tables: the Postgres grammar has no
//
//	FROM t FOR VERSION AS OF <snapshot id>
//	FROM t FOR TIMESTAMP AS OF '<timestamp>'
//
// (Trino's and Spark's syntax), so maskTimeTravel rewrites each into the
// table name "t@<snapshot id>" or "t@<timestamp>", padded with spaces to
// the same byte length, so every offset after it (error positions) stays
// as written. The catalog resolves a name@ref to the snapshot ref selects;
// the quoted name form works directly too.
func maskTimeTravel(sql string) string {
	low := strings.ToLower(sql)
	if !strings.Contains(low, "for") || !strings.Contains(low, " of") {
		return sql
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return sql // the parser reports the error
	}
	ts := res.Tokens
	out := []byte(sql)
	for i := 1; i+4 < len(ts); i++ {
		name, f, kind, as, of, lit := ts[i-1], ts[i], ts[i+1], ts[i+2], ts[i+3], ts[i+4]
		if f.Token != pg.Token_FOR || as.Token != pg.Token_AS || of.Token != pg.Token_OF ||
			(kind.Token != pg.Token_VERSION_P && kind.Token != pg.Token_TIMESTAMP) {
			continue
		}
		if name.Token != pg.Token_IDENT && name.KeywordKind != pg.KeywordKind_UNRESERVED_KEYWORD {
			continue
		}
		var ref string
		switch {
		case kind.Token == pg.Token_VERSION_P && (lit.Token == pg.Token_ICONST || lit.Token == pg.Token_FCONST) && allDigits(sql[lit.Start:lit.End]):
			ref = sql[lit.Start:lit.End] // a snapshot id past int32 scans as FCONST
		case lit.Token == pg.Token_SCONST && lit.End-lit.Start >= 2 && sql[lit.Start] == '\'':
			ref = strings.ReplaceAll(sql[lit.Start+1:lit.End-1], "''", "'")
		default:
			continue
		}
		ident := sql[name.Start:name.End]
		if len(ident) >= 2 && ident[0] == '"' {
			ident = strings.ReplaceAll(ident[1:len(ident)-1], `""`, `"`)
		} else {
			ident = strings.ToLower(ident)
		}
		if strings.ContainsAny(ident+ref, "\"@") {
			continue
		}
		repl := `"` + ident + "@" + ref + `"`
		span := int(lit.End - name.Start)
		if len(repl) > span {
			continue
		}
		copy(out[name.Start:], repl+strings.Repeat(" ", span-len(repl)))
		i += 4
	}
	return string(out)
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
