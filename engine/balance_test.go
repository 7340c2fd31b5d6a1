package engine

import (
	"testing"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Mechanism tests of the v5.2 load balancer (v5.2.1 kernel/sched/fair.c).
// Each builds a small machine with balancing switched off, places tasks,
// and then drives one balancer function by hand at a frozen instant.

// lbHog is one hog of an lbSetup: where it starts, where it may run
// afterwards (nil: anywhere) and its nice value.
type lbHog struct {
	cpu     int
	allowed []int
	nice    int
}

// lbSetup places the hogs (each pinned to its CPU while it starts), runs
// 300 ms with every balancer off (so the busy CPUs' utilisation has
// converged: group_is_overloaded reads it), then widens each hog's
// affinity. Tasks come back in the order given.
func lbSetup(t *testing.T, spec *machine.Spec, hogs []lbHog, sets ...string) (*Sim, []*Task) {
	t.Helper()
	sets = append([]string{"LB_PERIODIC", "false", "LB_NEWIDLE", "false"}, sets...)
	s := newSim(t, spec, 1, sets...)
	s.debug = true
	w := s.AddWorkload("hogs", "test")
	var out []*Task
	for i, h := range hogs {
		id, err := s.Spawn(w, TaskSpec{Name: "hog" + string(rune('A'+i)), Nice: h.nice, ParentCPU: h.cpu,
			Allowed: cpumask.Of(s.topo.NCPU, h.cpu), Program: hog()})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s.tasks[id])
	}
	s.RunUntil(300 * Millisecond)
	for i, h := range hogs {
		if out[i].cpu != h.cpu {
			t.Fatalf("setup: %s on cpu %d, want %d", out[i].Name, out[i].cpu, h.cpu)
		}
		if h.allowed == nil {
			out[i].allowed = s.topo.All.Clone()
		} else {
			out[i].allowed = cpumask.Of(s.topo.NCPU, h.allowed...)
		}
	}
	return s, out
}

// level returns the index of level l in cpu's domains.
func level(t *testing.T, s *Sim, cpu int, l machine.Level) int {
	t.Helper()
	for i, d := range s.cpus[cpu].domains() {
		if d.Level == l {
			return i
		}
	}
	t.Fatalf("cpu %d has no %s domain", cpu, l)
	return -1
}

// balanceOnce runs one load_balance pass of cpu at level l, paid by cpu.
func balanceOnce(t *testing.T, s *Sim, cpu int, l machine.Level, it idleType) int {
	t.Helper()
	cont := true
	c := s.cpus[cpu]
	moved, _ := s.loadBalance(c, level(t, s, cpu, l), it, &cont, c, s.now)
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return moved
}

// cool makes every queued task of cpu cache cold (it last ran 1 ms ago).
func cool(s *Sim, cpu int) {
	for _, p := range s.cpus[cpu].tree {
		p.execStart = s.now - Millisecond
	}
}

