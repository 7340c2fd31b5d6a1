//go:build js && wasm

package ui

import (
	"image/color"
	"math"
)

// The charts: wakeup latency histograms per workload (log-spaced bins,
// log count axis, p50/p99/p99.9 marks; every arm drawn as an outline in
// its own line style, the baseline arm also filled), and time series of
// the search cost, throughput and work conservation against simulated
// time. Arms share every scale.

// chartTexts are the charts' text lines, rebuilt a few times a second.
type chartTexts struct {
	hist   [MaxHistPanels][2 + MaxArms][]byte // title, one per arm, vs baseline
	series [3][1 + MaxArms][]byte             // title, one per arm
}

// armDash is the dash pattern of arm i's lines: on and off lengths in
// pixels (0 off: solid). A solid, B dashed, C dotted, D long dashes.
var armDash = [MaxArms][2]float32{{1, 0}, {5, 4}, {2, 3}, {10, 4}}

// armSampleW is the room after an arm's letter for a sample of its line
// style, in characters.
const armSampleW = 3

// buildHeader rebuilds the status line (every frame: its t is the
// simulated time of the snapshot shown, as the panel reports it).
func (g *Game) buildHeader() {
	if g.topo == nil {
		return
	}
	a0 := g.arms[0]
	b := g.header[:0]
	b = append(b, g.topo.Spec.Name...)
	b = append(b, "  "...)
	b = AppendInt(b, int64(g.topo.NCPU))
	b = append(b, " CPUs   t = "...)
	b = AppendSeconds(b, g.now)
	b = append(b, "   speed "...)
	b = AppendSpeed(b, g.speed)
	b = append(b, " (achieved "...)
	b = AppendSpeed(b, g.achieved)
	b = append(b, ')')
	switch {
	case g.finished:
		b = append(b, "  FINISHED"...)
	case g.paused:
		b = append(b, "  PAUSED (space: run, '.': step)"...)
	}
	b = append(b, "   events "...)
	b = AppendSI(b, float64(a0.tot.Events))
	b = append(b, "  wakeups "...)
	b = AppendSI(b, float64(a0.tot.Wakeups))
	g.header = b
}

// armPrefix starts an arm's text line in a split view: its letter, room
// for a sample of its line style (drawn by chart), "base" for the
// baseline arm.
func (g *Game) armPrefix(x []byte, i int) []byte {
	x = x[:0]
	if g.narms > 1 {
		x = append(x, g.arms[i].label[:1]...)
		for k := 0; k < armSampleW+1; k++ {
			x = append(x, ' ')
		}
		if i == g.baselineArm() {
			x = append(x, "(base) "...)
		}
	}
	return x
}

