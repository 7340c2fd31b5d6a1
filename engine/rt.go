package engine

import (
	"fmt"
	"math/bits"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
)

// The real-time class (SCHED_FIFO, SCHED_RR) of kernel/sched/rt.c and
// cpupri.c, as v5.2 (wangliang-cs/linux-5.2.1) and 6.x (Debian's
// linux-source-6.12, 6.12.118) have it for what is modelled here: the
// priority array with its bitmap, wakeup preemption of the fair class,
// SCHED_RR's tick-counted timeslice, select_task_rq_rt with
// find_lowest_rq over cpupri, push_rt_task and pull_rt_task, and RT
// throttling by the RT bandwidth timer (sched_rt_runtime_us per
// sched_rt_period_us, RT_RUNTIME_SHARE). The class sits above each era's
// fair class in rtStack (class_rt.go); a run without an RT task never
// builds it, so the fair eras run exactly as before.
//
// The RT PELT signal (avg_rt) and the capacity the fair balancer loses to
// RT time (scale_rt_capacity) are in rtcap.go.
//
// Not modelled (README, "The RT class"): the latency of RT_PUSH_IPI's
// IPI chain (its pushes happen at once), check_preempt_equal_prio,
// RT group scheduling, priority inheritance.

// Policy is a task's scheduling policy.
type Policy uint8

const (
	// PolicyNormal is SCHED_OTHER: the era's fair class.
	PolicyNormal Policy = iota
	// PolicyFIFO is SCHED_FIFO: runs until it blocks or a higher
	// priority preempts it.
	PolicyFIFO
	// PolicyRR is SCHED_RR: SCHED_FIFO with a timeslice among equals.
	PolicyRR
	// PolicyDeadline is SCHED_DEADLINE: a constant bandwidth server of
	// TaskSpec.DL's runtime per period, scheduled earliest deadline
	// first (dl.go).
	PolicyDeadline
)

var policyNames = [...]string{"normal", "fifo", "rr", "deadline"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", p)
}

// maxRTPrio is MAX_RT_PRIO: rt_priority 1..99 maps to kernel prio 98..0.
const maxRTPrio = 100

// rt reports whether t is in the RT class of rt.go (a SCHED_FIFO/RR task
// of an era whose fair class has no RT priorities of its own).
func (t *Task) rt() bool { return t.inRT }

// rtPolicy reports whether t is SCHED_FIFO or SCHED_RR, in whichever
// class: rt.go's, or 2.6.7's O(1) arrays.
func (t *Task) rtPolicy() bool { return t.policy == PolicyFIFO || t.policy == PolicyRR }

// kprio is the kernel's p->prio: -1 for a deadline task, 99 -
// rt_priority for an RT task, 120 + nice for a fair one (lower is more
// important).
func (t *Task) kprio() int {
	if t.dl() {
		return -1 // MAX_DL_PRIO - 1
	}
	if t.rtPolicy() {
		return maxRTPrio - 1 - t.rtPrio
	}
	return 120 + t.Nice
}

// Policy returns the task's scheduling policy; RTPrio its rt_priority.
func (t *Task) Policy() Policy { return t.policy }

// RTPrio returns the task's rt_priority (0 for a fair task).
func (t *Task) RTPrio() int { return t.rtPrio }

// rtRQ is struct rt_rq: the priority array (one FIFO list per prio and a
// bitmap of the non-empty ones) holding every RT task of the CPU,
// curr included, as the kernel keeps it; and the RT bandwidth state.
type rtRQ struct {
	queue  [maxRTPrio][]*Task
	bitmap [2]uint64
	// nrTotal is rt_nr_running: the tasks on the array. The CPU's
	// cpu.rtNr is the same while not throttled and 0 while throttled
	// (sched_rt_rq_dequeue takes them off rq->nr_running).
	nrTotal int
	// rtTime is the RT time run in the current period; runtime is
	// rt_rq->rt_runtime, which RT_RUNTIME_SHARE moves between CPUs.
	rtTime    int64
	runtime   int64
	throttled bool
}

