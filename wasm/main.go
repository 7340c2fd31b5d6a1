//go:build js && wasm

// Command wasm is the browser playground: it runs the engine through
// playground.App, draws it with ui (ebiten) and exposes window.sim to the
// page's control panel. Share links live in the URL fragment: the page
// state is written there on every change and re-read on hashchange.
//
// Callbacks never block: long work (results, runTo) returns a Promise and
// runs in a goroutine, so the tab never freezes. A new run is built in the
// background a slice at a time (playground.App.Begin): between slices the
// builder sleeps, which is what hands the browser its event loop back in
// WebAssembly, where nothing preempts a Go computation.
//
// The page survives the engine: a panic in the canvas's Update or Draw, in
// a window.sim callback, in a promise's goroutine or in a build is
// recovered, shown in the panel with the share link that reproduces it and
// a "Reset to default" button (window.sim.resetDefault), and logged with
// its stack to the console; ebiten's loop goes on. With ?debug=1 in the
// URL, window.sim.debugPanic(where) forces one for the browser test.
package main

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/hajimehoshi/ebiten/v2"

	"schedplay/internal/json"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/examples"
	"schedplay/playground"
	"schedplay/presets"
	"schedplay/ui"
)

var (
	app      *client
	game     *ui.Game
	lastHash string
	// fpsMsg says why the page's ?fps= was ignored ("": it was not).
	fpsMsg string
	// debug (the page opened with ?debug=1) adds window.sim.debugPanic,
	// which forces a panic where the browser test asks for one.
	debug  bool
	forced forcedPanics
	stats  frameStats
	// taskStart is when the current callback from JavaScript began: a
	// build started there counts the callback's own work against its
	// first slice.
	taskStart time.Time
)

func main() {
	if js.Global().Get("schedplayRole").String() == "engine" {
		runWorker()
		return
	}
	taskStart = time.Now()
	if t := js.Global().Get("schedplayLoad"); t.Truthy() {
		t.Set("goMain", js.Global().Get("performance").Call("now"))
	}
	startPrestartedWorkers()
	app = newClient()
	if q, err := url.ParseQuery(strings.TrimPrefix(js.Global().Get("location").Get("search").String(), "?")); err == nil {
		debug = q.Get("debug") == "1"
		fpsMsg = fcap.readOverride(q)
	}
	// The page opens with the link it was loaded with; a bad link falls
	// back to the defaults with a message.
	guarded("reading the link", func() { applyFragment(js.Global().Get("location").Get("hash").String()) })
	markLoad("linkApplied")
	if fpsMsg != "" && app.Error() == "" { // a bad link's message comes first
		app.SetError(fpsMsg)
	}
	game = ui.New(app, ui.Options{OnFirstDraw: func() {
		setReady()
		if t := js.Global().Get("schedplayLoad"); t.Truthy() {
			t.Set("firstMap", js.Global().Get("performance").Call("now"))
		}
	}})
	markLoad("uiNew")
	installAPI()
	markLoad("api")
	js.Global().Call("addEventListener", "hashchange", js.FuncOf(func(js.Value, []js.Value) any {
		taskStart = time.Now()
		defer stats.callback("hashchange", taskStart)
		defer ui.Invalidate()
		guarded("reading the link", func() {
			h := js.Global().Get("location").Get("hash").String()
			if strings.TrimPrefix(h, "#") != lastHash {
				applyFragment(h)
			}
		})
		return nil
	}))
	// A hidden tab or a lost and restored WebGL context may leave the
	// canvas without the picture the on-demand drawing relies on.
	redraw := js.FuncOf(func(js.Value, []js.Value) any {
		ui.Redraw()
		return nil
	})
	js.Global().Get("document").Call("addEventListener", "visibilitychange", redraw)
	if c := js.Global().Get("document").Call("querySelector", "canvas"); c.Truthy() {
		c.Call("addEventListener", "webglcontextrestored", redraw)
	}
	ebiten.SetWindowTitle("schedplay")
	ebiten.SetRunnableOnUnfocused(true)
	if err := ebiten.RunGame(&safeGame{g: game, updFailed: -1}); err != nil {
		js.Global().Set("simError", "the canvas stopped: "+err.Error())
	}
}

// ---- surviving panics ----------------------------------------------------

