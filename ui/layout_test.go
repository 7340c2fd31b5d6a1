package ui

import (
	"fmt"
	"testing"

	"schedplay/engine/machine"
	"schedplay/presets"
)

func allTopologies(t *testing.T) []*machine.Topology {
	t.Helper()
	var out []*machine.Topology
	for _, spec := range presets.Machines() {
		tp, err := machine.Build(spec)
		if err != nil {
			t.Fatalf("preset %s: %v", spec.Name, err)
		}
		out = append(out, tp)
	}
	if len(out) == 0 {
		t.Fatal("no machine presets")
	}
	return out
}

var canvasSizes = [][2]int{{800, 500}, {1400, 900}, {1080, 700}, {640, 480}}

// checkMap verifies the nesting and non-overlap of one map.
func checkMap(t *testing.T, name string, tp *machine.Topology, ml *MachineLayout, area Rect) {
	t.Helper()
	if len(ml.CPUs) != tp.NCPU || len(ml.Cores) != tp.NCores || len(ml.LLCs) != tp.NLLC || len(ml.Sockets) != tp.Spec.Topology.Sockets {
		t.Fatalf("%s: layout has %d CPUs, %d cores, %d LLCs, %d sockets; topology %d, %d, %d, %d", name,
			len(ml.CPUs), len(ml.Cores), len(ml.LLCs), len(ml.Sockets), tp.NCPU, tp.NCores, tp.NLLC, tp.Spec.Topology.Sockets)
	}
	if !area.Contains(ml.Bounds) {
		t.Errorf("%s: map %+v outside its area %+v", name, ml.Bounds, area)
	}
	for cpu := 0; cpu < tp.NCPU; cpu++ {
		c := ml.CPUs[cpu]
		if c.W < 1 || c.H < 1 {
			t.Fatalf("%s: CPU %d has an empty cell %+v", name, cpu, c)
		}
		if core := ml.Cores[tp.Core[cpu]]; !core.Contains(c) {
			t.Errorf("%s: CPU %d cell %+v outside its core %d %+v", name, cpu, c, tp.Core[cpu], core)
		}
		if llc := ml.LLCs[tp.LLC[cpu]]; !llc.Contains(c) {
			t.Errorf("%s: CPU %d cell %+v outside its LLC %d %+v", name, cpu, c, tp.LLC[cpu], llc)
		}
		if s := ml.Sockets[tp.Socket[cpu]]; !s.Contains(c) {
			t.Errorf("%s: CPU %d cell %+v outside its socket %d %+v", name, cpu, c, tp.Socket[cpu], s)
		}
		if !ml.Bounds.Contains(c) {
			t.Errorf("%s: CPU %d cell %+v outside the map %+v", name, cpu, c, ml.Bounds)
		}
		for o := cpu + 1; o < tp.NCPU; o++ {
			if c.Overlaps(ml.CPUs[o]) {
				t.Errorf("%s: CPU cells %d %+v and %d %+v overlap", name, cpu, c, o, ml.CPUs[o])
			}
		}
		if got := ml.CPUAt(c.X+c.W/2, c.Y+c.H/2); got != cpu {
			t.Errorf("%s: CPUAt(centre of CPU %d) = %d", name, cpu, got)
		}
	}
	// Boxes of one level do not overlap each other; LLC hints sit in their LLC.
	for i := range ml.Sockets {
		for j := i + 1; j < len(ml.Sockets); j++ {
			if ml.Sockets[i].Overlaps(ml.Sockets[j]) {
				t.Errorf("%s: sockets %d and %d overlap", name, i, j)
			}
		}
	}
	for i := range ml.LLCs {
		if !ml.LLCs[i].Contains(ml.Hints[i]) || ml.Hints[i].W < 1 || ml.Hints[i].H < 1 {
			t.Errorf("%s: LLC %d hint %+v not inside %+v", name, i, ml.Hints[i], ml.LLCs[i])
		}
		for j := i + 1; j < len(ml.LLCs); j++ {
			if ml.LLCs[i].Overlaps(ml.LLCs[j]) {
				t.Errorf("%s: LLCs %d and %d overlap", name, i, j)
			}
		}
		for core := range ml.Cores {
			if ml.Hints[i].Overlaps(ml.Cores[core]) {
				t.Errorf("%s: LLC %d hint overlaps core %d", name, i, core)
			}
		}
	}
	for i := range ml.Cores {
		for j := i + 1; j < len(ml.Cores); j++ {
			if ml.Cores[i].Overlaps(ml.Cores[j]) {
				t.Errorf("%s: cores %d and %d overlap", name, i, j)
			}
		}
	}
}

