//go:build js && wasm

package ui

import (
	"strings"

	"schedplay/engine"
	"schedplay/engine/histo"
	"schedplay/playground"
)

// armState is what the canvas remembers about one simulation: the
// snapshot of the current frame and the history behind the charts.
type armState struct {
	label   []byte // "A", "B: SIS_CORE=0"
	views   []engine.CPUView
	polling []bool       // per CPU: idle in a polling state
	rt      []bool       // per CPU: runs an RT task
	dl      []bool       // per CPU: runs a deadline task
	cons    Conservation // the machine's state in this snapshot
	hasIdle []bool       // per LLC: has_idle_cores
	tot     engine.Totals
	// decCount is the DecisionsSince position already flashed.
	decCount int64
	flashes  FlashRing
	staging  Staging
	addDec   func(*engine.Decision) // staging.Add, bound once (a method value allocates)
	series   *ArmSeries
	ops      [MaxHistPanels]int64
	nw       int      // workloads
	names    []string // workload names, tagged " [RT]", " [RT+fair]", " [DL]"…
	classes  []playground.WorkloadClass
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
		polling: make([]bool, 0, 64),
		hasIdle: make([]bool, 0, 64),
		series:  NewArmSeries(),
	}
	a.addDec = a.staging.Add
	return a
}

// rebuild forgets everything about the previous simulations (the App
// rebuilt them) and sizes the buffers for the new ones. Allocation is
// fine here: it happens once per Apply.
func (g *Game) rebuild(arms []*playground.ArmView) {
	g.gen, g.haveGen = g.app.Generation(), true
	g.narms = min(len(arms), len(g.arms))
	g.topo = arms[0].Topo
	g.firstPhys = 0
	for i, st := range g.topo.Spec.IdleStates {
		if !st.Polling {
			g.firstPhys = i
			break
		}
	}
	g.nhist = max(min(len(arms[0].Snap.Hists), MaxHistPanels), 1)
	g.hover, g.pin = target{-1, -1}, target{-1, -1}
	g.sampled = false
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], &arms[i].Snap
		a.label = append(a.label[:0], arms[i].Label...)
		if g.narms > 1 {
			a.label = append(a.label, ": "...)
			if len(arms[i].Knobs) == 0 {
				a.label = append(a.label, "defaults"...)
			} else {
				a.label = append(a.label, strings.Join(arms[i].Knobs, " ")...)
			}
		}
		a.views = append(a.views[:0], s.Views...)
		if cap(a.hasIdle) < g.topo.NLLC {
			a.hasIdle = make([]bool, g.topo.NLLC)
		}
		a.hasIdle = a.hasIdle[:g.topo.NLLC]
		a.decCount = 0
		a.flashes.Reset()
		a.series.Reset()
		a.nw = len(s.Hists)
		a.names, a.classes = a.names[:0], a.classes[:0]
		for w := 0; w < a.nw; w++ {
			h := &s.Hists[w]
			name := h.Name
			if tag := h.Class.Tag(); tag != "" {
				name += " [" + tag + "]"
			}
			a.names = append(a.names, name)
			a.classes = append(a.classes, h.Class)
		}
		a.hist = [MaxHistPanels]histData{}
	}
	g.legend = g.legendItems()
	labels := g.legendLabels()
	g.legendPub.Store(&labels)
	g.page = nil // relayout for the new machine
}

// relayout recomputes the geometry for the canvas size and machine.
func (g *Game) relayout() {
	if g.topo == nil || g.w <= 0 || g.h <= 0 {
		return
	}
	g.page = LayoutPage(g.topo, g.w, g.h, g.narms, g.nhist, g.legendLabels())
	g.pageW, g.pageH = g.w, g.h
}

// snapshot copies every CPU's state, the LLC hints, the counters and the
// new wakeup decisions. With freeze (paused or stepping), new decisions
// replace the old flashes instead of joining them, so a step shows just
// its own decision.
func (g *Game) snapshot(arms []*playground.ArmView, freeze bool) {
	for i := 0; i < g.narms; i++ {
		a, s := g.arms[i], &arms[i].Snap
		a.views = append(a.views[:0], s.Views...)
		a.polling = append(a.polling[:0], s.Polling...)
		for len(a.polling) < len(a.views) {
			a.polling = append(a.polling, false)
		}
		a.rt = append(a.rt[:0], s.RT...)
		a.dl = append(a.dl[:0], s.DL...)
		a.cons = CountConservation(a.views, s.Pinned)
		a.series.AddState(s.Totals.Now, a.cons)
		copy(a.hasIdle, s.HasIdle)
		a.tot = s.Totals
		for k := range arms[i].Decs {
			a.addDec(&arms[i].Decs[k])
		}
		arms[i].Decs = arms[i].Decs[:0]
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
func (g *Game) sample(arms []*playground.ArmView) {
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
		a, s := g.arms[i], &arms[i].Snap
		n := min(a.nw, MaxHistPanels, len(s.Ops))
		for w := 0; w < n; w++ {
			a.ops[w] = s.Ops[w]
		}
		a.series.Sample(a.tot, a.ops[:n])
	}
}

// refreshHistograms regroups the latency histograms (Bars allocates, so
// this runs a few times a second).
func (g *Game) refreshHistograms(arms []*playground.ArmView) {
	for w := 0; w < g.nhist; w++ {
		maxUS := int64(0)
		for i := 0; i < g.narms; i++ {
			if w < g.arms[i].nw && w < len(arms[i].Snap.Hists) {
				maxUS = max(maxUS, arms[i].Snap.Hists[w].Max)
			}
		}
		axis := DecadeCeil(maxUS)
		for i := 0; i < g.narms; i++ {
			a := g.arms[i]
			if w >= a.nw || w >= len(arms[i].Snap.Hists) {
				continue
			}
			h := &arms[i].Snap.Hists[w]
			hd := &a.hist[w]
			hd.count = h.Count
			hd.pct = h.Pct
			hd.bars = append(hd.bars[:0], h.Bars...)
			hd.bins.Fill(hd.bars, axis)
		}
	}
}
