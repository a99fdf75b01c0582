package exec

import (
	"bytes"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// likeRegexp is the reference: LIKE translated to an anchored regexp.
func likeRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^(?s)")
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func TestLikeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "ñ", "%", "_"}
	strAlphabet := []string{"a", "b", "ñ", "c"}
	fixed := []string{"", "%", "_", "%%", "a%", "%a", "%a%", "a%b", "%a%b%", "a_b", "_%_", "%ñ_", "ab%%ba", "%b_a%"}
	var pats []string
	pats = append(pats, fixed...)
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for j := rng.Intn(6); j > 0; j-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		pats = append(pats, b.String())
	}
	var strs []string
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for j := rng.Intn(8); j > 0; j-- {
			b.WriteString(strAlphabet[rng.Intn(len(strAlphabet))])
		}
		strs = append(strs, b.String())
	}
	for _, p := range pats {
		lp := compileLike(p)
		re := likeRegexp(p)
		for _, s := range strs {
			if got, want := lp.match([]byte(s)), re.MatchString(s); got != want {
				t.Fatalf("%q LIKE %q = %v, want %v", s, p, got, want)
			}
		}
	}
}

// matchColumn (one search of the column's bytes for the pattern's needle)
// gives every row the answer of the row-by-row match, on random columns
// (sliced too, so the first offset is not 0) and random patterns.
func TestLikeMatchColumn(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	alphabet := []string{"a", "b", "ñ", "%", "_", "ab"}
	strAlphabet := []string{"a", "b", "ñ", "c", "ab"}
	pats := []string{"%a%", "%ab%", "%a%b%", "%b%a%", "a%b", "%ñ%", "%aa%bb%", "ab%ba", "%abc%"}
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for j := rng.Intn(6); j > 0; j-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		pats = append(pats, b.String())
	}
	for round := 0; round < 40; round++ {
		n := rng.Intn(300)
		var data []byte
		offs := []int32{0}
		skip := rng.Intn(4) // leading bytes of rows before the slice
		data = append(data, strings.Repeat("ab", skip)...)
		offs[0] = int32(len(data))
		for i := 0; i < n; i++ {
			for j := rng.Intn(10); j > 0; j-- {
				data = append(data, strAlphabet[rng.Intn(len(strAlphabet))]...)
			}
			offs = append(offs, int32(len(data)))
		}
		data = append(data, "abab"...) // bytes after the last row
		for _, p := range pats {
			lp := compileLike(p)
			out := make([]byte, (n+7)/8)
			lp.matchColumn(offs, data, n, out)
			for i := 0; i < n; i++ {
				s := data[offs[i]:offs[i+1]]
				if got, want := out[i>>3]>>(uint(i)&7)&1 == 1, lp.match(s); got != want {
					t.Fatalf("round %d: %q LIKE %q = %v by column, %v by row", round, s, p, got, want)
				}
			}
		}
	}
}

// BenchmarkLikeColumn: '%special%requests%' over 1M TPC-H-like comments
// (about 1% match), row by row and by one search of the column.
func BenchmarkLikeColumn(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"furiously", "carefully", "final", "deposits", "regular", "accounts", "ironic", "packages", "pending",
		"quickly", "bold", "slyly", "express", "instructions", "blithely", "theodolites", "requests", "even", "unusual", "foxes"}
	const n = 1 << 20
	offs := make([]int32, 1, n+1)
	var data []byte
	for i := 0; i < n; i++ {
		for j := 3 + rng.Intn(6); j > 0; j-- {
			w := words[rng.Intn(len(words))]
			if rng.Intn(200) == 0 {
				w = "special"
			}
			data = append(append(data, w...), ' ')
		}
		offs = append(offs, int32(len(data)))
	}
	lp := compileLike("%special%requests%")
	out := make([]byte, n/8)
	b.Run("row", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			clear(out)
			for r := 0; r < n; r++ {
				if lp.match(data[offs[r]:offs[r+1]]) {
					out[r>>3] |= 1 << (uint(r) & 7)
				}
			}
		}
	})
	b.Run("column", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			clear(out)
			lp.matchColumn(offs, data, n, out)
		}
	})
}

// indexPair finds the first occurrence bytes.Index finds, on random
// haystacks over a small alphabet (many partial and overlapping matches).
func TestIndexPair(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := 0; round < 3000; round++ {
		s := make([]byte, rng.Intn(300))
		for i := range s {
			s[i] = "aab\x00\xff"[rng.Intn(5)]
		}
		nd := make([]byte, 1+rng.Intn(6))
		for i := range nd {
			nd[i] = "aab\x00\xff"[rng.Intn(5)]
		}
		if got, want := indexPair(s, nd), bytes.Index(s, nd); got != want {
			t.Fatalf("indexPair(%q, %q) = %d, want %d", s, nd, got, want)
		}
	}
}
