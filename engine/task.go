package engine

import (
	"fmt"
	"math/rand/v2"

	"schedplay/engine/cpumask"
)

// TaskState is where a task is in its life.
type TaskState uint8

const (
	// TaskRunnable tasks sit on a runqueue waiting for the CPU.
	TaskRunnable TaskState = iota
	// TaskRunning is the current task of a CPU.
	TaskRunning
	// TaskBlocked tasks sleep until woken (futex, pipe, timer).
	TaskBlocked
	// TaskExited tasks are gone.
	TaskExited
)

func (s TaskState) String() string {
	return [...]string{"runnable", "running", "blocked", "exited"}[s]
}

// ActionKind is what a task's program asks to do next.
type ActionKind uint8

const (
	// ActRun burns NS nanoseconds of work at full single-thread speed.
	ActRun ActionKind = iota
	// ActSpin spins (burns CPU) until NS nanoseconds of wall-clock time have
	// passed since the action started, however little CPU it got meanwhile
	// (schbench's gettimeofday loop).
	ActSpin
	// ActSleep blocks for NS nanoseconds (a timer sleep, plus timer slack).
	ActSleep
	// ActBlock blocks until woken. A wake aimed at a task that is not
	// blocked is lost, as in the kernel: programs check their own futex
	// word (at the same simulated instant) before blocking.
	ActBlock
	// ActWake wakes task Target (a futex post / pipe write wakeup). The waker
	// pays wake_ns plus the idle-search probes as non-preemptible kernel
	// time; the wakee is enqueued when that time has been spent.
	ActWake
	// ActExit ends the task.
	ActExit
	// ActYield is sched_yield(2): the era's yield_task_fair, then
	// schedule() (yield.go). Only for an era whose Sim.YieldModelled
	// says so.
	ActYield
)

// Action is one step of a task program.
type Action struct {
	Kind   ActionKind
	NS     int64
	Target TaskID
	// Sync marks a WF_SYNC wakeup (pipes, sockets): the waker is about to
	// sleep, so wake_affine may pull the wakee to the waker's CPU.
	Sync bool
	// Kernel marks a Run as kernel work that cannot be preempted.
	Kernel bool
	// Chain marks an action after which the task stays inside the same
	// non-preemptible kernel section (the next action continues the same
	// syscall, e.g. the next wakeup of a wait-queue walk): the end of this
	// action is not a preemption point.
	Chain bool
	// Stamp, when HasStamp, is the time the wakee's wakeup latency is
	// measured from (schbench's message thread reads the clock once before
	// waking its whole list); otherwise latency starts at the enqueue.
	Stamp    int64
	HasStamp bool
}

// Run returns an action burning ns of work.
func Run(ns int64) Action { return Action{Kind: ActRun, NS: ns} }

// KernelRun returns an action burning ns of non-preemptible kernel work.
func KernelRun(ns int64) Action { return Action{Kind: ActRun, NS: ns, Kernel: true} }

// Spin returns an action spinning for ns of wall-clock time.
func Spin(ns int64) Action { return Action{Kind: ActSpin, NS: ns} }

// Sleep returns a timer sleep of ns.
func Sleep(ns int64) Action { return Action{Kind: ActSleep, NS: ns} }

// Block returns a wait-until-woken action.
func Block() Action { return Action{Kind: ActBlock} }

// Wake returns an action waking target.
func Wake(target TaskID, sync bool) Action { return Action{Kind: ActWake, Target: target, Sync: sync} }

// WakeStamped returns a wake whose latency is measured from stamp.
func WakeStamped(target TaskID, sync bool, stamp int64) Action {
	return Action{Kind: ActWake, Target: target, Sync: sync, Stamp: stamp, HasStamp: true}
}

// Exit returns the exit action.
func Exit() Action { return Action{Kind: ActExit} }

// Yield returns a sched_yield action.
func Yield() Action { return Action{Kind: ActYield} }

// Program is the behaviour of a simulated thread. Next is called whenever
// the previous action has completed (including right after a wakeup from
// Block or Sleep) and returns the next one. Programs keep their own state;
// they may inspect and change shared workload state (lists, channels) since
// the simulation is single-threaded. A program must not return an endless
// run of zero-time actions.
type Program interface {
	Next(ctx *Ctx) Action
}

