//go:build js && wasm

package ui

import "image/color"

// The machine map: sockets containing LLCs (with the has_idle_cores
// square) containing cores containing hardware-thread cells; the header
// with its legend; wakeup flashes, the highlighted probe path and the
// selected CPU.

// legend item kinds.
const (
	legWorkload = iota
	legRT
	legDL
	legIdle
	legPolling
	legWaking
	legQueue
	legSMTHeld
	legHint
	legDecision
)

// legendItem is one entry of the header legend.
type legendItem struct {
	kind  int
	arg   int // workload index, idle depth
	label string
}

// legendItems lists the legend for the current machine and workloads
// (rebuilt with the simulations).
func (g *Game) legendItems() []legendItem {
	var out []legendItem
	a := g.arms[0]
	rt, dl := -1, -1
	for w := 0; w < a.nw; w++ {
		out = append(out, legendItem{legWorkload, w, a.names[w]})
		if rt < 0 && a.classes[w].HasRT() {
			rt = w
		}
		if dl < 0 && a.classes[w].HasDL() {
			dl = w
		}
	}
	if rt >= 0 {
		out = append(out, legendItem{legRT, rt, "framed: RT task (FIFO/RR)"})
	}
	if dl >= 0 {
		out = append(out, legendItem{legDL, dl, "framed, corner: deadline task"})
	}
	st := g.topo.Spec.IdleStates
	for i := g.firstPhys; i < len(st); i++ {
		out = append(out, legendItem{legIdle, i - g.firstPhys, "idle " + st[i].Name})
	}
	if g.firstPhys > 0 {
		out = append(out, legendItem{legPolling, 0, "polling"})
	}
	out = append(out,
		legendItem{legWaking, 0, "waking"},
		legendItem{legQueue, 0, "runqueue depth"},
	)
	if g.topo.Spec.Topology.ThreadsPerCore > 1 {
		out = append(out, legendItem{legSMTHeld, 0, "SMT-held"})
	}
	out = append(out,
		legendItem{legHint, 0, "has_idle_cores"},
		legendItem{legDecision, 0, "wakeup: target>chosen, probed"},
	)
	return out
}

// legendLabels are the legend's labels, for the layout.
func (g *Game) legendLabels() []string {
	out := make([]string, len(g.legend))
	for i, it := range g.legend {
		out[i] = it.label
	}
	return out
}

// drawHeader draws the status line and the colour legend.
func (g *Game) drawHeader() {
	p := g.p
	st := g.page.Status
	p.text(st.X, st.Y, g.header, st.W, colText)
	for i, it := range g.legend {
		if i >= len(g.page.Legend) || g.page.Legend[i].W == 0 {
			continue
		}
		r := g.page.Legend[i]
		sw := Rect{r.X, r.Y + 2, legendSwatch, legendSwatch}
		nd := len(g.topo.Spec.IdleStates) - g.firstPhys
		switch it.kind {
		case legWorkload:
			g.cell(sw, CellState{Kind: CellRunning, Workload: it.arg})
		case legRT:
			g.cell(sw, CellState{Kind: CellRunning, Workload: it.arg, RT: true})
		case legDL:
			g.cell(sw, CellState{Kind: CellRunning, Workload: it.arg, DL: true})
		case legIdle:
			g.cell(sw, CellState{Kind: CellIdle, Depth: it.arg, Depths: nd})
		case legPolling:
			g.cell(sw, CellState{Kind: CellPolling})
		case legWaking:
			g.cell(sw, CellState{Kind: CellWaking})
		case legQueue:
			p.fillR(Rect{sw.X, sw.Y + sw.H/2, sw.W, sw.H - sw.H/2}, colQueue)
			p.stroke(sw, 1, colIdleEdge)
		case legSMTHeld:
			g.cell(sw, CellState{Kind: CellSMTHeld})
		case legHint:
			p.fillR(sw, colHint)
		case legDecision:
			p.stroke(sw, 1, colMark)
			p.fill(float32(sw.X+3), float32(sw.Y+3), 3, 3, colMark)
		}
		p.textS(r.X+legendItemX, r.Y, it.label, 0, colDim)
	}
}

// textColorOn picks dark or light text for a background.
func textColorOn(bg color.RGBA) color.RGBA {
	if int(bg.R)*3+int(bg.G)*6+int(bg.B) > 1300 {
		return color.RGBA{0x10, 0x10, 0x10, 0xff}
	}
	return color.RGBA{0xf0, 0xf0, 0xf0, 0xff}
}

