package workload

// rt-app threads running: each a program the engine steps through its events.

import (
	"fmt"

	"schedplay/engine"
)

// release lets x go on after a wait it registered for: a wake if it has
// blocked, else a token it consumes instead of blocking.
func (t *rtThread) release(x *rtThread) {
	if x.parked {
		x.parked = false
		t.wakes = append(t.wakes, x.id)
		return
	}
	x.token = true
}

// park blocks until released, unless already released.
func (t *rtThread) park() (engine.Action, bool) {
	if t.token {
		t.token = false
		return engine.Action{}, false
	}
	t.parked = true
	return engine.Block(), true
}

// tryLock takes m if free; otherwise it queues t on m and blocks.
func (t *rtThread) tryLock(m *rtMutex) (engine.Action, bool, bool) {
	if m.owner == nil {
		m.owner = t
		t.held = append(t.held, m)
		return engine.Action{}, false, true
	}
	m.waiters = append(m.waiters, t)
	a, blocked := t.park()
	return a, blocked, false
}

// unlock frees m (held by t) and wakes its longest waiter, which retries.
func (t *rtThread) unlock(m *rtMutex) {
	m.owner = nil
	for i, h := range t.held {
		if h == m {
			t.held = append(t.held[:i], t.held[i+1:]...)
			break
		}
	}
	if len(m.waiters) > 0 {
		x := m.waiters[0]
		m.waiters = m.waiters[1:]
		t.release(x)
	}
}

func (t *rtThread) nextEvent() { t.ev, t.sub = t.ev+1, 0 }

// Next implements engine.Program.
func (t *rtThread) Next(ctx *engine.Ctx) engine.Action {
	for {
		if t.wi < len(t.wakes) {
			id := t.wakes[t.wi]
			t.wi++
			if t.wi == len(t.wakes) {
				t.wakes, t.wi = t.wakes[:0], 0
			}
			return engine.Wake(id, false)
		}
		switch t.state {
		case rtStart:
			t.state = rtIterStart
			if d := t.tFirst - ctx.Now(); d > 0 {
				return engine.Sleep(d)
			}
		case rtIterStart:
			// rt-app's set_thread_affinity at each phase loop: a
			// sched_setaffinity only when the mask changes.
			if m := t.mask(t.phase); !m.Equal(t.curMask) {
				t.curMask = m
				if err := ctx.SetAffinity(m); err != nil {
					panic(fmt.Sprintf("rtapp: thread %s: %v", t.name, err)) // masks were checked at build
				}
			}
			t.iterStart = ctx.Now()
			t.ev, t.sub = 0, 0
			t.state = rtEvent
		case rtEvent:
			ops := t.phases[t.phase].ops
			if t.ev >= len(ops) {
				t.state = rtIterEnd
				continue
			}
			if a, ok := t.do(ctx, &ops[t.ev]); ok {
				return a
			}
		case rtIterEnd:
			ctx.CountOp(1)
			t.iters++
			t.advance()
			if ctx.Now() == t.iterStart {
				return engine.Run(rtappGuardNS)
			}
		case rtExit:
			t.state = rtDone
			t.exitedAt = ctx.Now()
			t.w.live--
			if t.w.finite && t.w.live == 0 {
				ctx.Finish()
			}
			return engine.Exit()
		default:
			panic(fmt.Sprintf("rtapp: thread %s runs after exiting", t.name))
		}
	}
}

// advance moves the program counter past a completed phase loop.
func (t *rtThread) advance() {
	t.state = rtIterStart
	t.phaseIter++
	if l := t.phases[t.phase].loop; l < 0 || t.phaseIter < l {
		return
	}
	t.phaseIter = 0
	t.phase++
	if t.phase < len(t.phases) {
		return
	}
	t.phase = 0
	t.threadIter++
	if t.loop >= 0 && t.threadIter >= t.loop {
		t.state = rtExit
	}
}

