package playground

import (
	"fmt"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/scenario"
)

// Arm is one running simulation of the page (A, or B in the split view).
type Arm struct {
	Label  string
	Config scenario.Config
	Sim    *engine.Sim
}

// App holds the page's simulations. Every method locks; a display that
// reads arms' engines directly (ui) must hold Lock while it does.
type App struct {
	mu       sync.Mutex
	state    State
	arms     []*Arm
	paused   bool
	achieved float64 // simulated seconds per wall second, smoothed
	lastErr  string
	finished bool
	gen      int // bumped whenever the simulations are rebuilt
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

// State returns a copy of the current state.
func (a *App) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.clone()
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
	return c
}

// Apply validates st and, if good, rebuilds the simulations from time
// zero. On error the running simulations are kept.
func (a *App) Apply(st State) error {
	if err := st.Validate(); err != nil {
		return err
	}
	arms, err := build(st)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state, a.arms = st.clone(), arms
	a.finished, a.achieved = false, 0
	a.gen++
	return nil
}

func build(st State) ([]*Arm, error) {
	n := 1
	if st.AB {
		n = 2
	}
	var arms []*Arm
	for i := 0; i < n; i++ {
		cfg := st.Config(i)
		sim, err := cfg.Build()
		if err != nil {
			if n == 2 {
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

// Reset rebuilds the current state's simulations from time zero.
func (a *App) Reset() error { return a.Apply(a.State()) }

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
	if s != 0 && (s < MinSpeed || s > MaxSpeed) {
		return fmt.Errorf("speed %g out of range (allowed: %g..%g, or 0 for max)", s, MinSpeed, MaxSpeed)
	}
	a.mu.Lock()
	a.state.Speed = s
	a.mu.Unlock()
	return nil
}

// Speed returns the set speed (simulated seconds per wall second; 0 =
// max) without copying the state.
func (a *App) Speed() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Speed
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
	if a.paused || a.finished || frame <= 0 {
		return
	}
	start := time.Now()
	from := a.arms[0].Sim.Now()
	target := int64(-1)
	if a.state.Speed > 0 {
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
	return a.state.Encode()
}
