package engine

import (
	"testing"

	"schedplay/engine/machine"
)

// Mechanism tests of era 6.6's load balancer (balance66.go; v6.6
// kernel/sched/fair.c). The machines are built with lbSetup (balancing
// off for 300 ms so PELT has converged), then one balancer function is
// driven by hand.

func lb66Setup(t *testing.T, spec *machine.Spec, hogs []lbHog) (*Sim, []*Task) {
	t.Helper()
	return lbSetup(t, spec, hogs, "era", "6.6")
}

// stats66 runs update_sd_lb_stats for cpu at level l and returns them.
func stats66(t *testing.T, s *Sim, cpu int, l machine.Level, it idleType) (*lbEnv, *sdStats66) {
	t.Helper()
	c := s.cpus[cpu]
	di := level(t, s, cpu, l)
	env := s.newLBEnv(c, di, it, c, s.now)
	env.di = di
	sds := &sdStats66{}
	s.updateSDStats66(&env, sds)
	return &env, sds
}

// fbg66 runs find_busiest_group for cpu at level l.
func fbg66(t *testing.T, s *Sim, cpu int, l machine.Level, it idleType) (*lbEnv, *sdStats66, bool) {
	t.Helper()
	c := s.cpus[cpu]
	di := level(t, s, cpu, l)
	env := s.newLBEnv(c, di, it, c, s.now)
	env.di = di
	sds := &sdStats66{}
	ok := s.findBusiestGroup66(&env, sds)
	return &env, sds, ok
}

func balanceOnce66(t *testing.T, s *Sim, cpu int, l machine.Level, it idleType) int {
	t.Helper()
	cont := true
	c := s.cpus[cpu]
	moved, _ := s.loadBalance66(c, level(t, s, cpu, l), it, &cont, c, s.now)
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return moved
}

// group_classify on real runqueues: 4 cores × 2 threads (CPU n and n+4
// are siblings), seen from idle CPU 3 at the MC level, whose groups are
// the cores. Core 0 runs a hog on each thread: fully busy, and, seen by an
// idle CPU, group_smt_balance (an SMT core running more than one task).
// Core 1 runs three hogs on CPU 1: more tasks than CPUs, and although
// utilisation (one CPU's worth) is under the capacity, runnable_avg (three
// tasks' worth) is over it by more than imbalance_pct: overloaded. Core 2
// runs one hog: spare capacity. Core 3 is idle: spare capacity.
func TestLB66GroupClassification(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(1, 4, 2, 4, "interleaved"), []lbHog{
		{cpu: 0}, {cpu: 4}, {cpu: 1}, {cpu: 1}, {cpu: 1}, {cpu: 2},
	})
	for _, v := range []struct {
		cpu  int
		it   idleType
		want map[int]groupType66
	}{
		{3, cpuIdle, map[int]groupType66{0: groupSMTBalance, 1: groupOverloaded66, 2: groupHasSpare, 3: groupHasSpare}},
		{2, cpuNotIdle, map[int]groupType66{0: groupFullyBusy, 1: groupOverloaded66, 2: groupHasSpare, 3: groupHasSpare}},
	} {
		env, sds := stats66(t, s, v.cpu, machine.LevelMC, v.it)
		for gi, g := range env.sd.Groups {
			var sgs sgStats66
			s.updateSGStats66(env, g, &sgs, gi == env.localIdx)
			core := s.topo.Core[g.First()]
			if sgs.gtype != v.want[core] {
				t.Errorf("from CPU %d: core %d: %v (nr %d, util %d, runnable %d of capacity %d), want %v", v.cpu,
					core, sgs.gtype, sgs.sumNrRunning, sgs.groupUtil, sgs.groupRunnable, sgs.groupCapacity, v.want[core])
			}
			if core == 1 && sgs.groupUtil*117 > sgs.groupCapacity*100 {
				t.Errorf("core 1 utilisation %d: the runnable test should be what makes it overloaded", sgs.groupUtil)
			}
		}
		if !sds.haveBusiest || s.topo.Core[sds.busiest.group.First()] != 1 {
			t.Fatalf("from CPU %d: busiest core %d, want the overloaded core 1", v.cpu, s.topo.Core[sds.busiest.group.First()])
		}
	}
	env, sds := stats66(t, s, 3, machine.LevelMC, cpuIdle)
	if sds.local.gtype != groupHasSpare || sds.local.idleCPUs != 2 || env.localIdx < 0 {
		t.Fatalf("local (core 3): %v with %d idle CPUs, want group_has_spare with 2", sds.local.gtype, sds.local.idleCPUs)
	}
}

