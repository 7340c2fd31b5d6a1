package policy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"schedplay/engine"
	"schedplay/policy"
	"schedplay/scenario"
)

func load(t testing.TB, name string) *policy.Program {
	t.Helper()
	path := filepath.Join("..", "examples", "policies", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runs are the equality runs: era 5.2 on two 2-LLC machines, schbench
// and hackbench.
type runCase struct {
	name     string
	preset   string
	workload string
	dur      int64
}

var runs = []runCase{
	{"7950x-schbench", "amd-7950x-16c-32t", "schbench:m=4,t=16", 2 * engine.Second},
	{"7950x-hackbench", "amd-7950x-16c-32t", "hackbench:g=4,l=200", 500 * engine.Millisecond},
	{"intel88-schbench", "intel-2s-44c-88t", "schbench:m=4,t=22", 2 * engine.Second},
	{"intel88-hackbench", "intel-2s-44c-88t", "hackbench:g=8,l=100", 500 * engine.Millisecond},
}

// resultJSON is the run's JSON without what must differ: the knob map
// (the knob run sets the knob the policy replaces), the policy's name and
// the wall time.
func resultJSON(t *testing.T, c scenario.Config) []byte {
	t.Helper()
	r, err := scenario.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	r.Knobs, r.Policy, r.PolicyHooks, r.SimWallS = nil, "", nil, 0
	// A policy run lists the policy's own stage (0 here: every example
	// names the kernel's stages).
	if n, ok := r.Search.StageCalls["policy"]; ok {
		if n != 0 {
			t.Errorf("%d wakeups placed at stage policy", n)
		}
		delete(r.Search.StageCalls, "policy")
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExamplesMatchKnobs: each example policy gives byte-identical
// results to the built-in knob it models.
func TestExamplesMatchKnobs(t *testing.T) {
	cases := []struct {
		file  string
		knobs []string
	}{
		{"kernel.star", nil},
		{"sis-core-off.star", []string{"SIS_CORE=false"}},
		{"bounded.star", []string{"SIS_BOUND=true"}},
		{"rotating-window.star", []string{"SIS_BOUND=true", "SIS_ROTATE=true"}},
		{"target-core.star", []string{"SIS_TARGET_CORE=true"}},
		{"kernel-cpu.star", nil},
		{"bounded-cpu.star", []string{"SIS_BOUND=true"}},
	}
	for _, tc := range cases {
		prog := load(t, tc.file)
		for _, r := range runs {
			t.Run(tc.file+"/"+r.name, func(t *testing.T) {
				base := scenario.Config{Preset: r.preset, Workloads: []string{r.workload}, Seed: 7, Duration: r.dur,
					Knobs: []string{"era=5.2"}}
				withKnob := base
				withKnob.Knobs = append(append([]string(nil), base.Knobs...), tc.knobs...)
				withPolicy := base
				withPolicy.WakePolicy = prog
				want := resultJSON(t, withKnob)
				got := resultJSON(t, withPolicy)
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %v:\n%s", tc.file, tc.knobs, firstDiff(got, want))
				}
				if tc.knobs != nil && bytes.Equal(want, resultJSON(t, base)) {
					t.Logf("%v changes nothing on this run: the equality proves little here", tc.knobs)
				}
			})
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			lo := max(0, i-3)
			return "policy: " + string(bytes.Join(al[lo:min(len(al), i+3)], []byte("\n"))) +
				"\nknob:   " + string(bytes.Join(bl[lo:min(len(bl), i+3)], []byte("\n")))
		}
	}
	return "lengths differ"
}

// TestKernel66MatchesEra: kernel66.star is each 6.x era's own
// select_idle_sibling.
func TestKernel66MatchesEra(t *testing.T) {
	for _, file := range []string{"kernel66.star", "kernel-cpu.star"} {
		testMatchesEra(t, file)
	}
}

func testMatchesEra(t *testing.T, file string) {
	prog := load(t, file)
	for _, era := range []string{"6.1", "6.6", "6.12"} {
		for _, r := range runs {
			t.Run(file+"/"+era+"/"+r.name, func(t *testing.T) {
				base := scenario.Config{Preset: r.preset, Workloads: []string{r.workload}, Seed: 7, Duration: r.dur,
					Knobs: []string{"era=" + era}}
				if r.name == "7950x-hackbench" {
					base.Knobs = append(base.Knobs, "SIS_CORE=false") // has_idle_core from a false knob
				}
				withPolicy := base
				withPolicy.WakePolicy = prog
				want, got := resultJSON(t, base), resultJSON(t, withPolicy)
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from era %s:\n%s", file, era, firstDiff(got, want))
				}
			})
		}
	}
}
