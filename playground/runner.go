package playground

import (
	"schedplay/internal/json"
	"time"

	"schedplay/engine"
	"schedplay/scenario"
)

// A Runner advances one arm in an engine worker: at Speed × wall time, or
// as fast as it can (Speed 0), never past Limit (the other arm's time
// plus a lead, so the A/B arms stay side by side while each runs in its
// own worker), until the finite workloads finish. It measures its own
// simulated-time rate and events per second.
type Runner struct {
	Arm    *Arm
	Seq    int64
	Speed  float64
	Paused bool
	Limit  int64 // -1: none
	Halted bool  // a panic stopped it
	// Log keeps the last decisions in full for the page's decision
	// panel.
	Log *DecisionLog

	finished bool
	behind   bool    // the last Run stopped at its budget (Behind)
	goal     float64 // the simulated time real-time play aims for
	last     time.Time
	dec      int64 // DecisionsSince cursor
	// The rate window.
	winStart        time.Time
	winNow, winEvts int64
	simRate, evRate float64
	// The pace window: Run's own working time and the simulated time it
	// covered (waiting at a limit or for real time excluded).
	busyWall time.Duration
	busySim  int64
	pace     float64
}

// NewRunner runs arm, built for build seq.
func NewRunner(arm *Arm, seq int64, speed float64, paused bool) *Runner {
	r := &Runner{Arm: arm, Seq: seq, Speed: speed, Paused: paused, Limit: -1, Log: Attach(arm.Sim)}
	if arm.Config.WakePolicy != nil && arm.PolicyErr == nil {
		r.Log.Policy = arm.Config.WakePolicy.Name()
	}
	r.Resync()
	return r
}

// Resync restarts real-time play from the current simulated time (after
// a pause, a step, a change of speed).
func (r *Runner) Resync() {
	r.goal = float64(r.Arm.Sim.Now())
	r.last = time.Time{}
}

// Finished reports whether every finite workload finished.
func (r *Runner) Finished() bool { return r.finished }

// stopped: paused, finished or halted — Run does nothing.
func (r *Runner) stopped() bool { return r.Paused || r.finished || r.Halted || r.Arm.Err() != nil }

// Active reports whether Run would advance the simulation.
func (r *Runner) Active() bool {
	if r.stopped() {
		return false
	}
	next := r.Arm.Sim.NextEventTime()
	return next >= 0 && (r.Limit < 0 || next <= r.Limit)
}

// maxCatchUp bounds how far behind real time play may fall before it
// gives up catching up (a heavy machine, a stall).
const maxCatchUp = 250 * time.Millisecond

// Held reports whether the runner waits at its Limit (side by side: the
// other arms must catch up before it may go on).
func (r *Runner) Held() bool {
	if r.stopped() || r.Limit < 0 {
		return false
	}
	next := r.Arm.Sim.NextEventTime()
	return next >= 0 && next > r.Limit
}

// Behind reports whether the last Run stopped at its wall-time budget
// with simulated time still to catch up (as fast as possible always is):
// the caller should run again at once. Otherwise it reached real time ×
// speed (or its limit, or the end), and may wait for the next frame.
func (r *Runner) Behind() bool { return r.behind }

// Run advances the simulation for at most budget of wall time; it
// reports whether it did anything.
func (r *Runner) Run(budget time.Duration) bool {
	r.behind = false
	now := time.Now()
	if r.winStart.IsZero() {
		r.winStart = now
		tot := r.Arm.Sim.Totals()
		r.winNow, r.winEvts = tot.Now, tot.Events
	}
	if !r.Active() {
		r.last = time.Time{}
		r.window(now)
		return false
	}
	sim := r.Arm.Sim
	target := int64(-1)
	if r.Speed > 0 {
		dt := 16 * time.Millisecond
		if !r.last.IsZero() {
			dt = min(now.Sub(r.last), maxCatchUp)
		}
		r.last = now
		r.goal = min(r.goal+r.Speed*float64(dt), float64(sim.Now())+r.Speed*float64(maxCatchUp))
		target = int64(r.goal)
	}
	if r.Limit >= 0 && (target < 0 || target > r.Limit) {
		target = r.Limit
	}
	deadline := now.Add(budget)
	simBefore := sim.Now()
	defer func() { r.busy(time.Since(now), sim.Now()-simBefore) }()
	for {
		stop := false
		for i := 0; i < checkEvery; i++ {
			next := sim.NextEventTime()
			if next < 0 || (target >= 0 && next > target) {
				stop = true
				break
			}
			sim.Step()
			if sim.AllFinished() {
				r.finished = true
				stop = true
				break
			}
		}
		if stop {
			if !r.finished && target >= 0 && (r.Limit < 0 || target <= r.Limit) && sim.Now() < target {
				sim.RunUntil(target)
			}
			break
		}
		if time.Now().After(deadline) {
			r.behind = true
			break
		}
	}
	r.window(time.Now())
	return true
}

