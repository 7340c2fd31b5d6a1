package engine

import "schedplay/engine/knob"

// Idle (C-) states. A CPU entering idle picks the deepest state whose
// target residency fits the idle time it predicts from its recent idle
// periods (the menu governor's idea); waking it costs that state's exit
// latency. Core-level states need every SMT sibling idle: while a sibling
// runs, the core stays powered and a wakeup costs only the shallowest
// state's exit latency.

// chooseIdleState returns the index of the state c enters.
func (s *Sim) chooseIdleState(c *cpu) int {
	states := s.topo.Spec.IdleStates
	pick := 0
	for i, st := range states {
		if st.TargetResidencyUS*Microsecond <= c.idlePredictNS {
			pick = i
		}
	}
	return pick
}

// exitLatency is what it costs to bring idle CPU c back to running a task.
func (s *Sim) exitLatency(c *cpu) int64 {
	if !s.k.On(knob.IDLE_STATES) || c.curr != nil {
		return 0
	}
	states := s.topo.Spec.IdleStates
	st := states[c.cstate]
	if st.CoreLevel {
		for _, id := range s.topo.CoreCPUs[c.core] {
			if id != c.id && s.cpus[id].curr != nil {
				return states[0].ExitLatencyUS * Microsecond
			}
		}
	}
	return st.ExitLatencyUS * Microsecond
}

// IdleState returns the C-state index CPU id is in (meaningful when idle).
func (s *Sim) IdleState(id int) int { return s.cpus[id].cstate }
