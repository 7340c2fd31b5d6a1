package ui

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"testing"

	"schedplay/engine"
)

// Colour-vision simulation for the palette tests: sRGB → linear RGB, the
// Machado, Oliveira & Fernandes (2009) matrices for full deuteranopia
// and protanopia, then CIELAB (D65) and the CIE76 distance ΔE*ab.

func srgbToLinear(c uint8) float64 {
	v := float64(c) / 255
	if v <= 0.04045 {
		return v / 12.92
	}
	return math.Pow((v+0.055)/1.055, 2.4)
}

type cvd [3][3]float64

var (
	normalVision = cvd{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	deuteranopia = cvd{{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}}
	protanopia   = cvd{{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.109216}, {-0.003882, -0.048116, 1.051998}}
)

// lab returns c's CIELAB coordinates as seen with vision m.
func lab(c color.RGBA, m cvd) [3]float64 {
	in := [3]float64{srgbToLinear(c.R), srgbToLinear(c.G), srgbToLinear(c.B)}
	var rgb [3]float64
	for i := range rgb {
		rgb[i] = min(max(m[i][0]*in[0]+m[i][1]*in[1]+m[i][2]*in[2], 0), 1)
	}
	x := 0.4124*rgb[0] + 0.3576*rgb[1] + 0.1805*rgb[2]
	y := 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
	z := 0.0193*rgb[0] + 0.1192*rgb[1] + 0.9505*rgb[2]
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	fx, fy, fz := f(x/0.95047), f(y), f(z/1.08883)
	return [3]float64{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

func deltaE(a, b color.RGBA, m cvd) float64 {
	p, q := lab(a, m), lab(b, m)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}

// stateColours are the fills a CPU cell can have, each with its meaning.
func stateColours() map[string]color.RGBA {
	m := map[string]color.RGBA{
		"polling":              colPolling,
		"waking":               colWaking,
		"idle shallowest":      IdleColor(0, 3),
		"idle middle":          IdleColor(1, 3),
		"idle deepest":         IdleColor(2, 3),
		"runqueue depth (bar)": colQueue,
	}
	for i := range workloadPalette {
		m[fmt.Sprintf("workload %d", i)] = WorkloadColor(i)
	}
	return m
}

// Every state of a CPU cell has its own colour, and any two stay apart
// for normal vision, deuteranopia and protanopia: ΔE*ab >= 12 between
// different states, >= 6 between neighbouring depths of the idle ramp
// (one state, an ordered lightness scale, whose depth the cells also
// spell out where they have room).
func TestPaletteDistinctUnderColourBlindness(t *testing.T) {
	cols := stateColours()
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	for _, v := range []struct {
		name string
		m    cvd
	}{{"normal", normalVision}, {"deuteranopia", deuteranopia}, {"protanopia", protanopia}} {
		worst, wa, wb := math.Inf(1), "", ""
		for i, a := range names {
			for _, b := range names[i+1:] {
				if cols[a] == cols[b] {
					t.Errorf("%s and %s share a colour", a, b)
				}
				d := deltaE(cols[a], cols[b], v.m)
				if d < worst {
					worst, wa, wb = d, a, b
				}
				want := 12.0
				if strings.HasPrefix(a, "idle ") && strings.HasPrefix(b, "idle ") {
					want = 6
				}
				if d < want {
					t.Errorf("%s: %s %v and %s %v are %.1f apart (want >= %.0f)", v.name, a, cols[a], b, cols[b], d, want)
				}
			}
		}
		t.Logf("%s: closest pair %s / %s, ΔE %.1f", v.name, wa, wb, worst)
	}
}

// Cells, the map's boxes and the background stay apart too: an idle CPU
// in its deepest C-state still shows against its core box.
func TestPaletteCellsStandOutFromBoxes(t *testing.T) {
	boxes := map[string]color.RGBA{"background": colBackground, "socket": colSocket, "LLC": colLLC, "core": colCore}
	for sn, sc := range stateColours() {
		for bn, bc := range boxes {
			for _, m := range []cvd{normalVision, deuteranopia} {
				if d := deltaE(sc, bc, m); d < 7 {
					t.Errorf("%s on %s: ΔE %.1f (want >= 7)", sn, bn, d)
				}
			}
		}
	}
}

// The idle ramp gets darker with depth, in visible steps, and stays
// darker than polling and lighter than the core box.
func TestIdleRampOrdered(t *testing.T) {
	for n := 2; n <= 4; n++ {
		prev := lab(colPolling, normalVision)[0]
		for d := 0; d < n; d++ {
			l := lab(IdleColor(d, n), normalVision)[0]
			if prev-l < 6 {
				t.Errorf("%d states: depth %d L* %.1f, not clearly darker than the step before (%.1f)", n, d, l, prev)
			}
			prev = l
		}
		if core := lab(colCore, normalVision)[0]; prev-core < 3 {
			t.Errorf("%d states: deepest idle L* %.1f too close to the core box %.1f", n, prev, core)
		}
	}
}

// No colour means two things: the state colours are not reused by the
// has_idle_cores square, the decision marks or the chart lines.
func TestPaletteNoColourMeansTwoThings(t *testing.T) {
	others := map[string]color.RGBA{"has_idle_cores / decision marks": colHint, "chart lines": colLine}
	for sn, sc := range stateColours() {
		for on, oc := range others {
			if sc == oc || deltaE(sc, oc, deuteranopia) < 10 {
				t.Errorf("%s %v too close to %s %v", sn, sc, on, oc)
			}
		}
	}
	if colHint != colMark {
		t.Log("has_idle_cores and decision marks differ")
	}
}

func TestClassify(t *testing.T) {
	idle := engine.CPUView{Curr: -1, Workload: -1, Idle: true, CState: 1}
	if s := Classify(&idle, false, 1, 3); s.Kind != CellIdle || s.Depth != 0 || s.Depths != 2 {
		t.Errorf("idle in C1 of POLL,C1,C2: %+v", s)
	}
	deep := idle
	deep.CState = 2
	if s := Classify(&deep, false, 1, 3); s.Kind != CellIdle || s.Depth != 1 || CellColor(s) != colIdleDeep {
		t.Errorf("idle in the deepest state: %+v", s)
	}
	if s := Classify(&idle, true, 1, 3); s.Kind != CellPolling || CellColor(s) != colPolling {
		t.Errorf("polling: %+v", s)
	}
	claimed := idle
	claimed.Idle = false // a wakeup claimed it: not available_idle_cpu
	if s := Classify(&claimed, false, 1, 3); s.Kind != CellWaking || CellColor(s) != colWaking {
		t.Errorf("claimed idle CPU: %+v", s)
	}
	queued := idle
	queued.Idle, queued.Queued = false, 1 // enqueued, its C-state exit in flight
	if s := Classify(&queued, false, 1, 3); s.Kind != CellWaking {
		t.Errorf("idle CPU with a task enqueued: %+v", s)
	}
	held := queued
	held.SMTHeld = true
	if s := Classify(&held, false, 1, 3); s.Kind != CellSMTHeld {
		t.Errorf("SMT-held: %+v", s)
	}
	run := engine.CPUView{Curr: 7, Workload: 1, Queued: 2}
	if s := Classify(&run, false, 1, 3); s.Kind != CellRunning || CellColor(s) != WorkloadColor(1) || s.Queued != 2 {
		t.Errorf("running: %+v", s)
	}
	lo, hi := run, run
	lo.Nice, hi.Nice = -20, 19
	l := func(v engine.CPUView) float64 { return lab(CellColor(Classify(&v, false, 1, 3)), normalVision)[0] }
	if !(l(lo) > l(run) && l(run) > l(hi)) {
		t.Error("negative nice lighter, positive nice darker")
	}
	if QueueFraction(0) != 0 || QueueFraction(2) != 0.5 || QueueFraction(9) != 1 {
		t.Error("QueueFraction")
	}
	if WorkloadColor(len(workloadPalette)) != WorkloadColor(0) || WorkloadStriped(0) || !WorkloadStriped(len(workloadPalette)) {
		t.Error("palette repeats striped")
	}
}

// An RT cell keeps its workload's hue, unshaded by nice, framed; a cell
// too small for the frame is darker than any nice shade of the hue.
func TestRTCell(t *testing.T) {
	s := CellState{Kind: CellRunning, Workload: 2, Nice: 19, RT: true}
	if CellColor(s) != WorkloadColor(2) {
		t.Errorf("RT cell %v, want the unshaded hue %v", CellColor(s), WorkloadColor(2))
	}
	for w := range workloadPalette {
		c := WorkloadColor(w)
		if d, n := lab(RTDark(c), normalVision)[0], lab(NiceShade(c, 19), normalVision)[0]; d >= n-3 {
			t.Errorf("workload %d: RTDark L* %.1f not clearly below nice 19's %.1f", w, d, n)
		}
		if deltaE(RTDark(c), colIdleDeep, normalVision) < 5 {
			t.Errorf("workload %d: RTDark %v too close to the deepest idle grey", w, RTDark(c))
		}
	}
	if RTFrame(5) != 0 || RTFrame(6) != 1 || RTFrame(9) != 1 || RTFrame(24) != 4 {
		t.Errorf("RTFrame: 5→%d 6→%d 9→%d 24→%d", RTFrame(5), RTFrame(6), RTFrame(9), RTFrame(24))
	}
}

// A deadline cell keeps its workload's hue, unshaded by nice, like an RT
// cell; its corner mark fits the cell and is at least 2 px.
func TestDLCell(t *testing.T) {
	s := CellState{Kind: CellRunning, Workload: 1, Nice: -20, DL: true}
	if CellColor(s) != WorkloadColor(1) {
		t.Errorf("DL cell %v, want the unshaded hue %v", CellColor(s), WorkloadColor(1))
	}
	for n := 3; n <= 40; n++ {
		if k := DLCorner(n); k < 2 || k > n/2+1 || (RTFrame(n) > 0 && k <= RTFrame(n)) {
			t.Errorf("DLCorner(%d) = %d (frame %d)", n, k, RTFrame(n))
		}
	}
}
