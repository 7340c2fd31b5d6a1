package engine

// Polling reports whether CPU cpu is idle in a polling state (POLL: it
// spins on its need_resched flag, so a waker sends no IPI and there is
// no C-state exit to pay). The canvas draws such CPUs apart from those
// in a C-state.
func (s *Sim) Polling(cpu int) bool { return s.polling(s.cpus[cpu]) }