// do runs (a step of) op. It returns an action to perform, or ok=false
// when the step took no time and the program should go on.
func (t *rtThread) do(ctx *engine.Ctx, op *rtOp) (engine.Action, bool) {
	switch op.kind {
	case "run":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Run(op.ns), true
		}
	case "runtime":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Spin(op.ns), true
		}
	case "sleep":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Sleep(op.ns), true
		}
	case "timer":
		t.nextEvent()
		tm := op.timer
		if tm == nil {
			tm = t.timers[op.ref]
			if tm == nil {
				tm = &rtTimer{absolute: op.abs}
				t.timers[op.ref] = tm
			}
		}
		if !tm.init {
			tm.init, tm.next = true, t.tFirst
		}
		tm.next += op.ns
		ctx.EndJob() // a period's work is done (a deadline task's job)
		now := ctx.Now()
		if now < tm.next {
			return engine.Sleep(tm.next - now), true
		}
		if !tm.absolute {
			tm.next = now
		}
	case "resume":
		t.nextEvent()
		if op.targets == nil {
			break // a name only suspends wait on: the broad after it wakes them
		}
		for _, x := range op.targets.threads {
			// rt-app broadcasts the target's condition variable: a
			// thread not suspended at that moment misses it.
			if x.suspended {
				x.suspended = false
				t.release(x)
			}
		}
	case "suspend":
		if t.sub == 1 {
			t.nextEvent()
			break
		}
		t.suspended, t.sub = true, 1
		if a, ok := t.park(); ok {
			return a, true
		}
	case "signal":
		t.nextEvent()
		if c := op.cond; len(c.waiters) > 0 {
			x := c.waiters[0]
			c.waiters = c.waiters[1:]
			t.release(x)
		}
	case "broad":
		t.nextEvent()
		c := op.cond
		for _, x := range c.waiters {
			t.release(x)
		}
		c.waiters = c.waiters[:0]
	case "wait":
		switch t.sub {
		case 0:
			// pthread_cond_wait: queue on the condition, then release the
			// mutex if held (its waiter's wake is issued before blocking).
			op.cond.waiters = append(op.cond.waiters, t)
			t.reacquire = nil
			if m := op.mutex; m != nil && m.owner == t {
				t.unlock(m)
				t.reacquire = m
			}
			t.sub = 1
		case 1:
			t.sub = 2
			if a, ok := t.park(); ok {
				return a, true
			}
		case 2:
			if t.reacquire == nil {
				t.nextEvent()
				break
			}
			if a, blocked, got := t.tryLock(t.reacquire); got {
				t.reacquire = nil
				t.nextEvent()
			} else if blocked {
				return a, true
			}
		}
	case "barrier":
		if t.sub == 1 {
			t.nextEvent()
			break
		}
		bar := op.barrier
		bar.arrived++
		if bar.arrived >= bar.parties {
			bar.arrived = 0
			for _, x := range bar.waiters {
				t.release(x)
			}
			bar.waiters = bar.waiters[:0]
			t.nextEvent()
			break
		}
		bar.waiters = append(bar.waiters, t)
		t.sub = 1
		if a, ok := t.park(); ok {
			return a, true
		}
	case "sem_post":
		t.nextEvent()
		m := op.sem
		m.count++
		if len(m.waiters) > 0 {
			x := m.waiters[0]
			m.waiters = m.waiters[1:]
			t.release(x)
		}
	case "sem_wait":
		// sub 0: try; sub 1: woken by a post, try again (the count may
		// have gone to another thread meanwhile, as with glibc).
		m := op.sem
		if m.count > 0 {
			m.count--
			t.nextEvent()
			break
		}
		m.waiters = append(m.waiters, t)
		t.sub = 1
		if a, ok := t.park(); ok {
			return a, true
		}
	case "yield":
		t.nextEvent()
		return engine.Yield(), true
	case "fork":
		switch t.sub {
		case 0:
			// pthread_create: the clone's kernel work, then the new
			// thread is woken (wake_up_new_task).
			t.sub = 1
			return engine.KernelRun(cloneThreadNS), true
		case 1:
			t.nextEvent()
			t.fork(ctx, op.fork)
		}
	case "lock":
		if a, blocked, got := t.tryLock(op.mutex); got {
			t.nextEvent()
		} else if blocked {
			return a, true
		}
	case "unlock":
		t.nextEvent()
		if op.mutex.owner == t {
			t.unlock(op.mutex)
		}
	default:
		panic("rtapp: unknown op " + op.kind)
	}
	return engine.Action{}, false
}

// fork creates a thread of task f (rt-app's fork event: create_thread of
// the task's data, named "<task>-<index>-<nforks>"), inheriting the
// forking thread's affinity as its first, which rt-app's first
// set_thread_affinity takes for the default.
func (t *rtThread) fork(ctx *engine.Ctx, f *rtFork) {
	w := t.w
	name := fmt.Sprintf("%s-%d-%04d", f.task.Name, len(w.threads), f.nforks)
	f.nforks++
	th := &rtThread{w: w, name: name, loop: f.task.Loop, tFirst: w.t0 + f.task.Delay,
		timers: map[string]*rtTimer{}, exitedAt: -1, phases: f.phases,
		taskMask: f.taskMask, defMask: ctx.Allowed().Clone()}
	th.curMask = th.mask(0)
	ts := f.spec
	ts.Name, ts.Program, ts.Allowed = name, th, th.curMask
	id, err := ctx.SpawnReserved(ts)
	if err != nil {
		// Unreachable: build reserved the forks checkForks counted.
		panic(fmt.Sprintf("rtapp: fork of %s: %v", f.task.Name, err))
	}
	th.id = id
	w.threads = append(w.threads, th)
	f.group.threads = append(f.group.threads, th)
	w.live++
}
