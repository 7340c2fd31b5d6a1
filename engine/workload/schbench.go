package workload

import (
	"fmt"

	"schedplay/engine"
)

// schbench in the generation the 2019 measurements used (Chris Mason's
// schbench, 2016-05 .. 2020, workloads.md §2.1 version history): m message
// threads, each with t workers. A worker spins c µs of wall-clock time,
// puts itself on its message thread's list, posts the message thread's
// futex and waits on its own. A message thread waits for a post, sleeps
// s µs plus up to s/4 of jitter, reads the clock once and wakes every
// listed worker (one FUTEX_WAKE each, serially). Wakeup latency runs from
// that single clock read to the worker running again, so it includes the
// time the message thread spends waking the workers ahead of it — and
// therefore the idle search it pays for each of them.
//
// Pipe mode (-p bytes) drops the spin and the sleep: worker and message
// thread copy the buffer and ping-pong with futexes; the wake time is
// stamped per worker just before its post.
func init() {
	register(&Kind{
		Name: "schbench",
		Doc:  "Chris Mason's schbench, 2016-2020 generation: message threads wake batches of spinning workers",
		Keys: []Key{
			{Name: "m", Type: IntKey, Default: "2", Min: 1, Max: 1024, Doc: "message threads (-m)"},
			{Name: "t", Type: IntKey, Default: "16", Min: 1, Max: 4096, Doc: "worker threads per message thread (-t)"},
			{Name: "c", Type: IntKey, Default: "30000", Min: 0, Max: 10000000, Doc: "worker spin per loop, µs of wall-clock time (-c)"},
			{Name: "s", Type: IntKey, Default: "30000", Min: 0, Max: 10000000, Doc: "message thread sleep before replying, µs, plus up to s/4 jitter (-s)"},
			{Name: "p", Type: IntKey, Default: "0", Min: 0, Max: 1 << 20, Doc: "pipe mode: bytes copied per message; sets c and s to 0 unless given (-p)"},
		},
		build: buildSchbench,
	})
}

// memcpyNSPerKB is the cost of touching the pipe-mode buffer: ~10 GB/s
// for an L1/L2-resident buffer, i.e. ~100 ns per KiB (assumed).
const memcpyNSPerKB = 100

// gtodNS is one gettimeofday via the vDSO (~20-30 ns, assumed).
const gtodNS = 25

type schbenchMsg struct {
	id      engine.TaskID
	blocked bool // futex word: FUTEX_BLOCKED
	list    []*schbenchWorker
	// program state
	state   int
	batch   []*schbenchWorker
	bi      int
	stamp   int64
	sleepUS int64
	pipe    int64
	pending *schbenchWorker // pipe mode: copy done, post next
}

type schbenchWorker struct {
	id       engine.TaskID
	msg      *schbenchMsg
	blocked  bool  // futex word
	wakeTime int64 // td->wake_time, written by the worker then by its message thread
	state    int
	spinUS   int64
	pipe     int64
}

func buildSchbench(b *Builder) error {
	m, t := b.Int("m"), b.Int("t")
	c, sl, p := b.Int("c"), b.Int("s"), b.Int("p")
	if p > 0 {
		if !b.Has("c") {
			c = 0
		}
		if !b.Has("s") {
			sl = 0
		}
	}
	if m*(t+1) > engine.MaxTasks/2 {
		return fmt.Errorf("m×(t+1) = %d threads is more than the limit %d", m*(t+1), engine.MaxTasks/2)
	}
	b.Sim.SetSkipZeroLatency(b.ID)
	for i := int64(0); i < m; i++ {
		msg := &schbenchMsg{sleepUS: sl, pipe: p}
		id, err := b.Spawn(b.TaskSpec(fmt.Sprintf("schbench-msg/%d", i), msg))
		if err != nil {
			return err
		}
		msg.id = id
		parent := b.Sim.Task(id).CPU()
		for j := int64(0); j < t; j++ {
			w := &schbenchWorker{msg: msg, spinUS: c, pipe: p}
			ts := b.TaskSpec(fmt.Sprintf("schbench-worker/%d.%d", i, j), w)
			ts.MeasureWakeups = true
			ts.ParentCPU = parent
			wid, err := b.Spawn(ts)
			if err != nil {
				return err
			}
			w.id = wid
		}
	}
	return nil
}

