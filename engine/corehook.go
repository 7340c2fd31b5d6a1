package engine

import (
	"fmt"

	"schedplay/engine/machine"
)

// The select_idle_core hook (issue 29): a policy replaces the fair
// classes' search for a wholly idle core and keeps the rest of the era's
// wakeup path. The kernel's select_idle_core (kernel/sched/fair.c) has a
// different shape in each era, and so has the hook:
//
//   - v5.2 (era 5.2): select_idle_core(p, sd_llc, target) is the whole
//     search. select_idle_sibling calls it (SIS_CORE on, and LN_SKIP_CORE
//     not skipping a positive latency-nice) before select_idle_cpu; it
//     gives up at once without SMT or while the LLC's has_idle_cores hint
//     is clear, else visits the LLC's allowed CPUs from target, wrapping,
//     a core at a time, and answers the first core whose threads are all
//     idle; a search that finds none clears the hint. The policy is
//     called once there, with target, and idleCPU nil; it answers a CPU
//     or -1, and clears the hint itself if it wants to (SetIdleCores).
//
//   - v6.6 and Debian's 6.12 (eras 6.x): select_idle_core(p, core, cpus,
//     &idle_cpu) looks at one core. select_idle_cpu calls it for each CPU
//     its loop visits while has_idle_core is set: it answers core when
//     every thread is idle, else -1, and on the way notes in idle_cpu the
//     first idle thread that the scan's mask allows (while idle_cpu is
//     still unset; once it is set, the first busy thread ends the look).
//     The policy is called there, for each core the loop visits, with the
//     loop's CPU and idleCPU pointing at the loop's idle_cpu, which it may
//     update; it answers a CPU (the core is idle) or -1. The loop's own
//     bookkeeping stays the engine's: it drops a core that answered -1
//     from the CPUs left to visit (the kernel's select_idle_core does
//     that itself), clears has_idle_cores when the loop ends without an
//     idle core, returns idle_cpu then, and counts the scan's probes (the
//     policy's included) in the decision.
//
// The hook is the engine's own select_idle_core's replacement wherever the
// engine runs the era's select_idle_sibling or select_idle_cpu, including
// a policy's call of the kernel's select_idle_cpu (a file defining both
// select_idle_cpu and select_idle_core gets its select_idle_core called
// from kernel.select_idle_cpu's loop: a nested call, beginView).
// KernelSelectIdleCore (v5.2) stays the kernel's own, so that a hook can
// call it. A 6.x select_idle_core runs inside the loop, which holds the
// scan's state: it may probe and read, and call kernel.select_idle_smt,
// but not start another scan (kernel.select_idle_cpu,
// kernel.select_idle_sibling, scan_begin/scan_end): those stop the run.

// IdleCorePolicy is a wake policy that replaces select_idle_core (above).
// cpu is target (era 5.2, idleCPU nil) or the core's CPU that
// select_idle_cpu's loop visits (6.x, idleCPU the loop's idle_cpu: -1 or
// a CPU). It returns an idle core's CPU or -1; an error stops the run.
type IdleCorePolicy interface {
	SelectIdleCore(v *WakeView, cpu int, idleCPU *int) (int, error)
}

// sisIdleCore is v5.2's select_idle_sibling calling select_idle_core: the
// policy's when it replaces it.
func (s *Sim) sisIdleCore(p *Task, llc *machine.Domain, prev, target int, cur *Task, d *Decision) int {
	if s.corePolicy == nil {
		return s.selectIdleCore(p, llc, target)
	}
	c, _ := s.policySelectIdleCore(p, prev, target, target, nil, cur, d)
	return c
}

// policySelectIdleCore runs the IdleCorePolicy: for v5.2 (idleCPU nil)
// or for one core of 6.x's select_idle_cpu loop (idleCPU the loop's
// idle_cpu, updated when the policy changes it). It returns the CPU or
// -1, and false when the policy failed (the run stops after this event).
func (s *Sim) policySelectIdleCore(p *Task, prev, target, cpu int, idleCPU *int, cur *Task, d *Decision) (int, bool) {
	v := s.beginView("policy select_idle_core", p, prev, target, cur, d)
	var ic *int
	if idleCPU != nil {
		x := *idleCPU
		ic = &x
		v.coreLoop++
	}
	c, err := s.corePolicy.SelectIdleCore(v, cpu, ic)
	if ic != nil {
		v.coreLoop--
	}
	s.endView(v)
	n := s.topo.NCPU
	if err == nil {
		switch {
		case c < -1 || c >= n:
			err = fmt.Errorf("wake policy's select_idle_core returned CPU %d: the machine has CPUs 0..%d (or -1: none)", c, n-1)
		case c >= 0 && !p.allowed.Test(c):
			err = fmt.Errorf("wake policy's select_idle_core returned CPU %d, outside the task's allowed CPUs", c)
		case ic != nil && (*ic < -1 || *ic >= n):
			err = fmt.Errorf("wake policy's select_idle_core set idle_cpu %d: the machine has CPUs 0..%d (or -1: none)", *ic, n-1)
		case ic != nil && *ic >= 0 && !p.allowed.Test(*ic):
			err = fmt.Errorf("wake policy's select_idle_core set idle_cpu %d, outside the task's allowed CPUs", *ic)
		}
	}
	if err != nil {
		s.policyError(err)
		return -1, false
	}
	if ic != nil {
		*idleCPU = *ic
	}
	return c, true
}

// inCoreLoop is the error of a step a 6.x select_idle_core may not take
// (above).
func (v *WakeView) inCoreLoop(what string) error {
	return fmt.Errorf("%s inside the wake policy's select_idle_core: in era %s select_idle_core runs inside select_idle_cpu's scan, which it cannot start again", what, v.s.era)
}
