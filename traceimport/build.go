package traceimport

import (
	"fmt"
	"strings"

	"schedplay/engine/workload"
)

// Reasons for what the import could not keep, as counted in
// Summary.Dropped and the file's "dropped".
const (
	DropIRQWaker       = "sleep ended by an interrupt (replayed as a timed sleep)"
	DropIdleWaker      = "sleep ended from the idle task: timer or interrupt (replayed as a timed sleep)"
	DropKthreadWaker   = "sleep ended by a filtered kernel thread (replayed as a timed sleep)"
	DropSelfWaker      = "sleep ended in the task's own context (replayed as a timed sleep)"
	DropNoWakeup       = "sleep with no wakeup event before the task ran again (replayed as a timed sleep)"
	DropFilteredWakee  = "wakeup of a filtered kernel thread or the idle task (dropped)"
	DropNotAsleep      = "wakeup of a task that was not asleep (dropped)"
	DropUntracedFork   = "task forked by a filtered or unseen parent (started after a timed sleep)"
	DropRT             = "real-time or deadline task (replayed as a nice-0 fair task)"
	DropAsleepAtEnd    = "task asleep at the end of the trace (its last sleep is not replayed)"
	DropPIDReuse       = "pid seen again after its task exited without a fork event (a new task)"
	DropMigrations     = "sched_migrate_task events (placement is the simulator's)"
	DropLostEvents     = "events the tracer reported lost"
	DropUnreadable     = "lines that could not be read (skipped; the summary names them)"
	DropKthreads       = "kernel threads filtered (--keep-kthreads keeps them)"
	DropEventTypePref  = "other events skipped: "
	syncWindowNS       = 20000
	placeholderSleepNS = -1
)

// Task states while reading the trace.
const (
	stRunnable = iota // runnable, not yet running (or preempted)
	stWoken           // woken, not yet running
	stRunning
	stSleeping
	stExited
)

type btask struct {
	idx      int // index in the file's tasks; -1 when filtered
	pid      int32
	name     string
	filtered bool
	state    int
	since    int64 // running since
	pending  int64 // CPU time not yet written as a run op
	sleepAt  int64
	sleepOp  int // index of the sleep's placeholder op
	exiting  bool
	prioSet  bool
	rt       bool
}

type builder struct {
	opt      Options
	lim      limits
	strs     *strTable // the events' strings
	file     *workload.TraceFile
	tasks    map[int32]*btask // by pid: the latest incarnation
	all      []*btask         // every task, in creation order
	cpuFirst map[int32]int64
	cpuCur   map[int32]int32
	t0, tEnd int64
	dropped  map[string]int
	ops      int
	wakes    int // task-to-task wakes kept
	timed    int // sleeps replayed as timed
	pairs    map[[2]int]int
	err      error
}

func newBuilder(opt Options, lim limits, strs *strTable, t0 int64) *builder {
	return &builder{opt: opt, lim: lim, strs: strs, file: &workload.TraceFile{Format: workload.TraceFormat, Version: workload.TraceVersion},
		tasks: map[int32]*btask{}, cpuFirst: map[int32]int64{}, cpuCur: map[int32]int32{}, t0: t0, tEnd: t0,
		dropped: map[string]int{}, pairs: map[[2]int]int{}}
}

// str is the text of an event's string.
func (b *builder) str(id strID) string { return b.strs.str(id) }

// kthreadPrefixes are comm prefixes of kernel threads.
var kthreadPrefixes = []string{
	"kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuop/", "rcuos/", "rcuog/", "rcub/", "swapper",
	"watchdog/", "watchdogd", "cpuhp/", "idle_inject/", "kthreadd", "irq/", "kcompactd", "khugepaged",
	"kswapd", "oom_reaper", "kdamond", "kblockd", "kauditd", "khungtaskd", "kintegrityd", "writeback",
	"jbd2/", "ext4-", "xfs", "btrfs-", "scsi_", "nvme-", "kdevtmpfs", "netns", "kstrp", "ksmd",
	"kthrotld", "ipv6_addrconf", "mm_percpu_wq", "inet_frag_wq", "card0-crtc", "<idle>",
}

// IsKthread reports whether a comm names a kernel thread (or the idle
// task), which the import filters unless --keep-kthreads.
func IsKthread(comm string) bool {
	for _, p := range kthreadPrefixes {
		if strings.HasPrefix(comm, p) {
			return true
		}
	}
	return false
}

func (b *builder) drop(reason string) { b.dropped[reason]++ }