// cell fills r for state s with its pattern: a dot for polling, stripes
// for SMT-held (waiting-work colour) and for the second round of
// workload colours.
func (g *Game) cell(r Rect, s CellState) color.RGBA {
	p := g.p
	bg := CellColor(s)
	p.fillR(r, bg)
	stripes := func(c color.RGBA) {
		// Diagonal stripes as short horizontal runs, every 4 px.
		for y := 0; y < r.H; y++ {
			for x0 := (y % 4) - 4; x0 < r.W; x0 += 4 {
				a, b := max(x0, 0), min(x0+2, r.W)
				if b > a {
					p.fill(float32(r.X+a), float32(r.Y+y), float32(b-a), 1, c)
				}
			}
		}
	}
	switch s.Kind {
	case CellPolling:
		if r.W >= 5 && r.H >= 5 {
			d := max(min(r.W, r.H)/4, 1)
			cx, cy := centre(r)
			p.fill(cx-float32(d)/2, cy-float32(d)/2, float32(d), float32(d), colBackground)
		}
	case CellSMTHeld:
		if r.W >= 4 && r.H >= 4 {
			stripes(colQueue)
		}
	case CellRunning:
		if WorkloadStriped(s.Workload) && r.W >= 4 && r.H >= 4 {
			stripes(colBackground)
		}
		if s.RT || s.DL {
			if f := RTFrame(min(r.W, r.H)); f > 0 {
				in := Rect{r.X + 1, r.Y + 1, r.W - 2, r.H - 2}
				p.stroke(in, f, colBackground)
			} else {
				bg = RTDark(bg)
				p.fillR(r, bg)
			}
		}
		if s.DL {
			// The deadline mark: a dark triangle in the top-right
			// corner, as rows of shrinking width.
			k := DLCorner(min(r.W, r.H))
			for y := 0; y < k; y++ {
				p.fill(float32(r.Right()-k+y), float32(r.Y+y), float32(k-y), 1, colBackground)
			}
		}
	}
	return bg
}

// drawMap draws arm i's machine.
func (g *Game) drawMap(i int) {
	p, ml, a, tp := g.p, g.page.Maps[i], g.arms[i], g.topo
	if g.narms > 1 {
		lr := g.page.ArmLabels[i]
		p.text(lr.X, lr.Y+1, a.label, lr.W, colText)
	}
	for _, r := range ml.Sockets {
		p.fillR(r, colSocket)
		p.stroke(r, 1, colSocketLine)
	}
	for l, r := range ml.LLCs {
		p.fillR(r, colLLC)
		p.stroke(r, 1, colLLCLine)
		hr := ml.Hints[l]
		switch {
		case a.hasIdle[l]:
			p.fillR(hr, colHint)
		case ml.LLCLabels:
			p.stroke(hr, 1, colDim)
		default:
			p.fillR(hr, colLLCLine)
		}
	}
	if ml.Density <= 2 {
		for _, r := range ml.Cores {
			p.fillR(r, colCore)
			if ml.Density <= 1 {
				p.stroke(r, 1, colCoreLine)
			}
		}
	}
	for _, lb := range ml.Labels {
		p.textS(lb.R.X, lb.R.Y, lb.Text, 0, colDim)
	}
	st := tp.Spec.IdleStates
	for cpu, r := range ml.CPUs {
		if cpu >= len(a.views) {
			break
		}
		v := &a.views[cpu]
		s := Classify(v, cpu < len(a.polling) && a.polling[cpu], g.firstPhys, len(st))
		s.RT = s.Kind == CellRunning && cpu < len(a.rt) && a.rt[cpu]
		s.DL = s.Kind == CellRunning && cpu < len(a.dl) && a.dl[cpu]
		bg := g.cell(r, s)
		if s.Kind != CellRunning && r.W >= 8 && r.H >= 8 {
			p.stroke(r, 1, colIdleEdge)
		}
		if n := waitingOn(v); n > 0 {
			// Runqueue depth: a bar from the bottom, a quarter per waiting
			// task; on tiny cells the bottom half.
			bh := int(QueueFraction(n) * float64(r.H))
			if r.H < 8 {
				bh = max(r.H/2, 1)
			}
			bh = min(max(bh, 2), r.H)
			p.fill(float32(r.X), float32(r.Bottom()-bh), float32(r.W), float32(bh), colQueue)
		}
		b := AppendInt(g.scratch[:0], int64(cpu))
		if r.W >= TextWidth(len(b))+2 && r.H >= GlyphH+1 {
			// On an RT cell the number goes inside the frame when it fits,
			// else in light text over the dark frame.
			tx, ty, tc := r.X+2, r.Y+1, textColorOn(bg)
			if f := RTFrame(min(r.W, r.H)); (s.RT || s.DL) && f > 0 {
				if r.W >= TextWidth(len(b))+2*f+4 && r.H >= GlyphH+2*f+3 {
					tx, ty = r.X+f+2, r.Y+f+2
				} else {
					tc = textColorOn(colBackground)
				}
			}
			p.text(tx, ty, b, 0, tc)
			if n := waitingOn(v); n > 0 && r.H >= 2*GlyphH && r.W >= TextWidth(3)+2 {
				b = append(g.scratch[:0], '+')
				b = AppendInt(b, int64(n))
				p.text(r.Right()-TextWidth(len(b))-1, r.Bottom()-GlyphH, b, 0, textColorOn(colQueue))
			} else if s.Kind == CellIdle && r.H >= 2*GlyphH+2 && v.CState < len(st) && r.W >= TextWidth(len(st[v.CState].Name))+3 {
				p.textS(r.X+2, r.Bottom()-GlyphH-1, st[v.CState].Name, 0, textColorOn(bg))
			}
		}
	}
}