// calculate_imbalance and fix_small_imbalance on hand-made group
// statistics (numbers worked out from the v5.2 formulas in the comments).
func TestCalculateImbalanceV52(t *testing.T) {
	grp := func(load, capacity int64, nr int, gt groupType) sgStats {
		g := sgStats{groupLoad: load, sumWeighted: load, groupCapacity: capacity, sumNrRunning: nr,
			groupWeight: int(capacity / 1024), gtype: gt}
		g.avgLoad = load * 1024 / capacity
		if nr > 0 {
			g.loadPerTask = load / int64(nr)
		}
		return g
	}
	cases := []struct {
		name           string
		local, busiest sgStats
		dstLPT, want   int64
	}{
		// 2 nice-0 tasks against 1, one CPU each: the average pull
		// (min(512·1024, 512·1024)/1024 = 512) is under one task, and
		// fix_small_imbalance (imbn 2: 2048+1024 ≥ 1024+2·1024) rounds
		// it up to a whole task, 1024.
		{"fix_small rounds up to one task", grp(1024, 1024, 1, groupOther), grp(2048, 1024, 2, groupOverloaded), 1024, 1024},
		// Both 4-CPU groups overloaded, busiest 6 tasks of 2048:
		// avg 3072 vs domain 2176, but load_above_capacity =
		// (6·1024−4096)·1024/4096 = 512 caps the pull: 512·4096/1024
		// = 2048 (not 3584).
		{"load_above_capacity caps the pull", grp(5*1024, 4096, 5, groupOverloaded), grp(6*2048, 4096, 6, groupOverloaded), 1024, 2048},
		// Three nice-19 tasks (15 each) on 2 CPUs, one nice-0 task on
		// the local 2 CPUs: busiest is below the average, no task's
		// worth of imbalance, but moving one raises the capacity used
		// (capa_move 1068 > capa_now 1054): imbalance = 15.
		{"capa_move: an idle CPU takes a nice-19 task", grp(1024, 2048, 1, groupOther), grp(45, 2048, 3, groupOverloaded), 1024, 15},
		// One nice-0 task each side: nothing to gain.
		{"nothing to gain", grp(1024, 2048, 1, groupOther), grp(1024, 2048, 1, groupOther), 1024, 0},
	}
	for _, tc := range cases {
		sds := sdStats{local: tc.local, busiest: tc.busiest, haveBusiest: true,
			totalLoad: tc.local.groupLoad + tc.busiest.groupLoad, totalCapacity: tc.local.groupCapacity + tc.busiest.groupCapacity}
		sds.avgLoad = 1024 * sds.totalLoad / sds.totalCapacity
		var env lbEnv
		calculateImbalance(&env, &sds, tc.dstLPT)
		if env.imbalance != tc.want {
			t.Errorf("%s: imbalance %d, want %d", tc.name, env.imbalance, tc.want)
		}
	}
}

// v5.2 moves exactly one task from a CPU running two hogs to its busy
// neighbour running one: the periodic pass finds busiest avg_load 2048
// against the domain's 1536, an average pull of 512, and
// fix_small_imbalance makes it one whole task (1024), which detach_tasks
// takes ((load/2) ≤ imbalance). The post-v5.5 rules (migrate_load with
// imbalance 512, a task moved only if its load ≤ imbalance until
// nr_balance_failed halves it) move nothing on this first pass.
func TestFixSmallImbalanceMovesOneTaskOnFirstPass(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 2, 1, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 1}})
	cool(s, 0)
	env := s.newLBEnv(s.cpus[1], level(t, s, 1, machine.LevelMC), cpuNotIdle, s.cpus[1], s.now)
	var sds sdStats
	if !s.findBusiestGroup(&env, &sds) {
		t.Fatal("find_busiest_group: balanced, want CPU 0's group busiest")
	}
	if want := sds.busiest.loadPerTask; env.imbalance != want || want < 1000 {
		t.Fatalf("imbalance %d, want one task's load %d (fix_small_imbalance)", env.imbalance, want)
	}
	if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuNotIdle); moved != 1 {
		t.Fatalf("moved %d tasks, want 1", moved)
	}
	if s.cpus[0].nr != 1 || s.cpus[1].nr != 2 {
		t.Fatalf("nr_running %d/%d after the pass, want 1/2", s.cpus[0].nr, s.cpus[1].nr)
	}
}

// find_busiest_queue skips a CPU whose single task weighs more than the
// imbalance: the nice -10 hog alone on CPU 0 is the heaviest runqueue of
// the busiest LLC, but moving it would only move the imbalance, so CPU 1
// with two nice-0 hogs is chosen.
func TestFindBusiestQueueSkipsSingleHeavyTask(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 4, 1, 2, machine.Interleaved), []lbHog{{cpu: 0, nice: -10}, {cpu: 1}, {cpu: 1}})
	env := s.newLBEnv(s.cpus[2], level(t, s, 2, machine.LevelDIE), cpuIdle, s.cpus[2], s.now)
	var sds sdStats
	if !s.findBusiestGroup(&env, &sds) {
		t.Fatal("find_busiest_group: balanced")
	}
	if l := s.cpus[0].runnableLoad.at(s.now); l <= env.imbalance {
		t.Fatalf("precondition: CPU 0's load %d should exceed the imbalance %d", l, env.imbalance)
	}
	src := s.findBusiestQueue(&env, &sds.busiest)
	if src == nil || src.id != 1 {
		t.Fatalf("busiest queue %v, want CPU 1", src)
	}
}