// busy adds a Run's working time and the simulated time it covered to
// the pace window.
func (r *Runner) busy(wall time.Duration, sim int64) {
	r.busyWall += wall
	r.busySim += sim
}

// windowPace is the pace window's simulated seconds per second of Run's
// own working time (0: nothing simulated yet in it).
func (r *Runner) windowPace() float64 {
	if r.busyWall <= 0 || r.busySim <= 0 {
		return 0
	}
	return float64(r.busySim) / float64(engine.Second) / r.busyWall.Seconds()
}

// window updates the rate measurements every half second.
func (r *Runner) window(now time.Time) {
	if d := now.Sub(r.winStart); d >= 500*time.Millisecond {
		tot := r.Arm.Sim.Totals()
		r.simRate = float64(tot.Now-r.winNow) / float64(engine.Second) / d.Seconds()
		r.evRate = float64(tot.Events-r.winEvts) / d.Seconds()
		r.winStart, r.winNow, r.winEvts = now, tot.Now, tot.Events
		if p := r.windowPace(); p > 0 {
			r.pace = p
		}
		r.busyWall, r.busySim = 0, 0
	}
}

// StepWakeup runs to the next wakeup decision (at most 10 simulated
// seconds ahead).
func (r *Runner) StepWakeup() {
	if r.Halted || r.Arm.Err() != nil {
		return
	}
	sim := r.Arm.Sim
	before := sim.Totals().Wakeups
	limit := sim.Now() + 10*engine.Second
	for sim.Totals().Wakeups == before {
		next := sim.NextEventTime()
		if next < 0 || next > limit || sim.AllFinished() {
			break
		}
		sim.Step()
	}
	r.finished = sim.AllFinished()
	r.Resync()
}

// StepEvent runs one event.
func (r *Runner) StepEvent() {
	if r.Halted || r.Arm.Err() != nil || r.Arm.Sim.NextEventTime() < 0 {
		return
	}
	r.Arm.Sim.Step()
	r.finished = r.Arm.Sim.AllFinished()
	r.Resync()
}

// RunUntil runs to simulated time t (the other arm's, after its step).
func (r *Runner) RunUntil(t int64) {
	if r.Halted || r.Arm.Err() != nil {
		return
	}
	if t > r.Arm.Sim.Now() {
		r.Arm.Sim.RunUntil(t)
	}
	r.finished = r.Arm.Sim.AllFinished()
	r.Resync()
}

// RunTo runs to simulated time t or until the finite workloads finish,
// as `schedsim run --duration t` does. A run already past t cannot go
// back: the caller replays it from the start first (Rewound).
func (r *Runner) RunTo(t int64) {
	if r.Halted || r.Arm.Err() != nil {
		return
	}
	scenario.Advance(r.Arm.Sim, t)
	r.finished = r.Arm.Sim.AllFinished()
	r.Resync()
}

// Rewound is a new runner for the same arm at time zero, built again
// from st (the link the arm was built from): the engine is deterministic,
// so running it to t gives the numbers the first run had at t, and those
// `schedsim run --duration t` prints. It keeps the runner's build
// sequence, speed and limit, and is paused.
func (r *Runner) Rewound(st State, arm int) (*Runner, error) {
	a, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		return nil, err
	}
	n := NewRunner(a, r.Seq, r.Speed, true)
	n.Limit = r.Limit
	return n, nil
}

// Results is the arm's result in the shape of `schedsim run --format
// json` (sim_wall_s 0).
func (r *Runner) Results() (json.RawMessage, error) {
	cfg := r.Arm.Config
	return json.Marshal(scenario.Summarize(&cfg, r.Arm.Sim, 0))
}

// Snapshot fills s with the arm's state (bars: with the histogram bars;
// info: the CPU whose last decision to include, -1 for none).
func (r *Runner) Snapshot(s *Snapshot, bars bool, info int) {
	r.dec = s.Fill(r.Arm.Sim, r.dec, bars, info)
	s.Seq, s.Arm = r.Seq, armIndex(r.Arm.Label)
	s.Finished, s.Halted = r.finished, r.Halted
	s.PolicyErr = ""
	if err := r.Arm.Err(); err != nil {
		s.PolicyErr = err.Error()
	}
	s.SimRate, s.EventsPerSec = r.simRate, r.evRate
	s.Pace = r.pace
	if s.Pace == 0 {
		s.Pace = r.windowPace() // the first window is not complete yet
	}
	if !r.Active() && r.Paused {
		s.SimRate, s.EventsPerSec = 0, 0
	}
}

func armIndex(label string) int {
	if len(label) == 1 && label[0] >= 'A' && label[0] < 'A'+MaxArms {
		return int(label[0] - 'A')
	}
	return 0
}
