package engine

// Read-only views of the simulation for a live display. They fill caller
// storage and allocate nothing, so a UI can call them every frame (wasm
// memory never shrinks).

// CPUView is what a CPU is doing right now.
type CPUView struct {
	ID, Core, Thread, LLC, Socket int
	// Curr is the running task, -1 when idle.
	Curr TaskID
	// Workload is the running task's workload index, -1 when idle.
	Workload    int
	Nice        int
	LatencyNice int
	// Queued is how many runnable tasks wait on this CPU's runqueue.
	Queued int
	// Idle is available_idle_cpu: nothing running and nothing queued.
	Idle bool
	// CState is the idle state index the CPU is in (meaningful when idle).
	CState int
	// SMTHeld: idle with work queued because SMT_NICE holds it back.
	SMTHeld bool
	// Busy is the fraction of elapsed time the CPU ran tasks (0..1).
	Busy float64
}

// CPUViews fills dst (grown if needed) with every CPU's view.
func (s *Sim) CPUViews(dst []CPUView) []CPUView {
	if cap(dst) < len(s.cpus) {
		dst = make([]CPUView, len(s.cpus))
	}
	dst = dst[:len(s.cpus)]
	tp := s.topo
	for i, c := range s.cpus {
		v := CPUView{ID: i, Core: tp.Core[i], Thread: tp.Thread[i], LLC: tp.LLC[i], Socket: tp.Socket[i],
			Curr: -1, Workload: -1, Queued: len(c.tree), Idle: c.idle(), CState: c.cstate, SMTHeld: c.smtHeld}
		if t := c.curr; t != nil {
			v.Curr, v.Workload, v.Nice, v.LatencyNice = t.ID, t.workload, t.Nice, t.LatencyNice
		}
		c.account(s.now)
		if s.now > 0 {
			v.Busy = float64(c.busyNS) / float64(s.now)
		}
		dst[i] = v
	}
	return dst
}

// HasIdleCores returns LLC llc's has_idle_cores hint.
func (s *Sim) HasIdleCores(llc int) bool { return s.llcs[llc].hasIdleCores }

// NumWorkloads is the number of workloads.
func (s *Sim) NumWorkloads() int { return len(s.workloads) }

// WorkloadName returns workload i's name.
func (s *Sim) WorkloadName(i int) string { return s.workloads[i].name }

// WorkloadOps returns workload i's completed operations so far.
func (s *Sim) WorkloadOps(i int) int64 { return s.workloads[i].ops }

// Totals are the engine's cumulative counters, returned by value without
// allocating: a display samples them every frame and differentiates.
type Totals struct {
	Now         int64
	Events      int64
	Ticks       int64 // of Events: scheduler ticks (scheduler_tick on a CPU whose tick runs)
	Wakeups     int64
	SISCalls    int64 // select_idle_cpu calls
	SISProbes   int64 // CPUs probed by them
	SISFound    int64 // placements made by select_idle_cpu
	PlacedBusy  int64 // wakeups placed on a non-idle CPU
	SearchNS    int64 // CPU time spent searching
	CtxSwitches int64
	Migrations  int64
	// ConservationNS is the time during which some CPU was idle while a
	// runnable task waited on another CPU's runqueue (work not conserved);
	// LLCConservationNS counts only moments where the idle CPU and the
	// waiting task share an LLC.
	ConservationNS    int64
	LLCConservationNS int64
}

// Totals returns the cumulative counters.
func (s *Sim) Totals() Totals {
	st := &s.stats
	s.conservation.advance(s.now)
	m := int64(0)
	for _, n := range st.migrations {
		m += n
	}
	return Totals{
		Now: s.now, Events: s.events, Ticks: st.ticks, Wakeups: st.wakeups, SISCalls: st.sisCalls, SISProbes: st.sisProbes,
		SISFound: st.sisFound, PlacedBusy: st.placedBusy, SearchNS: st.searchCostNS, CtxSwitches: st.ctxSwitches,
		Migrations: m, ConservationNS: s.conservation.globalNS, LLCConservationNS: s.conservation.llcNS,
	}
}

