// Package engine is a deterministic discrete-event simulator of Linux's
// fair scheduling class on a modelled machine. It reproduces the wakeup path
// (select_task_rq_fair → select_idle_sibling) decision by decision, with the
// CFS runqueue, load balancing and the costs each decision incurs charged as
// simulated CPU time to the CPU that pays them.
//
// The engine does no I/O, reads no clock and starts no goroutines: callers
// advance it with Step or RunUntil and read its state, so the same preset,
// knobs and seed give identical results natively and in WebAssembly.
package engine

import (
	"fmt"
	"math/rand/v2"

	"schedplay/engine/cpuidle"
	"schedplay/engine/cpumask"
	"schedplay/engine/histo"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Time constants in nanoseconds.
const (
	Microsecond int64 = 1000
	Millisecond       = 1000 * Microsecond
	Second            = 1000 * Millisecond
)

// Limits on simulation size, so a hostile link cannot exhaust memory.
const (
	MaxTasks = 1 << 16
	// maxEventsPerInstant catches a model livelock (events rescheduling
	// themselves at the same nanosecond) instead of hanging the caller.
	maxEventsPerInstant = 1 << 20
)

// Config is everything that determines a simulation.
type Config struct {
	Machine *machine.Topology
	Knobs   knob.Values
	Seed    uint64
	// Debug checks the engine's invariants after every event (slow).
	Debug bool
	// WakePolicy, when set, replaces the fair classes'
	// select_idle_sibling (policy.go); nil runs the era's own.
	WakePolicy WakePolicy
}

// Sim is one simulation.
type Sim struct {
	topo *machine.Topology
	k    knob.Values
	era  knob.Era // the kernel simulated (knob era): selects the class, wakeup path and balancer
	// class is the era's scheduling class (class.go): the core calls
	// its hooks, never an era's code directly.
	class schedClass
	// rt is the RT class's state (rt.go), nil until the first RT task.
	rt *rtState
	// dl is the deadline class (dl.go), nil in a run without deadline
	// tasks.
	dl *dlState
	// qosReqUS is the smallest PM QoS CPU latency request a workload
	// holds (RequestCPULatency), -1: none.
	qosReqUS int64
	rules    coreRules // the era's mechanisms that are data (class.go)
	fair     fairRules // the era's data inside the shared fair mechanisms (wakeup.go)
	seed     uint64
	now      int64

	cpus      []*cpu
	tasks     []*Task
	workloads []*workload
	q         eventQueue
	rng       *rand.Rand // engine stream (unused since timer slack is the hrtimer range rule)

	// reclaimDistance is the era's RECLAIM_DISTANCE or
	// node_reclaim_distance for this machine (numadist.go).
	reclaimDistance int

	// Scaled tunables (kernel-reference.md §2.3).
	latencyNS    int64
	minGranNS    int64
	wakeupGranNS int64
	nrLatency    int64
	baseSliceNS  int64 // EEVDF sysctl_sched_base_slice, scaled (era 6.6)
	tickNS       int64
	smtPresent   bool

	// Idle states as registered (after max_cstate), their measured exit
	// times and core-level flags; shallowIdle is the shallowest enabled
	// non-polling state (what a thread of a busy core sits in).
	idleStates    []cpuidle.State
	idleExitNS    []int64
	idleCoreLevel []bool
	// idleByStore[i]: a CPU in state i has TIF_POLLING_NRFLAG set (POLL,
	// MWAIT), so a waker's store to need_resched wakes it without an IPI.
	idleByStore []bool
	shallowIdle int
	noCpuidle   bool // the machine has no cpuidle driver

	// Cache-line transfer costs by machine.Distance, and an LLC hit.
	lineCost [5]int64
	l3HitNS  int64
	probeNS  int64
	// actor is the CPU whose event is being processed: it performs the
	// runqueue writes of that event.
	actor int
	// scanner and scanCost price the probes of the decision being made:
	// the CPU searching, and the time its probes have taken so far.
	scanner  int
	scanCost int64

	// groupLoads caches per-group load sums for fork placement;
	// fullForkPass (tests) sums every CPU instead, as the kernel does.
	groupLoads   groupLoads
	fullForkPass bool

	llcs    []llcShared
	nextCPU []int // SIS_ROTATE: per target CPU, where the last scan stopped (-1: none)
	mmCount int   // address spaces handed out
	// reservedTasks are tasks programs will fork later (ReserveTasks);
	// they count against MaxTasks so a build that fits cannot fail mid-run.
	reservedTasks int
	lastOn        []lastDecision // per CPU, the last decision that chose it
	conservation  conservation
	srq           [][]srqShard // SHARED_RUNQ: per LLC, its shards
	srqBusy       []int64      // SHARED_RUNQ: per CPU, until when shard-lock work occupies it
	overloaded    bool         // root_domain->overload
	nohzNext      int64        // nohz.next_balance
	nohzNrCPUs    int          // nohz.nr_cpus: CPUs with nohzIdle set
	inTimerIRQ    bool         // inside a timer interrupt's run of the hrtimer queue
	lb            lbState      // load-balancer state and scratch (balance.go)
	cap           capState     // sched_group_capacity under RT/deadline load (rtcap.go)
	capFull       bool         // tests: capacities stay 1024 under RT/deadline load (the model before rtcap.go)
	o1Wake        o1WakeCtx    // era 2.6-o1: how the wakeup being enqueued was issued

	// wpolicy replaces select_idle_sibling when set (policy.go); wview
	// is the view it is handed; err is what stopped the run (a policy's
	// error): no event runs after it.
	wpolicy WakePolicy
	// phooks are the steps it replaces; cpuPolicy is wpolicy when they
	// include select_idle_cpu, corePolicy when they include
	// select_idle_core.
	phooks     Hook
	cpuPolicy  IdleCPUPolicy
	corePolicy IdleCorePolicy
	wview      *WakeView
	// niPolicy is wpolicy when it replaces the newly idle balance, and
	// bview the view it is handed (policy_newidle.go).
	niPolicy NewidlePolicy
	bview    *BalanceView
	// probeBy labels each probe of the wakeup being decided, in runs with
	// a policy (ProbeLabels); probeLabel is the label of the code running.
	probeBy    []string
	probeLabel string
	err        error

	stats    Stats
	trace    decisionRing
	hooks    Hooks
	debug    bool
	events   int64
	sameTime int

	// scratch, reused to avoid per-event allocation
	probeBuf []int
	scanMask cpumask.Mask
	dec      Decision
	ctx      Ctx
}

// Hooks lets a caller observe decisions as they happen (tests, traces, UI).
type Hooks struct {
	// OnWakeup is called for every wakeup placement decision.
	OnWakeup func(d *Decision)
	// OnSwitch is called when cpu switches from prev to next; either may
	// be nil (the idle task). prev's State tells why it stopped.
	OnSwitch func(cpu int, prev, next *Task)
}

// llcShared is the per-LLC sd_llc_shared state.
type llcShared struct {
	hasIdleCores bool
	nrIdleScan   int64
}

// New builds a simulation with no tasks.
func New(cfg Config) (*Sim, error) {
	if cfg.Machine == nil {
		return nil, fmt.Errorf("engine: no machine")
	}
	tp := cfg.Machine
	s := &Sim{topo: tp, k: cfg.Knobs, era: cfg.Knobs.Era(), seed: cfg.Seed, debug: cfg.Debug, qosReqUS: -1}
	def, ok := eraDefs[s.era]
	if !ok {
		return nil, fmt.Errorf("engine: era %s has no class (engine.RegisterEra)", s.era)
	}
	s.class, s.rules, s.fair = def.class(s), def.rules, def.fair
	if cfg.WakePolicy != nil {
		if err := s.SetWakePolicy(cfg.WakePolicy); err != nil {
			return nil, err
		}
	}
	s.initReclaimDistance()
	s.rng = rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	s.computeTunables()
	for core := range tp.CoreCPUs {
		if len(tp.CoreCPUs[core]) > 1 {
			s.smtPresent = true
		}
	}
	s.q.grow(3*tp.NCPU + 1)
	s.cpus = make([]*cpu, tp.NCPU)
	for i := range s.cpus {
		s.cpus[i] = newCPU(s, i)
	}
	// One search probes each CPU of its domain at most once per stage
	// (select_idle_core, _cpu, _smt): sized once, so that a rare wide
	// search late in a run does not grow it.
	s.probeBuf = make([]int, 0, 3*tp.NCPU)
	s.llcs = make([]llcShared, tp.NLLC)
	for i := range s.llcs {
		// At boot every CPU has gone idle with its siblings idle.
		s.llcs[i].hasIdleCores = s.smtPresent
		s.llcs[i].nrIdleScan = int64(tp.LLCSpan[i].Weight())
	}
	s.scanMask = cpumask.New(tp.NCPU)
	s.conservation.init(tp.NCPU, tp.NLLC)
	s.lastOn = make([]lastDecision, tp.NCPU)
	// Slices every CPU grows to a small working size, carved out of
	// shared arrays up front so a CPU that first queues a second task, or
	// first gets a wake list, seconds into a run does not allocate then.
	const rqCap = 4
	probes := make([]int, tp.NCPU*maxTracedProbes)
	rq := make([]*Task, 2*tp.NCPU*rqCap)
	for i := range s.lastOn {
		s.lastOn[i].probes = probes[i*maxTracedProbes : i*maxTracedProbes : (i+1)*maxTracedProbes]
		c := s.cpus[i]
		c.tree = rq[2*i*rqCap : 2*i*rqCap : (2*i+1)*rqCap]
		c.wakeList = rq[(2*i+1)*rqCap : (2*i+1)*rqCap : (2*i+2)*rqCap]
	}
	for i := range s.cpus {
		s.conservation.cpuIdle[i] = true
		s.conservation.llcIdle[tp.LLC[i]]++
	}
	s.conservation.idle = tp.NCPU
	s.nextCPU = make([]int, tp.NCPU)
	for i := range s.nextCPU {
		s.nextCPU[i] = -1
	}
	s.trace.init(256)
	s.stats.init(tp.NCPU)
	s.groupLoads.init(tp)
	s.initLineCosts()
	s.probeNS = s.k.Get(knob.ProbeNS)
	for _, c := range s.cpus {
		s.class.initRQ(c)
	}
	s.initIdle()
	s.lbInit()
	s.ctx.sim = s
	return s, nil
}

// computeTunables applies sched_tunable_scaling to the normalized tunables.
func (s *Sim) computeTunables() {
	n := int64(min(s.topo.NCPU, 8))
	factor := int64(1)
	switch s.k.Get(knob.TunableScaling) {
	case knob.ScalingLog:
		factor = 1 + ilog2(n)
	case knob.ScalingLinear:
		factor = n
	}
	s.latencyNS = factor * s.k.Get(knob.SchedLatency)
	s.minGranNS = factor * s.k.Get(knob.SchedMinGranularity)
	s.wakeupGranNS = factor * s.k.Get(knob.SchedWakeupGranularity)
	// sched_nr_latency: DIV_ROUND_UP(sysctl_sched_latency,
	// sysctl_sched_min_granularity) in sched_proc_update_handler when
	// either is written (v5.2 and 6.1 fair.c); the boot default 8 is the
	// same ratio rounded up.
	s.nrLatency = max(1, (s.latencyNS+s.minGranNS-1)/s.minGranNS)
	s.baseSliceNS = factor * s.k.Get(knob.SchedBaseSlice)
	s.tickNS = Second / s.k.Get(knob.HZ)
}

func ilog2(n int64) int64 {
	r := int64(0)
	for n > 1 {
		n >>= 1
		r++
	}
	return r
}

// SetHooks installs observation callbacks.
func (s *Sim) SetHooks(h Hooks) { s.hooks = h }

// Now returns the current simulated time.
func (s *Sim) Now() int64 { return s.now }

// Topology returns the simulated machine.
func (s *Sim) Topology() *machine.Topology { return s.topo }

// Knobs returns the knob values in effect.
func (s *Sim) Knobs() *knob.Values { return &s.k }

// Events is the number of events processed so far.
func (s *Sim) Events() int64 { return s.events }

// Task returns task id.
func (s *Sim) Task(id TaskID) *Task { return s.tasks[id] }

// NumTasks is the number of tasks ever created.
func (s *Sim) NumTasks() int { return len(s.tasks) }

// TimeSlices returns the scaled (sched_latency, min_granularity,
// wakeup_granularity) in ns.
func (s *Sim) TimeSlices() (latency, minGran, wakeupGran int64) {
	return s.latencyNS, s.minGranNS, s.wakeupGranNS
}

// Step processes the next event. It returns false when there is none.
func (s *Sim) Step() bool {
	e := s.q.top()
	if e == nil || s.err != nil {
		return false
	}
	s.step(e)
	return true
}

// step processes e, the queue's earliest entry.
func (s *Sim) step(e *heapEntry) {
	slot, when := s.q.fireEntry(e), e.when
	if when == s.now {
		s.sameTime++
		if s.sameTime > maxEventsPerInstant {
			panic(fmt.Sprintf("engine: more than %d events at t=%d ns without time advancing (slot %d): a livelock in the model", maxEventsPerInstant, when, slot))
		}
	} else {
		s.sameTime = 0
	}
	s.now = when
	s.events++
	s.dispatch(slot)
	s.q.finish()
	if s.debug {
		if err := s.CheckInvariants(); err != nil {
			panic(fmt.Sprintf("invariant violated at t=%d after event %d: %v", s.now, s.events, err))
		}
	}
}

// RunUntil processes every event up to and including time t, then sets the
// clock to t.
func (s *Sim) RunUntil(t int64) {
	for {
		if s.err != nil {
			return // stopped (Err): the clock stays at the failing event
		}
		e := s.q.top()
		if e == nil || e.when > t {
			break
		}
		s.step(e)
	}
	if t > s.now {
		s.now = t
	}
}

// NextEventTime returns the time of the next event, or -1 when none.
func (s *Sim) NextEventTime() int64 {
	slot, when := s.q.peek()
	if slot < 0 || s.err != nil {
		return -1
	}
	return when
}

func (s *Sim) dispatch(slot int) {
	n := s.topo.NCPU
	switch {
	case slot < n:
		s.actor = slot
		s.onPhaseEnd(s.cpus[slot])
	case slot < 2*n:
		s.stats.ticks++
		s.actor = slot - n
		s.onTick(s.cpus[slot-n])
	case slot < 3*n:
		s.actor = slot - 2*n
		s.onKick(s.cpus[slot-2*n])
	case slot == 3*n:
		s.onRTPeriod()
	case slot == 3*n+1:
		s.onDLTimer()
	default:
		t := s.tasks[slot-3*n-2]
		s.actor = max(t.cpu, 0)
		s.onTimer(t)
	}
}

// taskSlot is t's timer slot: after the CPUs' phase, tick and kick
// slots, the RT period timer's and the deadline class's.
func (s *Sim) taskSlot(t *Task) int { return 3*s.topo.NCPU + 2 + int(t.ID) }

// growSlots sizes the event queue for the CPUs, the RT and deadline
// timers and every task.
func (s *Sim) growSlots() { s.q.grow(3*s.topo.NCPU + 2 + len(s.tasks)) }

// workload is the engine's bookkeeping for one group of tasks.
type workload struct {
	name, kind string
	rng        *rand.Rand
	wakeLat    *histo.Latency
	reqLat     *histo.Latency
	ops        int64
	doneAt     int64
	tasks      []TaskID
	// skipZero drops sub-microsecond wakeup samples, as tools that
	// measure with gettimeofday and record only "delta > 0" do.
	skipZero bool
	// finite marks a workload that completes (hackbench, a compile): its
	// metric is the completion time.
	finite bool
	// background: load for others to run beside (hogs, noise, cache
	// burners), measuring nothing of its own: it does not hold a run
	// open once the finite workloads are done (AllFinished).
	background bool
	// measuresWake is set once a task that records its wakeup latencies
	// (TaskSpec.MeasureWakeups) joins the workload.
	measuresWake bool
	// measuresReq marks a workload whose request latency (Ctx.RecordLatency
	// per request) is its metric.
	measuresReq bool
	// cycleTasks are its tasks that record cycles (Ctx.RecordCycle), in
	// the order of their first record.
	cycleTasks []TaskID
}

func (w *workload) recordWake(us int64) {
	if us <= 0 && w.skipZero {
		return
	}
	w.wakeLat.Record(us)
}

// SetMeasuresRequests declares that workload w's metric is its request
// latency (its programs call Ctx.RecordLatency per request), so a run in
// which it records none can say so.
func (s *Sim) SetMeasuresRequests(w WorkloadID) { s.workloads[w].measuresReq = true }

// SetFinite declares that workload w finishes (its programs call
// Ctx.Finish when the whole job is done), so a run may stop once every
// finite workload has finished (AllFinished).
func (s *Sim) SetFinite(w WorkloadID) { s.workloads[w].finite = true }

// SetBackground declares that workload w is background load (hogs,
// noise, cache burners): it runs as long as the run does, and does not
// keep a run going by itself (AllFinished).
func (s *Sim) SetBackground(w WorkloadID) { s.workloads[w].background = true }

// AllFinished reports whether the run has nothing left to measure: there
// is at least one finite workload, every finite workload has finished,
// and every other workload is background load. A finite workload beside
// an endless one that measures something (hackbench beside schbench) does
// not end the run: --duration holds, and the endless one goes on alone.
func (s *Sim) AllFinished() bool {
	any := false
	for _, w := range s.workloads {
		switch {
		case w.finite:
			any = true
			if w.doneAt < 0 {
				return false
			}
		case !w.background:
			return false
		}
	}
	return any
}

// SetSkipZeroLatency makes workload w drop wakeup samples that round to
// 0 µs (schbench records only positive deltas).
func (s *Sim) SetSkipZeroLatency(w WorkloadID) { s.workloads[w].skipZero = true }

// WorkloadID identifies a workload within a simulation.
type WorkloadID int

// AddWorkload registers a group of tasks with its own random stream and
// metrics. Streams are keyed by the workload's index so adding a workload
// does not change the draws of another.
func (s *Sim) AddWorkload(name, kind string) WorkloadID {
	idx := len(s.workloads)
	s.workloads = append(s.workloads, &workload{
		name: name, kind: kind,
		rng:     rand.New(rand.NewPCG(s.seed, uint64(idx)+1)),
		wakeLat: histo.New(), reqLat: histo.New(), doneAt: -1,
	})
	return WorkloadID(idx)
}

// WorkloadRand returns the random stream of workload w (for building it).
func (s *Sim) WorkloadRand(w WorkloadID) *rand.Rand { return s.workloads[w].rng }

// TaskSpec describes a task to create.
type TaskSpec struct {
	Name        string
	Nice        int
	LatencyNice int
	// Allowed is the CPU affinity; a zero-length mask means every CPU.
	Allowed cpumask.Mask
	Program Program
	// MeasureWakeups records this task's wakeup latencies in its
	// workload's histogram.
	MeasureWakeups bool
	// Slice is the EEVDF request size sched_setattr's sched_runtime
	// gives a fair task (era 6.12, __setscheduler_params: custom_slice,
	// clamped to 0.1-100 ms as the kernel does); 0 keeps the base slice.
	Slice int64
	// Policy is the scheduling policy (SCHED_OTHER by default) and
	// RTPrio the rt_priority, 1..99 for PolicyFIFO and PolicyRR, 0 for
	// PolicyNormal (sched_setscheduler's rule).
	Policy Policy
	RTPrio int
	// DL is a PolicyDeadline task's reservation (sched_attr's
	// sched_runtime, sched_deadline, sched_period and
	// SCHED_FLAG_RECLAIM); zero for the other policies.
	DL DLParams
	// SMTPressure (×1024, default 1024 when 0) says how much the task
	// slows a co-running SMT sibling relative to the nominal loop.
	SMTPressure int64
	// ParentCPU is the CPU the task is forked from; fork balancing
	// (find_idlest_cpu) chooses where it starts.
	ParentCPU int
	// Memory and MemNode say where the task's memory lives for
	// NUMA_BALANCING (default: where it first runs).
	Memory  Memory
	MemNode int
	// MM is the task's address space: 0 gives it a new one of its own (a
	// process); threads of one process share an id from NewAddressSpace.
	MM int
	// Kthread marks a kernel thread: no address space at all (p->mm ==
	// NULL; MM must be 0). Switching to it changes no mm — lazy TLB keeps
	// the previous task's loaded — so neither that switch nor the one back
	// pays mm_switch_ns; it has no memory for NUMA balancing to follow;
	// and SMT_NICE, whose dependent_sleeper only compares tasks with an mm,
	// never holds it back nor lets it hold a sibling back.
	Kthread bool
	// PolluteNS is the cache refill a task of this kind forces on others
	// (a cache burner): when it stops running, the next task on its CPU and
	// the tasks running on its SMT siblings owe up to this much extra work,
	// bounded by how long it ran (it can only evict what it had time to
	// touch).
	PolluteNS int64
	// WorkingSetKB is the task's hot working set: what it has to refill
	// after a migration (0: 16 KiB).
	WorkingSetKB int64
}

// Spawn creates a task in workload w, places it with fork balancing and
// makes it runnable now. The task has no parent task (the workload builder
// creates it): see spawn for how its vruntime and recent_used_cpu start.
func (s *Sim) Spawn(w WorkloadID, spec TaskSpec) (TaskID, error) {
	return s.spawn(w, spec, nil)
}

// spawn is fork + wake_up_new_task for a child of parent (nil: a task of
// the workload builder, which has no parent task in the simulation).
func (s *Sim) spawn(w WorkloadID, spec TaskSpec, parent *Task) (TaskID, error) {
	if len(s.tasks)+s.reservedTasks >= MaxTasks {
		return 0, fmt.Errorf("engine: too many tasks (limit %d)", MaxTasks)
	}
	if spec.Nice < -20 || spec.Nice > 19 {
		return 0, fmt.Errorf("engine: nice %d out of range -20..19", spec.Nice)
	}
	if spec.LatencyNice < -20 || spec.LatencyNice > 19 {
		return 0, fmt.Errorf("engine: latency_nice %d out of range -20..19", spec.LatencyNice)
	}
	allowed := spec.Allowed
	if allowed.Len() == 0 {
		allowed = s.topo.All.Clone()
	} else if allowed.Len() != s.topo.NCPU || allowed.Empty() {
		return 0, fmt.Errorf("engine: task %q has an empty or mis-sized CPU mask", spec.Name)
	}
	if spec.Program == nil {
		return 0, fmt.Errorf("engine: task %q has no program", spec.Name)
	}
	switch spec.Policy {
	case PolicyNormal:
		if spec.RTPrio != 0 {
			return 0, fmt.Errorf("engine: task %q: rt priority %d needs policy fifo or rr (SCHED_OTHER's is 0)", spec.Name, spec.RTPrio)
		}
	case PolicyFIFO, PolicyRR:
		if spec.RTPrio < 1 || spec.RTPrio > 99 {
			return 0, fmt.Errorf("engine: task %q: rt priority %d out of range 1..99 for policy %s", spec.Name, spec.RTPrio, spec.Policy)
		}
		if spec.Slice != 0 {
			return 0, fmt.Errorf("engine: task %q: a slice is a fair task's (policy %s has none)", spec.Name, spec.Policy)
		}
		if !s.rules.rtInClass {
			if err := s.enableRT(); err != nil {
				return 0, err
			}
		}
	case PolicyDeadline:
		if spec.RTPrio != 0 || spec.Slice != 0 {
			return 0, fmt.Errorf("engine: task %q: a SCHED_DEADLINE task has no rt priority or slice (its reservation is TaskSpec.DL)", spec.Name)
		}
		if parent != nil {
			// sched_fork: "SCHED_DEADLINE tasks cannot fork" (-EAGAIN
			// without SCHED_FLAG_RESET_ON_FORK, which is not modelled).
			return 0, fmt.Errorf("engine: task %q: its parent %q is a SCHED_DEADLINE task, which cannot fork (EAGAIN)", spec.Name, parent.Name)
		}
		if allowed.Weight() != s.topo.NCPU {
			// __sched_setscheduler: a deadline task's affinity must span
			// its root domain (here the machine; cpusets are not
			// modelled), else EPERM.
			return 0, fmt.Errorf("engine: task %q: SCHED_DEADLINE needs every CPU in its affinity (sched_setattr refuses a restricted one with EPERM: the admission test is per root domain), not %s", spec.Name, allowed)
		}
	default:
		return 0, fmt.Errorf("engine: task %q: unknown policy %d (normal, fifo, rr, deadline)", spec.Name, spec.Policy)
	}
	if spec.Policy != PolicyDeadline && spec.DL != (DLParams{}) {
		return 0, fmt.Errorf("engine: task %q: a deadline reservation needs policy deadline, not %s", spec.Name, spec.Policy)
	}
	if parent != nil && parent.dl() {
		return 0, fmt.Errorf("engine: task %q: its parent %q is a SCHED_DEADLINE task, which cannot fork (EAGAIN)", spec.Name, parent.Name)
	}
	pressure := spec.SMTPressure
	if pressure == 0 {
		pressure = 1024
	}
	t := &Task{
		ID: TaskID(len(s.tasks)), Name: spec.Name, workload: int(w),
		Nice: spec.Nice, LatencyNice: spec.LatencyNice, weight: NiceToWeight(spec.Nice),
		allowed: allowed, smtPressure: pressure, measureWake: spec.MeasureWakeups,
		prog: spec.Program, state: TaskBlocked, cpu: -1, wokenAt: -1,
		lastRanCPU: -1, recentUsedCPU: -1, lastWakee: -1, srqShard: -1, loadCPU: -1,
		timerCPU: -1, nrAllowed: allowed.Weight(),
		policy: spec.Policy, rtPrio: spec.RTPrio,
	}
	if t.rtPolicy() && !s.rules.rtInClass {
		t.inRT = true
		t.rtParent = parent != nil && parent.rt()
		t.rrLeft = s.rt.rrTicks
	}
	if spec.Slice != 0 {
		if !s.fair.customSlices {
			return 0, fmt.Errorf("engine: task %q asks for a %d ns slice, but era %s has no per-task slices (sched_attr.sched_runtime sets a fair task's slice from v6.12: era 6.12)", spec.Name, spec.Slice, s.k.Era())
		}
		if spec.Slice < 0 {
			return 0, fmt.Errorf("engine: task %q: slice %d ns is negative", spec.Name, spec.Slice)
		}
		t.customSlice = min(max(spec.Slice, 100*Microsecond), 100*Millisecond)
		t.slice = t.customSlice
	}
	t.progInto, _ = spec.Program.(ProgramInto)
	t.load.last, t.util.last = s.now, s.now
	t.o1Left = s.O1Timeslice(t.Nice)
	t.polluteNS = max(0, spec.PolluteNS)
	t.wssKB = spec.WorkingSetKB
	if t.wssKB <= 0 {
		t.wssKB = 16
	}
	t.mm = spec.MM
	t.memPolicy, t.memNode = spec.Memory, -1
	switch {
	case spec.Kthread:
		if spec.MM > 0 {
			return 0, fmt.Errorf("engine: kernel thread %q cannot have an address space (MM %d)", spec.Name, spec.MM)
		}
		t.mm = 0 // mm 0 is "no mm": the kernel's p->mm == NULL
		t.memPolicy = MemNone
	case t.mm <= 0:
		t.mm = s.NewAddressSpace()
	}
	if spec.Memory == MemNode {
		if spec.MemNode < 0 || spec.MemNode >= s.topo.Spec.Topology.Sockets {
			return 0, fmt.Errorf("engine: task %q memory node %d out of range 0..%d", spec.Name, spec.MemNode, s.topo.Spec.Topology.Sockets-1)
		}
		t.memNode = spec.MemNode
	}
	if spec.Policy == PolicyDeadline {
		// Last, so that a refused task leaves no bandwidth behind.
		e, err := s.admitDL(spec.Name, spec.DL)
		if err != nil {
			return 0, err
		}
		t.dlse, e.task = e, t
		s.dl.tasks = append(s.dl.tasks, t)
	}
	t.forkedAt = s.now
	t.numaNext = s.now + s.k.Get(knob.NUMAScanDelayMS)*Millisecond
	// New tasks start with load = weight (kernel-reference.md §3.6).
	t.load.avg = t.weight
	s.tasks = append(s.tasks, t)
	s.growSlots()
	s.workloads[w].tasks = append(s.workloads[w].tasks, t.ID)
	if spec.MeasureWakeups {
		s.workloads[w].measuresWake = true
	}

	parentCPU := spec.ParentCPU
	if parentCPU < 0 || parentCPU >= s.topo.NCPU {
		parentCPU = 0
	}
	s.class.taskFork(s.cpus[parentCPU], t, parent)
	// wake_up_new_task (core.c, v5.2.1 @ fc4ec72d) sets recent_used_cpu to
	// task_cpu(p) before fork balancing, and sched_fork had set task_cpu to
	// the CPU the fork ran on: a child starts with its parent's CPU as its
	// "recently used" candidate. A builder task gets its ParentCPU.
	t.recentUsedCPU = parentCPU
	c := s.cpus[s.class.selectTaskRqFork(t, parentCPU)]
	t.cpu = c.id
	t.prevSumExec = 0
	s.class.enqueueTaskNew(c, t)
	s.checkPreemptNew(c, t)
	s.class.woken(c, t) // wake_up_new_task's task_woken: RT and deadline push
	return t.ID, nil
}

// forkVruntime is task_fork_fair (fair.c, v5.2.1 @ fc4ec72d), run on the
// parent's CPU pc: the child starts from the vruntime of the runqueue's
// current entity (the parent, after update_curr), is placed with
// place_entity(initial) on that runqueue — never before min_vruntime plus
// one vslice computed there (START_DEBIT) — and is left normalised
// (relative to pc's min_vruntime); enqueueNew renormalises it on the
// runqueue fork balancing chose. sysctl_sched_child_runs_first is 0 (the
// default), so parent and child never swap.
//
// A builder task (parent nil) is forked as if by a context that is not a
// CFS entity on pc — the kernel's cfs_rq->curr == NULL branch: its
// vruntime starts at 0 (__sched_fork), so place_entity puts it exactly one
// vslice after pc's min_vruntime. The simulation does not model the
// launcher that forked the benchmark, so it cannot have run ahead.
func (s *Sim) forkVruntime(pc *cpu, t, parent *Task) {
	t.vruntime = 0
	if parent != nil && pc.curr == parent && parent.state == TaskRunning {
		s.updateCurr(pc)
		t.vruntime = parent.vruntime
	}
	s.place(pc, t, true)
	t.vruntime -= pc.minVruntime
}

// ReserveTasks sets aside n tasks of the MaxTasks limit for a workload
// whose programs fork them later with Ctx.SpawnReserved.
func (s *Sim) ReserveTasks(n int) error {
	if n < 0 || len(s.tasks)+s.reservedTasks+n > MaxTasks {
		return fmt.Errorf("engine: %d more tasks would pass the limit %d (%d exist, %d reserved)", n, MaxTasks, len(s.tasks), s.reservedTasks)
	}
	s.reservedTasks += n
	return nil
}

// NewAddressSpace returns a fresh address-space id for TaskSpec.MM.
func (s *Sim) NewAddressSpace() int {
	s.mmCount++
	return s.mmCount
}

// SetAffinity changes task id's allowed CPUs (sched_setaffinity). A task
// queued or running on a CPU it may no longer use is moved at once to the
// first allowed CPU of its LLC (else of the machine); a running one is
// pushed off by the stopper at its CPU's next switch.
func (s *Sim) SetAffinity(id TaskID, allowed cpumask.Mask) error {
	if int(id) < 0 || int(id) >= len(s.tasks) {
		return fmt.Errorf("engine: no task %d", id)
	}
	if allowed.Len() != s.topo.NCPU || allowed.Empty() {
		return fmt.Errorf("engine: affinity mask must name at least one of the %d CPUs", s.topo.NCPU)
	}
	t := s.tasks[id]
	if t.dl() && allowed.Weight() != s.topo.NCPU {
		// sched_setaffinity → dl_task_check_affinity: a deadline task
		// keeps its root domain's span (EBUSY).
		return fmt.Errorf("engine: task %q is a SCHED_DEADLINE task: its affinity must keep every CPU (sched_setaffinity refuses %s with EBUSY)", t.Name, allowed)
	}
	t.allowed = allowed.Clone()
	t.nrAllowed = t.allowed.Weight()
	if t.cpu < 0 || t.allowed.Test(t.cpu) {
		return nil
	}
	src := s.cpus[t.cpu]
	dst := s.cpus[s.fallbackCPU(t, t.cpu)]
	switch {
	case t.state == TaskRunnable || t.delayed:
		// move_queued_task: a delayed task (6.12) is queued too.
		s.class.detachTask(src, t, dst)
		s.class.attachTask(dst, t, dst)
		s.wakeForPulled(dst, t)
	case t.state == TaskRunning:
		src.pushTo = dst.id
		src.needResched = true
		s.kick(src, s.now)
	}
	return nil
}