// buildTexts rebuilds the charts' text lines.
func (g *Game) buildTexts() {
	if g.topo == nil {
		return
	}
	a0 := g.arms[0]
	t := &g.tx
	base := g.baselineArm()
	for w := 0; w < g.nhist; w++ {
		l := &t.hist[w]
		l[0] = append(l[0][:0], "wakeup latency "...)
		if w < a0.nw {
			l[0] = append(l[0], a0.names[w]...)
		}
		l[0] = append(l[0], " (wakeups per bin, log)"...)
		for i := 0; i < g.narms; i++ {
			a := g.arms[i]
			x := g.armPrefix(l[1+i], i)
			if w < a.nw {
				hd := &a.hist[w]
				for k := range pctNames {
					x = append(x, pctNames[k]...)
					x = append(x, ' ')
					x = AppendUS(x, hd.pct[k])
					x = append(x, "  "...)
				}
				x = append(x, "n="...)
				x = AppendSI(x, float64(hd.count))
			}
			l[1+i] = x
		}
		if g.narms > 1 {
			x := l[1+g.narms][:0]
			hb := &g.arms[base].hist[w]
			for i := 0; i < g.narms; i++ {
				if i == base {
					continue
				}
				x = append(x, g.arms[i].label[:1]...)
				x = append(x, " vs "...)
				x = append(x, g.arms[base].label[:1]...)
				ha := &g.arms[i].hist[w]
				for k := range pctNames {
					x = append(x, ' ')
					x = append(x, pctNames[k]...)
					x = append(x, ' ')
					x = AppendChange(x, hb.pct[k], ha.pct[k])
				}
				x = append(x, "  "...)
			}
			l[1+g.narms] = x
		}
	}

	t.series[0][0] = append(t.series[0][0][:0], "probes per select_idle_cpu call"...)
	t.series[1][0] = append(t.series[1][0][:0], "throughput (ops/s)"...)
	t.series[2][0] = append(t.series[2][0][:0], "idle CPUs waiting work may use"...)
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], g.arms[i].series
		x := append(g.armPrefix(t.series[0][1+i], i), "now "...)
		x = AppendFloat(x, s.Probes.MeanLast(4), 1)
		x = append(x, "  mean "...)
		mean := math.NaN()
		if a.tot.SISCalls > 0 {
			mean = float64(a.tot.SISProbes) / float64(a.tot.SISCalls)
		}
		x = AppendFloat(x, mean, 2)
		x = append(x, "  calls "...)
		x = AppendSI(x, float64(a.tot.SISCalls))
		t.series[0][1+i] = x

		x = g.armPrefix(t.series[1][1+i], i)
		for w := 0; w < min(a.nw, MaxHistPanels); w++ {
			if w > 0 {
				x = append(x, "  "...)
			}
			x = append(x, a.names[w]...)
			x = append(x, ' ')
			x = AppendSI(x, s.Ops[w].MeanLast(4))
		}
		t.series[1][1+i] = x

		c := a.cons
		x = append(g.armPrefix(t.series[2][1+i], i), "now "...)
		x = AppendInt(x, int64(c.Starved))
		x = append(x, '/')
		x = AppendInt(x, int64(c.Idle))
		x = append(x, " idle  "...)
		x = AppendInt(x, int64(c.Waking))
		x = append(x, " waking  "...)
		x = AppendInt(x, int64(c.Waiting))
		x = append(x, " wait"...)
		t.series[2][1+i] = x
	}
}

// baselineArm is the arm the others are compared with.
func (g *Game) baselineArm() int {
	if g.baseline >= 0 && g.baseline < g.narms {
		return g.baseline
	}
	return 0
}

// chart draws a chart's background and text lines and returns its
// geometry; right is room kept free right of the plot. In a split view
// lines 1..narms are the arms', which get a sample of their line style
// (in col) after their letter.
func (g *Game) chart(r Rect, lines [][]byte, right int, col color.RGBA) ChartGeom {
	p := g.p
	p.fillR(r, colPanel)
	cg := LayoutChart(r, len(lines), right)
	for i, l := range lines {
		c := colText
		if i > 0 {
			c = colDim
		}
		lr := cg.Lines[i]
		p.text(lr.X, lr.Y, l, lr.W, c)
		if g.narms > 1 && i >= 1 && i <= g.narms && lr.W > TextWidth(armSampleW+2) {
			x0 := float32(lr.X + TextWidth(1) + 2)
			y := float32(lr.Y + GlyphH/2 + 1)
			phase := float32(0)
			g.dashedLine(x0, y, x0+float32(TextWidth(armSampleW)-2), y, 2, col, i-1, &phase)
		}
	}
	if cg.Plot.H >= 8 && cg.Plot.W >= 8 {
		p.fillR(cg.Plot, colBackground)
	}
	return cg
}

// Tick caches per chart (histograms, then series): x and y axes.
type chartTicks struct {
	x, y [MaxHistPanels + 3]TickCache
}

// xTicks draws ticks (spaced: SpaceLabels) along the plot's bottom with
// their labels under it and vertical grid lines.
func (g *Game) xTicks(cg ChartGeom, ticks []Tick) {
	p := g.p
	for _, t := range ticks {
		x := float32(cg.Plot.X + t.Pos)
		p.fill(x, float32(cg.Plot.Y), 1, float32(cg.Plot.H), colGrid)
		p.fill(x, float32(cg.Plot.Bottom()), 1, 2, colAxis)
		if t.Label != "" {
			a, _ := LabelSpan(t, cg.Plot.W)
			p.textS(cg.XAxis.X+a, cg.XAxis.Y, t.Label, 0, colDim)
		}
	}
}