// highest is rt.highest_prio.curr: the kernel prio of the first task of
// the array, maxRTPrio when it is empty.
func (r *rtRQ) highest() int { return findFirstBit(r.bitmap[:], maxRTPrio) }

// findFirstBit is sched_find_first_bit, the priority arrays' lookup (rt.c's and 2.6.7's
// O(1) arrays): the lowest set bit of bitmap, none when it is empty.
func findFirstBit(bitmap []uint64, none int) int {
	for w, b := range bitmap {
		if b != 0 {
			return w*64 + bits.TrailingZeros64(b)
		}
	}
	return none
}

// rtState is the Sim's RT class state, built at the first RT task.
type rtState struct {
	periodNS, runtimeNS int64 // -1 runtime: RUNTIME_INF
	rrTicks             int   // sched_rr_timeslice in jiffies
	share               bool  // RT_RUNTIME_SHARE
	pushIPI             bool  // RT_PUSH_IPI
	timerOn             bool  // the RT period timer is armed
	mask                cpumask.Mask
	// lowPri and lowN are the level and weight of the mask the last
	// cpupri_find left (lowN 0: none found), for the wakeup decision.
	lowPri, lowN int
	// Statistics.
	pushes, pulls, throttles int64
}

// rtTimerSlot is the event-queue slot of the RT period timer.
func (s *Sim) rtTimerSlot() int { return 3 * s.topo.NCPU }

// enableRT builds the RT class at the first RT task: the RT runqueues and
// the class stack above the era's fair class.
func (s *Sim) enableRT() error {
	if s.rt != nil {
		return nil
	}
	if why := s.rules.noRT; why != "" {
		return fmt.Errorf("engine: era %s does not model SCHED_FIFO/SCHED_RR yet: %s", s.era, why)
	}
	if s.rules.fairServer {
		// The fair class's share under RT load is its server's.
		if err := s.enableDL(); err != nil {
			return err
		}
	}
	r := &rtState{
		periodNS: s.k.Get(knob.SchedRTPeriodUS) * Microsecond,
		share:    s.k.On(knob.RT_RUNTIME_SHARE), pushIPI: s.k.On(knob.RT_PUSH_IPI),
		mask: cpumask.New(s.topo.NCPU),
	}
	r.runtimeNS = s.k.Get(knob.SchedRTRuntimeUS)
	if s.rules.rtNoBandwidth {
		r.runtimeNS = -1 // update_curr_rt throttles only under CONFIG_RT_GROUP_SCHED
	}
	if r.runtimeNS >= 0 {
		r.runtimeNS = min(r.runtimeNS*Microsecond, r.periodNS)
	}
	// sched_rr_timeslice = msecs_to_jiffies(sched_rr_timeslice_ms),
	// at least one tick.
	r.rrTicks = max(1, int(s.k.Get(knob.SchedRRTimesliceMS)*Millisecond/s.tickNS))
	for _, c := range s.cpus {
		c.rt = &rtRQ{runtime: r.runtimeNS}
	}
	s.rt = r
	if k, ok := s.class.(dlStack); ok {
		k.next = rtStack{k.next, s} // rt_sched_class sits below dl_sched_class
		s.class = k
	} else {
		s.class = rtStack{s.class, s}
	}
	return nil
}

// rtEnqueue puts t on c's priority array (enqueue_task_rt), at the tail
// of its prio's list, or at the head for a task put back.
func (s *Sim) rtEnqueue(c *cpu, t *Task, head bool) {
	s.writeLine(s.actor, c, s.now)
	r := c.rt
	p := t.kprio()
	if head {
		r.queue[p] = append(r.queue[p], nil)
		copy(r.queue[p][1:], r.queue[p])
		r.queue[p][0] = t
	} else {
		r.queue[p] = append(r.queue[p], t)
	}
	r.bitmap[p/64] |= 1 << (p % 64)
	r.nrTotal++
	if !r.throttled {
		c.rtNr = r.nrTotal
	}
	t.state = TaskRunnable
	t.cpu = c.id
	s.startRTTimer()
	s.updateConservation(c)
}

