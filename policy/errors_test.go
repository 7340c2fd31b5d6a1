package policy_test

import (
	"errors"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/policy"
	"schedplay/scenario"
)

func runPolicy(t *testing.T, src string) error {
	t.Helper()
	prog, err := policy.Compile("t.star", []byte(src))
	if err != nil {
		return err
	}
	prog.SetMaxSteps(10000)
	_, err = scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"schbench:m=2,t=8"}, Seed: 1,
		Duration: engine.Second, Knobs: []string{"era=5.2"}, WakePolicy: prog})
	return err
}

func TestPolicyErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"syntax", "def select_idle_sibling(p, prev, target):\n    x = = 1\n", "t.star:2:9: "},
		{"undefined", "def select_idle_sibling(p, prev, target):\n    return foo(target)\n", "t.star:2:12: undefined: foo"},
		{"no entry", "x = 1\n", "defines no select_idle_sibling"},
		{"arity", "def select_idle_sibling(p, prev):\n    return prev\n", "must take 3"},
		{"not probed", "def select_idle_sibling(p, prev, target):\n    if nr_running(target) == 0:\n        return target\n    return target\n",
			"t.star:2:18: nr_running: CPU"},
		{"steps", "def select_idle_sibling(p, prev, target):\n    n = 0\n    while True:\n        n += 1\n", "more than 10000 Starlark steps"},
		{"runtime", "def select_idle_sibling(p, prev, target):\n    return [1][5]\n", "t.star:2:15: "},
		{"bad cpu", "def select_idle_sibling(p, prev, target):\n    return 999\n", "returned CPU 999"},
		{"bad stage", "def select_idle_sibling(p, prev, target):\n    return target, \"magic\"\n", `returned stage "magic"`},
		{"read-only", "def select_idle_sibling(p, prev, target):\n    p.prev = 3\n    return target\n", "read-only"},
		{"top level", "x = ncpu()\ndef select_idle_sibling(p, prev, target):\n    return target\n", "t.star:1:9: ncpu: only inside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runPolicy(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// A probed CPU is readable; a policy error is ErrPolicy.
	if err := runPolicy(t, "def select_idle_sibling(p, prev, target):\n    if probe(target) and nr_running(target) == 0:\n        return target\n    return target\n"); err != nil {
		t.Fatal(err)
	}
	if err := runPolicy(t, "def select_idle_sibling(p, prev, target):\n    return 999\n"); !errors.Is(err, scenario.ErrPolicy) {
		t.Fatalf("%v is not ErrPolicy", err)
	}
}

// TestStepLimitLine: the step limit's error names a line of the loop
// wherever in the loop the limit falls (at the loop's jump back the
// interpreter's own position is the function's def line).
func TestStepLimitLine(t *testing.T) {
	src := "def f(n):\n    while True:\n        n += 1\n\ndef select_idle_sibling(p, prev, target):\n    f(0)\n    return target\n"
	for steps := uint64(1000); steps < 1008; steps++ {
		prog, err := policy.Compile("t.star", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		prog.SetMaxSteps(steps)
		_, err = scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"schbench:m=2,t=8"}, Seed: 1,
			Duration: engine.Second, Knobs: []string{"era=5.2"}, WakePolicy: prog})
		// the loop's lines: the condition (line 2) or its body (3)
		if err == nil || !(strings.Contains(err.Error(), "t.star:3:") || strings.Contains(err.Error(), "t.star:2:")) || !strings.Contains(err.Error(), "more than") {
			t.Errorf("limit %d: %v, want t.star:2: or t.star:3:", steps, err)
		}
	}
}
