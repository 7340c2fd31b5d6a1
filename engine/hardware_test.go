package engine

import (
	"testing"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Tests of the hardware layer under the scheduler (issue "Fidelity II"):
// idle states, the wakeup race of v5.2's ttwu, pinned wakeups, cache-line
// prices and the cache refill of a migration.

// withStates is smallSpec with x86-like idle states: POLL, C1 (declared
// 1/2 µs, measured 1 µs) and a core C6 that firmware declares at 400 µs
// but that takes 20 µs to leave, as AMD's C2.
func withStates(spec *machine.Spec) *machine.Spec {
	spec.IdleStates = []machine.IdleState{
		{Name: "POLL", Polling: true},
		{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 2, MeasuredExitNS: 1000},
		{Name: "C6", ExitLatencyUS: 400, TargetResidencyUS: 800, MeasuredExitNS: 20000, CoreLevel: true},
	}
	return spec
}

// pingPong returns two programs that pass a token back and forth, each
// burning work ns before passing it on.
func pingPong(work int64) (a, b *pingTask) {
	a, b = &pingTask{work: work, start: true}, &pingTask{work: work}
	a.peer, b.peer = b, a
	return a, b
}

type pingTask struct {
	id    TaskID
	peer  *pingTask
	work  int64
	start bool
	has   bool // holds the token
	state int
}

func (p *pingTask) Next(ctx *Ctx) Action {
	for {
		switch p.state {
		case 0: // wait for the token
			if p.start {
				p.start, p.has = false, true
			}
			if !p.has {
				return Block()
			}
			p.state = 1
			return Run(p.work)
		case 1: // pass it on
			p.has = false
			p.peer.has = true
			p.state = 0
			if ctx.IsBlocked(p.peer.id) {
				return Wake(p.peer.id, true)
			}
		}
	}
}

func spawnPing(t *testing.T, s *Sim, cpuA, cpuB int, work int64) {
	t.Helper()
	w := s.AddWorkload("ping", "test")
	a, b := pingPong(work)
	b.id = spawnOn(t, s, w, "pong", cpuB, 0, b).ID
	a.id = spawnOn(t, s, w, "ping", cpuA, 0, a).ID
}

// A CPU that has been quiet sits in the deepest state; once short idle
// periods start, menu learns them (the measured period excludes the
// declared exit or, shorter than twice it, is halved) and the CPUs of a
// ping-pong use C1: wakeups then pay C1's 1 µs, not C6's 20 µs.
func TestGovernorLeavesDeepStateForShortIdle(t *testing.T) {
	s := newSim(t, withStates(smallSpec(1, 4, 2, 4, "interleaved")), 1)
	if st := s.IdleState(3); s.idleStates[st].Name != "C6" {
		t.Fatalf("a quiet CPU is in %s, want C6", s.idleStates[st].Name)
	}
	spawnPing(t, s, 0, 1, 5*Microsecond)
	s.RunUntil(20 * Millisecond)
	h := s.Hardware()
	c1, c6 := h.IdleStates[1].Entries, h.IdleStates[2].Entries
	if c1 < 10*c6 {
		t.Fatalf("C1 chosen %d times, C6 %d: the governor should have learnt the short periods", c1, c6)
	}
	lat := s.workloads[0].wakeLat.Summarize()
	if lat.P50 >= 20 {
		t.Fatalf("ping-pong wakeup p50 %d µs: wakeups still pay C6's exit", lat.P50)
	}
}

// A wakeup aimed at a polling idle CPU sets its need_resched flag (the
// line moves to it) and sends no IPI; the same CPU in C1 needs an IPI
// and pays C1's exit (ttwu_queue / set_nr_if_polling).
func TestPollingCPUNeedsNoIPI(t *testing.T) {
	var kicks [2]int64
	for i, gov := range []string{"none", "menu"} {
		spec := withStates(smallSpec(1, 4, 1, 4, "interleaved"))
		if gov == "menu" {
			spec.IdleStates[0].Disabled = true // no POLL: C1 is the shallowest
		}
		s := newSim(t, spec, 1, "cpuidle_governor", "none")
		p := sleeper(s, "p", 1)
		p.nrAllowed = 1
		p.allowed = cpumaskOf(s, 1)
		s.actor = 0
		d := s.class.selectTaskRq(p, 0, s.cpus[0].idleTask, false)
		s.claimWake(s.cpus[d.Chosen])
		waker := s.ttwuQueue(p, s.cpus[1], 0, s.now, 0)
		kicks[i] = s.q.whenOf(2*s.topo.NCPU + 1)
		h := s.Hardware()
		if i == 0 {
			if h.IPIsSent != 0 || h.PollWakeups != 1 || waker != s.k.Get(knob.EnqueueNS)+s.lineXfer(0, 1) {
				t.Fatalf("polling target: %d IPIs, %d poll wakeups, waker paid %d", h.IPIsSent, h.PollWakeups, waker)
			}
		} else if h.IPIsSent != 1 || waker != s.k.Get(knob.EnqueueNS)+s.lineXfer(0, 1)+s.k.Get(knob.IPISendNS) {
			t.Fatalf("C1 target: %d IPIs, waker paid %d", h.IPIsSent, waker)
		}
	}
	d := knob.Defaults()
	// The poller sees its flag's line arrive; the C1 CPU waits for the
	// IPI to be sent and delivered and then leaves C1 (measured 1 µs).
	if got, want := kicks[1]-kicks[0], d.Get(knob.IPISendNS)+d.Get(knob.IPINS)+1000-d.Get(knob.LineLLCNS); got != want {
		t.Fatalf("C1 target runs %d ns after the polling one, want %d", got, want)
	}
}

// A CPU in an MWAIT state waits with TIF_POLLING_NRFLAG set
// (mwait_idle_with_hints' current_set_polling_and_test), so the waker's
// set_nr_and_not_polling sends no IPI: the CPU leaves C1 when the flag's
// line reaches it. The same C1 entered with HLT needs the IPI.
func TestMWAITIdleNeedsNoIPI(t *testing.T) {
	var kicks [2]int64
	for i, entry := range []string{machine.EntryMWAIT, machine.EntryHLT} {
		spec := withStates(smallSpec(1, 4, 1, 4, "interleaved"))
		spec.IdleStates[0].Disabled = true // no POLL: C1 is the shallowest
		spec.IdleStates[1].Entry = entry
		s := newSim(t, spec, 1, "cpuidle_governor", "none")
		if st := s.idleStates[s.cpus[1].cstate].Name; st != "C1" {
			t.Fatalf("target in %s, want C1", st)
		}
		p := sleeper(s, "p", 1)
		p.nrAllowed = 1
		p.allowed = cpumaskOf(s, 1)
		s.actor = 0
		s.claimWake(s.cpus[1])
		waker := s.ttwuQueue(p, s.cpus[1], 0, s.now, 0)
		kicks[i] = s.q.whenOf(2*s.topo.NCPU + 1)
		h := s.Hardware()
		base := s.k.Get(knob.EnqueueNS) + s.lineXfer(0, 1)
		if entry == machine.EntryMWAIT {
			if h.IPIsSent != 0 || h.PollWakeups != 1 || waker != base {
				t.Fatalf("MWAIT target: %d IPIs, %d woken by the store, waker paid %d (want 0, 1, %d)", h.IPIsSent, h.PollWakeups, waker, base)
			}
		} else if h.IPIsSent != 1 || h.PollWakeups != 0 || waker != base+s.k.Get(knob.IPISendNS) {
			t.Fatalf("HLT target: %d IPIs, %d woken by the store, waker paid %d", h.IPIsSent, h.PollWakeups, waker)
		}
	}
	d := knob.Defaults()
	// Both pay C1's measured exit (1 µs); only HLT waits for the IPI.
	if got, want := kicks[1]-kicks[0], d.Get(knob.IPISendNS)+d.Get(knob.IPINS)-d.Get(knob.LineLLCNS); got != want {
		t.Fatalf("HLT target runs %d ns after the MWAIT one, want %d", got, want)
	}
}

// A core-level state is the core's, and the core is only as deep as its
// shallowest thread: a thread that asked for C6 while its sibling sits in
// C1 leaves at C1's price, and at C6's only when the sibling is in C6 too;
// a running or polling sibling keeps the core awake.
func TestCoreExitIsTheShallowestSiblings(t *testing.T) {
	s := newSim(t, withStates(smallSpec(1, 2, 2, 2, "interleaved")), 1, "cpuidle_governor", "none")
	c := s.cpus[0]
	var sib *cpu
	for _, id := range s.topo.CoreCPUs[c.core] {
		if id != c.id {
			sib = s.cpus[id]
		}
	}
	c.cstate = 2 // C6
	for _, tc := range []struct {
		sibState int
		want     int64
	}{{2, 20000}, {1, 1000}, {0, 1000}} {
		sib.cstate = tc.sibState
		if got := s.exitLatency(c); got != tc.want {
			t.Errorf("sibling in %s: C6 exit %d ns, want %d", s.idleStates[tc.sibState].Name, got, tc.want)
		}
	}
	sib.cstate = 2
	sib.curr = &Task{}
	if got := s.exitLatency(c); got != 1000 {
		t.Errorf("sibling running: C6 exit %d ns, want C1's 1000", got)
	}
	sib.curr = nil
}

// Once the waker reaches ttwu_queue (claimWake), the chosen CPU is non-idle
// to every other searcher: a same-LLC waker because it is about to lock
// that runqueue and enqueue, a cross-LLC one because the task sits on the
// CPU's wake_list (idle_cpu() checks it) until the IPI arrives.
func TestWakeupClaimsChosenCPU(t *testing.T) {
	// 4 cores, LLCs of 2: CPUs 0-1 and 2-3.
	s := newSim(t, smallSpec(1, 4, 1, 2, "interleaved"), 1)
	s.actor = 0
	// Same LLC: waker on 0, wakee last ran on 1.
	p := sleeper(s, "p", 1)
	d := s.class.selectTaskRq(p, 0, s.cpus[0].idleTask, false)
	if d.Chosen != 1 {
		t.Fatalf("p placed on %d, want its idle prev 1", d.Chosen)
	}
	s.claimWake(s.cpus[1])
	if s.cpus[1].idle() {
		t.Fatal("CPU 1 still looks idle once the waker is at ttwu_queue")
	}
	q := sleeper(s, "q", 1)
	if d := s.class.selectTaskRq(q, 0, s.cpus[0].idleTask, false); d.Chosen == 1 {
		t.Fatalf("a second waker also chose CPU 1 (stage %s)", d.Stage)
	}
	s.ttwuQueue(p, s.cpus[1], 0, s.now, 0)
	if s.cpus[1].nr != 1 || s.cpus[1].wakePending != 0 {
		t.Fatalf("same-LLC wakeup: nr %d pending %d, want enqueued by the waker", s.cpus[1].nr, s.cpus[1].wakePending)
	}

	// Cross LLC: wakee last ran on 3.
	r := sleeper(s, "r", 3)
	d = s.class.selectTaskRq(r, 0, s.cpus[0].idleTask, false)
	if d.Chosen != 3 {
		t.Fatalf("r placed on %d, want its idle prev 3", d.Chosen)
	}
	s.claimWake(s.cpus[3])
	s.ttwuQueue(r, s.cpus[3], 0, s.now, 0)
	c := s.cpus[3]
	if c.idle() || c.nr != 0 || len(c.wakeList) != 1 {
		t.Fatalf("cross-LLC wakeup: idle %v nr %d wake_list %d, want queued on the wake_list and not idle", c.idle(), c.nr, len(c.wakeList))
	}
	x := sleeper(s, "x", 3)
	x2 := sleeper(s, "x2", 3)
	for _, w := range []*Task{x, x2} {
		if d := s.class.selectTaskRq(w, 0, s.cpus[0].idleTask, false); d.Chosen == 3 {
			t.Fatalf("%s also chose CPU 3 while its wake_list is not empty", w.Name)
		}
	}
	s.RunUntil(s.now + 100*Microsecond)
	if r.state != TaskRunning || r.cpu != 3 || len(c.wakeList) != 0 {
		t.Fatalf("after the IPI r is %s on %d (wake_list %d), want running on 3", r.state, r.cpu, len(c.wakeList))
	}
	h := s.Hardware()
	if h.QueuedWakeups != 1 || h.IPIsSent != 2 {
		t.Fatalf("%d queued wakeups, %d IPIs; want 1 and 2 (one per idle target)", h.QueuedWakeups, h.IPIsSent)
	}
}

// Two wakers whose decisions fall within each other's window (the search
// and the rest of try_to_wake_up before ttwu_queue) both see the wakees'
// idle prev CPU as idle, choose it, and stack there: idle_cpu() does not
// change until the first one enqueues.
func TestWakersWithinTheWindowStack(t *testing.T) {
	s := newSim(t, smallSpec(1, 4, 1, 4, "interleaved"), 1)
	p, q := sleeper(s, "p", 3), sleeper(s, "q", 3)
	w := s.AddWorkload("wakers", "test")
	for i, wakee := range []*Task{p, q} {
		woke := false
		spawnOn(t, s, w, "waker", i, 0, ProgramFunc(func(*Ctx) Action {
			if woke {
				return Block()
			}
			woke = true
			return Wake(wakee.ID, false)
		}))
	}
	s.RunUntil(50 * Microsecond)
	h := s.Hardware()
	if p.cpu != 3 || q.cpu != 3 || h.StackedWakeups != 1 {
		t.Fatalf("wakees on CPUs %d and %d, %d stacked; want both on their idle prev 3, one stacked", p.cpu, q.cpu, h.StackedWakeups)
	}
}

// A second wakeup queued on a wake_list that is not empty yet rides on
// the IPI the first one sent (ttwu_queue_remote sends it only when
// llist_add finds the list empty).
func TestWakeListSharesOneIPI(t *testing.T) {
	s := newSim(t, smallSpec(1, 4, 1, 2, "interleaved"), 1)
	s.actor = 0
	for _, name := range []string{"a", "b"} {
		p := sleeper(s, name, 3)
		p.nrAllowed, p.allowed = 1, cpumaskOf(s, 3)
		s.claimWake(s.cpus[3])
		s.ttwuQueue(p, s.cpus[3], 0, s.now, 0)
	}
	h := s.Hardware()
	if h.IPIsSent != 1 || h.IPIsSaved != 1 {
		t.Fatalf("%d IPIs sent, %d saved; want 1 and 1", h.IPIsSent, h.IPIsSaved)
	}
	s.RunUntil(s.now + 100*Microsecond)
	if s.cpus[3].nr != 2 {
		t.Fatalf("CPU 3 has %d tasks after the IPI, want both", s.cpus[3].nr)
	}
}

// select_task_rq calls the fair class only when p->nr_cpus_allowed > 1:
// a pinned wakee leaves wakee_flips, recent_used_cpu, has_idle_cores and
// avg_scan_cost alone and is not a select_task_rq_fair decision.
func TestPinnedWakeupSkipsSelectTaskRqFair(t *testing.T) {
	s := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1)
	waker := s.cpus[0].idleTask
	p := sleeper(s, "p", 2)
	p.allowed = cpumaskOf(s, 2)
	p.nrAllowed = 1
	s.cpus[2].curr = waker // make CPU 2 busy so a search would have to run
	flips, recent, scan := waker.wakeeFlips, waker.recentUsedCPU, s.cpus[0].avgScanCost
	s.llcs[0].hasIdleCores = true
	d := s.class.selectTaskRq(p, 0, waker, false)
	s.cpus[2].curr = nil
	if d.Chosen != 2 || d.Stage != StagePinned || len(d.Probes) != 0 {
		t.Fatalf("pinned wakee: chosen %d stage %s probes %v", d.Chosen, d.Stage, d.Probes)
	}
	if waker.wakeeFlips != flips || waker.recentUsedCPU != recent || s.cpus[0].avgScanCost != scan || !s.llcs[0].hasIdleCores {
		t.Fatal("a pinned wakeup changed the fair class's wakeup state")
	}
	if st := s.Search(); st.Wakeups != 0 || s.Hardware().PinnedWakeups != 1 {
		t.Fatalf("%d fair decisions and %d pinned wakeups, want 0 and 1", st.Wakeups, s.Hardware().PinnedWakeups)
	}
}

