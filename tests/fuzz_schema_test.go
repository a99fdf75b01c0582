package tests

// The fuzzer's view of the TPC-H schema: every column's generator type,
// its rough number of distinct values at SF 0.01 (for join-size
// estimates), its value domain (for literals that select something) and,
// for integer keys, a domain tag that says which columns join naturally.

// ftype is the generator's type of an expression.
type ftype uint8

const (
	fInt  ftype = iota // bigint (the int32 columns widen to it)
	fDec               // decimal(15,2) and decimal arithmetic over it
	fDbl               // double: avg, /
	fStr               // varchar
	fDate              // date
	fTS                // timestamp: date ± interval, date_trunc, casts
	fBool              // boolean
)

func (t ftype) String() string {
	return [...]string{"int", "dec", "dbl", "str", "date", "ts", "bool"}[t]
}

// numericT reports whether t is a number type.
func numericT(t ftype) bool { return t == fInt || t == fDec || t == fDbl }

// temporalT reports whether t is a date or timestamp.
func temporalT(t ftype) bool { return t == fDate || t == fTS }

// comparableT reports whether values of a and b compare with = and <.
func comparableT(a, b ftype) bool {
	return a == b || numericT(a) && numericT(b) || temporalT(a) && temporalT(b)
}

// fcol is one column of a TPC-H table.
type fcol struct {
	name string
	typ  ftype
	ndv  float64
	// lo and hi bound integer and decimal values.
	lo, hi float64
	// vals are string values of the column (all of them for small domains).
	vals []string
	// pats are LIKE patterns that match some values.
	pats []string
	// tag names the key domain of an integer key column ("" for none):
	// columns with the same tag join as foreign key and key.
	tag string
	// small marks an int32 column (DuckDB INTEGER: products can overflow).
	small bool
}

// ftable is one TPC-H table.
type ftable struct {
	name   string
	prefix string // alias prefix
	rows   float64
	cols   []fcol
	key    []string // the columns that together are unique
}

func (t *ftable) col(name string) *fcol {
	for i := range t.cols {
		if t.cols[i].name == name {
			return &t.cols[i]
		}
	}
	return nil
}

var commentPats = []string{"%final%", "%express%", "%ironic%", "%carefully%", "%special%requests%", "%regular%", "%the%", "%ly"}

