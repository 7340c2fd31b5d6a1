package workload

import (
	"testing"
	"time"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// BenchmarkSchbenchIntel runs schbench m=2,t=22 on the 88-CPU Intel box for
// 2 simulated seconds per iteration and reports simulated events per wall
// second and simulated seconds per wall second.
func BenchmarkSchbenchIntel(b *testing.B) {
	tp := intel(b)
	var events int64
	var simNS int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		s, err := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Add(s, "schbench:m=2,t=22", ""); err != nil {
			b.Fatal(err)
		}
		s.RunUntil(2 * engine.Second)
		events += s.Events()
		simNS += s.Now()
	}
	wall := time.Since(start).Seconds()
	b.ReportMetric(float64(events)/wall, "events/s")
	b.ReportMetric(float64(simNS)/1e9/wall, "sim-s/s")
}
