//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"schedplay/internal/json"

	"schedplay/engine"
	"schedplay/engine/machine"
	"schedplay/playground"
	"schedplay/ui"
)

// client is the page's side of the engine workers (the main thread): it
// holds the state the page shows and the link, sends builds and controls
// to one worker per arm (static/worker.js, this program in its engine
// role), and keeps each arm's latest snapshot for the canvas and for
// window.sim. Nothing here simulates: frames never wait for the engine.
type client struct {
	mu      sync.Mutex
	state   playground.State // the running arms'
	job     *buildJob
	seq     int64 // the newest build sent
	runSeq  int64 // the build the running arms came from
	gen     int
	views   []*playground.ArmView
	scratch *playground.Snapshot
	workers []*engineWorker
	paused  bool
	decVer  int64 // DecisionsVersion
	// snapMs is how often the workers post a snapshot while running, in
	// wall ms: the canvas's frame interval (frameCap) — snapshots the
	// canvas would not draw cost the workers and the main thread.
	snapMs float64
	// autoPaused: the pause is the experiment's (its live arms reached
	// its duration), not the user's: the next run that replaces them
	// starts running.
	autoPaused bool
	lastErr    string
	crash      *playground.Crash
	halted     bool
	replies    map[int]chan reply
	nextID     int
	onceFrom   time.Time // when the page started (worker start times)
	// forceBuild is a debugPanic("build") waiting for the next build.
	forceBuild bool
	// exp is the guided run of the experiment the arms are (nil: none).
	exp *expRun
	// hlArm, hlN: the decision highlighted on the map (hlN 0: none).
	hlArm int
	hlN   int64
}

// buildJob is a build in progress in the workers.
type buildJob struct {
	seq     int64
	st      playground.State
	n       int
	built   []bool
	snaps   [][]byte // each built arm's first snapshot (its t = 0)
	prog    []*playground.BuildProgress
	cpus    int
	started time.Time
	done    func(error)
}

type reply struct {
	ok   bool
	body string
}

// engineWorker is one Web Worker running an arm.
type engineWorker struct {
	arm     int
	w       js.Value
	dead    bool
	started time.Time
	readyMs float64 // from creation to the engine's first message
}

func newClient() *client {
	return &client{state: playground.Default(), scratch: &playground.Snapshot{}, replies: map[int]chan reply{}, runSeq: -1, onceFrom: time.Now(), snapMs: defaultSnapMs}
}

func (c *client) Lock()   { c.mu.Lock() }
func (c *client) Unlock() { c.mu.Unlock() }

// Generation changes whenever new arms replaced the running ones.
func (c *client) Generation() int { return c.gen }

// Views are the running arms (hold Lock).
func (c *client) Views() []*playground.ArmView { return c.views }

// worker returns arm i's worker, starting it if needed (hold mu).
func (c *client) worker(i int) *engineWorker {
	for len(c.workers) <= i {
		c.workers = append(c.workers, nil)
	}
	if w := c.workers[i]; w != nil && !w.dead {
		return w
	}
	ew := c.newEngineWorker(i, fmt.Sprintf("schedplay engine %c", 'A'+i))
	c.workers[i] = ew
	return ew
}

// newEngineWorker starts a Web Worker in the engine role (arm -1: the
// experiment worker).
func (c *client) newEngineWorker(arm int, name string) *engineWorker {
	ew := &engineWorker{arm: arm, started: time.Now()}
	var early js.Value
	if arm >= 0 {
		// A worker app.js started while this program was starting
		// (prestartWorkers): adopt it, then replay what it said before.
		if pool := js.Global().Get("schedplayPrestart"); pool.Truthy() && pool.Length() > 0 {
			p := pool.Call("shift")
			ew.w, early = p.Get("worker"), p.Get("early")
		}
	}
	if early.IsUndefined() {
		ew.w = js.Global().Get("Worker").New("worker.js", map[string]any{"name": name})
	}
	ew.w.Set("onmessage", js.FuncOf(func(_ js.Value, a []js.Value) any {
		c.message(ew, a[0].Get("data"))
		return nil
	}))
	ew.w.Set("onerror", js.FuncOf(func(_ js.Value, a []js.Value) any {
		msg := a[0].Get("message")
		text := "the engine worker failed"
		if msg.Type() == js.TypeString {
			text = msg.String()
		}
		c.mu.Lock()
		ew.dead = true
		c.mu.Unlock()
		where := fmt.Sprintf("running arm %c's engine worker", 'A'+ew.arm)
		if ew.arm < 0 {
			where = "running the experiment's arms"
		}
		report(&playground.PanicError{Where: where, Value: text}, "", ew.arm >= 0)
		return nil
	}))
	if early.IsUndefined() {
		ew.w.Call("postMessage", map[string]any{"t": "init", "module": js.Global().Get("schedplayModule")})
		return ew
	}
	// Replayed after this call returns: the caller records ew first.
	js.Global().Call("queueMicrotask", js.FuncOf(func(js.Value, []js.Value) any {
		msgs := early.Get("messages")
		for i := 0; i < msgs.Length(); i++ {
			c.message(ew, msgs.Index(i))
		}
		if e := early.Get("error"); e.Truthy() {
			ew.w.Get("onerror").Invoke(map[string]any{"message": e.String()})
		}
		return nil
	}))
	return ew
}

