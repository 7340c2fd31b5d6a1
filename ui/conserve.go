package ui

import (
	"schedplay/engine"
	"schedplay/playground"
)

// The work-conservation meter: at one instant, how many idle CPUs could
// run a task that waits on another CPU's runqueue. A waiting task counts
// for an idle CPU only when its affinity allows that CPU; a CPU that is
// waking (leaving its C-state for work already decided for it) is
// neither idle nor holding waiting work: the task queued on it will run
// there as soon as it is up.

// Conservation is the machine's state at one instant.
type Conservation struct {
	CPUs    int
	Running int
	// Idle counts idle CPUs (polling or in a C-state); Starved those of
	// them that a waiting task is allowed to run on.
	Idle, Starved int
	Waking        int
	SMTHeld       int
	// Waiting counts tasks waiting on a runqueue for a CPU that runs
	// something else (or is held by SMT_NICE).
	Waiting int
}

// NotConserving reports whether work is not conserved: some idle CPU
// could run a waiting task.
func (c Conservation) NotConserving() bool { return c.Starved > 0 }

// waitingOn is how many tasks on CPU v's runqueue wait for a CPU: all of
// them behind a running task or an SMT-held CPU, all but the one that
// will run first on a waking CPU.
func waitingOn(v *engine.CPUView) int {
	switch {
	case v.Queued <= 0:
		return 0
	case v.Curr >= 0 || v.SMTHeld:
		return v.Queued
	}
	return v.Queued - 1
}

// CountConservation classifies the CPUs of views (with the restricted
// tasks of pinned: the waiting tasks whose affinity does not cover every
// CPU) into the meter's states.
func CountConservation(views []engine.CPUView, pinned []playground.PinnedTask) Conservation {
	c := Conservation{CPUs: len(views)}
	// Waiting tasks that may run anywhere: per CPU, its waiting count
	// less its restricted tasks (counted only when there are any, so the
	// common case allocates nothing).
	restricted := func(int) int { return 0 }
	if len(pinned) > 0 {
		rs := make([]int, len(views))
		for _, p := range pinned {
			if p.CPU >= 0 && p.CPU < len(rs) {
				rs[p.CPU]++
			}
		}
		restricted = func(i int) int { return rs[i] }
	}
	free := false
	for i := range views {
		v := &views[i]
		n := waitingOn(v)
		c.Waiting += n
		if n > restricted(i) {
			free = true
		}
		switch {
		case v.Curr >= 0:
			c.Running++
		case v.SMTHeld:
			c.SMTHeld++
		case v.Queued > 0 || !v.Idle:
			c.Waking++
		default:
			c.Idle++
		}
	}
	if c.Waiting == 0 || c.Idle == 0 {
		return c
	}
	if free {
		// A task free to run anywhere waits on a CPU that is not idle:
		// every idle CPU could take it.
		c.Starved = c.Idle
		return c
	}
	for i := range views {
		v := &views[i]
		if v.Curr >= 0 || v.SMTHeld || v.Queued > 0 || !v.Idle {
			continue
		}
		for _, p := range pinned {
			if p.CPU != i && p.Allows(i) && p.CPU >= 0 && p.CPU < len(views) && waitingOn(&views[p.CPU]) > 0 {
				c.Starved++
				break
			}
		}
	}
	return c
}
