package planner

import "strings"

// DuckDB's nested literals, which the Postgres grammar lacks, are rewritten
// to the calls they stand for before the text is parsed:
//
//	[a, b, c]         (list_value(a, b, c))
//	{'k': v, 'j': w}  (struct_pack("k" := v, "j" := w))
//	MAP {k: v, j: w}  (sluice_map_literal(k, v, j, w), bound as map([k, j], [v, w]))
//
// (parenthesized, so a subscript or field may follow, as in DuckDB).
//
// A '[' opens a list literal where an expression starts (after an operator,
// a comma, an opening parenthesis or bracket, or a keyword); after a value
// (a name, a constant, ')' or ']') it is a subscript or slice and stays, as
// ARRAY[...], a type's [] and read_parquet(['...']) do. Strings, quoted
// names and comments are copied as they are. The rewritten text is longer:
// positions in errors are counted in it.

// literalKeywords are the words after which '[' starts a list literal.
var literalKeywords = map[string]bool{
	"select": true, "where": true, "and": true, "or": true, "not": true, "then": true, "else": true,
	"when": true, "in": true, "by": true, "on": true, "having": true, "case": true, "is": true,
	"distinct": true, "like": true, "between": true, "all": true, "any": true, "some": true, "return": true,
	"from": true, "values": true, "as": false,
}

// rewriteNestedLiterals rewrites list and struct literals of sql; text
// without '[' or '{' is returned as it is.
func rewriteNestedLiterals(sql string) string {
	if !strings.ContainsAny(sql, "[{") {
		return sql
	}
	var out strings.Builder
	type open struct {
		kind   byte // 'L' list literal, 'S' subscript, 'B' struct literal, 'M' map literal, '(' parenthesis
		keyAt  int  // 'B': output offset of the current key's opening quote (-1: none)
		keyEnd int
		call   int // '(': output offset of the function name before it (-1: none)
	}
	lastCall := -1 // the call a ')' just closed: its name's output offset
	var stack []open
	prevWord := ""     // the last word, lowercased, when it was the last token
	wordAt := -1       // output offset of that word
	prevSig := byte(0) // the last significant character written
	top := func() *open {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(sql))
			if t := top(); t != nil && t.kind == 'B' && c == '\'' && (prevSig == '{' || prevSig == ',') {
				t.keyAt, t.keyEnd = out.Len(), out.Len()+end-i
			}
			out.WriteString(sql[i:end])
			i, prevSig, prevWord = end-1, c, ""
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			out.WriteString(sql[i : i+j])
			i += j - 1
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			end := len(sql)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			out.WriteString(sql[i:end])
			i = end - 1
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out.WriteByte(c)
			continue
		case litWordByte(c):
			j := i
			for j < len(sql) && litWordByte(sql[j]) {
				j++
			}
			out.WriteString(sql[i:j])
			prevWord, prevSig, wordAt = strings.ToLower(sql[i:j]), c, out.Len()-(j-i)
			i = j - 1
			continue
		case c == '[':
			valueBefore := prevSig != 0 && (litWordByte(prevSig) || prevSig == ')' || prevSig == ']' || prevSig == '\'' || prevSig == '"' || prevSig == '}')
			if prevWord != "" && literalKeywords[prevWord] {
				valueBefore = false
			}
			if !valueBefore && prevSig == '(' && readCall(out.String()) {
				valueBefore = true // read_parquet(['...']): maskReadLists
			}
			if valueBefore && prevSig == ')' && lastCall >= 0 && !(i+1 < len(sql) && sql[i+1] == ']') { // T(p, s)[] is a type
				// f(x)[i]: the Postgres grammar takes a subscript only
				// after a parenthesized expression, so the call gets one.
				s := out.String()
				out.Reset()
				out.WriteString(s[:lastCall] + "(" + s[lastCall:] + ")")
			}
			if valueBefore {
				stack = append(stack, open{kind: 'S'})
				out.WriteByte('[')
			} else {
				stack = append(stack, open{kind: 'L'})
				out.WriteString("(list_value(")
			}
		case c == ']':
			if t := top(); t != nil && (t.kind == 'L' || t.kind == 'S') {
				if t.kind == 'L' {
					out.WriteString("))")
				} else {
					out.WriteByte(']')
				}
				stack = stack[:len(stack)-1]
			} else {
				out.WriteByte(c)
			}
		case c == '{':
			if (prevSig == '=' || prevSig == '>') && strings.Contains(strings.ToLower(sql), "read_csv") {
				return sql // a read function's struct argument (maskStructArgs)
			}
			if prevWord == "map" && wordAt >= 0 {
				// MAP {k: v, ...}: the word goes, the pairs become
				// the arguments of the map literal's call.
				s := out.String()
				out.Reset()
				out.WriteString(s[:wordAt] + "(" + mapLiteralFunc + "(")
				stack = append(stack, open{kind: 'M', keyAt: -1})
				break
			}
			stack = append(stack, open{kind: 'B', keyAt: -1})
			out.WriteString("(struct_pack(")
		case c == '}':
			if t := top(); t != nil && (t.kind == 'B' || t.kind == 'M') {
				stack = stack[:len(stack)-1]
				out.WriteString("))")
			} else {
				out.WriteByte(c)
			}
		case c == '(':
			call := -1
			if prevWord != "" && prevSig != 0 && litWordByte(prevSig) && !literalKeywords[prevWord] && prevWord != "array" {
				call = wordAt
			}
			stack = append(stack, open{kind: '(', call: call})
			out.WriteByte(c)
		case c == ')':
			closed := -1
			if t := top(); t != nil && t.kind == '(' {
				closed = t.call
				stack = stack[:len(stack)-1]
			}
			out.WriteByte(c)
			prevSig, prevWord, lastCall = c, "", closed
			continue
		case c == ':' && i+1 < len(sql) && sql[i+1] == ':':
			out.WriteString("::")
			i++
		case c == ':' && top() != nil && top().kind == 'M':
			out.WriteByte(',')
		case c == ':' && top() != nil && top().kind == 'B':
			t := top()
			if t.keyAt >= 0 && t.keyEnd == len(strings.TrimRight(out.String(), " \t\n\r")) {
				s := []byte(out.String())
				key := s[t.keyAt+1 : t.keyEnd-1]
				if !strings.ContainsAny(string(key), `"'`) {
					s[t.keyAt], s[t.keyEnd-1] = '"', '"'
					out.Reset()
					out.Write(s)
				}
			}
			t.keyAt = -1
			out.WriteString(" :=")
		default:
			out.WriteByte(c)
		}
		prevSig, prevWord, lastCall = c, "", -1
	}
	return out.String()
}

func litWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 || c == '$' || c == '.'
}

// readCall reports whether text ends with a read function's name and '('.
func readCall(text string) bool {
	t := strings.TrimRight(strings.TrimSuffix(strings.TrimRight(text, " \t\n\r"), "("), " \t\n\r")
	k := len(t)
	for k > 0 && litWordByte(t[k-1]) {
		k--
	}
	_, ok := readFormats[strings.ToLower(t[k:])]
	return ok
}