// task_hot in v5.2: a task that ran within sched_migration_cost is not
// pulled until the level has failed more than cache_nice_tries times (1
// at MC level), and a failed pass (something to move, nothing moved)
// resets balance_interval to min_interval rather than backing off.
func TestCacheHotTaskWaitsForCacheNiceTries(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 4, 1, 4, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}})
	queued := s.cpus[0].tree[0]
	queued.execStart = s.now - 100*Microsecond // ran 100 µs ago: hot
	di := level(t, s, 1, machine.LevelMC)
	ds := &s.cpus[1].doms[di]
	dom := s.cpus[1].domains()[di]
	if dom.CacheNiceTries != 1 {
		t.Fatalf("MC cache_nice_tries %d, want 1", dom.CacheNiceTries)
	}
	ds.balanceIntervalMS = 2 * dom.MinIntervalMS
	for pass := 1; pass <= 2; pass++ {
		if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuIdle); moved != 0 {
			t.Fatalf("pass %d moved %d tasks; the queued task is cache hot", pass, moved)
		}
		if ds.nrBalanceFailed != pass {
			t.Fatalf("pass %d: nr_balance_failed %d, want %d", pass, ds.nrBalanceFailed, pass)
		}
		if ds.balanceIntervalMS != dom.MinIntervalMS {
			t.Fatalf("pass %d: balance_interval %d ms, want min_interval %d after an unbalanced pass", pass, ds.balanceIntervalMS, dom.MinIntervalMS)
		}
	}
	if s.stats.lbHotSkipped != 2 {
		t.Fatalf("hot skips %d, want 2", s.stats.lbHotSkipped)
	}
	if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuIdle); moved != 1 || queued.cpu != 1 {
		t.Fatalf("third pass moved %d (queued task on cpu %d); nr_balance_failed 2 > cache_nice_tries 1 should move it", moved, queued.cpu)
	}
	if ds.nrBalanceFailed != 0 {
		t.Fatalf("nr_balance_failed %d after a move, want 0", ds.nrBalanceFailed)
	}
}

// v5.2's task_hot has no SMT exemption (a later kernel added one for
// SD_SHARE_CPUCAPACITY): a hot task is refused once between siblings too,
// and moves on the next pass (cache_nice_tries 0 at SMT level).
func TestCacheHotAtSMTLevelV52(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 1, 2, 1, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}})
	s.cpus[0].tree[0].execStart = s.now - 100*Microsecond
	if moved := balanceOnce(t, s, 1, machine.LevelSMT, cpuIdle); moved != 0 {
		t.Fatalf("first pass moved %d: a hot task crossed SMT siblings", moved)
	}
	if moved := balanceOnce(t, s, 1, machine.LevelSMT, cpuIdle); moved != 1 {
		t.Fatalf("second pass moved %d, want 1 (nr_balance_failed 1 > cache_nice_tries 0)", moved)
	}
}

