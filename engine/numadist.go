package engine

import "schedplay/engine/machine"

// The NUMA distance rule of sd_init (kernel/sched/topology.c): a NUMA
// level whose distance, sched_domains_numa_distance[tl->numa_level], is
// greater than the reclaim distance loses SD_BALANCE_EXEC, SD_BALANCE_FORK
// and SD_WAKE_AFFINE (v5.2 compares with the constant RECLAIM_DISTANCE;
// from v5.4, "sched/topology: Improve load balancing on AMD EPYC systems"
// (a55c7454a8c8), with the variable node_reclaim_distance, which starts at
// RECLAIM_DISTANCE and which AMD Zen's boot code raises to 32: init_amd_zn
// in v5.4, init_amd_zen_common in 6.1.y and 6.12, arch/x86/kernel/cpu/amd.c).
// RECLAIM_DISTANCE is 30 (include/linux/topology.h), 10 on powerpc
// (arch/powerpc/include/asm/topology.h, v5.2 to 6.12). So a 2-socket
// Intel Xeon (SLIT 21) keeps wake-affine and fork balancing across its
// nodes in every era; an AMD EPYC (32) loses them at 5.2 and keeps them
// from 5.4; a POWER9 (40 > 10) loses them in every era.
//
// What the engine reads of the flags: the wakeup's affine domain walk
// (selectTaskRqFair: a level without SD_WAKE_AFFINE is passed over, so a
// wakee whose prev CPU is on another node stays with prev) and the fork
// walk (findIdlestCPU: sd is the highest level with SD_BALANCE_FORK, so
// a new task is placed within its parent's node). SD_BALANCE_EXEC is not
// modelled (no exec). SD_NUMA's other sd_init effects (no
// SD_PREFER_SIBLING, cache_nice_tries 2, SD_SERIALIZE) are machine.Domain's
// and do not depend on the distance.
//
// The O(1) era (2.6.7) has no such rule: sd_init and the SLIT-driven NUMA
// levels came later (v3.5's sd_numa_init); its NUMA level is the
// architecture's SD_NODE_INIT, which never has SD_WAKE_AFFINE, and it
// places a forked task on the parent's CPU (o1DomOf), whatever the distance.

// initReclaimDistance sets the distance above which the era's sd_init
// clears the NUMA level's affine and fork flags.
func (s *Sim) initReclaimDistance() {
	spec := s.topo.Spec
	s.reclaimDistance = spec.RecDistance()
	if s.fair.nodeReclaimDistance && spec.NodeReclaimDistance > 0 {
		s.reclaimDistance = spec.NodeReclaimDistance
	}
}

// numaFlagsCleared reports whether sd_init cleared SD_WAKE_AFFINE,
// SD_BALANCE_FORK and SD_BALANCE_EXEC on dom.
func (s *Sim) numaFlagsCleared(dom *machine.Domain) bool {
	return dom.Level == machine.LevelNUMA && dom.NUMADistance > s.reclaimDistance
}

// sdWakeAffine reports whether dom has SD_WAKE_AFFINE.
func (s *Sim) sdWakeAffine(dom *machine.Domain) bool { return !s.numaFlagsCleared(dom) }

// sdBalanceFork reports whether dom has SD_BALANCE_FORK.
func (s *Sim) sdBalanceFork(dom *machine.Domain) bool { return !s.numaFlagsCleared(dom) }