// report shows a recovered panic in the page (the banner with the link
// that reproduces it and a reset button) and logs its stack to the
// browser console. halt stops the running simulations, which the panic
// may have left inconsistent.
func report(p *playground.PanicError, link string, halt bool) {
	app.Fail(p, link, halt)
	if c := app.Crashed(); c != nil {
		link = c.Link
	}
	js.Global().Get("console").Call("error", fmt.Sprintf("schedplay: recovered %v\nlink: #%s\n%s", p, link, p.Stack))
}

// guarded runs f, recovering a panic as report does (without halting: f
// is not stepping the simulations).
func guarded(where string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			report(playground.Recovered(where, r), "", false)
		}
	}()
	f()
}

// forcedPanics are the panics debugPanic asked for, one each.
type forcedPanics struct {
	mu   sync.Mutex
	want map[string]bool
}

func (f *forcedPanics) set(where string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.want == nil {
		f.want = map[string]bool{}
	}
	f.want[where] = true
}

func (f *forcedPanics) take(where string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.want[where] {
		delete(f.want, where)
		return true
	}
	return false
}

// safeGame runs the canvas so that a panic in Update or Draw never stops
// ebiten's loop: it is recovered and shown; the canvas goes on drawing
// (the last snapshot, frozen, when Update keeps failing) until a new run
// is built.
type safeGame struct {
	g         *ui.Game
	updFailed int // the App generation whose Update panicked (-1: none)
	// After Draw panicked, the canvas shows a plain colour until
	// drawRetry, then Draw is tried again, backing off (up to a second)
	// while it keeps panicking.
	drawFails int
	drawRetry time.Time
	updDur    time.Duration
	// What this frame's Update found: a build in progress, and whether
	// the arms changed (the canvas rebuilds its per-CPU state for them).
	building bool
	rebuilt  bool
	seenGen  int
}

func generation() int {
	app.Lock()
	defer app.Unlock()
	return app.Generation()
}

func (s *safeGame) Layout(w, h int) (int, int) { return s.g.Layout(w, h) }

func (s *safeGame) Update() error {
	start := time.Now()
	stats.update(start)
	fcap.apply(app.Speed())
	_, s.building = app.Building()
	gen := generation()
	s.rebuilt, s.seenGen = gen != s.seenGen, gen
	if gen != s.updFailed {
		func() {
			defer func() {
				if r := recover(); r != nil {
					s.updFailed = gen
					report(playground.Recovered("running the simulation", r), "", true)
				}
			}()
			if err := s.g.Update(); err != nil {
				panic(err)
			}
		}()
	}
	s.updDur = time.Since(start)
	return nil
}

func (s *safeGame) Draw(screen *ebiten.Image) {
	start := time.Now()
	plain := color.RGBA{0x2a, 0x16, 0x1a, 0xff} // the banner says why
	if !start.Before(s.drawRetry) {
		func() {
			defer func() {
				if r := recover(); r != nil {
					s.drawFails++
					s.drawRetry = time.Now().Add(min(time.Second, (16*time.Millisecond)<<min(s.drawFails, 10)))
					screen.Fill(plain)
					if s.drawFails == 1 {
						report(playground.Recovered("drawing the canvas", r), "", false)
					}
				}
			}()
			if forced.take("draw") {
				panic("debugPanic: a forced panic while drawing the canvas")
			}
			s.g.Draw(screen)
			s.drawFails = 0
		}()
	} else {
		screen.Fill(plain)
	}
	stats.frame(s.updDur, time.Since(start), s.building, s.rebuilt, s.g.Drew())
	// A big machine takes seconds to build: the page is ready (the
	// canvas draws, the panel answers, the strip shows the build) before
	// its map can show.
	if !readyDone {
		if p, ok := app.Building(); ok && p.CPUs > quickValidateCPUs {
			setReady()
		}
	}
}

// readyDone: window.simReady is set.
var readyDone bool

// setReady sets window.simReady: the page draws and answers.
func setReady() {
	if readyDone {
		return
	}
	readyDone = true
	js.Global().Set("simReady", true)
	if t := js.Global().Get("schedplayLoad"); t.Truthy() {
		t.Set("firstFrame", js.Global().Get("performance").Call("now"))
	}
}

