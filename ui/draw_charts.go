//go:build js && wasm

package ui

import (
	"image/color"
	"math"
)

// The charts: wakeup latency histograms per workload (log x axis, A and
// B overlaid with the percentile markers and their difference), and
// time series of the search cost, throughput and work conservation.

// chartTexts are the charts' text lines, rebuilt a few times a second.
type chartTexts struct {
	hist   [MaxHistPanels][4][]byte // title, A, B, B vs A
	series [3][3][]byte             // title, A, B
	span   []byte                   // "last 30.0s" (simulated time the charts cover)
	yMax   [3][]byte                // y-axis top labels
}

const lineH = GlyphH + 1

// buildTexts rebuilds the header and the charts' text lines.
func (g *Game) buildTexts() {
	if g.topo == nil {
		return
	}
	a0 := g.arms[0]
	b := g.header[:0]
	b = append(b, g.topo.Spec.Name...)
	b = append(b, "  "...)
	b = AppendInt(b, int64(g.topo.NCPU))
	b = append(b, " CPUs   t="...)
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

	t := &g.tx
	for w := 0; w < g.nhist; w++ {
		l := &t.hist[w]
		l[0] = append(l[0][:0], "wakeup latency  "...)
		if w < a0.nw {
			l[0] = append(l[0], a0.names[w]...)
		}
		for i := 0; i < g.narms; i++ {
			a := g.arms[i]
			x := l[1+i][:0]
			if g.narms > 1 {
				x = append(x, a.label[:1]...)
				x = append(x, ' ')
			}
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
			x := append(l[3][:0], "B vs A "...)
			ha, hb := &g.arms[0].hist[w], &g.arms[1].hist[w]
			for k := range pctNames {
				x = append(x, ' ')
				x = append(x, pctNames[k]...)
				x = append(x, ' ')
				x = AppendChange(x, ha.pct[k], hb.pct[k])
			}
			l[3] = x
		}
	}

	t.series[0][0] = append(t.series[0][0][:0], "probes per select_idle_cpu call"...)
	t.series[1][0] = append(t.series[1][0][:0], "throughput (ops/s)"...)
	t.series[2][0] = append(t.series[2][0][:0], "idle CPU while a runqueue waits"...)
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], g.arms[i].series
		pre := func(x []byte) []byte {
			x = x[:0]
			if g.narms > 1 {
				x = append(x, a.label[:1]...)
				x = append(x, ' ')
			}
			return x
		}
		x := append(pre(t.series[0][1+i]), "now "...)
		x = AppendFloat(x, s.Probes.MeanLast(4), 1)
		x = append(x, "  run mean "...)
		mean := math.NaN()
		if a.tot.SISCalls > 0 {
			mean = float64(a.tot.SISProbes) / float64(a.tot.SISCalls)
		}
		x = AppendFloat(x, mean, 2)
		x = append(x, "  calls "...)
		x = AppendSI(x, float64(a.tot.SISCalls))
		t.series[0][1+i] = x

		x = pre(t.series[1][1+i])
		for w := 0; w < min(a.nw, MaxHistPanels); w++ {
			if w > 0 {
				x = append(x, "  "...)
			}
			x = append(x, a.names[w]...)
			x = append(x, ' ')
			x = AppendSI(x, s.Ops[w].MeanLast(4))
		}
		t.series[1][1+i] = x

		x = append(pre(t.series[2][1+i]), "now "...)
		x = AppendPercent(x, s.Cons.MeanLast(4))
		x = append(x, " (in LLC "...)
		x = AppendPercent(x, s.LLCCons.MeanLast(4))
		x = append(x, ")  run "...)
		run, runLLC := math.NaN(), math.NaN()
		if a.tot.Now > 0 {
			run = float64(a.tot.ConservationNS) / float64(a.tot.Now)
			runLLC = float64(a.tot.LLCConservationNS) / float64(a.tot.Now)
		}
		x = AppendPercent(x, run)
		x = append(x, " ("...)
		x = AppendPercent(x, runLLC)
		x = append(x, ')')
		t.series[2][1+i] = x
	}
	ts := &a0.series.T
	t.span = append(t.span[:0], "last "...)
	span := 0.0
	if ts.Len() > 1 {
		span = ts.Last() - ts.At(0)
	}
	t.span = AppendUS(t.span, int64(span*1e6+0.5))
}

