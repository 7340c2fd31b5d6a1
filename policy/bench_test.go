package policy_test

import (
	"testing"

	"schedplay/engine"
	"schedplay/scenario"
)

// BenchmarkPolicy runs the same schbench with the era's own
// select_idle_sibling and with kernel.star, which calls the same stages
// from Starlark; it reports simulated events per wall second.
func BenchmarkPolicy(b *testing.B) {
	prog := load(b, "kernel.star")
	for _, bc := range []struct {
		name string
		pol  scenario.WakePolicy
	}{{"none", nil}, {"kernel.star", prog}} {
		b.Run(bc.name, func(b *testing.B) {
			var events int64
			for i := 0; i < b.N; i++ {
				c := scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"schbench:m=4,t=16"}, Seed: 1,
					Duration: 10 * engine.Second, Knobs: []string{"era=5.2"}, WakePolicy: bc.pol}
				r, err := scenario.Run(c)
				if err != nil {
					b.Fatal(err)
				}
				events += r.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
