package engine

import "schedplay/engine/machine"

// Per-group load sums for fork placement. v5.2's find_idlest_group sums
// the runnable and blocked load of every CPU of every group of a domain
// level; done for every fork that is O(CPUs) per level, and a run that
// forks thousands of tasks onto a big machine (a share link with 32768
// netperf threads on 2048 CPUs) becomes quadratic. The sums only change
// when a member CPU's load changes or time moves (PELT decay), so each
// group keeps its last sums with the time they were taken and a version
// that every load change of a member bumps: within one instant (a
// workload's threads all forked at t = 0, say) a group is summed once and
// then read in O(1) until one of its CPUs changes. The values are the
// same integers the full pass adds up, so the choices are identical
// (TestGroupLoadCacheMatchesFullPass).

type groupLoad struct {
	at       int64 // s.now when summed, -1 never
	ver      uint32
	runnable int64 // Σ runnable load of the group's CPUs
	avg      int64 // Σ load_avg (runnable and blocked)
}

type groupLoads struct {
	ver  [machine.NumGroupKinds][]uint32
	sums [machine.NumGroupKinds][]groupLoad
}

func (gl *groupLoads) init(tp *machine.Topology) {
	for k := machine.GroupKind(0); k < machine.NumGroupKinds; k++ {
		n := tp.NumGroups(k)
		gl.ver[k] = make([]uint32, n)
		gl.sums[k] = make([]groupLoad, n)
		for i := range gl.sums[k] {
			gl.sums[k][i].at = -1
		}
	}
}

// cpuLoadChanged records that c's runnable load or load_avg changed: every
// group holding c must be summed again.
func (s *Sim) cpuLoadChanged(c *cpu) {
	gl := &s.groupLoads
	for k := machine.GroupKind(0); k < machine.NumGroupKinds; k++ {
		gl.ver[k][s.topo.GroupIndexOf(k, c.id)]++
	}
}

// groupLoadSums returns the runnable and load_avg sums of group i of dom
// at s.now, summing its CPUs only when the cached sums are stale.
func (s *Sim) groupLoadSums(dom *machine.Domain, i int) (runnable, avg int64) {
	k, idx := dom.GroupKind, dom.GroupIdx[i]
	e := &s.groupLoads.sums[k][idx]
	if v := s.groupLoads.ver[k][idx]; e.at != s.now || e.ver != v {
		g := dom.Groups[i]
		var r, a int64
		for id := g.First(); id >= 0; id = g.Next(id + 1) {
			o := s.cpus[id]
			r += o.runnableLoad.at(s.now)
			a += o.loadAvg.at(s.now)
		}
		*e = groupLoad{at: s.now, ver: v, runnable: r, avg: a}
	}
	return e.runnable, e.avg
}

// groupWeight is the number of CPUs of group i of dom.
func (s *Sim) groupWeight(dom *machine.Domain, i int) int {
	switch dom.GroupKind {
	case machine.GroupCore:
		return len(s.topo.CoreCPUs[dom.GroupIdx[i]])
	case machine.GroupCPU:
		return 1
	}
	return dom.Groups[i].Weight()
}
