//go:build js && wasm

package ui

import (
	"math"

	"schedplay/engine"
	"schedplay/playground"
)

// The info box of the hovered (or pinned) CPU: where it sits, what it
// runs, its queue and idle state, and the last wakeup decision that chose
// it — the "why this CPU" path with the probed CPUs.

const (
	infoLines  = 9
	infoProbes = 16 // probes listed by number
)

type infoBox struct {
	lines  [infoLines][]byte
	n      int
	probes []int // LastDecisionOn's copy, reused
	width  int   // widest line in characters
}

func (b *infoBox) init() {
	for i := range b.lines {
		b.lines[i] = make([]byte, 0, 96)
	}
	b.probes = make([]int, 0, 64)
}

// line starts the next line.
func (b *infoBox) line() *[]byte {
	if b.n >= infoLines {
		return &b.lines[infoLines-1]
	}
	b.n++
	b.lines[b.n-1] = b.lines[b.n-1][:0]
	return &b.lines[b.n-1]
}

// build fills the box for the shown CPU (called under the App's lock).
func (b *infoBox) build(g *Game, arms []*playground.ArmView) {
	b.n, b.width = 0, 0
	t := g.shown()
	if t.cpu < 0 || t.arm >= g.narms || t.arm >= len(arms) || t.cpu >= len(g.arms[t.arm].views) {
		return
	}
	a, s, tp := g.arms[t.arm], &arms[t.arm].Snap, g.topo
	v := &a.views[t.cpu]

	l := b.line()
	*l = append(*l, "CPU "...)
	*l = AppendInt(*l, int64(v.ID))
	if g.narms > 1 {
		*l = append(*l, " (arm "...)
		*l = append(*l, a.label[:1]...)
		*l = append(*l, ')')
	}
	*l = append(*l, "  core "...)
	*l = AppendInt(*l, int64(v.Core))
	*l = append(*l, " thread "...)
	*l = AppendInt(*l, int64(v.Thread))
	*l = append(*l, "  LLC "...)
	*l = AppendInt(*l, int64(v.LLC))
	*l = append(*l, "  socket "...)
	*l = AppendInt(*l, int64(v.Socket))

	l = b.line()
	switch {
	case v.Curr >= 0:
		*l = append(*l, "running "...)
		if v.Workload >= 0 && v.Workload < len(a.names) {
			*l = append(*l, a.names[v.Workload]...)
		}
		*l = append(*l, " task "...)
		*l = AppendInt(*l, int64(v.Curr))
		if t.cpu < len(a.rt) && a.rt[t.cpu] {
			*l = append(*l, "  RT (SCHED_FIFO/RR)"...)
		}
		if t.cpu < len(a.dl) && a.dl[t.cpu] {
			*l = append(*l, "  SCHED_DEADLINE"...)
		}
		*l = append(*l, "  nice "...)
		*l = AppendInt(*l, int64(v.Nice))
		*l = append(*l, "  latency-nice "...)
		*l = AppendInt(*l, int64(v.LatencyNice))
	case v.SMTHeld:
		*l = append(*l, "idle: SMT_NICE holds it back with work queued"...)
	case v.Queued > 0 || !v.Idle:
		*l = append(*l, "waking: leaving its idle state for work decided for it"...)
	case t.cpu < len(a.polling) && a.polling[t.cpu]:
		*l = append(*l, "idle, polling (no IPI needed, no exit latency)"...)
	default:
		*l = append(*l, "idle in "...)
		if st := tp.Spec.IdleStates; v.CState >= 0 && v.CState < len(st) {
			*l = append(*l, st[v.CState].Name...)
			*l = append(*l, " (state "...)
			*l = AppendInt(*l, int64(v.CState+1))
			*l = append(*l, " of "...)
			*l = AppendInt(*l, int64(len(st)))
			*l = append(*l, ')')
		}
	}

	l = b.line()
	*l = append(*l, "queued "...)
	*l = AppendInt(*l, int64(v.Queued))
	*l = append(*l, "   busy "...)
	*l = AppendPercent(*l, v.Busy)
	*l = append(*l, " of the run   LLC has_idle_cores "...)
	if a.hasIdle[v.LLC] {
		*l = append(*l, "set"...)
	} else {
		*l = append(*l, "clear"...)
	}

	ok := s.InfoOK && s.InfoCPU == t.cpu
	d := s.Info
	probes := append(b.probes[:0], d.Probes...)
	b.probes = probes
	l = b.line()
	if !ok {
		*l = append(*l, "no wakeup has chosen this CPU yet"...)
	} else {
		b.decision(&d, probes)
	}
	if g.pin.cpu < 0 {
		l = b.line()
		*l = append(*l, "(click: pin this box; Esc: unpin)"...)
	}
	for i := 0; i < b.n; i++ {
		b.width = max(b.width, len(b.lines[i]))
	}
}

