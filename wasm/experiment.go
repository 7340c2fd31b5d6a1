//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"time"

	"schedplay/internal/json"

	"schedplay/engine"
	"schedplay/experiment"
	"schedplay/playground"
	"schedplay/presets"
	"schedplay/scenario"
)

// An experiment as a guided run. When the running arms are an
// experiment's (playground.State.IsExperiment), the page shows the
// experiment beside them: its arms, the seed's table with the figures of
// the live arms (seed 1, so far), and the checks of `schedsim reproduce`
// evaluated by package experiment on those live figures; and, in a
// worker of its own, it reproduces the experiment at its quick size (the
// size `make test` checks), every arm and seed in turn, so that the table
// fills in with the figures `schedsim reproduce --quick` prints and the
// checks get their final verdicts as the arms finish. The live arms stop
// at the quick size's duration: long enough to show the effect.

// expRun is the background reproduction of one experiment.
type expRun struct {
	e       *presets.Experiment
	results map[string][]*scenario.Result
	done    int
	total   int
	running string // "arm B, seed 2"
	err     string
	w       *engineWorker
	stop    chan struct{}
	started time.Time
	wallS   float64 // when finished
	// stopAt is the simulated time (ns) the live arms pause at.
	stopAt  int64
	stopped bool
}

// experimentFor starts (or keeps, or ends) the guided run for st, the
// state of the arms just started (hold mu).
func (c *client) experimentFor(st *playground.State) {
	name := ""
	if st.IsExperiment() {
		name = st.Experiment
	}
	if c.exp != nil && c.exp.e.Name == name {
		c.exp.stopped = false
		return
	}
	if c.exp != nil {
		close(c.exp.stop)
		if c.exp.w != nil {
			c.exp.w.w.Call("terminate")
			c.exp.w.dead = true
		}
		c.exp = nil
	}
	if name == "" {
		return
	}
	e, err := presets.ExperimentByName(name)
	if err != nil {
		return
	}
	seeds := e.Seeds
	if e.Quick.Seeds > 0 {
		seeds = e.Quick.Seeds
	}
	dur := e.DurationS
	if e.Quick.DurationS > 0 {
		dur = min(dur, e.Quick.DurationS)
	}
	x := &expRun{e: e, results: map[string][]*scenario.Result{}, total: len(e.Arms) * seeds, stop: make(chan struct{}),
		started: time.Now(), stopAt: int64(dur * float64(engine.Second))}
	x.w = c.newEngineWorker(-1, "schedplay experiment "+name)
	c.exp = x
	go c.reproduce(x, seeds)
}

