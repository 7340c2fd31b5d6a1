package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// rtSim is a simulation of tp with default knobs.
func rtSim(t testing.TB, tp *machine.Topology, debug bool) *engine.Sim {
	t.Helper()
	s, err := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: 1, Debug: debug})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildRT parses js and builds it into s directly, returning the shared
// state so tests can read each thread's loop count.
func buildRT(t testing.TB, s *engine.Sim, js string) *rtWorld {
	t.Helper()
	app, err := ParseRTApp([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	id := s.AddWorkload("rtapp", "rtapp")
	w, err := app.build(&Builder{Sim: s, ID: id, Pressure: 1024})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *rtWorld) thread(t testing.TB, name string) *rtThread {
	t.Helper()
	for _, th := range w.threads {
		if th.name == name {
			return th
		}
	}
	t.Fatalf("no thread %q", name)
	return nil
}

// runToFinish steps s until every finite workload finished or limit.
func rtRunToFinish(t testing.TB, s *engine.Sim, limit int64) {
	t.Helper()
	for !s.AllFinished() {
		if next := s.NextEventTime(); next < 0 || next > limit {
			t.Fatalf("not finished by %d ms (next event %d)", limit/engine.Millisecond, next)
		}
		s.Step()
	}
}

func readRTTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "rtapp", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rtOneCPU(t testing.TB) *machine.Topology   { return small(t, 1, 1, 1, 1, machine.Contiguous) }
func rtFourCPUs(t testing.TB) *machine.Topology { return small(t, 1, 4, 1, 4, machine.Contiguous) }

func rtWithin(t testing.TB, what string, got, lo, hi int64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %d, want %d..%d", what, got, lo, hi)
	}
}

// rtStripLines clears the line numbers (a compacted spec is one line).
func rtStripLines(app *RTApp) *RTApp {
	c := *app
	c.Tasks = append([]RTAppTask(nil), app.Tasks...)
	for i := range c.Tasks {
		c.Tasks[i].line = 0
		c.Tasks[i].Phases = append([]RTAppPhase(nil), c.Tasks[i].Phases...)
		for j := range c.Tasks[i].Phases {
			ev := append([]RTAppEvent(nil), c.Tasks[i].Phases[j].Events...)
			for k := range ev {
				ev[k].line = 0
			}
			c.Tasks[i].Phases[j].Events = ev
		}
	}
	return &c
}

// Events keep their file order, duplicate keys included, and so do phases.
func TestRTAppParseKeepsOrder(t *testing.T) {
	app, err := ParseRTApp([]byte(`{"tasks": {"t": {
		"loop": 1, "sleep": 100, "run": 200, "timer": {"ref": "x", "period": 1000, "mode": "absolute"},
		"run": 300, "runtime3": 50, "lock": "m", "unlock": "m", "sync": {"ref": "c", "mutex": "m"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var kinds, keys []string
	var ns []int64
	for _, e := range app.Tasks[0].Phases[0].Events {
		kinds, keys, ns = append(kinds, e.Kind), append(keys, e.Key), append(ns, e.NS)
	}
	if want := []string{"sleep", "run", "timer", "run", "runtime", "lock", "unlock", "sync"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if want := []string{"sleep", "run", "timer", "run", "runtime3", "lock", "unlock", "sync"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if want := []int64{100e3, 200e3, 1000e3, 300e3, 50e3, 0, 0, 0}; !reflect.DeepEqual(ns, want) {
		t.Errorf("durations %v, want %v", ns, want)
	}
	if e := app.Tasks[0].Phases[0].Events[2]; e.Ref != "x" || !e.Absolute {
		t.Errorf("timer %+v", e)
	}
	if app.Tasks[0].Loop != 1 || app.Tasks[0].Phases[0].Loop != 1 {
		t.Errorf("loops %d/%d", app.Tasks[0].Loop, app.Tasks[0].Phases[0].Loop)
	}

	app, err = ParseRTApp([]byte(`{"tasks": {"zz": {"phases": {"z": {"run": 1}, "a": {"loop": 4, "sleep": 1, "run": 2, "sleep2": 3}, "m": {"loop": -1, "run": 2}}},
		"aa": {"run": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if app.Tasks[0].Name != "zz" || app.Tasks[1].Name != "aa" {
		t.Errorf("task order %s, %s", app.Tasks[0].Name, app.Tasks[1].Name)
	}
	var names []string
	var loops []int64
	for _, p := range app.Tasks[0].Phases {
		names, loops = append(names, p.Name), append(loops, p.Loop)
	}
	if !reflect.DeepEqual(names, []string{"z", "a", "m"}) || !reflect.DeepEqual(loops, []int64{1, 4, -1}) {
		t.Errorf("phases %v loops %v", names, loops)
	}
	app2, err := ParseRTApp([]byte(`{"tasks": {"t": {"wait": "c", "run": 1}, "u": {"broad1": "c", "sleep": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e := app2.Tasks[0].Phases[0].Events[0]; e.Kind != "wait" || e.Ref != "c" || e.Mutex != "" {
		t.Errorf("wait given as a string: %+v", e)
	}
	var inPhase []string
	for _, e := range app.Tasks[0].Phases[1].Events {
		inPhase = append(inPhase, e.Key)
	}
	if !reflect.DeepEqual(inPhase, []string{"sleep", "run", "sleep2"}) {
		t.Errorf("events of phase a: %v", inPhase)
	}
	if app.Tasks[0].Loop != -1 || app.Finite() {
		t.Errorf("a task without loop loops forever: loop %d finite %v", app.Tasks[0].Loop, app.Finite())
	}
}

// The events run in file order: b suspends first and is resumed only after
// a's 5 ms sleep, so both end after 6 ms (in key order — resume, run,
// sleep — b would be done after 1 ms).
func TestRTAppEventsRunInFileOrder(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {
		"a": {"loop": 1, "sleep": 5000, "resume": "b", "run": 1000},
		"b": {"loop": 1, "suspend": "", "run": 1000}}}`)
	rtRunToFinish(t, s, 100*engine.Millisecond)
	a, b := w.thread(t, "a"), w.thread(t, "b")
	rtWithin(t, "a exit (µs)", a.exitedAt/1000, 6000, 6500)
	rtWithin(t, "b exit (µs)", b.exitedAt/1000, 6000, 6500)
	if b.exitedAt < a.exitedAt-500*engine.Microsecond {
		t.Errorf("b ended at %d before a resumed it", b.exitedAt)
	}
}

// "instance" makes N threads "name-0".."name-(N-1)"; one instance keeps
// the task's name.
func TestRTAppInstances(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	if _, err := Add(s, RTAppSpec([]byte(`{"tasks": {
		"w": {"instance": 3, "run": 1000, "sleep": 1000},
		"solo": {"run": 1000, "sleep": 3000},
		"none": {"instance": 0, "run": 1000}}}`)), ""); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(50 * engine.Millisecond)
	var names []string
	for i := 0; i < s.NumTasks(); i++ {
		task := s.Task(engine.TaskID(i))
		names = append(names, task.Name)
		if task.SumExec() == 0 {
			t.Errorf("%s never ran", task.Name)
		}
	}
	if want := []string{"w-0", "w-1", "w-2", "solo"}; !reflect.DeepEqual(names, want) {
		t.Errorf("threads %v, want %v", names, want)
	}
	if r := s.Workloads()[0]; r.Tasks != 4 || r.Ops == 0 {
		t.Errorf("workload %+v", r)
	}
}

// Tasks with finite loops run exactly that many loops, exit, and make the
// workload finished; CountOp counts one op per phase loop; "run" burns
// exactly its work.
func TestRTAppLoopCountsAndFinish(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {
		"once": {"loop": 5, "run": 1000, "sleep": 1000},
		"phased": {"loop": 2, "phases": {
			"p0": {"loop": 2, "run": 500},
			"p1": {"loop": 3, "run": 1000, "sleep": 200}}}}}`)
	rtRunToFinish(t, s, engine.Second)
	once, phased := w.thread(t, "once"), w.thread(t, "phased")
	if once.iters != 5 || phased.iters != 10 {
		t.Errorf("loops: once %d (want 5), phased %d (want 2×(2+3) = 10)", once.iters, phased.iters)
	}
	for _, th := range []*rtThread{once, phased} {
		if st := s.Task(th.id).State(); st != engine.TaskExited {
			t.Errorf("%s is %v, want exited", th.name, st)
		}
	}
	r := s.Workloads()[0]
	if r.Ops != 15 || r.DoneAt < 0 || r.DoneAt != max(once.exitedAt, phased.exitedAt) {
		t.Errorf("ops %d (want 15), done at %d (exits %d, %d)", r.Ops, r.DoneAt, once.exitedAt, phased.exitedAt)
	}
	rtWithin(t, "once CPU time (µs)", s.Task(once.id).SumExec()/1000, 5000, 5300)
	rtWithin(t, "phased CPU time (µs)", s.Task(phased.id).SumExec()/1000, 8000, 8300)

	// One task looping forever keeps the workload unfinished.
	s = rtSim(t, rtFourCPUs(t), false)
	buildRT(t, s, `{"tasks": {"once": {"loop": 1, "run": 100}, "forever": {"run": 100, "sleep": 100}}}`)
	s.RunUntil(100 * engine.Millisecond)
	if s.AllFinished() {
		t.Errorf("a workload with an endless task finished")
	}
}

// "run" is work: preempted by a hog on its CPU it takes twice as long but
// burns exactly its work. "runtime" is wall-clock: it ends on time with
// only its fair share of CPU.
func TestRTAppRunIsWorkRuntimeIsWallClock(t *testing.T) {
	s := rtSim(t, rtOneCPU(t), false)
	w := buildRT(t, s, `{"tasks": {"alone": {"loop": 1, "run": 20000}}}`)
	rtRunToFinish(t, s, engine.Second)
	th := w.thread(t, "alone")
	rtWithin(t, "run alone: CPU (µs)", s.Task(th.id).SumExec()/1000, 20000, 20100)
	rtWithin(t, "run alone: exit (µs)", th.exitedAt/1000, 20000, 20200)

	s = rtSim(t, rtOneCPU(t), false)
	w = buildRT(t, s, `{"tasks": {"worker": {"loop": 1, "run": 20000}, "hog": {"run": 100000}}}`)
	s.RunUntil(200 * engine.Millisecond)
	th = w.thread(t, "worker")
	rtWithin(t, "run vs hog: CPU (µs)", s.Task(th.id).SumExec()/1000, 20000, 20100)
	rtWithin(t, "run vs hog: exit (µs)", th.exitedAt/1000, 36000, 46000)

	s = rtSim(t, rtOneCPU(t), false)
	w = buildRT(t, s, `{"tasks": {"spinner": {"loop": 1, "runtime": 20000}, "hog": {"run": 100000}}}`)
	s.RunUntil(200 * engine.Millisecond)
	th = w.thread(t, "spinner")
	// The spin notices the deadline when it next runs, up to a slice late.
	rtWithin(t, "runtime vs hog: exit (µs)", th.exitedAt/1000, 20000, 30000)
	rtWithin(t, "runtime vs hog: CPU (µs)", s.Task(th.id).SumExec()/1000, 7000, 13000)
}

// A periodic task keeps its period next to a hog on its CPU: about
// duration/period loops in the file's duration, 1 ms of CPU each, and
// every wakeup measured.
func TestRTAppPeriodicTimerWithHog(t *testing.T) {
	data := readRTTestdata(t, "periodic_hog.json")
	app, err := ParseRTApp(data)
	if err != nil {
		t.Fatal(err)
	}
	if app.Duration != engine.Second {
		t.Fatalf("duration %d, want 1 s", app.Duration)
	}
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, string(data))
	s.RunUntil(app.Duration)
	p, hog := w.thread(t, "periodic"), w.thread(t, "hog")
	rtWithin(t, "periodic loops", p.iters, 98, 100)
	rtWithin(t, "periodic CPU (ms)", s.Task(p.id).SumExec()/engine.Millisecond, 97, 101)
	rtWithin(t, "hog CPU (ms)", s.Task(hog.id).SumExec()/engine.Millisecond, 880, 903)
	if s.Task(p.id).CPU() != 0 || s.Task(hog.id).CPU() != 0 {
		t.Errorf("pinned tasks left CPU 0")
	}
	if r := s.Workloads()[0]; r.WakeupLatency.Count < 95 {
		t.Errorf("wakeups measured: %d", r.WakeupLatency.Count)
	}
}

// "sleep" is relative to the end of the loop's work, so the loop takes
// run + sleep + slack; a timer keeps the period exactly.
func TestRTAppSleepVersusTimer(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {
		"sleeper": {"run": 1000, "sleep": 9000},
		"ticker": {"run": 1000, "timer": {"ref": "t", "period": 10000}}}}`)
	s.RunUntil(engine.Second)
	rtWithin(t, "sleeper loops", w.thread(t, "sleeper").iters, 95, 99)
	rtWithin(t, "ticker loops", w.thread(t, "ticker").iters, 99, 100)
}

// A timer ref is shared: every use advances it by one period, so two tasks
// on one 10 ms timer together loop 100 times a second; "unique" timers are
// per thread.
func TestRTAppSharedAndUniqueTimers(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {
		"a": {"run": 1000, "timer": {"ref": "shared", "period": 10000}},
		"b": {"run": 1000, "timer": {"ref": "shared", "period": 10000}},
		"u": {"instance": 2, "run": 1000, "timer": {"ref": "unique", "period": 10000}}}}`)
	s.RunUntil(engine.Second)
	a, b := w.thread(t, "a").iters, w.thread(t, "b").iters
	rtWithin(t, "shared timer: a+b loops", a+b, 98, 101)
	rtWithin(t, "shared timer: a loops", a, 45, 55)
	rtWithin(t, "unique timer: u-0 loops", w.thread(t, "u-0").iters, 99, 100)
	rtWithin(t, "unique timer: u-1 loops", w.thread(t, "u-1").iters, 99, 100)
}

// After an overrun a relative timer re-anchors at now; an absolute one
// keeps its grid, so the following loops run back to back to catch up.
func TestRTAppTimerModes(t *testing.T) {
	loops := func(mode string) int64 {
		s := rtSim(t, rtFourCPUs(t), false)
		w := buildRT(t, s, `{"tasks": {"t": {"phases": {
			"overrun": {"run": 95000, "timer": {"ref": "T", "period": 10000, "mode": "`+mode+`"}},
			"steady": {"loop": -1, "run": 1000, "timer": {"ref": "T", "period": 10000}}}}}}`)
		s.RunUntil(300*engine.Millisecond + 500*engine.Microsecond)
		return w.thread(t, "t").iters
	}
	rel, abs := loops("relative"), loops("absolute")
	rtWithin(t, "relative loops", rel, 20, 22)
	rtWithin(t, "absolute loops", abs, 29, 31)
}

// "delay" postpones the first loop and the start of the thread's timers.
func TestRTAppDelay(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {
		"late": {"loop": 1, "delay": 5000, "run": 1000},
		"ticker": {"loop": 2, "delay": 3000, "run": 100, "timer": {"ref": "unique", "period": 10000}}}}`)
	rtRunToFinish(t, s, engine.Second)
	rtWithin(t, "late exit (µs)", w.thread(t, "late").exitedAt/1000, 6000, 6300)
	rtWithin(t, "ticker exit (µs)", w.thread(t, "ticker").exitedAt/1000, 23000, 23300)
}

// "sync" signals the condition and waits on it, releasing the mutex
// meanwhile and taking it back after: two threads syncing on one condition
// take turns, one millisecond each, never inside together.
func TestRTAppSyncTakesTurns(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {"turn": {"instance": 2,
		"lock": "m", "run": 1000, "sync": {"ref": "c", "mutex": "m"}, "unlock": "m"}}}`)
	a, b := w.thread(t, "turn-0"), w.thread(t, "turn-1")
	m := a.phases[0].ops[0].mutex
	if kinds := []string{a.phases[0].ops[0].kind, a.phases[0].ops[2].kind, a.phases[0].ops[3].kind}; !reflect.DeepEqual(kinds, []string{"lock", "signal", "wait"}) {
		t.Fatalf("sync compiled to %v", kinds)
	}
	for s.NextEventTime() >= 0 && s.NextEventTime() <= engine.Second {
		s.Step()
		inside := 0
		for _, th := range []*rtThread{a, b} {
			// ev 2 (signal) is next while the thread runs its "run".
			if th.state == rtEvent && th.ev == 2 {
				inside++
				if m.owner != th {
					t.Fatalf("t=%d: %s runs without holding the mutex", s.Now(), th.name)
				}
			}
		}
		if inside > 1 {
			t.Fatalf("t=%d: both threads inside", s.Now())
		}
	}
	// Each loop's "run" needs the mutex, so the two runs never overlap.
	rtWithin(t, "loops of both", a.iters+b.iters, 900, 1000)
	if d := a.iters - b.iters; d < -1 || d > 1 {
		t.Errorf("turn-0 %d and turn-1 %d loops: not taking turns", a.iters, b.iters)
	}
	rtWithin(t, "CPU of both (ms)", (s.Task(a.id).SumExec()+s.Task(b.id).SumExec())/engine.Millisecond, 900, 1001)
}

// A resume that arrives before the suspend is kept, not lost.
func TestRTAppResumeBeforeSuspendLost(t *testing.T) {
	// rt-app's resume is a pthread_cond_broadcast: the sleeper, still in
	// its first run when the waker resumes it, misses it and stays
	// suspended (src/rt-app.c, rtapp_suspend/rtapp_resume).
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {
		"waker": {"loop": 1, "resume": "sleeper", "run": 1000},
		"sleeper": {"loop": 1, "run": 5000, "suspend": "", "run1": 1000}}}`)
	s.RunUntil(engine.Second)
	if sl := w.thread(t, "sleeper"); !sl.suspended || s.AllFinished() {
		t.Errorf("the sleeper should still be suspended (suspended %v, all finished %v)", sl.suspended, s.AllFinished())
	}
	// Resumed while suspended, it runs on.
	s2 := rtSim(t, rtFourCPUs(t), true)
	w2 := buildRT(t, s2, `{"tasks": {
		"waker": {"loop": 1, "run": 2000, "resume": "sleeper"},
		"sleeper": {"loop": 1, "run": 500, "suspend": "", "run1": 1000}}}`)
	rtRunToFinish(t, s2, engine.Second)
	rtWithin(t, "sleeper exit (µs)", w2.thread(t, "sleeper").exitedAt/1000, 3000, 3300)
}

// Two threads handing the CPU to each other with resume/suspend never run
// at the same time and alternate at the pace of their run.
func TestRTAppResumeSuspendPingPong(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {
		"ping": {"run": 2000, "resume": "pong", "suspend": "ping"},
		"pong": {"suspend": "", "run": 2000, "resume": "ping"}}}`)
	ping, pong := w.thread(t, "ping"), w.thread(t, "pong")
	// Both may be on a CPU together only in the instant between one's
	// resume and its own suspend.
	running := 0
	var overlapSince, overlap int64
	s.SetHooks(engine.Hooks{OnSwitch: func(cpu int, prev, next *engine.Task) {
		if prev != nil && (prev.ID == ping.id || prev.ID == pong.id) {
			if running == 2 {
				overlap += s.Now() - overlapSince
			}
			running--
		}
		if next != nil && (next.ID == ping.id || next.ID == pong.id) {
			running++
			if running == 2 {
				overlapSince = s.Now()
			}
		}
	}})
	s.RunUntil(engine.Second)
	if overlap > 100*engine.Microsecond {
		t.Errorf("ping and pong were on CPUs together for %d µs", overlap/1000)
	}
	rtWithin(t, "ping loops", ping.iters, 230, 250)
	rtWithin(t, "pong loops", pong.iters, 230, 250)
	if d := ping.iters - pong.iters; d < 0 || d > 1 {
		t.Errorf("ping %d pong %d loops: not alternating", ping.iters, pong.iters)
	}
}

// signal wakes one waiter, broad all of them; a waiter handles one item
// per signal.
func TestRTAppSignalWait(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, string(readRTTestdata(t, "prodcons.json")))
	s.RunUntil(engine.Second)
	prod, cons := w.thread(t, "producer").iters, w.thread(t, "consumer")
	rtWithin(t, "producer loops", prod, 199, 200)
	// The consumer handles item k before the producer's loop k ends.
	rtWithin(t, "consumer loops", cons.iters, prod-1, prod+1)
	rtWithin(t, "consumer CPU (ms)", s.Task(cons.id).SumExec()/engine.Millisecond, prod-2, prod+1)

	for _, mode := range []string{"signal", "broad"} {
		s := rtSim(t, rtFourCPUs(t), false)
		w := buildRT(t, s, `{"tasks": {
			"producer": {"run": 500, "lock": "m", "`+mode+`": "items", "unlock": "m", "timer": {"ref": "tick", "period": 5000}},
			"consumer": {"instance": 3, "lock": "m", "wait": {"ref": "items", "mutex": "m"}, "unlock": "m", "run": 1000}}}`)
		s.RunUntil(engine.Second)
		prod := w.thread(t, "producer").iters
		var sum int64
		for _, n := range []string{"consumer-0", "consumer-1", "consumer-2"} {
			c := w.thread(t, n).iters
			sum += c
			if mode == "broad" {
				rtWithin(t, "broad: "+n+" loops", c, prod-1, prod+1)
			}
		}
		if mode == "signal" {
			rtWithin(t, "signal: consumer loops in total", sum, prod-3, prod+1)
		}
	}
}

// The last thread to reach a barrier wakes the others: three fast workers
// keep the pace of the slow one.
func TestRTAppBarrier(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, string(readRTTestdata(t, "barrier.json")))
	s.RunUntil(engine.Second)
	slow := w.thread(t, "slow")
	rtWithin(t, "slow loops", slow.iters, 190, 200)
	for _, n := range []string{"fast-0", "fast-1", "fast-2"} {
		f := w.thread(t, n)
		rtWithin(t, n+" loops", f.iters, slow.iters-1, slow.iters+1)
		if wk := s.Task(f.id).Wakeups(); wk < slow.iters-2 {
			t.Errorf("%s woken %d times, want one per barrier (%d)", n, wk, slow.iters)
		}
	}
	if p := w.threads[0].phases[0].ops[1].barrier.parties; p != 4 {
		t.Errorf("barrier parties %d, want 4", p)
	}
}

// A mutex lets one thread at a time into the critical section: four
// threads with 2 ms inside and 0.5 ms outside complete at most one loop per
// 2 ms together (without the lock they would do 1600 a second).
func TestRTAppLockSerialises(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), false)
	w := buildRT(t, s, `{"tasks": {"worker": {"instance": 4, "lock": "m", "run": 2000, "unlock": "m", "run1": 500}}}`)
	m := w.threads[0].phases[0].ops[0].mutex
	inside := func() int {
		n := 0
		for _, th := range w.threads {
			ph := th.phases[0]
			// In the critical section: holding m, between lock and unlock.
			if th.state == rtEvent && th.ev >= 1 && th.ev <= 2 && ph.ops[0].mutex.owner == th {
				n++
			}
		}
		return n
	}
	for s.NextEventTime() >= 0 && s.NextEventTime() <= engine.Second {
		s.Step()
		if n := inside(); n > 1 {
			t.Fatalf("t=%d: %d threads in the critical section", s.Now(), n)
		}
		if m.owner != nil && len(m.owner.held) != 1 {
			t.Fatalf("owner holds %d mutexes", len(m.owner.held))
		}
	}
	var total, woken int64
	for _, th := range w.threads {
		total += th.iters
		woken += s.Task(th.id).Wakeups()
	}
	rtWithin(t, "loops of all workers", total, 450, 500)
	if woken < 100 {
		t.Errorf("only %d wakeups: the lock was never contended", woken)
	}
}

// "cpus" is the affinity of every instance.
func TestRTAppCPUAffinity(t *testing.T) {
	tp := small(t, 1, 8, 1, 8, machine.Contiguous)
	s := rtSim(t, tp, false)
	w := buildRT(t, s, `{"tasks": {"pinned": {"instance": 4, "cpus": [3, 2], "run": 1000, "sleep": 500},
		"free": {"instance": 4, "run": 1000, "sleep": 500}}}`)
	pinned := map[engine.TaskID]bool{}
	for _, th := range w.threads {
		if strings.HasPrefix(th.name, "pinned") {
			pinned[th.id] = true
			if a := s.Task(th.id).Allowed(); a.Weight() != 2 || !a.Test(2) || !a.Test(3) {
				t.Errorf("%s allowed %v", th.name, a)
			}
		}
	}
	bad := 0
	s.SetHooks(engine.Hooks{OnSwitch: func(cpu int, prev, next *engine.Task) {
		if next != nil && pinned[next.ID] && cpu != 2 && cpu != 3 {
			bad++
		}
	}})
	s.RunUntil(200 * engine.Millisecond)
	if bad > 0 {
		t.Errorf("pinned threads ran %d times outside CPUs 2-3", bad)
	}

	s = rtSim(t, rtFourCPUs(t), false)
	_, err := Add(s, RTAppSpec([]byte(`{"tasks": {"far": {"cpus": [1, 9], "run": 10}}}`)), "")
	if err == nil || !strings.Contains(err.Error(), `task "far"`) || !strings.Contains(err.Error(), "CPU 9") {
		t.Errorf("CPU beyond the machine: %v", err)
	}
}

// "nice" and "priority" set the weight: two hogs at nice 0 and 5 on one
// CPU share it 1024:335.
func TestRTAppNiceSetsWeight(t *testing.T) {
	s := rtSim(t, small(t, 1, 2, 1, 2, machine.Contiguous), false)
	w := buildRT(t, s, `{"tasks": {
		"heavy": {"cpus": [0], "nice": 0, "run": 100000},
		"light": {"cpus": [0], "priority": 5, "run": 100000}}}`)
	s.RunUntil(2 * engine.Second)
	h, l := s.Task(w.thread(t, "heavy").id), s.Task(w.thread(t, "light").id)
	if h.Weight() != 1024 || l.Weight() != 335 {
		t.Fatalf("weights %d, %d", h.Weight(), l.Weight())
	}
	ratio := float64(h.SumExec()) / float64(l.SumExec())
	if want := 1024.0 / 335; ratio < want*0.95 || ratio > want*1.05 {
		t.Errorf("CPU share %.3f, want %.3f ±5%%", ratio, want)
	}
}

// Errors name the offending task, phase and field.
func TestRTAppErrors(t *testing.T) {
	cases := []struct {
		name, js string
		want     []string
	}{
		{"unknown event", `{"tasks": {"t": {"phases": {"p1": {"run": 10, "frobnicate": 3}}}}}`,
			[]string{`task "t"`, `phase "p1"`, `"frobnicate"`, "run, runtime, sleep, timer", "line 1"}},
		{"unknown task field", `{"tasks": {"t": {"run": 10, "colour": "red"}}}`,
			[]string{`task "t"`, `"colour"`, "instance, loop"}},
		{"refused event", `{"tasks": {"t": {"run": 10, "mem": 1000}}}`,
			[]string{`task "t"`, `"mem"`, "not supported"}},
		{"bad policy", `{"tasks": {"rt": {"policy": "SCHED_FAIR", "run": 10}}}`,
			[]string{`task "rt"`, "policy", "SCHED_FAIR", "not a policy", "SCHED_DEADLINE are supported"}},
		{"deadline without runtime", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-period": 1000, "run": 10}}}`,
			[]string{`task "dl"`, "dl-runtime", "needs a runtime", "EINVAL"}},
		{"deadline runtime below the minimum", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 1, "dl-period": 1000, "run": 10}}}`,
			[]string{`task "dl"`, "dl-runtime", "1024 ns"}},
		{"deadline period below the runtime", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 50, "run": 10}}}`,
			[]string{`task "dl"`, "dl-period", "shorter than the runtime", "line 1"}},
		{"deadline deadline beyond the period", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-deadline": 500, "dl-period": 400, "run": 10}}}`,
			[]string{`task "dl"`, "dl-deadline", "longer than the period, 400"}},
		{"deadline without period: the runtime is the period", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-deadline": 500, "run": 10}}}`,
			[]string{`task "dl"`, "dl-deadline", "longer than the period, 100", "without dl-period rt-app takes the runtime"}},
		{"deadline legacy period below the runtime", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "runtime": 100, "period": 50}}}`,
			[]string{`task "dl"`, `"dl" (line 1, column 63): period: the deadline, 50 µs, is shorter than the runtime, 100 µs`}},
		{"deadline shorter than the runtime, from the period", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 50, "deadline": 200, "run": 10}}}`,
			[]string{`task "dl"`, `dl-period: the deadline, 50 µs`}},
		{"dl-reclaim not a bool", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "dl-reclaim": 1, "run": 10}}}`,
			[]string{`task "dl"`, "dl-reclaim", "true or false", "number"}},
		{"nice under deadline", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "nice": 3, "run": 10}}}`,
			[]string{`task "dl"`, "nice", "SCHED_DEADLINE"}},
		{"deadline phase priority", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "phases": {"p": {"priority": 0, "run": 10}}}}}`,
			[]string{`task "dl"`, `phase "p"`, `"priority"`, "EINVAL"}},
		{"deadline phase policy", `{"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "phases": {"p": {"policy": "SCHED_DEADLINE", "run": 10}}}}}`,
			[]string{`task "dl"`, `phase "p"`, `"policy"`, "cannot set scheduling parameters"}},
		{"deadline thread forks", `{"global": {"default_policy": "SCHED_DEADLINE"}, "tasks": {"dl": {"dl-runtime": 100, "dl-period": 1000, "loop": 1, "run": 10, "fork": "kid"}, "kid": {"instance": 0, "policy": "SCHED_OTHER", "loop": 1, "run": 10}}}`,
			[]string{`task "dl"`, `"fork"`, "EAGAIN"}},
		{"fork of a deadline task", `{"tasks": {"p": {"loop": 1, "run": 10, "fork": "kid"}, "kid": {"instance": 0, "policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "loop": 1, "run": 10}}}`,
			[]string{`task "p"`, `"fork"`, `task "kid" is SCHED_DEADLINE`, "not modelled"}},
		{"bad rt priority", `{"tasks": {"rt": {"policy": "SCHED_FIFO", "priority": 0, "run": 10}}}`,
			[]string{`task "rt"`, "priority", "1..99", "SCHED_FIFO"}},
		{"nice under fifo", `{"tasks": {"rt": {"policy": "SCHED_RR", "nice": 5, "run": 10}}}`,
			[]string{`task "rt"`, "nice", "SCHED_RR"}},
		{"policy per phase", `{"tasks": {"rt": {"policy": "SCHED_FIFO", "phases": {"p": {"policy": "SCHED_OTHER", "run": 10}}}}}`,
			[]string{`task "rt"`, "policy", "per phase", "SCHED_OTHER"}},
		{"bad default policy", `{"global": {"default_policy": "SCHED_IDLE"}, "tasks": {"t": {"run": 10}}}`,
			[]string{"global", "default_policy", "SCHED_IDLE", "not modelled"}},
		{"default policy deadline without runtime", `{"global": {"default_policy": "SCHED_DEADLINE"}, "tasks": {"t": {"run": 10}}}`,
			[]string{`task "t"`, "dl-runtime", "needs a runtime"}},
		{"phase policy", `{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "run": 1}}}}}`,
			[]string{`task "t"`, `phase "p"`, "SCHED_RR"}},
		{"resume unknown task", `{"tasks": {"t": {"run": 10, "resume": "nobody"}}}`,
			[]string{`task "t"`, `"resume"`, `"nobody"`, "known: t"}},
		{"timer without ref", `{"tasks": {"t": {"run": 10, "timer": {"period": 1000}}}}`,
			[]string{`task "t"`, `"timer"`, `missing "ref"`}},
		{"wait nobody signals", `{"tasks": {"t": {"run": 10, "wait": {"ref": "c", "mutex": "m"}}}}`,
			[]string{`task "t"`, `"wait"`, `no task signals "c"`}},
		{"signal nobody waits", `{"tasks": {"t": {"run": 10, "signal": "c"}}}`,
			[]string{`task "t"`, `"signal"`, `no task waits on "c"`}},
		{"suspend never resumed", `{"tasks": {"t": {"run": 10, "suspend": "t"}}}`,
			[]string{`task "t"`, `"suspend"`, "no task resumes"}},
		{"suspend on a name nobody resumes", `{"tasks": {"t": {"run": 10, "suspend": "u"}, "u": {"run": 1, "resume": "t"}}}`,
			[]string{`task "t"`, `no task resumes "u"`}},
		{"unlock without lock", `{"tasks": {"t": {"run": 10, "unlock": "m"}}}`,
			[]string{`task "t"`, `"unlock"`, `never locks "m"`}},
		{"lock without unlock", `{"tasks": {"t": {"run": 10, "lock": "m"}}}`,
			[]string{`task "t"`, `never unlocks it`}},
		{"bad JSON", "{\"tasks\": {\n\"t\": {\"run\": 10 \"sleep\": 5}}}",
			[]string{"bad JSON", "line 2"}},
		{"truncated JSON", `{"tasks": {"t": {"run": 10}`, []string{"bad JSON", "end of input"}},
		{"trailing data", `{"tasks": {"t": {"run": 10}}} {}`, []string{"bad JSON", "after the top-level value"}},
		{"unterminated comment", "{\n/* oops\n\"tasks\": {}}", []string{"bad JSON", "line 2", "comment"}},
		{"not an object", `[1, 2]`, []string{"must be a JSON object"}},
		{"no tasks", `{"global": {"duration": 1}}`, []string{`no "tasks"`}},
		{"unknown top-level", `{"tasks": {"t": {"run": 1}}, "extra": 1}`, []string{`"extra"`, "global, tasks"}},
		{"unknown global", `{"global": {"durration": 3}, "tasks": {"t": {"run": 1}}}`, []string{"global", `"durration"`, "duration"}},
		{"fractional run", `{"tasks": {"t": {"run": 1.5}}}`, []string{`task "t"`, `"run"`, "µs"}},
		{"nice out of range", `{"tasks": {"t": {"priority": 25, "run": 1}}}`, []string{`task "t"`, "priority", "-20..19"}},
		{"nice and priority disagree", `{"tasks": {"t": {"priority": 1, "nice": 2, "run": 1}}}`, []string{`task "t"`, "disagree"}},
		{"phase loop 0", `{"tasks": {"t": {"phases": {"p": {"loop": 0, "run": 1}}}}}`, []string{`phase "p"`, "loop", "0"}},
		{"phase cpus beyond", `{"tasks": {"t": {"cpus": [0], "phases": {"p": {"cpus": "1", "run": 1}}}}}`,
			[]string{`phase "p"`, "cpus", "array"}},
		{"phase slice", `{"tasks": {"t": {"phases": {"p": {"dl-runtime": 3000, "run": 1}}}}}`,
			[]string{`phase "p"`, `"dl-runtime"`, "per phase"}},
		{"old grammar", `{"tasks": {"t": {"exec": 5000, "period": 5000, "lock_order": ["m"], "resources": {"m": {}}}}}`,
			[]string{`task "t"`, `"exec"`, "old task grammar", "current rt-app does not read either", "lock_order"}},
		{"taskgroup", `{"tasks": {"t": {"taskgroup": "/tg1", "run": 1}}}`, []string{`task "t"`, "taskgroup", "cgroups"}},
		{"memrun", `{"tasks": {"t": {"run": 1, "memrun_a": {"type": "read", "size": 64, "count": 64}}}}`,
			[]string{`task "t"`, `"memrun_a"`, "memory access", "not modelled"}},
		{"iorun", `{"tasks": {"t": {"run": 1, "iorun": 4096}}}`, []string{`task "t"`, `"iorun"`, "I/O"}},
		{"batch", `{"tasks": {"t": {"policy": "SCHED_BATCH", "run": 1}}}`, []string{`task "t"`, "SCHED_BATCH", "not modelled"}},
		{"uclamp range", `{"tasks": {"t": {"util_max": 2048, "run": 1}}}`, []string{`task "t"`, "util_max", "0..1024"}},
		{"sem_wait nobody posts", `{"tasks": {"t": {"run": 1, "sem_wait": "s"}}}`,
			[]string{`task "t"`, `"sem_wait"`, `no task posts semaphore "s"`}},
		{"sem_post not a string", `{"tasks": {"t": {"run": 1, "sem_post": 3}}}`,
			[]string{`task "t"`, `"sem_post"`, "semaphore"}},
		{"fork unknown", `{"tasks": {"t": {"run": 1, "fork": "nobody"}}}`,
			[]string{`task "t"`, `"fork"`, `no task named "nobody"`}},
		{"fork forever", `{"tasks": {"t": {"run": 1, "sleep": 1, "fork": "c"}, "c": {"instance": 0, "loop": 1, "run": 1}}}`,
			[]string{`task "c"`, "FORKS_LIMIT", "1024"}},
		{"fork over the limit", `{"tasks": {"t": {"loop": 1025, "run": 1, "fork": "c"}, "c": {"instance": 0, "loop": 1, "run": 1}}}`,
			[]string{`task "c"`, "FORKS_LIMIT"}},
		{"fork cycle", `{"tasks": {"a": {"loop": 1, "run": 1, "fork": "b"}, "b": {"instance": 0, "loop": 1, "run": 1, "fork": "a"}}}`,
			[]string{"FORKS_LIMIT"}},
		{"barrier in a forked task", `{"tasks": {"a": {"loop": 1, "run": 1, "fork": "b", "barrier": "x"}, "b": {"instance": 0, "loop": 1, "barrier": "x"}}}`,
			[]string{`task "b"`, `"barrier"`, "fork"}},
		{"phase nice change", `{"tasks": {"t": {"phases": {"p": {"priority": 3, "run": 1}}}}}`,
			[]string{`phase "p"`, "priority", "per phase"}},
		{"events beside phases", `{"tasks": {"t": {"run": 1, "phases": {"p": {"run": 1}}}}}`,
			[]string{`task "t"`, `"run"`, "phases"}},
		{"no events", `{"tasks": {"t": {"loop": 3}}}`, []string{`task "t"`, "no events"}},
		{"too many threads", `{"tasks": {"a": {"instance": 4000, "run": 1}, "b": {"instance": 97, "run": 1}}}`,
			[]string{`task "b"`, "4096"}},
		{"name clash", `{"tasks": {"w": {"instance": 2, "run": 1}, "w-1": {"run": 1}}}`, []string{`"w-1"`, "rename"}},
		{"bad cpus", `{"tasks": {"t": {"cpus": "0-3", "run": 1}}}`, []string{`task "t"`, "cpus", "array"}},
		{"bad timer mode", `{"tasks": {"t": {"run": 1, "timer": {"ref": "x", "period": 10, "mode": "sometimes"}}}}`,
			[]string{`task "t"`, "mode", "sometimes"}},
		{"zero threads", `{"tasks": {"t": {"instance": 0, "run": 1}}}`, []string{"no threads"}},
	}
	// Accepted: repeating the task's settings in a phase, ignored keys.
	for _, js := range []string{
		`{"tasks": {"t": {"priority": 3, "cpus": [1, 0], "policy": "SCHED_OTHER", "phases": {
			"p": {"priority": 3, "cpus": [0, 1], "policy": "SCHED_OTHER", "nodes_membind": [0], "run": 1}}}}}`,
		`{"global": {"duration": -1, "calibration": 120, "pi_enabled": true, "lock_pages": false, "log_size": "file",
			"ftrace": "main,task", "gnuplot": false, "io_device": "/dev/null", "mem_buffer_size": 4096, "cumulative_slack": false},
			"resources": {"m": {"type": "mutex"}}, "tasks": {"t": {"membind_nodes": [0], "run": 1}}}`,
		// uclamp and the deadline-only parameters of a SCHED_OTHER task
		// are read and ignored; any key starting with an event name is
		// that event (rt-app's obj_is_event).
		`{"tasks": {"t": {"util_min": 512, "util_max": -1, "dl-period": 100, "dl-deadline": 100, "period": 5, "deadline": 5,
			"phases": {"p": {"util_max": 1024, "run_long": 1, "sleep_short": 1}}}}}`,
	} {
		if _, err := ParseRTApp([]byte(js)); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
	for _, c := range cases {
		_, err := ParseRTApp([]byte(c.js))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}

// Big files hit clear limits (and parse in linear time).
func TestRTAppLimits(t *testing.T) {
	gen := func(tasks, events int) []byte {
		var b strings.Builder
		b.WriteString("{\"tasks\": {\n")
		for i := 0; i < tasks; i++ {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(`"t` + itoa(i) + `": {`)
			for j := 0; j < events; j++ {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(`"run": 10`)
			}
			b.WriteString("}")
		}
		b.WriteString("}}")
		return []byte(b.String())
	}
	app, err := ParseRTApp(gen(1024, 64))
	if err != nil || app.Threads() != 1024 {
		t.Fatalf("1024×64 events: %v", err)
	}
	if _, err := ParseRTApp(gen(1025, 64)); err == nil || !strings.Contains(err.Error(), "65536 events") {
		t.Errorf("too many events: %v", err)
	}
	if _, err := ParseRTApp(append([]byte("{\"tasks\": {}}"), make([]byte, RTAppMaxBytes)...)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("too big: %v", err)
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := ParseRTApp([]byte(`{"tasks": {"t": {"run": 1}}, "resources": ` + deep + `}`)); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("deep nesting: %v", err)
	}
}

// lineTable gives every offset the line and column a scan back to the
// previous newline gives (what the parser did before issue 22).
func TestRTAppLineTable(t *testing.T) {
	for _, src := range []string{"", "\n", "a", "ab\ncd\n\nef", "\n\nx\n", `{"tasks": {"t": {"run": 1}}}`} {
		lt := newLineTable([]byte(src))
		for off := -1; off <= len(src)+1; off++ {
			o := min(max(off, 0), len(src))
			start := strings.LastIndexByte(src[:o], '\n') + 1
			wantLine, wantCol := 1+strings.Count(src[:o], "\n"), o-start+1
			if line, col := lt.lineCol(int64(off)); line != wantLine || col != wantCol {
				t.Errorf("%q offset %d: line %d column %d, want %d %d", src, off, line, col, wantLine, wantCol)
			}
		}
	}
}

// A spec is parsed once however often a run reads it: the command line
// reads its duration and checks it, the scenario checks it, the build
// checks it and builds it — six parses of up to a megabyte each (and a
// quadratic parse then made each take a minute). The spec of the 1 MB
// file carries it compacted onto one line, where every position lookup
// used to scan back to the text's start; the table of line starts gives
// the same positions (TestRTAppLineTable), and BenchmarkParseRTApp
// measures the time.
var specNonce atomic.Int64

func TestRTAppSpecParsedOncePerRun(t *testing.T) {
	size := RTAppMaxBytes
	if testing.Short() {
		size /= 4 // under wasm a parse is a few times slower
	}
	// A file no earlier test (or -count run) parsed: the parses are kept.
	file := bytes.Replace(rtappBigFile(size-32), []byte(`"duration": 1`), []byte(fmt.Sprintf(`"duration": %d`, specNonce.Add(1))), 1)
	spec := RTAppSpec(file)
	before := rtappParsed.Load()
	if _, err := ParseRTAppSpec(spec); err != nil {
		t.Fatal(err)
	}
	if err := Check(spec, 1); err != nil {
		t.Fatal(err)
	}
	sim := rtSim(t, rtOneCPU(t), false)
	if _, err := Add(sim, spec, ""); err != nil {
		t.Fatal(err)
	}
	if n := rtappParsed.Load() - before; n != 1 {
		t.Errorf("the spec was parsed %d times, want once", n)
	}
}

// rt-app's json-c leniency: comments, trailing commas, a BOM.
func TestRTAppLenientJSON(t *testing.T) {
	app, err := ParseRTApp([]byte("\xef\xbb\xbf{\n// line comment with \"quotes\" and /* */\n\"tasks\": {\"t\": {\"run\": 10, /* inline */ \"sleep\": 20,},},\n\"global\": {\"logdir\": \"/* not a comment */\", \"duration\": -1,},}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Tasks[0].Phases[0].Events) != 2 || app.Duration != 0 {
		t.Errorf("parsed %+v", app)
	}
}

// RTAppSpec carries the file in a spec string that round-trips through
// Parse, builds with Add and exposes the file's duration.
func TestRTAppSpecRoundTrip(t *testing.T) {
	data := readRTTestdata(t, "prodcons.json")
	spec := RTAppSpec(data)
	if !strings.HasPrefix(spec, "rtapp:b64=") || strings.ContainsAny(spec[len("rtapp:b64="):], ",:=+/ \n") {
		t.Fatalf("spec %q", spec)
	}
	sp, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	if sp.String() != spec {
		t.Errorf("spec does not round-trip:\n%s\n%s", sp.String(), spec)
	}
	if err := Check(spec, 4); err != nil {
		t.Fatal(err)
	}
	app, err := ParseRTAppSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseRTApp(data)
	if !reflect.DeepEqual(rtStripLines(app), rtStripLines(want)) || app.Duration != engine.Second {
		t.Errorf("decoded %+v, want %+v", app, want)
	}
	s := rtSim(t, rtFourCPUs(t), false)
	if _, err := Add(s, spec+",nice=3", "pc"); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(app.Duration)
	r := s.Workloads()[0]
	if r.Name != "pc" || r.Kind != "rtapp" || r.Tasks != 2 || r.Ops < 390 || r.WakeupLatency.Count < 390 {
		t.Errorf("result %+v", r)
	}
	if s.Task(0).Nice != 3 {
		t.Errorf("spec-level nice not applied: %d", s.Task(0).Nice)
	}

	for _, bad := range []string{"rtapp", "rtapp:b64=!!!", "rtapp:b64=" + RTAppSpec([]byte(`{"tasks": {}}`))[len("rtapp:b64="):]} {
		if _, err := Add(rtSim(t, rtFourCPUs(t), false), bad, ""); err == nil || !strings.Contains(err.Error(), "rtapp") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
}

// The tutorial's example 5 — mutex, condition variable, resume/suspend,
// a shared timer, nice -19 and pinning in phases, written with comments,
// trailing commas and repeated keys — runs to completion with the engine's
// invariants checked after every event.
func TestRTAppTutorialExampleDebug(t *testing.T) {
	data := readRTTestdata(t, "tutorial_example5.json")
	app, err := ParseRTApp(data)
	if err != nil {
		t.Fatal(err)
	}
	if !app.Finite() || app.Threads() != 2 || len(app.Tasks[0].Phases[1].Events) != 8 || len(app.Tasks[1].Phases[0].Events) != 8 {
		t.Fatalf("parsed %+v", app)
	}
	s := rtSim(t, rtFourCPUs(t), true)
	if _, err := Add(s, RTAppSpec(data), ""); err != nil {
		t.Fatal(err)
	}
	rtRunToFinish(t, s, 5*engine.Second)
	r := s.Workloads()[0]
	if r.Ops != 1+8+3 {
		t.Errorf("ops %d, want 12 (thread0: 1+8 phase loops, thread1: 3)", r.Ops)
	}
	for i, cpu := range []int{0, 1} {
		task := s.Task(engine.TaskID(i))
		if task.Nice != -19 || task.CPU() != cpu || task.State() != engine.TaskExited {
			t.Errorf("%s: nice %d cpu %d state %v", task.Name, task.Nice, task.CPU(), task.State())
		}
	}
	// thread0 alone: 10 ms sleep, then 8 loops on a 200 ms timer.
	rtWithin(t, "done at (ms)", r.DoneAt/engine.Millisecond, 1600, 1700)
}

// Every example file runs under the engine's invariant checks.
func TestRTAppTestdataUnderDebug(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rtapp", "*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := rtSim(t, small(t, 1, 2, 2, 2, machine.Interleaved), true)
		if _, err := Add(s, RTAppSpec(data), ""); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s.RunUntil(300 * engine.Millisecond)
		if r := s.Workloads()[0]; r.Ops == 0 || r.WakeupLatency.Count == 0 {
			t.Errorf("%s: %+v", f, r)
		}
	}
}

// A loop of events that take no time is charged a little work instead of
// spinning the engine in zero time.
func TestRTAppZeroTimeLoopIsCharged(t *testing.T) {
	s := rtSim(t, rtFourCPUs(t), true)
	w := buildRT(t, s, `{"tasks": {
		"idler": {"resume": "sleeper", "timer": {"ref": "late", "period": 1, "mode": "absolute"}},
		"sleeper": {"loop": 1, "run": 10, "suspend": ""}}}`)
	s.RunUntil(10 * engine.Millisecond)
	rtWithin(t, "idler loops", w.thread(t, "idler").iters, 5000, 10000)
}

// RTAppFileSpec parses the file as written and keeps that parse for its
// spec: checking and building the spec parse nothing again, and an error
// only the build finds (a CPU the machine lacks) names the file's line,
// not the compacted spec's "line 1, column 26".
func TestRTAppFileSpecKeepsTheParse(t *testing.T) {
	file := []byte("{\n  \"tasks\": {\n    \"a\": {\"run\": 10},\n    \"t\": {\n      \"cpus\": [5],\n      \"run\": 10\n    }\n  }\n}\n")
	spec, err := RTAppFileSpec(file)
	if err != nil {
		t.Fatal(err)
	}
	if spec != RTAppSpec(file) {
		t.Fatalf("spec %q, want RTAppSpec's %q", spec, RTAppSpec(file))
	}
	b64 := strings.TrimPrefix(spec, "rtapp:b64=")
	kept, ok := lookupRTApp(b64)
	if !ok || kept.err != nil {
		t.Fatalf("no parse kept for the spec: %+v", kept)
	}
	if app, _ := parseRTAppB64(b64); app != kept.app {
		t.Error("parsing the spec again did not return the kept parse")
	}
	_, err = Add(rtSim(t, rtOneCPU(t), false), spec+",nice=1", "")
	if err == nil || !strings.Contains(err.Error(), `task "t" (line 4, column 5): cpus: CPU 5 does not exist`) {
		t.Errorf("build error %v, want the file's line 4", err)
	}
	// ParseRTAppSpec hands out a copy: changing it changes no later build.
	app, err := ParseRTAppSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	app.Tasks[1].CPUs[0] = 0
	app.Tasks[1].Phases[0].Events[0].NS = 1
	if kept.app.Tasks[1].CPUs[0] != 5 || kept.app.Tasks[1].Phases[0].Events[0].NS != 10*engine.Microsecond {
		t.Error("changing ParseRTAppSpec's result changed the kept parse")
	}
	// A file that does not parse is refused with its own line.
	if _, err := RTAppFileSpec([]byte("{\"tasks\": {\n\"t\": {\"run\": 10 \"sleep\": 5}}}")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
}

// The kept parses are bounded in number and in text, the least recently
// used going first.
func TestRTAppParseCacheBounds(t *testing.T) {
	spec := func(i int) string {
		return strings.TrimPrefix(RTAppSpec([]byte(`{"tasks": {"t`+itoa(i)+`": {"run": 1}}}`)), "rtapp:b64=")
	}
	for i := 0; i < rtappCacheEntries+4; i++ {
		if _, err := parseRTAppB64(spec(i)); err != nil {
			t.Fatal(err)
		}
		if i == 8 {
			parseRTAppB64(spec(0)) // used again: kept longer than 1..8
		}
	}
	for i, want := range map[int]bool{0: true, 1: false, 4: false, 5: true, rtappCacheEntries + 3: true} {
		if _, ok := lookupRTApp(spec(i)); ok != want {
			t.Errorf("spec %d kept: %v, want %v", i, ok, want)
		}
	}
	big := strings.Repeat("A", rtappCacheBytes/2+1)
	rememberRTApp(big, nil, nil)
	rememberRTApp(big+"B", nil, nil)
	c := &rtappParses
	c.Lock()
	n, size := len(c.entries), c.bytes
	c.Unlock()
	if size > rtappCacheBytes || n != 1 {
		t.Errorf("%d entries, %d bytes kept (limit %d)", n, size, rtappCacheBytes)
	}
	if _, ok := lookupRTApp(big + "B"); !ok {
		t.Error("the latest parse was not kept")
	}
	rememberRTApp(strings.Repeat("A", rtappCacheBytes+1), nil, nil)
	if _, ok := lookupRTApp(big + "B"); !ok {
		t.Error("a text over the whole budget pushed out what was kept")
	}
}

// A thread that locks a mutex it already holds would block forever (an
// rt-app mutex is a default, non-recursive pthread mutex), as the
// simulator's lock would queue it behind itself: refused at parse, naming
// the task, phase and event, the second lock's line and the first's.
func TestRTAppRelockRefused(t *testing.T) {
	cases := []struct{ name, js, want string }{
		{"twice in a row", `{"tasks": {"t": {
			"lock": "m",
			"lock1": "m",
			"unlock": "m"}}}`,
			`rtapp: task "t" (line 3, column 4): event "lock1": locks "m" again while holding it (locked at line 2, column 4, not unlocked since); an rt-app mutex is not recursive, so the thread would block here forever`},
		{"in the phase's next loop", `{"tasks": {"t": {"loop": 1, "phases": {
			"p": {"loop": 2, "lock": "m", "run": 10},
			"q": {"unlock": "m"}}}}}`,
			`rtapp: task "t", phase "p" (line 2, column 21): event "lock": locks "m" again while holding it (locked at line 2, column 21 in the phase's previous loop, not unlocked since)`},
		{"in a later phase", `{"tasks": {"t": {"loop": 1, "phases": {
			"a": {"lock": "m", "run": 10},
			"b": {"run": 5, "lock": "m", "unlock": "m"}}}}}`,
			`rtapp: task "t", phase "b" (line 3, column 20): event "lock": locks "m" again while holding it (locked at line 2, column 10 in phase "a", not unlocked since)`},
		{"in the task's next loop", `{"tasks": {"t": {"phases": {
			"a": {"lock": "m", "run": 10},
			"b": {"unlock": "m", "run": 10, "lock": "m"}}}}}`,
			`rtapp: task "t", phase "a" (line 2, column 10): event "lock": locks "m" again while holding it (locked at line 3, column 36 in the task's previous loop, not unlocked since)`},
		{"every instance", `{"tasks": {"w": {"instance": 3, "lock": "a", "lock1": "b", "lock2": "a", "unlock": "a", "unlock1": "b"}}}`,
			`rtapp: task "w" (line 1, column 60): event "lock2": locks "a" again`},
	}
	for _, c := range cases {
		_, err := ParseRTApp([]byte(c.js))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error\n%v\nwant\n%s…", c.name, err, c.want)
		}
	}
	// Accepted: each lock released before the next, across phases and
	// loops; two different mutexes nested; a wait that gives its mutex
	// back; a relock in a phase after one that loops forever (never run).
	for _, js := range []string{
		`{"tasks": {"t": {"lock": "m", "run": 10, "unlock": "m", "lock1": "m", "unlock1": "m"}}}`,
		`{"tasks": {"t": {"phases": {"a": {"lock": "m", "run": 1}, "b": {"unlock": "m", "run": 1}}}}}`,
		`{"tasks": {"t": {"lock": "a", "lock1": "b", "run": 1, "unlock": "b", "unlock1": "a"}}}`,
		`{"tasks": {"p": {"lock": "m", "signal": "c", "unlock": "m", "run": 1},
			"c": {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"}}}`,
		`{"tasks": {"t": {"phases": {"a": {"loop": -1, "lock": "m", "run": 1, "unlock": "m"}, "b": {"lock": "m", "lock1": "m"}}}}}`,
	} {
		if _, err := ParseRTApp([]byte(js)); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
	// What the refusal saves: the thread stuck in its second lock, the
	// simulator silent about it.
	s := rtSim(t, rtOneCPU(t), false)
	app := &RTApp{Tasks: []RTAppTask{{Name: "t", Instances: 1, Loop: 1, Phases: []RTAppPhase{{Loop: 1, Events: []RTAppEvent{
		{Kind: "lock", Ref: "m"}, {Kind: "lock", Ref: "m"}, {Kind: "unlock", Ref: "m"}}}}}}}
	w, err := app.build(&Builder{Sim: s, ID: s.AddWorkload("rtapp", "rtapp"), Pressure: 1024})
	if err != nil {
		t.Fatal(err)
	}
	s.RunUntil(10 * engine.Millisecond)
	if th := w.thread(t, "t"); s.Task(th.id).State() == engine.TaskExited || th.ev != 1 {
		t.Errorf("the thread went past its second lock: state %v, event %d", s.Task(th.id).State(), th.ev)
	}
}

// rt-app's policies: a task's "policy" (else global.default_policy) makes
// its threads SCHED_FIFO or SCHED_RR with "priority" as the rt priority
// (default 10, DEFAULT_THREAD_PRIORITY); SCHED_OTHER tasks keep the nice.
// The same spec's policy= key applies where the file names no policy.
func TestRTAppPolicies(t *testing.T) {
	file := `{"global": {"default_policy": "SCHED_RR"},
	"tasks": {
		"fifo": {"policy": "SCHED_FIFO", "priority": 80, "run": 100, "sleep": 1000},
		"rr": {"run": 100, "sleep": 1000},
		"other": {"policy": "SCHED_OTHER", "priority": 5, "run": 100, "sleep": 1000}
	}}`
	s := simAtEra(t, "6.6")
	if _, err := Add(s, RTAppSpec([]byte(file)), ""); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		pol        engine.Policy
		prio, nice int
	}{"fifo": {engine.PolicyFIFO, 80, 0}, "rr": {engine.PolicyRR, 10, 0}, "other": {engine.PolicyNormal, 0, 5}}
	for i := 0; i < s.NumTasks(); i++ {
		task := s.Task(engine.TaskID(i))
		w, ok := want[task.Name]
		if !ok {
			t.Fatalf("unexpected task %q", task.Name)
		}
		if task.Policy() != w.pol || task.RTPrio() != w.prio || task.Nice != w.nice {
			t.Errorf("task %s: policy %v rt priority %d nice %d, want %v %d %d", task.Name, task.Policy(), task.RTPrio(), task.Nice, w.pol, w.prio, w.nice)
		}
	}
	s.RunUntil(100 * engine.Millisecond)
	if rt := s.RT(); rt == nil || rt.CPUPct <= 0 {
		t.Fatalf("RT class stats %+v: want RT CPU time", rt)
	}
}