func TestLayoutEveryPresetNestsAndDoesNotOverlap(t *testing.T) {
	for _, tp := range allTopologies(t) {
		for _, sz := range canvasSizes {
			for arms := 1; arms <= 2; arms++ {
				name := fmt.Sprintf("%s %dx%d arms=%d", tp.Spec.Name, sz[0], sz[1], arms)
				pl := LayoutPage(tp, sz[0], sz[1], arms, 2, nil)
				if len(pl.Maps) != arms {
					t.Fatalf("%s: %d maps", name, len(pl.Maps))
				}
				page := Rect{0, 0, sz[0], sz[1]}
				for i, ml := range pl.Maps {
					checkMap(t, fmt.Sprintf("%s map %d", name, i), tp, ml, page)
					if ml.Bounds.Y < pl.Header.Bottom() {
						t.Errorf("%s: map %d overlaps the header", name, i)
					}
				}
				if arms == 2 && pl.Maps[0].Bounds.Overlaps(pl.Maps[1].Bounds) {
					t.Errorf("%s: maps A %+v and B %+v overlap", name, pl.Maps[0].Bounds, pl.Maps[1].Bounds)
				}
				var charts []Rect
				charts = append(charts, pl.Hists...)
				charts = append(charts, pl.Series[:]...)
				for _, c := range charts {
					if !page.Contains(c) || c.H < 40 {
						t.Errorf("%s: chart %+v outside the page or too small", name, c)
					}
					for _, ml := range pl.Maps {
						if c.Overlaps(ml.Bounds) {
							t.Errorf("%s: chart %+v overlaps map %+v", name, c, ml.Bounds)
						}
					}
				}
			}
		}
	}
}

func TestLayoutZen4CellsLegible(t *testing.T) {
	spec, err := presets.Machine("amd-zen4-2s-256c-512t")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range canvasSizes {
		for arms := 1; arms <= 2; arms++ {
			pl := LayoutPage(tp, sz[0], sz[1], arms, 1, nil)
			for i, ml := range pl.Maps {
				for cpu, c := range ml.CPUs {
					if c.W < 2 || c.H < 2 {
						t.Fatalf("zen4 %dx%d arms=%d map %d: CPU %d cell %dx%d, want at least 2x2", sz[0], sz[1], arms, i, cpu, c.W, c.H)
					}
				}
				t.Logf("zen4 %dx%d arms=%d: cell %d px, density %d, map %+v", sz[0], sz[1], arms, ml.Cell, ml.Density, ml.Bounds)
			}
		}
	}
}

func TestLayoutSmallMachinesGetLabelsAndBoundedCells(t *testing.T) {
	for _, name := range []string{"p4-up-1c-1t", "p4-ht-1c-2t"} {
		spec, err := presets.Machine(name)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := machine.Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		pl := LayoutPage(tp, 1400, 900, 1, 1, nil)
		ml := pl.Maps[0]
		if ml.Density != 0 || !ml.SocketLabels || !ml.LLCLabels {
			t.Errorf("%s: density %d, labels %v/%v; want the roomy layout with labels", name, ml.Density, ml.SocketLabels, ml.LLCLabels)
		}
		for cpu, c := range ml.CPUs {
			if c.W > maxCellW || c.H > maxCellH || c.W < 20 {
				t.Errorf("%s: CPU %d cell %+v, want %d..%d wide and at most %d high", name, cpu, c, 20, maxCellW, maxCellH)
			}
		}
	}
}

func TestGridsCoverEveryCount(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for _, g := range grids(n) {
			if g.cols*g.rows < n || (g.rows-1)*g.cols >= n {
				t.Errorf("grids(%d) has %+v", n, g)
			}
		}
	}
}

func TestRect(t *testing.T) {
	a := Rect{0, 0, 10, 10}
	if !a.Contains(Rect{0, 0, 10, 10}) || a.Contains(Rect{1, 1, 10, 10}) {
		t.Error("Contains")
	}
	if a.Overlaps(Rect{10, 0, 5, 5}) || !a.Overlaps(Rect{9, 9, 5, 5}) {
		t.Error("Overlaps: touching rectangles do not overlap, intersecting ones do")
	}
	if !a.Has(9, 9) || a.Has(10, 0) {
		t.Error("Has")
	}
}

