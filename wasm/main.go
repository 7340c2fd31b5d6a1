//go:build js && wasm

// Command wasm is the browser playground: it runs the engine through
// playground.App, draws it with ui (ebiten) and exposes window.sim to the
// page's control panel. Share links live in the URL fragment: the page
// state is written there on every change and re-read on hashchange.
//
// Callbacks never block: long work (results, runTo) returns a Promise and
// runs in a goroutine, so the tab never freezes.
package main

import (
	"fmt"
	"strings"
	"syscall/js"

	"github.com/hajimehoshi/ebiten/v2"

	json "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/playground"
	"schedplay/presets"
	"schedplay/ui"
)

var (
	app      *playground.App
	game     *ui.Game
	lastHash string
)

func main() {
	app = playground.New()
	// The page opens with the link it was loaded with; a bad link falls
	// back to the defaults with a message.
	applyFragment(js.Global().Get("location").Get("hash").String())
	game = ui.New(app, ui.Options{OnFirstDraw: func() {
		js.Global().Set("simReady", true)
	}})
	installAPI()
	js.Global().Call("addEventListener", "hashchange", js.FuncOf(func(js.Value, []js.Value) any {
		h := js.Global().Get("location").Get("hash").String()
		if strings.TrimPrefix(h, "#") != lastHash {
			applyFragment(h)
		}
		return nil
	}))
	ebiten.SetWindowTitle("schedplay")
	ebiten.SetRunnableOnUnfocused(true)
	if err := ebiten.RunGame(game); err != nil {
		js.Global().Set("simError", "the canvas stopped: "+err.Error())
	}
}

// applyFragment applies a share link, falling back to the defaults (with
// the reason shown in the page) when it is bad.
func applyFragment(h string) {
	st, err := playground.Parse(h)
	if err != nil {
		app.SetError("Bad link — showing the defaults instead: " + err.Error())
		st = playground.Default()
	} else {
		app.SetError("")
	}
	if err := app.Apply(st); err != nil {
		app.SetError("Could not start this simulation — showing the defaults: " + err.Error())
		app.Apply(playground.Default())
	}
	writeHash()
}

// writeHash puts the current state in the URL without adding a history
// entry (replaceState fires no hashchange).
func writeHash() {
	lastHash = app.Link()
	js.Global().Get("history").Call("replaceState", nil, "", "#"+lastHash)
}

// change applies a modified state; errors are returned to the caller and
// the running simulation is kept.
func change(f func(st *playground.State) error) any {
	st := app.State()
	if err := f(&st); err != nil {
		return result(err)
	}
	if err := app.Apply(st); err != nil {
		return result(err)
	}
	app.SetError("")
	writeHash()
	return result(nil)
}

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

func fn(f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer func() {
			if r := recover(); r != nil {
				app.SetError(fmt.Sprint("internal error: ", r))
			}
		}()
		return f(args)
	})
}

