//go:build js && wasm

package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"schedplay/internal/json"

	"schedplay/engine"
	"schedplay/playground"
	"schedplay/trace"
)

// The engine role: the same program, started by static/worker.js in a
// dedicated Web Worker (window.schedplayRole = "engine"), runs one arm of
// the page's simulation. It builds the arm the page asks for (a slice at
// a time, so a newer build or a cancel is seen at once), runs it at the
// page's speed or as fast as it can, and posts a snapshot
// (playground.Snapshot, bytes in a transferred Uint8Array) at display
// rate. A panic is recovered and posted as a crash; the page shows it.
//
// Messages from the page ({t: …}): build {seq, link, arm, speed, paused},
// commit {seq}, discard, ctl {speed, paused, limit}, show {cpu}, step
// {kind: "wakeup"|"event"}, runUntil {t}, runTo {id, t}, results {id},
// debugPanic {where}. To the page: ready, progress {seq, p}, built {seq,
// error, crashed, snap: the built arm's first snapshot}, snap {buf}, stepped {now}, reply {id, ok, body},
// crash {where, message, stack, halt}, stats.

// barsEvery is how often a snapshot carries the histogram bars.
const barsEvery = 250 * time.Millisecond

// runSlice is the wall time the worker simulates between two looks at
// its messages.
const runSlice = 25 * time.Millisecond

type worker struct {
	self js.Value
	mu   sync.Mutex
	q    []js.Value // messages not yet handled
	wake chan struct{}
	// yield hands the worker's event loop a turn (messages) without the
	// 4 ms clamp of nested timers: a MessageChannel round trip.
	port     js.Value
	yielded  chan struct{}
	canceled atomic.Bool // the build in progress must stop

	r        *playground.Runner
	staged   *playground.Runner // built, waiting for commit
	stagedSq int64
	// The link and arm index the staged and the running arm were built
	// from (a trace export replays them).
	stagedLink, link string
	stagedArm, arm   int
	speed            float64
	paused           bool
	limit            int64
	info             int
	forced           map[string]bool
	snap             playground.Snapshot
	buf              []byte
	lastSnap         time.Time
	snapEvery        time.Duration
	lastBars         time.Time
	lastDecs         time.Time
	dirty            bool // a snapshot is due whatever the rate
	// refresh: an idle worker's periodic snapshot is due (the rate
	// readings decay to zero); it is posted only if it differs from the
	// last one posted (posted), so a paused page gets no snapshots and
	// its canvas no frames.
	refresh bool
	posted  []byte
	held    bool // the arm waits at its limit (Runner.Held)
}

// decsEvery is how often the decision panel's ring is posted while the
// run goes (at once after a step).
const decsEvery = 250 * time.Millisecond

// postDecisions posts the decision panel's ring when it changed (and
// step: the page highlights the newest decision).
func (w *worker) postDecisions(force, step bool) {
	if w.r == nil || w.r.Log == nil {
		return
	}
	now := time.Now()
	if !force && now.Sub(w.lastDecs) < decsEvery {
		return
	}
	if !w.r.Log.Changed() && !force {
		return
	}
	b, err := json.Marshal(w.r.Log.Last(playground.LogSize))
	if err != nil {
		return
	}
	w.lastDecs = now
	w.post(map[string]any{"t": "decisions", "seq": w.r.Seq, "log": string(b), "step": step}, nil)
}

func runWorker() {
	w := &worker{self: js.Global(), wake: make(chan struct{}, 1), yielded: make(chan struct{}, 1), limit: -1, info: -1, forced: map[string]bool{}, snapEvery: defaultSnapMs * time.Millisecond}
	mc := js.Global().Get("MessageChannel").New()
	mc.Get("port1").Set("onmessage", js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case w.yielded <- struct{}{}:
		default:
		}
		return nil
	}))
	w.port = mc.Get("port2")
	w.self.Set("schedplayDeliver", js.FuncOf(func(_ js.Value, a []js.Value) any {
		m := a[0]
		w.mu.Lock()
		w.q = append(w.q, m)
		w.mu.Unlock()
		if t := m.Get("t").String(); t == "build" || t == "discard" {
			w.canceled.Store(true) // a newer build replaces the one in progress
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return nil
	}))
	// "at": when the worker was ready by its own clock (epoch ms), apart
	// from when the page hears it — the page's main thread takes messages
	// only between its own tasks.
	w.post(map[string]any{"t": "ready", "at": epochMs()}, nil)
	w.self.Call("schedplayStarted")
	w.loop()
}