// newTask creates the task for pid (a new incarnation when pid was seen
// before). parent is the forking task or nil.
func (b *builder) newTask(pid int32, comm string, parent *btask) *btask {
	if comm == "" || comm == "<...>" {
		comm = fmt.Sprintf("pid%d", pid)
	}
	t := &btask{idx: -1, pid: pid, name: comm, state: stRunnable}
	b.tasks[pid] = t
	b.all = append(b.all, t)
	if pid == 0 || (!b.opt.KeepKthreads && IsKthread(comm)) {
		t.filtered = true
		b.drop(DropKthreads)
		return t
	}
	if len(b.file.Tasks) >= b.lim.tasks {
		if b.err == nil {
			b.err = errTooManyTasks(b.lim.tasks, "cut the trace to fewer tasks (a shorter window, or the tasks of interest only)")
		}
		t.filtered = true
		return t
	}
	t.idx = len(b.file.Tasks)
	b.file.Tasks = append(b.file.Tasks, workload.TraceTask{Name: comm, PID: int(pid)})
	if parent != nil {
		p := parent.idx
		b.file.Tasks[t.idx].Parent = &p
	}
	return t
}

// task returns pid's task, if any.
func (b *builder) task(pid int32) *btask { return b.tasks[pid] }

func (b *builder) ops_(t *btask) *[]workload.TraceOp { return &b.file.Tasks[t.idx].Ops }

func (b *builder) emit(t *btask, op workload.TraceOp) {
	ops := b.ops_(t)
	*ops = append(*ops, op)
	b.ops++
	if b.ops > b.lim.ops && b.err == nil {
		b.err = errTooManyOps(b.lim.ops, "cut the trace to a shorter window")
	}
}

// flushRun writes the CPU time run so far (up to now, if running) as a
// run op.
func (b *builder) flushRun(t *btask, now int64) {
	if t.state == stRunning && now > t.since {
		t.pending += now - t.since
		t.since = now
	}
	for t.pending > 0 && b.err == nil {
		n := min(t.pending, workload.TraceMaxNS)
		b.emit(t, workload.TraceOp{Kind: workload.TraceRun, NS: n})
		t.pending -= n
	}
}

func (b *builder) setPrio(t *btask, r taskRef) {
	if t.idx < 0 || t.prioSet || !r.has {
		return
	}
	t.prioSet = true
	switch {
	case r.prio >= 100 && r.prio <= 139:
		b.file.Tasks[t.idx].Nice = int(r.prio) - 120
	default:
		t.rt = true
		b.drop(DropRT)
	}
}

// rename keeps the latest real comm (a task that execs changes it).
func (b *builder) rename(t *btask, comm string) {
	if t.idx >= 0 && comm != "" && comm != "<...>" {
		b.file.Tasks[t.idx].Name = comm
	}
}

// sleep starts a sleep of t at now: a placeholder op that the wakeup
// resolves (a wait for the waker, or a timed sleep).
func (b *builder) sleep(t *btask, now int64) {
	b.flushRun(t, now)
	b.markSync(t)
	b.placeholder(t, now)
}

// placeholder starts a sleep at since whose end is not known yet.
func (b *builder) placeholder(t *btask, since int64) {
	t.state, t.sleepAt = stSleeping, since
	t.sleepOp = len(*b.ops_(t))
	b.emit(t, workload.TraceOp{Kind: workload.TraceSleep, NS: placeholderSleepNS})
}

// awake makes a task the trace shows acting (waking, forking) running:
// if we thought it asleep, its wakeup is missing from the trace.
func (b *builder) awake(t *btask, now int64) {
	if t.filtered {
		return
	}
	switch t.state {
	case stSleeping:
		b.resolve(t, now, nil, DropNoWakeup)
		t.state, t.since = stRunning, now
	case stRunnable, stWoken:
		t.state, t.since = stRunning, now
	}
}

// markSync gives the WF_SYNC hint to the wakes a task issued just before
// it sleeps or exits (within syncWindowNS of CPU time), as pipes and
// sockets do when the waker is about to block.
func (b *builder) markSync(t *btask) {
	ops := *b.ops_(t)
	ran := int64(0)
	for i := len(ops) - 1; i >= 0 && ran < syncWindowNS; i-- {
		switch ops[i].Kind {
		case workload.TraceRun:
			ran += ops[i].NS
		case workload.TraceWake:
			ops[i].Sync = true
		default:
			return
		}
	}
}

