package main

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// Tab completion in the interactive shell: keywords, functions (from the
// scalar and aggregate libraries and the window functions) and the tables
// and columns of the catalog, fetched from the coordinator at the first Tab
// after a statement ran (so a table made by CREATE, CTAS or COPY is
// offered at the next prompt) and kept until the next statement.
//
// The context is read cheaply from the words before the cursor, over the
// whole statement typed so far: after FROM, JOIN, INTO, TABLE, DESCRIBE
// and \d only tables; after `name.` the columns of table name (or of the
// table an alias name stands for); elsewhere keywords, functions, tables
// and the columns of the tables the statement names (of every table when
// it names none).

// sqlKeywords are the keywords offered by Tab.
var sqlKeywords = []string{
	"all", "analyze", "and", "any", "as", "asc", "between", "by", "case", "cast", "copy", "create", "cross",
	"delete", "desc", "describe", "distinct", "drop", "else", "end", "except", "exists", "explain", "external",
	"false", "filter", "first", "format", "from", "full", "group", "having", "ilike", "in", "inner", "insert",
	"intersect", "interval", "into", "is", "join", "last", "lateral", "left", "like", "limit", "location", "not",
	"null", "nulls", "offset", "on", "or", "order", "outer", "over", "partition", "qualify", "range", "replace",
	"right", "rows", "select", "show", "table", "tables", "then", "to", "true", "union", "using", "values", "view",
	"when", "where", "window", "with",
}

// windowFunctions are the ranking and offset window functions (the
// aggregates come from the aggregate library).
var windowFunctions = []plan.WindowFunc{plan.WinRowNumber, plan.WinRank, plan.WinDenseRank, plan.WinPercentRank,
	plan.WinCumeDist, plan.WinNtile, plan.WinLag, plan.WinLead, plan.WinFirstValue, plan.WinLastValue, plan.WinNthValue}

// functionNames lists every function a statement may call, sorted.
func functionNames() []string {
	seen := map[string]bool{}
	for _, f := range exec.Functions() {
		seen[f.Name] = true
		for _, a := range f.Aliases {
			seen[a] = true
		}
	}
	for _, f := range exec.Aggregates() {
		seen[string(f.Name)] = true
		for _, a := range f.Aliases {
			seen[a] = true
		}
	}
	for _, f := range windowFunctions {
		seen[string(f)] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		if !strings.HasPrefix(n, "__") { // internal names
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// catalogNames maps each table's name to its columns.
type catalogNames map[string][]string

// completer completes SQL words for readline.
type completer struct {
	keywords, functions []string
	// load fetches the catalog; its answer is kept until invalidate.
	load func(context.Context) (catalogNames, error)

	mu      sync.Mutex
	catalog catalogNames
	// typed is the statement typed on the lines before this one.
	typed string
}

func newCompleter(load func(context.Context) (catalogNames, error)) *completer {
	return &completer{keywords: sqlKeywords, functions: functionNames(), load: load}
}

// invalidate drops the cached catalog (after a statement ran).
func (c *completer) invalidate() {
	c.mu.Lock()
	c.catalog = nil
	c.mu.Unlock()
}

// setTyped records the statement typed on earlier lines.
func (c *completer) setTyped(s string) {
	c.mu.Lock()
	c.typed = s
	c.mu.Unlock()
}

// Do is readline's AutoCompleter: the candidates' remainders after the
// word at the cursor, and that word's length.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	c.mu.Lock()
	before := c.typed + string(line[:pos])
	if c.catalog == nil && c.load != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if cat, err := c.load(ctx); err == nil {
			c.catalog = cat
		}
		cancel()
	}
	cat := c.catalog
	c.mu.Unlock()
	word, cands := c.candidates(before, cat)
	n := len([]rune(word))
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		n = len([]rune(word[i+1:]))
	}
	typed := len([]rune(word))
	out := make([][]rune, len(cands))
	for i, s := range cands {
		out[i] = []rune(s)[typed:]
	}
	return out, n
}

