package playground

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"schedplay/internal/json"

	"schedplay/engine"
	"schedplay/scenario"
)

// Arm is one running simulation of the page (A, or B in the split view).
type Arm struct {
	Label  string
	Config scenario.Config
	Sim    *engine.Sim
	// PolicyErr is why the arm's wake policy could not be set (it does
	// not compile, or the era has no select_idle_sibling): the arm is
	// built without it and does not run (Err).
	PolicyErr error
}

// Err is what stops the arm: its policy's compile error, or the error
// of the policy that stopped its run (scenario.PolicyError), else nil.
func (a *Arm) Err() error {
	if a.PolicyErr != nil {
		return a.PolicyErr
	}
	return scenario.PolicyError(a.Sim)
}

// App holds the page's simulations. Every method locks; a display that
// reads arms' engines directly (ui) must hold Lock while it does.
//
// A new state is built either at once (Apply) or a slice at a time in the
// background (Begin); while a background build runs, the previous
// simulations stay on show, frozen, and State is the state being built.
//
// A panic in the engine is recovered by the page (Fail): the run that
// panicked stops where it is, still drawable, with the link that
// reproduces it, until a new run is built.
type App struct {
	mu       sync.Mutex
	state    State
	arms     []*Arm
	paused   bool
	achieved float64 // simulated seconds per wall second, smoothed
	lastErr  string
	finished bool
	gen      int // bumped whenever the simulations are rebuilt
	job      *buildJob
	crash    *Crash
	halted   bool // the running simulations panicked: they stay frozen
	// pause is what a background build calls between slices; onStart,
	// what it calls first.
	pause   PauseFunc
	onStart func()
	// slice overrides BuildSlice (tests).
	slice time.Duration
}

// Crash describes a recovered panic for the page.
type Crash struct {
	Where   string `json:"where"`   // what the page was doing
	Message string `json:"message"` // the panic value
	Link    string `json:"link"`    // the share link (fragment, without '#') that reproduces it
	Stack   string `json:"-"`
}

// New returns an app running the default state.
func New() *App {
	a := &App{}
	if err := a.Apply(Default()); err != nil {
		panic("playground: default state does not build: " + err.Error())
	}
	return a
}

// Lock and Unlock guard the app for callers reading engines directly.
func (a *App) Lock()   { a.mu.Lock() }
func (a *App) Unlock() { a.mu.Unlock() }

// Arms returns the running arms (hold Lock while using them).
func (a *App) Arms() []*Arm { return a.arms }

// Generation changes whenever Apply or Reset rebuilt the simulations, so a
// display can drop what it remembered about the old ones.
func (a *App) Generation() int { return a.gen }

// State returns a copy of the current state: the one being built while
// a background build runs.
func (a *App) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.target().clone()
}

// target is the state being built, else the running one (hold mu).
func (a *App) target() *State {
	if a.job != nil {
		return &a.job.st
	}
	return &a.state
}

func (st State) clone() State {
	c := st
	c.Workloads = append([]string(nil), st.Workloads...)
	c.Knobs, c.KnobsB = map[string]string{}, map[string]string{}
	for k, v := range st.Knobs {
		c.Knobs[k] = v
	}
	for k, v := range st.KnobsB {
		c.KnobsB[k] = v
	}
	c.Extra = nil
	for _, m := range st.Extra {
		x := map[string]string{}
		for k, v := range m {
			x[k] = v
		}
		c.Extra = append(c.Extra, x)
	}
	return c
}

// Apply validates st and, if good, rebuilds the simulations from time
// zero at once, canceling any background build. On error the running
// simulations are kept.
func (a *App) Apply(st State) error {
	a.CancelBuild()
	if err := checkCheap(&st); err != nil {
		return err
	}
	if err := st.Validate(); err != nil {
		return err
	}
	arms, err := build(st)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.install(st, arms)
	return nil
}

// install makes arms (built from st) the running simulations (hold mu).
func (a *App) install(st State, arms []*Arm) {
	a.state, a.arms = st.clone(), arms
	a.finished, a.achieved = false, 0
	a.crash, a.halted = nil, false
	a.gen++
}

// PauseFunc is called by a background build between two slices with the
// wall time the slice that just ended took and whether it held one of
// the engine's indivisible steps (see BuildProgress.Steps).
type PauseFunc func(slice time.Duration, step bool)

// SetPause sets what a background build calls between two slices: in the
// browser a short sleep, which lets the browser run; by default
// runtime.Gosched.
func (a *App) SetPause(f PauseFunc) {
	a.mu.Lock()
	a.pause = f
	a.mu.Unlock()
}

