package engine

// The fair server of era 6.12 (rq->fair_server; deadline.c's dl_server_*
// and fair.c's calls of them in Debian's linux-source-6.12, 6.12.118): a
// deadline entity per CPU, 50 ms of runtime per 1 s period, deferred
// (dl_defer), that runs the fair class when RT or deadline tasks would
// otherwise starve it.
//   - It starts when the CPU's fair class goes from no queued task to one
//     (enqueue_task_fair: dl_server_start), with a new period whose
//     activation is deferred to the zero-laxity time, deadline - runtime:
//     it waits there throttled (dl_defer_armed).
//   - Fair tasks' run time is charged to it whether they run through it or
//     not (update_curr: dl_server_update), and so is the CPU's idle time
//     before a fair task arrives or the CPU leaves idle
//     (dl_server_update_idle_time): a server that used its runtime in the
//     background starts a new deferred period, and its timer moves.
//   - At the zero-laxity time (dl_server_timer) a server that still has
//     runtime goes on the CPU's deadline tree (dl_defer_running): as a
//     deadline entity it runs before every RT task, and what runs is the
//     fair class's pick; it is then throttled and replenished every period
//     like a deadline task, without deferring again, until it runs out in
//     the background. With nothing of the fair class to pick it stops
//     (dl_server_stop).
//   - Its bandwidth (5% of each CPU) is in the root domain's total_bw, so
//     deadline tasks are admitted up to 90% of each CPU.
//
// The fair server is built with the deadline class, which era 6.12 builds
// for a run's first RT or deadline task; a run with fair tasks only never
// has one (its only effect there would be a reschedule of the fair task
// it would pick anyway). Not modelled: the resched_curr of dl_server_start
// (a spurious reschedule of a running task), the sysfs/debugfs
// parameters (runtime, period) and dl_server_min_res below 1 ms.

const (
	fairServerRuntime = 50 * Millisecond   // dl_server_start's runtime
	fairServerPeriod  = 1000 * Millisecond // and period
	dlServerMinRes    = Millisecond        // dl_server_min_res
)

// initFairServers gives every CPU its fair server (dl_server_apply_params
// with init: this_bw and the root domain's total_bw), and starts the
// servers of CPUs that have fair tasks queued already.
func (s *Sim) initFairServers() {
	bw := toRatio(fairServerPeriod, fairServerRuntime)
	n := int64(s.topo.NCPU)
	for _, c := range s.cpus {
		e := &dlEntity{
			cpu: c.id, server: true, deferred: true,
			dlRuntime: fairServerRuntime, dlDeadline: fairServerPeriod, dlPeriod: fairServerPeriod,
			bw: bw, density: toRatio(fairServerPeriod, fairServerRuntime),
			rqCPU: c.id, replenishAt: -1, inactiveAt: -1,
		}
		c.fairServer = e
		c.dl.thisBW += bw
		s.dl.totalBW += bw
		for _, o := range s.cpus {
			o.dl.extraBW -= int64(int32(bw)) / n
		}
	}
	for _, c := range s.cpus {
		if c.nr > 0 {
			s.dlServerStart(c)
		}
	}
}

// dlServerStart is dl_server_start for c's fair server: the first time,
// setup_new_dl_entity; then, when not active, enqueue_dl_entity with
// ENQUEUE_WAKEUP, which defers it.
func (s *Sim) dlServerStart(c *cpu) {
	e := c.fairServer
	if e.active {
		return
	}
	if !e.setUp {
		e.setUp = true
		s.replenishDLNewPeriod(e)
	}
	e.active = true
	s.dlContending(c, e)
	s.updateDLEntity(e)
	if s.dlEnqueueEnd(c, e) {
		s.dlServerResched(c, e)
	}
}

// dlServerStop is dl_server_stop: off the tree (dequeue_dl_entity with
// DEQUEUE_SLEEP), its timer cancelled, inactive.
func (s *Sim) dlServerStop(c *cpu, e *dlEntity) {
	s.dlRemove(c, e)
	s.dlNonContending(c, e)
	s.dlDisarm(&e.replenishAt)
	e.deferArmed, e.throttled, e.active = false, false, false
}

// dlServerResched is the resched_curr after a fair server went on the
// tree: unless c runs a deadline task with an earlier deadline.
func (s *Sim) dlServerResched(c *cpu, e *dlEntity) {
	if c.curr == nil {
		s.kick(c, s.now+s.idleWakeDelay(c, c.id))
		return
	}
	if !c.curr.dl() || e.deadline < c.curr.dlse.deadline {
		c.needResched = true
		s.kick(c, s.now)
	}
}

// dlServerUpdate is dl_server_update: fair run time delta on c is
// charged to c's active fair server (update_curr_dl_se for a server).
func (s *Sim) dlServerUpdate(c *cpu, delta int64) {
	e := c.fairServer
	if delta <= 0 {
		return
	}
	e.runtime -= delta
	if e.throttled && e.runtime <= 0 {
		// The fair class got its runtime in the background: the
		// server is not needed this period, and defers a new one.
		e.deferRunning = false
		s.dlDisarm(&e.replenishAt)
		s.replenishDLNewPeriod(e)
		s.startDLTimer(e)
		return
	}
	if e.runtime <= 0 {
		e.throttled = true
		s.dlRemove(c, e)
		if !s.startDLTimer(e) {
			s.dlEnqueueReplenish(c, e)
		}
		if !e.onRQ || c.dl.tree[0] != e {
			c.needResched = true
			s.kick(c, s.now)
		}
	}
}

// dlServerIdleTime is dl_server_update_idle_time: the time c has been idle
// counts as fair time for its deferred server (the fair class had the
// CPU and did not need it).
func (s *Sim) dlServerIdleTime(c *cpu) {
	e := c.fairServer
	if e == nil || e.runtime < 0 {
		return
	}
	from := max(c.idleSince, c.fsIdleMark)
	delta := s.now - from
	if delta < 0 {
		return
	}
	e.runtime -= delta
	if e.runtime < 0 {
		e.deferRunning = false
		e.runtime = 0
	}
	c.fsIdleMark = s.now
}

// dlServerTimer is dl_server_timer for c's fair server e: at the
// zero-laxity time a deferred server that used runtime in the background
// waits again (the timer forwarded to the new zero-laxity time); else it
// goes on the tree, running (dl_defer_running), reschedules c and lets
// c push what it can.
func (s *Sim) dlServerTimer(c *cpu, e *dlEntity) {
	if !e.throttled {
		return
	}
	if e.deferArmed {
		if s.now < e.deadline-e.runtime-dlServerMinRes {
			s.dlArm(&e.replenishAt, &e.replenishSeq, e.deadline-e.runtime)
			return
		}
		e.deferRunning = true
	}
	s.dlEnqueueReplenish(c, e)
	if e.onRQ {
		s.dlServerResched(c, e)
	}
	if s.dlHasPushable(c) {
		s.pushDLTask(c)
	}
}
