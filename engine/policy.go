package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// A wakeup policy (issue 29) replaces a step of the fair classes' wakeup
// path with the caller's own code: today select_idle_sibling. The engine
// knows only this interface; the policy package binds it to Starlark.
//
// The policy sees the machine through a WakeView: the wakee and its waker
// (free to read, as select_idle_sibling reads its arguments), the
// topology (free: it is the sched_domain data every CPU has cached), and
// the CPUs' runtime state, which it may read only after probing the CPU
// in the same call (WakeView.Probe). A probe costs the waker exactly what
// the kernel's own probes cost (probe_ns plus fetching the CPU's runqueue
// line, line.go) and is listed in Decision.Probes, so a policy cannot
// look for free. The kernel's own stages are on the view too
// (KernelSelectIdleCore, ...), each charging as it does without a policy,
// so that a policy can change one step and keep the rest. The policy's
// own run time is not simulated time: only its probes and the built-in
// stages it calls cost the waker anything.
//
// A policy replaces select_idle_sibling by default. One that implements
// Hooked says which steps it replaces instead (a Hook set): each step but
// select_idle_sibling has its own optional interface (IdleCPUPolicy,
// NewidlePolicy, ...), which the policy must then implement;
// SetWakePolicy checks that once.

// WakePolicy replaces select_idle_sibling in the fair classes' wakeup
// path (select_task_rq_fair after wake_affine). It returns the CPU and
// the stage to report (StagePolicy when it has none of the kernel's).
// An error stops the run: Sim.Err returns it and the simulation runs no
// further event.
type WakePolicy interface {
	SelectIdleSibling(v *WakeView) (cpu int, stage Stage, err error)
}

// IdleCPUPolicy is a wake policy that replaces select_idle_cpu alone: a
// WakePolicy that implements it keeps the era's own select_idle_sibling
// (its SelectIdleSibling is not called) and SelectIdleCPU runs where that
// calls select_idle_cpu, with the era's has_idle_core (false in era 5.2,
// whose select_idle_core runs before). It returns the CPU found or -1,
// and the stage to report (era 5.2 reports select_idle_cpu whatever it
// says). The view's KernelSelectIdleCPU is still the kernel's own.
type IdleCPUPolicy interface {
	SelectIdleCPU(v *WakeView, target int, hasIdleCore bool) (cpu int, stage Stage, err error)
}

// Hook is a set of the steps a policy replaces.
type Hook uint8

const (
	// HookSelectIdleSibling: WakePolicy.SelectIdleSibling replaces the
	// era's select_idle_sibling (the kernel's stages run only when it
	// calls them).
	HookSelectIdleSibling Hook = 1 << iota
	// HookSelectIdleCPU: IdleCPUPolicy.SelectIdleCPU replaces the
	// select_idle_cpu that the era's own select_idle_sibling calls.
	HookSelectIdleCPU
	// HookSelectIdleCore: IdleCorePolicy.SelectIdleCore replaces the
	// era's select_idle_core (corehook.go).
	HookSelectIdleCore
	// HookNewidleBalance: NewidlePolicy.NewidleBalance replaces the
	// era's newly idle balance (idle_balance, newidle_balance).
	HookNewidleBalance
)

// hookNames are the steps' function names, in Hook bit order.
var hookNames = [...]string{"select_idle_sibling", "select_idle_cpu", "select_idle_core", "newidle_balance"}

