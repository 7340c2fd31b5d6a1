package workload

import (
	"fmt"

	"schedplay/engine"
)

// hackbench is rt-tests hackbench 2.4 (and perf bench sched messaging,
// whose loop is the same; workloads.md §2.2): g groups of f senders and f
// receivers joined by f channels (AF_UNIX socketpairs, or pipes with p=1).
// Every sender of a group writes one s-byte message to each of the
// group's f channels per loop, l loops; receiver j reads f·l messages from
// channel j and exits. Groups do not interact.
//
// A parent task stands for hackbench's main thread: it forks the children
// one by one (each fork costs it CPU time, and fork balancing places the
// child while the earlier ones already wait at the barrier); each child
// writes a byte to the "ready" pipe and polls the "wake" pipe; once all are ready the parent stamps the start time and
// writes the wake pipe, which wakes every child at once. pipe_write wakes
// pollers with wake_up_interruptible_sync_poll, so the herd wakeup carries
// WF_SYNC. The parent then reaps every child (wait4, or pthread_join in
// thread mode): an exiting process wakes its parent through
// __wake_up_parent (sync), an exiting thread through the CLEARTID futex
// (not sync). The workload finishes when the last child is reaped.
//
// Metrics: completion time (Ctx.Finish, so completion_s; it includes the
// forks and the children reaching the barrier before the start stamp), ops = messages received, and one request-latency sample: the
// makespan hackbench prints as "Time:", from the start stamp to the last
// reap, in µs.
//
// Process mode (default) gives every task its own address space, so a
// switch between two of them pays the engine's mm_switch_ns; thread mode
// (T=1) shares one, and its threads share the process's memory for NUMA
// balancing (Builder.ThreadSpec). Fds, buffers and syscall costs are the
// same kernel objects either way.
func init() {
	register(&Kind{
		Name: "hackbench",
		forks: func(*Builder) string {
			return "its main task forks the senders and receivers (processes, or threads with T=1)"
		},
		Doc: "rt-tests hackbench / perf bench sched messaging: g groups of f senders × f receivers over socketpairs or pipes; finishes",
		Keys: []Key{
			{Name: "g", Type: IntKey, Default: "10", Min: 1, Max: 4096, Doc: "groups (-g)"},
			{Name: "f", Type: IntKey, Default: "20", Min: 1, Max: 1024, Doc: "senders and receivers (fds) per group (-f)"},
			{Name: "l", Type: IntKey, Default: "100", Min: 1, Max: 100000000, Doc: "loops: messages each sender writes to each channel (-l)"},
			{Name: "s", Type: IntKey, Default: "100", Min: 1, Max: 1 << 20, Doc: "message size in bytes (-s)"},
			{Name: "p", Type: IntKey, Default: "0", Min: 0, Max: 1, Doc: "1: pipes instead of AF_UNIX socketpairs (-p)"},
			{Name: "T", Type: IntKey, Default: "0", Min: 0, Max: 1, Doc: "1: threads instead of processes (-T)"},
		},
		build: func(b *Builder) error { _, err := addHackbench(b); return err },
	})
}

// Process life-cycle costs shared by the finite kinds.
const (
	// cloneThreadNS: pthread_create — clone with CLONE_VM (no page
	// tables to copy) plus the mmap of the thread's stack ≈ 10 µs.
	cloneThreadNS = 10 * engine.Microsecond
	// exitProcessNS: do_exit of a small forked process — tear down its
	// copy-on-write address space, close its fds, notify the parent
	// ≈ 20 µs (compile.go's modern exit cost).
	exitProcessNS = 20 * engine.Microsecond
	// exitThreadNS: do_exit of a thread: no address space to free, the
	// task, its files reference and the CLEARTID futex wake ≈ 5 µs.
	exitThreadNS = 5 * engine.Microsecond
	// reapProcessNS: one wait4 reaping a zombie (release_task, freeing
	// the pid and task_struct) ≈ 2 µs.
	reapProcessNS = 2 * engine.Microsecond
	// reapThreadNS: pthread_join of an exited thread (futex wait return,
	// stack bookkeeping) ≈ 1 µs.
	reapThreadNS = 1 * engine.Microsecond
	// pollSetupNS: poll() on one fd: fdget, a poll-table entry added to
	// the pipe's wait queue, and its removal after the wakeup ≈ 0.3 µs.
	pollSetupNS = 300
)

