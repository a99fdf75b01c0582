package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// DuckDB's integer division x // y binds like * and / (left to right, at
// their precedence). The Postgres grammar has no such operator: it reads
// // as a user-defined operator, which binds looser than + and *, so
// 7 // 2 * 2 would parse as 7 // (2 * 2). maskIntDiv rewrites each //
// operator token to "/ " at the same offsets, so the grammar gives it the
// precedence of /, and the binder reads the original text at the operator's
// position to tell the two apart (isIntDiv).
func maskIntDiv(sql string) string {
	if !strings.Contains(sql, "//") {
		return sql
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return sql // the parser reports the error
	}
	out := []byte(sql)
	for _, t := range res.Tokens {
		if t.Token == pg.Token_Op && t.End-t.Start == 2 && sql[t.Start:t.End] == "//" {
			out[t.Start+1] = ' '
		}
	}
	return string(out)
}

// isIntDiv reports whether the / operator at loc was written //.
func (b *binder) isIntDiv(loc int32) bool {
	i := int(loc)
	return i >= 0 && i+2 <= len(b.sql) && b.sql[i:i+2] == "//"
}