// Names lists the steps of h by their kernel function names.
func (h Hook) Names() []string {
	var out []string
	for i, n := range hookNames {
		if h&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// PolicyHooks are the steps the installed policy replaces (0: none).
func (s *Sim) PolicyHooks() Hook { return s.phooks }

// Hooked is implemented by a policy that replaces steps other than
// select_idle_sibling (or more than it).
type Hooked interface {
	Hooks() Hook
}

// ErrNotProbed is wrapped by the errors of a WakeView read of a CPU's
// runtime state that the call did not probe first.
var ErrNotProbed = errors.New("probe it first")

// View is the part of a policy's view that every hook has: the
// topology, probes and the runtime reads of probed CPUs, knobs, this
// CPU's own runqueue, and the policy's persistent slots. A WakeView (a
// wakeup) and a BalanceView (a newly idle balance, policy_newidle.go)
// each embed one; only what a probe costs differs.
type View struct {
	s *Sim
	// this is the CPU the hook runs on: the waker's, or the CPU going
	// idle (this_rq()).
	this int
	// bal is the balance call's view when this is one (nil: a wakeup).
	bal *BalanceView
	// callFrom is len(s.probeBuf) when a wakeup call began: the probes
	// made since (by Probe or by a built-in stage) make a CPU readable.
	callFrom int
	gen      uint32
	probed   []uint32 // per CPU: gen of the call that last probed it via Probe

	// outer are the calls this one is nested in (a hook reached from a
	// policy's own call through a kernel stage; beginView), innermost
	// last; coreLoop counts the 6.x select_idle_core calls under way
	// (corehook.go).
	outer    []viewFrame
	coreLoop int
	label    string // the probes' label outside the outermost call

	// The policy's own persistent state: per CPU and per LLC integer
	// slots, zero until set; every view of a run shares them.
	cpuSlots []int64
	llcSlots []int64
	// rng is the policy's own random source (Rand), seeded from the run's
	// seed apart from the engine's, shared by every view of a run.
	rng *rand.Rand
}

// WakeView is what a WakePolicy sees of one wakeup. It is valid only
// during the SelectIdleSibling call it is passed to.
type WakeView struct {
	View
	p, cur   *Task
	d        *Decision
	prev     int
	target   int
	scanFrom int // ScanBegin's len(s.probeBuf); -1: no scan open
}

// SetWakePolicy installs pol as the fair classes' select_idle_sibling
// (nil: the era's own). Call it before the first event.
func (s *Sim) SetWakePolicy(pol WakePolicy) error {
	if pol != nil && s.fair.selectIdleSibling == nil {
		return fmt.Errorf("engine: era %s has no select_idle_sibling a policy could replace", s.era)
	}
	s.wpolicy, s.phooks, s.cpuPolicy, s.corePolicy, s.niPolicy = pol, 0, nil, nil, nil
	if pol == nil {
		return nil
	}
	s.phooks = HookSelectIdleSibling
	if h, ok := pol.(Hooked); ok {
		s.phooks = h.Hooks()
	} else if _, ok := pol.(IdleCPUPolicy); ok {
		s.phooks = HookSelectIdleCPU
	}
	if s.phooks&HookSelectIdleCPU != 0 {
		cp, ok := pol.(IdleCPUPolicy)
		if !ok {
			return errors.New("engine: the wake policy says it replaces select_idle_cpu but has no SelectIdleCPU")
		}
		s.cpuPolicy = cp
	}
	if s.phooks&HookSelectIdleCore != 0 {
		cp, ok := pol.(IdleCorePolicy)
		if !ok {
			return errors.New("engine: the wake policy says it replaces select_idle_core but has no SelectIdleCore")
		}
		s.corePolicy = cp
	}
	if s.phooks&HookNewidleBalance != 0 {
		np, ok := pol.(NewidlePolicy)
		if !ok {
			return errors.New("engine: the wake policy says it replaces newidle_balance but has no NewidleBalance")
		}
		s.niPolicy = np
	}
	if s.probeBy == nil {
		s.probeBy = make([]string, 0, cap(s.probeBuf))
	}
	if s.wview == nil {
		n := s.topo.NCPU
		s.wview = &WakeView{View: View{s: s, probed: make([]uint32, n), cpuSlots: make([]int64, n), llcSlots: make([]int64, s.topo.NLLC),
			rng: rand.New(rand.NewPCG(s.seed, policySeedStream))}}
		s.bview = s.newBalanceView()
	}
	return nil
}

// Err is the error that stopped the run (a wakeup policy's), or nil.
func (s *Sim) Err() error { return s.err }

// viewFrame is the state of a policy call that a nested one suspends.
type viewFrame struct {
	p, cur             *Task
	d                  *Decision
	prev, target       int
	callFrom, scanFrom int
	label              string // the probes' label the call suspended
}

// beginView readies the view for one policy call. A call made while
// another is under way (the policy's select_idle_cpu calling
// kernel.select_idle_cpu, whose loop calls its select_idle_core) nests:
// the outer call's state is kept and endView brings it back. The probe
// generation is not restored: the outer call may then read what the
// inner one probed, which it probed within the outer call too.
//
// label names the call's own probes (ProbeLabels).
func (s *Sim) beginView(label string, p *Task, prev, target int, cur *Task, d *Decision) *WakeView {
	v := s.wview
	if v.d != nil {
		v.outer = append(v.outer, viewFrame{v.p, v.cur, v.d, v.prev, v.target, v.callFrom, v.scanFrom, s.probeLabel})
	} else {
		v.label = s.probeLabel
	}
	s.probeLabel = label
	v.p, v.cur, v.d, v.prev, v.target = p, cur, d, prev, target
	v.this = d.WakerCPU
	v.callFrom, v.scanFrom = len(s.probeBuf), -1
	v.nextGen()
	return v
}

// nextGen starts a call: no CPU is marked probed.
func (v *View) nextGen() {
	v.gen++
	if v.gen == 0 { // wrapped: forget every mark
		clear(v.probed)
		v.gen = 1
	}
}

func (s *Sim) endView(v *WakeView) {
	if v.scanFrom >= 0 {
		v.ScanEnd(false)
	}
	if n := len(v.outer); n > 0 {
		f := v.outer[n-1]
		v.outer = v.outer[:n-1]
		v.p, v.cur, v.d, v.prev, v.target, v.callFrom, v.scanFrom = f.p, f.cur, f.d, f.prev, f.target, f.callFrom, f.scanFrom
		s.probeLabel = f.label
		return
	}
	v.p, v.cur, v.d = nil, nil, nil
	s.probeLabel = v.label
}

// Probe labels (ProbeLabels): which code made each probe of a wakeup, in
// runs with a wake policy.
const (
	labelKernel = "kernel"
	labelPolicy = "policy"
)

// ProbeLabels names, for the wakeup being decided, the code that made
// each of Decision.Probes, in runs with a wake policy (nil otherwise):
// "kernel" for the era's own code, "policy" for the policy's own probe,
// "policy select_idle_cpu" / "policy select_idle_core" for those hooks',
// and "kernel.select_idle_cpu" and the like for a kernel stage the policy
// called. Like Decision.Probes it is valid during the OnWakeup hook only.
func (s *Sim) ProbeLabels() []string {
	if s.phooks == 0 {
		return nil
	}
	return s.probeBy
}

// relabel sets the probes' label and returns the one it replaces.
func (s *Sim) relabel(l string) string {
	old := s.probeLabel
	s.probeLabel = l
	return old
}

// policyError records the first error of a policy: the run stops after
// this event.
func (s *Sim) policyError(err error) {
	if s.err == nil {
		s.err = err
	}
}

// policySelectIdleSibling runs the policy where select_idle_sibling would
// run. On an error the run stops after this event; the wakee goes to
// target meanwhile, so the engine's state stays consistent.
func (s *Sim) policySelectIdleSibling(p *Task, prev, target int, cur *Task, d *Decision) (int, Stage) {
	v := s.beginView(labelPolicy, p, prev, target, cur, d)
	c, st, err := s.wpolicy.SelectIdleSibling(v)
	s.endView(v)
	if err == nil {
		switch {
		case c < 0 || c >= s.topo.NCPU:
			err = fmt.Errorf("wake policy returned CPU %d: the machine has CPUs 0..%d", c, s.topo.NCPU-1)
		case c != target && !p.allowed.Test(c):
			err = fmt.Errorf("wake policy returned CPU %d, outside the task's allowed CPUs", c)
		case st >= numStages:
			err = fmt.Errorf("wake policy returned stage %d, not a stage", st)
		}
	}
	if err != nil {
		s.policyError(err)
		return target, StageBusyTarget
	}
	return c, st
}

// policySelectIdleCPU runs an IdleCPUPolicy where the era's
// select_idle_sibling calls select_idle_cpu: the CPU or -1.
func (s *Sim) policySelectIdleCPU(p *Task, prev, target int, hasIdleCore bool, cur *Task, d *Decision) (int, Stage) {
	v := s.beginView("policy select_idle_cpu", p, prev, target, cur, d)
	c, st, err := s.cpuPolicy.SelectIdleCPU(v, target, hasIdleCore)
	s.endView(v)
	if err == nil {
		switch {
		case c < -1 || c >= s.topo.NCPU:
			err = fmt.Errorf("wake policy's select_idle_cpu returned CPU %d: the machine has CPUs 0..%d (or -1: none)", c, s.topo.NCPU-1)
		case c >= 0 && !p.allowed.Test(c):
			err = fmt.Errorf("wake policy's select_idle_cpu returned CPU %d, outside the task's allowed CPUs", c)
		case st >= numStages:
			err = fmt.Errorf("wake policy returned stage %d, not a stage", st)
		}
	}
	if err != nil {
		s.policyError(err)
		return -1, StageBusyTarget
	}
	if c < 0 {
		return -1, StageBusyTarget
	}
	return c, st
}

// policyHook reports whether the installed policy replaces step h.
func (s *Sim) policyHook(h Hook) bool { return s.phooks&h != 0 }

// sisIdleCPU is v5.2's select_idle_sibling calling select_idle_cpu: the
// policy's when it replaces it.
func (s *Sim) sisIdleCPU(p *Task, llc *machine.Domain, prev, target int, cur *Task, d *Decision) int {
	if s.cpuPolicy == nil {
		return s.selectIdleCPU(p, llc, target, d)
	}
	c, _ := s.policySelectIdleCPU(p, prev, target, false, cur, d)
	return c
}

// sisIdleCPU66 is the same in the 6.x eras.
func (s *Sim) sisIdleCPU66(p *Task, llc *machine.Domain, hasIdleCore bool, prev, target int, cur *Task, d *Decision) (int, Stage) {
	if s.cpuPolicy == nil {
		return s.selectIdleCPU66(p, llc, hasIdleCore, prev, target, cur, d)
	}
	return s.policySelectIdleCPU(p, prev, target, hasIdleCore, cur, d)
}

// StageByName is the Stage named name (Stage.String), if any.
func StageByName(name string) (Stage, bool) {
	for i, n := range stageNames {
		if n == name {
			return Stage(i), true
		}
	}
	return 0, false
}

// The wakeup.

// Task is the wakee's ID. Prev, Target and WakerCPU are its previous
// CPU, wake_affine's choice (where the search starts) and the CPU the
// wakeup is issued on.
func (v *WakeView) Task() TaskID     { return v.p.ID }
func (v *WakeView) Prev() int        { return v.prev }
func (v *WakeView) Target() int      { return v.target }
func (v *WakeView) WakerCPU() int    { return v.d.WakerCPU }
func (v *WakeView) Sync() bool       { return v.d.Sync }
func (v *WakeView) NCPU() int        { return v.s.topo.NCPU }
func (v *WakeView) SMTPresent() bool { return v.s.smtPresent }

// Allowed reports whether the wakee may run on cpu (p->cpus_ptr);
// AllowedCPUs lists those CPUs in order.
func (v *WakeView) Allowed(cpu int) bool { return v.validCPU(cpu) && v.p.allowed.Test(cpu) }
func (v *WakeView) AllowedCPUs() []int   { return maskCPUs(v.p.allowed) }

// The wakee's own facts: nice, latency-nice, util_avg (×1024, as it was
// when it slept), wakee_flips, and p->recent_used_cpu (-1: none), which
// select_idle_sibling itself updates (SetRecentUsedCPU).
func (v *WakeView) Nice() int          { return v.p.Nice }
func (v *WakeView) LatencyNice() int   { return v.p.LatencyNice }
func (v *WakeView) TaskUtil() int64    { return v.p.util.avg }
func (v *WakeView) WakeeFlips() int64  { return v.p.wakeeFlips }
func (v *WakeView) RecentUsedCPU() int { return v.p.recentUsedCPU }
func (v *WakeView) SetRecentUsedCPU(cpu int) error {
	if cpu != -1 && !v.validCPU(cpu) {
		return fmt.Errorf("recent_used_cpu %d: the machine has CPUs 0..%d", cpu, v.s.topo.NCPU-1)
	}
	v.p.recentUsedCPU = cpu
	return nil
}

// WakerFlips is the waking task's wakee_flips (0 when woken from an
// interrupt), and WakerKthread whether the waker is a kernel thread in
// task context.
func (v *WakeView) WakerFlips() int64 {
	if v.cur.ID < 0 {
		return 0
	}
	return v.cur.wakeeFlips
}

// WakerPerCPUKthread reports whether the waker is a per-CPU kernel
// thread in task context (6.x's select_idle_sibling stacks its wakee on
// prev = this CPU), and ThisNrRunning is the waker CPU's fair nr_running
// (this_rq()->nr_running as the engine counts it there).
func (v *WakeView) WakerPerCPUKthread() bool {
	return v.cur.ID >= 0 && v.cur.Kthread() && v.cur.nrAllowed == 1
}
func (v *View) ThisNrRunning() int { return v.s.cpus[v.this].nr }

// The waker CPU's own runqueue (this_rq(), read without a probe as the
// kernel reads it): avg_idle, this CPU's sd_llc avg_scan_cost, and the
// search's clock: the time its probes have cost so far (local_clock()
// within the search; the policy's own run time is not counted).
func (v *View) AvgIdle() int64     { return v.s.cpus[v.this].avgIdle }
func (v *View) AvgScanCost() int64 { return v.s.cpus[v.this].avgScanCost }
func (v *View) LocalClock() int64 {
	if v.bal != nil {
		return v.bal.clock()
	}
	return v.s.scanCost
}

// charge adds ns to the call's cost: the waker's search, or the newly
// idle CPU's balance.
func (v *View) charge(ns int64) {
	if v.bal != nil {
		v.bal.cost += ns
		return
	}
	v.s.scanCost += ns
}

// UpdateAvgScanCost is update_avg(&this_sd->avg_scan_cost, ns), as v5.2's
// select_idle_cpu does after a scan that was not cut short.
func (v *WakeView) UpdateAvgScanCost(ns int64) {
	wc := v.s.cpus[v.d.WakerCPU]
	wc.avgScanCost += (ns - wc.avgScanCost) / 8
}

// Knob is the value of the named knob in this run (booleans 0/1, and
// isBool set).
func (v *View) Knob(name string) (val int64, isBool bool, err error) {
	id, ok := knob.Lookup(name)
	if !ok {
		return 0, false, knob.UnknownError(name)
	}
	return v.s.k.Get(id), knob.ByID(id).Kind == knob.Bool, nil
}

// KnobByID is knob id's value in this run (Knob without the name's
// lookup).
func (v *View) KnobByID(id knob.ID) int64 { return v.s.k.Get(id) }

// Topology (free to read).

// NCPU is the number of CPUs; SMTPresent whether cores have siblings.
func (v *View) NCPU() int        { return v.s.topo.NCPU }
func (v *View) SMTPresent() bool { return v.s.smtPresent }

func (v *View) validCPU(cpu int) bool { return cpu >= 0 && cpu < v.s.topo.NCPU }

func (v *View) checkCPU(cpu int) error {
	if !v.validCPU(cpu) {
		return fmt.Errorf("CPU %d: the machine has CPUs 0..%d", cpu, v.s.topo.NCPU-1)
	}
	return nil
}

// CoreOf, LLCOf and NodeOf are a CPU's core, LLC and node (socket) ids.
func (v *View) CoreOf(cpu int) (int, error) { return v.perCPU(v.s.topo.Core, cpu) }
func (v *View) LLCOf(cpu int) (int, error)  { return v.perCPU(v.s.topo.LLC, cpu) }
func (v *View) NodeOf(cpu int) (int, error) { return v.perCPU(v.s.topo.Socket, cpu) }

func (v *View) perCPU(ids []int, cpu int) (int, error) {
	if err := v.checkCPU(cpu); err != nil {
		return -1, err
	}
	return ids[cpu], nil
}

// Siblings lists cpu's SMT siblings, cpu included (cpu_smt_mask), in
// thread order.
func (v *View) Siblings(cpu int) ([]int, error) {
	if err := v.checkCPU(cpu); err != nil {
		return nil, err
	}
	return v.s.topo.CoreCPUs[v.s.topo.Core[cpu]], nil
}

// LLCCPUs lists the CPUs sharing cpu's last-level cache (sd_llc's span),
// in order; HasLLC reports whether cpu has an LLC domain at all (not on a
// uniprocessor).
func (v *View) LLCCPUs(cpu int) ([]int, error) {
	if err := v.checkCPU(cpu); err != nil {
		return nil, err
	}
	return maskCPUs(v.s.topo.LLCSpan[v.s.topo.LLC[cpu]]), nil
}
func (v *View) HasLLC(cpu int) bool { return v.validCPU(cpu) && v.s.topo.LLCDomainIdx[cpu] >= 0 }

// ShareCache is cpus_share_cache(a, b).
func (v *View) ShareCache(a, b int) bool {
	return v.validCPU(a) && v.validCPU(b) && v.s.topo.ShareCache(a, b)
}

// CoresOfLLC lists the first CPU of each core of LLC llc, in order.
func (v *View) CoresOfLLC(llc int) ([]int, error) {
	if llc < 0 || llc >= v.s.topo.NLLC {
		return nil, fmt.Errorf("LLC %d: the machine has LLCs 0..%d", llc, v.s.topo.NLLC-1)
	}
	var out []int
	span := v.s.topo.LLCSpan[llc]
	for c := span.First(); c >= 0; c = span.Next(c + 1) {
		if v.s.topo.CoreCPUs[v.s.topo.Core[c]][0] == c {
			out = append(out, c)
		}
	}
	return out, nil
}

func maskCPUs(m cpumask.Mask) []int {
	out := make([]int, 0, m.Weight())
	for c := m.First(); c >= 0; c = m.Next(c + 1) {
		out = append(out, c)
	}
	return out
}

// The LLC's shared state (sd_llc_shared, as the kernel reads it without a
// probe): has_idle_cores, which a select_idle_core that finds no idle
// core clears, and SIS_UTIL's nr_idle_scan.
func (v *View) HasIdleCores(cpu int) (bool, error) {
	return v.validCPU(cpu) && v.s.llcs[v.s.topo.LLC[cpu]].hasIdleCores, v.checkCPU(cpu)
}
func (v *View) SetIdleCores(cpu int, val bool) error {
	if err := v.checkCPU(cpu); err != nil {
		return err
	}
	sh := &v.s.llcs[v.s.topo.LLC[cpu]]
	if sh.hasIdleCores && !val {
		v.s.stats.idleCoreCleared++
	}
	sh.hasIdleCores = val
	return nil
}
func (v *View) NrIdleScan(cpu int) (int64, error) {
	if err := v.checkCPU(cpu); err != nil {
		return 0, err
	}
	return v.s.llcs[v.s.topo.LLC[cpu]].nrIdleScan, nil
}

// Probing and the CPUs' runtime state.

// Probe is the kernel's available_idle_cpu(cpu) with its cost: the
// waker pays probe_ns plus fetching cpu's runqueue line, the probe is
// listed in the decision, and cpu's runtime state becomes readable for
// the rest of the call. In a balance call it costs the CPU going idle
// what load_balance pays to read a runqueue (lb_cpu_ns; BalanceView).
func (v *View) Probe(cpu int) (bool, error) {
	if err := v.checkCPU(cpu); err != nil {
		return false, err
	}
	v.probed[cpu] = v.gen
	if v.bal != nil {
		return v.bal.probe(cpu), nil
	}
	return v.s.probe(cpu), nil
}

// Probes is how many CPUs this call has probed so far, its own probes
// and the built-in stages' together (a balance call: its own).
func (v *View) Probes() int {
	if v.bal != nil {
		return v.bal.probes
	}
	return len(v.s.probeBuf) - v.callFrom
}

func (v *View) readable(cpu int) (*cpu, error) {
	if err := v.checkCPU(cpu); err != nil {
		return nil, err
	}
	if v.probed[cpu] != v.gen {
		if v.bal != nil {
			return nil, fmt.Errorf("CPU %d not probed in this call: %w", cpu, ErrNotProbed)
		}
		found := false
		for _, c := range v.s.probeBuf[v.callFrom:] {
			if c == cpu {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("CPU %d not probed in this call: %w", cpu, ErrNotProbed)
		}
		v.probed[cpu] = v.gen
	}
	return v.s.cpus[cpu], nil
}

// Idle is available_idle_cpu, NrRunning rq->nr_running, Polling whether
// the idle CPU spins in POLL (a wakeup needs no IPI), CState the idle
// state chosen at its last idle entry (-1 when busy), Util its util_avg
// (×1024): each for a CPU probed in this call.
func (v *View) Idle(cpu int) (bool, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return false, err
	}
	return c.idle(), nil
}
func (v *View) NrRunning(cpu int) (int, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	return c.nrRunning(), nil
}
func (v *View) Polling(cpu int) (bool, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return false, err
	}
	return v.s.polling(c), nil
}
func (v *View) CState(cpu int) (int, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	if c.curr != nil || !v.s.idleModel() {
		return -1, nil
	}
	return c.cstate, nil
}
func (v *View) Util(cpu int) (int64, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	u := c.util // a copy: reading must not advance the CPU's own signal
	return u.at(v.s.now), nil
}

// CurrInfo describes the task a probed CPU runs: its class ("fair",
// "rt", "dl"; "idle" when none), nice and latency-nice.
type CurrInfo struct {
	Class             string
	Nice, LatencyNice int
}

func (v *View) Curr(cpu int) (CurrInfo, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return CurrInfo{}, err
	}
	t := c.curr
	switch {
	case t == nil:
		return CurrInfo{Class: "idle"}, nil
	case t.dl():
		return CurrInfo{Class: "dl", Nice: t.Nice, LatencyNice: t.LatencyNice}, nil
	case t.rt():
		return CurrInfo{Class: "rt", Nice: t.Nice, LatencyNice: t.LatencyNice}, nil
	}
	return CurrInfo{Class: "fair", Nice: t.Nice, LatencyNice: t.LatencyNice}, nil
}

