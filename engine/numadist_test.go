package engine

import (
	"fmt"
	"testing"

	"schedplay/engine/machine"
)

// twoNodes sets a 2-socket spec's SLIT distance and reclaim distances.
func twoNodes(spec *machine.Spec, dist, reclaim, nodeReclaim int) *machine.Spec {
	if dist > 0 {
		spec.NUMADistance = [][]int{{10, dist}, {dist, 10}}
	}
	spec.ReclaimDistance, spec.NodeReclaimDistance = reclaim, nodeReclaim
	return spec
}

// sd_init clears SD_WAKE_AFFINE on a NUMA level farther than the reclaim
// distance (v5.2: RECLAIM_DISTANCE 30; from v5.4 node_reclaim_distance,
// 32 on AMD Zen; 10 on powerpc), so select_task_rq_fair's walk passes the
// level and a wakee whose prev CPU is on the other node is not
// wake-affined onto the waker's: new_cpu stays prev. Here a sync wakeup
// from the only task of CPU 0 (node 0) of a wakee last on CPU 2 (node 1):
// wake_affine_idle picks the waker's CPU whenever it is asked.
func TestNUMADistanceClearsWakeAffine(t *testing.T) {
	cases := []struct {
		era                        string
		dist, reclaim, nodeReclaim int
		affine                     bool
	}{
		{"5.2", 0, 0, 0, true},    // no table: REMOTE_DISTANCE 20
		{"5.2", 21, 0, 0, true},   // Intel Xeon
		{"5.2", 30, 0, 0, true},   // not greater than RECLAIM_DISTANCE
		{"5.2", 32, 0, 0, false},  // AMD EPYC at v5.2
		{"5.2", 32, 0, 32, false}, // v5.2 has no node_reclaim_distance
		{"6.1", 32, 0, 32, true},  // Zen's node_reclaim_distance
		{"6.6", 32, 0, 32, true},
		{"6.6", 32, 0, 0, false},  // not a Zen machine
		{"5.2", 40, 10, 0, false}, // POWER9: RECLAIM_DISTANCE 10
		{"6.6", 20, 10, 0, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/dist%d/reclaim%d/node%d", c.era, c.dist, c.reclaim, c.nodeReclaim)
		t.Run(name, func(t *testing.T) {
			s := newSim(t, twoNodes(smallSpec(2, 2, 1, 2, machine.Interleaved), c.dist, c.reclaim, c.nodeReclaim), 1, "era", c.era)
			waker := sleeper(s, "waker", 0)
			p := sleeper(s, "p", 2)
			s.cpus[0].curr, s.cpus[0].nr = waker, 1
			d := s.class.selectTaskRq(p, 0, waker, true)
			target, chosen, want := d.Target, d.Chosen, d.WantAffine
			s.cpus[0].curr, s.cpus[0].nr = nil, 0
			if !want {
				t.Fatalf("affine wakeup not wanted (wake_wide %v)", d.WakeWide)
			}
			if c.affine {
				if target != 0 || s.topo.Socket[chosen] != 0 {
					t.Fatalf("target %d chosen %d, want wake_affine to pull p to the waker's CPU 0 and node 0", target, chosen)
				}
				return
			}
			if target != 2 || chosen != 2 {
				t.Fatalf("target %d chosen %d, want p left on its idle prev CPU 2 (no SD_WAKE_AFFINE across the nodes)", target, chosen)
			}
		})
	}
}

// sd_init clears SD_BALANCE_FORK with SD_WAKE_AFFINE, so fork placement
// (find_idlest_cpu from the highest SD_BALANCE_FORK level) stays within
// the parent's node: the forks that TestForkKeepsLocalNodeWithinImbalance
// and TestForkSpreadsAcrossNodesByIdleCPUs6x see spill onto socket 1
// stay on socket 0 at distance 32 in v5.2, or in 6.6 without Zen's
// node_reclaim_distance.
func TestNUMADistanceClearsForkBalance(t *testing.T) {
	cases := []struct {
		era             string
		dist, nodeRecl  int
		n               int
		spillsToSocket1 bool
	}{
		{"5.2", 21, 0, 14, true},
		{"5.2", 32, 0, 14, false},
		{"6.6", 32, 32, 6, true},
		{"6.6", 32, 0, 6, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/dist%d/node%d", c.era, c.dist, c.nodeRecl), func(t *testing.T) {
			s := newSim(t, twoNodes(intelSpec(), c.dist, 0, c.nodeRecl), 1, "era", c.era)
			w := s.AddWorkload("hogs", "test")
			var sockets []int
			remote := false
			for range c.n {
				id, err := s.Spawn(w, TaskSpec{Name: "hog", ParentCPU: 0, Program: hog()})
				if err != nil {
					t.Fatal(err)
				}
				sk := s.topo.Socket[s.tasks[id].cpu]
				sockets = append(sockets, sk)
				remote = remote || sk == 1
			}
			if remote != c.spillsToSocket1 {
				t.Fatalf("forks from CPU 0 landed on sockets %v; want a fork on socket 1: %v", sockets, c.spillsToSocket1)
			}
		})
	}
}
