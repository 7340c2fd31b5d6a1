package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// cyclictest on an idle machine: a SCHED_FIFO thread's timer has no slack
// and it runs within a few µs of its expiry; a SCHED_OTHER one's timer
// fires up to timer_slack_ns (50 µs) late unless a tick comes first; l=
// ends each thread after that many cycles and finishes the workload.
func TestCyclictestIdleLatency(t *testing.T) {
	run := func(spec string) (engine.WorkloadResult, *engine.Sim) {
		s := simAtEra(t, "6.6")
		if _, err := Add(s, spec, ""); err != nil {
			t.Fatal(err)
		}
		s.RunUntil(engine.Second)
		return s.Workloads()[0], s
	}
	fifo, _ := run("cyclictest:t=2,p=80")
	other, _ := run("cyclictest:t=2")
	if len(fifo.Threads) != 2 || len(other.Threads) != 2 {
		t.Fatalf("threads %d and %d, want 2", len(fifo.Threads), len(other.Threads))
	}
	for k := range 2 {
		f, o := fifo.Threads[k], other.Threads[k]
		if f.Policy != engine.PolicyFIFO || f.RTPrio != 80 || o.Policy != engine.PolicyNormal {
			t.Errorf("thread %d: policies %v/%d and %v", k, f.Policy, f.RTPrio, o.Policy)
		}
		if f.MaxNS > 10*engine.Microsecond {
			t.Errorf("thread %d: SCHED_FIFO max latency %d ns on an idle machine, want a few µs", k, f.MaxNS)
		}
		if avg := o.SumNS / o.Cycles; avg < 10*engine.Microsecond || o.MaxNS > 60*engine.Microsecond {
			t.Errorf("thread %d: SCHED_OTHER mean %d ns, max %d ns; want the timer slack's tens of µs", k, avg, o.MaxNS)
		}
		if want := engine.Second / f.IntervalNS; f.Cycles < want-1 || f.Cycles > want {
			t.Errorf("thread %d: %d cycles of %d ns in 1 s", k, f.Cycles, f.IntervalNS)
		}
	}
	done, s := run("cyclictest:t=2,l=100,p=50")
	if !s.AllFinished() || done.Threads[0].Cycles != 100 || done.Threads[1].Cycles != 100 {
		t.Errorf("l=100: finished %v, cycles %d and %d", s.AllFinished(), done.Threads[0].Cycles, done.Threads[1].Cycles)
	}
}

// simAtEra is a debug simulation of the test Intel machine in era.
func simAtEra(t *testing.T, era string) *engine.Sim {
	t.Helper()
	k := knob.Defaults()
	if err := k.Set("era", era); err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(engine.Config{Machine: intel(t), Knobs: k, Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