// Reporting a select_idle_cpu scan of the policy's own, so that the
// search statistics (select_idle_cpu calls, probes per scan, cut short)
// count it as they count the kernel's: ScanBegin(nr) when the scan loop
// starts with budget nr (math.MaxInt32 or more: unlimited), ScanEnd when
// it ends (cutShort: the budget ran out). The probes between them are the
// scan's. A scan the policy opens and does not end is ended at return.
func (v *WakeView) ScanBegin(nr int64) {
	if v.coreLoop > 0 {
		v.s.policyError(v.inCoreLoop("scan_begin"))
		return
	}
	v.d.SISCalled = true
	v.d.SISLimit = int(min(max(nr, 0), math.MaxInt32))
	v.scanFrom = len(v.s.probeBuf)
}

func (v *WakeView) ScanEnd(cutShort bool) error {
	if v.coreLoop > 0 {
		return v.inCoreLoop("scan_end")
	}
	if v.scanFrom < 0 {
		return errors.New("scan_end without scan_begin")
	}
	v.d.SISProbes = len(v.s.probeBuf) - v.scanFrom
	v.d.SISCutShort = cutShort
	v.scanFrom = -1
	return nil
}

// The kernel's own stages, as the running era has them, each charging
// and recording exactly as without a policy.

// KernelSelectIdleSibling is the era's whole select_idle_sibling.
func (v *WakeView) KernelSelectIdleSibling() (int, Stage) {
	if v.coreLoop > 0 { // refused: the run stops after this wakeup
		v.s.policyError(v.inCoreLoop("kernel.select_idle_sibling"))
		return v.target, StageBusyTarget
	}
	old := v.s.relabel("kernel.select_idle_sibling")
	c, st := v.s.fair.selectIdleSibling(v.s, v.p, v.prev, v.target, v.cur, v.d)
	v.s.probeLabel = old
	return c, st
}

