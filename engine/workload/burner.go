package workload

import (
	"fmt"

	"schedplay/engine"
)

// mprime is a distributed-computing cache burner (mprime/Prime95, the
// "true distributed computing cache burner" of smt-nice-2004; workloads.md
// §2.8): worker threads that run large floating-point FFTs forever, never
// blocking and never making a syscall. Usually run at nice 19 (nice=19).
//
// What sets it apart from a `while(1)` loop is its working set: an FFT of
// the exponents of the time (2004: ~20M bits, 1024K-point FFTs) is 8 MB of
// doubles plus twiddle tables per worker, streamed through the caches
// with SSE2 and software prefetch, so it keeps the memory bus busy and
// evicts everything else from the caches it shares.
//
// The engine offers one lever for that: SMT pressure, how much a task
// slows the thread running beside it on the same core. The default
// smt_pressure for mprime is therefore 125% of the preset's nominal loop
// (the common key's 100% default does not apply to this kind); see
// mprimePressure. It also pollutes: when it stops running, the next task
// on its CPU and the tasks on its SMT siblings refill what it evicted
// (TaskSpec.PolluteNS, key pollute_us).
func init() {
	register(&Kind{
		Name:  "mprime",
		WSSKB: 4096,
		Doc:   "mprime/Prime95 cache burner: always-runnable FFT threads (default one per allowed CPU) with a large working set; smt_pressure defaults to 125 for this kind",
		Keys: []Key{
			{Name: "n", Type: IntKey, Default: "0", Min: 0, Max: 8192, Doc: "worker threads; 0 = one per allowed CPU (mprime's default of one worker per CPU)"},
			{Name: "pollute_us", Type: IntKey, Default: "500", Min: 0, Max: 100000, Doc: "refill cost of the cache it evicts, µs: 500 ≈ a 512 KB L2 (8192 lines) refilled at ≈60 ns a line (the P4 of smt-nice-2004)"},
		},
		build: buildMprime,
	})
}

// mprimePressure is mprime's default SMT pressure, ×1024: 125% of the
// preset's nominal loop. Reasoning (assumed, NetBurst-specific): the
// nominal loop of p4-ht-1c-2t (smt_throughput 1.15, Con Kolivas'
// empirical per_cpu_gain for kernel-compile-like work) slows a sibling
// through two channels — the core (the ROB, load/store buffers and uop
// queues are split in half whenever both threads run; the trace cache and
// execution ports are shared) and the memory side (the shared 8 KB L1D,
// 512 KB L2 and the front-side bus). For a compiler, whose stalls are
// largely L2 misses, take ¾ core and ¼ memory side. mprime presses the
// core about as hard as the nominal loop on the partitioned queues and
// load/store ports but little on the integer ALUs it does not use (≈¾
// again), and the memory side about twice as hard: it both evicts the
// sibling's L2 working set and queues the sibling's misses behind its own
// streams (≈2 × ¼). ¾ + ½ = 1.25. Consistency check (not a fit): Con
// Kolivas' remark in the same thread that "one mprime client would make
// the machine run at half speed" — at 125% a sibling runs at
// 1 − (1 − 1.15/2)·1.25 ≈ 0.47 of its solo speed.
//
// By the same split, a bash `while true; do a=1; done` loop (an
// interpreter whose data fits in L1/L2: it presses the core like the
// nominal loop but leaves the L2 and the bus alone) is ≈¾ of nominal, i.e.
// hog:smt_pressure=75 — 60% of mprime's pressure.
const mprimePressure = 125 * 1024 / 100

func buildMprime(b *Builder) error {
	b.Sim.SetBackground(b.ID) // load beside others: it does not hold a run open
	tp := b.Sim.Topology()
	allowed := b.Allowed
	if allowed.Len() == 0 {
		allowed = tp.All
	}
	n := int(b.Int("n"))
	if n == 0 {
		n = allowed.Weight()
	}
	pressure := b.Pressure
	if !b.Has("smt_pressure") {
		pressure = mprimePressure
	}
	for i := 0; i < n; i++ {
		ts := b.TaskSpec(fmt.Sprintf("mprime/%d", i), engine.ProgramFunc(func(*engine.Ctx) engine.Action {
			return engine.Run(forever)
		}))
		ts.SMTPressure = pressure
		ts.PolluteNS = b.Int("pollute_us") * engine.Microsecond
		if _, err := b.Spawn(ts); err != nil {
			return err
		}
	}
	return nil
}
