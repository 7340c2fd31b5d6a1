package engine

import (
	"testing"

	"schedplay/engine/knob"
)

// The shard lock's cost model (sharedrunq.go): an uncontended hold that
// fetches the shard line from another core costs srq_lock_ns; one whose
// line never left this core saves that transfer (srq_lock_ns − line_llc_ns);
// a hold during which another CPU waits grows by one transfer per later
// write of the line (2 for a push or pop) — once, however many wait — and
// waiters queue FIFO behind every hold ahead of them.
func TestSharedRunqLockCostGrowsWithContention(t *testing.T) {
	s := newSim(t, smallSpec(1, 8, 1, 8, "interleaved"), 1, "SHARED_RUNQ", "all", "shard_size", "8")
	L, T := s.k.Get(knob.SRQLockNS), s.k.Get(knob.LineLLCNS)
	sh := &s.srqShards(0)[0]

	// Three CPUs at the same instant: A holds, B and C queue.
	if got := s.srqLock(sh, 0, 2); got != L {
		t.Fatalf("first acquisition costs %d, want srq_lock_ns %d", got, L)
	}
	if got := s.srqLock(sh, 1, 2); got != (L+2*T)+L {
		t.Fatalf("second CPU pays %d, want A's hold grown by 2 transfers (%d) plus its own %d", got, L+2*T, L)
	}
	if got := s.srqLock(sh, 2, 2); got != 2*(L+2*T)+L {
		t.Fatalf("third CPU pays %d, want two contended holds %d plus its own %d", got, 2*(L+2*T), L)
	}
	st := s.SharedRunq()
	if st.ContendedHolds != 2 {
		t.Fatalf("%d contended holds, want 2 (A's and B's; each counted once)", st.ContendedHolds)
	}
	if st.LockWaitNS != (L+2*T)+2*(L+2*T) {
		t.Fatalf("lock wait %d, want %d", st.LockWaitNS, 3*(L+2*T))
	}

	// Later, alone: CPU 2 wrote the line last and nobody touched it since.
	s.now += 100 * Microsecond
	if got := s.srqLock(sh, 2, 2); got != L-T {
		t.Fatalf("re-acquisition with the line still in this core costs %d, want %d", got, L-T)
	}
	// An unlocked peek by another CPU costs it one transfer and leaves a
	// copy there, so the next acquisition must fetch the line again.
	s.now += 100 * Microsecond
	if got := s.srqPeek(sh, 5); got != T {
		t.Fatalf("peek by another core costs %d, want one transfer %d", got, T)
	}
	if got := s.srqPeek(sh, 5); got != 0 {
		t.Fatalf("second peek costs %d, want 0 (the line is cached)", got)
	}
	if got := s.srqLock(sh, 2, 2); got != L {
		t.Fatalf("acquisition after another core read the line costs %d, want %d", got, L)
	}
}

// sleeper is a task that last ran on prev and is blocked, made the way the
// scenario harness makes them.
func sleeper(s *Sim, name string, prev int) *Task {
	tk := &Task{ID: TaskID(len(s.tasks)), Name: name, weight: 1024, allowed: s.topo.All.Clone(), smtPressure: 1024,
		state: TaskBlocked, cpu: prev, wokenAt: -1, lastRanCPU: prev, recentUsedCPU: -1, lastWakee: -1, srqShard: -1,
		loadCPU: -1, mm: s.NewAddressSpace(), prog: hog()}
	tk.workload = int(s.AddWorkload(name, "test"))
	s.tasks = append(s.tasks, tk)
	s.growSlots()
	return tk
}

// v3 pulls from the shared runqueue whatever the overload state, so a CPU
// going idle steals the head of its shard even when that task was just
// woken onto an idle CPU that is about to run it. SRQ_OVERLOAD (K Prateek
// Nayak) pulls only while the root domain is overloaded and only from
// shards whose overload flag is set: here it leaves p to its own CPU and
// takes q, which waits behind a running task.
func TestSharedRunqOverloadGate(t *testing.T) {
	for _, gate := range []bool{false, true} {
		s := newSim(t, smallSpec(1, 8, 1, 8, "interleaved"), 1, "SHARED_RUNQ", "all", "shard_size", "4",
			"LB_PERIODIC", "false", "LB_NEWIDLE", "false", "SRQ_OVERLOAD", map[bool]string{false: "false", true: "true"}[gate])
		w := s.AddWorkload("busy", "busy")
		// CPU 2 (shard 1) runs a pinned hog.
		spawnOn(t, s, w, "hog2", 2, 0, hog())
		s.RunUntil(Millisecond)
		// q is woken onto busy CPU 2: it waits there, listed in shard 1.
		q := sleeper(s, "q", 2)
		s.activate(q, s.cpus[2], 2, s.now)
		// p is woken onto idle CPU 0 (shard 0), which has not run it yet.
		p := sleeper(s, "p", 0)
		s.activate(p, s.cpus[0], 0, s.now)
		if p.srqShard != 0 || q.srqShard != 1 {
			t.Fatalf("p on shard %d, q on shard %d, want 0 and 1", p.srqShard, q.srqShard)
		}
		// CPU 1 (shard 0) goes idle now.
		s.schedule(s.cpus[1])
		got, other := p, q
		if gate {
			got, other = q, p
		}
		if got.cpu != 1 || got.state != TaskRunning {
			t.Fatalf("SRQ_OVERLOAD=%t: %s is %s on CPU %d, want running on CPU 1", gate, got.Name, got.state, got.cpu)
		}
		if other.cpu == 1 {
			t.Fatalf("SRQ_OVERLOAD=%t: %s was pulled too", gate, other.Name)
		}
	}
}

// SRQ_LLC_SHARD: one shard per LLC whatever shard_size says.
func TestSharedRunqLLCShard(t *testing.T) {
	s := newSim(t, smallSpec(1, 16, 1, 16, "interleaved"), 1, "SHARED_RUNQ", "all")
	if n := len(s.srqShards(0)); n != 3 {
		t.Fatalf("16-CPU LLC with shard_size 6: %d shards, want 3", n)
	}
	s = newSim(t, smallSpec(1, 16, 1, 16, "interleaved"), 1, "SHARED_RUNQ", "all", "SRQ_LLC_SHARD", "true")
	if n := len(s.srqShards(0)); n != 1 {
		t.Fatalf("SRQ_LLC_SHARD: %d shards, want 1", n)
	}
}
