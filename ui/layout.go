package ui

import (
	"strconv"

	"schedplay/engine/machine"
)

// Layout geometry of the canvas: where the machine map's sockets, LLCs,
// cores and CPU cells go, and where the charts go. Pure integer
// arithmetic without ebiten, so it is tested natively.

// Rect is the pixel rectangle [X, X+W) × [Y, Y+H).
type Rect struct{ X, Y, W, H int }

// Contains reports whether o lies entirely inside r.
func (r Rect) Contains(o Rect) bool {
	return o.X >= r.X && o.Y >= r.Y && o.X+o.W <= r.X+r.W && o.Y+o.H <= r.Y+r.H
}

// Overlaps reports whether r and o share a pixel.
func (r Rect) Overlaps(o Rect) bool {
	return r.X < o.X+o.W && o.X < r.X+r.W && r.Y < o.Y+o.H && o.Y < r.Y+r.H
}

// Has reports whether pixel (x, y) is inside r.
func (r Rect) Has(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// Bottom and Right are the first row and column after r.
func (r Rect) Bottom() int { return r.Y + r.H }
func (r Rect) Right() int  { return r.X + r.W }

// Inset shrinks r by d on every side (never below zero size).
func (r Rect) Inset(d int) Rect {
	r.X, r.Y, r.W, r.H = r.X+d, r.Y+d, max(r.W-2*d, 0), max(r.H-2*d, 0)
	return r
}

// spacing is one density of the machine map: the gaps between boxes of a
// level, each box's inner padding and the header strip on top of
// sockets, LLCs and cores (their labels, and the LLC's has_idle_cores
// square).
type spacing struct {
	sockGap, sockPad, sockHead int
	llcGap, llcPad, llcHead    int
	coreGap, corePad, coreHead int
	thrGap                     int
	// minCell is the smallest CPU cell this density is used for: below it
	// the next, denser one is tried.
	minCell int
}

// headH is a header strip with room for one line of text.
const headH = GlyphH + 2

// Densities from roomy (labelled socket, LLC and core boxes) to dense (a
// few pixels per CPU, as for 512 CPUs in a small canvas). Every density
// but the last labels sockets and LLCs.
var densities = [...]spacing{
	{sockGap: 8, sockPad: 3, sockHead: headH, llcGap: 5, llcPad: 2, llcHead: headH, coreGap: 3, corePad: 2, coreHead: headH, thrGap: 2, minCell: 22},
	{sockGap: 8, sockPad: 3, sockHead: headH, llcGap: 5, llcPad: 2, llcHead: headH, coreGap: 3, corePad: 1, thrGap: 1, minCell: 10},
	{sockGap: 5, sockPad: 2, sockHead: headH, llcGap: 3, llcPad: 1, llcHead: headH, coreGap: 2, corePad: 1, thrGap: 0, minCell: 4},
	{sockGap: 4, sockPad: 1, sockHead: headH, llcGap: 2, llcPad: 1, llcHead: headH, coreGap: 1, corePad: 0, thrGap: 0, minCell: 2},
	{sockGap: 3, sockPad: 1, sockHead: 0, llcGap: 2, llcPad: 1, llcHead: 3, coreGap: 1, corePad: 0, thrGap: 0, minCell: 0},
}

// Largest CPU cell: a P4 does not need a cell the size of the canvas.
const (
	maxCellW = 220
	maxCellH = 130
)

// Label is a text placed on the map: a socket's, an LLC's or a core's
// name in its header strip.
type Label struct {
	R    Rect
	Text string
}

// MachineLayout is the geometry of one machine map. Slices are indexed by
// the topology's global socket, LLC, core and CPU numbers.
type MachineLayout struct {
	Bounds  Rect // the map as drawn (inside the area it was given)
	Sockets []Rect
	LLCs    []Rect
	Hints   []Rect // per LLC: the has_idle_cores square (or strip)
	Cores   []Rect
	CPUs    []Rect
	// Labels of sockets, LLCs and cores (those that fit), and per LLC the
	// index of its label in Labels (-1: none).
	Labels   []Label
	LLCLabel []int
	// Cell is the smaller side of a CPU cell.
	Cell int
	// Density indexes densities (0 = roomiest).
	Density int
	// SocketLabels, LLCLabels and CoreLabels say whether every box of the
	// level has its label.
	SocketLabels, LLCLabels, CoreLabels bool
}

// grid is the arrangement of n children in cols × rows.
type grid struct{ cols, rows int }

// grids lists the useful arrangements of n children: every column count
// that gives a different number of rows.
func grids(n int) []grid {
	var out []grid
	last := -1
	for c := 1; c <= n; c++ {
		r := (n + c - 1) / c
		if r == last {
			continue
		}
		last = r
		out = append(out, grid{c, r})
	}
	return out
}

// shape is the uniform tree of the machine.
type shape struct {
	sockets, llcs, cores, threads int // llcs per socket, cores per LLC, threads per core
}

func shapeOf(tp *machine.Topology) shape {
	t := tp.Spec.Topology
	return shape{sockets: t.Sockets, llcs: t.CoresPerSocket / t.CoresPerLLC, cores: t.CoresPerLLC, threads: t.ThreadsPerCore}
}

// fit is one candidate arrangement with its cell size.
type fit struct {
	s, l, c, t grid
	cw, ch     int
}

// extent returns the total size along one axis for a cell size x:
// n = children counts along the axis per level, head = header strip sizes.
func extent(sp *spacing, x, ns, nl, nc, nt int, horizontal bool) int {
	sockHead, llcHead, coreHead := sp.sockHead, sp.llcHead, sp.coreHead
	if horizontal {
		sockHead, llcHead, coreHead = 0, 0, 0
	}
	core := coreHead + 2*sp.corePad + nt*x + (nt-1)*sp.thrGap
	llc := llcHead + 2*sp.llcPad + nc*core + (nc-1)*sp.coreGap
	sock := sockHead + 2*sp.sockPad + nl*llc + (nl-1)*sp.llcGap
	return ns*sock + (ns-1)*sp.sockGap
}

// cellFor is the largest cell size x with extent(x) <= avail (may be < 1).
func cellFor(sp *spacing, avail, ns, nl, nc, nt int, horizontal bool) int {
	base := extent(sp, 0, ns, nl, nc, nt, horizontal)
	k := ns * nl * nc * nt
	if avail < base {
		return 0
	}
	return (avail - base) / k
}

// labelMin is the narrowest box whose label fits: the shortest form of
// each level's label ("S1", "L31" after the hint square, "c7").
func labelMin(level int, sp *spacing) int {
	switch level {
	case 0:
		return TextWidth(2) + 2*sp.sockPad + 4
	case 1:
		return hintSize + 3 + TextWidth(3) + 2*sp.llcPad + 4
	}
	return TextWidth(2) + 2*sp.corePad + 2
}

// hintSize is the side of the has_idle_cores square.
const hintSize = 9

// bestFit searches every arrangement of every level for the largest cell
// that fits w × h with spacing sp, keeping the labelled boxes wide
// enough for their shortest label. The number of candidates is at most
// the product of the level sizes, i.e. the CPU count.
func bestFit(sp *spacing, sh shape, w, h int) fit {
	best := fit{cw: -1, ch: -1}
	score := func(f fit) (int, int) { return min(f.cw, f.ch), f.cw * f.ch }
	for _, gs := range grids(sh.sockets) {
		for _, gl := range grids(sh.llcs) {
			for _, gc := range grids(sh.cores) {
				for _, gt := range grids(sh.threads) {
					cw := cellFor(sp, w, gs.cols, gl.cols, gc.cols, gt.cols, true)
					ch := cellFor(sp, h, gs.rows, gl.rows, gc.rows, gt.rows, false)
					cw, ch = min(cw, maxCellW), min(ch, maxCellH)
					// Keep cells from turning into slivers: at most 2:1.
					cw, ch = min(cw, 2*ch+2), min(ch, 2*cw+2)
					f := fit{gs, gl, gc, gt, cw, ch}
					if sp.llcHead >= GlyphH && !f.labelsFit(sp) {
						continue
					}
					a1, a2 := score(f)
					b1, b2 := score(best)
					if a1 > b1 || (a1 == b1 && a2 > b2) {
						best = f
					}
				}
			}
		}
	}
	return best
}

// boxWidths returns the widths of a core, an LLC and a socket box.
func (f fit) boxWidths(sp *spacing) (coreW, llcW, sockW int) {
	coreW = 2*sp.corePad + f.t.cols*f.cw + (f.t.cols-1)*sp.thrGap
	llcW = 2*sp.llcPad + f.c.cols*coreW + (f.c.cols-1)*sp.coreGap
	sockW = 2*sp.sockPad + f.l.cols*llcW + (f.l.cols-1)*sp.llcGap
	return
}

// labelsFit reports whether sockets and LLCs are wide enough for their
// shortest labels (and cores, when the density has core headers).
func (f fit) labelsFit(sp *spacing) bool {
	if f.cw < 1 || f.ch < 1 {
		return false
	}
	coreW, llcW, sockW := f.boxWidths(sp)
	if sp.coreHead > 0 && coreW < labelMin(2, sp) {
		return false
	}
	return llcW >= labelMin(1, sp) && sockW >= labelMin(0, sp)
}

// pickLabel returns the longest of forms that fits width w ("" if none).
func pickLabel(w int, forms ...string) string {
	for _, s := range forms {
		if TextWidth(len(s)) <= w {
			return s
		}
	}
	return ""
}

// LayoutMachine arranges tp's sockets, LLCs, cores and CPUs inside area,
// choosing for every level the grid that gives the largest CPU cells and
// the roomiest spacing that still leaves cells of its minimum size. The
// map is centred horizontally and aligned to the area's top.
func LayoutMachine(tp *machine.Topology, area Rect) *MachineLayout {
	sh := shapeOf(tp)
	var f fit
	di := 0
	for i := range densities {
		di = i
		f = bestFit(&densities[i], sh, area.W, area.H)
		if min(f.cw, f.ch) >= max(densities[i].minCell, 1) {
			break
		}
	}
	sp := &densities[di]
	f.cw, f.ch = max(f.cw, 1), max(f.ch, 1)
	cw, ch := f.cw, f.ch

	coreW, llcW, sockW := f.boxWidths(sp)
	coreH := sp.coreHead + 2*sp.corePad + f.t.rows*ch + (f.t.rows-1)*sp.thrGap
	llcH := sp.llcHead + 2*sp.llcPad + f.c.rows*coreH + (f.c.rows-1)*sp.coreGap
	sockH := sp.sockHead + 2*sp.sockPad + f.l.rows*llcH + (f.l.rows-1)*sp.llcGap
	totW := f.s.cols*sockW + (f.s.cols-1)*sp.sockGap
	totH := f.s.rows*sockH + (f.s.rows-1)*sp.sockGap

	x0 := area.X + max((area.W-totW)/2, 0)
	y0 := area.Y
	ml := &MachineLayout{
		Bounds:   Rect{x0, y0, totW, totH},
		Sockets:  make([]Rect, sh.sockets),
		LLCs:     make([]Rect, sh.sockets*sh.llcs),
		Hints:    make([]Rect, sh.sockets*sh.llcs),
		Cores:    make([]Rect, tp.NCores),
		CPUs:     make([]Rect, tp.NCPU),
		LLCLabel: make([]int, sh.sockets*sh.llcs),
		Cell:     min(cw, ch),
		Density:  di,
	}
	ml.SocketLabels, ml.LLCLabels, ml.CoreLabels = sp.sockHead >= GlyphH, sp.llcHead >= GlyphH, sp.coreHead >= GlyphH
	label := func(r Rect, forms ...string) bool {
		t := pickLabel(r.W, forms...)
		if t == "" {
			return false
		}
		ml.Labels = append(ml.Labels, Label{Rect{r.X, r.Y, TextWidth(len(t)), GlyphH}, t})
		return true
	}

	place := func(g grid, i, x, y, w, h, gap int) (int, int) {
		return x + (i%g.cols)*(w+gap), y + (i/g.cols)*(h+gap)
	}
	for s := 0; s < sh.sockets; s++ {
		sx, sy := place(f.s, s, x0, y0, sockW, sockH, sp.sockGap)
		ml.Sockets[s] = Rect{sx, sy, sockW, sockH}
		if ml.SocketLabels {
			n := strconv.Itoa(s)
			ml.SocketLabels = label(Rect{sx + sp.sockPad + 2, sy + 1, sockW - 2*sp.sockPad - 4, GlyphH}, "socket "+n, "S"+n) && ml.SocketLabels
		}
		for l := 0; l < sh.llcs; l++ {
			gl := s*sh.llcs + l
			lx, ly := place(f.l, l, sx+sp.sockPad, sy+sp.sockHead+sp.sockPad, llcW, llcH, sp.llcGap)
			ml.LLCs[gl] = Rect{lx, ly, llcW, llcH}
			ml.LLCLabel[gl] = -1
			if ml.LLCLabels {
				// The square, then the label beside it.
				ml.Hints[gl] = Rect{lx + sp.llcPad + 1, ly + (headH-hintSize)/2, hintSize, hintSize}
				n := strconv.Itoa(gl)
				tx := ml.Hints[gl].Right() + 3
				ok := label(Rect{tx, ly + 1, lx + llcW - sp.llcPad - 2 - tx, GlyphH}, "LLC "+n, "L"+n)
				if ok {
					ml.LLCLabel[gl] = len(ml.Labels) - 1
				}
				ml.LLCLabels = ok && ml.LLCLabels
			} else {
				// A strip across the top of the LLC.
				ml.Hints[gl] = Rect{lx + sp.llcPad, ly + sp.llcPad, llcW - 2*sp.llcPad, max(sp.llcHead-1, 1)}
			}
			for c := 0; c < sh.cores; c++ {
				core := gl*sh.cores + c
				cx, cy := place(f.c, c, lx+sp.llcPad, ly+sp.llcHead+sp.llcPad, coreW, coreH, sp.coreGap)
				ml.Cores[core] = Rect{cx, cy, coreW, coreH}
				if ml.CoreLabels {
					n := strconv.Itoa(core)
					ml.CoreLabels = label(Rect{cx + sp.corePad + 1, cy + 1, coreW - 2*sp.corePad - 2, GlyphH}, "core "+n, "c"+n) && ml.CoreLabels
				}
				for t, cpu := range tp.CoreCPUs[core] {
					tx, ty := place(f.t, t, cx+sp.corePad, cy+sp.coreHead+sp.corePad, cw, ch, sp.thrGap)
					ml.CPUs[cpu] = Rect{tx, ty, cw, ch}
				}
			}
		}
	}
	return ml
}

// CPUAt returns the CPU whose cell holds pixel (x, y), or -1.
func (ml *MachineLayout) CPUAt(x, y int) int {
	if !ml.Bounds.Has(x, y) {
		return -1
	}
	for cpu, c := range ml.CPUs {
		if c.Has(x, y) {
			return cpu
		}
	}
	return -1
}

// Page geometry constants (pixels).
const (
	statusH   = GlyphH + 4 // the status line
	legendH   = GlyphH + 3 // one row of the legend
	armLabelH = 16         // "A" / "B: knobs" above each map of a split view
	pageGap   = 8
	// MaxHistPanels is how many workloads get a latency histogram.
	MaxHistPanels = 4
	// MaxArms is how many maps the canvas draws (a grid of small
	// multiples beyond two).
	MaxArms = 4
	// Narrowest charts: below these the charts wrap onto more rows.
	minHistW   = 300
	minSeriesW = 220
	// legendSwatch is the colour square before a legend label and the
	// room it takes with its gap.
	legendSwatch = 9
	legendItemX  = legendSwatch + 3
	legendGap    = 12
)

// PageLayout is the canvas arrangement: header (status line and legend),
// one machine map per arm, the latency histograms and the time-series
// charts.
type PageLayout struct {
	W, H      int
	Header    Rect
	Status    Rect
	Legend    []Rect // per legend item: swatch and label
	ArmLabels []Rect // per arm (empty size with one arm)
	Maps      []*MachineLayout
	Hists     []Rect
	Series    [3]Rect // probes per select_idle_cpu call, throughput, work conservation
}

// LegendWidth is the width of a legend item labelled s.
func LegendWidth(s string) int { return legendItemX + TextWidth(len(s)) }

// layoutLegend wraps the legend items into rows of width w from (x, y);
// items that do not fit in maxRows rows get an empty rectangle. It
// returns the rectangles and the rows used.
func layoutLegend(items []string, x, y, w, maxRows int) ([]Rect, int) {
	out := make([]Rect, len(items))
	cx, row := x, 0
	for i, s := range items {
		iw := LegendWidth(s)
		if cx > x && cx+iw > x+w {
			cx, row = x, row+1
		}
		if row >= maxRows || iw > w {
			out[i] = Rect{x, y, 0, 0}
			continue
		}
		out[i] = Rect{cx, y + row*legendH, iw, GlyphH}
		cx += iw + legendGap
	}
	return out, min(row+1, maxRows)
}

// armGrid is how the maps of n arms are arranged: side by side, stacked,
// or (3–4 arms) two by two.
func armGrids(n int) []grid {
	switch {
	case n <= 1:
		return []grid{{1, 1}}
	case n == 2:
		return []grid{{2, 1}, {1, 2}}
	}
	return []grid{{2, 2}, {n, 1}, {1, n}}
}

// chartRows arranges n charts of at least minW in width w: the rows and
// the charts per row.
func chartRows(n, w, minW int) (rows, per int) {
	per = max(min(n, (w+pageGap)/(minW+pageGap)), 1)
	return (n + per - 1) / per, per
}

// LayoutPage arranges a w × h canvas for arms maps of tp (1; 2 side by
// side or stacked, whichever gives larger CPU cells; 3–4 as a grid),
// nhist latency histograms and the header legend's items.
func LayoutPage(tp *machine.Topology, w, h, arms, nhist int, legend []string) *PageLayout {
	arms = max(min(arms, MaxArms), 1)
	pl := &PageLayout{W: w, H: h}
	nhist = max(min(nhist, MaxHistPanels), 1)
	inner := max(w-2*pageGap, 0)
	pl.Status = Rect{pageGap, 2, inner, GlyphH}
	var rows int
	pl.Legend, rows = layoutLegend(legend, pageGap, statusH, inner, 3)
	pl.Header = Rect{0, 0, w, statusH + rows*legendH}
	top := pl.Header.Bottom() + 2

	// Charts: their rows decide how much height the maps may take.
	hr, hper := chartRows(nhist, inner, minHistW)
	sr, sper := chartRows(3, inner, minSeriesW)
	chartMin := hr*histMinH(arms) + sr*seriesMinH(arms) + (hr+sr)*pageGap
	avail := max(h-top-pageGap/2, 0)
	mapH := max(min(avail*55/100, avail-chartMin), avail*30/100)

	best := -1
	for _, g := range armGrids(arms) {
		cw := (inner - (g.cols-1)*pageGap) / g.cols
		chh := (mapH-(g.rows-1)*pageGap)/g.rows - armLabelHeight(arms)
		var maps []*MachineLayout
		for i := 0; i < arms; i++ {
			// Row y is fixed up below, once the row heights are known.
			maps = append(maps, LayoutMachine(tp, Rect{pageGap + (i%g.cols)*(cw+pageGap), 0, cw, max(chh, 0)}))
		}
		if maps[0].Cell > best {
			best = maps[0].Cell
			pl.Maps = maps
			// Stack the rows under each other's actual bottoms.
			y := top
			for r := 0; r < g.rows; r++ {
				rowH := 0
				for i := r * g.cols; i < min((r+1)*g.cols, arms); i++ {
					rowH = max(rowH, maps[i].Bounds.H)
				}
				for i := r * g.cols; i < min((r+1)*g.cols, arms); i++ {
					shiftMap(maps[i], y+armLabelHeight(arms))
				}
				y += armLabelHeight(arms) + rowH + pageGap
			}
		}
	}
	pl.ArmLabels = pl.ArmLabels[:0]
	for _, m := range pl.Maps {
		if arms == 1 {
			pl.ArmLabels = append(pl.ArmLabels, Rect{m.Bounds.X, m.Bounds.Y, 0, 0})
			continue
		}
		pl.ArmLabels = append(pl.ArmLabels, Rect{m.Bounds.X, m.Bounds.Y - armLabelH, m.Bounds.W, armLabelH})
	}

	bottom := top
	for _, m := range pl.Maps {
		bottom = max(bottom, m.Bounds.Bottom())
	}
	cy := bottom + pageGap
	ch := max(h-cy-pageGap/2-(hr+sr-1)*pageGap, 0)
	// Histograms get 55% of the chart height, shared by their rows.
	histRow := ch * 55 / 100 / hr
	serRow := max((ch-histRow*hr)/sr, 0)
	hw := (inner - (hper-1)*pageGap) / hper
	for i := 0; i < nhist; i++ {
		r, c := i/hper, i%hper
		pl.Hists = append(pl.Hists, Rect{pageGap + c*(hw+pageGap), cy + r*(histRow+pageGap), hw, histRow})
	}
	cy += hr * (histRow + pageGap)
	sw := (inner - (sper-1)*pageGap) / sper
	for i := range pl.Series {
		r, c := i/sper, i%sper
		pl.Series[i] = Rect{pageGap + c*(sw+pageGap), cy + r*(serRow+pageGap), sw, serRow}
	}
	return pl
}

// armLabelHeight is the room above each map for its arm's label.
func armLabelHeight(arms int) int {
	if arms <= 1 {
		return 0
	}
	return armLabelH
}

// histMinH and seriesMinH are the smallest useful chart heights: their
// text lines, a plot and the x-axis labels.
func histMinH(arms int) int   { return histLines(arms)*lineH + 40 + axisH }
func seriesMinH(arms int) int { return (1+arms)*lineH + 30 + axisH }

// histLines is the number of text lines above a histogram: the title,
// one per arm and (in a split view) the comparison with the baseline.
func histLines(arms int) int {
	if arms <= 1 {
		return 2
	}
	return 2 + arms
}

// shiftMap moves a map laid out at y=0 down so that its top is at y.
func shiftMap(ml *MachineLayout, y int) {
	dy := y - ml.Bounds.Y
	mv := func(rs []Rect) {
		for i := range rs {
			rs[i].Y += dy
		}
	}
	ml.Bounds.Y += dy
	mv(ml.Sockets)
	mv(ml.LLCs)
	mv(ml.Hints)
	mv(ml.Cores)
	mv(ml.CPUs)
	for i := range ml.Labels {
		ml.Labels[i].R.Y += dy
	}
}

// Chart geometry (pixels).
const (
	lineH  = GlyphH + 1 // a text line of a chart
	axisH  = GlyphH + 3 // the x-axis labels under a plot
	yAxisW = 5*GlyphAdvance + 6
)

// ChartGeom is the inside of one chart: its text lines, the plot, the
// y-axis label strip left of the plot and the x-axis strip under it.
type ChartGeom struct {
	Lines []Rect
	Plot  Rect
	YAxis Rect
	XAxis Rect
}

// LayoutChart places n text lines at the top of chart r, then the plot
// with room for y-axis labels on its left and x-axis labels below.
// right is room to keep free right of the plot (a gauge).
func LayoutChart(r Rect, n, right int) ChartGeom {
	var g ChartGeom
	y := r.Y + 3
	for i := 0; i < n; i++ {
		g.Lines = append(g.Lines, Rect{r.X + 4, y, max(r.W-8, 0), GlyphH})
		y += lineH
	}
	y += GlyphH/2 + 2 // the top y-axis label is centred on the plot's top
	px := r.X + 4 + yAxisW
	g.Plot = Rect{px, y, max(r.Right()-4-right-px, 0), max(r.Bottom()-axisH-y, 0)}
	g.YAxis = Rect{r.X + 2, y - GlyphH/2, yAxisW - 4, g.Plot.H + GlyphH}
	g.XAxis = Rect{px, g.Plot.Bottom() + 2, g.Plot.W, GlyphH}
	return g
}
