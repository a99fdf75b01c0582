package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluicedb/sluice/planner/plan"
)

// sqlError is an error of one SQL statement, printed as psql prints it:
// the message, then the statement's line that holds the error position
// and a caret under it. In a script, where names the file and the line
// the statement starts on.
type sqlError struct {
	sql   string
	where string // "file.sql:12" or "" (not from a script)
	err   error
}

func (e *sqlError) Unwrap() error { return e.err }

func (e *sqlError) Error() string {
	msg := e.err.Error()
	if e.where != "" {
		msg = e.where + ": " + msg
	}
	if ctx := errorContext(e.sql, plan.PositionOf(e.err)); ctx != "" {
		msg += "\n" + ctx
	}
	return msg
}

// maxContext is the widest statement line errorContext prints whole; a
// longer one is cut to a window around the position, marked with "...".
const maxContext = 76

// errorContext renders the line of sql holding the 1-based character
// position pos and a caret under the position, numbered as psql numbers
// it ("LINE 2: "). "" when pos is 0 or past the text.
func errorContext(sql string, pos int) string {
	if pos <= 0 || pos > utf8.RuneCountInString(sql)+1 {
		return ""
	}
	runes := []rune(sql)
	at := pos - 1
	line, start := 1, 0
	for i := 0; i < at && i < len(runes); i++ {
		if runes[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	end := start
	for end < len(runes) && runes[end] != '\n' {
		end++
	}
	text := []rune(strings.ReplaceAll(string(runes[start:end]), "\t", " "))
	col := at - start
	prefix, suffix := "", ""
	if len(text) > maxContext {
		lo := max(0, col-maxContext/2)
		hi := min(len(text), lo+maxContext)
		lo = max(0, hi-maxContext)
		if lo > 0 {
			prefix = "..."
		}
		if hi < len(text) {
			suffix = "..."
		}
		text, col = text[lo:hi], col-lo
	}
	label := fmt.Sprintf("LINE %d: ", line)
	return label + prefix + string(text) + suffix + "\n" + strings.Repeat(" ", utf8.RuneCountInString(label)+len(prefix)+col) + "^"
}
