package ui

import (
	"image/color"

	"schedplay/engine"
)

// Colours of the canvas. A CPU cell is dark when idle (darker in deeper
// C-states), coloured by its running task's workload when busy (lighter
// for negative nice, darker for positive), magenta when SMT_NICE holds
// it idle with work queued; queued work is a red bar.

var (
	colBackground = color.RGBA{0x11, 0x14, 0x19, 0xff}
	colText       = color.RGBA{0xd8, 0xdc, 0xe2, 0xff}
	colDim        = color.RGBA{0x8a, 0x93, 0xa0, 0xff}
	colPanel      = color.RGBA{0x18, 0x1c, 0x23, 0xff}
	colGrid       = color.RGBA{0x2c, 0x33, 0x3d, 0xff}
	colSocket     = color.RGBA{0x1a, 0x1f, 0x27, 0xff}
	colSocketLine = color.RGBA{0x55, 0x60, 0x70, 0xff}
	colLLC        = color.RGBA{0x22, 0x29, 0x33, 0xff}
	colLLCLine    = color.RGBA{0x3c, 0x46, 0x54, 0xff}
	colCore       = color.RGBA{0x2e, 0x36, 0x42, 0xff}
	// has_idle_cores set / clear.
	colHintOn  = color.RGBA{0x3d, 0xdc, 0x84, 0xff}
	colHintOff = color.RGBA{0x4a, 0x50, 0x5a, 0xff}
	// Idle CPUs: shallowest C-state, deepest C-state.
	colIdle     = color.RGBA{0x4b, 0x55, 0x64, 0xff}
	colIdleDeep = color.RGBA{0x26, 0x2b, 0x33, 0xff}
	colIdleEdge = color.RGBA{0x5c, 0x67, 0x78, 0xff} // outline of idle cells that have room for it
	colSMTHeld  = color.RGBA{0xc0, 0x3c, 0xc8, 0xff}
	colQueue    = color.RGBA{0xff, 0x3b, 0x30, 0xff}
	// Wakeup flashes: the target→chosen line, probed CPUs, chosen CPU.
	colFlash   = color.RGBA{0xff, 0xf5, 0x9d, 0xff}
	colProbe   = color.RGBA{0x4d, 0xe8, 0xff, 0xff}
	colChosen  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colHover   = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colPinned  = color.RGBA{0xff, 0xd0, 0x40, 0xff}
	colInfoBox = color.RGBA{0x0b, 0x0d, 0x11, 0xf0}
	// Arms of the split view (A, B).
	colArm = [2]color.RGBA{{0x5a, 0xb4, 0xff, 0xff}, {0xff, 0x9f, 0x40, 0xff}}
	// Percentile markers p50, p99, p99.9.
	colPct = [3]color.RGBA{{0x9a, 0xe6, 0x9a, 0xff}, {0xff, 0xd0, 0x40, 0xff}, {0xff, 0x6b, 0x6b, 0xff}}
)

// workloadPalette colours running CPUs by workload index (red is kept
// for queued work).
var workloadPalette = [...]color.RGBA{
	{0x4e, 0x9a, 0xf1, 0xff}, // blue
	{0x59, 0xc1, 0x4f, 0xff}, // green
	{0xf2, 0x9e, 0x2b, 0xff}, // orange
	{0xb0, 0x7a, 0xe1, 0xff}, // violet
	{0x2e, 0xc4, 0xb6, 0xff}, // teal
	{0xed, 0xd1, 0x48, 0xff}, // yellow
	{0xff, 0x8d, 0xc7, 0xff}, // pink
	{0x9c, 0x75, 0x5f, 0xff}, // brown
}

// WorkloadColor is workload i's colour (the palette repeats).
func WorkloadColor(i int) color.RGBA {
	if i < 0 {
		return colIdle
	}
	return workloadPalette[i%len(workloadPalette)]
}

// Mix blends a toward b by f (0..1), keeping a's alpha.
func Mix(a, b color.RGBA, f float64) color.RGBA {
	f = min(max(f, 0), 1)
	m := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*f + 0.5) }
	return color.RGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), a.A}
}

// WithAlpha returns c with alpha a (0..1).
func WithAlpha(c color.RGBA, a float64) color.RGBA {
	c.A = uint8(min(max(a, 0), 1)*255 + 0.5)
	return c
}

// NiceShade lightens c for negative nice (up to 55% toward white at -20)
// and darkens it for positive nice (up to 60% toward black at 19).
func NiceShade(c color.RGBA, nice int) color.RGBA {
	switch {
	case nice < 0:
		return Mix(c, color.RGBA{0xff, 0xff, 0xff, 0xff}, 0.55*float64(-nice)/20)
	case nice > 0:
		return Mix(c, color.RGBA{0, 0, 0, 0xff}, 0.6*float64(nice)/19)
	}
	return c
}

// IdleColor is the colour of an idle CPU in C-state cstate of nstates:
// the shallowest is colIdle, the deepest colIdleDeep.
func IdleColor(cstate, nstates int) color.RGBA {
	if nstates <= 1 || cstate <= 0 {
		return colIdle
	}
	return Mix(colIdle, colIdleDeep, float64(min(cstate, nstates-1))/float64(nstates-1))
}

// CellColor is the fill of CPU v's cell on a machine with nstates idle
// states.
func CellColor(v *engine.CPUView, nstates int) color.RGBA {
	switch {
	case v.Curr >= 0:
		return NiceShade(WorkloadColor(v.Workload), v.Nice)
	case v.SMTHeld:
		return colSMTHeld
	}
	return IdleColor(v.CState, nstates)
}

// QueueFraction is how much of a cell the runqueue-depth bar fills:
// one waiting task a quarter, four or more the whole cell.
func QueueFraction(queued int) float64 {
	return float64(min(max(queued, 0), 4)) / 4
}
