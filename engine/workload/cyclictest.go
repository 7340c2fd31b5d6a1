package workload

import (
	"fmt"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// cyclictest (rt-tests, src/cyclictest/cyclictest.c, 2.4 as Debian ships
// it): periodic threads that arm an absolute timer (clock_nanosleep
// TIMER_ABSTIME) for the next period, read the clock when they run again
// and record how late that is. Thread k's interval is i + k·d µs
// (-i, -d); with p > 0 every thread is SCHED_FIFO at priority p (-p), else
// SCHED_OTHER, whose timer also gets the task's timer slack; a=1 pins
// thread k to the k-th allowed CPU (-a, -S); t=0 starts one thread per
// allowed CPU (-t with no number). A thread that overran skips the periods
// it missed, as cyclictest's "while (tsgreater(&now, &next))" does. Like
// cyclictest it holds a PM QoS CPU latency request for the run (latency=,
// default 0), so idle CPUs poll rather than enter deeper states.
func init() {
	register(&Kind{
		Name: "cyclictest",
		Doc:  "cyclictest: periodic threads measuring how late their timer wakeups run (rt-tests); --format cyclictest prints cyclictest's own lines",
		Keys: []Key{
			{Name: "t", Type: IntKey, Default: "1", Min: 0, Max: 4096, Doc: "threads (-t); 0: one per allowed CPU"},
			{Name: "i", Type: IntKey, Default: "1000", Min: 10, Max: 10000000, Doc: "base interval, µs (-i)"},
			{Name: "d", Type: IntKey, Default: "500", Min: 0, Max: 10000000, Doc: "interval added per thread, µs (-d): thread k's is i + k·d"},
			{Name: "p", Type: IntKey, Default: "0", Min: 0, Max: 99, Doc: "SCHED_FIFO priority of every thread (-p); 0: SCHED_OTHER"},
			{Name: "a", Type: IntKey, Default: "0", Min: 0, Max: 1, Doc: "1: pin thread k to the k-th allowed CPU (-a / -S)"},
			{Name: "latency", Type: IntKey, Default: "0", Min: -1, Max: 2000000000, Doc: "PM QoS CPU latency cyclictest holds in /dev/cpu_dma_latency for the run, µs (--latency; default 0: no idle state but polling); -1: none (--laptop)"},
			{Name: "l", Type: IntKey, Default: "0", Min: 0, Max: 1 << 40, Doc: "loops per thread (-l); 0: until the run ends"},
		},
		check: func(b *Builder) error {
			if b.Has("policy") || b.Has("rtprio") {
				return fmt.Errorf("cyclictest takes its policy from p= as cyclictest's -p does (p=80: SCHED_FIFO 80); policy= and rtprio= are not used")
			}
			return nil
		},
		build: buildCyclictest,
	})
}

// cyclictestLoopNS is a cycle's own work between wakeup and the next
// clock_nanosleep: clock_gettime, the statistics, the syscall entry.
const cyclictestLoopNS = 2 * engine.Microsecond

func buildCyclictest(b *Builder) error {
	b.Sim.SetMeasuresRequests(b.ID)
	// set_latency_target: cyclictest opens /dev/cpu_dma_latency, writes
	// the target and keeps it open until it exits.
	b.Sim.RequestCPULatency(b.Int("latency"))
	loops := b.Int("l")
	if loops > 0 {
		b.Sim.SetFinite(b.ID)
	}
	tp := b.Sim.Topology()
	allowed := b.Allowed
	if allowed.Len() == 0 {
		allowed = tp.All
	}
	var cpus []int
	for c := allowed.First(); c >= 0; c = allowed.Next(c + 1) {
		cpus = append(cpus, c)
	}
	n := int(b.Int("t"))
	if n == 0 {
		n = len(cpus)
	}
	pin := b.Int("a") == 1
	if pin && n > len(cpus) {
		return fmt.Errorf("a=1 pins one thread per allowed CPU: %d threads for %d CPUs", n, len(cpus))
	}
	base, dist := b.Int("i")*engine.Microsecond, b.Int("d")*engine.Microsecond
	finished := 0
	for k := 0; k < n; k++ {
		th := &cyclicThread{interval: base + int64(k)*dist, loops: loops}
		th.done = func(ctx *engine.Ctx) {
			finished++
			if finished == n {
				ctx.Finish()
			}
		}
		ts := b.TaskSpec(fmt.Sprintf("cyclictest/%d", k), th)
		ts.MeasureWakeups = true
		if p := int(b.Int("p")); p > 0 {
			ts.Policy, ts.RTPrio, ts.Nice = engine.PolicyFIFO, p, 0
		}
		if pin {
			ts.Allowed = cpumask.Of(tp.NCPU, cpus[k])
			ts.ParentCPU = cpus[k]
		}
		if _, err := b.Spawn(ts); err != nil {
			return err
		}
	}
	return nil
}

// cyclicThread is one cyclictest thread (timerthread).
type cyclicThread struct {
	interval, loops int64
	next            int64 // the absolute expiry of the armed timer
	cycles          int64
	armed, working  bool
	done            func(*engine.Ctx)
}

func (t *cyclicThread) Next(ctx *engine.Ctx) engine.Action {
	now := ctx.Now()
	switch {
	case !t.armed:
		// clock_gettime(&now); next = now + interval; the first sleep.
		t.armed = true
		t.next = now + t.interval
		return engine.Sleep(t.next - now)
	case !t.working:
		// Woken: diff = now - next; the statistics.
		lat := now - t.next
		ctx.RecordCycle(lat, t.interval)
		ctx.RecordLatency(lat / engine.Microsecond)
		ctx.CountOp(1)
		t.cycles++
		if t.loops > 0 && t.cycles >= t.loops {
			t.done(ctx)
			return engine.Exit()
		}
		t.working = true
		return engine.Run(cyclictestLoopNS)
	}
	t.working = false
	t.next += t.interval
	for t.next <= now {
		t.next += t.interval // missed periods are skipped
	}
	return engine.Sleep(t.next - now)
}