// machineWith builds a topology of the given shape from the P4 preset's
// costs (for CPU counts no preset has).
func machineWith(t testing.TB, sockets, cores, threads, coresPerLLC int) *machine.Topology {
	t.Helper()
	spec, err := presets.Machine("intel-2s-44c-88t")
	if err != nil {
		t.Fatal(err)
	}
	s := *spec
	s.Name = fmt.Sprintf("test-%ds-%dc-%dt", sockets, cores, threads)
	s.Topology.Sockets, s.Topology.CoresPerSocket, s.Topology.ThreadsPerCore, s.Topology.CoresPerLLC = sockets, cores, threads, coresPerLLC
	s.Topology.LLCsPerCCD = 0
	if sockets != spec.Topology.Sockets {
		// The preset's node-distance table is for its own sockets.
		s.NUMADistance, s.NUMADistanceNote = nil, ""
	}
	s.SMTThroughput = s.SMTThroughput[:min(len(s.SMTThroughput), threads)]
	for len(s.SMTThroughput) < threads {
		s.SMTThroughput = append(s.SMTThroughput, 1)
	}
	tp, err := machine.Build(&s)
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return tp
}

// pageTopologies are the machines the page must lay out: 1 CPU (the P4),
// 4 CPUs, 88 (the Intel two-socket) and 512 (Zen4).
func pageTopologies(t *testing.T) []*machine.Topology {
	var out []*machine.Topology
	for _, name := range []string{"p4-up-1c-1t", "intel-2s-44c-88t", "amd-zen4-2s-256c-512t"} {
		spec, err := presets.Machine(name)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := machine.Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tp)
	}
	out = append(out, machineWith(t, 1, 2, 2, 2))
	return out
}

// Canvas sizes from 1024×768 to 4K: the window, and the canvas the page
// leaves beside its 320 px control panel.
var pageSizes = [][2]int{{1024, 768}, {704, 768}, {1920, 1080}, {1600, 1080}, {3840, 2160}, {3520, 2160}}

var testLegend = []string{"schbench", "hog", "idle C1", "idle C1E", "idle C6", "polling", "waking", "runqueue depth", "SMT-held", "has_idle_cores", "wakeup: target>chosen, probed"}

// Every page lays out inside the canvas: header, maps, labels, charts and
// their axes, nothing overlapping.
func TestPageLayoutFitsEverySizeAndMachine(t *testing.T) {
	for _, tp := range pageTopologies(t) {
		for _, sz := range pageSizes {
			for _, arms := range []int{1, 2, 4} {
				name := fmt.Sprintf("%s (%d CPUs) %dx%d arms=%d", tp.Spec.Name, tp.NCPU, sz[0], sz[1], arms)
				pl := LayoutPage(tp, sz[0], sz[1], arms, 2, testLegend)
				page := Rect{0, 0, sz[0], sz[1]}
				if len(pl.Maps) != arms {
					t.Fatalf("%s: %d maps", name, len(pl.Maps))
				}
				// The legend: every item shown, inside the header, apart.
				for i, r := range pl.Legend {
					if r.W == 0 {
						t.Errorf("%s: legend item %q dropped", name, testLegend[i])
						continue
					}
					if !pl.Header.Contains(r) {
						t.Errorf("%s: legend item %q %+v outside the header %+v", name, testLegend[i], r, pl.Header)
					}
					for j := i + 1; j < len(pl.Legend); j++ {
						if r.Overlaps(pl.Legend[j]) {
							t.Errorf("%s: legend items %d and %d overlap", name, i, j)
						}
					}
				}
				var boxes []Rect
				for i, ml := range pl.Maps {
					mn := fmt.Sprintf("%s map %d", name, i)
					checkMap(t, mn, tp, ml, page)
					checkLabels(t, mn, tp, ml)
					if ml.Bounds.Y < pl.Header.Bottom() {
						t.Errorf("%s: overlaps the header", mn)
					}
					if arms > 1 {
						lr := pl.ArmLabels[i]
						if !page.Contains(lr) || lr.Overlaps(ml.Bounds) || lr.Y < pl.Header.Bottom() {
							t.Errorf("%s: arm label %+v", mn, lr)
						}
						boxes = append(boxes, lr)
					}
					boxes = append(boxes, ml.Bounds)
					if ml.Cell < 2 {
						t.Errorf("%s: cells of %d px", mn, ml.Cell)
					}
				}
				charts := append(append([]Rect(nil), pl.Hists...), pl.Series[:]...)
				for ci, c := range charts {
					if !page.Contains(c) {
						t.Errorf("%s: chart %d %+v outside the canvas", name, ci, c)
					}
					lines := histLines(arms)
					if ci >= len(pl.Hists) {
						lines = 1 + arms
					}
					cg := LayoutChart(c, lines, 12*arms+4)
					if cg.Plot.H < 20 || cg.Plot.W < 60 {
						t.Errorf("%s: chart %d %+v leaves a plot of %+v", name, ci, c, cg.Plot)
					}
					for _, r := range append([]Rect{cg.Plot, cg.YAxis, cg.XAxis}, cg.Lines...) {
						if !c.Contains(r) {
							t.Errorf("%s: chart %d part %+v outside it %+v", name, ci, r, c)
						}
					}
					if cg.YAxis.Overlaps(cg.Plot) || cg.XAxis.Overlaps(cg.Plot) || cg.XAxis.Overlaps(cg.YAxis) || cg.Lines[len(cg.Lines)-1].Overlaps(cg.YAxis) {
						t.Errorf("%s: chart %d axes overlap %+v", name, ci, cg)
					}
					boxes = append(boxes, c)
				}
				for i := range boxes {
					for j := i + 1; j < len(boxes); j++ {
						if boxes[i].Overlaps(boxes[j]) {
							t.Errorf("%s: %+v and %+v overlap", name, boxes[i], boxes[j])
						}
					}
				}
			}
		}
	}
}

