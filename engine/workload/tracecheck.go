package workload

import (
	"fmt"
	"slices"
	"strings"
)

// The checks of a trace workload that look at the tasks together: a file
// can be valid op by op and still never finish, because its tasks wait
// for each other to start (a fork cycle) or to wake them (a deadlock).
// Without them such a file ran to --duration doing nothing and exited 0.

// checkForkCycles refuses tasks whose "parent" chain comes back to
// itself: each of them starts only when another of them forks it, so
// none ever starts (only tasks without a parent start at time 0).
func (f *TraceFile) checkForkCycles() error {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(f.Tasks))
	for i := range f.Tasks {
		var path []int
		j := i
		for state[j] == unseen {
			state[j] = onPath
			path = append(path, j)
			p := f.Tasks[j].Parent
			if p == nil {
				break
			}
			j = *p
		}
		if state[j] == onPath && f.Tasks[j].Parent != nil {
			// j is on the path just walked and its parent chain led
			// back to it: the path from j on is the cycle.
			for k, t := range path {
				if t == j {
					return f.forkCycleError(path[k:])
				}
			}
		}
		for _, t := range path {
			state[t] = done
		}
	}
	return nil
}

// forkCycleError names the tasks of a fork cycle, each forked by the
// next (the last by the first).
func (f *TraceFile) forkCycleError(cycle []int) error {
	cycle = rotateToMin(cycle)
	if len(cycle) == 2 {
		return fmt.Errorf("trace: %s form a fork cycle: each is the other's \"parent\", so neither is ever forked and neither runs (a task without \"parent\" starts at time 0)",
			f.taskList(cycle))
	}
	links := make([]string, len(cycle))
	for k, t := range cycle {
		links[k] = fmt.Sprintf("%d by %d", t, cycle[(k+1)%len(cycle)])
	}
	links[0] = fmt.Sprintf("%d is forked by %d", cycle[0], cycle[1])
	return fmt.Errorf("trace: %s form a fork cycle: %s, so none of them is ever forked and none runs (a task without \"parent\" starts at time 0)",
		f.taskList(slices.Sorted(slices.Values(cycle))), strings.Join(links, ", "))
}

// taskList names tasks: `tasks 3 ("foo") and 5 ("bar")`.
func (f *TraceFile) taskList(tasks []int) string {
	names := make([]string, len(tasks))
	for k, t := range tasks {
		names[k] = fmt.Sprintf("%d (%q)", t, shorten(f.Tasks[t].Name, 40))
	}
	if len(names) == 1 {
		return "task " + names[0]
	}
	return "tasks " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// traceProgress is how far each task of a file gets when its ops are
// played without time.
type traceProgress struct {
	pc      []int  // the next op of each task
	started []bool // forked (or started at time 0)
	// waitingFor is the task each one is blocked waiting for, -1 when
	// it is not blocked.
	waitingFor []int
}

// stuck reports whether task i never ends: it never starts, or blocks
// for ever before its last op.
func (p *traceProgress) stuck(i, ops int) bool { return !p.started[i] || p.pc[i] < ops }

// playWithoutTime runs the file's ops the way the replay matches them,
// ignoring time: runs and sleeps always end, a fork starts its task, a
// wake is kept until the wakee's wait for that waker takes it. Since no
// wake is lost, what each task reaches does not depend on when anything
// happens: a task this leaves stuck is stuck in every replay, on every
// preset, with every knob. Each op is played once: linear in the file.
func (f *TraceFile) playWithoutTime() *traceProgress {
	n := len(f.Tasks)
	p := &traceProgress{pc: make([]int, n), started: make([]bool, n), waitingFor: make([]int, n)}
	// tokens[[waker, wakee]]: wakes issued that no wait has taken yet.
	tokens := map[[2]int]int{}
	var ready []int
	for i := range f.Tasks {
		p.waitingFor[i] = -1
		if f.Tasks[i].Parent == nil {
			p.started[i] = true
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		ops := f.Tasks[i].Ops
		for p.pc[i] < len(ops) {
			op := ops[p.pc[i]]
			if op.Kind == TraceWait {
				k := [2]int{op.Task, i}
				if tokens[k] == 0 {
					p.waitingFor[i] = op.Task
					break
				}
				tokens[k]--
			}
			switch op.Kind {
			case TraceWake:
				if p.waitingFor[op.Task] == i {
					// The wakee is blocked in its wait for this task:
					// the wake ends that wait.
					p.waitingFor[op.Task] = -1
					p.pc[op.Task]++
					ready = append(ready, op.Task)
				} else {
					tokens[[2]int{i, op.Task}]++
				}
			case TraceFork:
				p.started[op.Task] = true
				ready = append(ready, op.Task)
			}
			p.pc[i]++
		}
	}
	return p
}

// checkDeadlock refuses a file whose replay can never finish because
// tasks wait for each other: it names the tasks of one such cycle. Run
// after the per-op checks and the wait/wake counts, which it relies on:
// a task waited for that has ended would have woken its waiter often
// enough, so every wait of a stuck task is for another stuck task.
func (f *TraceFile) checkDeadlock() error {
	p := f.playWithoutTime()
	var stuck []int
	for i := range f.Tasks {
		if p.stuck(i, len(f.Tasks[i].Ops)) {
			stuck = append(stuck, i)
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	cycle := p.blockingCycle(f, stuck[0])
	why := make([]string, len(cycle))
	for k, t := range cycle {
		next := cycle[(k+1)%len(cycle)]
		if p.started[t] {
			why[k] = fmt.Sprintf("%d waits at op %d for a wake from %d", t, p.pc[t], next)
		} else {
			why[k] = fmt.Sprintf("%d waits to be forked by %d", t, next)
		}
	}
	more := ""
	if len(stuck) > len(cycle) {
		shown := stuck[:min(len(stuck), 8)]
		more = fmt.Sprintf("; %d tasks in all never finish: %s", len(stuck), f.taskList(shown))
		if len(shown) < len(stuck) {
			more += ", …"
		}
	}
	return fmt.Errorf("trace: %s deadlock: %s; each waits for a wake (or fork) that the next issues only after its own blocking wait, so the replay never ends%s",
		f.taskList(cycle), strings.Join(why, ", "), more)
}

// blockingCycle follows, from a stuck task, what it waits for: the task
// whose wake it waits for, or, if it never started, the parent that
// would fork it. Each of those is stuck too, so the walk ends in a cycle,
// returned from its lowest task on.
func (p *traceProgress) blockingCycle(f *TraceFile, from int) []int {
	at := map[int]int{} // task -> its position on the walk
	var walk []int
	t := from
	for {
		if k, seen := at[t]; seen {
			return rotateToMin(walk[k:])
		}
		at[t] = len(walk)
		walk = append(walk, t)
		next := -1
		if p.started[t] {
			next = p.waitingFor[t]
		} else if f.Tasks[t].Parent != nil {
			next = *f.Tasks[t].Parent
		}
		if next < 0 || !p.stuck(next, len(f.Tasks[next].Ops)) {
			// Not reached when the wait/wake counts were checked first;
			// name the walk rather than fail.
			return walk
		}
		t = next
	}
}

// rotateToMin rotates a cycle to start at its lowest element.
func rotateToMin(c []int) []int {
	m := 0
	for k := range c {
		if c[k] < c[m] {
			m = k
		}
	}
	return append(append([]int(nil), c[m:]...), c[:m]...)
}