// frameStats is the page's own frame-time record (window.sim.frameStats):
// the work of each frame (Update + Draw), the gap between two frames, the
// longest JavaScript callback into Go and the longest slice of a
// background build (all of which hold the tab), and the longest of the
// engine's indivisible build steps.
type frameStats struct {
	mu       sync.Mutex
	frames   int64 // canvas frames (Update and Draw ran)
	drawn    int64 // of which Draw drew (the picture changed)
	last     time.Time
	maxGap   time.Duration
	maxWork  time.Duration
	lastWork time.Duration
	// The worst frame's split, the worst frame while a build was in
	// progress (its Update saw one and the arms did not change), and the
	// worst frame that took new arms in (rebuilding the canvas for them).
	worstUpd, worstDraw time.Duration
	worstRebuilt        bool
	maxBuildingWork     time.Duration
	maxRebuildWork      time.Duration
	maxCall             time.Duration
	maxCallName         string
	slices              int64
	maxSlice            time.Duration
	maxStep             time.Duration
	// recent are the last frames' work times (a ring), for percentiles.
	recent [frameRing]time.Duration
	nrec   int
}

// frameRing is how many recent frames sim.perf() takes percentiles of.
const frameRing = 512

// slice records a slice of a background build.
func (f *frameStats) slice(d time.Duration, step bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slices++
	if step {
		f.maxStep = max(f.maxStep, d)
	} else {
		f.maxSlice = max(f.maxSlice, d)
	}
}

func (f *frameStats) update(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.last.IsZero() {
		f.maxGap = max(f.maxGap, now.Sub(f.last))
	}
	f.last = now
}

// frame records a canvas frame; the percentiles are of the frames that
// drew (an unchanged frame costs next to nothing and would flatter them).
func (f *frameStats) frame(upd, draw time.Duration, building, rebuilt, drew bool) {
	work := upd + draw
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frames++
	if drew {
		f.drawn++
		f.recent[f.nrec%frameRing] = work
		f.nrec++
	}
	f.lastWork = work
	if work > f.maxWork {
		f.maxWork, f.worstUpd, f.worstDraw, f.worstRebuilt = work, upd, draw, rebuilt
	}
	switch {
	case rebuilt:
		f.maxRebuildWork = max(f.maxRebuildWork, work)
	case building:
		f.maxBuildingWork = max(f.maxBuildingWork, work)
	}
}

// callback records a callback that started at start (defer it).
func (f *frameStats) callback(name string, start time.Time) {
	d := time.Since(start)
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > f.maxCall {
		f.maxCall, f.maxCallName = d, name
	}
}

func (f *frameStats) view(reset bool) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	v := map[string]any{
		"frames": f.frames, "drawn": f.drawn, "maxGapMs": ms(f.maxGap), "maxWorkMs": ms(f.maxWork), "lastWorkMs": ms(f.lastWork),
		"maxCallbackMs": ms(f.maxCall), "maxCallback": f.maxCallName,
		"buildSlices": f.slices, "maxBuildSliceMs": ms(f.maxSlice), "maxBuildStepMs": ms(f.maxStep),
		"worstUpdateMs": ms(f.worstUpd), "worstDrawMs": ms(f.worstDraw), "worstRebuilt": f.worstRebuilt,
		"maxBuildingWorkMs": ms(f.maxBuildingWork), "maxRebuildWorkMs": ms(f.maxRebuildWork),
	}
	if reset {
		f.maxGap, f.maxWork, f.maxCall, f.maxCallName = 0, 0, 0, ""
		f.worstUpd, f.worstDraw, f.worstRebuilt, f.maxBuildingWork, f.maxRebuildWork = 0, 0, false, 0, 0
		f.slices, f.maxSlice, f.maxStep = 0, 0, 0
		f.last = time.Time{}
		f.nrec = 0
	}
	return v
}

// percentiles are the p50, p99 and max of the recent frames' work
// (Update+Draw) in ms; reset=true in view starts a new record.
func (f *frameStats) percentiles() map[string]any {
	f.mu.Lock()
	n := min(f.nrec, frameRing)
	d := append([]time.Duration(nil), f.recent[:n]...)
	f.mu.Unlock()
	slices.Sort(d)
	ms := func(q float64) float64 {
		if n == 0 {
			return 0
		}
		return float64(d[min(n-1, int(q*float64(n)))].Microseconds()) / 1e3
	}
	return map[string]any{"n": n, "p50Ms": ms(0.5), "p99Ms": ms(0.99), "maxMs": ms(1)}
}

func (f *frameStats) count() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frames
}

// ---- links and changes -----------------------------------------------------

