package playground

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"schedplay/engine"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/scenario"
)

// Building a run a slice at a time.
//
// In the browser nothing preempts a Go computation: while Go runs, the tab
// runs nothing else. A run of a big machine creates tens of thousands of
// tasks (each a fork placement), which took tens of seconds in one piece.
// A build job therefore does the work of scenario.Config.Build in steps —
// the machine, each arm's engine, then every task of every workload (the
// workload builders report each task they create) — and calls its pause
// function whenever BuildSlice has passed since the last one. The page's
// pause sleeps, which hands the browser back its event loop (frames,
// input, the panel) before the next slice. A newer build cancels the
// running one at its next task.

// BuildSlice is the longest a build runs between two pauses, apart from
// the steps it cannot divide (building the machine's topology, creating an
// engine: tens of ms for 2048 CPUs in WebAssembly).
const BuildSlice = 8 * time.Millisecond

// errCanceled ends a build that a newer one replaced.
var errCanceled = errors.New("build canceled")

// PanicError is a Go panic inside the engine or the page's model, caught
// so that the page can show it and keep running.
type PanicError struct {
	Where string // what the page was doing: "building the run", …
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic while %s: %v", e.Where, e.Value) }

// Recovered turns a recovered panic value into a *PanicError with the
// current goroutine's stack (call it in the deferred function).
func Recovered(where string, r any) *PanicError {
	return &PanicError{Where: where, Value: r, Stack: string(debug.Stack())}
}

// BuildProgress is what the page shows while a run builds.
type BuildProgress struct {
	Phase      string  `json:"phase"` // "machine", "engine", "tasks"
	Arm        string  `json:"arm"`   // "A" or "B"
	Arms       int     `json:"arms"`
	Machine    string  `json:"machine"`
	CPUs       int     `json:"cpus"`
	Workload   string  `json:"workload"`   // the workload being created
	Tasks      int     `json:"tasks"`      // tasks created so far in this arm
	TasksTotal int     `json:"tasksTotal"` // this arm's total when known (arm B: arm A's), else 0
	ElapsedMs  float64 `json:"elapsedMs"`
	Slices     int     `json:"slices"`     // pauses so far
	MaxSliceMs float64 `json:"maxSliceMs"` // the longest stretch between two pauses, steps apart
	// Steps are the engine's indivisible steps so far (laying out the
	// machine, setting up an arm's engine) with how long each took; one
	// that takes a slice or more runs alone between two pauses.
	Steps []BuildStep `json:"steps"`
	Link  string      `json:"-"` // the run being built (state()'s link says it)
}

// BuildStep is one indivisible step of a build and its wall time.
type BuildStep struct {
	Name string  `json:"name"`
	Ms   float64 `json:"ms"`
}

// Text describes the progress for a person: "2048 CPUs, arm A: 12,345
// of 32,768 tasks (netperf:n=16384)".
func (p BuildProgress) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s CPUs", group(int64(p.CPUs)))
	if p.Arms > 1 {
		fmt.Fprintf(&b, ", arm %s of %d", p.Arm, p.Arms)
	}
	switch p.Phase {
	case "machine":
		b.WriteString(": laying out the machine")
	case "engine":
		b.WriteString(": setting up the scheduler")
	default:
		fmt.Fprintf(&b, ": %s", group(int64(p.Tasks)))
		if p.TasksTotal > 0 {
			fmt.Fprintf(&b, " of %s", group(int64(p.TasksTotal)))
		}
		b.WriteString(" tasks")
		if p.Workload != "" {
			fmt.Fprintf(&b, " (%s)", p.Workload)
		}
	}
	return b.String()
}

// group writes n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + group(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// buildJob builds the arms of one state.
type buildJob struct {
	st       State
	slice    time.Duration // BuildSlice, or less in tests
	canceled atomic.Bool
	started  time.Time
	only     int // build only this arm (-1: all)

	mu   sync.Mutex
	prog BuildProgress
}

func newBuildJob(st State) *buildJob {
	j := &buildJob{st: st.clone(), slice: BuildSlice, started: time.Now(), only: -1}
	j.prog.Link = j.st.Encode()
	j.prog.Machine = j.st.Preset
	return j
}

func (j *buildJob) progress() BuildProgress {
	j.mu.Lock()
	defer j.mu.Unlock()
	p := j.prog
	p.Steps = append([]BuildStep(nil), p.Steps...)
	p.ElapsedMs = float64(time.Since(j.started).Microseconds()) / 1e3
	return p
}

