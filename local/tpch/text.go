package tpch

import "sync"

// Text columns (comments) are substrings of a fixed pseudo-text pool built
// from the grammar of clause 4.2.2.14, as the reference generator does: the
// length is uniform in [min, max] and the offset uniform in the pool.

const textPoolSize = 8 << 20

var (
	textPoolOnce sync.Once
	textPool     string
)

type flatList []string

func flatten(ws []wword) flatList {
	var out flatList
	for _, w := range ws {
		for i := 0; i < w.freq; i++ {
			out = append(out, w.w)
		}
	}
	return out
}

func (l flatList) pick(r *rowRand) string { return l[below(r.next(), int64(len(l)))] }

func getTextPool() string {
	textPoolOnce.Do(func() { textPool = buildTextPool(textPoolSize) })
	return textPool
}

func buildTextPool(size int) string {
	var (
		nouns   = flatten(nounsW)
		verbs   = flatten(verbsW)
		adjs    = flatten(adjectivesW)
		advs    = flatten(adverbsW)
		preps   = flatten(prepositionsW)
		auxs    = flatten(auxiliariesW)
		terms   = flatten(terminatorsW)
		sents   = flatten(sentencesW)
		nphr    = flatten(nounPhrasesW)
		vphr    = flatten(verbPhrasesW)
		r       = newRowRand(sTextPool, 0)
		buf     = make([]byte, 0, size+256)
		word    func(w string)
		nounPhr func()
	)
	word = func(w string) {
		if len(buf) > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, w...)
	}
	nounPhr = func() {
		for _, c := range nphr.pick(&r) {
			switch c {
			case 'N':
				word(nouns.pick(&r))
			case 'J':
				word(adjs.pick(&r))
			case 'D':
				word(advs.pick(&r))
			case ',':
				buf = append(buf, ',')
			}
		}
	}
	verbPhr := func() {
		for _, c := range vphr.pick(&r) {
			switch c {
			case 'V':
				word(verbs.pick(&r))
			case 'X':
				word(auxs.pick(&r))
			case 'D':
				word(advs.pick(&r))
			}
		}
	}
	for len(buf) < size {
		for _, c := range sents.pick(&r) {
			switch c {
			case 'N':
				nounPhr()
			case 'V':
				verbPhr()
			case 'P':
				word(preps.pick(&r))
				word("the")
				nounPhr()
			case 'T':
				buf = append(buf, terms.pick(&r)...)
			}
		}
	}
	return string(buf[:size])
}

// text returns a pseudo-text string with length uniform in [lo, hi], for
// column stream s at row key k.
func text(pool string, s stream, k int64, lo, hi int64) string {
	r := newRowRand(s, k)
	n := r.between(lo, hi)
	off := below(r.next(), int64(len(pool))-n+1)
	return pool[off : off+n]
}

// vstringAlphabet has 64 symbols, as clause 4.2.2.7 requires.
const vstringAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ, "

// appendVString appends a random v-string of length uniform in [lo, hi].
func appendVString(dst []byte, s stream, k int64, lo, hi int64) []byte {
	r := newRowRand(s, k)
	n := int(r.between(lo, hi))
	var x uint64
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			x = r.next()
		}
		dst = append(dst, vstringAlphabet[x&63])
		x >>= 6
	}
	return dst
}

// appendPadded appends v as a decimal number zero padded to width digits.
func appendPadded(dst []byte, v int64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || i > len(tmp)-width {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, tmp[i:]...)
}

// appendPhone appends a phone number per clause 4.2.2.9:
// CC-LLL-LLL-LLLL with CC = nationkey + 10.
func appendPhone(dst []byte, s stream, k int64, nationkey int64) []byte {
	r := newRowRand(s, k)
	dst = appendPadded(dst, nationkey+10, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, r.between(100, 999), 3)
	dst = append(dst, '-')
	dst = appendPadded(dst, r.between(100, 999), 3)
	dst = append(dst, '-')
	dst = appendPadded(dst, r.between(1000, 9999), 4)
	return dst
}
