package exec

import (
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