// reproduce runs every arm and seed of x in its worker, in turn.
func (c *client) reproduce(x *expRun, seeds int) {
	for i, a := range x.e.Arms {
		for k := 0; k < seeds; k++ {
			c.mu.Lock()
			if c.exp != x {
				c.mu.Unlock()
				return
			}
			x.running = fmt.Sprintf("arm %s, seed %d", a.Name, k+1)
			c.nextID++
			id := c.nextID
			ch := make(chan reply, 1)
			c.replies[id] = ch
			x.w.post(map[string]any{"t": "expRun", "id": id, "name": x.e.Name, "arm": i, "seed": k})
			c.mu.Unlock()
			var r reply
			select {
			case r = <-ch:
			case <-x.stop:
				return
			}
			c.mu.Lock()
			delete(c.replies, id)
			if c.exp != x {
				c.mu.Unlock()
				return
			}
			if !r.ok {
				x.err = fmt.Sprintf("arm %s seed %d: %s", a.Name, k+1, r.body)
				x.running = ""
				c.mu.Unlock()
				return
			}
			var res scenario.Result
			if err := json.Unmarshal([]byte(r.body), &res); err != nil {
				x.err = err.Error()
				c.mu.Unlock()
				return
			}
			x.results[a.Name] = append(x.results[a.Name], &res)
			x.done++
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	if c.exp == x {
		x.running = ""
		x.wallS = time.Since(x.started).Seconds()
		x.w.w.Call("terminate")
		x.w.dead = true
	}
	c.mu.Unlock()
}

// stopExperimentRun pauses the live arms once all of them reached the
// experiment's duration (hold mu).
func (c *client) stopExperimentRun() {
	x := c.exp
	if x == nil || x.stopped || c.paused || len(c.views) == 0 {
		return
	}
	for _, v := range c.views {
		if !v.Have || (v.Snap.Totals.Now < x.stopAt && !v.Snap.Finished) {
			return
		}
	}
	x.stopped = true
	c.paused, c.autoPaused = true, true
	c.ctlAll()
}

// expArm is one arm of the experiment as the page lists it.
type expArm struct {
	Name      string            `json:"name"`
	Label     string            `json:"label"`
	Machine   string            `json:"machine"`
	Workloads []string          `json:"workloads"`
	Knobs     map[string]string `json:"knobs"`
	Live      string            `json:"live"` // the live arm showing it ("A".."D"), or ""
}

// Experiment is what the page's experiment panel shows (nil: the arms
// are no experiment's). It asks the live arms for their results, so it
// runs in a goroutine (sim.experiment() returns a promise).
func (c *client) Experiment() (map[string]any, error) {
	c.mu.Lock()
	x := c.exp
	if x == nil {
		c.mu.Unlock()
		return nil, nil
	}
	e := x.e
	live := playground.LiveArms(e)
	out := map[string]any{"name": e.Name, "target": e.Target, "title": e.Title, "source": e.Source, "notes": e.Notes,
		"knownFail": e.KnownFail, "quickSize": e.Quick, "stopAtS": float64(x.stopAt) / float64(engine.Second)}
	var arms []expArm
	for i, a := range e.Arms {
		m, w, k := e.ArmSetup(i)
		ea := expArm{Name: a.Name, Label: a.Label, Machine: m, Workloads: w, Knobs: k}
		for j, li := range live {
			if li == i {
				ea.Live = string(rune('A' + j))
			}
		}
		arms = append(arms, ea)
	}
	out["arms"] = arms
	results := map[string][]*scenario.Result{}
	for name, rs := range x.results {
		results[name] = rs
	}
	q := map[string]any{"done": x.done, "total": x.total, "running": x.running, "error": x.err, "wallS": x.wallS,
		"outcome": experiment.Evaluate(e, e.Quick, results)}
	out["quick"] = q
	c.mu.Unlock()

	body, err := c.ask(map[string]any{"t": "results"})
	if err != nil {
		out["live"] = map[string]any{"error": err.Error()}
		return out, nil
	}
	var byLabel map[string]*scenario.Result
	if err := json.Unmarshal([]byte(body), &byLabel); err != nil {
		return nil, err
	}
	lr := map[string][]*scenario.Result{}
	t := 0.0
	for j, li := range live {
		if r := byLabel[string(rune('A'+j))]; r != nil {
			lr[e.Arms[li].Name] = []*scenario.Result{r}
			if j == 0 {
				t = r.DurationS
			}
		}
	}
	out["live"] = map[string]any{"t": t, "outcome": experiment.Evaluate(e, presets.Size{Seeds: 1, DurationS: max(t, 1e-9)}, lr)}
	return out, nil
}

// runExperimentArm is the experiment worker's job: one arm of an
// experiment at its quick size with one seed (the k-th, as
// scenario.RunMany numbers them), its result as JSON.
func runExperimentArm(name string, arm, k int) (string, error) {
	e, err := presets.ExperimentByName(name)
	if err != nil {
		return "", err
	}
	if arm < 0 || arm >= len(e.Arms) {
		return "", errors.New("no such arm")
	}
	cfg := experiment.Config(e, arm, e.Quick)
	cfg.Seed += uint64(k)
	res, err := scenario.Run(cfg)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	return string(b), err
}