// need_active_balance: two hogs on the SMT siblings of core 0, core 1
// idle. Each idle pass of CPU 1 at MC level finds core 0 busiest (prefer
// sibling: two tasks more than the local group) but its busiest CPU runs
// one task, which cannot be detached: the pass fails. The fourth failure
// (nr_balance_failed 4 > cache_nice_tries 1 + 2) starts the stopper, which
// pushes the running hog; nr_balance_failed is set to cache_nice_tries+1
// and the interval backs off.
func TestActiveBalanceAfterCacheNiceTriesPlusTwo(t *testing.T) {
	s, hogs := lbSetup(t, smallSpec(1, 2, 2, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 2}})
	di := level(t, s, 1, machine.LevelMC)
	ds := &s.cpus[1].doms[di]
	dom := s.cpus[1].domains()[di]
	for pass := 1; pass <= 3; pass++ {
		balanceOnce(t, s, 1, machine.LevelMC, cpuIdle)
		if s.cpus[0].pushTo >= 0 || s.stats.activeBalances != 0 {
			t.Fatalf("active balance after %d failures, want it after %d", pass, dom.CacheNiceTries+3)
		}
		if ds.nrBalanceFailed != pass {
			t.Fatalf("pass %d: nr_balance_failed %d", pass, ds.nrBalanceFailed)
		}
	}
	before := ds.balanceIntervalMS
	balanceOnce(t, s, 1, machine.LevelMC, cpuIdle)
	if s.cpus[0].pushTo != 1 || s.stats.activeBalances != 1 {
		t.Fatalf("fourth failure: push_cpu %d, active balances %d; want the stopper on CPU 0 pushing to CPU 1", s.cpus[0].pushTo, s.stats.activeBalances)
	}
	if ds.nrBalanceFailed != dom.CacheNiceTries+1 {
		t.Fatalf("nr_balance_failed %d after kicking the stopper, want cache_nice_tries+1 = %d", ds.nrBalanceFailed, dom.CacheNiceTries+1)
	}
	if ds.balanceIntervalMS != min(2*before, dom.MaxIntervalMS) {
		t.Fatalf("balance_interval %d ms, want it doubled from %d", ds.balanceIntervalMS, before)
	}
	s.RunUntil(s.now + Millisecond)
	if hogs[0].cpu != 1 {
		t.Fatalf("pushed hog on cpu %d, want 1", hogs[0].cpu)
	}
}

// A CPU whose queued tasks may not run on the balancing CPU but may run on
// another CPU of its local group sends them there (LBF_DST_PINNED,
// new_dst_cpu): CPU 1 balances, and both pinned tasks land on its SMT
// sibling CPU 3.
func TestDstPinnedMovesToAnotherLocalCPU(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 2, 2, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	cool(s, 0)
	pinned := append([]*Task(nil), s.cpus[0].tree...) // the two queued hogs
	for _, p := range pinned {
		p.allowed = cpumask.Of(s.topo.NCPU, 0, 3)
	}
	if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuIdle); moved != 2 {
		t.Fatalf("moved %d, want 2", moved)
	}
	if pinned[0].cpu != 3 || pinned[1].cpu != 3 || s.cpus[1].nr != 0 {
		t.Fatalf("pinned hogs on cpus %d, %d and %d tasks on CPU 1; want both on CPU 3, none on CPU 1", pinned[0].cpu, pinned[1].cpu, s.cpus[1].nr)
	}
}

// When every task of the busiest CPU is pinned to it, the pass gives up
// on that CPU and the interval backs off past max_interval up to
// MAX_PINNED_INTERVAL (512 ms).
func TestAllPinnedBacksOffTo512ms(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 4, 1, 4, machine.Interleaved),
		[]lbHog{{cpu: 0, allowed: []int{0}}, {cpu: 0, allowed: []int{0}}})
	di := level(t, s, 1, machine.LevelMC)
	ds := &s.cpus[1].doms[di]
	dom := s.cpus[1].domains()[di]
	for range 20 {
		if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuIdle); moved != 0 {
			t.Fatalf("moved %d pinned tasks", moved)
		}
	}
	if ds.balanceIntervalMS != maxPinnedIntervalMS || dom.MaxIntervalMS >= maxPinnedIntervalMS {
		t.Fatalf("balance_interval %d ms (max_interval %d), want %d", ds.balanceIntervalMS, dom.MaxIntervalMS, maxPinnedIntervalMS)
	}
	if ds.nrBalanceFailed != 0 {
		t.Fatalf("nr_balance_failed %d, want 0 (all pinned counts as balanced)", ds.nrBalanceFailed)
	}
}