func (v *WakeView) llcDomainOf(target int) (ok bool, err error) {
	if err := v.checkCPU(target); err != nil {
		return false, err
	}
	return v.s.topo.LLCDomainIdx[target] >= 0, nil
}

func (v *WakeView) needEra52(what string) error {
	if !v.s.fair.wakeup52 {
		return fmt.Errorf("%s: era %s folds it into select_idle_cpu(target, has_idle_core)", what, v.s.era)
	}
	return nil
}

// KernelSelectIdleCore is v5.2's select_idle_core(p, sd_llc, target): an
// idle core of target's LLC (its first CPU), or -1; a scan that finds
// none clears has_idle_cores. Era 5.2 only (6.x scans cores inside
// select_idle_cpu). It is the kernel's own even when the policy replaces
// select_idle_core (corehook.go), which may call it.
func (v *WakeView) KernelSelectIdleCore(target int) (int, error) {
	if err := v.needEra52("select_idle_core"); err != nil {
		return -1, err
	}
	ok, err := v.llcDomainOf(target)
	if !ok {
		return -1, err
	}
	old := v.s.relabel("kernel.select_idle_core")
	c := v.s.selectIdleCore(v.p, v.s.topo.Domains[target][v.s.topo.LLCDomainIdx[target]], target)
	v.s.probeLabel = old
	return c, nil
}