// yTicks draws ticks (spaced) up the plot's left side (position 0 at the
// bottom) with right-aligned labels and horizontal grid lines.
func (g *Game) yTicks(cg ChartGeom, ticks []Tick) {
	p := g.p
	for _, t := range ticks {
		y := cg.Plot.Bottom() - 1 - t.Pos
		p.fill(float32(cg.Plot.X), float32(y), float32(cg.Plot.W), 1, colGrid)
		p.fill(float32(cg.Plot.X-3), float32(y), 3, 1, colAxis)
		if t.Label != "" {
			w := TextWidth(len(t.Label))
			p.textS(cg.YAxis.Right()-w, y-GlyphH/2, t.Label, 0, colDim)
		}
	}
}

// dashedLine draws a segment in arm i's dash pattern; phase carries the
// pattern across segments of one polyline.
func (g *Game) dashedLine(x0, y0, x1, y1, wd float32, col color.RGBA, arm int, phase *float32) {
	on, off := armDash[arm][0], armDash[arm][1]
	if off == 0 {
		g.p.line(x0, y0, x1, y1, wd, col)
		return
	}
	dx, dy := x1-x0, y1-y0
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l < 0.01 {
		return
	}
	period := on + off
	for s := float32(0); s < l; {
		ph := float32(math.Mod(float64(*phase+s), float64(period)))
		var seg float32
		if ph < on {
			seg = min(on-ph, l-s)
			a, b := s/l, (s+seg)/l
			g.p.line(x0+dx*a, y0+dy*a, x0+dx*b, y0+dy*b, wd, col)
		} else {
			seg = min(period-ph, l-s)
		}
		s += seg
	}
	*phase += l
}

// drawHistograms draws one latency histogram per workload.
func (g *Game) drawHistograms() {
	p := g.p
	base := g.baselineArm()
	n := histLines(g.narms)
	for w, r := range g.page.Hists {
		if w >= g.nhist {
			break
		}
		cg := g.chart(r, g.tx.hist[w][:n], 0, WorkloadColor(w))
		plot := cg.Plot
		if plot.H < 16 || plot.W < 16 {
			continue
		}
		bins0 := &g.arms[0].hist[w].bins
		if bins0.N == 0 {
			continue
		}
		peak := 0.0
		for i := 0; i < g.narms; i++ {
			peak = max(peak, g.arms[i].hist[w].bins.Peak)
		}
		top := CountTop(peak)
		yk := [4]float64{top, float64(plot.H)}
		yt := g.ticks.y[w].Get(yk)
		if yt == nil {
			yt = g.ticks.y[w].Set(yk, SpaceLabels(CountTicks(top, plot.H), plot.H, 1, true))
		}
		g.yTicks(cg, yt)
		xk := [4]float64{float64(bins0.MaxUS), float64(plot.W)}
		xt := g.ticks.x[w].Get(xk)
		if xt == nil {
			xt = g.ticks.x[w].Set(xk, SpaceLabels(LatencyTicks(bins0.MaxUS, plot.W), plot.W, GlyphAdvance, false))
		}
		g.xTicks(cg, xt)
		if peak == 0 {
			p.textS(plot.X+4, plot.Y+4, "no wakeups yet", 0, colDim)
			continue
		}
		col := WorkloadColor(w)
		yOf := func(c float64) float32 {
			return float32(plot.Bottom()) - float32(CountPos(c, top))*float32(plot.H-1)
		}
		xOf := func(k, nb int) float32 { return float32(plot.X) + float32(k)*float32(plot.W-1)/float32(nb) }
		// The baseline arm's bins filled, translucent, under every outline.
		{
			bins := &g.arms[base].hist[w].bins
			for k := 0; k < bins.N; k++ {
				if c := bins.Count[k]; c > countFloor {
					x0, x1 := xOf(k, bins.N), xOf(k+1, bins.N)
					y := yOf(c)
					p.fill(x0, y, max(x1-x0, 1), float32(plot.Bottom())-y, WithAlpha(col, 0.35))
				}
			}
		}
		// Every arm as a step outline in its own dash pattern.
		for i := 0; i < g.narms; i++ {
			bins := &g.arms[i].hist[w].bins
			phase := float32(0)
			prevY := float32(plot.Bottom())
			for k := 0; k <= bins.N; k++ {
				y := float32(plot.Bottom())
				if k < bins.N {
					y = yOf(bins.Count[k])
				}
				x := xOf(k, bins.N)
				if y != prevY {
					g.dashedLine(x, prevY, x, y, 1.5, col, i, &phase)
				}
				if k < bins.N && y < float32(plot.Bottom()) {
					g.dashedLine(x, y, xOf(k+1, bins.N), y, 1.5, col, i, &phase)
				}
				prevY = y
			}
		}
		// Percentile marks: a vertical line per arm in its dash pattern,
		// labelled for the baseline arm (labels that would overlap are
		// dropped).
		var ticks [3]Tick
		for i := 0; i < g.narms; i++ {
			hd := &g.arms[i].hist[w]
			if hd.count == 0 {
				continue
			}
			for k, v := range hd.pct {
				pos := int(LogPos(float64(v), bins0.MaxUS) * float64(plot.W-1))
				x := float32(plot.X + pos)
				phase := float32(0)
				y0 := float32(plot.Y + GlyphH + 2)
				g.dashedLine(x, y0, x, float32(plot.Bottom()), 1, colLine, i, &phase)
				if i == base {
					ticks[k] = Tick{Pos: pos, Label: pctNames[k]}
				}
			}
		}
		// Labels that would overlap go one line lower.
		for row, ts := range StaggerLabels(ticks[:], plot.W, 2) {
			for _, t := range ts {
				if t.Label != "" {
					a, _ := LabelSpan(t, plot.W)
					p.textS(plot.X+a, plot.Y+1+row*lineH, t.Label, 0, colLine)
				}
			}
		}
	}
}