// SetBuildStart sets a function every background build calls first, in
// its own goroutine (the page's test hook forces a panic there).
func (a *App) SetBuildStart(f func()) {
	a.mu.Lock()
	a.onStart = f
	a.mu.Unlock()
}

// Begin starts building st in the background, a slice at a time (see
// BuildSlice), canceling a build already running. since is when the
// caller's current work began (an event handler that parsed a link, say):
// the first slice counts from there (the zero time: from now). The
// running simulations stay on show, frozen, until the new ones replace
// them. done is called once the build ends — with nil after the new
// simulations replaced the old ones, with the error (a *PanicError for a
// panic) when it failed and the old ones were kept — unless a newer
// Begin, Apply or CancelBuild canceled it first. st is checked as it is
// built.
func (a *App) Begin(st State, since time.Time, done func(error)) {
	if since.IsZero() {
		since = time.Now()
	}
	j := newBuildJob(st)
	a.mu.Lock()
	if a.slice > 0 {
		j.slice = a.slice
	}
	if a.job != nil {
		a.job.canceled.Store(true)
	}
	a.job = j
	pause, onStart := a.pause, a.onStart
	a.mu.Unlock()
	if pause == nil {
		pause = func(time.Duration, bool) { runtime.Gosched() }
	}
	go func() {
		arms, err := j.run(since, onStart, pause)
		a.mu.Lock()
		if a.job != j {
			a.mu.Unlock()
			return // canceled: a newer build or Apply took over
		}
		a.job = nil
		if err == nil {
			a.install(j.st, arms)
		}
		a.mu.Unlock()
		if done != nil {
			done(err)
		}
	}()
}

// CancelBuild stops a background build; the running simulations stay.
// It reports whether one was running.
func (a *App) CancelBuild() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.job == nil {
		return false
	}
	a.job.canceled.Store(true)
	a.job = nil
	return true
}

// Building returns the progress of the background build, if one runs.
func (a *App) Building() (BuildProgress, bool) {
	a.mu.Lock()
	j := a.job
	a.mu.Unlock()
	if j == nil {
		return BuildProgress{}, false
	}
	return j.progress(), true
}

// Fail records a recovered panic for the page. With halt (a panic while
// stepping or reading the running simulations) they stop where they are,
// since they may be inconsistent, until a new run is built; without (a
// panic while building another run, reading a link) they go on. link is
// the fragment that reproduces it; "" means the running state's.
func (a *App) Fail(p *PanicError, link string, halt bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if link == "" {
		link = a.state.Encode()
	}
	a.crash = &Crash{Where: p.Where, Message: fmt.Sprint(p.Value), Link: link, Stack: p.Stack}
	a.halted = a.halted || halt
}

// ClearCrash hides the recovered panic; halted simulations stay halted.
func (a *App) ClearCrash() {
	a.mu.Lock()
	a.crash = nil
	a.mu.Unlock()
}

// Crashed returns the recovered panic on show, if any.
func (a *App) Crashed() *Crash {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.crash == nil {
		return nil
	}
	c := *a.crash
	return &c
}

// stopped reports whether the running simulations must not advance: a
// build is replacing them, or one of them panicked (hold mu).
func (a *App) stopped() bool {
	return a.job != nil || a.halted
}

// Halted reports whether the running simulations panicked and stopped.
func (a *App) Halted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.halted
}

func build(st State) ([]*Arm, error) {
	n := st.NumArms()
	var arms []*Arm
	for i := 0; i < n; i++ {
		cfg := st.Config(i)
		sim, err := cfg.Build()
		if err != nil {
			if n > 1 {
				return nil, fmt.Errorf("arm %c: %v", 'A'+i, err)
			}
			return nil, err
		}
		label := "A"
		if i == 1 {
			label = "B"
		}
		arms = append(arms, &Arm{Label: label, Config: cfg, Sim: sim})
	}
	return arms, nil
}

// Reset rebuilds the running simulations from time zero at once,
// canceling a background build.
func (a *App) Reset() error { return a.Apply(a.RunningState()) }

// RunningState returns a copy of the running simulations' state, whatever
// is being built.
func (a *App) RunningState() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.clone()
}

// SetPaused pauses or resumes the clock.
func (a *App) SetPaused(p bool) {
	a.mu.Lock()
	a.paused = p
	a.mu.Unlock()
}

// Paused reports whether the clock is paused.
func (a *App) Paused() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.paused
}

// SetSpeed sets simulated seconds per wall second (0: as fast as the frame
// budget allows).
func (a *App) SetSpeed(s float64) error {
	if !speedOK(s) {
		return fmt.Errorf("speed %g out of range (allowed: %g..%g, or 0 for max)", s, MinSpeed, MaxSpeed)
	}
	a.mu.Lock()
	a.state.Speed = s
	if a.job != nil {
		a.job.st.Speed = s
	}
	a.mu.Unlock()
	return nil
}