// KernelSelectIdleCPU is the era's select_idle_cpu(p, sd_llc, target)
// with its budget (SIS_PROP or SIS_UTIL) and knobs (v5.2's SIS_BOUND,
// SIS_ROTATE, SIS_TARGET_CORE, LN_SEARCH): the CPU found or -1, and the
// stage to report. hasIdleCore is 6.x's argument (scan core by core, as
// select_idle_core); v5.2 ignores it.
func (v *WakeView) KernelSelectIdleCPU(target int, hasIdleCore bool) (int, Stage, error) {
	if v.coreLoop > 0 {
		return -1, StageBusyTarget, v.inCoreLoop("kernel.select_idle_cpu")
	}
	ok, err := v.llcDomainOf(target)
	if !ok {
		return -1, StageBusyTarget, err
	}
	llc := v.s.topo.Domains[target][v.s.topo.LLCDomainIdx[target]]
	old := v.s.relabel("kernel.select_idle_cpu")
	defer func() { v.s.probeLabel = old }()
	if v.s.fair.wakeup52 {
		c := v.s.selectIdleCPU(v.p, llc, target, v.d)
		return c, StageIdleCPU, nil
	}
	c, st := v.s.selectIdleCPU66(v.p, llc, hasIdleCore, v.prev, target, v.cur, v.d)
	return c, st, nil
}

