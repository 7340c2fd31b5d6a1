package ui

import "schedplay/engine/machine"

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
// level, each box's inner padding and the header strip on top of sockets
// and LLCs (labels, and the LLC's has_idle_cores indicator).
type spacing struct {
	sockGap, sockPad, sockHead int
	llcGap, llcPad, llcHead    int
	coreGap, corePad           int
	thrGap                     int
	// minCell is the smallest CPU cell this density is used for: below it
	// the next, denser one is tried.
	minCell int
}

// Densities from roomy (labels on sockets and LLCs, visible core boxes)
// to dense (a few pixels per CPU, as for 512 CPUs in a small canvas).
var densities = [...]spacing{
	{sockGap: 8, sockPad: 3, sockHead: 15, llcGap: 5, llcPad: 2, llcHead: 15, coreGap: 3, corePad: 1, thrGap: 1, minCell: 14},
	{sockGap: 5, sockPad: 2, sockHead: 0, llcGap: 3, llcPad: 1, llcHead: 4, coreGap: 2, corePad: 1, thrGap: 1, minCell: 5},
	{sockGap: 3, sockPad: 1, sockHead: 0, llcGap: 2, llcPad: 1, llcHead: 2, coreGap: 1, corePad: 0, thrGap: 0, minCell: 0},
}

// Largest CPU cell: a P4 does not need a cell the size of the canvas.
const (
	maxCellW = 120
	maxCellH = 72
)