// timeSpan is the simulated time the series charts show: the oldest and
// newest sample over all arms, in seconds.
func (g *Game) timeSpan() (float64, float64) {
	t0, t1 := math.Inf(1), math.Inf(-1)
	for i := 0; i < g.narms; i++ {
		ts := &g.arms[i].series.T
		if ts.Len() > 0 {
			t0, t1 = min(t0, ts.At(0)), max(t1, ts.Last())
		}
	}
	return t0, t1
}

// drawSeries draws the three time-series charts.
func (g *Game) drawSeries() {
	n := 1 + g.narms
	t0, t1 := g.timeSpan()
	for c, r := range g.page.Series {
		right := 0
		if c == 2 {
			right = 12*g.narms + 4 // the gauges
		}
		lc := colLine
		if c == 2 {
			lc = colQueue
		}
		cg := g.chart(r, g.tx.series[c][:n], right, lc)
		plot := cg.Plot
		if plot.H < 16 || plot.W < 16 {
			continue
		}
		tc := &g.ticks.x[MaxHistPanels+c]
		if t1 > t0 {
			xk := [4]float64{t0, t1, float64(plot.W)}
			xt := tc.Get(xk)
			if xt == nil {
				xt = tc.Set(xk, SpaceLabels(TimeTicks(t0, t1, plot.W, max(plot.W/90, 2)), plot.W, GlyphAdvance, false))
			}
			g.xTicks(cg, xt)
		}
		yc := &g.ticks.y[MaxHistPanels+c]
		switch c {
		case 0:
			top := 1.0
			for i := 0; i < g.narms; i++ {
				top = max(top, g.arms[i].series.Probes.Max())
			}
			top = NiceCeil(top * 1.1)
			g.yTicks(cg, g.valueTicks(yc, top, plot.H))
			for i := 0; i < g.narms; i++ {
				s := g.arms[i].series
				g.plotRing(plot, &s.T, &s.Probes, t0, t1, top, colLine, i)
			}
		case 1:
			top := 1.0
			for i := 0; i < g.narms; i++ {
				for w := 0; w < min(g.arms[i].nw, MaxHistPanels); w++ {
					top = max(top, g.arms[i].series.Ops[w].Max())
				}
			}
			top = NiceCeil(top * 1.1)
			g.yTicks(cg, g.valueTicks(yc, top, plot.H))
			for i := 0; i < g.narms; i++ {
				a := g.arms[i]
				for w := 0; w < min(a.nw, MaxHistPanels); w++ {
					g.plotRing(plot, &a.series.T, &a.series.Ops[w], t0, t1, top, WorkloadColor(w), i)
				}
			}
		case 2:
			top := 1.0
			for i := 0; i < g.narms; i++ {
				top = max(top, g.arms[i].series.Starved.Max(), g.arms[i].series.Waking.Max())
			}
			top = NiceCeil(top * 1.1)
			g.yTicks(cg, g.valueTicks(yc, top, plot.H))
			for i := 0; i < g.narms; i++ {
				s := g.arms[i].series
				g.plotRing(plot, &s.T, &s.Waking, t0, t1, top, colWaking, i)
				g.plotRing(plot, &s.T, &s.Starved, t0, t1, top, colQueue, i)
				g.meter(plot, i)
			}
		}
	}
}