// LastDecisionOn returns the most recent wakeup decision that chose cpu,
// copying its probe list into probes (reused). ok is false when none is
// remembered.
func (s *Sim) LastDecisionOn(cpu int, probes []int) (Decision, []int, bool) {
	ld := &s.lastOn[cpu]
	if !ld.valid {
		return Decision{}, probes, false
	}
	probes = append(probes[:0], ld.probes...)
	d := ld.d
	d.Probes = probes
	return d, probes, true
}

// DecisionsSince calls f for every decision recorded after the count-th
// (oldest first, at most the ring's capacity) and returns the new count.
// A display keeps the count between frames to flash new wakeups. d.Probes
// is valid only during f.
func (s *Sim) DecisionsSince(count int64, f func(d *Decision)) int64 {
	r := &s.trace
	if count < r.count-int64(len(r.decs)) {
		count = r.count - int64(len(r.decs))
	}
	for k := count; k < r.count; k++ {
		i := int(k % int64(len(r.decs)))
		f(&r.decs[i])
	}
	return r.count
}

// lastDecision keeps, per chosen CPU, a copy of the last decision.
type lastDecision struct {
	valid  bool
	d      Decision
	probes []int
}

func (s *Sim) rememberDecision(d *Decision) {
	ld := &s.lastOn[d.Chosen]
	ld.valid = true
	ld.d = *d
	n := min(len(d.Probes), maxTracedProbes)
	ld.probes = append(ld.probes[:0], d.Probes[:n]...)
	ld.d.Probes = nil
}

// conservation integrates the time during which work is not conserved:
// an idle CPU exists while a task waits on some runqueue. Counts are kept
// per LLC and updated when a CPU's idle/waiting status changes.
type conservation struct {
	idle, waiting       int   // CPUs idle, CPUs with waiting tasks
	llcIdle, llcWaiting []int // per LLC
	llcBoth             int   // LLCs with both an idle CPU and a waiting task
	last                int64
	globalNS, llcNS     int64
	cpuIdle, cpuWait    []bool
}

func (cv *conservation) init(ncpu, nllc int) {
	cv.llcIdle = make([]int, nllc)
	cv.llcWaiting = make([]int, nllc)
	cv.cpuIdle = make([]bool, ncpu)
	cv.cpuWait = make([]bool, ncpu)
}

func (cv *conservation) advance(now int64) {
	d := now - cv.last
	if d <= 0 {
		return
	}
	if cv.idle > 0 && cv.waiting > 0 {
		cv.globalNS += d
	}
	if cv.llcBoth > 0 {
		cv.llcNS += d
	}
	cv.last = now
}

// update refreshes CPU c's status (call after anything that changes its
// current task or queue).
func (s *Sim) updateConservation(c *cpu) {
	cv := &s.conservation
	idle := c.empty()
	wait := c.waiting()
	if idle == cv.cpuIdle[c.id] && wait == cv.cpuWait[c.id] {
		return
	}
	cv.advance(s.now)
	llc := s.topo.LLC[c.id]
	before := cv.llcIdle[llc] > 0 && cv.llcWaiting[llc] > 0
	setCounted(&cv.cpuIdle[c.id], idle, &cv.idle, &cv.llcIdle[llc])
	setCounted(&cv.cpuWait[c.id], wait, &cv.waiting, &cv.llcWaiting[llc])
	after := cv.llcIdle[llc] > 0 && cv.llcWaiting[llc] > 0
	switch {
	case after && !before:
		cv.llcBoth++
	case before && !after:
		cv.llcBoth--
	}
}

// setCounted sets *flag to v, keeping the machine-wide and per-LLC counts
// of set flags in step.
func setCounted(flag *bool, v bool, total, perLLC *int) {
	if *flag == v {
		return
	}
	d := 1
	if !v {
		d = -1
	}
	*total += d
	*perLLC += d
	*flag = v
}
