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

// DuckDB's unquoted interval literals: INTERVAL 1 DAY, INTERVAL 2 HOURS.
// The Postgres grammar takes only a quoted count (INTERVAL '1' DAY) and a
// singular unit, so maskIntervalCount rewrites INTERVAL <integer> <unit>
// to INTERVAL'<integer>'<UNIT> at the same offsets: the blanks around the
// count become the quotes, and a plural unit loses its s to a blank.
func maskIntervalCount(sql string) string {
	if !strings.Contains(strings.ToLower(sql), "interval") {
		return sql
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return sql
	}
	out := []byte(sql)
	toks := res.Tokens
	for i := 0; i+2 < len(toks); i++ {
		kw, num, unit := toks[i], toks[i+1], toks[i+2]
		if kw.Token != pg.Token_INTERVAL || num.Token != pg.Token_ICONST ||
			num.Start <= kw.End || unit.Start <= num.End || !intervalUnitWord(sql[unit.Start:unit.End]) {
			continue
		}
		out[num.Start-1], out[num.End] = '\'', '\''
		if w := sql[unit.Start:unit.End]; len(w) > 1 && (w[len(w)-1] == 's' || w[len(w)-1] == 'S') {
			out[unit.End-1] = ' '
		}
	}
	return string(out)
}

// intervalUnitWord reports whether w is a unit the Postgres grammar takes
// after a quoted interval count, singular or plural.
func intervalUnitWord(w string) bool {
	switch strings.TrimSuffix(strings.ToLower(w), "s") {
	case "year", "month", "day", "hour", "minute", "second":
		return true
	}
	return false
}
