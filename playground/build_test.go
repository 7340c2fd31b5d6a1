package playground

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/scenario"
)

// begin runs a background build and waits for its done.
func begin(t *testing.T, a *App, st State) error {
	t.Helper()
	done := make(chan error, 1)
	a.Begin(st, time.Time{}, func(err error) { done <- err })
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatal("the build did not finish")
		return nil
	}
}

// A run built a slice at a time — pausing after every task — is the run
// scenario.Config.Build makes: same tasks, same placements, same results.
func TestBackgroundBuildMatchesScenarioBuild(t *testing.T) {
	exp, err := Parse("#exp=v1-sis-schbench")
	if err != nil {
		t.Fatal(err)
	}
	multi := Default()
	multi.Preset = "amd-7950x-16c-32t"
	multi.Workloads = []string{"hog:n=4,nice=19", "schbench:m=1,t=4", "hog:n=2,place=core", "hackbench:g=2,l=50"}
	multi.Seed = 11
	for name, st := range map[string]State{"default": Default(), "experiment A/B": exp, "four workloads": multi} {
		t.Run(name, func(t *testing.T) {
			a := New()
			a.slice = time.Nanosecond // pause after every task
			var pauses atomic.Int64
			a.SetPause(func(time.Duration, bool) { pauses.Add(1) })
			if err := begin(t, a, st); err != nil {
				t.Fatal(err)
			}
			a.Lock()
			arms := a.Arms()
			tasks := 0 // created by the builders (hackbench forks more as it runs)
			for _, arm := range arms {
				tasks += arm.Sim.NumTasks()
			}
			a.Unlock()
			const until = 80 * engine.Millisecond
			a.RunTo(until)
			wantArms := st.NumArms()
			if len(arms) != wantArms {
				t.Fatalf("%d arms, want %d", len(arms), wantArms)
			}
			for i, arm := range arms {
				cfg := st.Config(i)
				sim, err := cfg.Build()
				if err != nil {
					t.Fatal(err)
				}
				scenario.Advance(sim, until)
				got, _ := json.Marshal(scenario.Summarize(&arm.Config, arm.Sim, 0))
				want, _ := json.Marshal(scenario.Summarize(&cfg, sim, 0))
				if string(got) != string(want) {
					t.Errorf("arm %s differs from scenario.Build:\n got %s\nwant %s", arm.Label, got, want)
				}
			}
			if n := pauses.Load(); n < int64(tasks) {
				t.Errorf("%d pauses for %d tasks: the build did not pause after every task", n, tasks)
			}
		})
	}
}

// A newer build cancels the running one at its next task: only the newer
// one's done is called, and its run replaces the old one.
func TestNewBuildCancelsTheRunningOne(t *testing.T) {
	a := New()
	big := Default()
	big.Preset = "amd-zen4-2s-256c-512t"
	big.Workloads = []string{"netperf:n=4096"}
	small := Default()
	small.Seed = 77

	a.slice = time.Nanosecond // pause after every task
	var pauses atomic.Int64
	second := make(chan error, 1)
	a.SetPause(func(time.Duration, bool) {
		if pauses.Add(1) == 20 { // well inside the big build
			a.Begin(small, time.Time{}, func(err error) { second <- err })
		}
	})
	first := make(chan error, 1)
	a.Begin(big, time.Time{}, func(err error) { first <- err })
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-first:
		t.Fatalf("the canceled build finished (err %v)", err)
	case <-time.After(time.Minute):
		t.Fatal("no build finished")
	}
	if got := a.State(); got.Seed != 77 || got.Preset != DefaultPreset {
		t.Errorf("state after the newer build: %+v", got)
	}
	a.Lock()
	ncpu := a.Arms()[0].Sim.Topology().NCPU
	a.Unlock()
	if ncpu != 88 {
		t.Errorf("running %d CPUs, want the small run's 88", ncpu)
	}
	select {
	case err := <-first:
		t.Errorf("the canceled build called done (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, building := a.Building(); building {
		t.Error("still building")
	}

	// CancelBuild keeps the running run.
	a.SetPause(func(time.Duration, bool) { time.Sleep(time.Millisecond) })
	a.slice = 0
	a.Begin(big, time.Time{}, func(err error) { first <- err })
	if p, ok := a.Building(); !ok || p.Link == "" {
		t.Fatalf("no build in progress: %+v", p)
	}
	if st := a.State(); st.Preset != big.Preset {
		t.Errorf("State while building is %q, want the run being built", st.Preset)
	}
	if !a.CancelBuild() {
		t.Fatal("CancelBuild found nothing to cancel")
	}
	if st := a.State(); st.Seed != 77 {
		t.Errorf("State after CancelBuild: %+v", st)
	}
}