// checkLabels: every label inside its box and the canvas, none
// overlapping another label, a CPU cell or a has_idle_cores square.
func checkLabels(t *testing.T, name string, tp *machine.Topology, ml *MachineLayout) {
	t.Helper()
	for i, l := range ml.Labels {
		if TextWidth(len(l.Text)) != l.R.W || l.R.H != GlyphH {
			t.Errorf("%s: label %q sized %+v", name, l.Text, l.R)
		}
		inside := false
		for _, rs := range [][]Rect{ml.Sockets, ml.LLCs, ml.Cores} {
			for _, r := range rs {
				if r.Contains(l.R) {
					inside = true
				}
			}
		}
		if !inside {
			t.Errorf("%s: label %q %+v in no box", name, l.Text, l.R)
		}
		for j := i + 1; j < len(ml.Labels); j++ {
			if l.R.Overlaps(ml.Labels[j].R) {
				t.Errorf("%s: labels %q and %q overlap", name, l.Text, ml.Labels[j].Text)
			}
		}
		for cpu, c := range ml.CPUs {
			if l.R.Overlaps(c) {
				t.Errorf("%s: label %q overlaps CPU %d", name, l.Text, cpu)
			}
		}
		for k, h := range ml.Hints {
			if l.R.Overlaps(h) {
				t.Errorf("%s: label %q overlaps LLC %d's square", name, l.Text, k)
			}
		}
	}
	if ml.LLCLabels {
		for l, k := range ml.LLCLabel {
			if k < 0 || !ml.LLCs[l].Contains(ml.Labels[k].R) {
				t.Errorf("%s: LLC %d without its label", name, l)
			}
		}
	}
}

// Zen4's 32 LLCs are labelled at every size from 1024×768 up, for one
// map and for an A/B pair.
func TestZen4LLCLabelsShow(t *testing.T) {
	spec, err := presets.Machine("amd-zen4-2s-256c-512t")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range pageSizes {
		for _, arms := range []int{1, 2} {
			pl := LayoutPage(tp, sz[0], sz[1], arms, 1, testLegend)
			for i, ml := range pl.Maps {
				if !ml.LLCLabels || !ml.SocketLabels {
					t.Errorf("zen4 %dx%d arms=%d map %d: LLC labels %v, socket labels %v (cell %d, density %d)", sz[0], sz[1], arms, i, ml.LLCLabels, ml.SocketLabels, ml.Cell, ml.Density)
				}
				t.Logf("zen4 %dx%d arms=%d: cell %d px, density %d, map %+v", sz[0], sz[1], arms, ml.Cell, ml.Density, ml.Bounds)
			}
		}
	}
}

// Small machines get the roomy layout: labelled core boxes and big cells;
// the one-CPU P4 is not a speck in the corner.
func TestSmallMachinesLabelledAndLarge(t *testing.T) {
	for _, tp := range pageTopologies(t) {
		if tp.NCPU > 4 {
			continue
		}
		for _, sz := range pageSizes {
			pl := LayoutPage(tp, sz[0], sz[1], 1, 1, testLegend)
			ml := pl.Maps[0]
			if !ml.CoreLabels || !ml.LLCLabels || !ml.SocketLabels {
				t.Errorf("%s %dx%d: labels socket %v LLC %v core %v", tp.Spec.Name, sz[0], sz[1], ml.SocketLabels, ml.LLCLabels, ml.CoreLabels)
			}
			if ml.Cell < 40 {
				t.Errorf("%s %dx%d: cells of %d px", tp.Spec.Name, sz[0], sz[1], ml.Cell)
			}
		}
	}
}