// KernelSelectIdleSMT is the era's select_idle_smt: in v5.2 the first
// idle allowed thread of target's core; in 6.x an idle allowed sibling of
// cpu other than itself within target's LLC. -1 when none.
func (v *WakeView) KernelSelectIdleSMT(cpu int) (int, error) {
	if err := v.checkCPU(cpu); err != nil {
		return -1, err
	}
	old := v.s.relabel("kernel.select_idle_smt")
	defer func() { v.s.probeLabel = old }()
	if v.s.fair.wakeup52 {
		return v.s.selectIdleSMT(v.p, cpu), nil
	}
	if !v.s.smtPresent || v.s.topo.LLCDomainIdx[v.target] < 0 {
		return -1, nil
	}
	return v.s.selectIdleSMT66(v.p, v.s.topo.Domains[v.target][v.s.topo.LLCDomainIdx[v.target]], cpu), nil
}

// policySeedStream is the PCG stream of the policy's random source: the
// run's seed with a stream of its own, so that a policy drawing numbers
// leaves the engine's draws (and a run without a policy) unchanged.
const policySeedStream = 0x9011c7

// Rand is a uniform integer in [0, n) from the policy's random source:
// deterministic for the run's seed, like every draw of the engine (the
// interpreter has none of its own).
func (v *View) Rand(n int64) (int64, error) {
	if n <= 0 {
		return 0, fmt.Errorf("rand(%d): n must be at least 1", n)
	}
	return v.rng.Int64N(n), nil
}

