package workload

// rt-app files compiled into the simulation: threads, resources and their operations.

import (
	"strings"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// ---- building and running ----

// rtWorld is the shared state of one rt-app workload.
type rtWorld struct {
	t0      int64 // rt-app's t_zero: when the workload was built
	threads []*rtThread
	live    int
	finite  bool
}

type rtCond struct{ waiters []*rtThread }

type rtMutex struct {
	owner   *rtThread
	waiters []*rtThread
}

type rtBarrier struct {
	parties, arrived int
	waiters          []*rtThread
}

type rtTimer struct {
	init     bool
	next     int64
	absolute bool
}

// rtOp is a compiled event.
type rtOp struct {
	kind    string
	ns      int64
	ref     string
	timer   *rtTimer // shared timer (nil for a unique one)
	abs     bool     // unique timer: absolute mode
	cond    *rtCond
	mutex   *rtMutex
	barrier *rtBarrier
	targets []*rtThread // resume
}

type rtPhase struct {
	loop int64
	ops  []rtOp
}

// Program states of an rt-app thread.
const (
	rtStart = iota
	rtIterStart
	rtEvent
	rtIterEnd
	rtExit
	rtDone
)

// rtThread is one rt-app thread: its program counter and its side of the
// synchronisation objects.
type rtThread struct {
	w      *rtWorld
	name   string
	id     engine.TaskID
	phases []rtPhase
	loop   int64
	tFirst int64
	timers map[string]*rtTimer // "unique..." timers

	state      int
	phase      int
	phaseIter  int64
	threadIter int64
	ev, sub    int
	iterStart  int64

	// parked: the thread blocked waiting for a release; token: it was
	// released while registered but before it blocked.
	parked, token bool
	suspended     bool // registered in suspend
	reacquire     *rtMutex
	held          []*rtMutex
	wakes         []engine.TaskID
	wi            int

	iters    int64 // completed phase loops
	exitedAt int64
}

// build creates the threads of app in b's workload.
func (app *RTApp) build(b *Builder) (*rtWorld, error) {
	sim := b.Sim
	ncpu := sim.Topology().NCPU
	masks := make([]cpumask.Mask, len(app.Tasks))
	for i := range app.Tasks {
		t := &app.Tasks[i]
		if t.CPUs == nil {
			continue
		}
		for _, c := range t.CPUs {
			if c >= ncpu {
				return nil, place{task: t.Name}.errf(t.line, "cpus: CPU %d does not exist (the machine has CPUs 0-%d)", c, ncpu-1)
			}
		}
		masks[i] = cpumask.Of(ncpu, t.CPUs...)
	}

	w := &rtWorld{t0: sim.Now(), finite: app.Finite()}
	byName := map[string][]*rtThread{}
	named := namedSuspends(app, app.threadTasks())
	perTask := make([][]*rtThread, len(app.Tasks))
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, name := range t.threadNames() {
			th := &rtThread{w: w, name: name, loop: t.Loop, tFirst: w.t0 + t.Delay, timers: map[string]*rtTimer{}, exitedAt: -1}
			perTask[i] = append(perTask[i], th)
			byName[name] = append(byName[name], th)
			w.threads = append(w.threads, th)
		}
		if t.Instances != 1 {
			byName[t.Name] = perTask[i]
		}
	}

	conds := map[string]*rtCond{}
	mutexes := map[string]*rtMutex{}
	barriers := map[string]*rtBarrier{}
	timers := map[string]*rtTimer{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				switch e.Kind {
				case "barrier":
					if barriers[e.Ref] == nil {
						barriers[e.Ref] = &rtBarrier{}
					}
					barriers[e.Ref].parties += t.Instances
				case "timer":
					if !strings.HasPrefix(e.Ref, "unique") {
						if timers[e.Ref] == nil {
							timers[e.Ref] = &rtTimer{}
						}
						timers[e.Ref].absolute = timers[e.Ref].absolute || e.Absolute
					}
				}
			}
		}
	}
	cond := func(ref string) *rtCond {
		if conds[ref] == nil {
			conds[ref] = &rtCond{}
		}
		return conds[ref]
	}
	mutex := func(ref string) *rtMutex {
		if ref == "" {
			return nil
		}
		if mutexes[ref] == nil {
			mutexes[ref] = &rtMutex{}
		}
		return mutexes[ref]
	}

	for i := range app.Tasks {
		t := &app.Tasks[i]
		uniqueAbs := map[string]bool{}
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "timer" && e.Absolute {
					uniqueAbs[e.Ref] = true
				}
			}
		}
		var phases []rtPhase
		for _, ph := range t.Phases {
			rp := rtPhase{loop: ph.Loop}
			for _, e := range ph.Events {
				op := rtOp{kind: e.Kind, ns: e.NS, ref: e.Ref}
				switch e.Kind {
				case "timer":
					if strings.HasPrefix(e.Ref, "unique") {
						op.abs = uniqueAbs[e.Ref]
					} else {
						op.timer = timers[e.Ref]
					}
				case "resume":
					op.targets = byName[e.Ref]
					if named[e.Ref] {
						// Also broadcast the named condition the
						// suspends on e.Ref wait on.
						rp.ops = append(rp.ops, op)
						op = rtOp{kind: "broad", ref: e.Ref, cond: cond(e.Ref)}
					}
				case "suspend":
					if named[e.Ref] {
						op = rtOp{kind: "wait", ref: e.Ref, cond: cond(e.Ref)}
					}
				case "signal", "broad":
					op.cond = cond(e.Ref)
				case "wait":
					op.cond, op.mutex = cond(e.Ref), mutex(e.Mutex)
				case "sync":
					// signal then wait on the same condition variable
					rp.ops = append(rp.ops, rtOp{kind: "signal", ref: e.Ref, cond: cond(e.Ref)})
					op = rtOp{kind: "wait", ref: e.Ref, cond: cond(e.Ref), mutex: mutex(e.Mutex)}
				case "barrier":
					op.barrier = barriers[e.Ref]
				case "lock", "unlock":
					op.mutex = mutex(e.Ref)
				}
				rp.ops = append(rp.ops, op)
			}
			phases = append(phases, rp)
		}
		for _, th := range perTask[i] {
			th.phases = phases
		}
	}

	if w.finite {
		sim.SetFinite(b.ID)
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, th := range perTask[i] {
			ts := b.TaskSpec(th.name, th)
			ts.MeasureWakeups = true
			if t.HasNice {
				ts.Nice = t.Nice
			}
			if t.CPUs != nil {
				ts.Allowed = masks[i]
				ts.ParentCPU = t.CPUs[0]
			}
			id, err := b.Spawn(ts)
			if err != nil {
				return nil, err
			}
			th.id = id
			w.live++
		}
	}
	return w, nil
}
