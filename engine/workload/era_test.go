package workload

import (
	"reflect"
	"testing"

	"schedplay/engine"
	"schedplay/engine/machine"
)

// Eras 6.6 (EEVDF and the v6.6 wakeup path) and 6.1 (CFS on the same
// wakeup path and balancer) keep the engine's invariants —
// checked after every event, including the avg_vruntime sums and the
// eligibility of the least-vruntime entity — over seeded runs mixing
// blocking, spinning, pinned and niced tasks, with its features switched
// both ways.
func TestEra6xInvariantsOverManySeeds(t *testing.T) {
	machines := []*machine.Topology{
		small(t, 2, 2, 2, 2, machine.Interleaved),
		small(t, 1, 4, 4, 2, machine.Contiguous),
		small(t, 1, 1, 1, 1, machine.Interleaved),
	}
	knobSets := [][]string{{"era=6.6"},
		{"era=6.6", "RUN_TO_PARITY=false", "PLACE_LAG=false", "NEXT_BUDDY=true"},
		{"era=6.6", "SIS_PROP=true", "SIS_UTIL=false", "SHARED_RUNQ=all", "shard_size=2"},
		{"era=6.6", "SIS_CORE=false", "LB_PERIODIC=false", "PLACE_DEADLINE_INITIAL=false", "WAKEUP_PREEMPTION=false"},
		// Era 6.1: the CFS class under the v5.5+ balancer and the v6.x
		// wakeup path.
		{"era=6.1"},
		{"era=6.1", "SIS_PROP=true", "SIS_UTIL=false", "SHARED_RUNQ=all", "shard_size=2", "BASE_SLICE=false"}}
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for mi, tp := range machines {
		for ki, sets := range knobSets {
			for seed := 1; seed <= seeds; seed++ {
				n := tp.NCPU
				specs := []string{
					"schbench:m=2,t=" + itoa(max(1, n)) + ",c=3000,s=2000",
					"hog:n=" + itoa(max(1, n/2)) + ",nice=5",
					"schbench:m=1,t=2,p=64,cpus=0",
				}
				if n > 2 {
					specs = append(specs, "hog:n=2,place=core,nice=-3")
				}
				out := simulate(t, tp, uint64(seed), true, 200*engine.Millisecond, sets, specs...)
				if out.Workloads[0].WakeupLatency.Count == 0 {
					t.Errorf("machine %d knobs %d seed %d: no wakeups measured", mi, ki, seed)
				}
			}
		}
	}
}

// Every era is deterministic: the same machine, knobs and seed give
// identical results; and eras 5.2 and 6.6 differ on a loaded machine.
func TestErasDeterministicForSameSeed(t *testing.T) {
	tp := intel(t)
	specs := []string{"schbench:m=2,t=22", "hog:n=60,nice=0"}
	var outs []runOut
	for _, era := range []string{"era=5.2", "era=6.6", "era=6.1"} {
		a := simulate(t, tp, 7, false, 300*engine.Millisecond, []string{era}, specs...)
		b := simulate(t, tp, 7, false, 300*engine.Millisecond, []string{era}, specs...)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: same seed, different results:\n%+v\n%+v", era, a.Workloads, b.Workloads)
		}
		outs = append(outs, a)
	}
	if reflect.DeepEqual(outs[0].Workloads, outs[1].Workloads) {
		t.Fatal("eras 5.2 and 6.6 gave identical results")
	}
}