// valueTicks are the (cached) ticks of a linear axis 0..top.
func (g *Game) valueTicks(c *TickCache, top float64, h int) []Tick {
	k := [4]float64{top, float64(h)}
	if t := c.Get(k); t != nil {
		return t
	}
	return c.Set(k, SpaceLabels(ValueTicks(top, h, AppendSI), h, 1, true))
}

// meter draws arm i's gauge right of the plot: the machine's CPUs now,
// stacked from the bottom: idle CPUs a waiting task may run on
// (waiting-work colour), waking CPUs, other idle CPUs, running and
// SMT-held CPUs (workload-neutral light grey).
func (g *Game) meter(plot Rect, i int) {
	c := g.arms[i].cons
	x := float32(plot.Right() + 4 + i*12)
	y, h := float32(plot.Y), float32(plot.H)
	g.p.fill(x, y, 9, h, colGrid)
	if c.CPUs == 0 {
		return
	}
	yy := y + h
	seg := func(n int, col color.RGBA) {
		v := float32(n) / float32(c.CPUs) * h
		if n > 0 {
			v = max(v, 1)
		}
		g.p.fill(x, yy-v, 9, v, col)
		yy -= v
	}
	seg(c.Starved, colQueue)
	seg(c.Waking, colWaking)
	seg(c.Idle-c.Starved, colIdle)
	seg(c.Running+c.SMTHeld, colLine)
	if g.narms > 1 {
		g.p.text(int(x)+1, plot.Bottom()+2, g.arms[i].label[:1], 0, colDim)
	}
}

// plotRing draws the samples of r against their times ts on the
// simulated-time axis t0..t1 (seconds) and 0..top, in arm i's dash
// pattern; NaN samples leave gaps.
func (g *Game) plotRing(plot Rect, ts, r *Ring, t0, t1, top float64, col color.RGBA, arm int) {
	n := min(r.Len(), ts.Len())
	if n < 2 || top <= 0 || !(t1 > t0) {
		return
	}
	xOf := func(t float64) float32 {
		return float32(plot.X) + float32((t-t0)/(t1-t0))*float32(plot.W-1)
	}
	yOf := func(v float64) float32 {
		return float32(plot.Bottom()-1) - float32(min(v/top, 1))*float32(plot.H-1)
	}
	off := ts.Len() - n
	phase := float32(0)
	for k := 1; k < n; k++ {
		v0, v1 := r.At(r.Len()-n+k-1), r.At(r.Len()-n+k)
		if math.IsNaN(v0) || math.IsNaN(v1) {
			continue
		}
		g.dashedLine(xOf(ts.At(off+k-1)), yOf(v0), xOf(ts.At(off+k)), yOf(v1), 1.5, col, arm, &phase)
	}
}