// decision describes the last decision that chose the CPU.
func (b *infoBox) decision(d *engine.Decision, probes []int) {
	l := &b.lines[b.n-1]
	*l = append(*l, "last wakeup placed here at t="...)
	*l = AppendSeconds(*l, d.Time)
	*l = append(*l, ": task "...)
	*l = AppendInt(*l, int64(d.Task))

	l = b.line()
	*l = append(*l, "  woken "...)
	if d.Waker < 0 {
		*l = append(*l, "by a timer"...)
	} else {
		*l = append(*l, "by task "...)
		*l = AppendInt(*l, int64(d.Waker))
	}
	*l = append(*l, " on CPU "...)
	*l = AppendInt(*l, int64(d.WakerCPU))
	*l = append(*l, "  prev "...)
	*l = AppendInt(*l, int64(d.Prev))
	*l = append(*l, "  target "...)
	*l = AppendInt(*l, int64(d.Target))
	if d.Sync {
		*l = append(*l, "  sync"...)
	}
	if d.WakeWide {
		*l = append(*l, "  wake_wide"...)
	}

	l = b.line()
	*l = append(*l, "  stage "...)
	*l = append(*l, d.Stage.String()...)
	if d.SISCalled {
		*l = append(*l, "  select_idle_cpu scanned "...)
		*l = AppendInt(*l, int64(d.SISProbes))
		if d.SISLimit != math.MaxInt32 {
			*l = append(*l, " (nr "...)
			*l = AppendInt(*l, int64(d.SISLimit))
			*l = append(*l, ')')
		}
		if d.SISCutShort {
			*l = append(*l, " cut short"...)
		}
	}

	l = b.line()
	*l = append(*l, "  probes "...)
	*l = AppendInt(*l, int64(len(probes)))
	if len(probes) > 0 {
		*l = append(*l, ':')
	}
	for i, c := range probes {
		if i == infoProbes {
			*l = append(*l, " ..."...)
			break
		}
		*l = append(*l, ' ')
		*l = AppendInt(*l, int64(c))
	}
}

// drawInfo draws the box beside the shown CPU, kept on the canvas.
func (g *Game) drawInfo() {
	b := &g.info
	t := g.shown()
	if b.n == 0 || t.arm < 0 || t.arm >= len(g.page.Maps) {
		return
	}
	cell := g.page.Maps[t.arm].CPUs[t.cpu]
	w := TextWidth(b.width) + 12
	h := b.n*lineH + 10
	// Right of the cell, else left, else below, else above; kept on the
	// canvas.
	x, y := cell.Right()+10, cell.Y
	switch {
	case x+w <= g.w:
	case cell.X-10-w >= 0:
		x = cell.X - 10 - w
	case cell.Bottom()+8+h <= g.h:
		x, y = cell.X, cell.Bottom()+8
	default:
		x, y = cell.X, cell.Y-8-h
	}
	x = max(min(x, g.w-w), 0)
	y = max(min(y, g.h-h), 0)
	r := Rect{x, y, w, h}
	g.p.fillR(r, colInfoBox)
	col := colMark
	g.p.stroke(r, 1, col)
	if g.pin.cpu >= 0 {
		g.p.stroke(r.Inset(2), 1, col)
	}
	for i := 0; i < b.n; i++ {
		c := colText
		if i == 0 {
			c = col
		}
		g.p.text(x+6, y+5+i*lineH, b.lines[i], 0, c)
	}
}