// Reading another CPU's runqueue line costs a transfer priced by distance
// when its owner wrote it since; a clean line in the same LLC is an LLC
// hit; a reader that arrives while the line is being fetched waits.
func TestProbeCostByDistanceAndContention(t *testing.T) {
	s := newSim(t, intelSpec(), 1)
	llc, xs, hit := s.k.Get(knob.LineLLCNS), s.k.Get(knob.LineCrossSocketNS), s.k.Get(knob.L3HitNS)
	c1, c22 := s.cpus[1], s.cpus[22]
	s.writeLine(1, c1, 0)
	s.writeLine(22, c22, 0)
	if got := s.readLine(0, c1, 0); got != llc {
		t.Fatalf("dirty line in the LLC costs %d, want line_llc_ns %d", got, llc)
	}
	if got := s.readLine(0, c22, 0); got != xs {
		t.Fatalf("dirty line on the other socket costs %d, want line_cross_socket_ns %d", got, xs)
	}
	if got := s.readLine(2, c1, 10*Microsecond); got != hit {
		t.Fatalf("clean line read again in the LLC costs %d, want an LLC hit %d", got, hit)
	}
	// Contention: the owner rewrites it; two readers want it at once.
	s.writeLine(1, c1, 20*Microsecond)
	first := s.readLine(0, c1, 20*Microsecond)
	second := s.readLine(2, c1, 20*Microsecond)
	if first != llc || second != llc+hit {
		t.Fatalf("concurrent readers pay %d and %d, want %d and the wait plus a hit %d", first, second, llc, llc+hit)
	}
}