// idle_balance is skipped when avg_idle < sysctl_sched_migration_cost
// (500 µs) or no CPU is overloaded; a level is skipped when avg_idle does
// not cover the cost so far plus its max_newidle_lb_cost; otherwise the
// pass runs, pulls, and its cost is the level's new max_newidle_lb_cost.
func TestNewidleBalanceGates(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(1, 2, 1, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}})
	cool(s, 0)
	c := s.cpus[1]
	di := level(t, s, 1, machine.LevelMC)
	calls := s.stats.lbCalls
	if !s.overloaded {
		t.Fatal("precondition: CPU 0 has a task waiting, root_domain->overload should be set")
	}
	c.avgIdle = 400 * Microsecond
	if cost := s.class.balanceNewidle(c, false); cost != 0 || s.stats.lbCalls != calls {
		t.Fatalf("avg_idle 400 µs: cost %d, %d passes; want the balance skipped", cost, s.stats.lbCalls-calls)
	}
	c.avgIdle = 600 * Microsecond
	c.doms[di].maxNewidleLBCost = 700 * Microsecond
	if cost := s.class.balanceNewidle(c, false); cost != 0 || s.stats.lbCalls != calls {
		t.Fatalf("avg_idle 600 µs < max_newidle_lb_cost 700 µs: cost %d; want the level skipped", cost)
	}
	c.doms[di].maxNewidleLBCost = 0
	s.overloaded = false
	if cost := s.class.balanceNewidle(c, false); cost != 0 || s.stats.lbCalls != calls {
		t.Fatalf("not overloaded: cost %d; want the balance skipped", cost)
	}
	s.overloaded = true
	cost := s.class.balanceNewidle(c, false)
	want := s.lbCost(c.domains()[di])
	if cost != want || c.nr != 1 || c.doms[di].maxNewidleLBCost != want {
		t.Fatalf("avg_idle 600 µs: cost %d (want %d), nr %d (want 1), max_newidle_lb_cost %d", cost, want, c.nr, c.doms[di].maxNewidleLBCost)
	}
}

// rebalance_domains: on its once-a-second decay, rq->max_idle_balance_cost
// follows the sum of the levels' max_newidle_lb_cost (floored at the
// migration cost), not their maximum.
func TestMaxIdleBalanceCostIsTheSumOfLevels(t *testing.T) {
	s := newSim(t, intelSpec(), 1, "LB_PERIODIC", "false", "LB_NEWIDLE", "false")
	s.RunUntil(2 * Second)
	c := s.cpus[5]
	for i := range c.doms {
		c.doms[i].maxNewidleLBCost = 256 * Microsecond
	}
	s.class.rebalanceDomains(c, cpuIdle, c, s.now)
	want := int64(len(c.doms)) * (256 * Microsecond * 253 / 256)
	if len(c.doms) < 3 || c.maxIdleBalanceCost != want {
		t.Fatalf("max_idle_balance_cost %d over %d levels, want %d", c.maxIdleBalanceCost, len(c.doms), want)
	}
}