// Speed returns the set speed (simulated seconds per wall second; 0 =
// max) without copying the state.
func (a *App) Speed() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.target().Speed
}

// AchievedSpeed is the simulated seconds per wall second actually reached
// over the last frames.
func (a *App) AchievedSpeed() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.achieved
}

// Finished reports whether every finite workload has finished.
func (a *App) Finished() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.finished
}

// SetError records a message for the page; "" clears it.
func (a *App) SetError(msg string) {
	a.mu.Lock()
	a.lastErr = msg
	a.mu.Unlock()
}

// Error returns the last recorded message.
func (a *App) Error() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastErr
}

// Now is arm A's simulated time.
func (a *App) Now() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.arms[0].Sim.Now()
}

// checkEvery is how many events run between looks at the wall clock.
const checkEvery = 256

// Advance moves the simulations forward for one frame that lasted frame of
// wall time, by Speed × frame of simulated time (unlimited at speed 0),
// spending at most budget of wall time. Every arm reaches the same
// simulated time, so the split view compares like with like.
func (a *App) Advance(frame, budget time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.paused || a.finished || frame <= 0 || a.stopped() {
		return
	}
	start := time.Now()
	from := a.arms[0].Sim.Now()
	target := int64(-1)
	if speedOK(a.state.Speed) && a.state.Speed > 0 {
		target = from + int64(a.state.Speed*float64(frame))
	}
	deadline := start.Add(budget)
	for {
		lead := a.arms[0].Sim
		next := lead.NextEventTime()
		if next < 0 || (target >= 0 && next > target) {
			if target >= 0 {
				for _, arm := range a.arms {
					arm.Sim.RunUntil(target)
				}
			}
			break
		}
		stopped := false
		for i := 0; i < checkEvery; i++ {
			next = lead.NextEventTime()
			if next < 0 || (target >= 0 && next > target) {
				break
			}
			lead.Step()
			if lead.AllFinished() {
				stopped = true
				break
			}
		}
		for _, arm := range a.arms[1:] {
			arm.Sim.RunUntil(lead.Now())
		}
		if stopped {
			a.finished = true
			break
		}
		if time.Now().After(deadline) {
			break
		}
	}
	adv := float64(a.arms[0].Sim.Now()-from) / float64(engine.Second)
	sp := adv / frame.Seconds()
	if math.IsNaN(sp) || math.IsInf(sp, 0) {
		sp = 0
	}
	if a.achieved == 0 {
		a.achieved = sp
	} else {
		a.achieved += (sp - a.achieved) / 8
	}
}

// StepWakeup runs arm A until its next wakeup decision (at most 10
// simulated seconds ahead), then the other arms to the same time.
func (a *App) StepWakeup() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped() {
		return
	}
	lead := a.arms[0].Sim
	before := lead.Totals().Wakeups
	limit := lead.Now() + 10*engine.Second
	for lead.Totals().Wakeups == before {
		next := lead.NextEventTime()
		if next < 0 || next > limit || lead.AllFinished() {
			break
		}
		lead.Step()
	}
	for _, arm := range a.arms[1:] {
		arm.Sim.RunUntil(lead.Now())
	}
}

// RunTo runs every arm to simulated time t (or until the finite workloads
// finish), as `schedsim run --duration t` does, ignoring the frame budget.
func (a *App) RunTo(t int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped() {
		return
	}
	for _, arm := range a.arms {
		scenario.Advance(arm.Sim, t)
	}
	if a.arms[0].Sim.AllFinished() {
		a.finished = true
	}
}

// Results is the JSON of every arm's result, in the shape of `schedsim
// run --format json` (sim_wall_s 0): {"A": {...}, "B": {...}}.
func (a *App) Results() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]*scenario.Result{}
	for _, arm := range a.arms {
		cfg := arm.Config
		r := scenario.Summarize(&cfg, arm.Sim, 0)
		out[arm.Label] = r
	}
	return json.MarshalIndent(out, "", "  ")
}

// Link is the share-link fragment of the current state (without '#').
func (a *App) Link() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.target().Encode()
}

// RunningLink is the share-link fragment of the running simulations
// (without '#'), whatever is being built.
func (a *App) RunningLink() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Encode()
}

// Clone returns a deep copy of st.
func (st State) Clone() State { return st.clone() }

// CheckCheap is what a build checks first (workloads, speed), without
// laying out the machine.
func CheckCheap(st *State) error { return checkCheap(st) }