// applyFragment applies a share link: a link the parser refuses opens the
// defaults with the reason shown in the page; a good one is built in the
// background (see begin).
func applyFragment(h string) {
	st, err := parseLink(h)
	var p *playground.PanicError
	switch {
	case errors.As(err, &p):
		app.SetError("")
		report(p, strings.TrimPrefix(h, "#"), false)
		openDefaults()
	case err != nil:
		app.SetError("Bad link — showing the defaults instead: " + err.Error())
		openDefaults()
	default:
		// A link of an older format version opens with a banner that
		// names what changed since it was written.
		app.SetError(playground.VersionNotice(h))
		begin(st, true)
	}
}

// parseLink is playground.Parse, with a panic in the parser returned as a
// *playground.PanicError.
func parseLink(h string) (st playground.State, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = playground.Recovered("reading the link", r)
		}
	}()
	return playground.Parse(h)
}

// openDefaults runs the defaults at once (a small machine: quick).
func openDefaults() {
	if err := app.Apply(playground.Default()); err != nil {
		app.SetError("The defaults do not build: " + err.Error())
	}
	writeHash()
}

// begin builds st in the background. The URL shows its link at once. When
// the build fails: a link falls back to the defaults with the reason (a
// panic is shown with the link that reproduces it, and the running
// simulations stay); a change from the panel keeps the running
// simulations and shows the reason.
func begin(st playground.State, fromLink bool) {
	link := st.Encode()
	app.Begin(st, taskStart, func(err error) {
		guarded("finishing the build", func() {
			var p *playground.PanicError
			switch {
			case err == nil:
			case errors.As(err, &p):
				report(p, link, false)
			case fromLink:
				app.SetError("Could not start this simulation — showing the defaults: " + err.Error())
				openDefaults()
				return
			default:
				app.SetError(err.Error())
			}
			writeHash()
		})
	})
	writeHash()
}

// writeHash puts the current state (the one being built, if any) in the
// URL without adding a history entry (replaceState fires no hashchange).
func writeHash() {
	lastHash = app.Link()
	js.Global().Get("history").Call("replaceState", nil, "", "#"+lastHash)
}

// change applies a modified state, built in the background. An error in
// the modification is returned and the running simulation is kept; so is
// one State.Validate finds, on a machine small enough to validate at once
// (on a bigger one, validating lays the machine out per arm: the build
// finds the error, shown in the page).
func change(f func(st *playground.State) error) any {
	st := app.State()
	if err := f(&st); err != nil {
		return result(err)
	}
	if m, err := st.MachineSpec(); err == nil && m.NumCPUs() <= quickValidateCPUs {
		if err := st.Validate(); err != nil {
			return result(err)
		}
	}
	app.SetError("")
	begin(st, false)
	return result(nil)
}

// quickValidateCPUs is the largest machine change validates at once.
const quickValidateCPUs = 512

func result(err error) any {
	if err != nil {
		return map[string]any{"ok": false, "error": err.Error()}
	}
	return map[string]any{"ok": true, "error": ""}
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// fn wraps a window.sim method: a panic inside is recovered and shown,
// and the method returns null.
func fn(name string, f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (out any) {
		taskStart = time.Now()
		defer stats.callback(name, taskStart)
		defer ui.Invalidate() // what the canvas shows may have changed
		defer func() {
			if r := recover(); r != nil {
				report(playground.Recovered("answering sim."+name+"()", r), "", false)
				out = nil
			}
		}()
		return f(args)
	})
}

// setter wraps a window.sim method that returns {ok, error}: a panic
// inside is recovered, shown, and returned as an error.
func setter(name string, f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (out any) {
		taskStart = time.Now()
		defer stats.callback(name, taskStart)
		defer ui.Invalidate() // what the canvas shows may have changed
		defer func() {
			if r := recover(); r != nil {
				p := playground.Recovered("answering sim."+name+"()", r)
				report(p, "", name == "step")
				out = result(p)
			}
		}()
		return f(args)
	})
}

// promise runs work in a goroutine and resolves with its string result; a
// panic in work is recovered (halting the simulations when halt: work
// stepped them) and rejects the promise.
func promise(where string, halt bool, work func() (string, error)) any {
	var ex js.Func
	ex = js.FuncOf(func(_ js.Value, a []js.Value) any {
		resolve, reject := a[0], a[1]
		go func() {
			defer ex.Release()
			var s string
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						p := playground.Recovered(where, r)
						report(p, "", halt)
						err = p
					}
				}()
				s, err = work()
			}()
			if err != nil {
				reject.Invoke(err.Error())
				return
			}
			resolve.Invoke(s)
		}()
		return nil
	})
	return js.Global().Get("Promise").New(ex)
}

