package policy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/examples"
	"schedplay/policy"
	"schedplay/scenario"
)

// coreCounted wraps a program's instances, passing every hook through,
// and counts the select_idle_core calls; check, if set, runs after each
// one on the view (still the call's) with its arguments and results.
type coreCounted struct {
	prog  scenario.WakePolicy
	calls *int
	check func(v *engine.WakeView, cpu, idleIn int, idleOut *int, got int) error
	errs  *[]string
}

func (c coreCounted) Name() string { return c.prog.Name() }
func (c coreCounted) New() engine.WakePolicy {
	return &coreCountedInst{c: c, inner: c.prog.New()}
}

type coreCountedInst struct {
	c     coreCounted
	inner engine.WakePolicy
}

func (ci *coreCountedInst) Hooks() engine.Hook { return ci.inner.(engine.Hooked).Hooks() }
func (ci *coreCountedInst) SelectIdleSibling(v *engine.WakeView) (int, engine.Stage, error) {
	return ci.inner.SelectIdleSibling(v)
}
func (ci *coreCountedInst) SelectIdleCPU(v *engine.WakeView, target int, hic bool) (int, engine.Stage, error) {
	return ci.inner.(engine.IdleCPUPolicy).SelectIdleCPU(v, target, hic)
}
func (ci *coreCountedInst) SelectIdleCore(v *engine.WakeView, cpu int, idleCPU *int) (int, error) {
	*ci.c.calls++
	in := -2
	if idleCPU != nil {
		in = *idleCPU
	}
	c, err := ci.inner.(engine.IdleCorePolicy).SelectIdleCore(v, cpu, idleCPU)
	if err == nil && ci.c.check != nil {
		if e := ci.c.check(v, cpu, in, idleCPU, c); e != nil && len(*ci.c.errs) < 5 {
			*ci.c.errs = append(*ci.c.errs, e.Error())
		}
	}
	return c, err
}

// coreEras are the eras of the equality runs: v5.2's select_idle_core
// (the whole search) and 6.6's (one core of select_idle_cpu's loop).
var coreEras = []string{"5.2", "6.6"}

// TestKernelCoreMatchesEra: kernel-core.star is the era's own
// select_idle_core, alone and beside kernel-cpu.star's select_idle_cpu
// (in 6.x, the hook then runs inside kernel.select_idle_cpu's loop,
// nested in the policy's select_idle_cpu call).
func TestKernelCoreMatchesEra(t *testing.T) {
	core := load(t, "kernel-core.star")
	both := compileJoined(t, "kernel-cpu.star", "kernel-core.star")
	for _, tc := range []struct {
		name string
		prog *policy.Program
		runs []int // of examples_test.go's runs
	}{
		{"kernel-core.star", core, []int{0, 1, 2, 3}},
		{"kernel-cpu+core", both, []int{0, 2}}, // schbench: short
	} {
		for _, era := range coreEras {
			for _, i := range tc.runs {
				r := runs[i]
				t.Run(tc.name+"/"+era+"/"+r.name, func(t *testing.T) {
					base := scenario.Config{Preset: r.preset, Workloads: []string{r.workload}, Seed: 7, Duration: r.dur,
						Knobs: []string{"era=" + era}}
					var calls int
					withPolicy := base
					withPolicy.WakePolicy = coreCounted{prog: tc.prog, calls: &calls}
					want, got := resultJSON(t, base), resultJSON(t, withPolicy)
					if !bytes.Equal(got, want) {
						t.Errorf("%s differs from era %s:\n%s", tc.name, era, firstDiff(got, want))
					}
					if calls == 0 {
						t.Errorf("select_idle_core was never called: the equality proves nothing here")
					}
					t.Logf("%d select_idle_core calls", calls)
				})
			}
		}
	}
}

