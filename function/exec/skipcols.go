package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/planner/plan"
)

// Unread output columns. The planner puts a Project above every join (and
// above some filters) that keeps only the columns the rest of the fragment
// reads: the join's own output still has every probe and build column, and
// a filter's every input column. Gathering a column nobody reads is wasted
// work (a string column copies all its bytes), so Build tells an operator
// whose consumer is a Project which of its output columns that Project never
// reads (skipUnread), and the operator fills those with NULL instead of
// gathering them (nullFill). The batches keep their schema: only the
// values of columns no expression reads differ. An operator passes the
// request on to its own input for the columns it does not read itself
// either (a filter its predicate's, a join its keys' and filter's).

// columnSkipper is an operator that may leave output columns unfilled.
type columnSkipper interface {
	// SkipColumns says which output columns (len == the schema's fields)
	// no consumer reads; the operator may fill them with NULLs.
	SkipColumns(unread []bool)
}

// unreadBy returns which of the n input columns none of exprs reads, or nil
// when every one is read.
func unreadBy(n int, exprs ...*plan.Expr) []bool {
	unread := make([]bool, n)
	for i := range unread {
		unread[i] = true
	}
	for _, e := range exprs {
		for _, c := range e.Columns() {
			if c >= 0 && c < n {
				unread[c] = false
			}
		}
	}
	for _, u := range unread {
		if u {
			return unread
		}
	}
	return nil
}

// skipUnread tells in (unmetered) which of its columns the expressions of
// its consumer never read, when in can skip them.
func skipUnread(in Operator, exprs []*plan.Expr) {
	cs, ok := unmetered(in).(columnSkipper)
	if !ok {
		return
	}
	if unread := unreadBy(in.Schema().NumFields(), exprs...); unread != nil {
		cs.SkipColumns(unread)
	}
}

// passUnread passes on to in the columns of unread (over in's columns,
// possibly shorter than them) that none of exprs reads either.
func passUnread(in Operator, unread []bool, exprs ...*plan.Expr) {
	cs, ok := unmetered(in).(columnSkipper)
	if !ok {
		return
	}
	n := in.Schema().NumFields()
	pass := unreadBy(n, exprs...)
	if pass == nil {
		return
	}
	any := false
	for i := range pass {
		pass[i] = pass[i] && i < len(unread) && unread[i]
		any = any || pass[i]
	}
	if any {
		cs.SkipColumns(pass)
	}
}

// nullFill hands out all-NULL arrays of one type: slices of one array,
// grown when a longer one is asked for, so a skipped column costs no
// allocation per batch.
type nullFill struct {
	a arrow.Array
}

// get returns n NULLs of type t (the caller releases the array).
func (f *nullFill) get(mem memory.Allocator, t arrow.DataType, n int) arrow.Array {
	if f.a == nil || f.a.Len() < n || !arrow.TypeEqual(f.a.DataType(), t) {
		f.release()
		f.a = makeNulls(mem, t, max(n, 1024))
	}
	if f.a.Len() == n {
		f.a.Retain()
		return f.a
	}
	return array.NewSlice(f.a, 0, int64(n))
}

func (f *nullFill) release() {
	if f.a != nil {
		f.a.Release()
		f.a = nil
	}
}

func isDictionary(a arrow.Array) bool { return a.DataType().ID() == arrow.DICTIONARY }