// startPrestartedWorkers lets the workers app.js started with the page
// run their Go programs (static/worker.js holds them until "start"). The
// page's program has initialised every package by now, and V8 compiles a
// wasm function lazily, on its first call, into code that every thread
// holding the module shares: started together, the main thread and both
// workers compiled the same runtime and package-initialisation functions
// at the same time on the two cores (a trace: 1.5–3.5 s of wasm.CompileLazy
// on all three threads); started now, the workers find them compiled, and
// compile only the engine's code while the page compiles its own.
func startPrestartedWorkers() {
	pool := js.Global().Get("schedplayPrestart")
	if !pool.Truthy() {
		return
	}
	for i := 0; i < pool.Length(); i++ {
		pool.Index(i).Get("worker").Call("postMessage", map[string]any{"t": "start"})
	}
}

func (ew *engineWorker) post(m map[string]any) {
	if !ew.dead {
		ew.w.Call("postMessage", m)
	}
}

// message handles a worker's message (on the main thread, between
// frames).
func (c *client) message(ew *engineWorker, m js.Value) {
	defer ui.Invalidate() // a snapshot, a build's progress, a reply: the canvas may show it
	guarded("reading an engine worker's message", func() {
		switch m.Get("t").String() {
		case "boot":
			// worker.js's own stamps (epoch ms) of its first start.
			origin := js.Global().Get("performance").Get("timeOrigin").Float()
			if t := js.Global().Get("schedplayLoad"); t.Truthy() && t.Get("workerScript").IsUndefined() {
				t.Set("workerScript", m.Get("script").Float()-origin)
				t.Set("workerInit", m.Get("init").Float()-origin)
				t.Set("workerInstantiated", m.Get("instantiated").Float()-origin)
				t.Set("workerRun", m.Get("run").Float()-origin)
			}
		case "ready":
			markLoad("workerReady")
			markSent("workerReadySent", m)
			c.mu.Lock()
			ew.readyMs = float64(time.Since(ew.started).Microseconds()) / 1e3
			c.mu.Unlock()
		case "snap":
			markLoad("firstSnap")
			u8 := m.Get("buf")
			b := make([]byte, u8.Get("length").Int())
			js.CopyBytesToGo(b, u8)
			c.snap(b)
		case "progress":
			var p playground.BuildProgress
			if json.Unmarshal([]byte(m.Get("p").String()), &p) == nil {
				c.mu.Lock()
				if j := c.job; j != nil && int64(m.Get("seq").Int()) == j.seq && ew.arm < j.n {
					j.prog[ew.arm] = &p
				}
				c.mu.Unlock()
			}
		case "built":
			c.built(ew, m)
		case "decisions":
			c.decisions(ew, m)
		case "stepped":
			c.mu.Lock()
			if int64(m.Get("seq").Int()) == c.runSeq {
				for _, w := range c.workers[1:min(len(c.workers), len(c.views))] {
					w.post(map[string]any{"t": "runUntil", "now": m.Get("now")})
				}
			}
			c.mu.Unlock()
		case "reply":
			c.mu.Lock()
			ch := c.replies[m.Get("id").Int()]
			c.mu.Unlock()
			if ch != nil {
				ch <- reply{m.Get("ok").Bool(), m.Get("body").String()}
			}
		case "crash":
			p := &playground.PanicError{Where: m.Get("where").String(), Value: workerPanic(m.Get("message").String()), Stack: m.Get("stack").String()}
			report(p, "", m.Get("halt").Bool())
		}
	})
}