// promise runs work in a goroutine and resolves with its string result.
func promise(work func() (string, error)) any {
	var ex js.Func
	ex = js.FuncOf(func(_ js.Value, a []js.Value) any {
		resolve, reject := a[0], a[1]
		go func() {
			defer ex.Release()
			s, err := work()
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

func toJS(v any) any {
	b, _ := json.Marshal(v)
	return js.Global().Get("JSON").Call("parse", string(b))
}

func installAPI() {
	api := map[string]any{
		"version": playground.LinkVersion,
		"knobs": fn(func([]js.Value) any {
			type row struct {
				Name, Kind, Group, Default, Allowed, Unit, Doc string
				Values                                         []string
			}
			var out []row
			for _, d := range knob.Table() {
				out = append(out, row{d.Name, d.Kind.String(), string(d.Group), d.Format(d.Default), d.Allowed(), d.Unit, d.Doc, d.Values})
			}
			return toJS(out)
		}),
		"machineDefaults": fn(func([]js.Value) any {
			// knob values in effect for the current machine before any
			// setting: the table's, with the machine's costs.
			st := app.State()
			spec, err := st.MachineSpec()
			if err != nil {
				return toJS(map[string]string{})
			}
			out := map[string]string{}
			for _, d := range knob.Table() {
				v := d.Default
				if c, ok := spec.Costs[d.Name]; ok {
					v = c
				}
				out[d.Name] = d.Format(v)
			}
			return toJS(out)
		}),
		"presets": fn(func([]js.Value) any { return toJS(presets.List()) }),
		"workloadKinds": fn(func([]js.Value) any {
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
		"state": fn(func([]js.Value) any { return toJS(stateView()) }),
		"apply": fn(func(a []js.Value) any {
			applyFragment(arg(a, 0).String())
			if e := app.Error(); e != "" {
				return map[string]any{"ok": false, "error": e}
			}
			return result(nil)
		}),
		"setKnob": fn(func(a []js.Value) any {
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
				defaults := machineDefault(st, d.Name)
				if x, _ := d.Parse(val); d.Format(x) == defaults {
					delete(m, d.Name)
				} else {
					m[d.Name] = val
				}
				return nil
			})
		}),
		"setPreset": fn(func(a []js.Value) any {
			name := arg(a, 0).String()
			if strings.HasPrefix(name, "exp:") {
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
				st.Preset, st.Machine, st.Experiment = name, nil, ""
				return nil
			})
		}),
		"setMachineJSON": fn(func(a []js.Value) any {
			return change(func(st *playground.State) error {
				spec, err := presets.ParseMachine([]byte(arg(a, 0).String()), presets.PasteSource)
				if err != nil {
					return err
				}
				st.Machine, st.Preset = spec, spec.Name
				return nil
			})
		}),
		"setWorkloads": fn(func(a []js.Value) any {
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
		"setSeed": fn(func(a []js.Value) any {
			return change(func(st *playground.State) error {
				n := arg(a, 0).Float()
				if n < 0 || n != float64(uint64(n)) {
					return fmt.Errorf("seed %v: a non-negative integer", n)
				}
				st.Seed = uint64(n)
				return nil
			})
		}),
		"setAB": fn(func(a []js.Value) any {
			return change(func(st *playground.State) error {
				st.AB = arg(a, 0).Truthy()
				return nil
			})
		}),
		"setSpeed": fn(func(a []js.Value) any {
			if err := app.SetSpeed(arg(a, 0).Float()); err != nil {
				return result(err)
			}
			writeHash()
			return result(nil)
		}),
		"pause": fn(func(a []js.Value) any {
			p := !app.Paused()
			if len(a) > 0 {
				p = a[0].Truthy()
			}
			app.SetPaused(p)
			return p
		}),
		"step": fn(func([]js.Value) any {
			app.SetPaused(true)
			app.StepWakeup()
			return result(nil)
		}),
		"reset": fn(func([]js.Value) any { return result(app.Reset()) }),
		"link":  fn(func([]js.Value) any { return "#" + app.Link() }),
		"results": fn(func([]js.Value) any {
			return promise(func() (string, error) {
				b, err := app.Results()
				return string(b), err
			})
		}),
		"runTo": fn(func(a []js.Value) any {
			secs := arg(a, 0).Float()
			return promise(func() (string, error) {
				if secs <= 0 || secs > 3600 {
					return "", fmt.Errorf("runTo: %v s out of range (allowed: (0, 3600])", secs)
				}
				app.SetPaused(true)
				app.RunTo(int64(secs * float64(engine.Second)))
				b, err := app.Results()
				return string(b), err
			})
		}),
	}
	js.Global().Set("sim", js.ValueOf(api))
}

func machineDefault(st *playground.State, name string) string {
	id, _ := knob.Lookup(name)
	d := knob.ByID(id)
	v := d.Default
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
		Workloads: st.Workloads, Knobs: st.Knobs, KnobsB: st.KnobsB, AB: st.AB, Seed: st.Seed, Speed: st.Speed,
		AchievedSpeed: app.AchievedSpeed(), Paused: app.Paused(), Finished: app.Finished(),
		Experiment: st.Experiment, Error: app.Error(),
	}
	if game != nil {
		v.FrameMs = game.FrameMs()
	}
	app.Lock()
	defer app.Unlock()
	for _, arm := range app.Arms() {
		s := arm.Sim
		v.Machine, v.CPUs = s.Topology().Spec.Name, s.Topology().NCPU
		v.SimTime = float64(s.Now()) / float64(engine.Second)
		tot := s.Totals()
		av := playground.ArmState{Label: arm.Label, Wakeups: tot.Wakeups, Events: tot.Events}
		if tot.SISCalls > 0 {
			av.ProbesMean = float64(tot.SISProbes) / float64(tot.SISCalls)
		}
		if s.NumWorkloads() > 0 {
			h := s.WakeupHistogram(0)
			av.Count, av.P50, av.P99, av.P999 = h.Count(), h.Percentile(50), h.Percentile(99), h.Percentile(99.9)
		}
		v.Arms = append(v.Arms, av)
	}
	return v
}
