package workload

import (
	"fmt"

	"schedplay/engine"
)

// pipe is `perf bench sched pipe` as in perf 6.1 (workloads.md §2.3): two
// tasks and two pipes with one 4-byte token. Task 0 reads pipe 1 and
// writes pipe 2; task 1 writes pipe 1 and reads pipe 2; each of the l
// loops is one round trip — 2 writes, 2 reads, 2 sync wakeups, and either
// 2 context switches on one CPU or 2 cross-CPU wakeups.
//
// Process mode (default) forks task 0 and task 1 is the parent, which
// reaps it at the end; with T=1 both are threads of one process (task 1
// stands for the joining main thread too). The workload finishes when
// task 1 has reaped task 0. Metrics: completion time; ops = round trips
// (counted by task 1 as each one completes), so ops/s is perf's
// "ops/sec" and 1e6 / ops/s its "usecs/op"; both tasks' wakeup latencies.
func init() {
	register(&Kind{
		Name: "pipe",
		Doc:  "perf bench sched pipe: two tasks pass one token through two pipes, l round trips; finishes",
		Keys: []Key{
			{Name: "l", Type: IntKey, Default: "1000000", Min: 1, Max: 1000000000, Doc: "round trips (-l)"},
			{Name: "T", Type: IntKey, Default: "0", Min: 0, Max: 1, Doc: "1: two threads instead of two processes (-T)"},
		},
		build: func(b *Builder) error { _, err := addPipeBench(b); return err },
	})
}

// pipeToken is the message size: perf passes an int.
const pipeToken = 4

type pipeBench struct {
	l       int64
	threads bool
	p1, p2  *Channel
	tasks   [2]*pipeTask

	child0Exited bool
	Trips        int64
	doneAt       int64
}

func addPipeBench(b *Builder) (*pipeBench, error) {
	pb := &pipeBench{l: b.Int("l"), threads: b.Int("T") == 1, doneAt: -1,
		p1: NewChannel(PipeChan, "pipe 1"), p2: NewChannel(PipeChan, "pipe 2")}
	b.Sim.SetFinite(b.ID)
	mms := newMMTracker(b.Sim)
	shared := mms.newMM()
	for _, nr := range []int{0, 1} {
		pb.tasks[nr] = &pipeTask{pb: pb, nr: nr}
	}
	if !pb.threads && b.Policy != engine.PolicyDeadline {
		// Process mode: the workload starts perf's process (task 1),
		// which forks task 0 (pipe.c: fork(), the child runs worker 0,
		// the parent worker 1 and then waitpid). Fork placement, the
		// child's start vruntime (task_fork_fair) and its scheduling
		// class (inherited: a SCHED_FIFO perf forks a SCHED_FIFO child,
		// placed by select_task_rq_rt's WF_FORK path) are the parent's
		// doing, as on the real machine.
		t1 := pb.tasks[1]
		ts := b.TaskSpec("pipe/1", t1)
		ts.MM, ts.MeasureWakeups = int(shared), true
		id, err := b.Spawn(ts)
		if err != nil {
			return nil, err
		}
		t1.id, t1.io.W.ID = id, id
		child := b.TaskSpec("pipe/0", pb.tasks[0])
		child.MM, child.MeasureWakeups = int(mms.newMM()), true
		t1.fork, t1.state = &child, ptFork
		if err := b.Sim.ReserveTasks(1); err != nil {
			return nil, err
		}
		return pb, nil
	}
	// Thread mode: both workers are threads the main thread creates
	// before it joins them (task 1 stands for it too). A SCHED_DEADLINE
	// process cannot fork (EAGAIN): each of the two sets its reservation
	// itself after perf's fork, and as the engine gives a task its class
	// for good when it is created, the workload creates both processes
	// (the child with its own address space). Task 0 is created first: a
	// task created later starts with a smaller START_DEBIT (the slice
	// shrinks as nr_running grows), so task 1 ends up with the smaller
	// vruntime, as the main thread has against its threads.
	parentCPU := -1
	for _, nr := range []int{0, 1} {
		t := pb.tasks[nr]
		var ts engine.TaskSpec
		if pb.threads {
			ts = b.ThreadSpec(fmt.Sprintf("pipe/%d", nr), t)
			ts.MM = int(shared)
		} else {
			ts = b.TaskSpec(fmt.Sprintf("pipe/%d", nr), t)
			ts.MM = int(shared)
			if nr == 0 {
				ts.MM = int(mms.newMM()) // the forked child
			}
		}
		ts.MeasureWakeups = true
		if parentCPU >= 0 {
			ts.ParentCPU = parentCPU
		}
		id, err := b.Spawn(ts)
		if err != nil {
			return nil, err
		}
		t.id = id
		t.io.W.ID = id
		parentCPU = b.Sim.Task(id).CPU()
	}
	return pb, nil
}