// decisions takes an arm's decision ring in; after a step, arm A's
// newest decision is highlighted on the map.
func (c *client) decisions(ew *engineWorker, m js.Value) {
	var log []playground.LoggedDecision
	if err := json.Unmarshal([]byte(m.Get("log").String()), &log); err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(m.Get("seq").Int()) != c.runSeq || ew.arm >= len(c.views) {
		return
	}
	v := c.views[ew.arm]
	v.Log = log
	c.decVer++
	if m.Get("step").Truthy() && len(log) > 0 {
		v.SetHighlight(log[len(log)-1].N)
		c.hlArm, c.hlN = ew.arm, log[len(log)-1].N
	} else if c.hlN > 0 && c.hlArm == ew.arm {
		v.SetHighlight(c.hlN) // the ring moved on: the highlight stays while it holds it
	}
}

// Highlight shows logged decision n of arm on the map (n 0: none).
func (c *client) Highlight(arm int, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := false
	for i, v := range c.views {
		if i == arm {
			ok = v.SetHighlight(n)
		} else {
			v.SetHighlight(0)
		}
	}
	c.hlArm, c.hlN = arm, n
	if !ok {
		c.hlN = 0
	}
	c.decVer++
	return ok
}

// DecisionsVersion changes whenever what Decisions returns may have: the
// panel re-renders its decision list only then (every rebuild costs the
// page a JSON round trip and a forced layout).
func (c *client) DecisionsVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d.%d", c.gen, c.decVer)
}

// Decisions are every arm's decision ring (only arm only's, when it is
// an arm: the others' logs are empty) and the highlighted decision.
func (c *client) Decisions(only int) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	arms := []any{}
	for i, v := range c.views {
		log := v.Log
		if only >= 0 && i != only && !(c.hlN > 0 && i == c.hlArm) {
			log = nil
		}
		arms = append(arms, map[string]any{"label": v.Label, "knobs": v.Knobs, "log": log})
	}
	return map[string]any{"arms": arms, "highlight": map[string]any{"arm": c.hlArm, "n": c.hlN}}
}

// workerPanic is a panic value recovered in a worker (its message).
type workerPanic string

func (w workerPanic) String() string { return string(w) }

// snap takes a snapshot in.
func (c *client) snap(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.takeSnap(b)
}

// takeSnap is snap with mu held.
func (c *client) takeSnap(b []byte) {
	if err := c.scratch.Decode(b); err != nil {
		panic(err)
	}
	s := c.scratch
	if s.Seq != c.runSeq || s.Arm >= len(c.views) {
		return
	}
	c.scratch = c.views[s.Arm].Take(s)
	// Side by side: no arm may run further ahead of the slowest other
	// one than a lead. The lead is a second of the fastest arm's pace (at
	// least 20 ms simulated), or four snapshot intervals when the
	// snapshots come slower (the limit moves only when one arrives): the
	// arm ahead waits only for an arm that is truly slower, never for the
	// page's messages. The pace is Snapshot.Pace — simulated time per
	// second of a worker's own simulating, not of the wall: an arm held
	// at its limit simulates little per wall second, and a lead from
	// that let two arms hold each other to 20 ms per snapshot round
	// trip (a crawl of seconds at 4 snapshots a second). An arm posts a
	// snapshot as soon as it is held (wasm/worker.go).
	if len(c.views) > 1 {
		pace := 0.0
		for _, v := range c.views {
			pace = max(pace, v.Snap.Pace)
		}
		lead := 20 * float64(engine.Millisecond)
		window := max(1.0, 4*c.snapMs/1000) // wall seconds
		if sp := c.state.Speed; sp > 0 {
			lead = max(lead, sp*window*float64(time.Second))
		} else {
			lead = max(lead, pace*window*float64(time.Second))
		}
		for i := range c.views {
			if i != s.Arm {
				c.ctl(i, c.slowestBut(i)+lead)
			}
		}
	}
	c.stopExperimentRun()
}

// slowestBut is the lowest simulated time of the arms other than i (hold
// mu).
func (c *client) slowestBut(i int) float64 {
	low := -1.0
	for j, v := range c.views {
		if j != i && v.Have && v.Snap.PolicyErr == "" { // an arm its policy stopped holds no other back
			if t := float64(v.Snap.Totals.Now); low < 0 || t < low {
				low = t
			}
		}
	}
	return max(low, 0)
}

