package planner

import "strings"

// The pre-parse rewrites (TRY_CAST, QUALIFY, GROUP BY ALL) change only
// words the Postgres grammar lacks, keeping every other byte where it was
// so parser positions stay those of the user's SQL; they find those words
// with one scanner.

// sqlWords calls fn with the offset and lower-cased text of each word of
// sql outside string literals, quoted identifiers and comments, and with
// each parenthesis and semicolon as a one-byte word.
func sqlWords(sql string, fn func(pos int, word string)) {
	lower := strings.ToLower(sql)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j + 1
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return
			}
			i += end + 4
		case c == '(' || c == ')' || c == ';':
			fn(i, sql[i:i+1])
			i++
		case identByte(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(sql) && identByte(sql[j]) {
				j++
			}
			fn(i, lower[i:j])
			i = j
		case identByte(c):
			for i < len(sql) && identByte(sql[i]) {
				i++
			}
		default:
			i++
		}
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func nextIsParen(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(s, "(")
}