// A migrated task owes its cache refill once, priced by the cache model
// from its working set: within the LLC the core-private part from the LLC,
// across sockets its cached working set from the other socket.
func TestMigrationRefillOnce(t *testing.T) {
	s := newSim(t, intelSpec(), 1)
	p := sleeper(s, "p", 0)
	p.wssKB = 64
	p.lastRanCPU = 0
	refill := func(cpu int) int64 {
		before := p.penaltyLeft
		c := s.cpus[cpu]
		s.setCurr(c, p)
		c.curr = nil
		return p.penaltyLeft - before
	}
	lines := int64(64 * 1024 / 64)
	if got, want := refill(1), lines*s.k.Get(knob.L3HitNS)/refillMLP; got != want {
		t.Fatalf("same-LLC move owes %d, want %d", got, want)
	}
	if got := refill(1); got != 0 {
		t.Fatalf("running again where it ran owes %d, want 0", got)
	}
	if got, want := refill(22), lines*s.k.Get(knob.LineCrossSocketNS)/refillMLP; got != want {
		t.Fatalf("cross-socket move owes %d, want %d", got, want)
	}
	if got := refill(66); got != 0 {
		t.Fatalf("move to the SMT sibling owes %d, want 0", got)
	}
	if s.Hardware().CacheRefillUS.CrossSocket == 0 {
		t.Fatal("the refill is not counted")
	}
}