// Progress names the machine, the arm and the tasks, and the engine's
// indivisible steps each sit alone between two pauses.
func TestBuildProgress(t *testing.T) {
	a := New()
	st := Default()
	st.Preset = "amd-zen4-2s-256c-512t"
	st.Workloads = []string{"netperf:n=512"}
	st.AB = true
	st.KnobsB["SIS_CORE"] = "false"
	var last BuildProgress
	var seen atomic.Bool
	a.SetPause(func(time.Duration, bool) {
		if p, ok := a.Building(); ok && p.Phase == "tasks" && p.Arm == "B" && p.Tasks > 0 {
			last = p
			seen.Store(true)
		}
	})
	a.slice = time.Microsecond
	if err := begin(t, a, st); err != nil {
		t.Fatal(err)
	}
	if !seen.Load() {
		t.Fatal("no progress seen in arm B")
	}
	if last.CPUs != 512 || last.Arms != 2 || last.TasksTotal != 1024 || last.Workload != "netperf:n=512" {
		t.Errorf("progress %+v", last)
	}
	text := last.Text()
	for _, want := range []string{"512 CPUs", "arm B of 2", "of 1,024 tasks", "netperf:n=512"} {
		if !strings.Contains(text, want) {
			t.Errorf("progress text %q lacks %q", text, want)
		}
	}
	var names []string
	for _, s := range last.Steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "machine layout,engine setup, arm A,engine setup, arm B" {
		t.Errorf("steps %v", names)
	}
}

// A panic while building is returned as a *PanicError; the running run
// goes on.
func TestBuildPanicIsRecovered(t *testing.T) {
	a := New()
	a.Lock()
	gen := a.Generation()
	a.Unlock()
	a.SetBuildStart(func() { panic("boom") })
	st := Default()
	st.Seed = 5
	err := begin(t, a, st)
	var p *PanicError
	if !errors.As(err, &p) || p.Where != "building the run" || p.Value != "boom" || !strings.Contains(p.Stack, "run") {
		t.Fatalf("err %v, want a *PanicError for boom", err)
	}
	a.Lock()
	same := a.Generation() == gen
	a.Unlock()
	if !same || a.State().Seed != DefaultSeed {
		t.Error("the failed build replaced the running run")
	}
	a.SetBuildStart(nil)
	a.Fail(p, st.Encode(), false)
	if c := a.Crashed(); c == nil || c.Link != st.Encode() || c.Message != "boom" || a.Halted() {
		t.Errorf("crash %+v halted %v", c, a.Halted())
	}
	before := a.Now()
	a.Advance(50*time.Millisecond, time.Second)
	if a.Now() == before {
		t.Error("a build panic stopped the running run")
	}
}

// A panic while running halts the run (Advance, StepWakeup and RunTo do
// nothing) until a new run is built, which clears it.
func TestFailHaltsTheRun(t *testing.T) {
	a := New()
	a.Advance(20*time.Millisecond, time.Second)
	a.Fail(Recovered("running the simulation", "bad"), "", true)
	c := a.Crashed()
	if c == nil || c.Link != a.Link() || !a.Halted() {
		t.Fatalf("crash %+v halted %v", c, a.Halted())
	}
	now := a.Now()
	a.Advance(50*time.Millisecond, time.Second)
	a.StepWakeup()
	a.RunTo(now + engine.Second)
	if a.Now() != now {
		t.Errorf("a halted run moved: %d -> %d", now, a.Now())
	}
	if err := a.Apply(Default()); err != nil {
		t.Fatal(err)
	}
	if a.Crashed() != nil || a.Halted() {
		t.Error("a new run did not clear the crash")
	}
}

// NaN or infinite speeds never get in, whatever the link parser lets
// through.
func TestNonFiniteSpeedIsRefused(t *testing.T) {
	a := New()
	for _, s := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		if err := a.SetSpeed(s); err == nil {
			t.Errorf("SetSpeed(%v) accepted", s)
		}
		st := Default()
		st.Speed = s
		if err := a.Apply(st); err == nil || !strings.Contains(err.Error(), "speed") {
			t.Errorf("Apply with speed %v: %v", s, err)
		}
		if err := begin(t, a, st); err == nil || !strings.Contains(err.Error(), "speed") {
			t.Errorf("Begin with speed %v: %v", s, err)
		}
	}
	if a.Speed() != DefaultSpeed {
		t.Errorf("speed %v", a.Speed())
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 32768: "32,768", 1234567: "1,234,567", -4096: "-4,096"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