func (w *worker) post(m map[string]any, transfer []any) {
	if transfer != nil {
		w.self.Call("postMessage", js.ValueOf(m), js.ValueOf(transfer))
		return
	}
	w.self.Call("postMessage", js.ValueOf(m))
}

func (w *worker) yield() {
	w.port.Call("postMessage", 0)
	<-w.yielded
}

func (w *worker) take() []js.Value {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.q
	w.q = nil
	return q
}

func (w *worker) loop() {
	for {
		q := w.take()
		// Only the last build (or discard) of a batch counts.
		last := -1
		for i, m := range q {
			if t := m.Get("t").String(); t == "build" || t == "discard" {
				last = i
			}
		}
		for i, m := range q {
			if t := m.Get("t").String(); i < last && (t == "build" || t == "discard") {
				continue
			}
			w.handle(m)
		}
		ran := false
		if w.r != nil {
			w.guard("running the simulation", true, func() {
				if w.forced["update"] {
					delete(w.forced, "update")
					panic("debugPanic: a forced panic while running the simulation")
				}
				ran = w.r.Run(runSlice)
			})
		}
		// An arm that reached its limit says so at once: the page raises
		// the other arms' limits from its snapshots (client.snap).
		if held := w.r != nil && w.r.Held(); held != w.held {
			w.held = held
			w.dirty = w.dirty || held
		}
		w.maybeSnap(false)
		w.postDecisions(false, false)
		if ran && w.r != nil && w.r.Behind() {
			w.yield() // more to simulate now: just let messages in
			continue
		}
		if ran {
			// Caught up with real time × speed: sleep until the next
			// snapshot's worth is due (it spun here at 100% of a core
			// at any finite speed before).
			select {
			case <-w.wake:
			case <-time.After(w.snapEvery):
			}
			continue
		}
		// Idle: wait for a message (or the next rate reading).
		select {
		case <-w.wake:
		case <-time.After(250 * time.Millisecond):
			w.refresh = w.r != nil
		}
	}
}

// guard runs f, recovering a panic: posted to the page as a crash, and
// with halt the running arm stops.
func (w *worker) guard(where string, halt bool, f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p := playground.Recovered(where, r)
			if halt && w.r != nil {
				w.r.Halted = true
			}
			w.dirty = true
			w.post(map[string]any{"t": "crash", "where": p.Where, "message": fmt.Sprint(p.Value), "stack": p.Stack, "halt": halt}, nil)
			ok = false
		}
	}()
	f()
	return true
}

// maybeSnap posts a snapshot when one is due.
func (w *worker) maybeSnap(force bool) {
	if w.r == nil {
		return
	}
	now := time.Now()
	if !force && !w.dirty && !w.refresh && (now.Sub(w.lastSnap) < w.snapEvery || !w.r.Active()) {
		return
	}
	bars := force || w.dirty || w.refresh || now.Sub(w.lastBars) >= barsEvery
	w.guard("reading the simulation", true, func() {
		w.r.Snapshot(&w.snap, bars, w.info)
	})
	w.buf = w.snap.Encode(w.buf[:0])
	if !force && !w.dirty && bytes.Equal(w.buf, w.posted) {
		w.lastSnap, w.refresh = now, false
		return
	}
	w.posted = append(w.posted[:0], w.buf...)
	u8 := js.Global().Get("Uint8Array").New(len(w.buf))
	js.CopyBytesToJS(u8, w.buf)
	w.post(map[string]any{"t": "snap", "buf": u8}, []any{u8.Get("buffer")})
	w.lastSnap, w.dirty, w.refresh = now, false, false
	if bars {
		w.lastBars = now
	}
}