// hackbench is one instance's shared state.
type hackbench struct {
	g, f, l, s int64
	pipe       bool
	threads    bool
	chans      [][]*Channel // [group][fd]
	parent     *hbParent
	children   []*hbChild
	n          int64 // children

	ready   int64
	started bool // the wake pipe has been written
	barrier []*hbChild
	exited  int64

	// Measurements.
	startAt, doneAt int64
	Sent, Received  int64 // messages
}

func addHackbench(b *Builder) (*hackbench, error) {
	g, f, l, s := b.Int("g"), b.Int("f"), b.Int("l"), b.Int("s")
	if n := 2*g*f + 1; n > engine.MaxTasks/2 {
		return nil, fmt.Errorf("g×2f+1 = %d tasks is more than the limit %d", n, engine.MaxTasks/2)
	}
	hb := &hackbench{g: g, f: f, l: l, s: s, pipe: b.Int("p") == 1, threads: b.Int("T") == 1, n: 2 * g * f, startAt: -1, doneAt: -1}
	kind := UnixChan
	if hb.pipe {
		kind = PipeChan
	}
	for gi := int64(0); gi < g; gi++ {
		row := make([]*Channel, f)
		for j := range row {
			row[j] = NewChannel(kind, fmt.Sprintf("group %d fd %d", gi, j))
		}
		hb.chans = append(hb.chans, row)
	}
	b.Sim.SetFinite(b.ID)
	mms := newMMTracker(b.Sim)
	parentMM := mms.newMM()
	spec := func(name string, mm int32, p engine.Program) engine.TaskSpec {
		ts := b.TaskSpec(name, p)
		if hb.threads {
			ts = b.ThreadSpec(name, p)
		}
		ts.MM = int(mm)
		return ts
	}

	hb.parent = &hbParent{hb: hb}
	id, err := b.Spawn(spec("hackbench/main", parentMM, hb.parent))
	if err != nil {
		return nil, err
	}
	hb.parent.id = id
	// hackbench forks each group's receivers, then its senders; the parent
	// does the forking (hpFork), so fork placement sees the children
	// already waiting at the barrier, as on the real machine.
	for gi := int64(0); gi < g; gi++ {
		for _, sender := range []bool{false, true} {
			for j := int64(0); j < f; j++ {
				c := &hbChild{hb: hb, sender: sender, group: int(gi), idx: int(j)}
				role := "receiver"
				if sender {
					role = "sender"
				}
				mm := parentMM
				if !hb.threads {
					mm = mms.newMM()
				}
				ts := spec(fmt.Sprintf("hackbench/%d.%s%d", gi, role, j), mm, c)
				ts.MeasureWakeups = true
				hb.parent.forks = append(hb.parent.forks, ts)
				hb.children = append(hb.children, c)
			}
		}
	}
	if err := b.Sim.ReserveTasks(len(hb.children)); err != nil {
		return nil, err
	}
	return hb, nil
}

// Parent states.
const (
	hpFork = iota
	hpForked
	hpWaitReady
	hpRelease
	hpHerd
	hpReap
	hpDone
)

type hbParent struct {
	hb      *hackbench
	id      engine.TaskID
	state   int
	waiting bool // blocked reading the ready pipe or in wait4
	wakes   wakeList
	reaped  int64
	forks   []engine.TaskSpec // children still to fork, in order
	forked  int
}