// From v6.0 ttwu_queue_cond also uses the wake list for a same-LLC target
// with nothing on its runqueue: in era 6.6 (and 6.1) a wakeup of an idle
// CPU in the waker's LLC is queued there and enqueued by the target after
// the IPI; v5.2 enqueues it from the waker at once.
func TestSameLLCIdleTargetUsesWakeList(t *testing.T) {
	for _, c := range []struct {
		era    string
		queued bool
	}{{"5.2", false}, {"6.6", true}, {"6.1", true}} {
		s := newSim(t, smallSpec(1, 4, 1, 4, "interleaved"), 1, "era", c.era)
		s.actor = 0
		p := sleeper(s, "p", 3)
		p.nrAllowed, p.allowed = 1, cpumaskOf(s, 3)
		s.claimWake(s.cpus[3])
		s.ttwuQueue(p, s.cpus[3], 0, s.now, 0)
		h := s.Hardware()
		if queued := h.QueuedWakeups == 1 && s.cpus[3].nr == 0 && len(s.cpus[3].wakeList) == 1; queued != c.queued {
			t.Fatalf("era %s: idle same-LLC target: %d queued wakeups, nr %d, wake_list %d; want queued %v",
				c.era, h.QueuedWakeups, s.cpus[3].nr, len(s.cpus[3].wakeList), c.queued)
		}
		s.RunUntil(s.now + 100*Microsecond)
		if p.state != TaskRunning || p.cpu != 3 {
			t.Fatalf("era %s: p is %s on %d, want running on 3", c.era, p.state, p.cpu)
		}
	}
}
