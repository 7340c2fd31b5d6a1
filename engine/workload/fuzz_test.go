package workload

import (
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// fuzzMachine is a small 2-socket SMT machine for building fuzzed specs.
func fuzzMachine(t *testing.T) *machine.Topology {
	tp, err := machine.Build(&machine.Spec{
		Name:          "fuzz",
		Topology:      machine.TopologySpec{Sockets: 2, CoresPerSocket: 2, ThreadsPerCore: 2, CoresPerLLC: 2, Numbering: machine.Interleaved},
		SMTThroughput: []float64{1, 1.2},
		IdleStates:    []machine.IdleState{{Name: "POLL", Polling: true}, {Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// FuzzWorkloadSpec: a spec either is refused with an error that names
// the workload, or builds and runs for a simulated millisecond with the
// engine's invariants checked after every event. Specs that would create
// many threads are only checked, not run.
func FuzzWorkloadSpec(f *testing.F) {
	for _, s := range []string{"schbench:m=2,t=3", "hackbench:g=1,l=5", "pipe:l=3", "uperf:size=", "netperf:n=2,req=64",
		"hog:n=3,nice=19,cpus=0-2", "mprime:n=2", "compile:j=2,work=1", "noise", "tbench:n=2", "schbench:R=100,m=1,t=2",
		"hackbench:g=1,l=2,p=1,T=1", "hog:place=core", "schbench:p=4,m=1,t=1,cpus=3"} {
		f.Add(s)
	}
	tp := fuzzMachine(&testing.T{})
	f.Fuzz(func(t *testing.T, text string) {
		err := Check(text, tp.NCPU)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "workload") {
				t.Fatalf("Check(%q): error %q does not say which workload", text, err)
			}
			return
		}
		sp, _ := Parse(text)
		for _, p := range sp.Params {
			if v, ok := bigCount(p); ok && v > 64 {
				return // valid but large: building it is not the point here
			}
		}
		sim, err := engine.New(engine.Config{Machine: tp, Seed: 1, Debug: true, Knobs: knob.Defaults()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Add(sim, text, ""); err != nil {
			if !strings.HasPrefix(err.Error(), "workload") && !strings.HasPrefix(err.Error(), "engine") {
				t.Fatalf("Add(%q): error %q does not say which workload", text, err)
			}
			return
		}
		runBounded(sim)
	})
}

// runBounded runs a fuzzed simulation for a simulated millisecond or 20000
// events, whichever comes first (invariants are checked after each).
func runBounded(sim *engine.Sim) {
	for i := 0; i < 20000; i++ {
		if next := sim.NextEventTime(); next < 0 || next > engine.Millisecond || !sim.Step() {
			return
		}
	}
}

// bigCount flags keys that multiply the number of threads or messages.
func bigCount(p Param) (int64, bool) {
	switch p.Key {
	case "n", "m", "t", "g", "j", "l", "daemons":
		var x int64
		for _, r := range p.Value {
			if r < '0' || r > '9' {
				return 0, false
			}
			x = x*10 + int64(r-'0')
			if x > 1<<20 {
				break
			}
		}
		return x, true
	}
	return 0, false
}

// FuzzRTApp: an rt-app JSON file is either refused with an error, or
// parsed into threads that build and run under the invariant checker.
func FuzzRTApp(f *testing.F) {
	f.Add([]byte(`{"tasks":{"t":{"instance":2,"loop":3,"run":100,"sleep":200}},"global":{"duration":1}}`))
	f.Add([]byte(`{"tasks":{"a":{"run":50,"resume":"b","suspend":"a"},"b":{"suspend":"b","run":20,"resume":"a"}}}`))
	f.Add([]byte(`{"tasks":{"x":{"phases":{"p1":{"loop":2,"run":10,"timer":{"ref":"t","period":1000}}}}}}`))
	f.Add([]byte(`{"global":{"frag":1},"tasks":{}}`))
	f.Add([]byte(`not json`))
	tp := fuzzMachine(&testing.T{})
	f.Fuzz(func(t *testing.T, data []byte) {
		app, err := ParseRTApp(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if app.Threads() > 64 {
			return
		}
		sim, err := engine.New(engine.Config{Machine: tp, Seed: 1, Debug: true, Knobs: knob.Defaults()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Add(sim, RTAppSpec(data), ""); err != nil {
			return
		}
		runBounded(sim)
	})
}
