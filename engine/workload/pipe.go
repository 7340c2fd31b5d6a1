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
	parentCPU := -1
	// Task 0 is created first: a task created later starts with a smaller
	// START_DEBIT (the slice shrinks as nr_running grows), so task 1 ends
	// up with the smaller vruntime, as perf's long-running parent has
	// against the child it forks.
	for _, nr := range []int{0, 1} {
		t := &pipeTask{pb: pb, nr: nr}
		pb.tasks[nr] = t
		mm := shared
		var ts engine.TaskSpec
		if pb.threads {
			ts = b.ThreadSpec(fmt.Sprintf("pipe/%d", nr), t)
		} else {
			if nr == 0 {
				mm = mms.newMM() // the forked child
			}
			ts = b.TaskSpec(fmt.Sprintf("pipe/%d", nr), t)
		}
		ts.MM = int(mm)
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
}

// NextInto implements engine.ProgramInto (perf's worker_thread, then exit or
// reap).
func (t *pipeTask) NextInto(ctx *engine.Ctx, a *engine.Action) {
	pb := t.pb
	for {
		switch t.state {
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
