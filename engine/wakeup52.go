package engine

import (
	"math"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The v5.2 wakeup path's own steps (kernel/sched/fair.c at v5.2.1): wake_affine
// with its idle and weight tests, select_idle_sibling, select_idle_core,
// select_idle_cpu under SIS_PROP with the 2019 patches' knobs, and
// select_idle_smt. cfs.selectTaskRq (class_cfs.go) runs them in era 5.2; 6.6's
// versions are in wakeup66.go. The steps both share (wake_wide,
// record_wakee, the probes' costs) are in wakeup.go.

// selectIdleSibling is the v5.2 select_idle_sibling.
func (s *Sim) selectIdleSibling(p *Task, prev, target int, cur *Task, d *Decision) (int, Stage) {
	if s.probe(target) {
		return target, StageTarget
	}
	if prev != target && s.topo.ShareCache(prev, target) && s.probe(prev) {
		return prev, StagePrev
	}
	r := p.recentUsedCPU
	if r >= 0 && r != prev && r != target && s.topo.ShareCache(r, target) && s.probe(r) && p.allowed.Test(r) {
		// Swap: prev becomes the next candidate.
		p.recentUsedCPU = prev
		return r, StageRecent
	}
	li := s.topo.LLCDomainIdx[target]
	if li < 0 {
		return target, StageNoLLC
	}
	llc := s.topo.Domains[target][li]
	if s.k.On(knob.SIS_CORE) && !(s.k.On(knob.LN_SKIP_CORE) && p.LatencyNice > 0) {
		if c := s.sisIdleCore(p, llc, prev, target, cur, d); c >= 0 {
			return c, StageIdleCore
		}
	}
	if c := s.sisIdleCPU(p, llc, prev, target, cur, d); c >= 0 {
		return c, StageIdleCPU
	}
	if c := s.selectIdleSMT(p, target); c >= 0 {
		return c, StageIdleSMT
	}
	return target, StageBusyTarget
}

// selectIdleCore scans the LLC core by core, from target, for a core whose
// threads are all idle. Only runs while the LLC's has_idle_cores hint is
// set; a scan that finds none clears it.
func (s *Sim) selectIdleCore(p *Task, llc *machine.Domain, target int) int {
	if !s.smtPresent {
		return -1
	}
	shared := &s.llcs[s.topo.LLC[target]]
	if !shared.hasIdleCores {
		return -1
	}
	cpus := s.scanMask
	cpus.And(llc.Span, p.allowed)
	it := cpus.IterWrap(target)
	for core, ok := it.Next(); ok; core, ok = it.Next() {
		idle := true
		for _, c := range s.topo.CoreCPUs[s.topo.Core[core]] {
			cpus.Clear(c)
			if !s.probe(c) {
				idle = false
			}
		}
		if idle {
			return core
		}
	}
	shared.hasIdleCores = false
	s.stats.idleCoreCleared++
	return -1
}

// selectIdleCPU scans the LLC for any idle CPU, at most nr CPUs. In v5.2
// nr comes from SIS_PROP (avg_idle and avg_scan_cost are the waker's CPU's);
// the 2019 patches clamp it (SIS_BOUND), rotate the start (SIS_ROTATE) and
// look at the target's core first (SIS_TARGET_CORE); latency-nice
// (LN_SEARCH) or LLC utilisation (SIS_UTIL) may set it instead.
func (s *Sim) selectIdleCPU(p *Task, llc *machine.Domain, target int, d *Decision) int {
	this := d.WakerCPU
	if s.topo.LLCDomainIdx[this] < 0 {
		return -1
	}
	wc := s.cpus[this]
	avgIdle := wc.avgIdle / 512 // "large fuzz factor"
	avgCost := wc.avgScanCost + 1
	if s.k.On(knob.SIS_AVG_CPU) && avgIdle < avgCost {
		return -1
	}
	nr := int64(math.MaxInt32)
	if s.k.On(knob.SIS_PROP) {
		spanAvg := int64(llc.Span.Weight()) * avgIdle
		if s.k.On(knob.SIS_BOUND) {
			// Patch 1/7: floor = one core (at least 2), limit = two cores.
			floor := int64(max(2, len(s.topo.CoreCPUs[s.topo.Core[target]])))
			limit := 2 * floor
			if spanAvg > floor*avgCost {
				nr = min(spanAvg/avgCost, limit)
			} else {
				nr = floor
			}
		} else if spanAvg > 4*avgCost {
			nr = spanAvg / avgCost
		} else {
			nr = 4
		}
	}
	// LN_SEARCH replaces the system-wide depth outright — SIS_PROP's,
	// SIS_BOUND's and SIS_UTIL's, including SIS_UTIL's "overloaded: no
	// scan" verdict — because the point of latency-nice is that a task can
	// ask for the whole LLC to be scanned however busy it looks (PeterZ,
	// RESEND thread: "some people _really_ want the whole L3 mask
	// scanned"). testdata/wakeup/sis_util_ln.txt shows both directions.
	switch {
	case s.k.On(knob.LN_SEARCH):
		nr = s.latencyNiceDepth(p, llc, target) + 1 // the loop pre-decrements
	case s.k.On(knob.SIS_UTIL):
		nr = s.llcs[s.topo.LLC[target]].nrIdleScan + 1
		if nr == 1 {
			d.SISLimit = 1
			return -1 // the LLC is judged overloaded: no scan at all
		}
	}
	d.SISCalled = true
	d.SISLimit = int(min(nr, math.MaxInt32))
	scanStart := s.scanCost // local_clock() at the start of the scan

	start := target
	if s.k.On(knob.SIS_ROTATE) && s.nextCPU[target] >= 0 {
		start = s.nextCPU[target]
	}
	probes := 0
	found := -1
	window := llc.Span
	if s.k.On(knob.SIS_TARGET_CORE) {
		// Parth Shah's diff: the target's own core first (these probes do
		// not consume nr), then the window over the rest of the LLC. The
		// diff probed siblings without an affinity test; we skip
		// disallowed ones so a pinned task is never placed outside its mask.
		window = s.scanMask
		window.And(llc.Span, p.allowed)
		sib := s.topo.SiblingsOf(target)
		it := sib.IterWrap(target)
		for c, ok := it.Next(); ok; c, ok = it.Next() {
			window.Clear(c)
			if !p.allowed.Test(c) {
				continue
			}
			probes++
			if s.probe(c) {
				found = c
				break
			}
		}
	}
	if found < 0 {
		var cut bool
		found, cut = s.scanWindow(p, window, start, target, &nr, &probes)
		if cut {
			// The budget ran out: return without updating avg_scan_cost.
			d.SISProbes, d.SISCutShort = probes, true
			return -1
		}
	}
	d.SISProbes = probes
	scanTime := s.scanCost - scanStart
	wc.avgScanCost += (scanTime - wc.avgScanCost) / 8
	return found
}

// scanWindow is select_idle_cpu's loop: visit window from start, wrapping,
// until an idle allowed CPU is found or nr runs out (pre-decremented, so
// nr probes at most nr-1 CPUs; a disallowed CPU consumes nr unprobed, as
// in v5.2). With SIS_ROTATE every CPU visited — idle or not, probed or not —
// is recorded in next_cpu[target] (Subhra's reply to Srikar Dronamraju).
func (s *Sim) scanWindow(p *Task, window cpumask.Mask, start, target int, nr *int64, probes *int) (found int, cutShort bool) {
	rotate := s.k.On(knob.SIS_ROTATE)
	it := window.IterWrap(start)
	for c, ok := it.Next(); ok; c, ok = it.Next() {
		if rotate {
			s.nextCPU[target] = c
		}
		*nr--
		if *nr == 0 {
			return -1, true
		}
		if !p.allowed.Test(c) {
			continue
		}
		*probes++
		if s.probe(c) {
			return c, false
		}
	}
	return -1, false
}

// latencyNiceDepth maps a task's latency-nice to the number of CPUs
// select_idle_cpu may examine with LN_SEARCH: linear from the whole LLC at
// -20 to one core (the SMT width, at least 1) at 19, so latency-nice 0
// scans about half the LLC. Linear because Subhra's RFC expressed the
// depth as a share of the LLC and PeterZ asked only that -nice scan more
// than +nice; the rotating window (if on) keeps spreading short scans.
func (s *Sim) latencyNiceDepth(p *Task, llc *machine.Domain, target int) int64 {
	l := int64(llc.Span.Weight())
	w := int64(len(s.topo.CoreCPUs[s.topo.Core[target]]))
	return w + (l-w)*int64(19-p.LatencyNice)/39
}

// selectIdleSMT returns the first idle allowed SMT sibling of target.
func (s *Sim) selectIdleSMT(p *Task, target int) int {
	if !s.smtPresent {
		return -1
	}
	for _, c := range s.topo.CoreCPUs[s.topo.Core[target]] {
		if !p.allowed.Test(c) {
			continue
		}
		if s.probe(c) {
			return c
		}
	}
	return -1
}