// ProgramInto is a Program that can also write its next action in place:
// the engine then calls NextInto, which must do what Next does, instead.
// (An Action is too big to stay in registers: returned by value, it is
// spilled field by field and then copied whole, and the copy stalls on
// store forwarding — 6-9% of a message-passing benchmark's time.)
type ProgramInto interface {
	Program
	NextInto(ctx *Ctx, a *Action)
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(ctx *Ctx) Action

// Next calls f.
func (f ProgramFunc) Next(ctx *Ctx) Action { return f(ctx) }

// Ctx is what a program sees when choosing its next action.
type Ctx struct {
	sim  *Sim
	task *Task
}

// Now is the current simulated time in nanoseconds.
func (c *Ctx) Now() int64 { return c.sim.now }

// EndJob marks the end of one activation of a periodic task (rt-app's
// timer event, a cyclictest cycle), whether it sleeps next or, late,
// starts the next at once. A deadline task's job statistics (DLStats)
// count activations by it; for a task whose program never calls it, each
// time the task blocks ends a job.
func (c *Ctx) EndJob() {
	if c.task.dl() {
		c.task.dlse.explicitJobs = true
		c.sim.dlEndJob(c.task)
	}
}

// Self is the calling task's id.
func (c *Ctx) Self() TaskID { return c.task.ID }

// CPU is the CPU the task runs on.
func (c *Ctx) CPU() int { return c.task.cpu }

// LineXferNS is what the task pays, on its CPU, to fetch a cache line
// that CPU from wrote last: nothing on the same CPU, otherwise the
// machine's core-to-core transfer price for their distance
// (line_smt/llc/cross_llc/cross_socket_ns). Workloads use it for the
// kernel objects their syscalls share across CPUs (socket queues, skbs,
// pipe buffers).
func (c *Ctx) LineXferNS(from int) int64 { return c.sim.lineXfer(from, c.task.cpu) }

// MissesInFlight is how many independent cache misses overlap (the
// engine's one memory-level-parallelism figure, also used for the
// migration refill).
const MissesInFlight = refillMLP

// Rand is the task's workload's random stream.
func (c *Ctx) Rand() *rand.Rand { return c.sim.workloads[c.task.workload].rng }

// IsBlocked reports whether task id is blocked (waiting for a wakeup).
func (c *Ctx) IsBlocked(id TaskID) bool { return c.sim.tasks[id].state == TaskBlocked }

// CountOp adds n completed operations to the task's workload (throughput).
func (c *Ctx) CountOp(n int64) { c.sim.workloads[c.task.workload].ops += n }

// RecordLatency records a workload-defined latency sample (µs) in the
// workload's request-latency histogram.
func (c *Ctx) RecordLatency(us int64) { c.sim.workloads[c.task.workload].reqLat.Record(us) }

// RecordWakeLatency records a wakeup-latency sample (µs) the program
// measured itself (e.g. schbench's worker found its post already done and
// did not sleep, yet still computes now - wake_time).
func (c *Ctx) RecordWakeLatency(us int64) { c.sim.workloads[c.task.workload].recordWake(us) }

// RecordCycle records one cycle of a periodic thread that measures its
// own latency (cyclictest): lat is how late it ran after the timer it
// set for the cycle, interval its period. The task's own summary
// (WorkloadResult.Threads) keeps count, min, max, mean and the last.
func (c *Ctx) RecordCycle(lat, interval int64) {
	t := c.task
	if t.cycles == nil {
		t.cycles = &CycleStats{Task: t.ID, Name: t.Name, Policy: t.policy, RTPrio: t.rtPrio, MinNS: lat}
		w := c.sim.workloads[t.workload]
		w.cycleTasks = append(w.cycleTasks, t.ID)
	}
	s := t.cycles
	s.IntervalNS = interval
	s.Cycles++
	s.MinNS, s.MaxNS = min(s.MinNS, lat), max(s.MaxNS, lat)
	s.SumNS += lat
	s.ActNS = lat
	s.CPU = t.cpu
}

// CycleStats is one periodic thread's own latency record (RecordCycle).
type CycleStats struct {
	Task                       TaskID
	Name                       string
	Policy                     Policy
	RTPrio                     int
	CPU                        int // where its last cycle ran
	IntervalNS                 int64
	Cycles                     int64
	MinNS, MaxNS, SumNS, ActNS int64
}

// Finish marks the task's workload as complete at the current time (for
// workloads whose metric is a completion time).
func (c *Ctx) Finish() {
	w := c.sim.workloads[c.task.workload]
	if w.doneAt < 0 {
		w.doneAt = c.sim.now
	}
}

// Spawn forks a new task into the caller's workload (fork + exec): the
// child's vruntime starts from the caller's (task_fork_fair), fork
// balancing places it starting from the caller's CPU, which is also its
// first recent_used_cpu, and, like the O(1) scheduler's sched_fork, the
// child takes half of the parent's remaining timeslice (only SMT_NICE
// reads it). The program is responsible for the CPU cost of fork/exec (a
// Run before or after).
func (c *Ctx) Spawn(spec TaskSpec) (TaskID, error) {
	parent := c.task
	spec.ParentCPU = parent.cpu
	id, err := c.sim.spawn(WorkloadID(parent.workload), spec, parent)
	if err != nil {
		return id, err
	}
	child := c.sim.tasks[id]
	if !c.sim.rules.smtNiceSlices {
		c.sim.o1SplitSlice(parent, child)
		return id, nil
	}
	child.o1Left = (parent.o1Left + 1) / 2
	parent.o1Left /= 2
	if parent.o1Left <= 0 {
		parent.o1Left = 1
	}
	return id, nil
}

// SpawnReserved is Spawn for a task set aside with Sim.ReserveTasks.
func (c *Ctx) SpawnReserved(spec TaskSpec) (TaskID, error) {
	if c.sim.reservedTasks <= 0 {
		return 0, fmt.Errorf("engine: no reserved task left for %q", spec.Name)
	}
	c.sim.reservedTasks--
	id, err := c.Spawn(spec)
	if err != nil {
		c.sim.reservedTasks++
	}
	return id, err
}

// SetAffinity is sched_setaffinity(0, mask) from the task's own program
// (Sim.SetAffinity on the caller): when the CPU it runs on is no longer
// allowed, the migration stopper pushes it to an allowed one at once,
// before the action the program returns next starts doing any work, as
// the kernel's __set_cpus_allowed_ptr makes the caller wait for
// migration_cpu_stop (stop_one_cpu in v5.2; affine_move_task in 6.x).
// The program's next action then runs (or blocks) there.
func (c *Ctx) SetAffinity(mask cpumask.Mask) error { return c.sim.SetAffinity(c.task.ID, mask) }

// Allowed is the calling task's affinity mask (do not modify it).
func (c *Ctx) Allowed() cpumask.Mask { return c.task.allowed }

// Exited reports whether task id has exited.
func (c *Ctx) Exited(id TaskID) bool { return c.sim.tasks[id].state == TaskExited }

// TaskID identifies a task within one simulation.
type TaskID int32

// Task is one simulated thread.
type Task struct {
	ID          TaskID
	Name        string
	workload    int
	Nice        int
	LatencyNice int
	weight      int64
	allowed     cpumask.Mask
	// smtPressure is how hard the task presses on a shared core (1024 =
	// the nominal compute loop the preset's smt_throughput describes).
	smtPressure int64
	measureWake bool
	// policy and rtPrio are the scheduling policy and rt_priority
	// (1..99 for SCHED_FIFO/SCHED_RR); rrLeft is an RR task's timeslice
	// left, in ticks (rt.go).
	policy Policy
	rtPrio int
	rrLeft int
	inRT   bool // in rt.go's class (rt)
	// dlse is a SCHED_DEADLINE task's sched_dl_entity (dl.go), nil for
	// the other policies.
	dlse *dlEntity
	// rtParent: forked by an RT task (which it inherits its policy
	// from), not by a workload's SCHED_OTHER launcher.
	rtParent bool

	prog     Program
	progInto ProgramInto // prog, when it is a ProgramInto
	state    TaskState
	cpu      int // runqueue the task is on, or last ran on

	// Current action progress.
	act         Action
	actActive   bool  // act is in progress (not yet completed)
	burnLeft    int64 // work left (Run or a wake's kernel cost)
	spinUntil   int64 // ActSpin wall-clock deadline
	switchLeft  int64 // context-switch work before the task's own code runs
	penaltyLeft int64 // cache-refill work owed after a migration
	waking      bool  // a waker has chosen a CPU and is paying for the wakeup
	wakeTarget  int   // ActWake: the CPU chosen at decision time
	wakeOnIdle  bool  // ActWake: that CPU was idle when chosen
	wakeQueued  bool  // ActWake: ttwu_queue done, the waker pays its second part
	wakeStamp   int64 // on a wake_list: where its wakeup latency starts
	sleepTimer  bool  // the task's timer slot is a sleep (vs an activation)
	softExpiry  int64 // the sleep timer's soft expiry (its slot holds the hard one)
	timerCPU    int   // CPU whose timer base holds the sleep timer, -1 none
	nrAllowed   int   // p->nr_cpus_allowed

	// Latency measurement.
	wokenAt    int64 // start of the current wakeup latency, -1 when none
	lastRanCPU int

	// Fair class.
	vruntime      int64
	sumExec       int64
	prevSumExec   int64
	execStart     int64
	recentUsedCPU int
	wakeeFlips    int64
	flipDecayTS   int64 // jiffies
	lastWakee     TaskID
	o1Left        int64  // SMT_NICE: remaining O(1) timeslice (fair class)
	o1            o1Task // era 2.6-o1: the O(1) scheduler's task state (o1.go)
	mm            int    // address space
	polluteNS     int64  // cache refill this task forces on others (TaskSpec.PolluteNS)
	wssKB         int64  // hot working set (TaskSpec.WorkingSetKB)
	memNode       int    // NUMA node of the task's memory, -1 unknown/none
	memPolicy     Memory
	numaNext      int64  // NUMA_BALANCING: next placement check
	forkedAt      int64  // when the task was created
	srqLLC        int    // SHARED_RUNQ: the LLC and shard whose list holds the task
	srqShard      int    // -1 when on no list
	load          signal // runnable weight
	util          signal // running ×1024
	loadCPU       int    // CPU whose load_avg holds this task's load, or -1
	cfsSeq        int64  // position in its runqueue's cfs_tasks list (higher = nearer the head)

	// EEVDF (era 6.6, eevdf.go).
	deadline     int64 // virtual deadline vd_i
	slice        int64 // request size r_i (ns)
	vlag         int64 // V - v_i saved at the last dequeue
	pickDeadline int64 // deadline when last picked (set_next_entity's stash in vlag), for RUN_TO_PARITY
	// Era 6.12. delayed is se->sched_delayed: the task sleeps (its state
	// is TaskBlocked for its program) but DELAY_DEQUEUE kept it on its
	// runqueue, counted in nr_running, load and V, until a pick dequeues
	// it or a wakeup requeues it (eevdf612.go). relDeadline is
	// se->rel_deadline: deadline holds deadline - vruntime across a
	// non-sleep move (PLACE_REL_DEADLINE). customSlice is the slice
	// sched_setattr's sched_runtime asked for (se->custom_slice), 0: none.
	delayed     bool
	relDeadline bool
	customSlice int64

	// Statistics.
	cycles     *CycleStats // RecordCycle's record, nil until the first
	migrations int64
	wakeups    int64
}

// Migrations is how many times the task started running on another CPU
// than the one it last ran on.
func (t *Task) Migrations() int64 { return t.migrations }

// Wakeups is how many times the task was woken.
func (t *Task) Wakeups() int64 { return t.wakeups }

// CustomSlice is the slice the task asked for with sched_setattr
// (se->custom_slice, era 6.12; TaskSpec.Slice after the kernel's clamp),
// 0 when none.
func (t *Task) CustomSlice() int64 { return t.customSlice }

// State returns the task's state.
func (t *Task) State() TaskState { return t.state }

// CPU returns the CPU the task is on or last ran on.
func (t *Task) CPU() int { return t.cpu }

// Kthread reports whether the task is a kernel thread (no address space).
func (t *Task) Kthread() bool { return t.mm == 0 }

// Weight returns the task's load weight.
func (t *Task) Weight() int64 { return t.weight }

// Allowed returns the task's CPU affinity mask.
func (t *Task) Allowed() cpumask.Mask { return t.allowed }

// SumExec is the CPU time the task has received.
func (t *Task) SumExec() int64 { return t.sumExec }

// Vruntime returns the task's virtual runtime.
func (t *Task) Vruntime() int64 { return t.vruntime }

// Workload returns the index of the task's workload.
func (t *Task) Workload() int { return t.workload }