// compileJoined compiles the example files as one.
func compileJoined(t *testing.T, files ...string) *policy.Program {
	t.Helper()
	var src []byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "examples", "policies", f))
		if err != nil {
			t.Fatal(err)
		}
		src = append(append(src, b...), '\n')
	}
	p, err := policy.Compile(strings.Join(files, "+"), src)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCoreHookEntryPoints(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      engine.Hook
	}{
		{"core alone", "def select_idle_core(p, cpu):\n    return -1\n", engine.HookSelectIdleCore},
		{"core and cpu", "def select_idle_core(p, cpu, idle_cpu):\n    return -1\ndef select_idle_cpu(p, target):\n    return -1\n",
			engine.HookSelectIdleCore | engine.HookSelectIdleCPU},
		{"sibling: core is a helper", "def select_idle_core(p, cpu):\n    return -1\ndef select_idle_sibling(p, prev, target):\n    return target\n",
			engine.HookSelectIdleSibling},
	} {
		prog, err := policy.Compile("t.star", []byte(tc.src))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := prog.New().(engine.Hooked).Hooks(); got != tc.want {
			t.Errorf("%s: hooks %b, want %b", tc.name, got, tc.want)
		}
	}
	// bounded.star's select_idle_cpu is its select_idle_sibling's helper.
	if got := load(t, "bounded.star").New().(engine.Hooked).Hooks(); got != engine.HookSelectIdleSibling {
		t.Errorf("bounded.star: hooks %b", got)
	}
}

func runCore(t *testing.T, era, src string) error {
	t.Helper()
	prog, err := policy.Compile("t.star", []byte(src))
	if err != nil {
		return err
	}
	prog.SetMaxSteps(10000)
	_, err = scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"hackbench:g=2,l=100"}, Seed: 1,
		Duration: 100 * engine.Millisecond, Knobs: []string{"era=" + era}, WakePolicy: prog})
	return err
}