// rtDequeue takes t off c's priority array (dequeue_task_rt).
func (s *Sim) rtDequeue(c *cpu, t *Task) {
	s.writeLine(s.actor, c, s.now)
	r := c.rt
	p := t.kprio()
	q := r.queue[p]
	for i, x := range q {
		if x == t {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			r.queue[p] = q[:len(q)-1]
			break
		}
	}
	if len(r.queue[p]) == 0 {
		r.bitmap[p/64] &^= 1 << (p % 64)
	}
	r.nrTotal--
	if !r.throttled {
		c.rtNr = r.nrTotal
	}
	s.updateConservation(c)
}

// rtPick is pick_task_rt: the first task of the highest non-empty list,
// unless the RT runqueue is throttled.
func (s *Sim) rtPick(c *cpu) *Task {
	if c.rtNr == 0 {
		return nil
	}
	return c.rt.queue[c.rt.highest()][0]
}

// cpupriLevel is the CPU's cpupri level as 6.x numbers them
// (cpupri.h: CPUPRI_NORMAL 0, RT1..RT99 as 1..99): the rt_priority of its
// highest RT task, 0 for a CPU running only fair tasks or idle. v5.2
// numbers the same levels one higher with a CPUPRI_IDLE below them that
// nothing sets (convert_prio maps only MAX_PRIO to it), so both eras
// treat an idle CPU and one running a fair task alike.
func (s *Sim) cpupriLevel(c *cpu) int {
	h := c.rt.highest()
	if h >= maxRTPrio {
		return 0
	}
	return maxRTPrio - 1 - h
}

// cpupriFind is cpupri_find: the allowed CPUs of the lowest cpupri level
// below p's, into s.rt.mask; it returns that level, or -1 when every
// allowed CPU runs something of p's priority or above. The kernel walks
// the levels from the bottom and takes the first holding an allowed CPU,
// which is the lowest level over the allowed CPUs.
func (s *Sim) cpupriFind(p *Task) int {
	low := p.rtPrio
	for i := p.allowed.First(); i >= 0; i = p.allowed.Next(i + 1) {
		low = min(low, s.cpupriLevel(s.cpus[i]))
	}
	if low >= p.rtPrio {
		return -1
	}
	m := s.rt.mask
	m.AndNot(m)
	n := 0
	for i := p.allowed.First(); i >= 0; i = p.allowed.Next(i + 1) {
		if s.cpupriLevel(s.cpus[i]) == low {
			m.Set(i)
			n++
		}
	}
	s.rt.lowPri, s.rt.lowN = low, n
	return low
}

// findLowestRQ is find_lowest_rq for p, run on CPU this: p's own CPU when
// it is among the lowest, else this CPU when a wake-affine domain of p's
// CPU spans it, else the first (6.x: the next, rotating) lowest CPU of the
// smallest such domain, else anything lowest. -1: none.
func (s *Sim) findLowestRQ(p *Task, this int) int {
	s.rt.lowPri, s.rt.lowN = -1, 0
	if p.nrAllowed == 1 {
		return -1
	}
	s.scanCost += s.probeNS // cpupri_find: the vectors' counts and masks
	if s.cpupriFind(p) < 0 {
		return -1
	}
	return s.affineFromMask(s.rt.mask, p.cpu, this)
}

// affineFromMask is what find_lowest_rq and find_later_rq do with the
// mask of candidate CPUs m for a task on CPU cpu, run on CPU this: cpu
// itself when it is a candidate, else this CPU when a wake-affine domain
// of cpu spans it, else the first (6.x: the next, rotating) candidate of
// the smallest such domain, else this CPU, else any candidate.
func (s *Sim) affineFromMask(m cpumask.Mask, cpu, this int) int {
	if cpu >= 0 && m.Test(cpu) {
		return cpu
	}
	on := this // smp_processor_id(), whose distribute_cpu_mask_prev turns
	if !m.Test(this) {
		this = -1
	}
	if cpu >= 0 {
		for _, dom := range s.topo.Domains[cpu] {
			if !s.sdWakeAffine(dom) {
				continue
			}
			if this >= 0 && dom.Span.Test(this) {
				return this
			}
			if best := s.anyAnd(m, dom.Span, on); best >= 0 {
				return best
			}
		}
	}
	if this >= 0 {
		return this
	}
	return s.anyAnd(m, s.topo.All, on)
}

