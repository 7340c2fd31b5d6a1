package ui

import (
	"image/color"

	"schedplay/engine"
)

// Colours of the canvas. Every colour means one thing:
//
//   - Running CPUs take their workload's hue, from the Okabe–Ito palette
//     (Okabe & Ito, "Color Universal Design", 2008), which stays
//     distinguishable under the common colour-vision deficiencies.
//     Lighter for negative nice, darker for positive.
//   - A CPU running an RT task (SCHED_FIFO, SCHED_RR) keeps its
//     workload's hue, unshaded (nice means nothing to the RT class),
//     inside a dark frame; a cell too small for the frame is the hue
//     darkened further than any nice shade (RTDark).
//   - A CPU running a deadline task (SCHED_DEADLINE) is drawn as an RT
//     one with a dark triangle in its top-right corner (DLCorner), on
//     small cells too.
//   - Idle CPUs are neutral greys, lighter for shallower C-states (the
//     quicker they wake) and darker for deeper ones; a polling CPU (the
//     POLL state) is the lightest grey and carries a dot.
//   - Waking (an idle CPU leaving its C-state for work already decided
//     for it) is the Okabe–Ito blue, used for nothing else.
//   - Waiting work is vermillion: the runqueue-depth bar of a CPU, the
//     stripes of an SMT-held CPU (idle while SMT_NICE holds its queued
//     work back), and on the meter the idle CPUs that could run it.
//   - The marks of a wakeup decision (target→chosen line, probed CPUs,
//     the chosen CPU, a highlighted probe path) and the selection are
//     white outlines and lines, never fills.
//   - has_idle_cores is a white square, filled when set, hollow when
//     clear.
//
// The charts colour by workload too; the arms of an A/B run differ by
// line style (A solid, B dashed), not by colour.

var (
	colBackground = color.RGBA{0x10, 0x12, 0x16, 0xff}
	colText       = color.RGBA{0xd8, 0xdc, 0xe2, 0xff}
	colDim        = color.RGBA{0x8a, 0x93, 0xa0, 0xff}
	colPanel      = color.RGBA{0x18, 0x1b, 0x21, 0xff}
	colGrid       = color.RGBA{0x2c, 0x31, 0x3a, 0xff}
	colAxis       = color.RGBA{0x5a, 0x61, 0x6c, 0xff}
	colSocket     = color.RGBA{0x16, 0x19, 0x1e, 0xff}
	colSocketLine = color.RGBA{0x6a, 0x72, 0x7e, 0xff}
	colLLC        = color.RGBA{0x1c, 0x20, 0x26, 0xff}
	colLLCLine    = color.RGBA{0x45, 0x4c, 0x57, 0xff}
	colCore       = color.RGBA{0x20, 0x23, 0x29, 0xff}
	colCoreLine   = color.RGBA{0x38, 0x3e, 0x48, 0xff}
	// has_idle_cores: a white square, filled when set.
	colHint = color.RGBA{0xff, 0xff, 0xff, 0xff}
	// Idle CPUs: the shallowest physical C-state and the deepest; POLL.
	colIdle     = color.RGBA{0x6c, 0x71, 0x79, 0xff}
	colIdleDeep = color.RGBA{0x3a, 0x3e, 0x45, 0xff}
	colPolling  = color.RGBA{0xc4, 0xc8, 0xce, 0xff}
	colIdleEdge = color.RGBA{0x4e, 0x54, 0x5e, 0xff} // outline of idle cells that have room for it
	// Waking: leaving a C-state for work decided for it (Okabe–Ito blue).
	colWaking = color.RGBA{0x00, 0x72, 0xb2, 0xff}
	// Waiting work (Okabe–Ito vermillion).
	colQueue = color.RGBA{0xd5, 0x5e, 0x00, 0xff}
	// Decision marks and the selection.
	colMark    = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colInfoBox = color.RGBA{0x0b, 0x0d, 0x11, 0xf0}
	// Neutral lines of the charts that are not per workload.
	colLine = color.RGBA{0xe8, 0xea, 0xee, 0xff}
)

// workloadPalette colours running CPUs by workload: the Okabe–Ito hues
// not reserved for a state (blue is waking, vermillion waiting work).
var workloadPalette = [...]color.RGBA{
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xf0, 0xe4, 0x42, 0xff}, // yellow
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
}

// WorkloadColor is workload i's colour. The palette repeats after five
// workloads (WorkloadStriped tells the repeats apart).
func WorkloadColor(i int) color.RGBA {
	if i < 0 {
		return colIdle
	}
	return workloadPalette[i%len(workloadPalette)]
}

// WorkloadStriped reports whether workload i's cells are striped: the
// second round of the palette.
func WorkloadStriped(i int) bool { return i >= len(workloadPalette) && (i/len(workloadPalette))%2 == 1 }

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

