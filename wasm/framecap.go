//go:build js && wasm

package main

import (
	"net/url"
	"strconv"
	"strings"
	"syscall/js"

	"schedplay/ui"
)

// The canvas frame-rate policy (ui/frames.go draws on demand, at most
// ui.SetMaxFPS a second). At "max" speed the workers use every core they get,
// and every frame the canvas presents costs CPU somewhere: with a GPU
// next to nothing, with a software WebGL (SwiftShader, llvmpipe) 55–80 ms
// of a core each in the GPU process — on the 2-core test machine the page
// at max speed drew ~12 frames a second and that took a core from the
// workers. Drawing 4 frames a second instead ran the workers 25–45%
// faster there (BENCHMARKS.md, fifth session). So at max speed, on a
// software renderer with at most 4 hardware threads, the canvas draws 4
// frames a second; otherwise at the display's rate. The workers post
// snapshots at the same rate (client.SetSnapInterval). ?fps=N in the page's
// query (not the link: it is how this browser shows the run, not the
// run) sets the cap for every speed: 1..60, 0 = the display's rate.
const (
	slowFPS      = 4
	slowMaxCores = 4
)

type frameCap struct {
	override int // ?fps=, -1: none
	software int // 0 unknown, 1 software renderer, 2 hardware
	cores    int // navigator.hardwareConcurrency (0: not read, -1: none)
	applied  int // the cap set, -1: none yet
	reason   string
}

var fcap = frameCap{override: -1, applied: -1}

// readOverride reads ?fps= once; a bad value is reported and ignored.
func (f *frameCap) readOverride(q url.Values) string {
	v := q.Get("fps")
	if v == "" {
		return ""
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 60 {
		return "?fps=" + v + " ignored: want an integer 0..60 (0: the display's rate)"
	}
	f.override = n
	return ""
}

// apply sets the cap for the speed (0: max), once the canvas has its
// WebGL context.
func (f *frameCap) apply(speed float64) {
	fps, reason := 0, "the display's rate"
	switch {
	case f.override >= 0:
		fps, reason = f.override, "?fps="+strconv.Itoa(f.override)
	case speed == 0:
		if f.software == 0 {
			f.software = softwareRenderer()
		}
		if f.cores == 0 {
			f.cores = -1
			if v := js.Global().Get("navigator").Get("hardwareConcurrency"); v.Type() == js.TypeNumber && v.Int() > 0 {
				f.cores = v.Int()
			}
		}
		if f.software == 1 && f.cores > 0 && f.cores <= slowMaxCores {
			fps, reason = slowFPS, "max speed on a software WebGL renderer with "+strconv.Itoa(f.cores)+" hardware threads"
		}
	}
	if fps != f.applied {
		f.applied, f.reason = fps, reason
		ui.SetMaxFPS(fps)
		snapMs := 0.0
		if fps > 0 {
			snapMs = 1000 / float64(fps)
		}
		app.SetSnapInterval(snapMs)
	}
}

// softwareRenderer reports 1 when the canvas's WebGL context renders on
// the CPU, 2 when not, 0 when it cannot tell yet (no context). It asks
// the canvas ebiten draws on: getContext returns the existing context,
// no new one is made.
func softwareRenderer() int {
	c := js.Global().Get("document").Call("querySelector", "canvas")
	if !c.Truthy() {
		return 0
	}
	gl := c.Call("getContext", "webgl2")
	if !gl.Truthy() {
		return 0
	}
	r := gl.Call("getParameter", gl.Get("RENDERER"))
	if ext := gl.Call("getExtension", "WEBGL_debug_renderer_info"); ext.Truthy() {
		r = gl.Call("getParameter", ext.Get("UNMASKED_RENDERER_WEBGL"))
	}
	if r.Type() != js.TypeString {
		return 0
	}
	s := strings.ToLower(r.String())
	for _, soft := range []string{"swiftshader", "llvmpipe", "softpipe", "software"} {
		if strings.Contains(s, soft) {
			return 1
		}
	}
	return 2
}

// view is what sim.perf() reports of the cap.
func (f *frameCap) view() map[string]any {
	var soft any // null: not asked yet (it is, at max speed)
	if f.software != 0 {
		soft = f.software == 1
	}
	return map[string]any{"maxFps": f.applied, "why": f.reason, "softwareRenderer": soft}
}