// The policy's persistent state: an integer per CPU and per LLC, zero
// at the start of the run, kept across wakeups (a rotating window's
// position, say).
func (v *View) CPUSlot(cpu int) (int64, error) {
	if err := v.checkCPU(cpu); err != nil {
		return 0, err
	}
	return v.cpuSlots[cpu], nil
}
func (v *View) SetCPUSlot(cpu int, val int64) error {
	if err := v.checkCPU(cpu); err != nil {
		return err
	}
	v.cpuSlots[cpu] = val
	return nil
}
func (v *View) LLCSlot(llc int) (int64, error) {
	if llc < 0 || llc >= v.s.topo.NLLC {
		return 0, fmt.Errorf("LLC %d: the machine has LLCs 0..%d", llc, v.s.topo.NLLC-1)
	}
	return v.llcSlots[llc], nil
}
func (v *View) SetLLCSlot(llc int, val int64) error {
	if llc < 0 || llc >= v.s.topo.NLLC {
		return fmt.Errorf("LLC %d: the machine has LLCs 0..%d", llc, v.s.topo.NLLC-1)
	}
	v.llcSlots[llc] = val
	return nil
}

// The LLC's idle bitmasks, as an out-of-tree selector such as
// poc-selector keeps them in sd_llc_shared (a word per LLC, set and
// cleared by each CPU on idle entry and exit; issue 29). The engine has
// no such words: it computes them from the CPUs' state at the moment of
// the read, which is what an up-to-date word holds. A read costs the
// waker probe_ns (one load of the shared word; the CPUs are not probed,
// and a CPU read from a mask is no more readable by Idle and the rest
// than before). IdleMask has bit i set when the LLC's i-th CPU (LLCCPUs
// order) is idle; IdleCoreMask bit i when every thread of its i-th core
// (CoresOfLLC order) is. An LLC of more than 64 CPUs has no single word:
// an error (poc-selector falls back to select_idle_cpu there).

