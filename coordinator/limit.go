package coordinator

// aimdLimit is the dispatcher's effective concurrency limit when the
// platform throttles (issue 25): additive increase, multiplicative
// decrease, as TCP's congestion window, Netflix's concurrency-limits AIMD
// and the AWS SDK's adaptive retry mode (CUBIC, beta 0.7) do. The
// configured slots are its ceiling: without throttling it never moves
// from there.
//
//   - A throttled invocation (429) multiplies the limit by limitBeta, not
//     below the floor, at most once per epoch: the epoch advances at each
//     cut, and a 429 answering a request sent under an older epoch
//     (dispatched before the limit was cut) does not cut it again. A
//     burst of 429s from one overshoot is one cut, as TCP halves its
//     window once per round trip, not once per lost segment.
//   - An invocation that ran grows the limit, only while tasks wait for a
//     slot and the tasks in flight are within the limit (after a cut they
//     first drain to it: growing meanwhile would undo the cut as fast as
//     invocations end). Below the limit of the last cut (wmax, where the
//     platform last refused) it grows by one per invocation, so it is back
//     there within about a third of a round of tasks; from there it
//     probes by one per round of tasks (limit invocations), the step
//     doubling each round it is not refused (BIC's max probing): a few
//     429s per cut near the platform's real concurrency, and back to the
//     configured slots in a few rounds when the platform allows them.
//
// It holds no lock: the dispatcher's mutex guards it.
type aimdLimit struct {
	ceiling, floor int
	limit          float64
	wmax           float64 // the limit when it was last cut (0: never cut)
	epoch          uint64
	// low is the lowest limit since the last takeLow: a cut the limit
	// has grown back from between two reads still shows.
	low float64
}

// limitBeta is the factor of a decrease (the AWS SDK's CUBIC beta).
const limitBeta = 0.7

// limitFloor is the least the limit falls to: one invocation in flight
// still finds out when the platform has room again.
const limitFloor = 1

func newAIMDLimit(ceiling, floor int) aimdLimit {
	ceiling = max(ceiling, 1)
	floor = min(max(floor, 1), ceiling)
	return aimdLimit{ceiling: ceiling, floor: floor, limit: float64(ceiling), low: float64(ceiling)}
}

// takeLow returns the lowest effective limit since the last call, and
// starts the next period at the current limit.
func (a *aimdLimit) takeLow() int {
	low := int(min(a.low, a.limit))
	a.low = a.limit
	return low
}

// cur is the effective limit: the invocations allowed in flight now.
func (a *aimdLimit) cur() int { return int(a.limit) }

// throttled records a 429 answering a request sent in epoch; it reports
// whether the limit was cut (the first 429 of the current epoch).
func (a *aimdLimit) throttled(epoch uint64) bool {
	if epoch != a.epoch {
		return false
	}
	a.epoch++
	a.wmax = a.limit
	a.limit = max(float64(a.floor), a.limit*limitBeta)
	a.low = min(a.low, a.limit)
	return true
}

// ran records an invocation the platform accepted, with inUse tasks in
// flight (this one's included) and waiting whether tasks wait for a slot;
// it reports whether the limit grew.
func (a *aimdLimit) ran(inUse int, waiting bool) bool {
	if a.limit >= float64(a.ceiling) || !waiting || inUse > a.cur() {
		return false
	}
	if a.limit < a.wmax {
		a.limit = min(a.limit+1, a.wmax)
	} else {
		a.limit += max(1, a.limit-a.wmax) / a.limit
	}
	a.limit = min(a.limit, float64(a.ceiling))
	return true
}
