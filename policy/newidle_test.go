package policy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/policy"
	"schedplay/scenario"
)

// newidleRuns are the equality runs, shorter: schbench 500 ms, hackbench
// 200 ms.
var newidleRuns = func() []runCase {
	out := append([]runCase(nil), runs...)
	for i := range out {
		out[i].dur = 200 * engine.Millisecond
		if strings.HasPrefix(out[i].workload, "schbench") {
			out[i].dur = 500 * engine.Millisecond
		}
	}
	return out
}()

// eachNewidleRun runs check for every era and run of newidleRuns with the
// era's config and the same with file's policy, whose pulls it counts.
func eachNewidleRun(t *testing.T, file string, check func(t *testing.T, era string, r runCase, base, withPolicy scenario.Config, calls, asked, far *int)) {
	prog := load(t, file)
	for _, era := range []string{"5.2", "6.6"} {
		for _, r := range newidleRuns {
			t.Run(era+"/"+r.name, func(t *testing.T) {
				var calls, asked, far int
				base := scenario.Config{Preset: r.preset, Workloads: []string{r.workload}, Seed: 7, Duration: r.dur,
					Knobs: []string{"era=" + era}}
				withPolicy := base
				withPolicy.WakePolicy = pulls{prog: prog, calls: &calls, asked: &asked, far: &far}
				check(t, era, r, base, withPolicy, &calls, &asked, &far)
			})
		}
	}
}

// TestKernelNewidleMatchesEra: kernel-newidle.star, which runs the
// kernel's own newly idle balance, is byte-identical to no policy.
func TestKernelNewidleMatchesEra(t *testing.T) {
	eachNewidleRun(t, "kernel-newidle.star", func(t *testing.T, era string, r runCase, base, withPolicy scenario.Config, calls, asked, far *int) {
		want, got := resultJSON(t, base), resultJSON(t, withPolicy)
		if !bytes.Equal(got, want) {
			t.Errorf("kernel-newidle.star differs from era %s:\n%s", era, firstDiff(got, want))
		}
		if *calls == 0 || *asked != 0 {
			t.Errorf("%d newidle calls, %d pulls asked; want some calls and no pull of the engine's", *calls, *asked)
		}
	})
}

// pulls wraps a newidle policy's instances: it records each pull the
// policy asks for (the CPU going idle, the source) and whether the two
// share an LLC.
type pulls struct {
	prog              scenario.WakePolicy
	calls, asked, far *int
}

func (p pulls) Name() string { return p.prog.Name() }
func (p pulls) New() engine.WakePolicy {
	return pullsInst{p, p.prog.New()}
}

type pullsInst struct {
	p     pulls
	inner engine.WakePolicy
}

func (pi pullsInst) Hooks() engine.Hook { return pi.inner.(engine.Hooked).Hooks() }
func (pi pullsInst) SelectIdleSibling(v *engine.WakeView) (int, engine.Stage, error) {
	return pi.inner.SelectIdleSibling(v)
}
func (pi pullsInst) NewidleBalance(v *engine.BalanceView) (int, int, error) {
	src, n, err := pi.inner.(engine.NewidlePolicy).NewidleBalance(v)
	*pi.p.calls++
	if err == nil && src >= 0 {
		*pi.p.asked++
		if !v.ShareCache(v.CPU(), src) {
			*pi.p.far++
		}
	}
	return src, n, err
}

// TestNewidleLLCOnly: newidle-llc-only.star asks only for pulls inside
// the idle CPU's LLC, and what that does against the kernel's newly idle
// balance, which walks every level: fewer balance passes, and on
// hackbench (an LLC's CPUs go idle while the other LLC has tasks waiting)
// more idle time.
func TestNewidleLLCOnly(t *testing.T) {
	eachNewidleRun(t, "newidle-llc-only.star", func(t *testing.T, era string, r runCase, base, withPolicy scenario.Config, calls, asked, far *int) {
		k, err := scenario.Run(base)
		if err != nil {
			t.Fatal(err)
		}
		p, err := scenario.Run(withPolicy)
		if err != nil {
			t.Fatal(err)
		}
		if *calls == 0 || *asked == 0 {
			t.Fatalf("%d newidle calls, %d pulls asked: the policy did nothing", *calls, *asked)
		}
		if *far != 0 {
			t.Errorf("%d of %d pulls asked from another LLC", *far, *asked)
		}
		kx := k.Migrations.CrossLLC + k.Migrations.CrossSocket
		px := p.Migrations.CrossLLC + p.Migrations.CrossSocket
		t.Logf("%s: %d newidle calls, %d pulls asked; kernel vs policy: balance passes %d/%d, moved %d/%d, cross-LLC migrations %d/%d, busy %.2f%%/%.2f%%, p99 wakeup %s/%s us",
			r.name, *calls, *asked, k.Balance.Calls, p.Balance.Calls, k.Balance.Moved, p.Balance.Moved, kx, px,
			k.CPUBusyPct, p.CPUBusyPct, p99(k), p99(p))
		// On hackbench, newly idle passes are most of the kernel's;
		// on schbench (few newidle calls) the CPUs the policy leaves
		// idle run their periodic idle balance sooner (the kernel's
		// epilogue brings next_balance forward after a policy pass
		// too), so the total may grow there.
		hack := strings.HasPrefix(r.workload, "hackbench")
		if hack && p.Balance.Calls >= k.Balance.Calls {
			t.Errorf("balance passes: policy %d, kernel %d; want fewer (one pass per pull asked)", p.Balance.Calls, k.Balance.Calls)
		}
		if hack && p.CPUBusyPct >= k.CPUBusyPct {
			t.Errorf("busy %.2f%%, kernel's %.2f%%; want more idle time without cross-LLC newly idle pulls", p.CPUBusyPct, k.CPUBusyPct)
		}
	})
}

