package policy_test

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/internal/benchrun"
	"schedplay/presets"
)

// The policy variants of make bench's three engine benchmarks
// (engine/workload's BenchmarkSchbenchIntel, BenchmarkHackbenchZen4,
// BenchmarkNetperf1024Zen4), each with the era's own search ("none"), the
// built-in knob an example models ("knob-..."), and the example policy:
// the cost of a policy is its events/s against the knob's.

type benchArm struct {
	name  string
	file  string   // example policy, "" for none
	knobs []string // knob=value
}

var benchArms = []benchArm{
	{"none", "", nil},
	{"kernel.star", "kernel.star", nil},
	{"kernel-cpu.star", "kernel-cpu.star", nil},
	{"knob-bounded", "", []string{"SIS_BOUND=true"}},
	{"bounded.star", "bounded.star", nil},
	{"bounded-cpu.star", "bounded-cpu.star", nil},
	{"knob-rotating", "", []string{"SIS_BOUND=true", "SIS_ROTATE=true"}},
	{"rotating-window.star", "rotating-window.star", nil},
}

func benchTopo(b *testing.B, name string) *machine.Topology {
	if name == "intel-test" {
		tp, err := machine.Build(&machine.Spec{
			Name: "intel-test",
			Topology: machine.TopologySpec{Sockets: 2, CoresPerSocket: 22, ThreadsPerCore: 2,
				CoresPerLLC: 22, Numbering: machine.Interleaved},
			SMTThroughput: []float64{1.0, 1.15},
			IdleStates: []machine.IdleState{
				{Name: "C1", ExitLatencyUS: 2, TargetResidencyUS: 2},
				{Name: "C6", ExitLatencyUS: 133, TargetResidencyUS: 400, CoreLevel: true},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		return tp
	}
	spec, err := presets.Machine(name)
	if err != nil {
		b.Fatal(err)
	}
	tp, err := machine.Build(spec)
	if err != nil {
		b.Fatal(err)
	}
	return tp
}

// benchPolicy runs spec on machine name (intel-test: bench_test.go's
// intel(), without the preset's cost knobs, as BenchmarkSchbenchIntel;
// else the preset with its costs) until dur or completion, per arm.
func benchPolicy(b *testing.B, name, spec string, dur int64) {
	tp := benchTopo(b, name)
	for _, arm := range benchArms {
		b.Run(arm.name, func(b *testing.B) {
			var prog interface{ New() engine.WakePolicy }
			if arm.file != "" {
				prog = load(b, arm.file)
			}
			setup := func(seed uint64) *engine.Sim {
				k := knob.Defaults()
				if name != "intel-test" {
					for n, v := range tp.Spec.Costs {
						id, _ := knob.Lookup(n)
						k.SetValue(id, v)
					}
				}
				for _, s := range arm.knobs {
					n, v, _ := cutEq(s)
					if err := k.Set(n, v); err != nil {
						b.Fatal(err)
					}
				}
				cfg := engine.Config{Machine: tp, Knobs: k, Seed: seed}
				if prog != nil {
					cfg.WakePolicy = prog.New()
				}
				s, err := engine.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := workload.Add(s, spec, ""); err != nil {
					b.Fatal(err)
				}
				return s
			}
			benchrun.Run(b, func(seed uint64) func() benchrun.Counts {
				s := setup(seed)
				return func() benchrun.Counts {
					for !s.AllFinished() && s.Now() < dur && s.Step() {
					}
					if err := s.Err(); err != nil {
						b.Fatal(err)
					}
					t := s.Totals()
					return benchrun.Counts{Events: t.Events, Ticks: t.Ticks, Wakeups: t.Wakeups, SimNS: s.Now()}
				}
			})
		})
	}
}

func cutEq(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func BenchmarkPolicySchbenchIntel(b *testing.B) {
	benchPolicy(b, "intel-test", "schbench:m=2,t=22", 2*engine.Second)
}

func BenchmarkPolicyHackbenchZen4(b *testing.B) {
	benchPolicy(b, "amd-zen4-2s-256c-512t", "hackbench:g=32,l=200", 60*engine.Second)
}

func BenchmarkPolicyNetperf1024Zen4(b *testing.B) {
	benchPolicy(b, "amd-zen4-2s-256c-512t", "netperf:n=1024", 20*engine.Millisecond)
}
