package workload

import (
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The rt-app events and keys of rt-app's current grammar beyond the
// first subset: sem_post/sem_wait, fork, yield, per-phase "cpus" and
// "dl-runtime" (doc/tutorial.txt; src/rt-app.c, src/rt-app_parse_config.c).

// rtEraSim is rtSim with era set.
func rtEraSim(t testing.TB, tp *machine.Topology, era string) *engine.Sim {
	t.Helper()
	k := knob.Defaults()
	if err := k.Set("era", era); err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(engine.Config{Machine: tp, Knobs: k, Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A semaphore remembers its posts (initial count 0): three posts made
// before the waiter arrives let three sem_waits through without
// blocking, and a fourth blocks; a wait made first blocks until the post.
func TestRTAppSemaphoreCounts(t *testing.T) {
	for _, c := range []struct {
		waits  string
		exited bool
	}{
		{`"sem_wait": "s", "sem_wait1": "s", "sem_wait2": "s"`, true},
		{`"sem_wait": "s", "sem_wait1": "s", "sem_wait2": "s", "sem_wait3": "s"`, false},
	} {
		s := rtSim(t, rtFourCPUs(t), true)
		w := buildRT(t, s, `{"tasks": {
			"poster": {"loop": 1, "sem_post": "s", "sem_post1": "s", "sem_post2": "s", "run": 10},
			"waiter": {"loop": 1, "delay": 10000, `+c.waits+`, "run": 100}}}`)
		s.RunUntil(50 * engine.Millisecond)
		wt := w.thread(t, "waiter")
		if got := wt.exitedAt >= 0; got != c.exited {
			t.Fatalf("%s: waiter exited %v (at %d), want %v", c.waits, got, wt.exitedAt, c.exited)
		}
		if c.exited && (wt.exitedAt < 10*engine.Millisecond || wt.exitedAt > 11*engine.Millisecond) {
			t.Errorf("waiter exited at %d ns; want just after its 10 ms delay (the posts were remembered)", wt.exitedAt)
		}
	}
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {
		"poster": {"loop": 1, "delay": 5000, "sem_post": "s"},
		"waiter": {"loop": 1, "sem_wait": "s", "run": 100}}}`)
	s.RunUntil(50 * engine.Millisecond)
	if at := w.thread(t, "waiter").exitedAt; at < 5*engine.Millisecond || at > 6*engine.Millisecond {
		t.Errorf("waiter exited at %d ns; want just after the post at 5 ms", at)
	}
}

// fork creates one thread of the named task each time it runs (rt-app's
// tutorial example9): a task with "instance": 0 runs only when forked.
func TestRTAppForkCreatesThreads(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {
		"thread1": {"loop": 2, "run": 1000, "sleep": 1000},
		"thread2": {"instance": 0, "loop": 1, "run": 2000},
		"thread3": {"loop": 1, "phases": {
			"p1": {"fork": "thread1", "run": 1000},
			"p2": {"fork": "thread2", "run": 1000}}}}}`)
	if len(w.threads) != 2 {
		t.Fatalf("%d threads at start, want 2 (thread2 has no instance)", len(w.threads))
	}
	s.RunUntil(100 * engine.Millisecond)
	var names []string
	for _, th := range w.threads {
		names = append(names, th.name)
		if th.exitedAt < 0 {
			t.Errorf("%s has not exited", th.name)
		}
		if th.iters == 0 {
			t.Errorf("%s never completed a loop", th.name)
		}
	}
	if got := strings.Join(names, " "); got != "thread1 thread3 thread1-2-0000 thread2-3-0000" {
		t.Fatalf("threads %q", got)
	}
	if ex := s.Task(w.thread(t, "thread2-3-0000").id).SumExec(); ex < 2*engine.Millisecond {
		t.Errorf("forked thread2 ran %d ns, want its 2 ms", ex)
	}
	if !s.AllFinished() {
		t.Error("the workload is not finished though every thread exited")
	}
}

// A phase's "cpus" is the affinity while it runs; a phase without one
// runs on the task's (rt-app's set_thread_affinity).
func TestRTAppPhaseAffinity(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {"t": {"loop": 2, "cpus": [2, 3], "phases": {
		"p1": {"cpus": [0], "run": 3000},
		"p2": {"cpus": [1], "run": 3000},
		"p3": {"run": 3000}}}}}`)
	id := w.thread(t, "t").id
	var seq []int
	s.SetHooks(engine.Hooks{OnSwitch: func(cpu int, prev, next *engine.Task) {
		if next != nil && next.ID == id && (len(seq) == 0 || seq[len(seq)-1] != cpu) {
			seq = append(seq, cpu)
		}
	}})
	s.RunUntil(100 * engine.Millisecond)
	if len(seq) != 6 || seq[0] != 0 || seq[1] != 1 || seq[2] < 2 || seq[3] != 0 || seq[4] != 1 || seq[5] < 2 {
		t.Fatalf("ran on CPUs %v; want 0, 1, 2 or 3, twice", seq)
	}
	if m := s.Task(id).Migrations(); m != 5 {
		t.Errorf("%d migrations, want 5", m)
	}
}

// yield hands the CPU to the other task of the runqueue when the class
// lets it (CFS: the other is within a wakeup granularity; EEVDF: it is
// eligible). Two threads that each run 100 µs and yield on one CPU take
// turns every 100 µs; without the yield they take turns at the tick or
// the slice's end. (A lone yielder beside a hog changes little: while it
// is behind the hog in vruntime, the class picks it again.) The O(1) era
// refuses yield by name.
func TestRTAppYield(t *testing.T) {
	one := func(era, events string) int {
		s := rtEraSim(t, small(t, 1, 1, 1, 1, machine.Contiguous), era)
		w := buildRT(t, s, `{"tasks": {"y": {"run": 100, `+events+`}, "z": {"run": 100, `+events+`}}}`)
		y := w.thread(t, "y").id
		switches := 0
		s.SetHooks(engine.Hooks{OnSwitch: func(cpu int, prev, next *engine.Task) {
			if prev != nil && prev.ID == y && next != nil {
				switches++
			}
		}})
		s.RunUntil(engine.Second)
		return switches
	}
	for _, era := range []string{"5.2", "6.1", "6.6", "6.12"} {
		with, without := one(era, `"yield": ""`), one(era, `"sleep": 0`)
		t.Logf("era %s: %d switches away from the yielder, %d without the yield", era, with, without)
		if with < 5*without {
			t.Errorf("era %s: %d switches away from the yielder, %d without the yield; want many more with it", era, with, without)
		}
	}
	s := rtEraSim(t, rtFourCPUs(t), "2.6-o1")
	_, err := Add(s, RTAppSpec([]byte(`{"tasks": {"t": {"run": 10, "yield": ""}}}`)), "")
	if err == nil || !strings.Contains(err.Error(), `"yield"`) || !strings.Contains(err.Error(), "sched_yield") {
		t.Errorf("yield on the O(1) era: %v", err)
	}
}

// "dl-runtime" on a SCHED_OTHER task is a custom slice request (rt-app's
// __set_thread_sched_other_attrs: sched_attr.sched_runtime; Linux 6.12's
// __setparam_fair clamps it to 0.1-100 ms); eras before 6.12 refuse it as
// they refuse slice_us.
func TestRTAppCustomSlice(t *testing.T) {
	s := rtEraSim(t, rtFourCPUs(t), "6.12")
	w := buildRT(t, s, `{"tasks": {"a": {"dl-runtime": 3000, "run": 10}, "b": {"dl-runtime": 10, "run": 10}, "c": {"run": 10}}}`)
	for name, want := range map[string]int64{"a": 3 * engine.Millisecond, "b": 100 * engine.Microsecond, "c": 0} {
		if got := s.Task(w.thread(t, name).id).CustomSlice(); got != want {
			t.Errorf("%s: custom slice %d ns, want %d", name, got, want)
		}
	}
	s = rtEraSim(t, rtFourCPUs(t), "6.6")
	_, err := Add(s, RTAppSpec([]byte(`{"tasks": {"a": {"dl-runtime": 3000, "run": 10}}}`)), "")
	if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), "slice") {
		t.Errorf("dl-runtime on era 6.6: %v", err)
	}
}

// A resume of a name that only suspends wait on (rt-app's older
// browser-*.json) wakes them through the named condition and touches no
// thread.
func TestRTAppResumeOfANamedSuspend(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {"a": {"run": 10, "suspend": "X"}, "b": {"run": 10, "sleep": 1000, "resume": "X"}}}`)
	s.RunUntil(20 * engine.Millisecond)
	if n := w.thread(t, "a").iters; n < 10 {
		t.Errorf("the suspended thread made %d loops in 20 ms, want about 20", n)
	}
}