// MachineLayout is the geometry of one machine map. Slices are indexed by
// the topology's global socket, LLC, core and CPU numbers.
type MachineLayout struct {
	Bounds  Rect // the map as drawn (inside the area it was given)
	Sockets []Rect
	LLCs    []Rect
	Hints   []Rect // per LLC: the has_idle_cores indicator
	Cores   []Rect
	CPUs    []Rect
	// Cell is the smaller side of a CPU cell.
	Cell int
	// Density indexes densities (0 = roomy with labels).
	Density int
	// SocketLabels and LLCLabels say whether the header strips have room
	// for "socket 0" and "LLC 3" labels.
	SocketLabels, LLCLabels bool
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
	sockHead, llcHead := sp.sockHead, sp.llcHead
	if horizontal {
		sockHead, llcHead = 0, 0
	}
	core := 2*sp.corePad + nt*x + (nt-1)*sp.thrGap
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

// bestFit searches every arrangement of every level for the largest cell
// that fits w × h with spacing sp. The number of candidates is at most
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
		if min(f.cw, f.ch) >= densities[i].minCell {
			break
		}
	}
	sp := &densities[di]
	cw, ch := max(f.cw, 1), max(f.ch, 1)

	coreW := 2*sp.corePad + f.t.cols*cw + (f.t.cols-1)*sp.thrGap
	coreH := 2*sp.corePad + f.t.rows*ch + (f.t.rows-1)*sp.thrGap
	llcW := 2*sp.llcPad + f.c.cols*coreW + (f.c.cols-1)*sp.coreGap
	llcH := sp.llcHead + 2*sp.llcPad + f.c.rows*coreH + (f.c.rows-1)*sp.coreGap
	sockW := 2*sp.sockPad + f.l.cols*llcW + (f.l.cols-1)*sp.llcGap
	sockH := sp.sockHead + 2*sp.sockPad + f.l.rows*llcH + (f.l.rows-1)*sp.llcGap
	totW := f.s.cols*sockW + (f.s.cols-1)*sp.sockGap
	totH := f.s.rows*sockH + (f.s.rows-1)*sp.sockGap

	x0 := area.X + max((area.W-totW)/2, 0)
	y0 := area.Y
	ml := &MachineLayout{
		Bounds:  Rect{x0, y0, totW, totH},
		Sockets: make([]Rect, sh.sockets),
		LLCs:    make([]Rect, sh.sockets*sh.llcs),
		Hints:   make([]Rect, sh.sockets*sh.llcs),
		Cores:   make([]Rect, tp.NCores),
		CPUs:    make([]Rect, tp.NCPU),
		Cell:    min(cw, ch),
		Density: di,
	}
	ml.SocketLabels = sp.sockHead >= GlyphH && sockW >= TextWidth(9)
	ml.LLCLabels = sp.llcHead >= GlyphH && llcW >= TextWidth(6)+14

	place := func(g grid, i, x, y, w, h, gap int) (int, int) {
		return x + (i%g.cols)*(w+gap), y + (i/g.cols)*(h+gap)
	}
	for s := 0; s < sh.sockets; s++ {
		sx, sy := place(f.s, s, x0, y0, sockW, sockH, sp.sockGap)
		ml.Sockets[s] = Rect{sx, sy, sockW, sockH}
		for l := 0; l < sh.llcs; l++ {
			gl := s*sh.llcs + l
			lx, ly := place(f.l, l, sx+sp.sockPad, sy+sp.sockHead+sp.sockPad, llcW, llcH, sp.llcGap)
			ml.LLCs[gl] = Rect{lx, ly, llcW, llcH}
			if sp.llcHead >= GlyphH {
				// A square beside the label.
				ml.Hints[gl] = Rect{lx + sp.llcPad + 1, ly + 3, 9, 9}
			} else {
				// A strip across the top of the LLC.
				ml.Hints[gl] = Rect{lx + sp.llcPad, ly + sp.llcPad, llcW - 2*sp.llcPad, max(sp.llcHead-1, 1)}
			}
			for c := 0; c < sh.cores; c++ {
				core := gl*sh.cores + c
				cx, cy := place(f.c, c, lx+sp.llcPad, ly+sp.llcHead+sp.llcPad, coreW, coreH, sp.coreGap)
				ml.Cores[core] = Rect{cx, cy, coreW, coreH}
				for t, cpu := range tp.CoreCPUs[core] {
					tx, ty := place(f.t, t, cx+sp.corePad, cy+sp.corePad, cw, ch, sp.thrGap)
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
	HeaderH   = 34 // two text lines: status, legend
	armLabelH = 16 // "A" / "B: knobs" above each map in the split view
	pageGap   = 8
	// MaxHistPanels is how many workloads get a latency histogram.
	MaxHistPanels = 4
)

// PageLayout is the canvas arrangement: header, one or two machine maps,
// a row of latency histograms and a row of time-series charts.
type PageLayout struct {
	W, H      int
	Header    Rect
	ArmLabels []Rect // per arm (empty size with one arm)
	Maps      []*MachineLayout
	Hists     []Rect
	Series    [3]Rect // probes per select_idle_cpu call, throughput, work conservation
}

// LayoutPage arranges a w × h canvas for arms maps of tp (1, or 2 for the
// split view) and nhist latency histograms. In the split view the maps go
// side by side or stacked, whichever gives larger CPU cells.
func LayoutPage(tp *machine.Topology, w, h, arms, nhist int) *PageLayout {
	pl := &PageLayout{W: w, H: h, Header: Rect{0, 0, w, HeaderH}}
	nhist = max(min(nhist, MaxHistPanels), 1)
	top := HeaderH
	avail := max(h-top-pageGap, 0)
	mapH := avail * 52 / 100
	inner := Rect{pageGap, top, max(w-2*pageGap, 0), mapH}

	if arms <= 1 {
		pl.ArmLabels = []Rect{{inner.X, inner.Y, 0, 0}}
		pl.Maps = []*MachineLayout{LayoutMachine(tp, inner)}
	} else {
		// Side by side.
		half := (inner.W - pageGap) / 2
		sa := Rect{inner.X, inner.Y + armLabelH, half, max(inner.H-armLabelH, 0)}
		sb := Rect{inner.X + half + pageGap, sa.Y, half, sa.H}
		ma, mb := LayoutMachine(tp, sa), LayoutMachine(tp, sb)
		// Stacked.
		hh := (inner.H - pageGap) / 2
		ta := Rect{inner.X, inner.Y + armLabelH, inner.W, max(hh-armLabelH, 0)}
		tb := Rect{inner.X, inner.Y + hh + pageGap + armLabelH, inner.W, ta.H}
		na, nb := LayoutMachine(tp, ta), LayoutMachine(tp, tb)
		if na.Cell > ma.Cell {
			// Stacked maps: put B right under A's actual bottom.
			tb.Y = na.Bounds.Bottom() + pageGap + armLabelH
			nb = LayoutMachine(tp, tb)
			pl.Maps = []*MachineLayout{na, nb}
		} else {
			pl.Maps = []*MachineLayout{ma, mb}
		}
		for _, m := range pl.Maps {
			pl.ArmLabels = append(pl.ArmLabels, Rect{m.Bounds.X, m.Bounds.Y - armLabelH, max(m.Bounds.W, TextWidth(24)), armLabelH})
		}
	}

	bottom := top
	for _, m := range pl.Maps {
		bottom = max(bottom, m.Bounds.Bottom())
	}
	cy := bottom + pageGap
	ch := max(h-cy-pageGap/2, 0)
	histH := ch * 55 / 100
	serH := max(ch-histH-pageGap, 0)
	cw := max(w-2*pageGap, 0)

	hw := (cw - (nhist-1)*pageGap) / nhist
	for i := 0; i < nhist; i++ {
		pl.Hists = append(pl.Hists, Rect{pageGap + i*(hw+pageGap), cy, hw, histH})
	}
	sw := (cw - 2*pageGap) / 3
	for i := range pl.Series {
		pl.Series[i] = Rect{pageGap + i*(sw+pageGap), cy + histH + pageGap, sw, serH}
	}
	return pl
}
