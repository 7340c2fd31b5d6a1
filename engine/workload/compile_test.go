package workload

import (
	"sort"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// compileSim builds a preset simulation with its cost knobs, optionally
// checking the engine's invariants after every event.
func compileSim(t testing.TB, name string, seed uint64, debug bool, specs ...string) *engine.Sim {
	tp := preset(t, name)
	k := knob.Defaults()
	for n, v := range tp.Spec.Costs {
		id, _ := knob.Lookup(n)
		k.SetValue(id, v)
	}
	return buildSim(t, tp, k, seed, debug, specs...)
}

// runToFinish runs until every finite workload is done (or limit).
func runToFinish(t testing.TB, s *engine.Sim, limit int64) {
	for !s.AllFinished() && s.Now() < limit {
		s.RunUntil(s.Now() + engine.Second)
	}
	if !s.AllFinished() {
		t.Fatalf("not finished after %d s", limit/engine.Second)
	}
}

// workloadTasks lists the tasks of workload w.
func workloadTasks(s *engine.Sim, w int) []*engine.Task {
	var out []*engine.Task
	for id := 0; id < s.NumTasks(); id++ {
		if tk := s.Task(engine.TaskID(id)); tk.Workload() == w {
			out = append(out, tk)
		}
	}
	return out
}

func seconds(ns int64) float64 { return float64(ns) / float64(engine.Second) }

// V3 (validation.md, smt-nice-2004): the serial build (make, j=1) on the
// uniprocessor P4 takes its work plus the process overheads — a few per
// cent — every forked process has exited, none is left blocked, and the
// CPU time the build's processes received adds up to the same.
func TestCompileSerialOnUPTakesItsWork(t *testing.T) {
	const work = 87
	s := compileSim(t, "p4-up-1c-1t", 1, false, "compile:j=1,work=87")
	runToFinish(t, s, 200*engine.Second)
	r := s.Workloads()[0]
	done := seconds(r.DoneAt)
	jobs := (work*1000 + 50) / 100
	if r.Tasks != 1+procsPerJob*jobs {
		t.Errorf("%d tasks, want make + %d×%d processes", r.Tasks, jobs, procsPerJob)
	}
	var cpu int64
	for _, tk := range workloadTasks(s, 0) {
		if tk.State() != engine.TaskExited {
			t.Errorf("task %s left %v", tk.Name, tk.State())
		}
		cpu += tk.SumExec()
	}
	t.Logf("j=1 on UP: done at %.6f s, %d tasks, CPU %.6f s", done, r.Tasks, seconds(cpu))
	if done < work || done > work*1.05 {
		t.Errorf("serial build took %.2f s, want %d s plus a few %% of process overhead", done, work)
	}
	if c := seconds(cpu); c < work || c > work*1.05 || c > done+1e-3 {
		t.Errorf("build received %.2f s of CPU, want ≈%d s and ≤ the %.2f s it took", c, work, done)
	}
}

// The same build with invariants checked after every event, and the task
// count growing as make forks (one job in flight: at most make, sh, gcc,
// cc1 alive at once).
func TestCompileInvariantsAndProcessTree(t *testing.T) {
	s := compileSim(t, "p4-ht-1c-2t", 3, true, "compile:j=2,work=3,burst_ms=50")
	if s.NumTasks() != 1 {
		t.Fatalf("%d tasks at start, want just make", s.NumTasks())
	}
	maxAlive, prevTasks, grew := 0, 1, 0
	for !s.AllFinished() && s.Now() < 20*engine.Second {
		s.RunUntil(s.Now() + 10*engine.Millisecond)
		alive := 0
		for id := 0; id < s.NumTasks(); id++ {
			if s.Task(engine.TaskID(id)).State() != engine.TaskExited {
				alive++
			}
		}
		maxAlive = max(maxAlive, alive)
		if s.NumTasks() > prevTasks {
			grew++
		}
		prevTasks = s.NumTasks()
	}
	if !s.AllFinished() {
		t.Fatal("build did not finish")
	}
	// make + 2 jobs × (sh, gcc, cc1 or as or fixdep): at most 7.
	if maxAlive < 3 || maxAlive > 7 {
		t.Errorf("at most %d processes alive at once, want 3..7 for j=2", maxAlive)
	}
	if grew < 10 {
		t.Errorf("task count grew in only %d of the sampled intervals", grew)
	}
	for _, tk := range workloadTasks(s, 0) {
		if tk.State() != engine.TaskExited {
			t.Errorf("%s left %v", tk.Name, tk.State())
		}
	}
}

// make -j4 on four CPUs is about four times faster than make -j1 (the
// tail of the last long job and make's serial forking cost a little).
func TestCompileParallelScales(t *testing.T) {
	run := func(j string) float64 {
		s, err := engine.New(engine.Config{Machine: small(t, 1, 4, 1, 4, "interleaved"), Knobs: knob.Defaults(), Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Add(s, "compile:work=40,j="+j, ""); err != nil {
			t.Fatal(err)
		}
		runToFinish(t, s, 100*engine.Second)
		return seconds(s.Workloads()[0].DoneAt)
	}
	t1, t4 := run("1"), run("4")
	t.Logf("j=1 %.2f s, j=4 %.2f s, speedup %.2f", t1, t4, t1/t4)
	if sp := t1 / t4; sp < 3.4 || sp > 4.05 {
		t.Errorf("speedup %.2f with 4 jobs on 4 CPUs, want ≈4", sp)
	}
}

// Job sizes are lognormal, deterministic per seed, and add up to exactly
// the work.
func TestCompileJobSizes(t *testing.T) {
	s1 := compileSim(t, "p4-up-1c-1t", 7, false)
	s2 := compileSim(t, "p4-up-1c-1t", 7, false)
	total := int64(87 * engine.Second)
	a := compileJobSizes(s1.WorkloadRand(s1.AddWorkload("a", "compile")), 870, total, 1)
	b := compileJobSizes(s2.WorkloadRand(s2.AddWorkload("a", "compile")), 870, total, 1)
	var sum int64
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("job %d: %d vs %d for the same seed", i, a[i], b[i])
		}
		sum += a[i]
	}
	if sum != total {
		t.Fatalf("sizes add up to %d, want %d", sum, total)
	}
	sorted := append([]int64(nil), a...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	mean := float64(total) / 870
	median := float64(sorted[435])
	// Lognormal σ=1: mean/median = e^0.5 ≈ 1.65; the largest of 870 is
	// typically 15-30× the median.
	if r := mean / median; r < 1.4 || r > 1.95 {
		t.Errorf("mean/median %.2f, want ≈1.65 (lognormal σ=1)", r)
	}
	if r := float64(sorted[869]) / median; r < 8 {
		t.Errorf("largest job only %.1f× the median: no heavy tail", r)
	}
	eq := compileJobSizes(s1.WorkloadRand(0), 10, 1000, 0)
	for _, x := range eq {
		if x != 100 {
			t.Fatalf("sigma=0 sizes %v, want all 100", eq)
		}
	}
	if x := detExp(1); x < 2.718281828459 || x > 2.718281828460 {
		t.Fatalf("detExp(1) = %v", x)
	}
}

// mprime runs one always-runnable thread per CPU by default (n= overrides)
// and never blocks.
func TestMprimeThreadsNeverBlock(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int
	}{{"mprime:nice=19", 4}, {"mprime:n=2", 2}, {"mprime:cpus=1-2", 2}} {
		s, err := engine.New(engine.Config{Machine: small(t, 1, 2, 2, 2, "interleaved"), Knobs: knob.Defaults(), Seed: 1, Debug: true})
		if err != nil {
			t.Fatal(err)
		}
		blocked := 0
		s.SetHooks(engine.Hooks{OnSwitch: func(cpu int, prev, next *engine.Task) {
			if prev != nil && strings.HasPrefix(prev.Name, "mprime") && prev.State() != engine.TaskRunnable {
				blocked++
			}
		}})
		if _, err := Add(s, c.spec, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := Add(s, "schbench:m=1,t=2,c=200,s=500", ""); err != nil {
			t.Fatal(err)
		}
		s.RunUntil(300 * engine.Millisecond)
		if n := s.Workloads()[0].Tasks; n != c.want {
			t.Errorf("%s: %d threads, want %d", c.spec, n, c.want)
		}
		if blocked > 0 {
			t.Errorf("%s: mprime left the CPU other than preempted %d times", c.spec, blocked)
		}
		for _, tk := range workloadTasks(s, 0) {
			if st := tk.State(); st != engine.TaskRunning && st != engine.TaskRunnable {
				t.Errorf("%s: %s is %v", c.spec, tk.Name, st)
			}
		}
	}
}

// mprime's default SMT pressure (125%) slows a sibling compile more than
// the nominal loop (a hog at 100%), which slows it more than a bash loop
// (75%); on a uniprocessor there is no sibling: pressure does not matter
// and only mprime's cache pollution (pollute_us) sets it apart.
func TestMprimePressesHarderThanAHog(t *testing.T) {
	done := func(preset, burner string) float64 {
		s := compileSim(t, preset, 1, false, "compile:work=10", burner)
		runToFinish(t, s, 100*engine.Second)
		return seconds(s.Workloads()[0].DoneAt)
	}
	mp, hog, bash := done("p4-ht-1c-2t", "mprime:n=1,nice=19"), done("p4-ht-1c-2t", "hog:nice=19"), done("p4-ht-1c-2t", "hog:nice=19,smt_pressure=75")
	t.Logf("HT: compile beside mprime %.2f s, hog 100%% %.2f s, hog 75%% %.2f s", mp, hog, bash)
	if !(mp > hog*1.05 && hog > bash*1.05) {
		t.Errorf("want mprime > nominal hog > bash loop, got %.2f, %.2f, %.2f", mp, hog, bash)
	}
	upMp, upHog := done("p4-up-1c-1t", "mprime:n=1,nice=19,pollute_us=0"), done("p4-up-1c-1t", "hog:nice=19")
	if upMp != upHog {
		t.Errorf("UP: mprime %.3f s vs hog %.3f s: no sibling, pressure must not matter", upMp, upHog)
	}
	if polluting := done("p4-up-1c-1t", "mprime:n=1,nice=19"); !(polluting > upHog) {
		t.Errorf("UP: a polluting mprime (%.3f s) does not slow the compile more than a hog (%.3f s)", polluting, upHog)
	}
}

// schbench -R: the dispatchers issue about R requests a second — a few
// per cent fewer, as in the tool: the sleep between batches does not
// subtract the batch's own time, usleep has timer slack and the
// dispatcher's own timer wakeup (here from an 80 µs C6) comes on top —
// and each request is one op and one latency sample.
func TestSchbenchRPSMode(t *testing.T) {
	for _, c := range []struct {
		spec string
		rate float64
	}{
		// t=3: 2 workers per batch, 500 batches/s, 2000 µs sleeps.
		{"schbench:m=1,t=3,c=100,R=1000", 1000},
		// R/m = 2000, t=16: 10 per batch, 200 batches/s, 5000 µs.
		{"schbench:m=2,t=16,c=1000,R=4000", 4000},
		// t=1: nr_to_wake clamps to 1.
		{"schbench:m=1,t=1,c=0,R=500", 500},
	} {
		s, err := engine.New(engine.Config{Machine: small(t, 1, 4, 1, 4, "interleaved"), Knobs: knob.Defaults(), Seed: 1, Debug: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Add(s, c.spec, ""); err != nil {
			t.Fatal(err)
		}
		const dur = 2
		s.RunUntil(dur * engine.Second)
		r := s.Workloads()[0]
		want := c.rate * dur
		t.Logf("%s: %d requests, latency %+v", c.spec, r.Ops, r.WakeupLatency)
		if f := float64(r.Ops); f < 0.9*want || f > want {
			t.Errorf("%s: %d requests in %d s, want ≈%.0f (a little below)", c.spec, r.Ops, dur, want)
		}
		if d := r.Ops - r.WakeupLatency.Count; d < 0 || d > 1 {
			t.Errorf("%s: %d latency samples for %d requests", c.spec, r.WakeupLatency.Count, r.Ops)
		}
		if r.WakeupLatency.Min < 1 {
			t.Errorf("%s: latency min %d, want ≥1 µs", c.spec, r.WakeupLatency.Min)
		}
	}
}

// Bad keys and values are named in the error.
func TestCompileBurnerRPSBadKeys(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"compile:jobs=4", `unknown key "jobs"`},
		{"compile:j=0", "key j"},
		{"compile:work=0", "key work"},
		{"compile:proc_costs=486", "key proc_costs"},
		{"compile:work=36000,burst_ms=1", "burst_ms"},
		{"mprime:n=-1", "key n"},
		{"mprime:threads=2", `unknown key "threads"`},
		{"schbench:m=4,R=3", "key R"},
		{"schbench:R=100,p=64", "R and p"},
		{"schbench:R=-5", "key R"},
	} {
		s, err := engine.New(engine.Config{Machine: small(t, 1, 2, 1, 2, "interleaved"), Knobs: knob.Defaults(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Add(s, c.spec, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.spec, err, c.want)
		}
	}
}