// ctl sends arm i its controls (limit -1: none) (hold mu).
func (c *client) ctl(i int, limit float64) {
	if i < len(c.workers) && c.workers[i] != nil {
		c.workers[i].post(map[string]any{"t": "ctl", "speed": c.state.Speed, "paused": c.paused, "limit": limit, "snapMs": c.snapMs})
	}
}

// defaultSnapMs is how often a running worker posts a snapshot until
// the page says otherwise (snapMs in build and ctl: the canvas's frame
// interval): the display's rate.
const defaultSnapMs = 16

// SetSnapInterval sets how often the workers post snapshots (ms; 0: the
// display's rate).
func (c *client) SetSnapInterval(ms float64) {
	if ms <= 0 {
		ms = defaultSnapMs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ms != c.snapMs {
		c.snapMs = ms
		c.ctlAll()
	}
}

// ctlAll sends every arm its controls (hold mu).
func (c *client) ctlAll() {
	for i := range c.views {
		lim := -1.0
		if len(c.views) > 1 {
			lim = c.slowestBut(i) + 20*float64(engine.Millisecond)
		}
		c.ctl(i, lim)
	}
}

// built handles a worker's end of a build.
func (c *client) built(ew *engineWorker, m js.Value) {
	c.mu.Lock()
	j := c.job
	if j == nil || int64(m.Get("seq").Int()) != j.seq || ew.arm >= j.n {
		c.mu.Unlock()
		return
	}
	if e := m.Get("error").String(); e != "" {
		var err error = errors.New(e)
		if m.Get("crashed").Truthy() {
			err = &playground.PanicError{Where: m.Get("where").String(), Value: workerPanic(m.Get("message").String()), Stack: m.Get("stack").String()}
		} else if j.n > 1 && !strings.HasPrefix(e, "arm ") {
			err = fmt.Errorf("arm %c: %s", 'A'+ew.arm, e)
		}
		for i := 0; i < j.n; i++ {
			c.worker(i).post(map[string]any{"t": "discard"})
		}
		c.job = nil
		c.mu.Unlock()
		if j.done != nil {
			j.done(err)
		}
		return
	}
	j.built[ew.arm] = true
	if u8 := m.Get("snap"); u8.Truthy() {
		j.snaps[ew.arm] = make([]byte, u8.Get("length").Int())
		js.CopyBytesToGo(j.snaps[ew.arm], u8)
	}
	for _, b := range j.built {
		if !b {
			c.mu.Unlock()
			return
		}
	}
	// Every arm is built: they replace the running ones.
	markLoad("built")
	markSent("builtSent", m)
	spec, err := j.st.MachineSpec()
	var tp *machine.Topology
	if err == nil {
		tp, err = machine.Build(spec)
	}
	if err != nil {
		c.job = nil
		c.mu.Unlock()
		if j.done != nil {
			j.done(err)
		}
		return
	}
	c.job = nil
	c.state, c.runSeq = j.st.Clone(), j.seq
	c.gen++
	if c.autoPaused {
		// The experiment paused the arms these replace; the user
		// changed something, so the new run runs.
		c.paused, c.autoPaused = false, false
	}
	c.crash, c.halted = nil, false
	c.hlArm, c.hlN = 0, 0
	c.views = c.views[:0]
	for i := 0; i < j.n; i++ {
		cfg := j.st.Config(i)
		c.views = append(c.views, &playground.ArmView{Label: string(rune('A' + i)), Knobs: cfg.Knobs, Topo: tp})
		c.worker(i).post(map[string]any{"t": "commit", "seq": float64(j.seq)})
	}
	for i := j.n; i < len(c.workers); i++ {
		if c.workers[i] != nil {
			c.workers[i].post(map[string]any{"t": "drop"})
		}
	}
	c.ctlAll()
	c.experimentFor(&c.state)
	// The map from each arm's built state at once: the first snapshots
	// after the commits come a worker round trip later.
	for _, b := range j.snaps {
		if b != nil {
			markLoad("firstSnap")
			c.takeSnap(b)
		}
	}
	c.mu.Unlock()
	if j.done != nil {
		j.done(nil)
	}
}

// Begin builds st in the workers, one arm each; the running arms stay on
// show until every new arm is built. done is called once it ends (nil:
// the new arms run; else the error, a *playground.PanicError for a
// panic), unless a newer Begin or CancelBuild canceled it.
func (c *client) Begin(st playground.State, _ time.Time, done func(error)) {
	c.mu.Lock()
	c.seq++
	n := st.NumArms()
	j := &buildJob{seq: c.seq, st: st.Clone(), n: n, built: make([]bool, n), snaps: make([][]byte, n), prog: make([]*playground.BuildProgress, n), started: time.Now(), done: done}
	if spec, err := st.MachineSpec(); err == nil {
		j.cpus = spec.NumCPUs()
	}
	c.job = j
	link := j.st.Encode()
	force := c.forceBuild
	c.forceBuild = false
	for i := 0; i < n; i++ {
		w := c.worker(i)
		if force && i == 0 {
			w.post(map[string]any{"t": "debugPanic", "where": "build"})
		}
		w.post(map[string]any{"t": "build", "seq": float64(j.seq), "arm": i, "link": link, "speed": st.Speed, "paused": c.paused, "snapMs": c.snapMs})
	}
	c.mu.Unlock()
}

// Apply builds st (in the workers, as Begin does) after the cheap checks.
func (c *client) Apply(st playground.State) error {
	if err := playground.CheckCheap(&st); err != nil {
		return err
	}
	c.Begin(st, time.Time{}, nil)
	return nil
}

// CancelBuild stops a build; the running arms stay.
func (c *client) CancelBuild() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job == nil {
		return false
	}
	for i := 0; i < c.job.n; i++ {
		c.worker(i).post(map[string]any{"t": "discard"})
	}
	c.job = nil
	return true
}

