package workload

import (
	"testing"
	"time"

	"schedplay/engine"
)

// benchMessaging runs spec on a preset per iteration — to completion for
// a finite workload, else for dur of simulated time — and reports
// simulated events and simulated seconds per wall second.
func benchMessaging(b *testing.B, presetName, spec string, dur int64) {
	var events, simNS int64
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := newPresetSim(b, presetName, uint64(i+1))
		if _, err := Add(s, spec, ""); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		for !s.AllFinished() && s.Now() < dur && s.Step() {
		}
		wall += time.Since(start)
		events += s.Events()
		simNS += s.Now()
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(simNS)/1e9/wall.Seconds(), "sim-s/s")
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
