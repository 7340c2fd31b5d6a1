package workload

import (
	"fmt"
	"math"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// noise is the background activity of a real server, which the source
// measurements all ran on top of: per-CPU kernel threads (kworker/N,
// ksoftirqd/N, rcu and vmstat work) that wake on their own CPU, and
// unbound daemons (journald, irqbalance, monitoring agents, unbound
// kworkers) that the wakeup path places like any task. Each noise thread
// sleeps an exponentially distributed time (a Poisson arrival process) and
// then runs an exponentially distributed burst.
//
// Defaults (all assumed, order of magnitude from osnoise/timerlat and
// `perf sched` traces of idle 2-socket servers): every CPU's kthreads wake
// 20 times a second for 15 µs on average (0.03% of each CPU), and one
// unbound daemon per 8 CPUs wakes 50 times a second for 100 µs (0.5% of a
// CPU each). The point is not the exact load but that some task now and
// then occupies a CPU a benchmark thread thinks of as its own. Measured
// (2026-12-02, the project's 2-vCPU Debian build host under a build):
// kernel threads switched 55 times a second in all over 10 s (27 per CPU:
// rcu_preempt 15, ksoftirqd/1 12, kworkers ~20), the order of the 20 per
// CPU assumed.
func init() {
	register(&Kind{
		Name: "noise",
		Doc:  "background OS activity: per-CPU kthreads and unbound daemons waking at random (Poisson) for short bursts",
		Keys: []Key{
			{Name: "kthread_hz", Type: IntKey, Default: "20", Min: 0, Max: 100000, Doc: "wakeups per second of each CPU's pinned kernel thread (0: none)"},
			{Name: "kthread_us", Type: IntKey, Default: "15", Min: 1, Max: 1000000, Doc: "mean run time of a kthread wakeup, µs (exponential)"},
			{Name: "daemons", Type: IntKey, Default: "-1", Min: -1, Max: 4096, Doc: "unbound daemon threads; -1 = one per 8 CPUs"},
			{Name: "daemon_hz", Type: IntKey, Default: "50", Min: 0, Max: 100000, Doc: "wakeups per second of each daemon"},
			{Name: "daemon_us", Type: IntKey, Default: "100", Min: 1, Max: 1000000, Doc: "mean run time of a daemon wakeup, µs (exponential)"},
		},
		build: buildNoise,
	})
}

// noiseThread alternates an exponential sleep and an exponential burst.
type noiseThread struct {
	meanSleep int64 // ns
	meanRun   int64 // ns
	running   bool
}

func (n *noiseThread) Next(ctx *engine.Ctx) engine.Action {
	r := ctx.Rand()
	n.running = !n.running
	if n.running {
		return engine.Sleep(expDraw(r.Float64(), n.meanSleep))
	}
	return engine.Run(max(1, expDraw(r.Float64(), n.meanRun)))
}

// expDraw turns a uniform draw into an exponential one with the given
// mean. math.Log is correctly rounded on every platform Go supports, so
// native and wasm runs agree.
func expDraw(u float64, mean int64) int64 {
	return int64(-math.Log(1-u) * float64(mean))
}

func buildNoise(b *Builder) error {
	b.Sim.SetBackground(b.ID) // load beside others: it does not hold a run open
	tp := b.Sim.Topology()
	if hz := b.Int("kthread_hz"); hz > 0 {
		for c := 0; c < tp.NCPU; c++ {
			if b.Allowed.Len() > 0 && !b.Allowed.Test(c) {
				continue
			}
			th := &noiseThread{meanSleep: engine.Second / hz, meanRun: b.Int("kthread_us") * engine.Microsecond}
			ts := b.TaskSpec(fmt.Sprintf("kworker/%d", c), th)
			ts.Kthread = true // no mm: no mm_switch, never SMT_NICE-held (implies MemNone)
			ts.Allowed = cpumask.Of(tp.NCPU, c)
			ts.ParentCPU = c
			if _, err := b.Spawn(ts); err != nil {
				return err
			}
		}
	}
	n := b.Int("daemons")
	if n < 0 {
		n = int64(max(1, tp.NCPU/8))
	}
	if hz := b.Int("daemon_hz"); hz > 0 {
		for i := int64(0); i < n; i++ {
			th := &noiseThread{meanSleep: engine.Second / hz, meanRun: b.Int("daemon_us") * engine.Microsecond}
			if _, err := b.Spawn(b.TaskSpec(fmt.Sprintf("daemon/%d", i), th)); err != nil {
				return err
			}
		}
	}
	return nil
}