// Building is the progress of the build in progress.
func (c *client) Building() (playground.BuildProgress, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.job
	if j == nil {
		return playground.BuildProgress{}, false
	}
	p := playground.BuildProgress{Phase: "machine", Arm: "A", Arms: j.n, Machine: j.st.Preset, CPUs: j.cpus}
	for i := 0; i < j.n; i++ {
		if !j.built[i] && j.prog[i] != nil {
			p = *j.prog[i]
			break
		}
	}
	p.Arms = j.n
	p.ElapsedMs = float64(time.Since(j.started).Microseconds()) / 1e3
	return p, true
}

func (c *client) target() *playground.State {
	if c.job != nil {
		return &c.job.st
	}
	return &c.state
}

// State is the state on show: the one being built, if any.
func (c *client) State() playground.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target().Clone()
}

// RunningState is the running arms' state.
func (c *client) RunningState() playground.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Clone()
}

// Link is the share link of State (without '#').
func (c *client) Link() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target().Encode()
}

// Fail shows a recovered panic; with halt the running arms stop.
func (c *client) Fail(p *playground.PanicError, link string, halt bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if link == "" {
		link = c.state.Encode()
	}
	c.crash = &playground.Crash{Where: p.Where, Message: fmt.Sprint(p.Value), Link: link, Stack: p.Stack}
	c.halted = c.halted || halt
}

func (c *client) ClearCrash() {
	c.mu.Lock()
	c.crash = nil
	c.mu.Unlock()
}

func (c *client) Crashed() *playground.Crash {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crash == nil {
		return nil
	}
	x := *c.crash
	return &x
}

func (c *client) Halted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.halted
}

// SetPaused pauses or resumes every arm.
func (c *client) SetPaused(p bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused, c.autoPaused = p, false
	c.ctlAll()
}

func (c *client) Paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// SetSpeed sets simulated seconds per wall second (0: as fast as the
// engine runs).
func (c *client) SetSpeed(s float64) error {
	if !(s == 0 || (s >= playground.MinSpeed && s <= playground.MaxSpeed)) {
		return fmt.Errorf("speed %g out of range (allowed: %g..%g, or 0 for max)", s, playground.MinSpeed, playground.MaxSpeed)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.Speed = s
	if c.job != nil {
		c.job.st.Speed = s
	}
	c.ctlAll()
	return nil
}

func (c *client) Speed() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target().Speed
}

// AchievedSpeed is the slowest arm's simulated seconds per wall second.
func (c *client) AchievedSpeed() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := 0.0
	for i, v := range c.views {
		if i == 0 || v.Snap.SimRate < r {
			r = v.Snap.SimRate
		}
	}
	return r
}

// Finished reports whether arm A's finite workloads finished.
func (c *client) Finished() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.views) > 0 && c.views[0].Snap.Finished
}

func (c *client) SetError(msg string) {
	c.mu.Lock()
	c.lastErr = msg
	c.mu.Unlock()
}