// Task states.
const (
	ptFirst = iota
	ptSecond
	ptFork   // task 1 in process mode: fork() task 0 first
	ptForked // the child exists: it is woken where fork placement puts it
	ptIO
	ptEnd
	ptExited
	ptReap
	ptGone
)

type pipeTask struct {
	pb      *pipeBench
	id      engine.TaskID
	nr      int
	state   int
	next    int // state after the current transfer
	i       int64
	io      chanIO
	waiting bool // task 1 waiting for task 0 to exit
	// fork is task 0's spec, which task 1 forks in process mode.
	fork *engine.TaskSpec
}

// NextInto implements engine.ProgramInto (perf's worker_thread, then exit or
// reap).
func (t *pipeTask) NextInto(ctx *engine.Ctx, a *engine.Action) {
	pb := t.pb
	for {
		switch t.state {
		case ptFork:
			// do_fork copies the process; the child is woken
			// (wake_up_new_task, fork placement) when it returns.
			t.state = ptForked
			*a = engine.KernelRun(modernProcCosts.fork)
			return
		case ptForked:
			c := pb.tasks[0]
			id, err := ctx.SpawnReserved(*t.fork)
			if err != nil {
				// Unreachable: addPipeBench reserved the task and the
				// spec was valid when built.
				panic(fmt.Sprintf("pipe: fork: %v", err))
			}
			c.id, c.io.W.ID = id, id
			t.fork, t.state = nil, ptFirst
		case ptFirst:
			if t.i == pb.l {
				t.state = ptEnd
				continue
			}
			if t.nr == 0 {
				t.io.start(pb.p1, false, pipeToken) // read
			} else {
				t.io.start(pb.p1, true, pipeToken) // write
			}
			t.state, t.next = ptIO, ptSecond
		case ptSecond:
			if t.nr == 0 {
				t.io.start(pb.p2, true, pipeToken) // write
			} else {
				t.io.start(pb.p2, false, pipeToken) // read
			}
			t.state, t.next = ptIO, ptFirst
		case ptIO:
			if t.io.next(ctx, a) {
				return
			}
			t.state = t.next
			if t.next == ptFirst {
				t.i++
				if t.nr == 1 {
					pb.Trips++
					ctx.CountOp(1)
				}
			}
		case ptEnd:
			if t.nr == 0 {
				// The forked child (or thread) exits, then wakes task 1
				// if it already waits in waitpid/pthread_join.
				t.state = ptExited
				if pb.threads {
					*a = kernelStep(exitThreadNS, true)
					return
				}
				*a = kernelStep(exitProcessNS, true)
				return
			}
			if !pb.child0Exited {
				t.waiting = true
				*a = engine.Block()
				return
			}
			t.state = ptReap
			if pb.threads {
				*a = engine.KernelRun(reapThreadNS)
				return
			}
			*a = engine.KernelRun(reapProcessNS)
			return
		case ptExited:
			pb.child0Exited = true
			t.state = ptGone
			if other := pb.tasks[1]; other.waiting {
				other.waiting = false
				// __wake_up_parent (sync) for a process; the CLEARTID
				// futex wake (plain) for a thread.
				*a = sectionWake(other.id, !pb.threads, false)
				return
			}
		case ptReap:
			pb.doneAt = ctx.Now()
			ctx.Finish()
			t.state = ptGone
		case ptGone:
			*a = engine.Exit()
			return
		}
	}
}

// Next implements engine.Program: NextInto, returned by value.
func (t *pipeTask) Next(ctx *engine.Ctx) engine.Action {
	var a engine.Action
	t.NextInto(ctx, &a)
	return a
}
