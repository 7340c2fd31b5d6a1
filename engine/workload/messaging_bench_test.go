package workload

import (
	"testing"

	"schedplay/engine"
)

// benchMessaging runs spec on a preset per iteration — to completion for
// a finite workload, else for dur of simulated time (see benchRun for what
// it reports).
func benchMessaging(b *testing.B, presetName, spec string, dur int64) {
	benchRun(b, func(seed uint64) *engine.Sim {
		s := newPresetSim(b, presetName, seed)
		if _, err := Add(s, spec, ""); err != nil {
			b.Fatal(err)
		}
		return s
	}, func(s *engine.Sim) {
		for !s.AllFinished() && s.Now() < dur && s.Step() {
		}
	})
}

// BenchmarkHackbenchZen4 is hackbench g=32 (1280 processes over AF_UNIX
// socketpairs, l=200: 2.56 M messages) on the 512-CPU Zen 4 preset, run to
// completion.
func BenchmarkHackbenchZen4(b *testing.B) {
	benchMessaging(b, "amd-zen4-2s-256c-512t", "hackbench:g=32,l=200", 60*engine.Second)
}

// BenchmarkNetperf1024Zen4 is 1024 netperf TCP_RR pairs (2048 tasks) on the
// 512-CPU Zen 4 preset for 20 simulated ms.
func BenchmarkNetperf1024Zen4(b *testing.B) {
	benchMessaging(b, "amd-zen4-2s-256c-512t", "netperf:n=1024", 20*engine.Millisecond)
}