// isWordRune reports whether r may be part of a completed word.
func isWordRune(r rune) bool {
	return r == '_' || r == '.' || r == '\\' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// candidates returns the word being typed at the end of before and the
// completions of it, sorted, each in the case the word is typed in.
func (c *completer) candidates(before string, cat catalogNames) (string, []string) {
	rs := []rune(before)
	i := len(rs)
	for i > 0 && isWordRune(rs[i-1]) {
		i--
	}
	word := string(rs[i:])
	words := sqlTokens(string(rs[:i]))
	prev := ""
	if len(words) > 0 {
		prev = words[len(words)-1]
	}
	var pool []string
	prefix := word
	switch q, rest, dotted := strings.Cut(word, "."); {
	case dotted:
		if strings.Contains(rest, ".") {
			return word, nil
		}
		prefix = rest
		table := strings.ToLower(q)
		if t, ok := aliases(words)[table]; ok {
			table = t
		}
		pool = cat[table]
	case prev == "from" || prev == "join" || prev == "into" || prev == "table" || prev == "describe" || prev == `\d`:
		pool = tableNames(cat)
	default:
		pool = append(pool, c.keywords...)
		pool = append(pool, c.functions...)
		pool = append(pool, tableNames(cat)...)
		named := false
		for _, w := range words {
			if cols, ok := cat[w]; ok {
				pool = append(pool, cols...)
				named = true
			}
		}
		if !named {
			for _, cols := range cat {
				pool = append(pool, cols...)
			}
		}
	}
	upper := prefix != "" && prefix == strings.ToUpper(prefix) && prefix != strings.ToLower(prefix)
	lp := strings.ToLower(prefix)
	seen := map[string]bool{}
	var out []string
	for _, s := range pool {
		ls := strings.ToLower(s)
		if !strings.HasPrefix(ls, lp) || seen[ls] || ls == lp {
			continue
		}
		seen[ls] = true
		if upper {
			s = strings.ToUpper(s)
		}
		out = append(out, prefix+string([]rune(s)[len([]rune(prefix)):]))
	}
	sort.Strings(out)
	if q, _, dotted := strings.Cut(word, "."); dotted {
		for k := range out {
			out[k] = q + "." + out[k]
		}
	}
	return word, out
}

func tableNames(cat catalogNames) []string {
	names := make([]string, 0, len(cat))
	for n := range cat {
		names = append(names, n)
	}
	return names
}

// sqlTokens lower-cases the words of s outside strings and comments
// (identifiers, keywords and \d), dropping punctuation.
func sqlTokens(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			flush()
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return out
			}
			i += j + 1
		case ch == '-' && i+1 < len(s) && s[i+1] == '-':
			flush()
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case ch == '"':
			flush()
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return out
			}
			cur.WriteString(s[i+1 : i+1+j])
			flush()
			i += j + 1
		case ch == '_' || ch == '\\' || ch >= 0x80 || ('a' <= ch|0x20 && ch|0x20 <= 'z') || ('0' <= ch && ch <= '9'):
			cur.WriteByte(ch)
		default:
			flush()
		}
	}
	flush()
	return out
}

// aliases maps the aliases of tables named after FROM and JOIN (`from
// orders o`, `join nation as n`) to the tables.
func aliases(words []string) map[string]string {
	m := map[string]string{}
	for k := 0; k+2 < len(words); k++ {
		if words[k] != "from" && words[k] != "join" {
			continue
		}
		t, a := words[k+1], words[k+2]
		if a == "as" && k+3 < len(words) {
			a = words[k+3]
		}
		if !isKeyword(a) {
			m[a] = t
		}
	}
	return m
}

func isKeyword(w string) bool {
	i := sort.SearchStrings(sqlKeywords, w)
	return i < len(sqlKeywords) && sqlKeywords[i] == w
}