// Next implements engine.Program for hackbench's main thread.
func (p *hbParent) Next(ctx *engine.Ctx) engine.Action {
	hb := p.hb
	for {
		switch p.state {
		case hpFork:
			if p.forked == len(p.forks) {
				p.forks = nil
				p.state = hpWaitReady
				continue
			}
			// do_fork copies the task first; the child is woken
			// (wake_up_new_task, fork placement) when it returns.
			p.state = hpForked
			if hb.threads {
				return engine.KernelRun(cloneThreadNS)
			}
			return engine.KernelRun(modernProcCosts.fork)
		case hpForked:
			c := hb.children[p.forked]
			id, err := ctx.SpawnReserved(p.forks[p.forked])
			if err != nil {
				// Unreachable: addHackbench reserved the tasks and
				// the specs were valid when built.
				panic(fmt.Sprintf("hackbench: fork: %v", err))
			}
			c.id = id
			c.io.W.ID = id
			p.forked++
			p.state = hpFork
		case hpWaitReady:
			if hb.ready < hb.n {
				p.waiting = true
				return engine.Block()
			}
			p.state = hpRelease
			hb.startAt = ctx.Now() // gettimeofday(&start) before the write
			return kernelStep(writeCostNS(PipeChan, 1), true)
		case hpRelease:
			// The byte is in the wake pipe: every poller is woken (sync).
			hb.started = true
			for _, c := range hb.barrier {
				c.atBarrier = false
				p.wakes.add(c.id)
			}
			hb.barrier = nil
			p.wakes.sync = true
			p.state = hpHerd
		case hpHerd:
			if a, ok := p.wakes.next(); ok {
				return a
			}
			p.state = hpReap
		case hpReap:
			if k := hb.exited - p.reaped; k > 0 {
				p.reaped = hb.exited
				cost := reapProcessNS
				if hb.threads {
					cost = reapThreadNS
				}
				return engine.KernelRun(k * cost)
			}
			if p.reaped < hb.n {
				p.waiting = true
				return engine.Block()
			}
			hb.doneAt = ctx.Now()
			ctx.Finish()
			ctx.RecordLatency((hb.doneAt - hb.startAt) / engine.Microsecond)
			p.state = hpDone
		case hpDone:
			return engine.Exit()
		}
	}
}

// wakeParent returns the wakeup of the parent if it is blocked waiting
// (the caller issues it at once).
func (hb *hackbench) wakeParent(sync bool) (engine.Action, bool) {
	if !hb.parent.waiting {
		return engine.Action{}, false
	}
	hb.parent.waiting = false
	return sectionWake(hb.parent.id, sync, false), true
}

// Child states.
const (
	hcStart = iota
	hcReady
	hcBarrier
	hcLoop
	hcIO
	hcExit
	hcExitNotify
	hcGone
)

type hbChild struct {
	hb        *hackbench
	id        engine.TaskID
	sender    bool
	group     int
	idx       int
	state     int
	atBarrier bool
	io        chanIO
	i, j      int64 // sender: loop and fd; receiver: i = messages read
}

// NextInto implements engine.ProgramInto for a sender or receiver.
func (c *hbChild) NextInto(ctx *engine.Ctx, a *engine.Action) {
	hb := c.hb
	for {
		switch c.state {
		case hcStart:
			// ready(): write a byte to the ready pipe, then poll the
			// wake pipe.
			c.state = hcReady
			*a = engine.KernelRun(writeCostNS(PipeChan, 1) + pollSetupNS)
			return
		case hcReady:
			hb.ready++
			c.state = hcBarrier
			if hb.ready == hb.n {
				if w, ok := hb.wakeParent(true); ok {
					*a = w
					return
				}
			}
		case hcBarrier:
			if !hb.started {
				c.atBarrier = true
				hb.barrier = append(hb.barrier, c)
				*a = engine.Block()
				return
			}
			c.state = hcLoop
		case hcLoop:
			ch := hb.chans[c.group]
			if c.sender {
				if c.i == hb.l {
					c.state = hcExit
					continue
				}
				c.io.start(ch[c.j], true, hb.s)
			} else {
				if c.i == hb.f*hb.l {
					c.state = hcExit
					continue
				}
				c.io.start(ch[c.idx], false, hb.s)
			}
			c.state = hcIO
		case hcIO:
			if c.io.next(ctx, a) {
				return
			}
			c.state = hcLoop
			if c.sender {
				hb.Sent++
				if c.j++; c.j == hb.f {
					c.j = 0
					c.i++
				}
			} else {
				hb.Received++
				c.i++
				ctx.CountOp(1)
			}
		case hcExit:
			c.state = hcExitNotify
			if hb.threads {
				*a = kernelStep(exitThreadNS, true)
				return
			}
			*a = kernelStep(exitProcessNS, true)
			return
		case hcExitNotify:
			hb.exited++
			c.state = hcGone
			if w, ok := hb.wakeParent(!hb.threads); ok {
				*a = w
				return
			}
		case hcGone:
			*a = engine.Exit()
			return
		}
	}
}

// Next implements engine.Program: NextInto, returned by value.
func (c *hbChild) Next(ctx *engine.Ctx) engine.Action {
	var a engine.Action
	c.NextInto(ctx, &a)
	return a
}
