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
//
// RPS mode (-R requests/s, run_rps_thread of that generation) turns each
// message thread into an open-loop dispatcher of R/m requests a second:
// it wakes nr_to_wake = t·2/3 (at least 1) workers per batch,
// ceil((R/m)/nr_to_wake) batches a second, sleeping 1e6/batches µs before
// each batch (the sleep does not subtract the time the batch took, so the
// achieved rate is a little below R). Per request it allocates a request
// (malloc plus a gettimeofday that stamps it), prepends it to the next
// worker's list (round-robin), sets that worker's wake_time to the batch's
// clock read and posts it. A worker takes its whole list (oldest first),
// and for each request spins c µs of wall-clock time, then records
// now − request start − c (1 if that is not positive) in the latency
// histogram — the same one the normal mode fills; the futex wakeup itself
// is not sampled in this mode. With an empty list it posts its message
// thread (a no-op: the dispatcher never waits on its futex) and waits.
// One op per request. -s is unused in this mode.
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
			{Name: "R", Type: IntKey, Default: "0", Min: 0, Max: 100000000, Doc: "RPS mode: requests per second over all message threads, each a dispatcher waking batches of t·2/3 workers; latency = request start to end of its c µs spin, minus c (-R; 0 = off)"},
		},
		build: buildSchbench,
	})
}

// memcpyNSPerKB is the cost of touching the pipe-mode buffer: ~10 GB/s
// for an L1/L2-resident buffer, i.e. ~100 ns per KiB (assumed).
const memcpyNSPerKB = 100

// gtodNS is one gettimeofday via the vDSO (~20-30 ns, assumed).
const gtodNS = 25

// mallocNS is RPS mode's allocation of one small request (a 24-byte
// malloc from glibc's per-thread cache or fastbins, ~20-50 ns, assumed).
const mallocNS = 40

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
	sys     syscallSeq
}

type schbenchWorker struct {
	id       engine.TaskID
	msg      *schbenchMsg
	blocked  bool  // futex word
	wakeTime int64 // td->wake_time, written by the worker then by its message thread
	state    int
	spinUS   int64
	pipe     int64
	// RPS mode: pending request start stamps (oldest first) and the batch
	// being served.
	rps   bool
	reqs  []int64
	batch []int64
	bi    int
	sys   syscallSeq
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
	if r := b.Int("R"); r > 0 {
		if p > 0 {
			return fmt.Errorf("keys R and p cannot be combined (RPS mode has no pipe transfers)")
		}
		if r < m {
			return fmt.Errorf("key R: %d requests/s is less than one per message thread (m=%d)", r, m)
		}
		return buildSchbenchRPS(b, m, t, c, r)
	}
	b.Sim.SetSkipZeroLatency(b.ID)
	for i := int64(0); i < m; i++ {
		msg := &schbenchMsg{sleepUS: sl, pipe: p}
		id, err := b.Spawn(b.ThreadSpec(fmt.Sprintf("schbench-msg/%d", i), msg))
		if err != nil {
			return err
		}
		msg.id = id
		parent := b.Sim.Task(id).CPU()
		for j := int64(0); j < t; j++ {
			w := &schbenchWorker{msg: msg, spinUS: c, pipe: p}
			ts := b.ThreadSpec(fmt.Sprintf("schbench-worker/%d.%d", i, j), w)
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
	msgWait    // fwait: block unless posted
	msgWaitSys // inside FUTEX_WAIT: the kernel re-checks the word
	msgWoken   // woken: return from FUTEX_WAIT
	msgSleep
)

// Next implements engine.Program for a message thread (run_msg_thread).
func (m *schbenchMsg) Next(ctx *engine.Ctx) engine.Action {
	if a, ok := m.sys.next(); ok {
		return a
	}
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
					return m.sys.futexWake(engine.WakeStamped(w.id, false, w.wakeTime))
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
				return m.sys.futexWake(engine.WakeStamped(w.id, false, m.stamp))
			}
		case msgWait:
			if !m.blocked { // posted already: CAS RUNNING -> BLOCKED succeeds
				m.blocked = true
				m.state = msgSleep
				continue
			}
			m.state = msgWaitSys
			return futexWaitEntry()
		case msgWaitSys:
			m.state = msgWait
			if !m.blocked {
				return futexWaitExit() // posted meanwhile: EAGAIN
			}
			m.state = msgWoken
			return engine.Block() // a post wakes us and we retry
		case msgWoken:
			m.state = msgWait
			return futexWaitExit()
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
	wWaitSys // inside FUTEX_WAIT: the kernel re-checks the word
	wAfterWait
)

// Next implements engine.Program for a worker (worker_thread, msg_and_wait).
func (w *schbenchWorker) Next(ctx *engine.Ctx) engine.Action {
	if a, ok := w.sys.next(); ok {
		return a
	}
	if w.rps {
		return w.nextRPS(ctx)
	}
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
				return w.sys.futexWake(engine.Wake(m.id, false))
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
			w.state = wWaitSys
			return futexWaitEntry()
		case wWaitSys:
			if !w.blocked {
				w.state = wWait
				return futexWaitExit() // posted meanwhile: EAGAIN
			}
			w.state = wAfterWait
			return engine.Block()
		case wAfterWait:
			// Woken: the futex is RUNNING again; the engine has recorded
			// the wakeup latency from the message thread's stamp.
			w.blocked = true
			w.state = wSpin
			return futexWaitExit()
		}
	}
}

