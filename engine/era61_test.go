package engine

import "testing"

// Era 6.1 runs the v5.5+ balancer without v6.5/6.6's SMT rules. Busiest
// is one core running three tasks, local two idle cores: 6.6's
// sibling_imbalance normalises per core (2·(2·3−1·0)+2+1)/3 = 5, 6.1
// moves busiest's tasks less local's, 3 (calculate_imbalance in
// linux-source-6.1, before its >>= 1).
func TestEra61ImbalanceIsTasksNotPerCore(t *testing.T) {
	var sds sdStats66
	sds.busiest.sumNrRunning, sds.busiest.cores = 3, 1
	sds.local.sumNrRunning, sds.local.cores = 0, 2
	env := &lbEnv{idle: cpuIdle}
	for _, c := range []struct {
		era  string
		want int64
	}{{"6.6", 5}, {"6.1", 3}} {
		s := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1, "era", c.era)
		if got := s.siblingImbalanceOrNr(env, &sds); got != c.want {
			t.Errorf("era %s: imbalance %d, want %d", c.era, got, c.want)
		}
	}
}

// update_sd_pick_busiest between two fully busy groups (avg_load 0 on
// both): 6.6 takes the later one unless the busiest so far is an SMT
// group; 6.1 keeps the first (`<=`).
func TestEra61PickBusiestKeepsFirstFullyBusy(t *testing.T) {
	for _, c := range []struct {
		era  string
		want bool
	}{{"6.6", true}, {"6.1", false}} {
		s := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1, "era", c.era)
		var sds sdStats66
		sds.busiest = sgStats66{gtype: groupFullyBusy, sumHNrRunning: 2}
		sgs := sgStats66{gtype: groupFullyBusy, sumHNrRunning: 2}
		if got := s.pickBusiest66(&sds, &sgs); got != c.want {
			t.Errorf("era %s: the later fully busy group picked %v, want %v", c.era, got, c.want)
		}
	}
}

// BASE_SLICE (6.1): a nice-19 task beside a nice-0 one gets
// sched_latency·15/(1024+15), below sched_min_granularity; 6.1 raises it
// to the minimum, v5.2 does not.
func TestEra61BaseSliceFloor(t *testing.T) {
	for _, c := range []struct {
		era   string
		floor bool
	}{{"6.1", true}, {"5.2", false}} {
		s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", c.era)
		w := s.AddWorkload("w", "test")
		spawnOn(t, s, w, "nice0", 0, 0, hog())
		low := spawnOn(t, s, w, "nice19", 0, 19, hog())
		got := s.schedSlice(s.cpus[0], low, true)
		if c.floor && got != s.minGranNS {
			t.Errorf("era %s: slice %d ns, want the minimum granularity %d", c.era, got, s.minGranNS)
		}
		if !c.floor && got >= s.minGranNS {
			t.Errorf("era %s: slice %d ns, want below the minimum granularity %d (no floor)", c.era, got, s.minGranNS)
		}
	}
}
