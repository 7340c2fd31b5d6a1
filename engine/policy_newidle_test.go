package engine

import (
	"errors"
	"testing"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// goNewidle is a newly idle policy in Go (the wakeups keep the era's
// select_idle_sibling).
type goNewidle func(v *BalanceView) (int, int, error)

func (g goNewidle) SelectIdleSibling(v *WakeView) (int, Stage, error) {
	c, st := v.KernelSelectIdleSibling()
	return c, st, nil
}
func (g goNewidle) Hooks() Hook                                     { return HookNewidleBalance }
func (g goNewidle) NewidleBalance(v *BalanceView) (int, int, error) { return g(v) }

// The engine's pull: up to n fair tasks from the CPU the policy names,
// can_migrate_task's rules applied (the running, the pinned and the cache
// hot task stay), charged lb_cpu_ns per probe and lb_base_ns for the
// pass, counted as a balance pass and its moves.
func TestNewidlePolicyPull(t *testing.T) {
	s, hogs := lbSetup(t, smallSpec(1, 4, 1, 4, machine.Interleaved),
		[]lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}, {cpu: 0, allowed: []int{0}}, {cpu: 0}})
	cool(s, 0)
	src := s.cpus[0]
	var hot *Task
	for _, p := range src.tree {
		if p.allowed.Weight() > 1 {
			hot = p
		}
	}
	hot.execStart = s.now - 100*Microsecond
	movable := 0
	for _, p := range src.tree {
		if p.allowed.Weight() > 1 && p != hot {
			movable++
		}
	}
	if movable < 2 {
		t.Fatalf("setup: %d movable tasks on CPU 0, want at least 2", movable)
	}
	var seen, loads []int
	if err := s.SetWakePolicy(goNewidle(func(v *BalanceView) (int, int, error) {
		if _, err := v.NrRunning(0); !errors.Is(err, ErrNotProbed) {
			t.Errorf("nr_running before a probe: %v, want ErrNotProbed", err)
		}
		for _, c := range []int{0, 2} {
			if _, err := v.Probe(c); err != nil {
				return -1, 0, err
			}
			n, _ := v.HNrRunning(c)
			seen = append(seen, n)
			q, _ := v.NrQueued(c)
			loads = append(loads, q)
		}
		if v.CPU() != 1 || !v.Overloaded() || v.Probes() != 2 {
			t.Errorf("CPU %d, overloaded %v, probes %d; want 1, true, 2", v.CPU(), v.Overloaded(), v.Probes())
		}
		return 0, 10, nil
	})); err != nil {
		t.Fatal(err)
	}
	c := s.cpus[1]
	calls, moved := s.stats.lbCalls, s.stats.lbMoved
	cost := s.class.balanceNewidle(c, false) // (schedule then picks one: no invariant holds meanwhile)
	if seen[0] != len(hogs) || seen[1] != 0 || loads[0] != len(hogs)-1 {
		t.Errorf("h_nr_running %v, nr_queued %v; want [%d 0], %d queued on CPU 0", seen, loads, len(hogs), len(hogs)-1)
	}
	want := 2*s.k.Get(knob.LBCPUNS) + s.k.Get(knob.LBBaseNS)
	if cost != want {
		t.Errorf("cost %d, want 2 probes + a pass = %d", cost, want)
	}
	if c.nr != movable || s.stats.lbMoved-moved != int64(movable) || s.stats.lbCalls-calls != 1 {
		t.Errorf("pulled %d (moved %d, passes %d); want the %d cold, unpinned, queued tasks in one pass",
			c.nr, s.stats.lbMoved-moved, s.stats.lbCalls-calls, movable)
	}
	if hot.cpu != 0 {
		t.Errorf("the cache-hot task moved to CPU %d", hot.cpu)
	}
	for _, p := range hogs {
		if p.allowed.Weight() == 1 && p.cpu != 0 {
			t.Errorf("the pinned task moved to CPU %d", p.cpu)
		}
	}
	if c.idleStamp != 0 {
		t.Errorf("idle_stamp %d after a pull, want 0", c.idleStamp)
	}
}

// A policy that wraps the kernel's balance and asks for nothing more is
// the kernel's balance: the same cost, the same pull.
func TestNewidlePolicyKernelWrap(t *testing.T) {
	run := func(pol WakePolicy) (int64, int, int64) {
		s, _ := lbSetup(t, smallSpec(1, 2, 1, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}})
		cool(s, 0)
		if pol != nil {
			if err := s.SetWakePolicy(pol); err != nil {
				t.Fatal(err)
			}
		}
		c := s.cpus[1]
		c.avgIdle = Second
		cost := s.class.balanceNewidle(c, false)
		return cost, c.nr, c.balanceUntil
	}
	pulled := -1
	wc, wn, wu := run(nil)
	gc, gn, gu := run(goNewidle(func(v *BalanceView) (int, int, error) {
		pulled = v.KernelNewidleBalance()
		return -1, 0, nil
	}))
	if wn != 1 {
		t.Fatalf("setup: the kernel's balance pulled %d, want 1", wn)
	}
	if gc != wc || gn != wn || gu != wu || pulled != wn {
		t.Fatalf("wrapped: cost %d, nr %d, balanceUntil %d, returned %d; kernel: %d, %d, %d", gc, gn, gu, pulled, wc, wn, wu)
	}
}

// The slots are one store for the wakeup and the balance hooks; a policy
// error stops the run.
func TestNewidlePolicySlotsAndErrors(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 2, 1, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}})
	if err := s.SetWakePolicy(goNewidle(func(v *BalanceView) (int, int, error) {
		if err := v.SetCPUSlot(1, 42); err != nil {
			return -1, 0, err
		}
		return 1, 1, nil // the CPU going idle itself
	})); err != nil {
		t.Fatal(err)
	}
	s.class.balanceNewidle(s.cpus[1], false)
	if x, _ := s.wview.CPUSlot(1); x != 42 {
		t.Errorf("the wake view's slot of CPU 1 is %d, want the balance's 42", x)
	}
	if s.Err() == nil {
		t.Error("a pull from the idle CPU itself: no error")
	}
}