// anyAnd is cpumask_first_and (v5.2) or cpumask_any_and_distribute
// (6.x, run on CPU on: the next CPU of a and b after the one it returned
// last, wrapping) over masks a and b; -1 when they do not meet.
func (s *Sim) anyAnd(a, b cpumask.Mask, on int) int {
	if !s.rules.rtDistribute {
		for i := a.First(); i >= 0; i = a.Next(i + 1) {
			if b.Test(i) {
				return i
			}
		}
		return -1
	}
	c := s.cpus[on]
	n := s.topo.NCPU
	for k := 1; k <= n; k++ {
		i := (c.distPrev + k) % n
		if a.Test(i) && b.Test(i) {
			c.distPrev = i
			return i
		}
	}
	return -1
}

// selectTaskRqRT is select_task_rq_rt for a wakeup of p issued on CPU
// this by cur, recorded as a wakeup decision (selectRTCPU).
func (s *Sim) selectTaskRqRT(p *Task, this int, cur *Task, sync bool) *Decision {
	d, _, pinned := s.beginClassDecision(p, this, cur, sync)
	if pinned {
		return d
	}
	cpu, stage := s.selectRTCPU(p, this, d)
	return s.finishDecision(d, cpu, stage)
}

// beginClassDecision starts the wakeup decision of the RT and deadline
// classes' select_task_rq for p: its previous CPU as the target; a task
// with one allowed CPU is decided there (select_task_rq is not called:
// pinned), and reported so.
func (s *Sim) beginClassDecision(p *Task, this int, cur *Task, sync bool) (d *Decision, prev int, pinned bool) {
	d, prev = s.beginDecision(p, this, cur, sync)
	d.Target = prev
	if p.nrAllowed == 1 {
		c := p.allowed.First()
		d.Target = c
		return s.finishDecision(d, c, StagePinned), prev, true
	}
	if p.cpu < 0 {
		p.cpu = prev
	}
	return d, prev, false
}

// selectRTCPU is select_task_rq_rt's choice for p (on CPU p.cpu), run on
// CPU this: p stays on its CPU unless that CPU runs an RT task p cannot
// preempt (or one pinned there); then find_lowest_rq may move it to a CPU
// running something of lower priority. d, when not nil (a wakeup, not a
// fork), gets the cpupri levels of prev and the chosen CPU and
// cpupri_find's lowest mask.
func (s *Sim) selectRTCPU(p *Task, this int, d *Decision) (int, Stage) {
	prev := p.cpu
	pc := s.cpus[prev]
	s.scanCost += s.readLine(this, pc, s.now) // READ_ONCE(rq->curr)
	cpu, stage := prev, StageRTPrev
	if d != nil {
		d.PrevPri, d.LowestPri = s.cpupriLevel(pc), -1
	}
	// rt_task(curr) holds for a deadline curr too (its prio is -1).
	if curr := pc.curr; curr != nil && (curr.rt() || curr.dl()) && (curr.nrAllowed < 2 || curr.kprio() <= p.kprio()) {
		target := s.findLowestRQ(p, this)
		if d != nil {
			d.RTFind, d.LowestPri, d.LowestN = true, s.rt.lowPri, s.rt.lowN
		}
		if target >= 0 {
			tc := s.cpus[target]
			s.scanCost += s.readLine(this, tc, s.now+s.scanCost) // highest_prio.curr
			if p.kprio() < tc.rt.highest() {
				cpu, stage = target, StageRTLowest
			}
		}
	}
	if !p.allowed.Test(cpu) {
		cpu, stage = s.fallbackCPU(p, cpu), StageFallback
	}
	if d != nil {
		d.ChosenPri = s.cpupriLevel(s.cpus[cpu])
	}
	return cpu, stage
}