// fuzzTables describes the TPC-H tables at SF 0.01 (checked against the
// generated data: counts, distinct counts, ranges).
var fuzzTables = []*ftable{
	{name: "region", prefix: "r", rows: 5, key: []string{"r_regionkey"}, cols: []fcol{
		{name: "r_regionkey", typ: fInt, ndv: 5, lo: 0, hi: 4, tag: "region"},
		{name: "r_name", typ: fStr, ndv: 5, vals: []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}, pats: []string{"A%", "%A", "%ICA", "_S%", "MIDDLE%"}},
		{name: "r_comment", typ: fStr, ndv: 5, pats: commentPats},
	}},
	{name: "nation", prefix: "n", rows: 25, key: []string{"n_nationkey"}, cols: []fcol{
		{name: "n_nationkey", typ: fInt, ndv: 25, lo: 0, hi: 24, tag: "nation"},
		{name: "n_name", typ: fStr, ndv: 25, vals: []string{"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "CHINA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "ROMANIA", "RUSSIA", "SAUDI ARABIA", "UNITED KINGDOM", "UNITED STATES", "VIETNAM"}, pats: []string{"A%", "%A", "I%", "UNITED%", "%AN%", "_R%"}},
		{name: "n_regionkey", typ: fInt, ndv: 5, lo: 0, hi: 4, tag: "region"},
		{name: "n_comment", typ: fStr, ndv: 25, pats: commentPats},
	}},
	{name: "supplier", prefix: "s", rows: 100, key: []string{"s_suppkey"}, cols: []fcol{
		{name: "s_suppkey", typ: fInt, ndv: 100, lo: 1, hi: 100, tag: "supp"},
		{name: "s_name", typ: fStr, ndv: 100, vals: []string{"Supplier#000000001", "Supplier#000000010", "Supplier#000000042", "Supplier#000000077"}, pats: []string{"Supplier#00000000%", "%1", "%0_"}},
		{name: "s_address", typ: fStr, ndv: 100, pats: []string{"%a%", "% %", "1%"}},
		{name: "s_nationkey", typ: fInt, ndv: 25, lo: 0, hi: 24, tag: "nation"},
		{name: "s_phone", typ: fStr, ndv: 100, vals: []string{"10-298-278-5042", "25-000-000-0000"}, pats: []string{"1_-%", "2%", "%-9%"}},
		{name: "s_acctbal", typ: fDec, ndv: 100, lo: -717, hi: 9992},
		{name: "s_comment", typ: fStr, ndv: 100, pats: append([]string{"%Customer%Complaints%"}, commentPats...)},
	}},
	{name: "customer", prefix: "c", rows: 1500, key: []string{"c_custkey"}, cols: []fcol{
		{name: "c_custkey", typ: fInt, ndv: 1500, lo: 1, hi: 1500, tag: "cust"},
		{name: "c_name", typ: fStr, ndv: 1500, vals: []string{"Customer#000000001", "Customer#000000777", "Customer#000001500"}, pats: []string{"Customer#0000001%", "%5", "%00_"}},
		{name: "c_address", typ: fStr, ndv: 1500, pats: []string{"%a%", "% %"}},
		{name: "c_nationkey", typ: fInt, ndv: 25, lo: 0, hi: 24, tag: "nation"},
		{name: "c_phone", typ: fStr, ndv: 1500, vals: []string{"10-131-607-6204"}, pats: []string{"1_-%", "3%", "%-1%"}},
		{name: "c_acctbal", typ: fDec, ndv: 1500, lo: -993, hi: 9994},
		{name: "c_mktsegment", typ: fStr, ndv: 5, vals: []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"}, pats: []string{"%ING", "B%", "%O%"}},
		{name: "c_comment", typ: fStr, ndv: 1500, pats: commentPats},
	}},
	{name: "part", prefix: "p", rows: 2000, key: []string{"p_partkey"}, cols: []fcol{
		{name: "p_partkey", typ: fInt, ndv: 2000, lo: 1, hi: 2000, tag: "part"},
		{name: "p_name", typ: fStr, ndv: 2000, pats: []string{"%green%", "forest%", "%navy%", "almond%", "%ro%"}},
		{name: "p_mfgr", typ: fStr, ndv: 5, vals: []string{"Manufacturer#1", "Manufacturer#2", "Manufacturer#3", "Manufacturer#4", "Manufacturer#5"}, pats: []string{"%#1", "Manufacturer#_"}},
		{name: "p_brand", typ: fStr, ndv: 25, vals: []string{"Brand#11", "Brand#12", "Brand#23", "Brand#34", "Brand#45", "Brand#55"}, pats: []string{"Brand#1%", "%3", "Brand#_5"}},
		{name: "p_type", typ: fStr, ndv: 150, vals: []string{"ECONOMY ANODIZED STEEL", "PROMO BURNISHED COPPER", "STANDARD POLISHED TIN", "LARGE BRUSHED BRASS"}, pats: []string{"%BRASS", "PROMO%", "%POLISHED%", "ECONOMY%"}},
		{name: "p_size", typ: fInt, ndv: 50, lo: 1, hi: 50, small: true},
		{name: "p_container", typ: fStr, ndv: 40, vals: []string{"SM CASE", "LG BOX", "MED BAG", "JUMBO PKG", "WRAP JAR", "SM PACK"}, pats: []string{"SM%", "%BOX", "MED%", "%A%"}},
		{name: "p_retailprice", typ: fDec, ndv: 1099, lo: 901, hi: 1900},
		{name: "p_comment", typ: fStr, ndv: 1951, pats: commentPats},
	}},
	{name: "partsupp", prefix: "ps", rows: 8000, key: []string{"ps_partkey", "ps_suppkey"}, cols: []fcol{
		{name: "ps_partkey", typ: fInt, ndv: 2000, lo: 1, hi: 2000, tag: "part"},
		{name: "ps_suppkey", typ: fInt, ndv: 100, lo: 1, hi: 100, tag: "supp"},
		{name: "ps_availqty", typ: fInt, ndv: 5502, lo: 1, hi: 9998, small: true},
		{name: "ps_supplycost", typ: fDec, ndv: 7707, lo: 1, hi: 999},
		{name: "ps_comment", typ: fStr, ndv: 8000, pats: commentPats},
	}},
	{name: "orders", prefix: "o", rows: 15000, key: []string{"o_orderkey"}, cols: []fcol{
		{name: "o_orderkey", typ: fInt, ndv: 15000, lo: 1, hi: 59976, tag: "order"},
		{name: "o_custkey", typ: fInt, ndv: 1000, lo: 1, hi: 1499, tag: "cust"},
		{name: "o_orderstatus", typ: fStr, ndv: 3, vals: []string{"F", "O", "P"}, pats: []string{"F%", "_"}},
		{name: "o_totalprice", typ: fDec, ndv: 14995, lo: 912, hi: 495167},
		{name: "o_orderdate", typ: fDate, ndv: 2398},
		{name: "o_orderpriority", typ: fStr, ndv: 5, vals: []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}, pats: []string{"1%", "%HIGH", "%-%"}},
		{name: "o_clerk", typ: fStr, ndv: 10, vals: []string{"Clerk#000000001", "Clerk#000000005", "Clerk#000000010"}, pats: []string{"%1", "Clerk#00000000_"}},
		{name: "o_shippriority", typ: fInt, ndv: 1, lo: 0, hi: 0, small: true},
		{name: "o_comment", typ: fStr, ndv: 14997, pats: commentPats},
	}},
	{name: "lineitem", prefix: "l", rows: 60706, key: []string{"l_orderkey", "l_linenumber"}, cols: []fcol{
		{name: "l_orderkey", typ: fInt, ndv: 15000, lo: 1, hi: 59976, tag: "order"},
		{name: "l_partkey", typ: fInt, ndv: 2000, lo: 1, hi: 2000, tag: "part"},
		{name: "l_suppkey", typ: fInt, ndv: 100, lo: 1, hi: 100, tag: "supp"},
		{name: "l_linenumber", typ: fInt, ndv: 7, lo: 1, hi: 7, small: true},
		{name: "l_quantity", typ: fDec, ndv: 50, lo: 1, hi: 50},
		{name: "l_extendedprice", typ: fDec, ndv: 36048, lo: 902, hi: 95049},
		{name: "l_discount", typ: fDec, ndv: 11, lo: 0, hi: 0.1},
		{name: "l_tax", typ: fDec, ndv: 9, lo: 0, hi: 0.08},
		{name: "l_returnflag", typ: fStr, ndv: 3, vals: []string{"A", "N", "R"}, pats: []string{"A%", "_"}},
		{name: "l_linestatus", typ: fStr, ndv: 2, vals: []string{"F", "O"}, pats: []string{"O%"}},
		{name: "l_shipdate", typ: fDate, ndv: 2516},
		{name: "l_commitdate", typ: fDate, ndv: 2464},
		{name: "l_receiptdate", typ: fDate, ndv: 2529},
		{name: "l_shipinstruct", typ: fStr, ndv: 4, vals: []string{"COLLECT COD", "DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"}, pats: []string{"%N", "% %", "T%"}},
		{name: "l_shipmode", typ: fStr, ndv: 7, vals: []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}, pats: []string{"%AIR", "_A%", "%I%"}},
		{name: "l_comment", typ: fStr, ndv: 59046, pats: commentPats},
	}},
}

func fuzzTable(name string) *ftable {
	for _, t := range fuzzTables {
		if t.name == name {
			return t
		}
	}
	return nil
}