// NiceShade lightens c for negative nice (up to 45% toward white at -20)
// and darkens it for positive nice (up to 45% toward black at 19), short
// of the idle greys' lightness range.
func NiceShade(c color.RGBA, nice int) color.RGBA {
	switch {
	case nice < 0:
		return Mix(c, color.RGBA{0xff, 0xff, 0xff, 0xff}, 0.45*float64(-nice)/20)
	case nice > 0:
		return Mix(c, color.RGBA{0, 0, 0, 0xff}, 0.45*float64(nice)/19)
	}
	return c
}

// CellKind is what a CPU cell shows.
type CellKind uint8

const (
	CellRunning CellKind = iota
	CellIdle             // in a C-state; Depth says how deep
	CellPolling          // idle in the POLL state (spinning on need_resched)
	CellWaking           // idle, leaving its C-state for work decided for it
	CellSMTHeld          // idle while SMT_NICE holds its queued work back
)

var cellKindNames = [...]string{"running", "idle", "polling", "waking", "SMT-held"}

func (k CellKind) String() string { return cellKindNames[k] }

// CellState is the classified state of one CPU.
type CellState struct {
	Kind     CellKind
	Workload int // CellRunning: the running task's workload
	Nice     int
	// Depth is the C-state index among the physical (non-polling) states,
	// 0 the shallowest (CellIdle only); Depths how many there are.
	Depth, Depths int
	Queued        int // tasks waiting on the runqueue
	// RT: the running task is SCHED_FIFO or SCHED_RR; DL: it is
	// SCHED_DEADLINE (CellRunning only).
	RT, DL bool
}

// Classify says what CPU v shows. polling says the CPU is idle in a
// polling state (the engine's Sim.Polling); firstPhys is the index of the
// first non-polling idle state and nstates the number of states.
//
// An idle CPU that is not available_idle_cpu (a wakeup has claimed it)
// or has work on its runqueue is waking: its IPI or its C-state exit is
// in flight, and it is not idle while a runqueue waits.
func Classify(v *engine.CPUView, polling bool, firstPhys, nstates int) CellState {
	s := CellState{Queued: v.Queued, Workload: -1}
	switch {
	case v.Curr >= 0:
		s.Kind, s.Workload, s.Nice = CellRunning, v.Workload, v.Nice
	case v.SMTHeld:
		s.Kind = CellSMTHeld
	case v.Queued > 0 || !v.Idle:
		s.Kind = CellWaking
	case polling:
		s.Kind = CellPolling
	default:
		s.Kind = CellIdle
		s.Depths = max(nstates-firstPhys, 1)
		s.Depth = min(max(v.CState-firstPhys, 0), s.Depths-1)
	}
	return s
}

// IdleColor is the colour of an idle CPU at depth d of n physical
// C-states: the shallowest colIdle, the deepest colIdleDeep.
func IdleColor(d, n int) color.RGBA {
	if n <= 1 || d <= 0 {
		return colIdle
	}
	return Mix(colIdle, colIdleDeep, float64(min(d, n-1))/float64(n-1))
}

// CellColor is the fill of a CPU cell in state s.
func CellColor(s CellState) color.RGBA {
	switch s.Kind {
	case CellRunning:
		if s.RT || s.DL {
			return WorkloadColor(s.Workload)
		}
		return NiceShade(WorkloadColor(s.Workload), s.Nice)
	case CellPolling:
		return colPolling
	case CellWaking:
		return colWaking
	case CellSMTHeld:
		return IdleColor(0, 1)
	}
	return IdleColor(s.Depth, s.Depths)
}

// RTDark is the fill of an RT cell too small for its frame: the hue
// darkened 60% toward black, past the deepest nice shade (45%).
func RTDark(c color.RGBA) color.RGBA { return Mix(c, color.RGBA{0, 0, 0, 0xff}, 0.6) }

// rtFrameMin is the smallest cell side that has room for the RT frame.
const rtFrameMin = 6

// RTFrame is the thickness of an RT cell's dark frame for a cell of
// side n (0: too small, the cell is RTDark instead).
func RTFrame(n int) int {
	if n < rtFrameMin {
		return 0
	}
	return max(1, n/6)
}

// DLCorner is the side of a deadline cell's corner triangle for a cell
// of side n: a third of the cell (half of one too small for the
// frame), at least 2 px.
func DLCorner(n int) int {
	if RTFrame(n) == 0 {
		return max(2, n/2)
	}
	return max(2, n/3)
}

// QueueFraction is how much of a cell the runqueue-depth bar fills:
// one waiting task a quarter, four or more the whole cell.
func QueueFraction(queued int) float64 {
	return float64(min(max(queued, 0), 4)) / 4
}