// rtPreempt is wakeup_preempt's class order plus wakeup_preempt_rt: does
// woken (or pulled) p preempt c's curr?
func (s *Sim) rtPreempt(c *cpu, p *Task) bool {
	curr := c.curr
	if curr == nil {
		return true
	}
	if curr == p || c.needResched || curr.state != TaskRunning {
		return false
	}
	if !curr.rt() {
		return c.rtNr > 0 // an RT task beats the fair class unless throttled
	}
	return p.kprio() < curr.kprio()
}

// rtPushable reports whether t may be pushed: queued, not running on c,
// with another CPU allowed (enqueue_pushable_task's test).
func rtPushable(c *cpu, t *Task) bool { return t != c.curr && t.nrAllowed > 1 }

// rtHighestPushable is the first pushable task of c in priority order
// that may run on dst (dst -1: any), and its prio; maxRTPrio when none
// (rt.highest_prio.next for dst -1).
func (s *Sim) rtHighestPushable(c *cpu, dst int) (*Task, int) {
	r := c.rt
	for w, b := range r.bitmap {
		for b != 0 {
			p := w*64 + bits.TrailingZeros64(b)
			b &= b - 1
			for _, t := range r.queue[p] {
				if rtPushable(c, t) && (dst < 0 || t.allowed.Test(dst)) {
					return t, p
				}
			}
		}
	}
	return nil, maxRTPrio
}

// rtOverloaded is rt.overloaded: c has a pushable task.
func (s *Sim) rtOverloaded(c *cpu) bool {
	t, _ := s.rtHighestPushable(c, -1)
	return t != nil
}

// rtMove migrates queued RT task t from src to dst (deactivate_task,
// set_task_cpu, activate_task) and reschedules dst (resched_curr).
func (s *Sim) rtMove(src, dst *cpu, t *Task) {
	s.rtDequeue(src, t)
	s.rtEnqueue(dst, t, false)
	s.wakeForPulledAt(dst, t, src, s.now)
}

// pushRTTask is push_rt_task: move c's highest pushable task to the
// lowest-priority CPU that can take it. It reports whether it moved one.
func (s *Sim) pushRTTask(c *cpu) bool {
	next, prio := s.rtHighestPushable(c, -1)
	if next == nil {
		return false
	}
	if c.curr != nil && prio < c.curr.kprio() {
		// The pushable task outranks curr: run it here instead.
		c.needResched = true
		s.kick(c, s.now)
		return false
	}
	// find_lock_lowest_rq: nothing races a single-threaded simulation,
	// so its first try is its answer.
	cpu := s.findLowestRQ(next, c.id)
	if cpu < 0 || cpu == c.id || s.cpus[cpu].rt.highest() <= prio {
		return false
	}
	s.rt.pushes++
	s.rtMove(c, s.cpus[cpu], next)
	return true
}

// pushRTTasks is push_rt_tasks: push until nothing more moves.
func (s *Sim) pushRTTasks(c *cpu) {
	for n := 0; n < s.topo.NCPU && s.pushRTTask(c); n++ {
	}
}