// waitBuilt waits (in a goroutine, sleeping: the page goes on) until no
// background build runs.
func waitBuilt() {
	for {
		if _, building := app.Building(); !building {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func toJS(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("toJS: %v", err))
	}
	return js.Global().Get("JSON").Call("parse", string(b))
}

func installAPI() {
	api := map[string]any{
		"version": playground.LinkVersion,
		"knobs": fn("knobs", func([]js.Value) any {
			type row struct {
				Name, Kind, Group, Default, Allowed, Unit, Doc, Source string
				Values                                                 []string
				// Missing: era name -> why the knob does not exist there.
				Missing map[string]string
			}
			var out []row
			for _, d := range knob.Table() {
				r := row{d.Name, d.Kind.String(), string(d.Group), d.Format(d.Default), d.Allowed(), d.Unit, d.Doc, playground.KnobSource(&d), d.Values, map[string]string{}}
				for _, e := range knob.Eras() {
					if ok, why := knob.Exists(d.ID, e); !ok {
						r.Missing[e.String()] = why
					}
				}
				out = append(out, r)
			}
			return toJS(out)
		}),
		"machineDefaults": fn("machineDefaults", func(a []js.Value) any {
			// knob values in effect for the current machine before any
			// setting: the era's (argument 0, default 5.2), with the
			// machine's costs.
			st := app.State()
			spec, err := st.MachineSpec()
			if err != nil {
				return toJS(map[string]string{})
			}
			era := knob.Era52
			if e := arg(a, 0); e.Type() == js.TypeString {
				if x, err := knob.ParseEra(e.String()); err == nil {
					era = x
				}
			}
			out := map[string]string{}
			for _, d := range knob.Table() {
				v := knob.DefaultIn(d.ID, era)
				if c, ok := spec.Costs[d.Name]; ok {
					v = c
				}
				out[d.Name] = d.Format(v)
			}
			return toJS(out)
		}),
		"presets": fn("presets", func([]js.Value) any { return toJS(presets.List()) }),
		"workloadKinds": fn("workloadKinds", func([]js.Value) any {
			type key struct{ Name, Default, Doc string }
			type kind struct {
				Name, Doc string
				Keys      []key
			}
			var out []kind
			for _, n := range workload.Kinds() {
				k, _ := workload.Lookup(n)
				kk := kind{Name: n, Doc: k.Doc}
				for _, kd := range k.AllKeys() {
					kk.Keys = append(kk.Keys, key{kd.Name, kd.Default, kd.Doc})
				}
				out = append(out, kk)
			}
			return toJS(out)
		}),
		"state": fn("state", func([]js.Value) any { return toJS(stateView()) }),
		// The shipped example policies (examples/policies/), for the
		// editor's select.
		"policyExamples": fn("policyExamples", func([]js.Value) any { return toJS(examples.Policies()) }),
		// policy(arm) is arm's wake policy: {name, src, error}.
		"policy": fn("policy", func(a []js.Value) any {
			st := app.State()
			p := st.ArmPolicy(arg(a, 0).Int())
			msg := ""
			if _, err := playground.CompilePolicy(p); err != nil {
				msg = err.Error()
			}
			return map[string]any{"name": p.Name, "src": p.Src, "error": msg}
		}),
		// checkPolicy(name, src) compiles a policy without running it:
		// {ok, error} with the error at file:line:col.
		"checkPolicy": fn("checkPolicy", func(a []js.Value) any {
			_, err := playground.CompilePolicy(playground.Policy{Name: arg(a, 0).String(), Src: arg(a, 1).String()})
			return result(err)
		}),
		// setPolicy(arm, name, src) runs arm (0: A, …) with the policy
		// (src "": none), rebuilding the run; a policy that does not
		// compile is refused with its error and the run is kept.
		"setPolicy": setter("setPolicy", func(a []js.Value) any {
			arm := arg(a, 0).Int()
			p := playground.Policy{Name: arg(a, 1).String(), Src: arg(a, 2).String()}
			if strings.TrimSpace(p.Src) == "" {
				p = playground.Policy{}
			}
			return change(func(st *playground.State) error {
				if arm < 0 || arm >= st.NumArms() {
					return fmt.Errorf("arm %d: the run has %d", arm, st.NumArms())
				}
				if _, err := playground.CompilePolicy(p); err != nil {
					return err
				}
				st.Policies[arm] = p
				return nil
			})
		}),
		"apply": setter("apply", func(a []js.Value) any {
			applyFragment(arg(a, 0).String())
			if e := app.Error(); e != "" {
				return map[string]any{"ok": false, "error": e}
			}
			return result(nil)
		}),
		"workloadsFromFiles": fn("workloadsFromFiles", func(a []js.Value) any {
			// Several files picked or dropped at once: [[name, text], …] →
			// their specs (the rt-app files merged into one workload).
			list := arg(a, 0)
			files := make([]playground.NamedFile, list.Length())
			for i := range files {
				f := list.Index(i)
				files[i] = playground.NamedFile{Name: f.Index(0).String(), Data: []byte(f.Index(1).String())}
			}
			specs, err := playground.WorkloadsFromFiles(files)
			if err != nil {
				return map[string]any{"ok": false, "error": err.Error()}
			}
			out := make([]any, len(specs))
			for i, s := range specs {
				out[i] = s
			}
			return map[string]any{"ok": true, "specs": out}
		}),
		"setKnob": setter("setKnob", func(a []js.Value) any {
			armName, name, val := arg(a, 0).String(), arg(a, 1).String(), arg(a, 2).String()
			return change(func(st *playground.State) error {
				id, ok := knob.Lookup(name)
				if !ok {
					return knob.UnknownError(name)
				}
				d := knob.ByID(id)
				if _, err := d.Parse(val); err != nil {
					return err
				}
				m := st.Knobs
				if armName == "b" || armName == "B" {
					m = st.KnobsB
				}
				era := knob.Era52
				if e, ok := m["era"]; ok {
					era, _ = knob.ParseEra(e)
				}
				if id == knob.EraKnob {
					// A new era: the settings it has no knob for go
					// (the panel greys those rows out).
					era, _ = knob.ParseEra(val)
					for name := range m {
						if kid, ok := knob.Lookup(name); ok {
							if ok, _ := knob.Exists(kid, era); !ok {
								delete(m, name)
							}
						}
					}
				} else if ok, why := knob.Exists(id, era); !ok {
					return fmt.Errorf("knob %s does not exist in era %s: %s", d.Name, era, why)
				}
				defaults := machineDefault(st, d.Name, era)
				if x, _ := d.Parse(val); d.Format(x) == defaults {
					delete(m, d.Name)
				} else {
					m[d.Name] = val
				}
				return nil
			})
		}),
		"setPreset": setter("setPreset", func(a []js.Value) any {
			name := arg(a, 0).String()
			if strings.HasPrefix(name, "exp:") {
				// A guided run: it runs (to the experiment's quick duration).
				app.SetPaused(false)
				applyFragment("exp=" + strings.TrimPrefix(name, "exp:"))
				if e := app.Error(); e != "" {
					return map[string]any{"ok": false, "error": e}
				}
				return result(nil)
			}
			return change(func(st *playground.State) error {
				if _, err := presets.Machine(name); err != nil {
					return err
				}
				// The machine's own workloads, unless the user edited them.
				st.SetMachine(name, nil)
				return nil
			})
		}),
		"setMachineJSON": setter("setMachineJSON", func(a []js.Value) any {
			return change(func(st *playground.State) error {
				spec, err := presets.ParseMachine([]byte(arg(a, 0).String()), presets.PasteSource)
				if err != nil {
					return err
				}
				st.SetMachine(spec.Name, spec)
				return nil
			})
		}),
		"setWorkloads": setter("setWorkloads", func(a []js.Value) any {
			list := arg(a, 0)
			return change(func(st *playground.State) error {
				var ws []string
				for i := 0; i < list.Length(); i++ {
					if w := strings.TrimSpace(list.Index(i).String()); w != "" {
						if err := st.CheckWorkload(w); err != nil {
							return err
						}
						ws = append(ws, w)
					}
				}
				st.Workloads = ws
				return nil
			})
		}),
		"setSeed": setter("setSeed", func(a []js.Value) any {
			return change(func(st *playground.State) error {
				n := arg(a, 0).Float()
				if n < 0 || n != float64(uint64(n)) {
					return fmt.Errorf("seed %v: a non-negative integer", n)
				}
				st.Seed = uint64(n)
				return nil
			})
		}),
		"setAB": setter("setAB", func(a []js.Value) any {
			return change(func(st *playground.State) error {
				st.AB = arg(a, 0).Truthy()
				st.Extra = nil
				return nil
			})
		}),
		"setSpeed": setter("setSpeed", func(a []js.Value) any {
			if err := app.SetSpeed(arg(a, 0).Float()); err != nil {
				return result(err)
			}
			writeHash()
			return result(nil)
		}),
		"pause": fn("pause", func(a []js.Value) any {
			p := !app.Paused()
			if len(a) > 0 {
				p = a[0].Truthy()
			}
			app.SetPaused(p)
			return p
		}),
		// step() runs arm A to its next wakeup decision, step("event")
		// one event; the other arm follows to the same time.
		"step": setter("step", func(a []js.Value) any {
			kind := "wakeup"
			if arg(a, 0).Type() == js.TypeString && arg(a, 0).String() == "event" {
				kind = "event"
			}
			app.Step(kind)
			return result(nil)
		}),
		// decisions() is the decision panel: per arm its last decisions
		// in full (playground.LoggedDecision), and the highlighted one.
		// decisions(arm) gives only that arm's log (and the highlighted
		// decision's arm's).
		"decisions": fn("decisions", func(a []js.Value) any {
			only := -1
			if arg(a, 0).Type() == js.TypeNumber {
				only = arg(a, 0).Int()
			}
			return toJS(app.Decisions(only))
		}),
		// decisionsVersion() changes whenever decisions() may have.
		"decisionsVersion": fn("decisionsVersion", func([]js.Value) any {
			return app.DecisionsVersion()
		}),
		// highlight(arm, n) shows decision n of arm (0 = A) on the map.
		"highlight": fn("highlight", func(a []js.Value) any {
			return app.Highlight(arg(a, 0).Int(), int64(arg(a, 1).Float()))
		}),
		// experiment() is the experiment panel (a promise of JSON, "null"
		// when the arms are no experiment's): the experiment's arms, its
		// rows and checks evaluated on the live arms so far and on its
		// reproduction at the quick size in the background.
		"experiment": fn("experiment", func([]js.Value) any {
			return promise("reading the experiment", false, func() (string, error) {
				v, err := app.Experiment()
				if err != nil {
					return "", err
				}
				b, err := json.Marshal(v)
				return string(b), err
			})
		}),
		// exportTrace(ms, format, arm) is a promise of arm's (0 = A)
		// trace of the last ms simulated milliseconds: "json" (Chrome
		// trace, what Perfetto opens) or "ftrace" text.
		"exportTrace": fn("exportTrace", func(a []js.Value) any {
			ms, format, arm := arg(a, 0).Float(), "json", 0
			if arg(a, 1).Type() == js.TypeString {
				format = arg(a, 1).String()
			}
			if arg(a, 2).Type() == js.TypeNumber {
				arm = arg(a, 2).Int()
			}
			return promise("exporting a trace", false, func() (string, error) {
				waitBuilt()
				return app.ExportTrace(arm, ms, format)
			})
		}),
		// perf() is the debug overlay's record: the main thread's frame
		// times (p50, p99, max over the last frames), and per engine
		// worker its simulated-time rate, events/s and start time.
		"perf": fn("perf", func([]js.Value) any {
			return toJS(map[string]any{"frame": stats.percentiles(), "workers": app.perf(), "achievedSpeed": finite(app.AchievedSpeed()), "canvas": fcap.view()})
		}),
		// reset restarts the running simulations (canceling a build).
		"reset": setter("reset", func([]js.Value) any {
			app.SetError("")
			begin(app.RunningState(), false)
			return result(nil)
		}),
		// resetDefault opens the defaults at once, whatever happened: the
		// recovery banner's button.
		"resetDefault": setter("resetDefault", func([]js.Value) any {
			app.CancelBuild()
			app.SetError("")
			app.ClearCrash()
			openDefaults()
			return result(nil)
		}),
		// cancelBuild stops a background build; the running simulations
		// (and their link) stay.
		"cancelBuild": fn("cancelBuild", func([]js.Value) any {
			ok := app.CancelBuild()
			writeHash()
			return ok
		}),
		"dismissCrash": fn("dismissCrash", func([]js.Value) any {
			app.ClearCrash()
			return nil
		}),
		// frameStats(reset) is the page's frame-time record: frames,
		// maxWorkMs (Update+Draw), maxGapMs (between frames), the longest
		// callback into Go, the longest build slice and build step;
		// reset starts a new record.
		"frameStats": fn("frameStats", func(a []js.Value) any {
			return js.ValueOf(stats.view(arg(a, 0).Truthy()))
		}),
		"link": fn("link", func([]js.Value) any { return "#" + app.Link() }),
		"results": fn("results", func([]js.Value) any {
			return promise("collecting the results", false, func() (string, error) {
				waitBuilt()
				return app.Results()
			})
		}),
		"runTo": fn("runTo", func(a []js.Value) any {
			secs := arg(a, 0).Float()
			return promise("running the simulation", true, func() (string, error) {
				if !(secs > 0 && secs <= 3600) {
					return "", fmt.Errorf("runTo: %v s out of range (allowed: (0, 3600])", secs)
				}
				waitBuilt()
				return app.RunTo(int64(secs * float64(engine.Second)))
			})
		}),
	}
	if debug {
		// debugPanic(where) forces one panic: "update" (running the
		// simulation), "draw", "build" (the next background build),
		// or "callback" (right here).
		api["debugPanic"] = fn("debugPanic", func(a []js.Value) any {
			where := arg(a, 0).String()
			switch where {
			case "update":
				app.Lock()
				if len(app.workers) > 0 && app.workers[0] != nil {
					app.workers[0].post(map[string]any{"t": "debugPanic", "where": "update"})
				}
				app.Unlock()
			case "build":
				app.Lock()
				app.forceBuild = true
				app.Unlock()
			case "draw":
				forced.set(where)
			case "callback":
				panic("debugPanic: a forced panic in a callback")
			default:
				return "debugPanic: want update, draw, build or callback"
			}
			return where
		})
	}
	js.Global().Set("sim", js.ValueOf(api))
}

func machineDefault(st *playground.State, name string, era knob.Era) string {
	id, _ := knob.Lookup(name)
	d := knob.ByID(id)
	v := knob.DefaultIn(id, era)
	if id == knob.EraKnob {
		v = d.Default
	}
	if spec, err := st.MachineSpec(); err == nil {
		if c, ok := spec.Costs[d.Name]; ok {
			v = c
		}
	}
	return d.Format(v)
}

func stateView() playground.PageState {
	st := app.State()
	v := playground.PageState{
		Ready: js.Global().Get("simReady").Truthy(), Link: "#" + st.Encode(), Preset: st.Preset,
		Workloads: st.Workloads, Knobs: st.Knobs, KnobsB: st.KnobsB, Extra: st.Extra, AB: st.AB, Seed: st.Seed, Speed: finite(st.Speed),
		AchievedSpeed: finite(app.AchievedSpeed()), Paused: app.Paused(), Finished: app.Finished(),
		Experiment: expName(&st), Error: app.Error(), Crash: app.Crashed(), Halted: app.Halted(),
		Frames: stats.count(), Story: st.Story(), Policies: st.PolicyViews(),
	}
	if p, ok := app.Building(); ok {
		v.Building, v.BuildingText = &p, p.Text()
		p.ElapsedMs, p.MaxSliceMs = finite(p.ElapsedMs), finite(p.MaxSliceMs)
	}
	if game != nil {
		v.FrameMs = finite(game.FrameMs())
		v.Legend = game.LegendLabels()
	}
	app.Lock()
	defer app.Unlock()
	for _, arm := range app.views {
		sn := &arm.Snap
		v.Machine, v.CPUs = arm.Topo.Spec.Name, arm.Topo.NCPU
		if arm.Label == "A" {
			v.SimTime = finite(float64(sn.Totals.Now) / float64(engine.Second))
		}
		tot := sn.Totals
		av := playground.ArmState{Label: arm.Label, Wakeups: tot.Wakeups, Events: tot.Events, SISCalls: tot.SISCalls, PolicyError: sn.PolicyErr}
		if tot.SISCalls > 0 {
			av.ProbesMean = finite(float64(tot.SISProbes) / float64(tot.SISCalls))
		}
		if sn.HasDelayed {
			d := sn.Delayed
			av.Delayed = &d
		}
		if sn.HasDL {
			d := sn.DLStats
			d.Tasks = slices.Clone(d.Tasks)
			av.DL = &d
		}
		if len(sn.Hists) > 0 {
			h := &sn.Hists[0]
			av.Count, av.P50, av.P99, av.P999 = h.Count, h.Pct[0], h.Pct[1], h.Pct[2]
		}
		v.Arms = append(v.Arms, av)
	}
	return v
}

// expName is the experiment the state runs, "" when its arms are no
// longer the experiment's.
func expName(st *playground.State) string {
	if st.IsExperiment() {
		return st.Experiment
	}
	return ""
}

// finite keeps NaN and ±Inf (which JSON cannot carry) out of state().
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
