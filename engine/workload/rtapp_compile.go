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
	ncpu    int
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

// rtSem is a POSIX semaphore as glibc implements it: sem_post raises the
// count and wakes the longest waiter, which retries the decrement
// (another thread may take the count first); the count starts at 0.
type rtSem struct {
	count   int64
	waiters []*rtThread
}

// rtGroup is the threads a resume of a name reaches: one thread, or every
// thread of a task, including those forked later.
type rtGroup struct{ threads []*rtThread }

// rtFork is a task that fork events create threads of.
type rtFork struct {
	task     *RTAppTask
	phases   []rtPhase
	group    *rtGroup        // the task's threads
	spec     engine.TaskSpec // the task's settings (no name, program or mask)
	taskMask cpumask.Mask    // the task's "cpus" (Len 0: none)
	nforks   int             // forks so far, for the thread names (rt-app's nforks)
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
	sem     *rtSem
	fork    *rtFork
	targets *rtGroup // resume
}

type rtPhase struct {
	loop int64
	// mask is the phase's affinity (Len 0: the task's, else the thread's
	// first; see rtThread.mask).
	mask cpumask.Mask
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
	// taskMask is the task's "cpus" (Len 0: none); defMask the thread's
	// affinity before its first phase (rt-app's def_cpu_data: the
	// creator's); curMask what it is now.
	taskMask, defMask, curMask cpumask.Mask

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
	mask := func(t *RTAppTask, cpus []int) (cpumask.Mask, error) {
		if cpus == nil {
			return cpumask.Mask{}, nil
		}
		for _, c := range cpus {
			if c >= ncpu {
				return cpumask.Mask{}, place{task: t.Name}.errf(t.line, "cpus: CPU %d does not exist (the machine has CPUs 0-%d)", c, ncpu-1)
			}
		}
		return cpumask.Of(ncpu, cpus...), nil
	}
	masks := make([]cpumask.Mask, len(app.Tasks))
	forks := 0
	for i := range app.Tasks {
		t := &app.Tasks[i]
		m, err := mask(t, t.CPUs)
		if err != nil {
			return nil, err
		}
		masks[i] = m
		for _, ph := range t.Phases {
			if _, err := mask(t, ph.CPUs); err != nil {
				return nil, err
			}
			for _, e := range ph.Events {
				if e.Kind == "yield" {
					if err := sim.YieldModelled(); err != nil {
						return nil, place{task: t.Name, phase: ph.Name}.errf(e.line, "event %q: %v", e.Key, strings.TrimPrefix(err.Error(), "engine: "))
					}
				}
			}
		}
	}

	w := &rtWorld{t0: sim.Now(), finite: app.Finite(), ncpu: ncpu}
	byName := map[string]*rtGroup{}
	named := namedSuspends(app, app.threadTasks())
	perTask := make([][]*rtThread, len(app.Tasks))
	groups := make([]*rtGroup, len(app.Tasks))
	for i := range app.Tasks {
		t := &app.Tasks[i]
		groups[i] = &rtGroup{}
		for _, name := range t.threadNames() {
			th := &rtThread{w: w, name: name, loop: t.Loop, tFirst: w.t0 + t.Delay, timers: map[string]*rtTimer{}, exitedAt: -1}
			perTask[i] = append(perTask[i], th)
			groups[i].threads = append(groups[i].threads, th)
			byName[name] = &rtGroup{threads: []*rtThread{th}}
			w.threads = append(w.threads, th)
		}
		if t.Instances != 1 || t.Forked {
			byName[t.Name] = groups[i]
		}
	}

	conds := map[string]*rtCond{}
	mutexes := map[string]*rtMutex{}
	barriers := map[string]*rtBarrier{}
	timers := map[string]*rtTimer{}
	sems := map[string]*rtSem{}
	forkOf := map[string]*rtFork{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		if t.Forked {
			forkOf[t.Name] = &rtFork{task: t, group: groups[i]}
		}
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
				case "sem_post", "sem_wait":
					if sems[e.Ref] == nil {
						sems[e.Ref] = &rtSem{}
					}
				case "fork":
					forks++
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

	phasesOf := make([][]rtPhase, len(app.Tasks))
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
			rp.mask, _ = mask(t, ph.CPUs)
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
				case "sem_post", "sem_wait":
					op.sem = sems[e.Ref]
				case "fork":
					op.fork = forkOf[e.Ref]
				}
				rp.ops = append(rp.ops, op)
			}
			phases = append(phases, rp)
		}
		phasesOf[i] = phases
		if f := forkOf[t.Name]; f != nil {
			f.phases = phases
		}
		for _, th := range perTask[i] {
			th.phases = phases
		}
	}

	if w.finite {
		sim.SetFinite(b.ID)
	}
	if forks > 0 {
		if err := sim.ReserveTasks(app.forkedThreads()); err != nil {
			return nil, err
		}
	}
	all := cpumask.Range(ncpu, 0, ncpu-1)
	for i := range app.Tasks {
		t := &app.Tasks[i]
		ts := b.TaskSpec("", nil)
		ts.MeasureWakeups = true
		if t.HasNice {
			ts.Nice = t.Nice
		}
		if t.HasPolicy || t.Policy != engine.PolicyNormal {
			// The file's policy (or its default_policy) wins over the
			// spec's policy= key, as the nice does.
			ts.Policy, ts.RTPrio, ts.DL = t.Policy, t.RTPrio, t.DL
			if t.Policy != engine.PolicyNormal {
				// The spec's nice and slice are a fair thread's.
				ts.Nice, ts.Slice = 0, 0
			}
		}
		if t.Slice > 0 {
			ts.Slice = t.Slice
		}
		def := ts.Allowed
		if def.Len() == 0 {
			def = all
		}
		if f := forkOf[t.Name]; f != nil {
			f.spec, f.taskMask = ts, masks[i]
		}
		for _, th := range perTask[i] {
			th.taskMask, th.defMask = masks[i], def
			tts := ts
			tts.Name, tts.Program = th.name, th
			th.curMask = th.mask(0)
			if th.curMask.Len() > 0 && !th.curMask.Equal(def) || t.CPUs != nil {
				tts.Allowed = th.curMask
				tts.ParentCPU = th.curMask.First()
			}
			id, err := b.Spawn(tts)
			if err != nil {
				return nil, err
			}
			th.id = id
			w.live++
		}
	}
	return w, nil
}

// mask is the affinity phase p gives the thread: the phase's "cpus",
// else the task's, else the thread's first (rt-app's set_thread_affinity).
func (t *rtThread) mask(p int) cpumask.Mask {
	if m := t.phases[p].mask; m.Len() > 0 {
		return m
	}
	if t.taskMask.Len() > 0 {
		return t.taskMask
	}
	return t.defMask
}

// forkedThreads is how many threads fork events create in all (checkForks
// has bounded it).
func (app *RTApp) forkedThreads() int {
	n := 0
	for _, c := range app.forkCounts() {
		n += int(c)
	}
	return n
}