func (v *View) llcSpanFor(llc int) (cpumask.Mask, error) {
	if llc < 0 || llc >= v.s.topo.NLLC {
		return cpumask.Mask{}, fmt.Errorf("LLC %d: the machine has LLCs 0..%d", llc, v.s.topo.NLLC-1)
	}
	span := v.s.topo.LLCSpan[llc]
	if span.Weight() > 64 {
		return span, fmt.Errorf("LLC %d has %d CPUs: an idle mask holds 64", llc, span.Weight())
	}
	return span, nil
}

// IdleMask is the LLC's idle-CPU word (above).
func (v *View) IdleMask(llc int) (uint64, error) { return v.llcMask(llc, false) }

// IdleCoreMask is the LLC's idle-core word (above).
func (v *View) IdleCoreMask(llc int) (uint64, error) { return v.llcMask(llc, true) }

// llcMask computes IdleMask (cores false: a bit per CPU) or IdleCoreMask
// (a bit per core, set when every thread is idle).
func (v *View) llcMask(llc int, cores bool) (uint64, error) {
	span, err := v.llcSpanFor(llc)
	if err != nil {
		return 0, err
	}
	v.charge(v.s.probeNS)
	var m uint64
	i := 0
	for c := span.First(); c >= 0; c = span.Next(c + 1) {
		idle := v.s.cpus[c].idle()
		if cores {
			sib := v.s.topo.CoreCPUs[v.s.topo.Core[c]]
			if sib[0] != c {
				continue
			}
			for _, t := range sib[1:] {
				idle = idle && v.s.cpus[t].idle()
			}
		}
		if idle {
			m |= 1 << i
		}
		i++
	}
	return m, nil
}

// NodeLLCs lists the first CPU of each LLC in cpu's node, ascending (the
// groups of sd_llc's parent domain when it does not cross nodes).
func (v *View) NodeLLCs(cpu int) ([]int, error) {
	if err := v.checkCPU(cpu); err != nil {
		return nil, err
	}
	node := v.s.topo.Socket[cpu]
	var out []int
	for l := 0; l < v.s.topo.NLLC; l++ {
		f := v.s.topo.LLCSpan[l].First()
		if f >= 0 && v.s.topo.Socket[f] == node {
			out = append(out, f)
		}
	}
	sort.Ints(out)
	return out, nil
}