// The NOHZ idle balance is paid by the kicked CPU: a busy CPU with a task
// waiting kicks the first idle CPU (CPU 0), which leaves idle for the IPI
// and walks the other idle CPUs, balancing for each whose balance is due,
// then for itself. The busy CPU loses nothing; CPU 0 is busy for all the
// passes; the task pulled onto CPU 1 starts only after CPU 0 reached it;
// nohz.next_balance moves to the earliest next balance of the idle CPUs.
func TestNohzIdleBalanceChargesTheKickedCPU(t *testing.T) {
	// With idle states to go deep in, the idle CPUs stop their ticks and
	// join nohz.idle_cpus_mask (menu keeps the tick of a CPU with a single
	// state).
	s, _ := lbSetup(t, withStates(smallSpec(1, 4, 1, 4, machine.Interleaved)), []lbHog{{cpu: 2}, {cpu: 2}})
	cool(s, 2)
	s.k.Set("LB_PERIODIC", "true")
	busy, ilb := s.cpus[2], s.cpus[0]
	busy.nextBalance = s.now + Second // its own periodic balance is not due
	segStart := busy.segStart
	s.nohzNext = 0
	s.nohzBalancerKick(busy)

	pass := s.lbCost(s.cpus[1].domains()[0])
	visit := s.k.Get(knob.LBCPUNS)
	start := s.now + s.k.Get(knob.IPINS) + s.exitLatency(ilb)
	// CPUs 1 and 3 are visited and balanced, then CPU 0 itself.
	want := start + 2*visit + 3*pass
	if s.lb.nohzKicks != 1 || ilb.balanceUntil != want || s.lb.ilbNS != want-start {
		t.Fatalf("kicks %d, ILB busy until %d (want %d), ILB time %d", s.lb.nohzKicks, ilb.balanceUntil, want, s.lb.ilbNS)
	}
	if busy.segStart != segStart {
		t.Fatalf("the kicking CPU was charged %d ns", busy.segStart-segStart)
	}
	if s.cpus[1].nr != 1 {
		t.Fatalf("CPU 1 has %d tasks, want the waiting hog pulled there", s.cpus[1].nr)
	}
	slot := 2*s.topo.NCPU + 1
	if got, min := s.q.whenOf(slot), start+visit+pass; !s.q.queued(slot) || got < min {
		t.Fatalf("CPU 1 kicked at %d, before the ILB finished its pass at %d", got, min)
	}
	if s.nohzNext <= s.now {
		t.Fatalf("nohz.next_balance %d not moved past now %d", s.nohzNext, s.now)
	}
	// A second kick in the same jiffy does nothing.
	s.nohzBalancerKick(busy)
	if s.lb.nohzKicks != 1 {
		t.Fatalf("second kick ran another idle balance")
	}
	// Work switched to on CPU 0 before it finished waits for the rest.
	if left := s.takeBalanceLeft(ilb); left != want-s.now {
		t.Fatalf("balance left on the ILB %d, want %d", left, want-s.now)
	}
}

