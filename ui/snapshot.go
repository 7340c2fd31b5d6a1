//go:build js && wasm

package ui

import (
	"schedplay/engine/histo"
	"strings"

	"schedplay/engine"
	"schedplay/playground"
)

// armState is what the canvas remembers about one simulation: the
// snapshot of the current frame and the history behind the charts.
type armState struct {
	label   []byte // "A", "B: SIS_CORE=0"
	views   []engine.CPUView
	hasIdle []bool // per LLC: has_idle_cores
	tot     engine.Totals
	// decCount is the DecisionsSince position already flashed.
	decCount int64
	flashes  FlashRing
	staging  Staging
	addDec   func(*engine.Decision) // staging.Add, bound once (a method value allocates)
	series   *ArmSeries
	ops      [MaxHistPanels]int64
	nw       int      // workloads
	names    []string // workload names
	hist     [MaxHistPanels]histData
}

// histData is one workload's latency histogram as last refreshed.
type histData struct {
	bins  LogBins
	bars  []histo.Bar // reused by AppendBars
	pct   [3]int64    // p50, p99, p99.9 (µs)
	count int64
}

// Percentiles marked on the histograms.
var (
	pctValues = [3]float64{50, 99, 99.9}
	pctNames  = [3]string{"p50", "p99", "p99.9"}
)

func newArmState() *armState {
	a := &armState{
		label:   make([]byte, 0, 128),
		views:   make([]engine.CPUView, 0, 64),
		hasIdle: make([]bool, 0, 64),
		series:  NewArmSeries(),
	}
	a.addDec = a.staging.Add
	return a
}

// rebuild forgets everything about the previous simulations (the App
// rebuilt them) and sizes the buffers for the new ones. Allocation is
// fine here: it happens once per Apply.
func (g *Game) rebuild(arms []*playground.Arm) {
	g.gen, g.haveGen = g.app.Generation(), true
	g.narms = min(len(arms), len(g.arms))
	g.topo = arms[0].Sim.Topology()
	g.nhist = max(min(arms[0].Sim.NumWorkloads(), MaxHistPanels), 1)
	g.hover, g.pin = target{-1, -1}, target{-1, -1}
	g.sampled = false
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], arms[i].Sim
		a.label = append(a.label[:0], arms[i].Label...)
		if g.narms > 1 {
			a.label = append(a.label, ": "...)
			if len(arms[i].Config.Knobs) == 0 {
				a.label = append(a.label, "defaults"...)
			} else {
				a.label = append(a.label, strings.Join(arms[i].Config.Knobs, " ")...)
			}
		}
		a.views = s.CPUViews(a.views)
		if cap(a.hasIdle) < g.topo.NLLC {
			a.hasIdle = make([]bool, g.topo.NLLC)
		}
		a.hasIdle = a.hasIdle[:g.topo.NLLC]
		a.decCount = 0
		a.flashes.Reset()
		a.series.Reset()
		a.nw = s.NumWorkloads()
		a.names = a.names[:0]
		for w := 0; w < a.nw; w++ {
			a.names = append(a.names, s.WorkloadName(w))
		}
		a.hist = [MaxHistPanels]histData{}
	}
	g.page = nil // relayout for the new machine
}

// relayout recomputes the geometry for the canvas size and machine.
func (g *Game) relayout() {
	if g.topo == nil || g.w <= 0 || g.h <= 0 {
		return
	}
	g.page = LayoutPage(g.topo, g.w, g.h, g.narms, g.nhist)
	g.pageW, g.pageH = g.w, g.h
}

// snapshot copies every CPU's state, the LLC hints, the counters and the
// new wakeup decisions. With freeze (paused or stepping), new decisions
// replace the old flashes instead of joining them, so a step shows just
// its own decision.
func (g *Game) snapshot(arms []*playground.Arm, freeze bool) {
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], arms[i].Sim
		a.views = s.CPUViews(a.views)
		for l := range a.hasIdle {
			a.hasIdle[l] = s.HasIdleCores(l)
		}
		a.tot = s.Totals()
		a.decCount = s.DecisionsSince(a.decCount, a.addDec)
		if a.staging.n > 0 && freeze {
			a.flashes.Reset()
		}
		a.staging.Flush(&a.flashes)
	}
	g.now = g.arms[0].tot.Now
}

// sample adds a chart sample when the simulated clock has passed the
// next sampling time. The interval follows the speed actually reached
// (the set speed, unless the simulation cannot keep up or runs at max),
// so the charts span a similar wall time however heavy the machine.
func (g *Game) sample(arms []*playground.Arm) {
	sp := g.speed
	if g.achieved > 0 && (sp == 0 || g.achieved < sp) {
		sp = g.achieved
	}
	g.sampleNS = SampleInterval(sp)
	if g.sampled && g.now < g.lastSample+g.sampleNS {
		return
	}
	g.lastSample, g.sampled = g.now, true
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], arms[i].Sim
		n := min(a.nw, MaxHistPanels)
		for w := 0; w < n; w++ {
			a.ops[w] = s.WorkloadOps(w)
		}
		a.series.Sample(a.tot, a.ops[:n])
	}
}

// refreshHistograms regroups the latency histograms (Bars allocates, so
// this runs a few times a second).
func (g *Game) refreshHistograms(arms []*playground.Arm) {
	for w := 0; w < g.nhist; w++ {
		maxUS := int64(0)
		for i := 0; i < g.narms; i++ {
			if w < g.arms[i].nw {
				maxUS = max(maxUS, arms[i].Sim.WakeupHistogram(w).Percentile(100))
			}
		}
		axis := DecadeCeil(maxUS)
		for i := 0; i < g.narms; i++ {
			a := g.arms[i]
			if w >= a.nw {
				continue
			}
			h := arms[i].Sim.WakeupHistogram(w)
			hd := &a.hist[w]
			hd.count = h.Count()
			for k, p := range pctValues {
				hd.pct[k] = h.Percentile(p)
			}
			hd.bars = h.AppendBars(hd.bars)
			hd.bins.Fill(hd.bars, axis)
		}
	}
}
