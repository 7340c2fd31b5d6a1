package engine

import (
	"math"

	"schedplay/engine/knob"
)

// The wakeup path's shared parts (kernel-reference.md §1.2–1.5): the
// decision record and its stages, the probes and their costs,
// select_fallback_rq, record_wakee and wake_wide. v5.2's own steps are in
// wakeup52.go, v6.6's in wakeup66.go.

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
	numStages
)

var stageNames = [numStages]string{
	"target", "prev", "recent_used_cpu", "select_idle_core", "select_idle_cpu",
	"select_idle_smt", "busy_target", "no_llc", "fallback", "pinned",
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
}

// probe is available_idle_cpu with bookkeeping: every check is recorded and
// paid for. The k-th probe of a search happens when the earlier ones are
// done, so a line another searcher is fetching at that moment costs a wait.
func (s *Sim) probe(cpu int) bool {
	s.probeBuf = append(s.probeBuf, cpu)
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
	s.scanner, s.scanCost = this, 0
	prev := p.cpu
	if prev < 0 {
		prev = this
	}
	d.Prev = prev
	return d, prev
}