// pullRTTask is pull_rt_task for c, whose priority just dropped. With
// RT_PUSH_IPI the overloaded CPUs push; without it, c takes from every
// other CPU with pushable tasks the highest that may run on c and
// outranks what c would run, unless it is about to preempt its own
// CPU's curr.
func (s *Sim) pullRTTask(c *cpu) {
	if s.rt.pushIPI {
		// tell_cpu_to_push: the IPI goes round the overloaded CPUs in
		// CPU order (rto_next_cpu, never to the puller itself), and
		// each pushes what it can (push_rt_task with pull) to its own
		// find_lowest_rq choice, which need not be c.
		for _, src := range s.cpus {
			if src != c && s.rtOverloaded(src) {
				s.pushRTTasks(src)
			}
		}
		return
	}
	// c is in schedule(), before its pick: what it pulls is picked
	// there, no resched needed.
	for _, src := range s.cpus {
		if src == c || src.rt.nrTotal < 2 {
			continue
		}
		if _, next := s.rtHighestPushable(src, -1); next >= c.rt.highest() {
			continue
		}
		p, prio := s.rtHighestPushable(src, c.id)
		if p == nil || prio >= c.rt.highest() {
			continue
		}
		if src.curr != nil && prio < src.curr.kprio() {
			continue // it will preempt src's curr: leave it there
		}
		s.rt.pulls++
		s.rtDequeue(src, p)
		s.rtEnqueue(c, p, false)
	}
}

// taskWokenRT is task_woken_rt: a woken RT task that did not preempt its
// CPU's RT curr is pushed elsewhere at once.
func (s *Sim) taskWokenRT(c *cpu, p *Task) {
	curr := c.curr
	if p != curr && !c.needResched && p.nrAllowed > 1 && curr != nil && (curr.rt() || curr.dl()) &&
		(curr.nrAllowed < 2 || curr.kprio() <= p.kprio()) {
		s.pushRTTasks(c)
	}
}

// updateCurrRT is update_curr_rt's bandwidth part for c's RT curr, which
// has just run delta: RT time adds up per period, and a CPU past its
// runtime is throttled (sched_rt_runtime_exceeded) and rescheduled.
func (s *Sim) updateCurrRT(c *cpu, delta int64) {
	r := c.rt
	if s.rt.runtimeNS < 0 {
		return // RUNTIME_INF
	}
	r.rtTime += delta
	if s.rtRuntimeExceeded(c) {
		c.needResched = true
		s.kick(c, s.now)
	}
}

// rtRuntimeExceeded is sched_rt_runtime_exceeded.
func (s *Sim) rtRuntimeExceeded(c *cpu) bool {
	r := c.rt
	if r.throttled {
		return true
	}
	if r.runtime >= s.rt.periodNS {
		return false
	}
	s.balanceRuntime(c)
	if r.rtTime > r.runtime {
		r.throttled = true
		c.rtNr = 0
		s.rt.throttles++
		s.updateConservation(c)
		return true
	}
	return false
}

// balanceRuntime is balance_runtime/do_balance_runtime (RT_RUNTIME_SHARE):
// a CPU past its runtime borrows 1/n of every other CPU's unused runtime,
// up to the whole period.
func (s *Sim) balanceRuntime(c *cpu) {
	r := c.rt
	if !s.rt.share || r.rtTime <= r.runtime {
		return
	}
	n := int64(s.topo.NCPU)
	for _, o := range s.cpus {
		if o == c {
			continue
		}
		diff := o.rt.runtime - o.rt.rtTime
		if diff <= 0 {
			continue
		}
		diff /= n
		if r.runtime+diff > s.rt.periodNS {
			diff = s.rt.periodNS - r.runtime
		}
		o.rt.runtime -= diff
		r.runtime += diff
		if r.runtime == s.rt.periodNS {
			break
		}
	}
}

// startRTTimer is start_rt_bandwidth: the period timer runs while any
// CPU has RT time or RT tasks.
func (s *Sim) startRTTimer() {
	if s.rt.timerOn || s.rt.runtimeNS < 0 {
		return
	}
	s.rt.timerOn = true
	s.q.schedule(s.rtTimerSlot(), s.now+s.rt.periodNS)
}