func (b *builder) exit(t *btask, now int64) {
	b.flushRun(t, now)
	b.markSync(t)
	b.emit(t, workload.TraceOp{Kind: workload.TraceExit})
	t.state = stExited
}

// resolve ends t's sleep: a wait for waker (nil: a timed sleep for
// reason).
func (b *builder) resolve(t *btask, now int64, waker *btask, reason string) {
	ops := *b.ops_(t)
	last := &ops[t.sleepOp]
	if waker != nil {
		*last = workload.TraceOp{Kind: workload.TraceWait, Task: waker.idx}
	} else {
		*last = workload.TraceOp{Kind: workload.TraceSleep, NS: min(max(now-t.sleepAt, 0), workload.TraceMaxNS)}
		b.timed++
		b.drop(reason)
	}
}

// lineTask returns the task current on the event's CPU (the line's own
// task), creating it as running since the CPU's first event when it was
// not seen before.
func (b *builder) lineTask(ev *event) *btask {
	pid, comm := ev.pid, b.str(ev.comm)
	if pid == pidCurrent {
		p, ok := b.cpuCur[ev.cpu]
		if !ok {
			return nil
		}
		pid, comm = p, ""
	}
	t := b.task(pid)
	if t == nil || t.state == stExited {
		t = b.newTask(pid, comm, nil)
		t.state, t.since = stRunning, b.cpuFirst[ev.cpu]
	}
	return t
}

func (b *builder) handle(ev *event) {
	if _, ok := b.cpuFirst[ev.cpu]; !ok {
		b.cpuFirst[ev.cpu] = ev.ts
	}
	b.tEnd = max(b.tEnd, ev.ts)
	switch ev.kind {
	case evSwitch:
		b.onSwitch(ev)
	case evWaking, evWakeup, evWakeupNew:
		b.onWake(ev)
	case evFork:
		b.onFork(ev)
	case evExit:
		if ev.a.pid == 0 {
			return
		}
		t := b.task(ev.a.pid)
		if t != nil && t.state != stExited {
			t.exiting = true
		}
	case evMigrate:
		b.drop(DropMigrations)
	}
}

func (b *builder) onSwitch(ev *event) {
	now := ev.ts
	b.cpuCur[ev.cpu] = ev.b.pid
	if pid := ev.a.pid; pid != 0 {
		p := b.task(pid)
		if p == nil || p.state == stExited {
			if p != nil && p.state == stExited {
				b.drop(DropPIDReuse)
			}
			// Running since the CPU's first event: it was on the CPU
			// when the trace began.
			p = b.newTask(pid, b.str(ev.a.comm), nil)
			p.state, p.since = stRunning, b.cpuFirst[ev.cpu]
		}
		b.setPrio(p, ev.a)
		if !p.filtered {
			b.rename(p, b.str(ev.a.comm))
			if p.state == stSleeping {
				// A switch-out of a task we thought asleep: its wakeup
				// is missing (lost events).
				b.resolve(p, now, nil, DropNoWakeup)
				p.state, p.since = stRunning, now
			}
			if p.state != stRunning {
				p.state, p.since = stRunning, now
			}
			st := b.str(ev.state)
			switch {
			case p.exiting || strings.ContainsAny(st, "XZx"):
				b.exit(p, now)
			case strings.HasPrefix(st, "R"):
				p.pending += now - p.since
				p.state = stRunnable
			default: // S, D, T, t, I, P, W, K, combinations
				b.sleep(p, now)
			}
		}
	}
	if pid := ev.b.pid; pid != 0 {
		n := b.task(pid)
		if n == nil || n.state == stExited {
			if n != nil {
				b.drop(DropPIDReuse)
				n = b.newTask(pid, b.str(ev.b.comm), nil)
				if !n.filtered && now > b.t0 {
					b.placeholder(n, b.t0)
				}
			} else {
				// First seen now: runnable since the trace began.
				n = b.newTask(pid, b.str(ev.b.comm), nil)
			}
		}
		b.setPrio(n, ev.b)
		if !n.filtered {
			b.rename(n, b.str(ev.b.comm))
			if n.state == stSleeping {
				b.resolve(n, now, nil, DropNoWakeup)
			}
			n.state, n.since = stRunning, now
		}
	}
}

