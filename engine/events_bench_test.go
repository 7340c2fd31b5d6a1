package engine

import (
	"testing"
	"time"

	"schedplay/internal/benchrun"
)

// bareLoopPending is the number of events the bare loop keeps queued: about
// what a 512-CPU machine keeps pending (a phase end and a tick per busy
// CPU), and the figure issue 10 uses for "the limit of a Go event loop".
const bareLoopPending = 2048

// BenchmarkEventLoop is the bare event loop the engine benchmarks are
// compared with: the engine's own 4-ary heap with 2,048 pending events,
// each firing rescheduling its root a pseudo-random 1–65,536 ns later, and
// no other work. One op is one event. It reports events per wall and per
// CPU second only: nothing in it wakes up, so it has no wakeups/s.
func BenchmarkEventLoop(b *testing.B) {
	var q eventQueue
	q.grow(bareLoopPending)
	x := uint64(0x9e3779b97f4a7c15)
	rnd := func() int64 {
		// xorshift64: a cheap deterministic stream, so the loop measures
		// the queue and not a random-number generator.
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x&0xffff) + 1
	}
	for i := 0; i < bareLoopPending; i++ {
		q.schedule(i, rnd())
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), benchrun.CPUSeconds()
	for i := 0; i < b.N; i++ {
		slot, when := q.peek()
		q.fire()
		q.schedule(slot, when+rnd())
		q.finish()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	if cpu0 >= 0 {
		b.ReportMetric(float64(b.N)/(benchrun.CPUSeconds()-cpu0), "events/cpu-s")
	}
}
