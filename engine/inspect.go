package engine

// Read-only accessors for the page's decision panel (playground's
// DecisionLog reads them from a Hooks callback). They allocate nothing
// and change nothing.

// CPUState is what available_idle_cpu and a display see of CPU id right
// now: whether it is idle (nothing running, nothing queued), whether it
// is polling (an idle CPU in a polling state, woken by a store rather
// than an IPI), and the idle-state index it is in (see IdleStateNames;
// meaningful when idle).
func (s *Sim) CPUState(id int) (idle, polling bool, cstate int) {
	c := s.cpus[id]
	return c.idle(), c.idle() && s.polling(c), c.cstate
}

// RecentUsedCPU is the task's p->recent_used_cpu (-1: none), the third
// candidate select_idle_sibling tries.
func (t *Task) RecentUsedCPU() int { return t.recentUsedCPU }