// Message thread states.
const (
	msgWakeAll = iota // futex = BLOCKED; splice the list; stamp; wake each
	msgWaking
	msgWait // fwait: block unless posted
	msgSleep
)

// Next implements engine.Program for a message thread (run_msg_thread).
func (m *schbenchMsg) Next(ctx *engine.Ctx) engine.Action {
	for {
		switch m.state {
		case msgWakeAll:
			m.blocked = true
			m.batch = append(m.batch[:0], m.list...)
			m.list = m.list[:0]
			// xlist_add prepends, so the splice walks newest first.
			for i, j := 0, len(m.batch)-1; i < j; i, j = i+1, j-1 {
				m.batch[i], m.batch[j] = m.batch[j], m.batch[i]
			}
			m.bi = 0
			m.stamp = ctx.Now()
			m.state = msgWaking
			return engine.KernelRun(gtodNS)
		case msgWaking:
			if m.pending != nil {
				// Pipe mode: the worker's page is copied; stamp and post.
				w := m.pending
				m.pending = nil
				w.wakeTime = ctx.Now()
				if w.blocked {
					w.blocked = false
					return engine.WakeStamped(w.id, false, w.wakeTime)
				}
				continue
			}
			if m.bi >= len(m.batch) {
				m.state = msgWait
				continue
			}
			w := m.batch[m.bi]
			m.bi++
			if m.pipe > 0 {
				m.pending = w
				return engine.Run(m.pipe*memcpyNSPerKB/1024 + gtodNS)
			}
			w.wakeTime = m.stamp
			if w.blocked { // fpost: CAS BLOCKED -> RUNNING, then FUTEX_WAKE
				w.blocked = false
				return engine.WakeStamped(w.id, false, m.stamp)
			}
		case msgWait:
			if !m.blocked { // posted already: CAS RUNNING -> BLOCKED succeeds
				m.blocked = true
				m.state = msgSleep
				continue
			}
			return engine.Block() // FUTEX_WAIT; a post wakes us and we retry
		case msgSleep:
			m.state = msgWakeAll
			if m.pipe == 0 && m.sleepUS > 0 {
				jitter := ctx.Rand().Int64N(max(1, m.sleepUS/4))
				return engine.Sleep((m.sleepUS + jitter) * engine.Microsecond)
			}
		}
	}
}

// Worker states.
const (
	wSpin = iota
	wPost
	wWait
	wAfterWait
)

// Next implements engine.Program for a worker (worker_thread, msg_and_wait).
func (w *schbenchWorker) Next(ctx *engine.Ctx) engine.Action {
	for {
		switch w.state {
		case wSpin:
			w.state = wPost
			if w.spinUS > 0 {
				ctx.CountOp(1)
				return engine.Spin(w.spinUS * engine.Microsecond)
			}
			if w.pipe > 0 {
				ctx.CountOp(1)
				return engine.Run(w.pipe*memcpyNSPerKB/1024 + gtodNS)
			}
			ctx.CountOp(1)
		case wPost:
			w.blocked = true
			w.wakeTime = ctx.Now()
			m := w.msg
			m.list = append(m.list, w)
			w.state = wWait
			if m.blocked {
				m.blocked = false
				return engine.Wake(m.id, false)
			}
		case wWait:
			if !w.blocked {
				// Already posted by the message thread: no sleep, but
				// schbench still records now - wake_time.
				w.blocked = true
				w.state = wSpin
				ctx.RecordWakeLatency((ctx.Now() - w.wakeTime) / engine.Microsecond)
				continue
			}
			w.state = wAfterWait
			return engine.Block()
		case wAfterWait:
			// Woken: the futex is RUNNING again; the engine has recorded
			// the wakeup latency from the message thread's stamp.
			w.blocked = true
			w.state = wSpin
		}
	}
}