// Within the LLC, an idle CPU facing an overloaded core balances tasks
// (SD_PREFER_SIBLING: sibling_imbalance = 3 − 0 tasks per core, halved:
// one task), takes it from the CPU with the most tasks, and moves one.
func TestLB66MigrateTaskWithinLLC(t *testing.T) {
	s, hogs := lb66Setup(t, smallSpec(1, 4, 2, 4, "interleaved"), []lbHog{
		{cpu: 0}, {cpu: 4}, {cpu: 1}, {cpu: 1}, {cpu: 1}, {cpu: 2},
	})
	env, _, ok := fbg66(t, s, 3, machine.LevelMC, cpuIdle)
	if !ok || env.migration != migrateTask || env.imbalance != 1 {
		t.Fatalf("imbalance %v %d (found %v), want migrate_task 1", env.migration, env.imbalance, ok)
	}
	cool(s, 1)
	if moved := balanceOnce66(t, s, 3, machine.LevelMC, cpuIdle); moved != 1 {
		t.Fatalf("moved %d, want 1", moved)
	}
	on1 := 0
	for _, h := range hogs[2:5] {
		if h.cpu == 1 {
			on1++
		}
	}
	if on1 != 2 || s.cpus[3].nr != 1 {
		t.Fatalf("CPU 1 keeps %d of its hogs, CPU 3 has %d tasks; want 2 and 1", on1, s.cpus[3].nr)
	}
	if s.lb.s66.moved[migrateTask] != 1 {
		t.Fatalf("moved by type %v", s.lb.s66.moved)
	}
}

// Above the LLC, an idle CPU whose LLC has spare capacity pulls
// utilisation from an overloaded LLC (migrate_util): the imbalance is the
// local group's spare capacity, and tasks move while their utilisation
// fits in it — here two of the three hogs of CPU 0 (a third would empty
// the source, which an idle CPU never does).
func TestLB66MigrateUtilAcrossLLCs(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(1, 4, 1, 2, "interleaved"), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	env, sds, ok := fbg66(t, s, 2, machine.LevelDIE, cpuIdle)
	if !ok || env.migration != migrateUtil {
		t.Fatalf("imbalance %v %d (found %v), want migrate_util", env.migration, env.imbalance, ok)
	}
	if sds.busiest.gtype != groupOverloaded66 || sds.local.gtype != groupHasSpare {
		t.Fatalf("busiest %v local %v", sds.busiest.gtype, sds.local.gtype)
	}
	if env.imbalance < 2000 || env.imbalance > 2048 {
		t.Fatalf("imbalance %d, want the idle LLC's spare capacity (about 2048)", env.imbalance)
	}
	cool(s, 0)
	if moved := balanceOnce66(t, s, 2, machine.LevelDIE, cpuIdle); moved != 2 {
		t.Fatalf("moved %d, want 2", moved)
	}
	if s.cpus[0].nr != 1 || s.cpus[2].nr != 2 {
		t.Fatalf("CPU 0 %d tasks, CPU 2 %d; want 1 and 2", s.cpus[0].nr, s.cpus[2].nr)
	}
}

