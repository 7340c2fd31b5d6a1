package engine

import (
	"math"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The wakeup path's shared parts (kernel-reference.md §1.2–1.5): the
// decision record and its stages, the probes and their costs,
// select_fallback_rq, record_wakee, wake_wide, and select_task_rq_fair and
// wake_affine, whose differences between the fair classes' eras are the
// era's fairRules. v5.2's own select_idle_sibling is in wakeup52.go, v6.6's
// in wakeup66.go.

// domImbalancePct is v5.2's sd_init imbalance_pct, as the topology builds
// its domains (machine.Domain.ImbalancePct).
func domImbalancePct(d *machine.Domain) int64 { return d.ImbalancePct }

// selectTaskRqFair is select_task_rq_fair for a wakeup (WF_TTWU) of p issued
// on CPU this by cur (the waking task, or the interrupted/idle task for a
// timer): wake_wide, the affine domain walk and wake_affine, then the era's
// select_idle_sibling. The returned Decision is scratch space reused by the
// next call.
func (s *Sim) selectTaskRqFair(p *Task, this int, cur *Task, sync bool) *Decision {
	d, prev := s.beginDecision(p, this, cur, sync)
	if p.nrAllowed == 1 {
		// select_task_rq (core.c): the class hook runs only when
		// p->nr_cpus_allowed > 1; a pinned task goes to its CPU without
		// touching wakee_flips, recent_used_cpu, has_idle_cores or
		// avg_scan_cost.
		c := p.allowed.First()
		d.Target, d.Chosen, d.Stage = c, c, StagePinned
		d.ChosenIdle = s.cpus[c].idle()
		d.Probes = s.probeBuf
		s.stats.pinnedWakeups++
		return d
	}

	s.recordWakee(cur, p)
	d.WakeWide = s.wakeWide(cur, p, this)
	wantAffine := !d.WakeWide && p.allowed.Test(this)
	d.WantAffine = wantAffine
	newCPU := prev
	for _, dom := range s.topo.Domains[this] {
		// No level has SD_BALANCE_WAKE, so the walk either finds the
		// lowest SD_WAKE_AFFINE domain spanning this and prev, or stops
		// at once when affine wakeups are not wanted. A NUMA level whose
		// distance is above the reclaim distance has no SD_WAKE_AFFINE
		// (sd_init, numadist.go): the walk passes it, so a wakee whose
		// prev is on another node is not pulled across and new_cpu
		// stays prev (select_task_rq_fair, v5.2 and 6.x).
		if !wantAffine {
			break
		}
		if !s.sdWakeAffine(dom) {
			continue
		}
		if dom.Span.Test(prev) {
			if this != prev {
				newCPU = s.wakeAffine(dom, p, this, prev, sync, cur)
			}
			break
		}
	}
	d.Target = newCPU
	var chosen int
	var stage Stage
	if !s.policyHook(HookSelectIdleSibling) {
		chosen, stage = s.fair.selectIdleSibling(s, p, prev, newCPU, cur, d)
	} else {
		chosen, stage = s.policySelectIdleSibling(p, prev, newCPU, cur, d)
	}
	if wantAffine && s.fair.wakerRecentUsed {
		cur.recentUsedCPU = this
	}
	if !p.allowed.Test(chosen) {
		chosen = s.fallbackCPU(p, chosen)
		stage = StageFallback
	}
	return s.finishDecision(d, chosen, stage)
}

// finishDecision records a wakeup's placement: d completed with the chosen
// CPU and stage, counted, traced, remembered and handed to the hook.
func (s *Sim) finishDecision(d *Decision, chosen int, stage Stage) *Decision {
	d.Chosen, d.Stage = chosen, stage
	d.ChosenIdle = s.cpus[chosen].idle()
	d.Probes = s.probeBuf
	d.Cost = s.scanCost
	s.stats.recordDecision(d)
	s.trace.add(d)
	s.rememberDecision(d)
	if s.hooks.OnWakeup != nil {
		s.hooks.OnWakeup(d)
	}
	return d
}

// wakeAffine is wake_affine: wake_affine_idle, then wake_affine_weight;
// prev unless one of them chose this (an idle prev chosen by
// wake_affine_idle is prev too).
func (s *Sim) wakeAffine(dom *machine.Domain, p *Task, this, prev int, sync bool, cur *Task) int {
	target := -1
	if s.k.On(knob.WA_IDLE) {
		target = s.wakeAffineIdle(this, prev, sync)
	}
	if s.k.On(knob.WA_WEIGHT) && target < 0 {
		target = s.wakeAffineWeight(dom, p, this, prev, sync, cur)
	}
	if target != this {
		return prev
	}
	return this
}

// wakeAffineIdle is wake_affine_idle: this when it is idle and shares
// prev's cache (prev if that is idle too), or on a sync wakeup when the
// waker is alone there; -1 when it cannot tell.
func (s *Sim) wakeAffineIdle(this, prev int, sync bool) int {
	if s.cpus[this].idle() && s.topo.ShareCache(this, prev) {
		if s.cpus[prev].idle() {
			return prev
		}
		return this
	}
	// The waker alone on its CPU: nr_running less the delayed tasks
	// (6.12, backport "Fixup wake_up_sync() vs DELAYED_DEQUEUE"; other
	// eras have none).
	if sync && s.cpus[this].nr-s.cpus[this].nrDelayed == 1 {
		return this
	}
	if s.fair.affineIdlePrev && s.cpus[prev].idle() {
		return prev
	}
	return -1
}

// cpuLoad is the runqueue load wake_affine_weight compares: cpu_load()
// (load_avg) or v5.2's runnable_load_avg.
func (s *Sim) cpuLoad(c *cpu) int64 {
	if s.fair.cpuLoadAvg {
		return c.loadAvg.at(s.now)
	}
	return c.runnableLoad.at(s.now)
}

// wakeAffineWeight is wake_affine_weight: this when its load with the
// wakee (less the waker's on a sync wakeup), scaled by the domain's
// imbalance, is below prev's without it; -1 otherwise.
func (s *Sim) wakeAffineWeight(dom *machine.Domain, p *Task, this, prev int, sync bool, cur *Task) int {
	thisEff := s.cpuLoad(s.cpus[this])
	if sync {
		curLoad := int64(0)
		if cur.ID >= 0 {
			curLoad = cur.load.at(s.now)
		}
		if curLoad > thisEff {
			return this
		}
		thisEff -= curLoad
	}
	// The wakee's load is as it was when it went to sleep: the kernel does
	// not decay a sleeping task's signal before this test (task_h_load).
	tl := p.load.avg
	thisEff += tl
	if s.k.On(knob.WA_BIAS) {
		thisEff *= 100
	}
	thisEff *= s.cpus[prev].capacity // capacity_of(prev): 1024 less RT/deadline time (rtcap.go)
	prevEff := s.cpuLoad(s.cpus[prev]) - tl
	if s.k.On(knob.WA_BIAS) {
		prevEff *= 100 + (s.fair.imbalancePct(dom)-100)/2
	}
	prevEff *= s.cpus[this].capacity // capacity_of(this)
	if sync {
		prevEff++
	}
	if thisEff < prevEff {
		return this
	}
	return -1
}

// Stage names the step of select_idle_sibling that chose the CPU, with the
// kernel's function names so a kernel developer recognises them.
type Stage uint8

const (
	StageTarget     Stage = iota // the target itself was idle
	StagePrev                    // prev, cache-affine and idle
	StageRecent                  // p->recent_used_cpu, idle
	StageIdleCore                // select_idle_core found an idle core
	StageIdleCPU                 // select_idle_cpu found an idle CPU
	StageIdleSMT                 // select_idle_smt found an idle sibling of target
	StageBusyTarget              // nothing idle found: the (busy) target
	StageNoLLC                   // target has no LLC domain (uniprocessor)
	StageFallback                // target not allowed: select_fallback_rq
	StagePinned                  // one allowed CPU: select_task_rq_fair is not called
	StageDelayed                 // 6.12: a delayed task requeued on prev by ttwu_runnable, no select_task_rq
	StageRTPrev                  // select_task_rq_rt kept the RT task on its CPU
	StageRTLowest                // select_task_rq_rt moved it to find_lowest_rq's CPU
	StageDLPrev                  // select_task_rq_dl kept the deadline task on its CPU
	StageDLLater                 // select_task_rq_dl moved it to find_later_rq's CPU
	StagePolicy                  // a wake policy (policy.go) chose it, naming none of the kernel's stages
	numStages
)

var stageNames = [numStages]string{
	"target", "prev", "recent_used_cpu", "select_idle_core", "select_idle_cpu",
	"select_idle_smt", "busy_target", "no_llc", "fallback", "pinned", "delayed_requeue",
	"rt_prev", "rt_find_lowest_rq", "dl_prev", "dl_find_later_rq", "policy",
}

func (s Stage) String() string { return stageNames[s] }

// StageNames lists every stage name in order.
func StageNames() []string { return stageNames[:] }

// Decision records one wakeup placement.
type Decision struct {
	Time       int64
	Task       TaskID
	Waker      TaskID // -1 when woken from interrupt (timer)
	WakerCPU   int
	Prev       int // the wakee's previous CPU
	Target     int // wake_affine's choice, the start of the idle search
	Chosen     int
	Stage      Stage
	Sync       bool
	WakeWide   bool
	WantAffine bool
	// Probes lists every CPU whose idleness select_idle_sibling checked,
	// in order. In a Hooks callback it is only valid during the call.
	Probes []int
	// SISCalled reports whether select_idle_cpu ran its scan loop;
	// SISProbes is how many CPUs that loop checked; SISCutShort that the
	// nr budget ran out (such scans do not update avg_scan_cost).
	SISCalled   bool
	SISProbes   int
	SISCutShort bool
	SISLimit    int // the nr budget (math.MaxInt32 when unlimited)
	// ChosenIdle reports whether the chosen CPU was idle at decision time.
	ChosenIdle bool
	// Cost is the CPU time the search cost the waker: per CPU examined,
	// probe_ns plus fetching that CPU's runqueue line (line.go).
	Cost int64
	// RT wakeups (select_task_rq_rt, stages rt_prev, rt_find_lowest_rq
	// and a fallback from them) only; zero for the fair class. PrevPri
	// and ChosenPri are the cpupri levels of prev and of the chosen CPU
	// at the decision (0: running fair tasks or idle, 1..99: the
	// rt_priority of its highest RT task). RTFind says prev ran an RT
	// task the wakee could not preempt, so find_lowest_rq was asked;
	// LowestPri is the level of the mask its cpupri_find found and
	// LowestN that mask's CPUs (LowestPri -1: nothing below the wakee).
	PrevPri, ChosenPri int
	RTFind             bool
	LowestPri, LowestN int
	// Deadline wakeups (select_task_rq_dl) only: DLFind says prev ran a
	// deadline task the wakee could not preempt (or one pinned there), so
	// find_later_rq was asked; DLLater is the CPU it returned (-1: none),
	// which the wakee takes only if its deadline is earlier than that
	// CPU's earliest (stage dl_find_later_rq).
	DLFind  bool
	DLLater int
}

// probe is available_idle_cpu with bookkeeping: every check is recorded and
// paid for. The k-th probe of a search happens when the earlier ones are
// done, so a line another searcher is fetching at that moment costs a wait.
func (s *Sim) probe(cpu int) bool {
	s.probeBuf = append(s.probeBuf, cpu)
	if s.phooks != 0 {
		s.probeBy = append(s.probeBy, s.probeLabel)
	}
	c := s.cpus[cpu]
	s.scanCost += s.probeNS + s.readLine(s.scanner, c, s.now+s.scanCost)
	return c.idle()
}

// fallbackCPU is select_fallback_rq: the first allowed CPU of the same LLC,
// else of the machine.
func (s *Sim) fallbackCPU(p *Task, near int) int {
	llc := s.topo.LLCOf(near)
	for c := llc.First(); c >= 0; c = llc.Next(c + 1) {
		if p.allowed.Test(c) {
			return c
		}
	}
	return p.allowed.First()
}

// recordWakee is record_wakee: count how often the waker switches wakee,
// halving the count once a second.
func (s *Sim) recordWakee(waker, p *Task) {
	jiffies := s.now / s.tickNS
	hz := s.k.Get(knob.HZ)
	if jiffies > waker.flipDecayTS+hz {
		waker.wakeeFlips >>= 1
		waker.flipDecayTS = jiffies
	}
	if waker.lastWakee != p.ID {
		waker.lastWakee = p.ID
		waker.wakeeFlips++
	}
}

// wakeWide detects M:N waker/wakee relations whose fan-out exceeds the LLC:
// such wakees are not pulled towards the waker.
func (s *Sim) wakeWide(cur, p *Task, this int) bool {
	factor := int64(s.topo.LLCSize(this))
	master, slave := cur.wakeeFlips, p.wakeeFlips
	if master < slave {
		master, slave = slave, master
	}
	if slave < factor || master < slave*factor {
		return false
	}
	return true
}

// steal charges ns of interrupt time to c: its current task makes no
// progress meanwhile.
func (s *Sim) steal(c *cpu, ns int64) {
	s.settle(c)
	c.segStart = max(c.segStart, s.now) + ns
	s.armPhase(c)
}

// recordWakeLatency ends a wakeup-latency measurement: t has just got the
// CPU back after a wakeup.
func (s *Sim) recordWakeLatency(t *Task) {
	lat := s.now - t.wokenAt
	t.wokenAt = -1
	s.workloads[t.workload].recordWake(lat / Microsecond)
	s.stats.wakeLatNS += lat
	s.stats.wakeLatCount++
}

// beginDecision starts the Decision record of a wakeup of p issued on CPU
// this (the same in every era): who wakes whom, its previous CPU (this
// CPU for a task that never ran) and a fresh probe scan charged to this.
func (s *Sim) beginDecision(p *Task, this int, cur *Task, sync bool) (*Decision, int) {
	d := &s.dec
	*d = Decision{Time: s.now, Task: p.ID, Waker: cur.ID, WakerCPU: this, Sync: sync, SISLimit: math.MaxInt32}
	if cur.ID < 0 {
		d.Waker = -1
	}
	s.probeBuf = s.probeBuf[:0]
	s.probeBy, s.probeLabel = s.probeBy[:0], labelKernel
	s.scanner, s.scanCost = this, 0
	prev := p.cpu
	if prev < 0 {
		prev = this
	}
	d.Prev = prev
	return d, prev
}