func (w *worker) handle(m js.Value) {
	t := m.Get("t").String()
	w.guard("answering the page ("+t+")", t == "step" || t == "runUntil" || t == "runTo", func() {
		switch t {
		case "build":
			w.build(m)
		case "commit":
			if w.staged != nil && int64(m.Get("seq").Int()) == w.stagedSq {
				w.r = w.staged
				w.r.Speed, w.r.Paused = w.speed, w.paused
				w.r.Resync()
				w.link, w.arm = w.stagedLink, w.stagedArm
				w.r.Limit = w.limit
				w.staged = nil
				w.dirty = true
			}
		case "discard":
			w.staged = nil
		case "drop":
			w.r, w.staged = nil, nil
		case "ctl":
			w.setSnapEvery(m)
			w.speed, w.paused = m.Get("speed").Float(), m.Get("paused").Bool()
			w.limit = int64(m.Get("limit").Float())
			if w.r != nil {
				if w.r.Speed != w.speed || w.r.Paused != w.paused {
					w.r.Resync()
					w.dirty = true
				}
				w.r.Speed, w.r.Paused, w.r.Limit = w.speed, w.paused, w.limit
			}
		case "show":
			w.info = m.Get("cpu").Int()
			w.dirty = true
		case "step":
			if w.r != nil {
				if m.Get("kind").String() == "event" {
					w.r.StepEvent()
				} else {
					w.r.StepWakeup()
				}
				w.post(map[string]any{"t": "stepped", "seq": w.r.Seq, "now": float64(w.r.Arm.Sim.Now())}, nil)
				w.dirty = true
			}
		case "runUntil":
			if w.r != nil {
				w.r.RunUntil(int64(m.Get("now").Float()))
				w.dirty = true
			}
		case "runTo", "results":
			id := m.Get("id").Int()
			if w.r == nil {
				w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": "no simulation is running"}, nil)
				return
			}
			if t == "runTo" {
				to := int64(m.Get("now").Float())
				if to < w.r.Arm.Sim.Now() {
					// Already past t (the page ran on before the
					// user asked): replay from the start, so runTo's
					// results are the ones at t, as the CLI's.
					st, err := playground.Parse(w.link)
					var r *playground.Runner
					if err == nil {
						r, err = w.r.Rewound(st, w.arm)
					}
					if err != nil {
						w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": "replaying the run to t: " + err.Error()}, nil)
						return
					}
					w.r = r
				}
				w.r.RunTo(to)
				w.dirty = true
			}
			b, err := w.r.Results()
			if err != nil {
				w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": err.Error()}, nil)
				return
			}
			w.post(map[string]any{"t": "reply", "id": id, "ok": true, "body": string(b)}, nil)
		case "trace":
			id := m.Get("id").Int()
			if w.r == nil {
				w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": "no simulation is running"}, nil)
				return
			}
			body, err := w.exportTrace(int64(m.Get("ms").Float()*float64(engine.Millisecond)), m.Get("format").String())
			if err != nil {
				w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": err.Error()}, nil)
				return
			}
			w.post(map[string]any{"t": "reply", "id": id, "ok": true, "body": body}, nil)
		case "expRun":
			id := m.Get("id").Int()
			body, err := runExperimentArm(m.Get("name").String(), m.Get("arm").Int(), m.Get("seed").Int())
			if err != nil {
				w.post(map[string]any{"t": "reply", "id": id, "ok": false, "body": err.Error()}, nil)
				return
			}
			w.post(map[string]any{"t": "reply", "id": id, "ok": true, "body": body}, nil)
		case "debugPanic":
			w.forced[m.Get("where").String()] = true
		}
	})
	if t == "runTo" || t == "step" || t == "runUntil" {
		w.maybeSnap(true)
		w.postDecisions(true, t == "step")
	}
}