// The same imbalance seen by a newly idle CPU: a preemptible kernel
// (Debian's 6.x builds, CONFIG_PREEMPTION) detaches one task and stops,
// to keep the critical section short; an idle CPU's periodic pass moved
// two above.
func TestLB66NewidleDetachesOne(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(1, 4, 1, 2, "interleaved"), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	cool(s, 0)
	c := s.cpus[2]
	c.avgIdle = 10 * Millisecond
	for i := range c.doms {
		c.doms[i].maxNewidleLBCost = 0
	}
	s.overloaded = true
	s.newidleBalance66(c, false)
	if s.cpus[0].nr != 2 || s.cpus[2].nr != 1 {
		t.Fatalf("CPU 0 %d tasks, CPU 2 %d; want 2 and 1", s.cpus[0].nr, s.cpus[2].nr)
	}
}

// Two overloaded CPUs (three hogs against two, one CPU per group):
// migrate_load with imbalance min(3072−2560, 2560−2048) = 512. A hog
// (1024) is more than that, so the first periodic pass moves nothing; once
// the level has failed, shr_bound halves the task's load to 512 and one
// moves (v5.2's fix_small_imbalance would have moved it at once).
func TestLB66MigrateLoadBothOverloaded(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(1, 2, 1, 1, "interleaved"), []lbHog{
		{cpu: 0}, {cpu: 0}, {cpu: 0}, {cpu: 1}, {cpu: 1},
	})
	env, sds, ok := fbg66(t, s, 1, machine.LevelDIE, cpuNotIdle)
	if !ok || env.migration != migrateLoad {
		t.Fatalf("imbalance %v %d (found %v), want migrate_load", env.migration, env.imbalance, ok)
	}
	if sds.local.gtype != groupOverloaded66 || sds.busiest.gtype != groupOverloaded66 {
		t.Fatalf("local %v busiest %v, want both overloaded", sds.local.gtype, sds.busiest.gtype)
	}
	if env.imbalance < 500 || env.imbalance > 520 {
		t.Fatalf("imbalance %d, want about 512", env.imbalance)
	}
	cool(s, 0)
	if moved := balanceOnce66(t, s, 1, machine.LevelDIE, cpuNotIdle); moved != 0 {
		t.Fatalf("first pass moved %d, want 0", moved)
	}
	if moved := balanceOnce66(t, s, 1, machine.LevelDIE, cpuNotIdle); moved != 1 {
		t.Fatalf("second pass moved %d, want 1", moved)
	}
}

// A fully busy LLC (one hog per CPU) against an idle one: only an idle
// CPU pulls (a busy one sees it as balanced), migrate_task with one task.
// The busiest CPU has a single task, which detach_tasks cannot take; after
// cache_nice_tries+2 failed passes the running hog is pushed (active
// balance: v6.6 does this only for migrate_task imbalances), and the push
// resets the level's failure count.
func TestLB66FullyBusyActiveBalance(t *testing.T) {
	s, hogs := lb66Setup(t, smallSpec(1, 4, 1, 2, "interleaved"), []lbHog{{cpu: 0}, {cpu: 1}})
	if _, _, ok := fbg66(t, s, 2, machine.LevelDIE, cpuNotIdle); ok {
		t.Fatal("a busy CPU should leave a group that is not overloaded to idle CPUs")
	}
	env, sds, ok := fbg66(t, s, 2, machine.LevelDIE, cpuIdle)
	if !ok || env.migration != migrateTask || env.imbalance != 1 || sds.busiest.gtype != groupFullyBusy {
		t.Fatalf("%v %d from %v (found %v), want migrate_task 1 from group_fully_busy", env.migration, env.imbalance, sds.busiest.gtype, ok)
	}
	di := level(t, s, 2, machine.LevelDIE)
	for i := 1; i <= 4; i++ {
		if moved := balanceOnce66(t, s, 2, machine.LevelDIE, cpuIdle); moved != 0 {
			t.Fatalf("pass %d moved %d", i, moved)
		}
		if got := s.cpus[2].doms[di].nrBalanceFailed; got != i {
			t.Fatalf("pass %d: nr_balance_failed %d", i, got)
		}
	}
	if s.stats.activeBalances != 1 || s.cpus[0].pushTo != 2 {
		t.Fatalf("active balances %d, CPU 0 pushes to %d; want 1 to CPU 2", s.stats.activeBalances, s.cpus[0].pushTo)
	}
	s.RunUntil(s.now + Millisecond)
	if hogs[0].cpu != 2 {
		t.Fatalf("hog A on CPU %d, want it pushed to 2", hogs[0].cpu)
	}
	if got := s.cpus[2].doms[di].nrBalanceFailed; got != 0 {
		t.Fatalf("nr_balance_failed %d after the push, want 0", got)
	}
}