func TestCoreHookErrors(t *testing.T) {
	for _, tc := range []struct{ name, era, src, want string }{
		{"arity", "6.6", "def select_idle_core(p):\n    return -1\n", "must take 2 or 3 (p, cpu[, idle_cpu])"},
		{"not a function", "6.6", "select_idle_core = 3\n", "select_idle_core is a int, not a function"},
		{"bad cpu", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return 999\n", "t.star:1:1: select_idle_core returned CPU 999"},
		{"bad cpu 5.2", "5.2", "def select_idle_core(p, cpu, idle_cpu):\n    return 999\n", "t.star:1:1: select_idle_core returned CPU 999"},
		{"bad idle_cpu", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return -1, 999\n", "returned idle_cpu 999"},
		{"not a cpu", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return \"x\"\n", `returned CPU "x", not a CPU`},
		{"pair in 5.2", "5.2", "def select_idle_core(p, cpu, idle_cpu):\n    return -1, -1\n", "era 5.2's select_idle_core has no idle_cpu"},
		{"no rescan", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return kernel.select_idle_cpu(p.target)[0]\n",
			"kernel.select_idle_cpu inside the wake policy's select_idle_core: in era 6.6"},
		{"no rescan sis", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return kernel.select_idle_sibling()[0]\n",
			"kernel.select_idle_sibling inside the wake policy's select_idle_core"},
		{"no scan_begin", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    scan_begin(4)\n    return -1\n",
			"scan_begin inside the wake policy's select_idle_core"},
		{"recursion 5.2", "5.2", "def select_idle_core(p, cpu, idle_cpu):\n    return kernel.select_idle_sibling()[0]\n",
			"select_idle_core called recursively"},
		{"core not probed", "6.6", "def select_idle_core(p, cpu, idle_cpu):\n    return cpu if idle(cpu) else -1\n", "probe it first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runCore(t, tc.era, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCoreHookAllowed: a CPU outside the wakee's allowed CPUs stops the
// run.
func TestCoreHookAllowed(t *testing.T) {
	prog, err := policy.Compile("t.star", []byte("def select_idle_core(p, cpu, idle_cpu):\n    return 31\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"hackbench:g=2,l=100,cpus=0-15"}, Seed: 1,
		Duration: 100 * engine.Millisecond, Knobs: []string{"era=6.6"}, WakePolicy: prog})
	if err == nil || !strings.Contains(err.Error(), "returned CPU 31, outside the task's allowed CPUs") {
		t.Fatalf("got %v", err)
	}
}

// TestCoreHookNested: a select_idle_core reached from the policy's own
// select_idle_cpu (through kernel.select_idle_cpu's loop) leaves the
// outer call's view intact: after the kernel's scan, the outer call can
// still read the wakee and what it probed before and during the scan.
func TestCoreHookNested(t *testing.T) {
	src := `
def select_idle_core(p, cpu, idle_cpu):
    if probes() != 0:
        fail("a nested call starts with no probes of its own, not %d" % probes())
    for c in siblings(cpu):
        if not probe(c):
            return -1, idle_cpu
    return cpu

def select_idle_cpu(p, target, has_idle_core):
    t = p.target
    probe(target)
    before = probes()
    c, stage = kernel.select_idle_cpu(target, has_idle_core)
    if p.target != t or probes() < before:
        fail("outer call's view changed")
    idle(target)  # probed before the nested calls: still readable
    if c >= 0:
        idle(c)   # probed by the nested call or the kernel: readable
    return c, stage
`
	var calls int
	prog, err := policy.Compile("t.star", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"hackbench:g=2,l=100"}, Seed: 1,
		Duration: 100 * engine.Millisecond, Knobs: []string{"era=6.6"}, WakePolicy: coreCounted{prog: prog, calls: &calls}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("select_idle_core never called")
	}
}

// core-guard.star keeps a wakee off the idle SMT sibling of a thread
// running a task with a negative latency-nice: in 6.x no such sibling is
// noted as select_idle_cpu's fallback idle_cpu, and some were refused.
func TestCoreGuard(t *testing.T) {
	var calls, refused int
	var errs []string
	sensitive := func(v *engine.WakeView, cpu int) (bool, error) {
		ci, err := v.Curr(cpu)
		return ci.Class == "fair" && ci.LatencyNice < 0, err
	}
	check := func(v *engine.WakeView, cpu, in int, out *int, got int) error {
		if in != -1 || got >= 0 {
			return nil // 5.2, or idle_cpu already set, or an idle core
		}
		// idle_cpu was unset: the policy probed the whole core
		sib := must(v.Siblings(cpu))
		guarded, idleAllowed := false, false
		for _, s := range sib {
			idle, err := v.Idle(s)
			if err != nil {
				return err
			}
			if idle && v.Allowed(s) {
				idleAllowed = true
			}
			if !idle {
				g, err := sensitive(v, s)
				if err != nil {
					return err
				}
				guarded = guarded || g
			}
		}
		if *out >= 0 && guarded {
			return fmt.Errorf("idle_cpu %d noted beside a latency-sensitive task", *out)
		}
		if guarded && idleAllowed {
			refused++
		}
		return nil
	}
	wls := []string{"schbench:m=2,t=6,latency_nice=-10", "hackbench:g=1,l=300"}
	r, err := scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: wls, Seed: 3, Duration: 300 * engine.Millisecond,
		Knobs: []string{"era=6.6"}, WakePolicy: coreCounted{prog: load(t, "core-guard.star"), calls: &calls, check: check, errs: &errs}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Error(e)
	}
	if calls == 0 || refused == 0 {
		t.Errorf("%d calls, %d idle siblings refused: the guard did nothing here", calls, refused)
	}
	t.Logf("%d select_idle_core calls, %d idle siblings of latency-sensitive tasks refused; stages %v", calls, refused, r.Search.StageCalls)
}

// The page offers the new examples (examples embeds policies/*.star).
func TestCoreExamplesEmbedded(t *testing.T) {
	have := map[string]bool{}
	for _, p := range examples.Policies() {
		have[p.File] = true
	}
	for _, f := range []string{"kernel-core.star", "core-guard.star"} {
		if !have[f] {
			t.Errorf("examples.Policies() lacks %s", f)
		}
	}
}

// hookOnly says it replaces select_idle_core and has no SelectIdleCore.
type hookOnly struct{}

func (hookOnly) Name() string                                                  { return "hook-only" }
func (hookOnly) New() engine.WakePolicy                                        { return hookOnly{} }
func (hookOnly) Hooks() engine.Hook                                            { return engine.HookSelectIdleCore }
func (hookOnly) SelectIdleSibling(*engine.WakeView) (int, engine.Stage, error) { return 0, 0, nil }

func TestCoreHookNeedsMethod(t *testing.T) {
	_, err := scenario.Run(scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"hackbench:g=2,l=100"}, Seed: 1,
		Duration: 10 * engine.Millisecond, Knobs: []string{"era=6.6"}, WakePolicy: hookOnly{}})
	if err == nil || !strings.Contains(err.Error(), "replaces select_idle_core but has no SelectIdleCore") {
		t.Fatalf("got %v", err)
	}
}