// centre returns a rectangle's centre.
func centre(r Rect) (float32, float32) {
	return float32(r.X) + float32(r.W)/2, float32(r.Y) + float32(r.H)/2
}

// drawFlashes draws arm i's recent wakeups: the probed CPUs, the chosen
// CPU outlined, and a line from the target to the chosen CPU.
func (g *Game) drawFlashes(i int) {
	p, ml, a := g.p, g.page.Maps[i], g.arms[i]
	n := len(ml.CPUs)
	lw := float32(1.5)
	if ml.Cell >= 12 {
		lw = 2
	}
	for k := 0; k < a.flashes.Len(); k++ {
		f := a.flashes.At(k)
		al := f.Alpha()
		if al <= 0 || f.Chosen < 0 || f.Chosen >= n || f.Target < 0 || f.Target >= n {
			continue
		}
		pc := WithAlpha(colMark, al*0.8)
		for _, c := range f.Stored() {
			if c < 0 || int(c) >= n {
				continue
			}
			r := ml.CPUs[c]
			if r.W >= 5 && r.H >= 5 {
				p.stroke(r, 1, pc)
			} else {
				p.fillR(r, WithAlpha(colMark, al*0.6))
			}
		}
		p.strokeOut(ml.CPUs[f.Chosen], 1, WithAlpha(colMark, al))
		tx, ty := centre(ml.CPUs[f.Target])
		cx, cy := centre(ml.CPUs[f.Chosen])
		fc := WithAlpha(colMark, al)
		if f.Target != f.Chosen {
			p.line(tx, ty, cx, cy, lw, fc)
		}
		d := float32(max(min(ml.Cell/3, 6), 2))
		p.fill(tx-d/2, ty-d/2, d, d, fc)
	}
}

// drawHighlight draws the probe path the shell asked for: the target
// marked, the probed CPUs joined in order and numbered where the cells
// have room, the chosen CPU outlined twice.
func (g *Game) drawHighlight() {
	h := &g.hl
	if !h.Active() || h.Arm >= g.narms || h.Arm >= len(g.page.Maps) {
		return
	}
	p, ml := g.p, g.page.Maps[h.Arm]
	n := len(ml.CPUs)
	ok := func(c int) bool { return c >= 0 && c < n }
	// Dim the map so the path stands out.
	p.fillR(ml.Bounds, WithAlpha(colBackground, 0.45))
	prevX, prevY, have := float32(0), float32(0), false
	if ok(h.Target) {
		prevX, prevY = centre(ml.CPUs[h.Target])
		have = true
		d := float32(max(min(ml.Cell/2, 8), 3))
		p.fill(prevX-d/2, prevY-d/2, d, d, colMark)
	}
	for k, c := range h.Path {
		if !ok(c) {
			continue
		}
		r := ml.CPUs[c]
		x, y := centre(r)
		if have {
			p.line(prevX, prevY, x, y, 1.5, WithAlpha(colMark, 0.8))
		}
		prevX, prevY, have = x, y, true
		p.strokeOut(r, 1, colMark)
		b := AppendInt(g.scratch[:0], int64(k+1))
		if r.W >= TextWidth(len(b))+2 && r.H >= GlyphH {
			p.fillR(Rect{r.Right() - TextWidth(len(b)) - 2, r.Bottom() - GlyphH - 1, TextWidth(len(b)) + 2, GlyphH + 1}, colBackground)
			p.text(r.Right()-TextWidth(len(b))-1, r.Bottom()-GlyphH, b, 0, colMark)
		}
	}
	if ok(h.Chosen) {
		r := ml.CPUs[h.Chosen]
		if have {
			x, y := centre(r)
			p.line(prevX, prevY, x, y, 2, colMark)
		}
		p.strokeOut(r, 2, colMark)
		p.strokeOut(Rect{r.X - 2, r.Y - 2, r.W + 4, r.H + 4}, 1, colBackground)
	}
}

// drawSelection outlines the hovered and the pinned CPU, on every map
// (the same CPU number in every arm).
func (g *Game) drawSelection() {
	for i := 0; i < g.narms && i < len(g.page.Maps); i++ {
		ml := g.page.Maps[i]
		if c := g.pin.cpu; c >= 0 && c < len(ml.CPUs) {
			col := colMark
			if i != g.pin.arm {
				col = WithAlpha(colMark, 0.5)
			}
			g.p.strokeOut(ml.CPUs[c], 2, col)
			g.p.strokeOut(Rect{ml.CPUs[c].X - 2, ml.CPUs[c].Y - 2, ml.CPUs[c].W + 4, ml.CPUs[c].H + 4}, 1, colBackground)
		}
		if c := g.hover.cpu; c >= 0 && c < len(ml.CPUs) && g.hover != g.pin {
			col := colMark
			if i != g.hover.arm {
				col = WithAlpha(colMark, 0.5)
			}
			g.p.strokeOut(ml.CPUs[c], 1, col)
		}
	}
}