// sg_imbalanced: a pass that could not reach balance because tasks are
// pinned (LBF_SOME_PINNED with imbalance left) marks the parent level's
// group as group_imbalanced; a pass of any CPU of that group that finds
// its level balanced clears the mark.
func TestSomePinnedMarksParentGroupImbalanced(t *testing.T) {
	// LLC 0 = CPUs 0,1 and LLC 1 = CPUs 2,3 (MC level), one DIE.
	s, _ := lbSetup(t, smallSpec(1, 4, 1, 2, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	cool(s, 0)
	for _, p := range s.cpus[0].tree {
		p.allowed = cpumask.Of(s.topo.NCPU, 0, 2)
	}
	flag := s.sgImbalance(machine.LevelDIE, 0)
	if moved := balanceOnce(t, s, 1, machine.LevelMC, cpuIdle); moved != 0 {
		t.Fatalf("moved %d tasks pinned away from CPU 1", moved)
	}
	if !*flag {
		t.Fatal("LLC 0 not marked imbalanced at DIE level after a pinned MC pass")
	}
	die := s.cpus[2].domains()[level(t, s, 2, machine.LevelDIE)]
	if g := s.groupClassify(die, &sgStats{group: die.Groups[0]}); g != groupImbalanced {
		t.Fatalf("LLC 0 classified %d at DIE level, want group_imbalanced", g)
	}
	balanceOnce(t, s, 0, machine.LevelMC, cpuNotIdle) // CPU 0 is the busiest: balanced
	if *flag {
		t.Fatal("a balanced MC pass in LLC 0 left the mark set")
	}
}

// A load_balance pass allocates nothing once its scratch space exists.
func TestLoadBalancePassDoesNotAllocate(t *testing.T) {
	s, _ := lbSetup(t, smallSpec(2, 4, 2, 4, machine.Interleaved), []lbHog{{cpu: 0}, {cpu: 0}, {cpu: 0}})
	c := s.cpus[1]
	for _, p := range s.cpus[0].tree {
		p.execStart = s.now // hot: examined, never moved
	}
	s.stats.lbCalls = 0
	allocs := testing.AllocsPerRun(50, func() {
		for di := range c.domains() {
			cont := true
			if moved, _ := s.loadBalance(c, di, cpuIdle, &cont, c, s.now); moved != 0 {
				t.Fatal("a hot task moved")
			}
			c.doms[di].nrBalanceFailed = 0
		}
	})
	if allocs != 0 || s.stats.lbCalls == 0 {
		t.Fatalf("%v allocations per round of %d passes", allocs, len(c.domains()))
	}
}

// find_new_ilb takes the first CPU of nohz.idle_cpus_mask that is idle,
// and _nohz_idle_balance walks only that mask: an idle CPU whose governor
// kept its tick (not in the mask: it balances itself at that tick) is
// neither kicked nor walked. With no CPU in the mask (nohz.nr_cpus == 0)
// nothing is kicked and nohz.next_balance stays; with only CPUs that are
// busy again (their bit stays until their first busy tick), the jiffy's
// kick is used up (next_balance++) but no IPI goes out.
func TestNohzILBIsFirstTickStoppedCPU(t *testing.T) {
	s, _ := lbSetup(t, withStates(smallSpec(1, 4, 1, 4, machine.Interleaved)), []lbHog{{cpu: 2}, {cpu: 2}})
	cool(s, 2)
	s.k.Set("LB_PERIODIC", "true")
	busy := s.cpus[2]
	busy.nextBalance = s.now + Second
	for _, id := range []int{0, 1, 3} {
		if !s.cpus[id].nohzIdle {
			t.Fatalf("idle CPU %d with its tick stopped is not in nohz.idle_cpus_mask", id)
		}
	}
	// CPUs 0 and 1 idle with their ticks kept: out of the mask. CPU 3
	// stopped its tick and has woken since (its bit stays until its first
	// busy tick): nr_cpus is 1, so the kick is due and uses up the jiffy,
	// but no CPU of the mask is idle and no IPI goes out.
	s.nohzExitIdle(s.cpus[0])
	s.nohzExitIdle(s.cpus[1])
	s.cpus[3].nr = 1
	s.nohzNext = 0
	s.nohzBalancerKick(busy)
	s.cpus[3].nr = 0
	if s.lb.nohzKicks != 0 || s.nohzNext != s.tickNS || s.cpus[0].balanceUntil > s.now {
		t.Fatalf("busy CPU in the mask: kicks %d, next_balance %d: want no kick, next_balance %d", s.lb.nohzKicks, s.nohzNext, s.tickNS)
	}
	// Its busy tick takes it out; with the mask empty nothing is kicked
	// and nohz.next_balance stays.
	s.nohzBalancerKick(s.cpus[3])
	s.nohzNext = 0
	s.nohzBalancerKick(busy)
	if s.cpus[3].nohzIdle || s.nohzNrCPUs != 0 || s.lb.nohzKicks != 0 || s.nohzNext != 0 {
		t.Fatalf("empty mask: CPU 3 in it %v, nr_cpus %d, kicks %d, next_balance %d: want none, no kick",
			s.cpus[3].nohzIdle, s.nohzNrCPUs, s.lb.nohzKicks, s.nohzNext)
	}
	// CPUs 1 and 3 stop their ticks, CPU 0 still keeps its own: CPU 1 is
	// kicked, not CPU 0, and walks only CPU 3.
	s.nohzEnterIdle(s.cpus[1])
	s.nohzEnterIdle(s.cpus[3])
	s.nohzBalancerKick(busy)
	ilb := s.cpus[1]
	pass := s.lbCost(s.cpus[1].domains()[0])
	visit := s.k.Get(knob.LBCPUNS)
	start := s.now + s.k.Get(knob.IPINS) + s.exitLatency(ilb)
	want := start + visit + 2*pass // CPU 3, then CPU 1 for itself
	if s.lb.nohzKicks != 1 || ilb.balanceUntil != want || s.cpus[0].balanceUntil > s.now {
		t.Fatalf("kicks %d, CPU 1 busy until %d (want %d), CPU 0 busy until %d (want it not kicked)",
			s.lb.nohzKicks, ilb.balanceUntil, want, s.cpus[0].balanceUntil)
	}
}