func (j *buildJob) update(f func(p *BuildProgress)) {
	j.mu.Lock()
	f(&j.prog)
	j.mu.Unlock()
}

// checkCheap is what State.Validate checks besides the machine and the
// workloads (which building checks as it goes), written so that no value
// the link parser lets through (NaN) passes.
func checkCheap(st *State) error {
	if len(st.Workloads) == 0 {
		return fmt.Errorf("no workload (add one, e.g. %s)", DefaultWorkload)
	}
	if len(st.Workloads) > MaxWorkloads {
		return fmt.Errorf("%d workloads: at most %d", len(st.Workloads), MaxWorkloads)
	}
	if !speedOK(st.Speed) {
		return fmt.Errorf("speed %g out of range (allowed: %g..%g, or max)", st.Speed, MinSpeed, MaxSpeed)
	}
	return nil
}

// speedOK accepts 0 (max) and MinSpeed..MaxSpeed; NaN and ±Inf fail.
func speedOK(s float64) bool {
	return s == 0 || (s >= MinSpeed && s <= MaxSpeed && !math.IsInf(s, 0))
}

// run builds the arms, calling onStart (if set) first and pause whenever the slice (BuildSlice) has
// passed since the last pause, or since since for the first one (the
// caller's own work — an event handler that read a link — counts against
// it). A small run is thus built in one go. It returns errCanceled once
// the job is canceled, and a *PanicError if anything panicked.
func (j *buildJob) run(since time.Time, onStart func(), pause PauseFunc) (arms []*Arm, err error) {
	defer func() {
		if r := recover(); r != nil {
			arms, err = nil, Recovered("building the run", r)
		}
	}()
	if onStart != nil {
		onStart()
	}
	// sliceStart is what the budget counts from; workStart, when this
	// build's own work in the slice began (what MaxSliceMs reports).
	sliceStart, workStart := since, time.Now()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	// pauseNow ends the slice; a slice that held a step is not counted
	// as one.
	pauseNow := func(step bool) error {
		d := time.Since(workStart)
		j.update(func(p *BuildProgress) {
			p.Slices++
			if !step {
				p.MaxSliceMs = max(p.MaxSliceMs, ms(d))
			}
		})
		pause(d, step)
		if j.canceled.Load() {
			return errCanceled
		}
		sliceStart = time.Now()
		workStart = sliceStart
		return nil
	}
	// yield pauses when the slice is used up; it is cheap enough to call
	// after every task.
	yield := func() error {
		if j.canceled.Load() {
			return errCanceled
		}
		if time.Since(sliceStart) >= j.slice {
			return pauseNow(false)
		}
		return nil
	}
	// step runs one indivisible step, timed: in a fresh slice unless the
	// current one is young, and followed by a pause when it used up a
	// slice by itself (a big machine), which then does not count as one.
	step := func(name string, f func() error) error {
		if time.Since(sliceStart) > j.slice/2 {
			if err := pauseNow(false); err != nil {
				return err
			}
		}
		start := time.Now()
		err := f()
		d := time.Since(start)
		j.update(func(p *BuildProgress) { p.Steps = append(p.Steps, BuildStep{name, ms(d)}) })
		if err != nil {
			return err
		}
		if d >= j.slice {
			return pauseNow(true)
		}
		return yield()
	}

	st := &j.st
	if err := checkCheap(st); err != nil {
		return nil, err
	}
	n := st.NumArms()
	armErr := func(i int, err error) error {
		if n > 1 {
			return fmt.Errorf("arm %c: %v", 'A'+i, err)
		}
		return err
	}
	cfgs := make([]scenario.Config, n)
	for i := range cfgs {
		cfgs[i] = st.Config(i)
		if err := cfgs[i].Validate(); err != nil {
			return nil, armErr(i, err)
		}
	}
	spec, err := st.MachineSpec()
	if err != nil {
		return nil, err
	}
	j.update(func(p *BuildProgress) {
		p.Phase, p.Arm, p.Arms, p.Machine, p.CPUs = "machine", "A", n, spec.Name, spec.NumCPUs()
	})
	// One topology serves both arms: the engine only reads it.
	var tp *machine.Topology
	if err := step("machine layout", func() (err error) {
		tp, err = machine.Build(spec)
		if err != nil {
			return fmt.Errorf("machine %s: %v", spec.Name, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	j.update(func(p *BuildProgress) { p.CPUs = tp.NCPU })
	// Everything scenario.Config.Check refuses, for every arm, before the
	// first task: a bad arm B must not cost the whole of arm A first.
	type armSetup struct {
		cfg    engine.Config
		polErr error
	}
	setups := make([]armSetup, n)
	for i, cfg := range cfgs {
		k, err := scenario.KnobValues(spec, cfg.Knobs)
		if err != nil {
			return nil, armErr(i, err)
		}
		for _, w := range cfg.Workloads {
			if err := workload.Check(w, tp.NCPU); err != nil {
				return nil, armErr(i, err)
			}
		}
		setups[i].cfg = engine.Config{Machine: tp, Knobs: k, Seed: cfg.Seed, Debug: cfg.Debug}
		if pol := st.ArmPolicy(i); pol.IsSet() {
			prog, err := CompilePolicy(pol)
			if err != nil {
				setups[i].polErr = err
			} else {
				setups[i].cfg.WakePolicy = prog.New()
			}
		}
	}
	armTasks := 0
	for i, cfg := range cfgs {
		if j.only >= 0 && i != j.only {
			continue
		}
		label := string(rune('A' + i))
		j.update(func(p *BuildProgress) {
			p.Phase, p.Arm, p.Tasks, p.Workload = "engine", label, 0, ""
			p.TasksTotal = armTasks
		})
		var sim *engine.Sim
		if err := step("engine setup, arm "+label, func() (err error) {
			sim, err = engine.New(setups[i].cfg)
			if err != nil && setups[i].cfg.WakePolicy != nil {
				// The era has no select_idle_sibling to replace: the
				// arm is built without the policy and says why.
				setups[i].polErr = fmt.Errorf("%s: %v", st.ArmPolicy(i).Name, err)
				setups[i].cfg.WakePolicy = nil
				sim, err = engine.New(setups[i].cfg)
			}
			if err != nil {
				return armErr(i, err)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		j.update(func(p *BuildProgress) { p.Phase = "tasks" })
		// The workloads as scenario.Config.Build names them.
		seen := map[string]int{}
		for _, w := range cfg.Workloads {
			sp, err := workload.Parse(w)
			if err != nil {
				return nil, armErr(i, err)
			}
			seen[sp.Kind]++
			name := sp.Kind
			if seen[sp.Kind] > 1 {
				name = fmt.Sprintf("%s#%d", sp.Kind, seen[sp.Kind])
			}
			j.update(func(p *BuildProgress) { p.Workload = w })
			if err := yield(); err != nil {
				return nil, err
			}
			_, err = workload.AddSpecEach(sim, sp, name, func() error {
				j.update(func(p *BuildProgress) { p.Tasks++ })
				return yield()
			})
			if err != nil {
				if errors.Is(err, errCanceled) {
					return nil, err
				}
				return nil, armErr(i, err)
			}
		}
		armTasks = sim.NumTasks()
		arms = append(arms, &Arm{Label: label, Config: cfg, Sim: sim, PolicyErr: setups[i].polErr})
	}
	return arms, nil
}

// BuildArm builds arm (0: A, 1: B) of st a slice at a time, as a
// background build of App does, for an engine worker that runs one arm:
// pause is called between slices, progress (if set) with the progress at
// each pause, and canceled is read at every task. A panic is returned as a
// *PanicError.
func BuildArm(st State, arm int, onStart func(), pause PauseFunc, progress func(BuildProgress), canceled *atomic.Bool) (*Arm, error) {
	j := newBuildJob(st)
	j.only = arm
	if n := len(st.armsWanted()); arm < 0 || arm >= n {
		return nil, fmt.Errorf("arm %d: the state has %d", arm, n)
	}
	p := func(d time.Duration, step bool) {
		if canceled != nil && canceled.Load() {
			j.canceled.Store(true)
		}
		if progress != nil {
			progress(j.progress())
		}
		pause(d, step)
		if canceled != nil && canceled.Load() {
			j.canceled.Store(true)
		}
	}
	arms, err := j.run(time.Now(), onStart, p)
	if err != nil {
		return nil, err
	}
	if len(arms) != 1 {
		return nil, fmt.Errorf("arm %d: built %d arms", arm, len(arms))
	}
	return arms[0], nil
}

// IsCanceled reports whether err is a build's cancellation.
func IsCanceled(err error) bool { return errors.Is(err, errCanceled) }

// armsWanted lists the arm labels st runs.
func (st *State) armsWanted() []string {
	var out []string
	for i := 0; i < st.NumArms(); i++ {
		out = append(out, string(rune('A'+i)))
	}
	return out
}