func p99(r *scenario.Result) string {
	if len(r.Workloads) == 0 {
		return "-"
	}
	return fmt.Sprint(r.Workloads[0].WakeupLatencyUS.P99)
}

func TestNewidlePolicyErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"arity", "def newidle_balance():\n    return -1\n", "must take 1 (cpu)"},
		{"not probed", "def newidle_balance(cpu):\n    return nr_running(cpu ^ 1)\n", "t.star:2:22: nr_running: CPU"},
		{"wake only", "def newidle_balance(cpu):\n    scan_begin(4)\n    return -1\n", "t.star:2:15: scan_begin: only in a wakeup's call"},
		{"balance only", "def select_idle_sibling(p, prev, target):\n    kernel.newidle_balance()\n    return target\n",
			"t.star:2:27: kernel.newidle_balance: only inside newidle_balance"},
		{"bad cpu", "def newidle_balance(cpu):\n    return 999\n", "newidle_balance returned CPU 999"},
		{"bad n", "def newidle_balance(cpu):\n    return cpu ^ 1, 0\n", "want at least 1"},
		{"itself", "def newidle_balance(cpu):\n    return cpu\n", "t.star:1:1: newidle_balance returned CPU"},
		{"top level", "x = overloaded()\ndef newidle_balance(cpu):\n    return -1\n", "t.star:1:15: overloaded: only inside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runPolicy(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// Both hooks in one file share the slots: what the balance writes
	// the wakeup reads (and stops the run to say so).
	src := `def select_idle_sibling(p, prev, target):
    if llc_state(0) > 0:
        fail("shared: %d newly idle balances counted" % llc_state(0))
    return kernel.select_idle_sibling()

def newidle_balance(cpu):
    set_llc_state(0, llc_state(0) + 1)
    kernel.newidle_balance()
    return -1
`
	if err := runPolicy(t, src); err == nil || !strings.Contains(err.Error(), "t.star:3:13: fail: fail: shared: ") {
		t.Fatalf("got %v, want the wakeup to see the balance's count", err)
	}
}

// TestAllHooksKernel: one file defining the three hooks a file without
// select_idle_sibling can have (select_idle_cpu, select_idle_core and
// newidle_balance), each calling or copying the kernel's own, is the era's
// own run, byte for byte, in eras 5.2 and 6.6: the hooks compose.
func TestAllHooksKernel(t *testing.T) {
	var src []byte
	for _, f := range []string{"kernel-cpu.star", "kernel-core.star", "kernel-newidle.star"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "policies", f))
		if err != nil {
			t.Fatal(err)
		}
		src = append(append(src, b...), '\n')
	}
	prog, err := policy.Compile("all-hooks.star", src)
	if err != nil {
		t.Fatal(err)
	}
	if h := prog.New().(engine.Hooked).Hooks(); h != engine.HookSelectIdleCPU|engine.HookSelectIdleCore|engine.HookNewidleBalance {
		t.Fatalf("hooks %b, want select_idle_cpu, select_idle_core and newidle_balance", h)
	}
	for _, era := range []string{"5.2", "6.6"} {
		for _, r := range runs[:2] {
			base := scenario.Config{Preset: r.preset, Workloads: []string{r.workload}, Seed: 7, Duration: r.dur / 4,
				Knobs: []string{"era=" + era}}
			withPolicy := base
			withPolicy.WakePolicy = prog
			if got, want := resultJSON(t, withPolicy), resultJSON(t, base); !bytes.Equal(got, want) {
				t.Errorf("era %s %s: the three kernel hooks differ from no policy:\n%s", era, r.name, firstDiff(got, want))
			}
		}
	}
}
