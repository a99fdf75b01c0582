package main

import (
	"github.com/urfave/cli/v2"
)

// adaptiveFlag is the one adaptive switch of the CLI (the knob
// "adaptive"): per job on query commands (local query, submit, shell), the
// default for jobs that do not say on `coordinator serve`. It sets
// coordinator.Config.Adaptive (the API's per-job "adaptive" overrides it),
// which picks the job's adaptive.ExecutionGraph.
func adaptiveFlag() cli.Flag { return knobNamed("adaptive").flag(false) }

// engineFlags are the knobs of how jobs are planned and run (knobs.go),
// shared by the embedded stack (local query|start|demo, sql --local) and
// `coordinator serve`, so both take the same adaptive knobs. forServe
// picks serve's defaults. engineSettings reads them back.
func engineFlags(forServe bool) []cli.Flag {
	sc := onLocal
	if forServe {
		sc = onServe
	}
	return knobFlags(sc, forServe)
}