// panel draws a chart's background and text lines and returns the plot
// area left below them (with room for the x-axis labels).
func (g *Game) panel(r Rect, lines [][]byte, cols []color.RGBA) Rect {
	p := g.p
	p.fillR(r, colPanel)
	y := r.Y + 3
	for i, l := range lines {
		p.text(r.X+4, y, l, r.W-8, cols[i])
		y += lineH
	}
	return Rect{r.X + 4, y + 2, max(r.W-8, 0), max(r.Bottom()-y-2-lineH, 0)}
}

// lineCols returns the text colours for a chart: title, A, B, B vs A.
func (g *Game) lineCols() [4]color.RGBA {
	if g.narms > 1 {
		return [4]color.RGBA{colText, colArm[0], colArm[1], colText}
	}
	return [4]color.RGBA{colText, colDim, colDim, colDim}
}

// drawHistograms draws one latency histogram per workload.
func (g *Game) drawHistograms() {
	p := g.p
	cols := g.lineCols()
	for w, r := range g.page.Hists {
		if w >= g.nhist {
			break
		}
		l := &g.tx.hist[w]
		n := 2
		if g.narms > 1 {
			n = 4
		}
		plot := g.panel(r, l[:n], cols[:n])
		if plot.H < 8 {
			continue
		}
		p.fillR(plot, colBackground)
		axis := g.arms[0].hist[w].bins.MaxUS
		if axis <= 0 {
			continue
		}
		// Decade grid lines and labels.
		dec := int(math.Round(math.Log10(float64(axis))))
		for d := 0; d <= dec && d < len(decadeLabels); d++ {
			x := plot.X + int(float64(plot.W-1)*float64(d)/float64(dec))
			p.fill(float32(x), float32(plot.Y), 1, float32(plot.H), colGrid)
			lx := min(max(x-TextWidth(len(decadeLabels[d]))/2, plot.X), plot.Right()-TextWidth(len(decadeLabels[d])))
			p.textS(lx, plot.Bottom()+1, decadeLabels[d], 0, colDim)
		}
		peak := int64(0)
		for i := 0; i < g.narms; i++ {
			peak = max(peak, g.arms[i].hist[w].bins.Peak)
		}
		if peak == 0 {
			p.textS(plot.X+4, plot.Y+4, "no wakeups yet", 0, colDim)
			continue
		}
		// A (or the only arm) as filled bars; B overlaid as hollow bars.
		lp := math.Log1p(float64(peak))
		bw := float32(plot.W) / NBins
		for i := 0; i < g.narms; i++ {
			bins := &g.arms[i].hist[w].bins
			for k, c := range bins.Count {
				if c == 0 {
					continue
				}
				h := float32(math.Log1p(float64(c)) / lp * float64(plot.H))
				x := float32(plot.X) + float32(k)*bw
				y := float32(plot.Bottom()) - h
				bx := max(bw-1, 1)
				switch {
				case g.narms == 1:
					p.fill(x, y, bx, h, WorkloadColor(w))
				case i == 0:
					p.fill(x, y, bx, h, WithAlpha(colArm[0], 0.7))
				default:
					p.fill(x, y, bx, 2, colArm[1])
					p.fill(x, y, 1, h, colArm[1])
					p.fill(x+bx-1, y, 1, h, colArm[1])
				}
			}
		}
		// Percentile markers: A solid, B dashed.
		for i := 0; i < g.narms; i++ {
			hd := &g.arms[i].hist[w]
			if hd.count == 0 {
				continue
			}
			for k, v := range hd.pct {
				x := float32(plot.X) + float32(LogPos(float64(v), axis)*float64(plot.W-1))
				if i == 0 {
					p.fill(x, float32(plot.Y), 1, float32(plot.H), colPct[k])
				} else {
					for y := plot.Y; y < plot.Bottom(); y += 6 {
						p.fill(x, float32(y), 1, float32(min(3, plot.Bottom()-y)), colPct[k])
					}
				}
				if i == 0 {
					p.textS(int(x)+2, plot.Y+1+k*lineH, pctNames[k], 0, colPct[k])
				}
			}
		}
	}
}