// exportTrace replays the running arm with a trace of its last window
// ns (playground.ExportTrace).
func (w *worker) exportTrace(window int64, format string) (string, error) {
	f, ok := map[string]trace.Format{"json": trace.FormatJSON, "ftrace": trace.FormatFtrace}[format]
	if !ok {
		return "", fmt.Errorf("trace format %q (allowed: json, ftrace)", format)
	}
	st, err := playground.Parse(w.link)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if _, err := playground.ExportTrace(st, w.arm, w.r.Arm.Sim.Now(), window, f, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// build builds the arm a build message asks for, staged until the page
// commits it (every arm built) or discards it. Messages that arrive
// meanwhile are queued; a newer build or a discard cancels this one.
// setSnapEvery takes the snapshot interval a build or ctl message names.
func (w *worker) setSnapEvery(m js.Value) {
	if v := m.Get("snapMs"); v.Type() == js.TypeNumber && v.Float() > 0 {
		w.snapEvery = time.Duration(v.Float() * float64(time.Millisecond))
	}
}

func (w *worker) build(m js.Value) {
	seq := int64(m.Get("seq").Int())
	arm := m.Get("arm").Int()
	link := m.Get("link").String()
	w.setSnapEvery(m)
	w.speed, w.paused = m.Get("speed").Float(), m.Get("paused").Bool()
	w.staged = nil
	w.canceled.Store(false)
	st, err := playground.Parse(link)
	if err != nil {
		w.post(map[string]any{"t": "built", "seq": seq, "arm": arm, "error": err.Error()}, nil)
		return
	}
	st.Speed = w.speed
	lastProg := time.Time{}
	onStart := func() {
		if w.forced["build"] {
			delete(w.forced, "build")
			panic("debugPanic: a forced panic while building the run")
		}
	}
	pause := func(time.Duration, bool) { w.yield() }
	progress := func(p playground.BuildProgress) {
		if now := time.Now(); now.Sub(lastProg) >= 100*time.Millisecond {
			lastProg = now
			b, _ := json.Marshal(p)
			w.post(map[string]any{"t": "progress", "seq": seq, "arm": arm, "p": string(b)}, nil)
		}
	}
	a, err := playground.BuildArm(st, arm, onStart, pause, progress, &w.canceled)
	switch {
	case err == nil:
		w.staged, w.stagedSq = playground.NewRunner(a, seq, w.speed, w.paused), seq
		w.stagedLink, w.stagedArm = link, arm
		// The built arm's first snapshot (its t = 0) comes with the
		// message: the page shows the map as soon as every arm is
		// built, without waiting for the commit's round trip and the
		// first snapshot after it (0.15–0.4 s of a first load here,
		// with the page's main thread busy starting up).
		var snap playground.Snapshot
		w.staged.Snapshot(&snap, true, w.info)
		b := snap.Encode(nil)
		u8 := js.Global().Get("Uint8Array").New(len(b))
		js.CopyBytesToJS(u8, b)
		w.post(map[string]any{"t": "built", "seq": seq, "arm": arm, "error": "", "at": epochMs(), "snap": u8}, []any{u8.Get("buffer")})
	case playground.IsCanceled(err):
		// A newer message took over; it answers.
	default:
		msg := map[string]any{"t": "built", "seq": seq, "arm": arm, "error": err.Error()}
		if p, ok := err.(*playground.PanicError); ok {
			msg["crashed"] = true
			msg["where"], msg["message"], msg["stack"] = p.Where, fmt.Sprint(p.Value), p.Stack
		}
		w.post(msg, nil)
	}
}

// epochMs is now in ms since the epoch (performance.timeOrigin + now()),
// comparable across the page and its workers.
func epochMs() float64 {
	p := js.Global().Get("performance")
	return p.Get("timeOrigin").Float() + p.Call("now").Float()
}
