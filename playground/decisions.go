package playground

import (
	"fmt"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// The decision panel: a DecisionLog watches one arm's engine (its Hooks)
// and keeps the last LogSize wakeup decisions in full, as the page's
// "last decisions" panel shows them: who woke whom, prev, target and
// recent_used_cpu, wake_affine's verdict and why, every stage of
// select_idle_sibling tried, every CPU probed with its state at the
// time, the CPU chosen, the cost of the search, and the wakeup latency
// that followed (filled in when the wakee next runs).

// LogSize is how many decisions the panel's ring holds.
const LogSize = 32

// LoggedDecision is one wakeup decision as the panel shows it.
type LoggedDecision struct {
	N          int64  `json:"n"`    // the decision's number in the run (1 = first)
	TimeNS     int64  `json:"time"` // simulated ns
	Waker      string `json:"waker"`
	WakerCPU   int    `json:"wakerCpu"`
	Wakee      string `json:"wakee"`
	Prev       int    `json:"prev"`
	Target     int    `json:"target"`
	Recent     int    `json:"recent"` // the wakee's recent_used_cpu (-1: none)
	Sync       bool   `json:"sync"`
	WakeWide   bool   `json:"wakeWide"`
	WantAffine bool   `json:"wantAffine"`
	// Affine is wake_affine's verdict ("waker", "prev", "skipped") and
	// AffineWhy the reason in words.
	Affine    string   `json:"affine"`
	AffineWhy string   `json:"affineWhy"`
	Stage     string   `json:"stage"` // the stage that chose
	Stages    []Tried  `json:"stages"`
	Probes    []Probed `json:"probes"`
	Chosen    int      `json:"chosen"`
	ChosenIdl bool     `json:"chosenIdle"`
	SISCalled bool     `json:"sisCalled"`
	SISProbes int      `json:"sisProbes"`
	SISLimit  int      `json:"sisLimit"` // -1: unlimited
	SISCut    bool     `json:"sisCut"`
	CostNS    int64    `json:"cost"`
	// LatencyNS is the time from the decision until the wakee ran (-1:
	// it has not run yet).
	LatencyNS int64 `json:"latency"`
	// RT explains an RT wakee's placement (select_task_rq_rt); nil for a
	// fair wakee.
	RT *RTPlacement `json:"rt,omitempty"`
	// DL explains a SCHED_DEADLINE wakee's placement
	// (select_task_rq_dl); nil for any other wakee.
	DL *DLPlacement `json:"dl,omitempty"`
}

// DLPlacement is what select_task_rq_dl saw: the wakee's reservation,
// the deadline tasks prev and the chosen CPU were running at the
// decision ("": none; a deadline wakee preempts anything else), and
// whether find_later_rq moved the wakee. select_task_rq_dl keeps the
// wakee on prev unless prev runs a deadline task it cannot preempt (an
// earlier or equal deadline, or pinned there); then find_later_rq takes
// a CPU without deadline tasks (cpudl's free_cpus), else the one whose
// earliest deadline is the latest, if later than the wakee's.
type DLPlacement struct {
	Policy     string `json:"policy"` // "deadline"
	RuntimeNS  int64  `json:"runtime"`
	DeadlineNS int64  `json:"deadline"`
	PeriodNS   int64  `json:"period"`
	Reclaim    bool   `json:"reclaim"`
	PrevDL     string `json:"prevDl"`
	PrevIdle   bool   `json:"prevIdle"`
	ChosenDL   string `json:"chosenDl"`
	Later      bool   `json:"later"`
}

// RTPlacement is what select_task_rq_rt saw: the wakee's policy and
// rt_priority, the cpupri levels of prev and of the chosen CPU (0: fair
// or idle, 1..99: the rt_priority of the CPU's highest RT task), whether
// find_lowest_rq was asked (prev ran an RT task the wakee could not
// preempt) and the mask its cpupri_find found (level -1: nothing below
// the wakee).
type RTPlacement struct {
	Policy string `json:"policy"` // "fifo", "rr"
	RTPrio int    `json:"rtprio"`
	// Cpupri says select_task_rq_rt placed the wakee and the fields
	// below are set; false for an era whose RT wakeups take another
	// path (2.6's O(1) scheduler) or a wakee pinned to one CPU.
	Cpupri      bool `json:"cpupri"`
	PrevLevel   int  `json:"prevLevel"`
	ChosenLevel int  `json:"chosenLevel"`
	FindLowest  bool `json:"findLowest"`
	LowestLevel int  `json:"lowestLevel"`
	LowestCPUs  int  `json:"lowestCpus"`
}

// Tried is one stage of select_idle_sibling and what it gave.
type Tried struct {
	Stage  string `json:"stage"`
	Result string `json:"result"`
}

// Probed is one CPU the search examined, in order, with its state then.
type Probed struct {
	CPU   int    `json:"cpu"`
	Stage string `json:"stage"`
	State string `json:"state"` // busy, idle, idle core, polling, or an idle state (C1, C6, …)
}

// DecisionLog records an arm's decisions (install with Attach). The
// hooks copy what they see into preallocated storage and allocate
// nothing; Last formats the panel's text (a few times a second).
type DecisionLog struct {
	sim     *engine.Sim
	ring    [LogSize]rawDecision
	n       int64   // decisions recorded
	pending []int32 // per task: the ring slot+1 of its decision awaiting a run (0: none)
	cnames  []string
	changed bool
	// dlTasks are the run's deadline tasks, of the first dlScanned
	// tasks (the hook looks for the ones on prev and chosen among them).
	dlTasks   []engine.TaskID
	dlScanned int
	// Policy names the wake policy that replaces select_idle_sibling in
	// the arm (""; none): its decisions list its probes and returned CPU
	// instead of the kernel's stages.
	Policy string
}

// rawDecision is a decision as the hook saw it.
type rawDecision struct {
	n       int64
	d       engine.Decision // d.Probes aliases probes
	probes  []int
	states  []probeState
	by      []string // with a wake policy: the code that made each probe
	recent  int
	latency int64
	sisCore bool
	policy  engine.Policy // the wakee's
	rtprio  int
	// A deadline wakee's: the deadline tasks prev and the chosen CPU
	// ran at the decision (-1: none), and whether prev was idle.
	prevDL, chosenDL engine.TaskID
	prevIdle         bool
}

// probeState is a probed CPU's state at the decision.
type probeState struct {
	idle, polling, core bool
	cstate              int
}

// Attach installs a log on sim's hooks (replacing any).
func Attach(sim *engine.Sim) *DecisionLog {
	l := &DecisionLog{sim: sim, cnames: sim.IdleStateNames()}
	for i := range l.ring {
		l.ring[i].probes = make([]int, 0, maxSnapProbes)
		l.ring[i].states = make([]probeState, 0, maxSnapProbes)
	}
	sim.SetHooks(engine.Hooks{OnWakeup: l.onWakeup, OnSwitch: l.onSwitch})
	return l
}

// Detach removes the log's hooks.
func (l *DecisionLog) Detach() { l.sim.SetHooks(engine.Hooks{}) }

// Count is how many decisions were recorded.
func (l *DecisionLog) Count() int64 { return l.n }

// Changed reports (and clears) whether anything changed since the last
// call.
func (l *DecisionLog) Changed() bool {
	c := l.changed
	l.changed = false
	return c
}

// Last returns up to n of the newest decisions, oldest first.
func (l *DecisionLog) Last(n int) []LoggedDecision {
	n = int(min(int64(n), l.n, LogSize))
	out := make([]LoggedDecision, 0, n)
	for k := l.n - int64(n); k < l.n; k++ {
		out = append(out, l.format(&l.ring[k%LogSize]))
	}
	return out
}

func (l *DecisionLog) name(id engine.TaskID) string {
	if id < 0 || int(id) >= l.sim.NumTasks() {
		return "(interrupt)"
	}
	t := l.sim.Task(id)
	return fmt.Sprintf("%s [%d]", t.Name, id)
}

func (l *DecisionLog) stateName(st probeState) string {
	switch {
	case !st.idle:
		return "busy"
	case st.polling:
		return "polling"
	}
	s := "idle"
	if st.cstate >= 0 && st.cstate < len(l.cnames) {
		s = "idle " + l.cnames[st.cstate]
	}
	if st.core {
		s += ", idle core"
	}
	return s
}

func (l *DecisionLog) probe(cpu int) probeState {
	idle, polling, cs := l.sim.CPUState(cpu)
	st := probeState{idle: idle, polling: polling, cstate: cs}
	if idle && !polling {
		sib := l.sim.Topology().SiblingsOf(cpu)
		st.core = sib.Weight() > 1
		for c := sib.First(); c >= 0 && st.core; c = sib.Next(c + 1) {
			if i, _, _ := l.sim.CPUState(c); !i {
				st.core = false
			}
		}
	}
	return st
}

func (l *DecisionLog) onSwitch(cpu int, prev, next *engine.Task) {
	if next == nil || next.ID < 0 || int(next.ID) >= len(l.pending) {
		return
	}
	slot := l.pending[next.ID]
	if slot == 0 {
		return
	}
	l.pending[next.ID] = 0
	x := &l.ring[slot-1]
	if x.latency < 0 {
		x.latency = l.sim.Now() - x.d.Time
		l.changed = true
	}
}

func (l *DecisionLog) onWakeup(d *engine.Decision) {
	slot := int(l.n % LogSize)
	x := &l.ring[slot]
	// The slot's previous decision no longer waits for its latency.
	if t := x.d.Task; x.n > 0 && t >= 0 && int(t) < len(l.pending) && l.pending[t] == int32(slot+1) {
		l.pending[t] = 0
	}
	l.n++
	probes, states := x.probes[:0], x.states[:0]
	for _, c := range d.Probes[:min(len(d.Probes), maxSnapProbes)] {
		probes = append(probes, c)
		states = append(states, l.probe(c))
	}
	by := l.sim.ProbeLabels()
	x.by = append(x.by[:0], by[:min(len(by), len(probes))]...)
	x.n, x.d, x.probes, x.states = l.n, *d, probes, states
	x.d.Probes = probes
	x.latency, x.recent = -1, -1
	x.sisCore = l.sim.Knobs().On(knob.SIS_CORE)
	x.policy, x.rtprio = engine.PolicyNormal, 0
	x.prevDL, x.chosenDL, x.prevIdle = -1, -1, false
	if d.Task >= 0 && int(d.Task) < l.sim.NumTasks() {
		t := l.sim.Task(d.Task)
		x.policy, x.rtprio = t.Policy(), t.RTPrio()
		if x.policy == engine.PolicyDeadline {
			l.dlRunning(x)
		}
		x.recent = t.RecentUsedCPU()
		if d.Stage == engine.StageRecent {
			x.recent = d.Chosen // select_idle_sibling swapped it with prev
		}
		for int(d.Task) >= len(l.pending) {
			l.pending = append(l.pending, 0) // grows once per task
		}
		l.pending[d.Task] = int32(slot + 1)
	}
	l.changed = true
}

// dlRunning records, for a deadline wakee's decision x, the deadline
// tasks running on prev and on the chosen CPU, and whether prev idles.
func (l *DecisionLog) dlRunning(x *rawDecision) {
	for ; l.dlScanned < l.sim.NumTasks(); l.dlScanned++ {
		if t := l.sim.Task(engine.TaskID(l.dlScanned)); t != nil && t.Policy() == engine.PolicyDeadline {
			l.dlTasks = append(l.dlTasks, t.ID) // grows once per deadline task
		}
	}
	d := &x.d
	for _, id := range l.dlTasks {
		t := l.sim.Task(id)
		if id == d.Task || t.State() != engine.TaskRunning {
			continue
		}
		if t.CPU() == d.Prev {
			x.prevDL = id
		}
		if t.CPU() == d.Chosen {
			x.chosenDL = id
		}
	}
	if d.Prev >= 0 && d.Prev < l.sim.Topology().NCPU {
		x.prevIdle, _, _ = l.sim.CPUState(d.Prev)
	}
}

// format writes a recorded decision for the panel.
func (l *DecisionLog) format(x *rawDecision) LoggedDecision {
	d := &x.d
	o := LoggedDecision{N: x.n, TimeNS: d.Time, Waker: l.name(d.Waker), WakerCPU: d.WakerCPU, Wakee: l.name(d.Task),
		Prev: d.Prev, Target: d.Target, Sync: d.Sync, WakeWide: d.WakeWide, WantAffine: d.WantAffine,
		Stage: d.Stage.String(), Chosen: d.Chosen, ChosenIdl: d.ChosenIdle, SISCalled: d.SISCalled,
		SISProbes: d.SISProbes, SISLimit: d.SISLimit, SISCut: d.SISCutShort, CostNS: d.Cost, LatencyNS: x.latency, Recent: x.recent}
	if o.SISLimit >= 1<<30 {
		o.SISLimit = -1
	}
	rt := x.policy == engine.PolicyFIFO || x.policy == engine.PolicyRR
	if rt {
		o.RT = &RTPlacement{Policy: x.policy.String(), RTPrio: x.rtprio}
	}
	if x.policy == engine.PolicyDeadline {
		o.DL = l.dlPlacement(x)
	}
	if o.DL != nil && DLSelected(d) {
		o.Affine, o.AffineWhy = dlAffine()
		o.Stages, o.Probes = l.dlStages(x, o.DL)
	} else if rt && RTSelected(d) {
		r := o.RT
		r.Cpupri, r.PrevLevel, r.ChosenLevel = true, d.PrevPri, d.ChosenPri
		r.FindLowest, r.LowestLevel, r.LowestCPUs = d.RTFind, d.LowestPri, d.LowestN
		o.Affine, o.AffineWhy = rtAffine(d)
		o.Stages, o.Probes = rtStages(x)
	} else {
		o.Affine, o.AffineWhy = affine(d)
		o.Stages, o.Probes = l.stages(x)
	}
	// A decision without stages or probes (an era whose wakeup path did
	// not search) is written as [] rather than null for the page.
	if o.Stages == nil {
		o.Stages = []Tried{}
	}
	if o.Probes == nil {
		o.Probes = []Probed{}
	}
	return o
}

// affine says what wake_affine decided, and why.
func affine(d *engine.Decision) (string, string) {
	switch {
	case d.Stage == engine.StageDelayed:
		return "skipped", fmt.Sprintf("the wakee was still queued on CPU %d (delayed dequeue: it went to sleep with negative lag and stayed on the runqueue), so ttwu_runnable requeues it there: select_task_rq is not called (no wake_affine, wake_wide or recent_used_cpu)", d.Prev)
	case d.Stage == engine.StagePinned:
		return "skipped", "the wakee may run on one CPU only: select_task_rq_fair is not called"
	case d.WakeWide:
		return "skipped", "wake_wide: the waker and wakee switch partners often (wakee_flips above the LLC size), so the wakeup is not pulled towards the waker; target = prev"
	case !d.WantAffine:
		return "skipped", "the waker's CPU is not among the wakee's allowed CPUs; target = prev"
	case d.WakerCPU == d.Prev:
		return "prev", "the waker runs on the wakee's previous CPU: no choice to make; target = prev"
	case d.Target == d.WakerCPU:
		why := "wake_affine pulled the wakeup to the waker's CPU (idle, or lighter loaded than prev)"
		if d.Sync {
			why += "; a sync wakeup: the waker is about to sleep"
		}
		return "waker", why
	}
	return "prev", "wake_affine kept prev: the waker's CPU was neither idle nor lighter loaded"
}

// RTSelected reports whether select_task_rq_rt made decision d (its
// stages, or a select_fallback_rq after them: selectRTCPU sets
// LowestPri to -1 unless find_lowest_rq ran, and a fair decision leaves
// both at zero).
func RTSelected(d *engine.Decision) bool {
	switch d.Stage {
	case engine.StageRTPrev, engine.StageRTLowest:
		return true
	case engine.StageFallback:
		return d.RTFind || d.LowestPri < 0
	}
	return false
}

// rtAffine is wake_affine's part in an RT wakeup: none.
func rtAffine(d *engine.Decision) (string, string) {
	return "skipped", "an RT wakee: select_task_rq_rt places it by priority (cpupri), with no wake_affine, wake_wide or idle search; target = prev"
}

// rtStages is select_task_rq_rt's path: keep prev unless it runs an RT
// task the wakee cannot preempt; then find_lowest_rq over cpupri.
func rtStages(x *rawDecision) (st []Tried, pr []Probed) {
	d := &x.d
	lv := func(l int) string {
		if l == 0 {
			return "level 0: fair tasks or idle"
		}
		return fmt.Sprintf("level %d: an RT task of rt_priority %d", l, l)
	}
	if !d.RTFind {
		st = append(st, Tried{"rt_prev", fmt.Sprintf("CPU %d (cpupri %s) runs nothing the wakee (rt_priority %d) cannot preempt: chosen", d.Prev, lv(d.PrevPri), x.rtprio)})
	} else {
		st = append(st, Tried{"rt_prev", fmt.Sprintf("CPU %d (cpupri %s) runs an RT task the wakee (rt_priority %d) cannot preempt: find_lowest_rq", d.Prev, lv(d.PrevPri), x.rtprio)})
		switch {
		case d.LowestPri < 0:
			st = append(st, Tried{"rt_find_lowest_rq", fmt.Sprintf("cpupri_find: no allowed CPU below rt_priority %d; stays on prev CPU %d", x.rtprio, d.Prev)})
		case d.Stage == engine.StageRTLowest:
			st = append(st, Tried{"rt_find_lowest_rq", fmt.Sprintf("cpupri_find: %d CPUs at the lowest %s; found CPU %d (%s): chosen", d.LowestN, lv(d.LowestPri), d.Chosen, lv(d.ChosenPri))})
		default:
			st = append(st, Tried{"rt_find_lowest_rq", fmt.Sprintf("cpupri_find: %d CPUs at the lowest %s, but the one picked was no lower than the wakee: stays on prev CPU %d", d.LowestN, lv(d.LowestPri), d.Prev)})
		}
	}
	if d.Stage == engine.StageFallback {
		st = append(st, Tried{"fallback", fmt.Sprintf("the CPU chosen is not allowed: select_fallback_rq gave CPU %d", d.Chosen)})
	}
	return st, pr
}

// dlPlacement is a deadline wakee's DLPlacement.
func (l *DecisionLog) dlPlacement(x *rawDecision) *DLPlacement {
	d := &x.d
	o := &DLPlacement{Policy: x.policy.String(), PrevIdle: x.prevIdle, Later: d.Stage == engine.StageDLLater}
	if x.prevDL >= 0 {
		o.PrevDL = l.name(x.prevDL)
	}
	if x.chosenDL >= 0 {
		o.ChosenDL = l.name(x.chosenDL)
	}
	if st := l.sim.DL(); st != nil {
		for _, t := range st.Tasks {
			if t.Task == d.Task {
				o.RuntimeNS, o.DeadlineNS, o.PeriodNS, o.Reclaim = t.RuntimeNS, t.DeadlineNS, t.PeriodNS, t.Reclaim
			}
		}
	}
	return o
}

// DLSelected reports whether select_task_rq_dl made decision d, for a
// deadline wakee: its stages, or its pinned or select_fallback_rq end.
func DLSelected(d *engine.Decision) bool {
	switch d.Stage {
	case engine.StageDLPrev, engine.StageDLLater, engine.StagePinned, engine.StageFallback:
		return true
	}
	return false
}

// dlAffine is wake_affine's part in a deadline wakeup: none.
func dlAffine() (string, string) {
	return "skipped", "a deadline wakee: select_task_rq_dl places it by deadline (EDF over cpudl), with no wake_affine, wake_wide or idle search; target = prev"
}

// dlStages is select_task_rq_dl's path: keep prev unless it runs a
// deadline task the wakee cannot preempt; then find_later_rq over cpudl.
func (l *DecisionLog) dlStages(x *rawDecision, o *DLPlacement) (st []Tried, pr []Probed) {
	d := &x.d
	if d.Stage == engine.StagePinned {
		return append(st, Tried{"pinned", fmt.Sprintf("CPU %d, its only allowed CPU: select_task_rq_dl keeps it there", d.Chosen)}), pr
	}
	running := func(name string, idle bool) string {
		switch {
		case name != "":
			return "runs deadline task " + name
		case idle:
			return "is idle"
		}
		return "runs no deadline task (a fair or RT task, which a deadline task preempts)"
	}
	switch {
	case d.Stage == engine.StageDLLater:
		st = append(st,
			Tried{"dl_prev", fmt.Sprintf("CPU %d %s, whose deadline is no later than the wakee's (or which is pinned there): find_later_rq", d.Prev, running(o.PrevDL, false))},
			Tried{"dl_find_later_rq", fmt.Sprintf("cpudl_find: a CPU without deadline tasks (free_cpus), else the one whose earliest deadline is the latest, and later than the wakee's; found CPU %d, which %s: chosen", d.Chosen, running(o.ChosenDL, d.ChosenIdle))})
	case o.PrevDL == "":
		st = append(st, Tried{"dl_prev", fmt.Sprintf("CPU %d %s: the wakee preempts whatever runs there: chosen", d.Prev, running("", o.PrevIdle))})
	case !d.DLFind:
		st = append(st, Tried{"dl_prev", fmt.Sprintf("CPU %d %s, whose deadline is later than the wakee's: the wakee preempts it: chosen", d.Prev, running(o.PrevDL, false))})
	case d.DLLater < 0:
		st = append(st,
			Tried{"dl_prev", fmt.Sprintf("CPU %d %s, whose deadline is no later than the wakee's (or which is pinned there): find_later_rq", d.Prev, running(o.PrevDL, false))},
			Tried{"dl_find_later_rq", fmt.Sprintf("cpudl_find: no CPU without deadline tasks and none whose earliest deadline is later than the wakee's: stays on CPU %d, chosen", d.Chosen)})
	default:
		st = append(st,
			Tried{"dl_prev", fmt.Sprintf("CPU %d %s, whose deadline is no later than the wakee's (or which is pinned there): find_later_rq", d.Prev, running(o.PrevDL, false))},
			Tried{"dl_find_later_rq", fmt.Sprintf("found CPU %d, but its earliest deadline is no later than the wakee's (it changed since cpudl was read): stays on CPU %d, chosen", d.DLLater, d.Chosen)})
	}
	if d.Stage == engine.StageFallback {
		st = append(st, Tried{"fallback", fmt.Sprintf("the CPU chosen is not allowed: select_fallback_rq gave CPU %d", d.Chosen)})
	}
	return st, pr
}

// delayedResult is the panel's outcome of a delayed_requeue decision: the
// wakee requeued on cpu, its previous CPU, without select_task_rq.
func delayedResult(cpu int) string {
	return fmt.Sprintf("requeued on prev CPU %d, no select_task_rq", cpu)
}

// stages reconstructs select_idle_sibling's path from the decision: the
// candidates in order (target, prev, recent_used_cpu), then the scans,
// with each probe attributed to the stage that made it.
func (l *DecisionLog) stages(x *rawDecision) (st []Tried, pr []Probed) {
	d, recent := &x.d, x.recent
	tp := l.sim.Topology()
	probes := d.Probes
	k := 0
	add := func(stage string, n int) {
		for ; n > 0 && k < len(probes); n-- {
			pr = append(pr, Probed{CPU: probes[k], Stage: stage, State: l.stateName(x.states[k])})
			k++
		}
	}
	res := func(ok bool, cpu int) string {
		if ok {
			return fmt.Sprintf("CPU %d idle: chosen", cpu)
		}
		return fmt.Sprintf("CPU %d busy", cpu)
	}
	if l.Policy != "" && d.Stage != engine.StageDelayed && d.Stage != engine.StagePinned && d.Stage != engine.StageFallback {
		return l.policyStages(x)
	}
	switch d.Stage {
	case engine.StageDelayed:
		// Era 6.12: ttwu_runnable found the wakee still queued (delayed)
		// and requeued it where it was; nothing was searched.
		return append(st, Tried{"delayed", delayedResult(d.Chosen)}), pr
	case engine.StagePinned:
		return append(st, Tried{"pinned", fmt.Sprintf("CPU %d, its only allowed CPU", d.Chosen)}), pr
	case engine.StageFallback:
		st = append(st, Tried{"fallback", fmt.Sprintf("the search chose a CPU the wakee may not use: select_fallback_rq gave CPU %d", d.Chosen)})
	}
	stage := d.Stage
	if stage == engine.StageFallback {
		stage = engine.StageBusyTarget // the search's own end is not recorded
	}
	// 1. target
	add("target", 1)
	st = append(st, Tried{"target", res(stage == engine.StageTarget, d.Target)})
	if stage == engine.StageTarget {
		return st, pr
	}
	// 2. prev, when it shares the LLC with target
	if d.Prev != d.Target && tp.ShareCache(d.Prev, d.Target) {
		add("prev", 1)
		st = append(st, Tried{"prev", res(stage == engine.StagePrev, d.Prev)})
		if stage == engine.StagePrev {
			return st, pr
		}
	} else {
		st = append(st, Tried{"prev", "skipped (same as target, or another LLC)"})
	}
	// 3. recent_used_cpu
	if stage == engine.StageRecent {
		add("recent_used_cpu", 1)
		return append(st, Tried{"recent_used_cpu", res(true, d.Chosen)}), pr
	}
	if recent >= 0 && recent != d.Prev && recent != d.Target && tp.ShareCache(recent, d.Target) && k < len(probes) && probes[k] == recent {
		add("recent_used_cpu", 1)
		st = append(st, Tried{"recent_used_cpu", res(false, recent)})
	} else {
		st = append(st, Tried{"recent_used_cpu", "skipped (none, or not a new candidate in target's LLC)"})
	}
	if stage == engine.StageNoLLC {
		return append(st, Tried{"no LLC", "target has no LLC domain: target it is"}), pr
	}
	rest := len(probes) - k
	smt := 0
	switch stage {
	case engine.StageBusyTarget:
		smt = tp.SiblingsOf(d.Target).Weight()
	case engine.StageIdleSMT:
		sib := tp.SiblingsOf(d.Target)
		for c := sib.First(); c >= 0; c = sib.Next(c + 1) {
			smt++
			if c == d.Chosen {
				break
			}
		}
	}
	cpuN := d.SISProbes
	if stage == engine.StageIdleCore {
		cpuN, smt = 0, 0
	}
	if d.SISCalled && !d.SISCutShort && stage != engine.StageIdleCPU && stage != engine.StageIdleCore && stage != engine.StageIdleSMT && stage != engine.StageBusyTarget {
		cpuN = d.SISProbes
	}
	coreN := max(0, rest-cpuN-smt)
	sisCore := x.sisCore
	// 4. select_idle_core
	switch {
	case !sisCore:
		st = append(st, Tried{"select_idle_core", "skipped (SIS_CORE off)"})
	case stage == engine.StageIdleCore:
		add("select_idle_core", rest)
		st = append(st, Tried{"select_idle_core", fmt.Sprintf("found idle core of CPU %d after %d probes", d.Chosen, rest)})
		return st, pr
	case coreN == 0:
		st = append(st, Tried{"select_idle_core", "skipped (the LLC's has_idle_cores hint is off)"})
	default:
		add("select_idle_core", coreN)
		st = append(st, Tried{"select_idle_core", fmt.Sprintf("no idle core in %d probes (clears has_idle_cores)", coreN)})
	}
	// 5. select_idle_cpu
	limit := "no limit"
	if d.SISLimit < 1<<30 {
		limit = fmt.Sprintf("limit nr=%d", d.SISLimit)
	}
	switch {
	case !d.SISCalled:
		st = append(st, Tried{"select_idle_cpu", "skipped (avg_idle below the scan cost, or the LLC judged overloaded)"})
	case stage == engine.StageIdleCPU:
		add("select_idle_cpu", cpuN)
		st = append(st, Tried{"select_idle_cpu", fmt.Sprintf("found CPU %d after %d probes (%s)", d.Chosen, cpuN, limit)})
		return st, pr
	case d.SISCutShort:
		add("select_idle_cpu", cpuN)
		st = append(st, Tried{"select_idle_cpu", fmt.Sprintf("gave up after %d probes (%s ran out)", cpuN, limit)})
	default:
		add("select_idle_cpu", cpuN)
		st = append(st, Tried{"select_idle_cpu", fmt.Sprintf("no idle CPU in %d probes (%s)", cpuN, limit)})
	}
	// 6. select_idle_smt
	if stage == engine.StageIdleSMT {
		add("select_idle_smt", len(probes)-k)
		return append(st, Tried{"select_idle_smt", fmt.Sprintf("found idle sibling CPU %d", d.Chosen)}), pr
	}
	add("select_idle_smt", len(probes)-k)
	st = append(st, Tried{"select_idle_smt", "no idle sibling of target"})
	return append(st, Tried{"busy target", fmt.Sprintf("nothing idle found: CPU %d (busy) it is", d.Target)}), pr
}

// policyStages is a wake policy's decision: every CPU probed, in order,
// each labelled with the code that probed it (the policy itself, a
// kernel stage it called, or the era's own code around a hook), and the
// CPU it returned with the stage it named ("policy" for none).
func (l *DecisionLog) policyStages(x *rawDecision) (st []Tried, pr []Probed) {
	d := &x.d
	for k, c := range d.Probes {
		if k >= len(x.states) {
			break
		}
		by := "policy"
		if k < len(x.by) {
			by = x.by[k]
		}
		pr = append(pr, Probed{CPU: c, Stage: by, State: l.stateName(x.states[k])})
	}
	idle := "busy"
	if d.ChosenIdle {
		idle = "idle"
	}
	st = append(st, Tried{"policy", fmt.Sprintf("%s probed %d CPU(s) and returned CPU %d (%s)", l.Policy, len(d.Probes), d.Chosen, idle)})
	if d.Stage != engine.StagePolicy {
		st = append(st, Tried{d.Stage.String(), fmt.Sprintf("CPU %d: chosen (the stage the policy named)", d.Chosen)})
	}
	return st, pr
}
