package workload

import (
	"reflect"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

func small(t testing.TB, sockets, cores, threads, llc int, numbering string) *machine.Topology {
	tp, err := machine.Build(&machine.Spec{
		Name: "small",
		Topology: machine.TopologySpec{Sockets: sockets, CoresPerSocket: cores, ThreadsPerCore: threads,
			CoresPerLLC: llc, Numbering: numbering},
		SMTThroughput: append([]float64{1.0}, func() []float64 {
			var x []float64
			for i := 1; i < threads; i++ {
				x = append(x, 1.0+0.1*float64(i))
			}
			return x
		}()...),
		IdleStates: []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1},
			{Name: "C6", ExitLatencyUS: 80, TargetResidencyUS: 300, CoreLevel: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

type runOut struct {
	Workloads  []engine.WorkloadResult
	Search     engine.SearchStats
	Migrations engine.MigrationStats
	Balance    engine.BalanceStats
	Events     int64
	Busy       []int64
}

// buildSim builds a simulation of tp with knobs k and adds the workloads.
func buildSim(t testing.TB, tp *machine.Topology, k knob.Values, seed uint64, debug bool, specs ...string) *engine.Sim {
	t.Helper()
	s, err := engine.New(engine.Config{Machine: tp, Knobs: k, Seed: seed, Debug: debug})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range specs {
		if _, err := Add(s, sp, ""); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func simulate(t testing.TB, tp *machine.Topology, seed uint64, debug bool, dur int64, sets []string, specs ...string) runOut {
	k := knob.Defaults()
	for _, s := range sets {
		name, val, _ := cut(s)
		if err := k.Set(name, val); err != nil {
			t.Fatal(err)
		}
	}
	s := buildSim(t, tp, k, seed, debug, specs...)
	s.RunUntil(dur)
	busy, _ := s.CPUTimes()
	return runOut{s.Workloads(), s.Search(), s.Migrations(), s.Balance(), s.Events(), busy}
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// The engine's invariants (engine.CheckInvariants: one task per CPU, every
// runnable task on exactly one runqueue, busy+idle = elapsed, CPU time
// received = CPU time given, affinity respected, no lost wakeup) are
// checked after every event of many seeded runs mixing blocking, spinning,
// pinned and niced tasks, with and without the load balancer.
func TestInvariantsHoldOverManySeeds(t *testing.T) {
	machines := []*machine.Topology{
		small(t, 2, 2, 2, 2, machine.Interleaved),
		small(t, 1, 4, 4, 2, machine.Contiguous),
		small(t, 1, 1, 1, 1, machine.Interleaved),
	}
	knobSets := [][]string{nil, {"SIS_CORE=false", "SIS_PROP=false"}, {"LB_PERIODIC=false", "LB_NEWIDLE=false"},
		{"SIS_BOUND=true", "SIS_ROTATE=true", "SIS_TARGET_CORE=true", "SIS_CORE=false"},
		{"SHARED_RUNQ=all", "shard_size=2", "SMT_NICE=true", "LN_PREEMPT=true"},
		{"SHARED_RUNQ=wakeup", "SIS_UTIL=true", "LN_SEARCH=true", "LN_SKIP_CORE=true"}}
	seeds := 8
	if testing.Short() {
		seeds = 2
	}
	for mi, tp := range machines {
		for ki, sets := range knobSets {
			for seed := 1; seed <= seeds; seed++ {
				n := tp.NCPU
				specs := []string{
					"schbench:m=2,t=" + itoa(max(1, n)) + ",c=3000,s=2000,latency_nice=-10",
					"hog:n=" + itoa(max(1, n/2)) + ",nice=5,latency_nice=12",
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

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// Same machine, knobs and seed give identical results; another seed gives
// different ones (so the seed is actually used).
func TestDeterministicForSameSeed(t *testing.T) {
	tp := intel(t)
	specs := []string{"schbench:m=2,t=22", "hog:n=10,nice=19"}
	a := simulate(t, tp, 7, false, 500*engine.Millisecond, nil, specs...)
	b := simulate(t, tp, 7, false, 500*engine.Millisecond, nil, specs...)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different results:\n%+v\n%+v", a.Workloads, b.Workloads)
	}
	c := simulate(t, tp, 8, false, 500*engine.Millisecond, nil, specs...)
	if reflect.DeepEqual(a.Workloads, c.Workloads) {
		t.Fatalf("seed 7 and 8 gave identical workload results")
	}
}

// The idle search is paid by the waker: a run where every probe costs
// 2 µs (against free probes and free cache lines) gives the message threads more CPU time than one where probes are
// free, and raises the wakeup latency of the workers they wake serially.
func TestSearchCostIsChargedToTheWaker(t *testing.T) {
	tp := intel(t)
	spec := "schbench:m=2,t=22"
	free := []string{"probe_ns=0", "line_smt_ns=0", "line_llc_ns=0", "line_cross_llc_ns=0", "line_cross_socket_ns=0", "l3_hit_ns=0"}
	cheap := simulate(t, tp, 3, false, time1s, free, spec)
	dear := simulate(t, tp, 3, false, time1s, []string{"probe_ns=2000"}, spec)
	if !(dear.Workloads[0].WakeupLatency.P50 > cheap.Workloads[0].WakeupLatency.P50) {
		t.Fatalf("p50 with 2 µs probes %d not above free probes %d",
			dear.Workloads[0].WakeupLatency.P50, cheap.Workloads[0].WakeupLatency.P50)
	}
	if dear.Search.SearchTimeNS == 0 || cheap.Search.SearchTimeNS != 0 {
		t.Fatalf("search time: dear %d cheap %d", dear.Search.SearchTimeNS, cheap.Search.SearchTimeNS)
	}
}

const time1s = engine.Second