// drawSeries draws the three time-series charts.
func (g *Game) drawSeries() {
	cols := g.lineCols()
	n := 1 + g.narms
	for c, r := range g.page.Series {
		plot := g.panel(r, g.tx.series[c][:n], cols[:n])
		if plot.H < 8 {
			continue
		}
		if c == 2 {
			// Room for the meter at the right.
			plot.W = max(plot.W-10*g.narms-6, 0)
		}
		g.p.fillR(plot, colBackground)
		g.p.text(plot.Right()-TextWidth(len(g.tx.span)), plot.Bottom()+1, g.tx.span, 0, colDim)
		switch c {
		case 0:
			top := 1.0
			for i := 0; i < g.narms; i++ {
				top = max(top, g.arms[i].series.Probes.Max())
			}
			top = NiceCeil(top * 1.1)
			g.yLabel(plot, c, top, false)
			for i := 0; i < g.narms; i++ {
				col := colArm[0]
				if g.narms > 1 {
					col = colArm[i]
				}
				g.plotRing(plot, &g.arms[i].series.Probes, top, col, false)
			}
		case 1:
			top := 1.0
			for i := 0; i < g.narms; i++ {
				for w := 0; w < min(g.arms[i].nw, MaxHistPanels); w++ {
					top = max(top, g.arms[i].series.Ops[w].Max())
				}
			}
			top = NiceCeil(top * 1.1)
			g.yLabel(plot, c, top, false)
			for i := 0; i < g.narms; i++ {
				a := g.arms[i]
				for w := 0; w < min(a.nw, MaxHistPanels); w++ {
					col := WorkloadColor(w)
					if g.narms > 1 && a.nw == 1 {
						col = colArm[i]
					}
					g.plotRing(plot, &a.series.Ops[w], top, col, i == 1 && a.nw > 1)
				}
			}
		case 2:
			top := 0.01
			for i := 0; i < g.narms; i++ {
				top = max(top, g.arms[i].series.Cons.Max(), g.arms[i].series.LLCCons.Max())
			}
			top = min(NiceCeil(top*1.1), 1)
			g.yLabel(plot, c, top, true)
			for i := 0; i < g.narms; i++ {
				s := g.arms[i].series
				col := colArm[i]
				g.plotRing(plot, &s.LLCCons, top, Mix(col, colBackground, 0.5), false)
				g.plotRing(plot, &s.Cons, top, col, false)
				g.meter(plot, i, s.Cons.MeanLast(4), s.LLCCons.MeanLast(4), col)
			}
		}
	}
}

// meter draws arm i's work-conservation gauge right of the plot: a bar
// for the overall fraction with the within-LLC fraction inside it.
func (g *Game) meter(plot Rect, i int, all, llc float64, col color.RGBA) {
	x := float32(plot.Right() + 4 + i*10)
	y, h := float32(plot.Y), float32(plot.H)
	g.p.fill(x, y, 8, h, colGrid)
	if !math.IsNaN(all) {
		v := float32(min(all, 1)) * h
		g.p.fill(x, y+h-v, 8, v, col)
	}
	if !math.IsNaN(llc) {
		v := float32(min(llc, 1)) * h
		g.p.fill(x+2, y+h-v, 4, v, Mix(col, colBackground, 0.5))
	}
}

// yLabel writes the y-axis top value in the plot's corner.
func (g *Game) yLabel(plot Rect, c int, top float64, pct bool) {
	b := g.tx.yMax[c][:0]
	if pct {
		b = AppendPercent(b, top)
	} else {
		b = AppendSI(b, top)
	}
	g.tx.yMax[c] = b
	g.p.text(plot.X+2, plot.Y+1, b, 0, colDim)
}

// plotRing draws r as a line over plot scaled to 0..top, newest sample
// at the right edge; NaN samples leave gaps. Dashed skips every other
// segment.
func (g *Game) plotRing(plot Rect, r *Ring, top float64, col color.RGBA, dashed bool) {
	n := r.Len()
	if n < 2 || top <= 0 {
		return
	}
	step := float32(plot.W-1) / float32(SeriesLen-1)
	right := float32(plot.Right() - 1)
	yOf := func(v float64) float32 {
		return float32(plot.Bottom()-1) - float32(min(v/top, 1))*float32(plot.H-1)
	}
	for k := 1; k < n; k++ {
		if dashed && k%2 == 0 {
			continue
		}
		v0, v1 := r.At(k-1), r.At(k)
		if math.IsNaN(v0) || math.IsNaN(v1) {
			continue
		}
		x0 := right - float32(n-k)*step
		x1 := right - float32(n-1-k)*step
		g.p.line(x0, yOf(v0), x1, yOf(v1), 1.5, col)
	}
}
