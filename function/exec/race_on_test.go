//go:build race

package exec

// raceEnabled: the tests run under the race detector, about ten times
// slower; the largest randomized tests run a smaller size then (the
// operators they check run on one goroutine, so the detector has nothing
// more to find in the larger size).
const raceEnabled = true
