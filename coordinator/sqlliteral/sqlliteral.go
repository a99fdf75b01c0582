// Package sqlliteral renders client-supplied parameter values as SQL
// literals and substitutes them for the placeholders of a statement's
// text. sluice plans SQL text, so the Postgres wire protocol and Flight
// SQL front ends bind parameters by substitution: a literal built here is
// validated for its type (strings quoted with ' doubled, no NUL bytes),
// so no value can change the statement's shape.
package sqlliteral

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluicedb/sluice/planner/plan"
)

// Null is the SQL NULL literal.
const Null = "NULL"

// Quote is s as a string literal, ' doubled.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// String is s as a string literal; a NUL byte is an error (SL008).
func String(s string, n int) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", plan.Errorf(plan.CodeValue, "parameter $%d: text contains a NUL byte", n)
	}
	return Quote(s), nil
}

// Int is i as an integer literal (a negative one in parentheses, so that
// "- $1" cannot become a comment "--").
func Int(i int64) string {
	if i < 0 {
		return "(" + strconv.FormatInt(i, 10) + ")"
	}
	return strconv.FormatInt(i, 10)
}

// Uint is u as an integer literal.
func Uint(u uint64) string { return strconv.FormatUint(u, 10) }

// Float is f as a DOUBLE PRECISION value (NaN and the infinities as casts
// of their names).
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "CAST('NaN' AS DOUBLE PRECISION)"
	case math.IsInf(f, 1):
		return "CAST('Infinity' AS DOUBLE PRECISION)"
	case math.IsInf(f, -1):
		return "CAST('-Infinity' AS DOUBLE PRECISION)"
	}
	return "CAST(" + strconv.FormatFloat(f, 'g', -1, 64) + " AS DOUBLE PRECISION)"
}

// Bool is TRUE or FALSE.
func Bool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

var numericText = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Numeric is the decimal text s ([+-]digits[.digits][e[+-]digits]) as a
// numeric literal in parentheses; anything else is an error (SL008).
func Numeric(s string, n int) (string, error) {
	t := strings.TrimSpace(s)
	if !numericText.MatchString(t) {
		return "", plan.Errorf(plan.CodeValue, "parameter $%d: invalid numeric value %q", n, truncate(s, 40))
	}
	return "(" + t + ")", nil
}

// Date is the calendar day of t (UTC) as a DATE literal.
func Date(t time.Time) string {
	t = t.UTC()
	if t.Year() <= 0 {
		return "DATE " + Quote(strconv.Itoa(1-t.Year())+t.Format("-01-02")+" BC")
	}
	return "DATE " + Quote(t.Format("2006-01-02"))
}

// Timestamp is t (UTC, to the microsecond) as a TIMESTAMP literal.
func Timestamp(t time.Time) string {
	return "TIMESTAMP " + Quote(t.UTC().Format("2006-01-02 15:04:05.999999"))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Style says which placeholders a statement's text uses.
type Style int

const (
	// Dollar: $1, $2, ... (Postgres); ? is left alone.
	Dollar Style = iota
	// DollarOrQuestion: $1, $2, ... or ?, the nth ? being parameter n
	// (JDBC, ODBC); one statement cannot mix the two.
	DollarOrQuestion
)

// Count is the number of parameters sql takes: its highest $n, or its
// number of ? (DollarOrQuestion).
func Count(sql string, style Style) int {
	n := 0
	_, _ = scan(sql, style, func(k int) (string, error) {
		n = max(n, k)
		return "", nil
	})
	return n
}

// Substitute replaces the placeholders of sql, outside strings, quoted
// identifiers and comments, by lits: $n or the nth ? by lits[n-1]. A
// reference past len(lits), or a mix of $n and ?, is an error (SL008).
func Substitute(sql string, lits []string, style Style) (string, error) {
	return scan(sql, style, func(k int) (string, error) {
		if k < 1 || k > len(lits) {
			return "", plan.Errorf(plan.CodeValue, "there is no parameter $%d (%d given)", k, len(lits))
		}
		return lits[k-1], nil
	})
}

// Nulls is n NULL literals: substituted, they let a statement with
// parameters be planned for its result schema.
func Nulls(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Null
	}
	return out
}

// scan copies sql, calling lit for every placeholder (numbered from 1)
// and writing what it returns in its place.
func scan(sql string, style Style, lit func(int) (string, error)) (string, error) {
	var b strings.Builder
	dollars, questions := false, 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(sql, i, c, i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e') && c == '\'')
			b.WriteString(sql[i:j])
			i = j
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			b.WriteString(sql[i : i+j])
			i += j
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			end := len(sql)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(sql[i:end])
			i = end
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' && (i == 0 || !isIdent(sql[i-1])):
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			k, err := strconv.Atoi(sql[i+1 : j])
			if err != nil {
				k = -1
			}
			if questions > 0 {
				return "", plan.Errorf(plan.CodeValue, "placeholders mix ? and $%d: use one style", k)
			}
			dollars = true
			s, err := lit(k)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i = j
		case c == '?' && style == DollarOrQuestion:
			if dollars {
				return "", plan.Errorf(plan.CodeValue, "placeholders mix $n and ?: use one style")
			}
			questions++
			s, err := lit(questions)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i++
		case c == '$' && (i == 0 || !isIdent(sql[i-1])):
			// A dollar-quoted string: $tag$ ... $tag$.
			if tag, ok := dollarTag(sql[i:]); ok {
				end := strings.Index(sql[i+len(tag):], tag)
				j := len(sql)
				if end >= 0 {
					j = i + len(tag) + end + len(tag)
				}
				b.WriteString(sql[i:j])
				i = j
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipQuoted(sql string, i int, q byte, backslash bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch {
		case backslash && sql[j] == '\\':
			j++
		case sql[j] == q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		if s[j] == '$' {
			return s[:j+1], true
		}
		if !isIdent(s[j]) {
			return "", false
		}
	}
	return "", false
}