// adjust_numa_imbalance and imb_numa_nr: on 2 sockets of 2 LLCs each, the
// NUMA level allows 2 (LLCs per node) tasks; an imbalance of two tasks is
// kept while the destination runs no more than that.
func TestLB66NumaImbalance(t *testing.T) {
	s := newSim(t, smallSpec(2, 4, 1, 2, "interleaved"), 1, "era", "6.6")
	di := level(t, s, 0, machine.LevelNUMA)
	if got := s.imbNumaNr(s.cpus[0], di); got != 2 {
		t.Fatalf("imb_numa_nr %d, want 2 (LLCs per node)", got)
	}
	for _, c := range []struct {
		imb       int64
		dst, nr   int
		want      int64
		situation string
	}{
		{2, 1, 2, 0, "two tasks' imbalance, lightly loaded destination: kept"},
		{3, 1, 2, 3, "three tasks: moved"},
		{2, 3, 2, 2, "destination busier than imb_numa_nr: moved"},
	} {
		if got := adjustNumaImbalance(c.imb, c.dst, c.nr); got != c.want {
			t.Errorf("%s: %d, want %d", c.situation, got, c.want)
		}
	}
	// One LLC per socket (Intel-like): the package level spanned just
	// the LLC when build_sched_domains set imb_numa_nr, so the NUMA level
	// has an eighth of the LLC's CPUs (8 → 1, 16 → 2), not its 2 LLCs.
	for _, c := range []struct{ cores, threads, want int }{{4, 2, 1}, {8, 2, 2}} {
		s = newSim(t, smallSpec(2, c.cores, c.threads, c.cores, "interleaved"), 1, "era", "6.6")
		if got := s.imbNumaNr(s.cpus[0], level(t, s, 0, machine.LevelNUMA)); got != c.want {
			t.Fatalf("%d-CPU LLC per socket: imb_numa_nr %d, want %d", c.cores*c.threads, got, c.want)
		}
	}
	// Zen-like: 2 sockets of 4 LLCs: 4 at the package level, and the
	// same at the NUMA level (as wide as the first NUMA level).
	s = newSim(t, smallSpec(2, 8, 1, 2, "interleaved"), 1, "era", "6.6")
	for _, l := range []machine.Level{machine.LevelDIE, machine.LevelNUMA} {
		if got := s.imbNumaNr(s.cpus[0], level(t, s, 0, l)); got != 4 {
			t.Fatalf("%v: imb_numa_nr %d, want 4", l, got)
		}
	}
}

// newidle_balance's v6.6 gate: skipped when avg_idle is below the lowest
// level's max_newidle_lb_cost, whatever sysctl_sched_migration_cost says.
func TestLB66NewidleGate(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(1, 2, 1, 1, "interleaved"), []lbHog{{cpu: 0}, {cpu: 0}})
	cool(s, 0)
	c := s.cpus[1]
	c.avgIdle = 100 * Microsecond // below sched_migration_cost (500 µs): v5.2 would skip
	c.doms[0].maxNewidleLBCost = 0
	s.overloaded = true
	if cost := s.newidleBalance66(c, false); cost == 0 {
		t.Fatal("avg_idle above max_newidle_lb_cost: newidle balance should run")
	}
	if c.nr != 1 {
		t.Fatalf("CPU 1 has %d tasks after newidle balance, want 1", c.nr)
	}
	c2 := s.cpus[1]
	c2.doms[0].maxNewidleLBCost = 200 * Microsecond
	before := s.stats.lbCalls
	s.newidleBalance66(c2, false)
	if s.stats.lbCalls != before {
		t.Fatal("avg_idle below max_newidle_lb_cost: newidle balance should be skipped")
	}
}

