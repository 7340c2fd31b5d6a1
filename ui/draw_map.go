//go:build js && wasm

package ui

import "image/color"

// The machine map: sockets containing LLCs (with the has_idle_cores
// indicator) containing cores containing hardware-thread cells; the
// header with its legend; wakeup flashes and the selected CPU.

// drawHeader draws the status line and the colour legend.
func (g *Game) drawHeader() {
	p := g.p
	p.text(pageGap, 3, g.header, g.w-2*pageGap, colText)
	x, y := pageGap, 19
	right := g.w - pageGap
	item := func(c color.RGBA, label string, outline bool) {
		if x+12+TextWidth(len(label)) > right {
			x = right + 1 // stop: no room left
			return
		}
		if outline {
			p.stroke(Rect{x, y + 2, 9, 9}, 1, c)
		} else {
			p.fill(float32(x), float32(y+2), 9, 9, c)
		}
		x += 12
		x += p.textS(x, y, label, 0, colDim) + 10
	}
	item(colIdle, "idle", false)
	item(colIdleDeep, "deep C-state", false)
	item(colSMTHeld, "SMT-held", false)
	item(colQueue, "queued", false)
	a := g.arms[0]
	for w := 0; w < min(a.nw, len(workloadPalette)); w++ {
		item(WorkloadColor(w), a.names[w], false)
	}
	item(colFlash, "wakeup target>chosen", false)
	item(colProbe, "probed", true)
	item(colHintOn, "has_idle_cores", false)
}

// textColorOn picks dark or light text for a background.
func textColorOn(bg color.RGBA) color.RGBA {
	if int(bg.R)*3+int(bg.G)*6+int(bg.B) > 1400 {
		return color.RGBA{0x10, 0x10, 0x10, 0xff}
	}
	return color.RGBA{0xf0, 0xf0, 0xf0, 0xff}
}

// drawMap draws arm i's machine.
func (g *Game) drawMap(i int) {
	p, ml, a, tp := g.p, g.page.Maps[i], g.arms[i], g.topo
	if g.narms > 1 {
		lr := g.page.ArmLabels[i]
		p.text(lr.X, lr.Y+1, a.label, max(ml.Bounds.W, lr.W), colArm[i])
	}
	for s, r := range ml.Sockets {
		p.fillR(r, colSocket)
		p.stroke(r, 1, colSocketLine)
		if ml.SocketLabels {
			b := append(g.scratch[:0], "socket "...)
			b = AppendInt(b, int64(s))
			p.text(r.X+4, r.Y+2, b, r.W-8, colDim)
		}
	}
	for l, r := range ml.LLCs {
		p.fillR(r, colLLC)
		p.stroke(r, 1, colLLCLine)
		hint := colHintOff
		if a.hasIdle[l] {
			hint = colHintOn
		}
		hr := ml.Hints[l]
		p.fillR(hr, hint)
		if ml.LLCLabels {
			b := append(g.scratch[:0], "LLC "...)
			b = AppendInt(b, int64(l))
			x := hr.Right() + 4
			w := p.text(x, r.Y+2, b, r.Right()-x-2, colDim)
			if a.hasIdle[l] && x+w+TextWidth(15) < r.Right() {
				p.textS(x+w+TextWidth(1), r.Y+2, "has_idle_cores", 0, colHintOn)
			}
		}
	}
	if ml.Density < 2 {
		for _, r := range ml.Cores {
			p.fillR(r, colCore)
		}
	}
	nstates := len(tp.Spec.IdleStates)
	for cpu, r := range ml.CPUs {
		if cpu >= len(a.views) {
			break
		}
		v := &a.views[cpu]
		bg := CellColor(v, nstates)
		p.fillR(r, bg)
		if v.Curr < 0 && r.W >= 8 && r.H >= 8 {
			p.stroke(r, 1, colIdleEdge)
		}
		if v.Queued > 0 {
			// Runqueue depth: a bar from the bottom, a quarter per waiting
			// task; on tiny cells the bottom half.
			bh := int(QueueFraction(v.Queued) * float64(r.H))
			if r.H < 8 {
				bh = max(r.H/2, 1)
			}
			bh = max(bh, 2)
			p.fill(float32(r.X), float32(r.Bottom()-min(bh, r.H)), float32(r.W), float32(min(bh, r.H)), colQueue)
		}
		b := AppendInt(g.scratch[:0], int64(cpu))
		if r.W >= TextWidth(len(b))+2 && r.H >= GlyphH+1 {
			p.text(r.X+2, r.Y+1, b, 0, textColorOn(bg))
			if v.Queued > 0 && r.H >= 2*GlyphH && r.W >= TextWidth(3)+2 {
				b = append(g.scratch[:0], '+')
				b = AppendInt(b, int64(v.Queued))
				p.text(r.Right()-TextWidth(len(b))-1, r.Bottom()-GlyphH, b, 0, colChosen)
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
		pc := WithAlpha(colProbe, al)
		for _, c := range f.Stored() {
			if c < 0 || int(c) >= n {
				continue
			}
			r := ml.CPUs[c]
			if r.W >= 5 && r.H >= 5 {
				p.stroke(r, 1, pc)
			} else {
				p.fillR(r, WithAlpha(colProbe, al*0.8))
			}
		}
		p.strokeOut(ml.CPUs[f.Chosen], 1, WithAlpha(colChosen, al))
		tx, ty := centre(ml.CPUs[f.Target])
		cx, cy := centre(ml.CPUs[f.Chosen])
		fc := WithAlpha(colFlash, al)
		if f.Target != f.Chosen {
			p.line(tx, ty, cx, cy, lw, fc)
		}
		d := float32(max(min(ml.Cell/3, 6), 2))
		p.fill(tx-d/2, ty-d/2, d, d, fc)
	}
}

// drawSelection outlines the hovered and the pinned CPU, on every map
// (the same CPU number in both arms of the split view).
func (g *Game) drawSelection() {
	for i := 0; i < g.narms && i < len(g.page.Maps); i++ {
		ml := g.page.Maps[i]
		if c := g.pin.cpu; c >= 0 && c < len(ml.CPUs) {
			col := colPinned
			if i != g.pin.arm {
				col = WithAlpha(colPinned, 0.5)
			}
			g.p.strokeOut(ml.CPUs[c], 2, col)
		}
		if c := g.hover.cpu; c >= 0 && c < len(ml.CPUs) && g.hover != g.pin {
			col := colHover
			if i != g.hover.arm {
				col = WithAlpha(colHover, 0.5)
			}
			g.p.strokeOut(ml.CPUs[c], 1, col)
		}
	}
}