// onRTPeriod is do_sched_rt_period_timer with one period elapsed: every
// CPU's RT time shrinks by its runtime, and a throttled CPU back under
// it runs its RT tasks again.
func (s *Sim) onRTPeriod() {
	idle := true
	for _, c := range s.cpus {
		r := c.rt
		if !s.rt.share {
			r.runtime = s.rt.runtimeNS
		}
		if r.rtTime == 0 && r.nrTotal == 0 {
			continue
		}
		if r.rtTime > 0 {
			if r.throttled {
				s.balanceRuntime(c)
			}
			r.rtTime -= min(r.rtTime, r.runtime)
			if r.throttled && r.rtTime < r.runtime {
				r.throttled = false
				c.rtNr = r.nrTotal
				s.updateConservation(c)
				if c.rtNr > 0 {
					s.rtResched(c)
				}
			}
			if r.rtTime > 0 || r.nrTotal > 0 {
				idle = false
			}
		} else if r.nrTotal > 0 {
			idle = false
		}
	}
	s.rt.timerOn = false
	if !idle {
		s.startRTTimer()
	}
}

// rtResched is resched_curr for an RT runqueue made runnable again.
func (s *Sim) rtResched(c *cpu) {
	if c.curr != nil {
		if c.curr.rt() || c.curr.dl() {
			return // nothing of the RT class preempts it
		}
		c.needResched = true
	}
	s.kick(c, s.now)
}

// rtTick is task_tick_rt for c's RT curr: a SCHED_RR task that used its
// timeslice goes to the tail of its list when it is not alone there.
func (s *Sim) rtTick(c *cpu) bool {
	t := c.curr
	if t.policy != PolicyRR {
		return false
	}
	t.rrLeft--
	if t.rrLeft > 0 {
		return false
	}
	t.rrLeft = s.rt.rrTicks
	return s.rtRequeueTail(c, t)
}

// rtRequeueTail is requeue_task_rt(rq, curr, 0): c's running RT task t
// goes to the tail of its priority's list; it reports whether another
// task was there to go before it.
func (s *Sim) rtRequeueTail(c *cpu, t *Task) bool {
	if len(c.rt.queue[t.kprio()]) < 2 {
		return false
	}
	s.rtDequeue(c, t)
	s.rtEnqueue(c, t, false)
	t.state = TaskRunning // still curr: rtEnqueue marked it runnable
	return true
}

// RTStats are the RT class's counts over a run.
type RTStats struct {
	// CPUPct is the RT tasks' share of all CPU time.
	CPUPct    float64 `json:"cpu_pct"`
	Pushes    int64   `json:"pushes"`
	Pulls     int64   `json:"pulls"`
	Throttles int64   `json:"throttles"`
}

// RT returns the RT class's counts, nil when the run had no RT task.
func (s *Sim) RT() *RTStats {
	if s.rt == nil {
		return nil
	}
	var ns int64
	for _, t := range s.tasks {
		if t.rt() {
			ns += t.sumExec
			if t.state == TaskRunning {
				ns += s.now - t.execStart
			}
		}
	}
	pct := 0.0
	if s.now > 0 {
		pct = 100 * float64(ns) / float64(s.now*int64(s.topo.NCPU))
	}
	return &RTStats{CPUPct: pct, Pushes: s.rt.pushes, Pulls: s.rt.pulls, Throttles: s.rt.throttles}
}

// checkRTRQ checks c's priority array against its counts (--debug).
func (s *Sim) checkRTRQ(c *cpu) error {
	r := c.rt
	n := 0
	for p := range r.queue {
		set := r.bitmap[p/64]&(1<<(p%64)) != 0
		if set != (len(r.queue[p]) > 0) {
			return fmt.Errorf("cpu %d: rt bitmap bit %d is %v with %d tasks", c.id, p, set, len(r.queue[p]))
		}
		for _, t := range r.queue[p] {
			if t.cpu != c.id || t.kprio() != p {
				return fmt.Errorf("cpu %d: rt task %s (cpu %d, prio %d) on list %d", c.id, t.Name, t.cpu, t.kprio(), p)
			}
		}
		n += len(r.queue[p])
	}
	if n != r.nrTotal || (!r.throttled && c.rtNr != n) || (r.throttled && c.rtNr != 0) {
		return fmt.Errorf("cpu %d: rt nr %d / %d, %d tasks on the array (throttled %v)", c.id, r.nrTotal, c.rtNr, n, r.throttled)
	}
	return nil
}