// A mixed run on era 6.6 (hogs, sleepers, forkers on 2 sockets × 2 LLCs ×
// 2 cores × 2 threads) under the invariant checker, twice per seed: the
// same events and CPU times, and the 6.6 balancer did work.
func TestLB66DeterministicWithInvariants(t *testing.T) {
	run := func(seed uint64) (int64, []int64, lb66Stats) {
		s := newSim(t, smallSpec(2, 4, 2, 2, "interleaved"), seed, "era", "6.6")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		for i := 0; i < 10; i++ {
			if _, err := s.Spawn(w, TaskSpec{Name: "hog", Nice: i % 3 * 5, Program: hog()}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 8; i++ {
			if _, err := s.Spawn(w, TaskSpec{Name: "sleeper", Program: sleeperProg(int64(i+1)*Millisecond, 700*Microsecond), MeasureWakeups: true}); err != nil {
				t.Fatal(err)
			}
		}
		s.RunUntil(400 * Millisecond)
		var ex []int64
		for _, c := range s.cpus {
			s.updateCurr(c)
		}
		for _, tk := range s.tasks {
			ex = append(ex, tk.sumExec, int64(tk.cpu), tk.migrations)
		}
		return s.Events(), ex, s.lb.s66
	}
	for seed := uint64(1); seed <= 3; seed++ {
		e1, x1, st := run(seed)
		e2, x2, _ := run(seed)
		if e1 != e2 || len(x1) != len(x2) {
			t.Fatalf("seed %d: events %d vs %d", seed, e1, e2)
		}
		for i := range x1 {
			if x1[i] != x2[i] {
				t.Fatalf("seed %d: value %d differs: %d vs %d", seed, i, x1[i], x2[i])
			}
		}
		if st.imb[migrateLoad]+st.imb[migrateUtil]+st.imb[migrateTask] == 0 {
			t.Fatalf("seed %d: the 6.6 balancer found no imbalance at all", seed)
		}
	}
}

// A v6.6 load_balance pass allocates nothing once its scratch space
// exists (the hot tasks are examined, never moved).
func TestLB66PassDoesNotAllocate(t *testing.T) {
	s, _ := lb66Setup(t, smallSpec(2, 4, 2, 4, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	c := s.cpus[1]
	for _, p := range s.cpus[0].tree {
		p.execStart = s.now
	}
	s.stats.lbCalls = 0
	allocs := testing.AllocsPerRun(50, func() {
		for di := range c.domains() {
			cont := true
			if moved, _ := s.loadBalance66(c, di, cpuIdle, &cont, c, s.now); moved != 0 {
				t.Fatal("a hot task moved")
			}
			c.doms[di].nrBalanceFailed = 0
		}
	})
	if allocs != 0 || s.stats.lbCalls == 0 || s.lb.s66.imb[migrateTask] == 0 {
		t.Fatalf("%v allocations per round of %d passes (imbalances %v)", allocs, len(c.domains()), s.lb.s66.imb)
	}
}

// Era 6.6 keeps zero allocation per event in steady state, its balancer
// included: a warmed-up run of hogs and sleepers on 2 sockets allocates
// nothing.
func TestLB66StepsDoNotAllocate(t *testing.T) {
	s := newSim(t, smallSpec(2, 4, 2, 2, "interleaved"), 3, "era", "6.6")
	w := s.AddWorkload("mix", "mix")
	for i := 0; i < 12; i++ {
		if _, err := s.Spawn(w, TaskSpec{Name: "hog", Nice: i % 4, Program: hog()}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 8; i++ {
		if _, err := s.Spawn(w, TaskSpec{Name: "sleeper", Program: sleeperProg(int64(3+i)*Millisecond, Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	s.RunUntil(2 * Second)
	until := s.now
	allocs := testing.AllocsPerRun(5, func() {
		until += 200 * Millisecond
		s.RunUntil(until)
	})
	if allocs != 0 || s.stats.lbCalls == 0 {
		t.Fatalf("%.1f allocations per 200 ms of simulation, want 0", allocs)
	}
}
