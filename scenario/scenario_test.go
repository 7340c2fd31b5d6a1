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
