package scenario

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"schedplay/engine"
)

func smallConfig() Config {
	return Config{Preset: "p4-ht-1c-2t", Workloads: []string{"schbench:m=1,t=2"}, Seed: 1, Duration: 3600 * engine.Second}
}

// A cancelled context stops a run between two events; the part done is
// summarised and ErrInterrupted returned.
func TestRunContextStopsWithThePartDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := RunContext(ctx, smallConfig())
	if !errors.Is(err, ErrInterrupted) || r == nil {
		t.Fatalf("got %v, %v; want a result and ErrInterrupted", r, err)
	}
	if r.DurationS >= 3600 {
		t.Fatalf("ran to the end: %v s", r.DurationS)
	}
	c := smallConfig()
	c.Duration = 20 * engine.Millisecond
	if r, err := RunContext(context.Background(), c); err != nil || r.DurationS != 0.02 {
		t.Fatalf("an uninterrupted run: %v, %v", r, err)
	}
}

func TestRunManyContextInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs, err := RunManyContext(ctx, smallConfig(), 3)
	if !errors.Is(err, ErrInterrupted) || rs != nil {
		t.Fatalf("got %v, %v", rs, err)
	}
}

// A panic in one of RunMany's goroutines comes back as a *RunPanic on the
// caller's goroutine (where a recover can catch it) instead of ending the
// process with exit status 2.
func TestRunManyRaisesRunPanicsOnTheCallersGoroutine(t *testing.T) {
	defer func(f func(context.Context, Config) (*Result, error)) { runOne = f }(runOne)
	runOne = func(ctx context.Context, c Config) (*Result, error) {
		if c.Seed == 12 {
			panic("boom")
		}
		return RunContext(ctx, c)
	}
	c := smallConfig()
	c.Seed, c.Duration = 10, engine.Millisecond
	defer func() {
		p := recover()
		rp, ok := p.(*RunPanic)
		if !ok || rp.Seed != 12 || rp.Value != "boom" || len(rp.Stack) == 0 {
			t.Fatalf("recovered %#v, want a *RunPanic for seed 12", p)
		}
	}()
	RunMany(c, 4)
	t.Fatal("RunMany returned")
}

// Parallel runs are bounded by memory: a run that needs more than the
// budget allows runs alone, a small one runs on every core.
func TestParallelRunsFitMemoryBudget(t *testing.T) {
	old := MemoryBudget
	defer func() { MemoryBudget = old }()
	c := Config{Preset: "intel-2s-44c-88t", Workloads: []string{"hackbench:g=8"}, Seed: 1, Duration: engine.Millisecond}
	per := RunFootprint(c)
	if per <= 0 {
		t.Fatal("no footprint")
	}
	MemoryBudget = per - 1
	if n := parallelRuns(c, 8); n != 1 {
		t.Fatalf("budget below one run: %d at once, want 1", n)
	}
	MemoryBudget = 1 << 40
	if n, want := parallelRuns(c, 8), min(8, runtime.GOMAXPROCS(0)); n != want {
		t.Fatalf("ample budget: %d at once, want %d", n, want)
	}
}

// A finite workload beside an endless one that measures something does
// not end the run: --duration holds and the endless one keeps sampling;
// beside background load only (hogs) the run ends when the finite one
// has finished. A finished workload's throughput is over its own run.
func TestFiniteWorkloadEndsTheRunOnlyBesideBackground(t *testing.T) {
	run := func(ws ...string) *Result {
		t.Helper()
		r, err := Run(Config{Preset: "amd-7950x-16c-32t", Workloads: ws, Seed: 1, Duration: 500 * engine.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	alone := run("hackbench:g=2,l=100")
	withSch := run("hackbench:g=2,l=100", "schbench:m=1,t=4")
	withHog := run("hackbench:g=2,l=100", "hog:n=4")
	if alone.DurationS >= 0.5 || alone.Workloads[0].CompletionS == nil {
		t.Fatalf("hackbench alone: ran %v s, completion %v; want it to end the run early", alone.DurationS, alone.Workloads[0].CompletionS)
	}
	if withSch.DurationS != 0.5 {
		t.Fatalf("hackbench beside schbench ended the run at %v s, want the whole 0.5 s", withSch.DurationS)
	}
	if withHog.DurationS >= 0.5 {
		t.Fatalf("hackbench beside hogs ran %v s, want it to end when hackbench finished", withHog.DurationS)
	}
	hb := withSch.Workloads[0]
	if hb.CompletionS == nil || hb.ThroughputOpsS == nil || *hb.CompletionS >= 0.5 {
		t.Fatalf("hackbench beside schbench: completion %v, throughput %v", hb.CompletionS, hb.ThroughputOpsS)
	}
	// The same messages as alone, at the rate of its own run.
	if a, b := *alone.Workloads[0].ThroughputOpsS**alone.Workloads[0].CompletionS, *hb.ThroughputOpsS**hb.CompletionS; b < a*0.99 || b > a*1.01 {
		t.Fatalf("hackbench's ops: %v alone, %v beside schbench (throughput × completion)", a, b)
	}
	if withSch.Workloads[1].WakeupLatencyUS.Count == 0 {
		t.Fatal("schbench beside hackbench recorded no samples")
	}
}