func (c *client) Error() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Step pauses and runs arm A to its next wakeup decision (kind
// "wakeup") or its next event ("event"); the other arm follows to the
// same simulated time.
func (c *client) Step(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused, c.autoPaused = true, false
	c.ctlAll()
	if c.job != nil || c.halted || len(c.views) == 0 {
		return
	}
	c.worker(0).post(map[string]any{"t": "step", "kind": kind})
}

// StepWakeup is Step("wakeup") (the canvas's '.').
func (c *client) StepWakeup() { c.Step("wakeup") }

// Show tells arm's worker which CPU the info box describes.
func (c *client) Show(arm, cpu int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.views {
		v := -1
		if i == arm {
			v = cpu
		}
		c.worker(i).post(map[string]any{"t": "show", "cpu": v})
	}
}

// ask sends every running arm's worker msg (with a reply id) and waits
// (in a goroutine) for all the answers: {"A": …, "B": …}.
func (c *client) ask(msg map[string]any) (string, error) {
	c.mu.Lock()
	n := len(c.views)
	if n == 0 || c.halted {
		c.mu.Unlock()
		return "", errors.New("no simulation is running")
	}
	type pending struct {
		label string
		ch    chan reply
		id    int
	}
	var ps []pending
	for i := 0; i < n; i++ {
		c.nextID++
		p := pending{c.views[i].Label, make(chan reply, 1), c.nextID}
		c.replies[p.id] = p.ch
		m := map[string]any{"id": p.id}
		for k, v := range msg {
			m[k] = v
		}
		c.worker(i).post(m)
		ps = append(ps, p)
	}
	c.mu.Unlock()
	out := map[string]json.RawMessage{}
	var err error
	for _, p := range ps {
		r := <-p.ch
		c.mu.Lock()
		delete(c.replies, p.id)
		c.mu.Unlock()
		if !r.ok {
			err = errors.New(r.body)
			continue
		}
		out[p.label] = json.RawMessage(r.body)
	}
	if err != nil {
		return "", err
	}
	b, e := json.MarshalIndent(out, "", "  ")
	return string(b), e
}

// ExportTrace asks arm's worker for a trace of its last ms simulated
// milliseconds (format json or ftrace).
func (c *client) ExportTrace(arm int, ms float64, format string) (string, error) {
	c.mu.Lock()
	if arm < 0 || arm >= len(c.views) || c.halted {
		c.mu.Unlock()
		return "", fmt.Errorf("no arm %d running", arm)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.replies[id] = ch
	c.worker(arm).post(map[string]any{"t": "trace", "id": id, "ms": ms, "format": format})
	c.mu.Unlock()
	r := <-ch
	c.mu.Lock()
	delete(c.replies, id)
	c.mu.Unlock()
	if !r.ok {
		return "", errors.New(r.body)
	}
	return r.body, nil
}

// RunTo pauses and runs every arm to simulated time t (as `schedsim run
// --duration` does); it returns the results.
func (c *client) RunTo(t int64) (string, error) {
	c.SetPaused(true)
	return c.ask(map[string]any{"t": "runTo", "now": float64(t)})
}

// Results are every arm's results so far.
func (c *client) Results() (string, error) { return c.ask(map[string]any{"t": "results"}) }

// perf is what the debug overlay and the browser test read: per worker,
// its simulated-time rate, events per second and start time.
func (c *client) perf() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for i, v := range c.views {
		m := map[string]any{"arm": v.Label, "simRate": finite(v.Snap.SimRate), "eventsPerSec": finite(v.Snap.EventsPerSec),
			"simTime": float64(v.Snap.Totals.Now) / float64(engine.Second), "events": float64(v.Snap.Totals.Events)}
		if i < len(c.workers) && c.workers[i] != nil {
			m["workerReadyMs"] = c.workers[i].readyMs
		}
		out = append(out, m)
	}
	return out
}

// markLoad stamps window.schedplayLoad[name] with performance.now() the
// first time it is called for name: the steps of the page's first load
// (the page benchmark reports them).
func markLoad(name string) {
	if t := js.Global().Get("schedplayLoad"); t.Truthy() && t.Get(name).IsUndefined() {
		t.Set(name, js.Global().Get("performance").Call("now"))
	}
}

// markSent stamps window.schedplayLoad[name] (once) with the worker's own
// time of message m ("at", epoch ms) on the page's timeline.
func markSent(name string, m js.Value) {
	at := m.Get("at")
	if at.Type() != js.TypeNumber {
		return
	}
	if t := js.Global().Get("schedplayLoad"); t.Truthy() && t.Get(name).IsUndefined() {
		t.Set(name, at.Float()-js.Global().Get("performance").Get("timeOrigin").Float())
	}
}
