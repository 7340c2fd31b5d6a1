package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/presets"
)

func preset(t testing.TB, name string) *machine.Topology {
	spec, err := presets.Machine(name)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// newPresetSim builds a simulation of a preset with its cost knobs.
func newPresetSim(t testing.TB, name string, seed uint64, sets ...string) *engine.Sim {
	tp := preset(t, name)
	k := knob.Defaults()
	for n, v := range tp.Spec.Costs {
		id, _ := knob.Lookup(n)
		k.SetValue(id, v)
	}
	for _, s := range sets {
		n, v, _ := cut(s)
		if err := k.Set(n, v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := engine.New(engine.Config{Machine: tp, Knobs: k, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// busyLoad is a wakeup-heavy load that keeps about three quarters of the
// machine busy: one schbench message thread per two CPUs with a single
// worker each (many independent wakers), plus free hogs on ~45% of CPUs.
func busyLoad(t testing.TB, s *engine.Sim) {
	n := s.Topology().NCPU
	for _, spec := range []string{
		"schbench:m=" + itoa(n/2) + ",t=1,c=1000,s=500",
		"hog:n=" + itoa(n*45/100),
	} {
		if _, err := Add(s, spec, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// V4 (validation.md), sis-scalability-2019 patch 1/7: with the bound on,
// no select_idle_cpu call probes more than limit = 2·max(2, SMT width)
// CPUs: 4 on the Intel box, 16 on SPARC SMT8, at most the 8-CPU LLC on
// POWER9 — checked on every decision of long random runs.
func TestBoundedSearchNeverExceedsLimit(t *testing.T) {
	cases := []struct {
		preset string
		limit  int
	}{{"intel-2s-44c-88t", 4}, {"sparc-2s-16c-128t", 16}, {"power9-2s-44c-176t", 8}}
	for _, c := range cases {
		for seed := uint64(1); seed <= 2; seed++ {
			s := newPresetSim(t, c.preset, seed, "SIS_BOUND=true", "SIS_CORE=false")
			calls, worst := 0, 0
			s.SetHooks(engine.Hooks{OnWakeup: func(d *engine.Decision) {
				if d.SISCalled {
					calls++
					worst = max(worst, d.SISProbes)
				}
			}})
			busyLoad(t, s)
			s.RunUntil(500 * engine.Millisecond)
			if calls < 1000 {
				t.Fatalf("%s: only %d select_idle_cpu calls: the load does not exercise the search", c.preset, calls)
			}
			if worst > c.limit {
				t.Errorf("%s seed %d: a select_idle_cpu call probed %d CPUs, limit %d", c.preset, seed, worst, c.limit)
			}
			t.Logf("%s seed %d: %d calls, max %d probes (limit %d)", c.preset, seed, calls, worst, c.limit)
		}
	}
}

// V4, second half: without the bound and with SIS_PROP off, the scan is
// only stopped by finding an idle CPU, so on an equally busy machine the
// mean probes per call grow with the LLC: Zen4's 16-CPU CCX < the Intel
// box's 44-CPU socket.
func TestUnboundedProbesGrowWithLLCSize(t *testing.T) {
	mean := func(name string) float64 {
		s := newPresetSim(t, name, 1, "SIS_PROP=false", "SIS_CORE=false")
		busyLoad(t, s)
		s.RunUntil(300 * engine.Millisecond)
		st := s.Search()
		if st.SelectIdleCPUCalls < 1000 {
			t.Fatalf("%s: only %d select_idle_cpu calls", name, st.SelectIdleCPUCalls)
		}
		return st.ProbesMean
	}
	zen4, intel := mean("amd-zen4-2s-256c-512t"), mean("intel-2s-44c-88t")
	t.Logf("mean probes per select_idle_cpu: zen4 (16-CPU LLC) %.2f, intel (44-CPU LLC) %.2f", zen4, intel)
	if !(zen4 < intel) {
		t.Fatalf("mean probes zen4 %.2f not below intel %.2f", zen4, intel)
	}
}

// V5, sis-scalability-2019 patch 3/7 ("no cpu gets victimized"): on a
// loaded Intel box with the bounded search, rotating the window spreads the
// placements made by select_idle_cpu more evenly over the CPUs — a lower
// coefficient of variation of the per-CPU placement counts — for every
// seed.
func TestRotationSpreadsPlacements(t *testing.T) {
	cv := func(seed uint64, rotate string) float64 {
		s := newPresetSim(t, "intel-2s-44c-88t", seed, "SIS_BOUND=true", "SIS_CORE=false", "SIS_ROTATE="+rotate)
		for _, spec := range []string{"schbench:m=44,t=1,c=1000,s=500", "hog:n=40"} {
			if _, err := Add(s, spec, ""); err != nil {
				t.Fatal(err)
			}
		}
		s.RunUntil(2 * engine.Second)
		if s.Search().StageCalls["select_idle_cpu"] < 5000 {
			t.Fatalf("too few select_idle_cpu placements: %v", s.Search().StageCalls)
		}
		return s.SISPlacementCV()
	}
	for seed := uint64(1); seed <= 3; seed++ {
		off, on := cv(seed, "false"), cv(seed, "true")
		t.Logf("seed %d: placement CV without rotation %.4f, with %.4f", seed, off, on)
		if !(on < off) {
			t.Errorf("seed %d: rotation CV %.4f not below %.4f", seed, on, off)
		}
	}
}

// SHARED_RUNQ: under a wakeup-heavy load with the "all" policy, more CPUs
// per shard means more CPUs contending for each shard lock, so the time
// spent waiting for shard locks grows with shard_size (v3's motivation for
// sharding: lockstat contention 3–4× lower than unsharded).
func TestSharedRunqLockWaitGrowsWithShardSize(t *testing.T) {
	wait := func(shard string) engine.SharedRunqStats {
		s := newPresetSim(t, "amd-zen3-2s-128c-256t", 1, "SHARED_RUNQ=all", "shard_size="+shard)
		for _, spec := range []string{"schbench:m=96,t=2,c=300,s=100", "hog:n=64"} {
			if _, err := Add(s, spec, ""); err != nil {
				t.Fatal(err)
			}
		}
		s.RunUntil(200 * engine.Millisecond)
		return s.SharedRunq()
	}
	prev, first := int64(-1), int64(0)
	for _, shard := range []string{"2", "6", "16"} {
		st := wait(shard)
		t.Logf("shard_size %s: %+v", shard, st)
		if st.LockAcquisitions < 10000 {
			t.Fatalf("shard_size %s: only %d lock acquisitions", shard, st.LockAcquisitions)
		}
		if st.LockWaitNS <= prev {
			t.Errorf("shard_size %s: lock wait %d ns not above the smaller shard's %d ns", shard, st.LockWaitNS, prev)
		}
		if first == 0 {
			first = st.LockWaitNS
		}
		prev = st.LockWaitNS
	}
	if prev < first*3/2 {
		t.Errorf("one shard per LLC waits %d ns, not clearly more than 2-CPU shards' %d ns", prev, first)
	}
}