// schbenchRPS is a message thread in RPS mode (run_rps_thread).
type schbenchRPS struct {
	workers  []*schbenchWorker
	nrToWake int
	sleepUS  int64
	cur      int // cur_tid: round-robin position
	state    int
	i        int
	start    int64
	sys      syscallSeq
}

func buildSchbenchRPS(b *Builder, m, t, c, r int64) error {
	perMsg := r / m // main() divides requests_per_sec by the message threads
	nrToWake := max(1, t*2/3)
	wakeups := (perMsg + nrToWake - 1) / nrToWake
	for i := int64(0); i < m; i++ {
		d := &schbenchRPS{nrToWake: int(nrToWake), sleepUS: 1000000 / wakeups}
		id, err := b.Spawn(b.ThreadSpec(fmt.Sprintf("schbench-msg/%d", i), d))
		if err != nil {
			return err
		}
		parent := b.Sim.Task(id).CPU()
		for j := int64(0); j < t; j++ {
			w := &schbenchWorker{spinUS: c, rps: true, state: wRPSTake}
			ts := b.ThreadSpec(fmt.Sprintf("schbench-worker/%d.%d", i, j), w)
			ts.ParentCPU = parent
			wid, err := b.Spawn(ts)
			if err != nil {
				return err
			}
			w.id = wid
			d.workers = append(d.workers, w)
		}
	}
	return nil
}

// Dispatcher states.
const (
	rpsSleep = iota // usleep(sleep_time)
	rpsStamp        // gettimeofday(&start)
	rpsAlloc        // allocate_request: malloc + stamp
	rpsPost         // request_add, wake_time = start, fpost
)

// Next implements engine.Program for an RPS dispatcher.
func (d *schbenchRPS) Next(ctx *engine.Ctx) engine.Action {
	if a, ok := d.sys.next(); ok {
		return a
	}
	for {
		switch d.state {
		case rpsSleep:
			d.state = rpsStamp
			return engine.Sleep(d.sleepUS * engine.Microsecond)
		case rpsStamp:
			d.start = ctx.Now()
			d.i = 0
			d.state = rpsAlloc
			return engine.KernelRun(gtodNS)
		case rpsAlloc:
			if d.i >= d.nrToWake {
				d.state = rpsSleep
				continue
			}
			d.state = rpsPost
			return engine.Run(mallocNS + gtodNS)
		case rpsPost:
			w := d.workers[d.cur%len(d.workers)]
			d.cur++
			d.i++
			d.state = rpsAlloc
			w.reqs = append(w.reqs, ctx.Now()) // the request's own clock read
			w.wakeTime = d.start
			if w.blocked { // fpost: CAS BLOCKED -> RUNNING, then FUTEX_WAKE
				w.blocked = false
				return d.sys.futexWake(engine.Wake(w.id, false))
			}
		}
	}
}

// RPS worker states.
const (
	wRPSTake   = iota + 100 // msg_and_wait: futex BLOCKED, splice the list
	wRPSServe               // spin for the next request
	wRPSRecord              // record its latency
)

// nextRPS is the worker loop of RPS mode.
func (w *schbenchWorker) nextRPS(ctx *engine.Ctx) engine.Action {
	for {
		switch w.state {
		case wRPSTake:
			w.blocked = true
			w.wakeTime = ctx.Now()
			if len(w.reqs) == 0 {
				// fpost(msg) is a no-op (the dispatcher never waits on
				// its futex); fwait: nothing can have posted us at the
				// same instant, so sleep. A wakeup comes with requests.
				return engine.Block()
			}
			w.blocked = false // requests found: futex RUNNING
			w.batch, w.reqs = w.reqs, w.batch[:0]
			w.bi = 0
			w.state = wRPSServe
		case wRPSServe:
			if w.bi >= len(w.batch) {
				w.state = wRPSTake
				continue
			}
			w.state = wRPSRecord
			if w.spinUS > 0 {
				return engine.Spin(w.spinUS * engine.Microsecond)
			}
			return engine.Run(gtodNS)
		case wRPSRecord:
			delta := (ctx.Now() - w.batch[w.bi]) / engine.Microsecond
			if delta > w.spinUS {
				delta -= w.spinUS
			} else {
				delta = 1
			}
			ctx.RecordWakeLatency(delta)
			ctx.CountOp(1)
			w.bi++
			w.state = wRPSServe
		}
	}
}