func (b *builder) onWake(ev *event) {
	now := ev.ts
	if ev.a.pid == 0 {
		return
	}
	w := b.task(ev.a.pid)
	if ev.kind == evWakeupNew && (w == nil || w.state == stExited) {
		// A new task whose fork was not traced: the line's task forked it.
		b.onFork(&event{ts: now, cpu: ev.cpu, pid: ev.pid, comm: ev.comm, a: taskRef{comm: ev.comm, pid: ev.pid}, b: ev.a})
		w = b.task(ev.a.pid)
	}
	if w == nil || w.state == stExited {
		// Asleep since the trace began.
		w = b.newTask(ev.a.pid, b.str(ev.a.comm), nil)
		if !w.filtered {
			b.placeholder(w, b.t0)
		}
	}
	b.setPrio(w, ev.a)
	waker := b.wakerOf(ev)
	if w.filtered {
		if waker != nil && !waker.filtered {
			b.drop(DropFilteredWakee)
		}
		return
	}
	b.rename(w, b.str(ev.a.comm))
	if ev.kind == evWakeupNew {
		if w.state == stRunnable {
			w.state = stWoken
		}
		return
	}
	if w.state != stSleeping {
		if w.state != stWoken { // a sched_wakeup after its sched_waking is expected
			b.drop(DropNotAsleep)
		}
		return
	}
	switch {
	case ev.irq:
		b.resolve(w, now, nil, DropIRQWaker)
	case waker == nil:
		b.resolve(w, now, nil, DropIdleWaker)
	case waker == w:
		b.resolve(w, now, nil, DropSelfWaker)
	case waker.filtered:
		if waker.pid == 0 {
			b.resolve(w, now, nil, DropIdleWaker)
		} else {
			b.resolve(w, now, nil, DropKthreadWaker)
		}
	default:
		b.awake(waker, now)
		b.flushRun(waker, now)
		b.emit(waker, workload.TraceOp{Kind: workload.TraceWake, Task: w.idx})
		b.resolve(w, now, waker, "")
		b.wakes++
		b.pairs[[2]int{int(waker.pid), int(w.pid)}]++
	}
	w.state = stWoken
}

// wakerOf is the task that caused a wakeup: the line's task (nil for the
// idle task).
func (b *builder) wakerOf(ev *event) *btask {
	if ev.pid == 0 {
		return nil
	}
	return b.lineTask(ev)
}

func (b *builder) onFork(ev *event) {
	now := ev.ts
	var parent *btask
	if ev.a.pid != 0 {
		parent = b.task(ev.a.pid)
		if parent == nil || parent.state == stExited {
			parent = b.newTask(ev.a.pid, b.str(ev.a.comm), nil)
			parent.state, parent.since = stRunning, b.cpuFirst[ev.cpu]
		}
	}
	if ev.b.pid == 0 {
		return
	}
	if old := b.task(ev.b.pid); old != nil && old.state != stExited {
		b.drop(DropPIDReuse)
	}
	var c *btask
	if parent != nil && !parent.filtered {
		b.awake(parent, now)
		c = b.newTask(ev.b.pid, b.str(ev.b.comm), parent)
		if !c.filtered {
			b.flushRun(parent, now)
			b.emit(parent, workload.TraceOp{Kind: workload.TraceFork, Task: c.idx})
		}
	} else {
		c = b.newTask(ev.b.pid, b.str(ev.b.comm), nil)
		if !c.filtered {
			b.drop(DropUntracedFork)
			if now > b.t0 {
				b.emit(c, workload.TraceOp{Kind: workload.TraceSleep, NS: min(now-b.t0, workload.TraceMaxNS)})
			}
		}
	}
	c.state = stWoken
}

// errTooManyTasks and errTooManyOps say which limit of the replay a
// trace crosses, and what to do.
func errTooManyTasks(limit int, fix string) error {
	return fmt.Errorf("more than %d tasks (the replay's limit, workload.TraceMaxTasks); %s", limit, fix)
}

func errTooManyOps(limit int, fix string) error {
	return fmt.Errorf("more than %d ops (the replay's limit, workload.TraceMaxOps); %s", limit, fix)
}

// finish closes every task at the end of the trace.
func (b *builder) finish() {
	for _, t := range b.all {
		if t.filtered || t.state == stExited {
			continue
		}
		if t.state == stSleeping {
			ops := b.ops_(t)
			b.ops -= len(*ops) - t.sleepOp
			*ops = (*ops)[:t.sleepOp]
			if !t.exiting {
				b.drop(DropAsleepAtEnd)
			}
		}
		if t.exiting {
			b.exit(t, b.tEnd)
		} else {
			b.flushRun(t, b.tEnd)
		}
	}
	b.file.DurationNS = b.tEnd - b.t0
}
