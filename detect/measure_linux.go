//go:build linux

package detect

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The microbenchmarks run on goroutines locked to OS threads pinned with
// sched_setaffinity. A locked goroutine that returns without unlocking
// takes its thread with it, so no pinned (or SCHED_IDLE) thread goes
// back to the Go runtime's pool.

var epoch = time.Now()

// now is monotonic nanoseconds (vDSO clock_gettime through the runtime).
func now() int64 { return int64(time.Since(epoch)) }

// pin locks the calling goroutine to its thread and the thread to cpu.
func pin(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity to CPU %d: %v", cpu, err)
	}
	return nil
}

// goPinned runs fn on a new thread pinned to cpu; the channel gets its
// error (or nil) when it returns.
func goPinned(cpu int, fn func() error) <-chan error { return goPinnedOr(cpu, fn, nil) }

// goPinnedOr is goPinned that calls onFail (when not nil) if the thread
// cannot be pinned, so that its partner does not wait for it forever.
func goPinnedOr(cpu int, fn func() error, onFail func()) <-chan error {
	done := make(chan error, 1)
	go func() {
		if err := pin(cpu); err != nil {
			if onFail != nil {
				onFail()
			}
			done <- err
			return
		}
		done <- fn()
	}()
	return done
}

func waitAll(chs ...<-chan error) error {
	var errs []error
	for _, c := range chs {
		if err := <-c; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func measure(ctx context.Context, r *Result, opt MeasureOptions) (*Measurements, error) {
	start := time.Now()
	m := &Measurements{Date: start, LoadBefore: LoadAvg(), NCPU: len(r.Found.CPUs)}
	if m.LoadBefore > float64(m.NCPU)/2 {
		fmt.Fprintf(opt.Progress, "detect: warning: load average %.1f on %d CPUs: the cross-CPU figures will include waiting behind other work\n", m.LoadBefore, m.NCPU)
	}
	defer func() { m.LoadAfter = LoadAvg() }()
	allowed := opt.Allowed
	if allowed == nil {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("sched_getaffinity: %v", err)
		}
		allowed = map[int]bool{}
		var not []int
		for _, c := range r.Found.CPUs {
			if set.IsSet(c) {
				allowed[c] = true
			} else {
				not = append(not, c)
			}
		}
		if len(not) > 0 {
			m.Skipped = append(m.Skipped, fmt.Sprintf("CPUs %s are outside this process's affinity mask (taskset, cpuset): no pair uses them", formatCPUList(not)))
		}
	}
	pairs := r.Pairs(allowed)
	if len(pairs) == 0 {
		return nil, errors.New("no CPU this process may run on is in the detected topology")
	}
	// Threads blocked in syscalls keep their P unless others need one;
	// spare Ps keep the runtime from handing them around mid-benchmark,
	// and no garbage collection runs in the middle of a batch.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2*len(r.Found.CPUs)+4)))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))

	var steps []func() []Figure
	add := func(f func() []Figure) { steps = append(steps, f) }
	self := pairs[0]
	add(func() []Figure { m.NullSyscall = nullSyscall(self.A, opt.Budget/4); return []Figure{m.NullSyscall} })
	add(func() []Figure { m.Yield = yieldSwitch(self.A, opt.Budget); return []Figure{m.Yield} })
	add(func() []Figure {
		m.FutexSame, m.FutexSamePreempt = futexWakeSameCPU(self.A, opt.Budget)
		return []Figure{m.FutexSame, m.FutexSamePreempt}
	})
	for _, p := range pairs {
		add(func() []Figure { f := pipeRT(p, opt.Budget); m.Pipe = append(m.Pipe, f); return []Figure{f} })
	}
	for _, p := range pairs {
		if p.Dist != DistSameCPU {
			add(func() []Figure { f := linePingPong(p, opt.Budget); m.Line = append(m.Line, f); return []Figure{f} })
		}
	}
	if wp, ok := pick(pairs, DistLLC, DistCrossLLC, DistCrossSocket, DistSMT); ok {
		add(func() []Figure {
			m.FutexWaker, m.FutexIdle = futexWake(wp, opt.Budget, false)
			return []Figure{m.FutexWaker, m.FutexIdle}
		})
		add(func() []Figure { _, m.FutexBusy = futexWake(wp, opt.Budget, true); return []Figure{m.FutexBusy} })
	} else {
		m.Skipped = append(m.Skipped, "futex wake to running, the waker's wake call and the IPI (one CPU only)")
	}
	fmt.Fprintf(opt.Progress, "detect: %d measurements, at most %.1f s each (--quick skips them)\n", len(steps), opt.Budget.Seconds())
	for i, step := range steps {
		if err := ctx.Err(); err != nil {
			m.Elapsed = time.Since(start)
			return m, err
		}
		for _, f := range step() {
			fmt.Fprintf(opt.Progress, "detect: [%d/%d] %s\n", i+1, len(steps), f)
		}
	}
	m.Elapsed = time.Since(start)
	return m, nil
}

// batchLoop calls batch until budget has passed (or 4000 batches), and
// summarises the per-op figures it returns. Batches are short (0.1-0.5 ms)
// so that on a loaded machine most of them run without being preempted:
// the median is then the figure of the operation, not of the load.
func batchLoop(f Figure, budget time.Duration, opsPerBatch int, batch func() (ns int64, ok bool)) Figure {
	var per []float64
	ops := 0
	deadline := now() + int64(budget)
	for now() < deadline && len(per) < 4000 {
		ns, ok := batch()
		if !ok {
			break
		}
		per = append(per, float64(ns)/float64(opsPerBatch))
		ops += opsPerBatch
	}
	return summarize(f, per, ops)
}

// nullSyscall times getppid, the cheapest syscall.
func nullSyscall(cpu int, budget time.Duration) Figure {
	f := Figure{What: "null syscall (getppid)", A: cpu, B: cpu}
	err := waitAll(goPinned(cpu, func() error {
		const n = 200
		f = batchLoop(f, budget, n, func() (int64, bool) {
			t := now()
			for range n {
				unix.Getppid()
			}
			return now() - t, true
		})
		return nil
	}))
	if err != nil {
		f.Err = err.Error()
	}
	return f
}

// yieldSwitch has two threads on one CPU call sched_yield in turn and
// counts the changes of the thread running.
func yieldSwitch(cpu int, budget time.Duration) Figure {
	f := Figure{What: "context switch (sched_yield ping-pong)", A: cpu, B: cpu}
	var owner, switches atomic.Int64
	var stop atomic.Bool
	loop := func(me int64) {
		for !stop.Load() {
			if owner.Swap(me) != me {
				switches.Add(1)
			}
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
	}
	other := goPinned(cpu, func() error { loop(2); return nil })
	main := goPinned(cpu, func() error {
		defer stop.Store(true)
		var per []float64
		ops := 0
		deadline := now() + int64(budget)
		// Let the other thread start.
		for switches.Load() < 2 && now() < deadline {
			if owner.Swap(1) != 1 {
				switches.Add(1)
			}
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		for now() < deadline && len(per) < 4000 {
			t0, s0 := now(), switches.Load()
			for range 50 {
				if owner.Swap(1) != 1 {
					switches.Add(1)
				}
				unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			}
			if ds := switches.Load() - s0; ds > 0 {
				per = append(per, float64(now()-t0)/float64(ds))
				ops += int(ds)
			}
		}
		f = summarize(f, per, ops)
		if f.OK() && ops < 100 {
			f.Err, f.NS = "sched_yield did not switch between the two threads", 0
		}
		return nil
	})
	if err := waitAll(main, other); err != nil {
		f.Err = err.Error()
	}
	return f
}

// pipeRT is perf bench sched pipe on threads: A writes pipe 1 and reads
// pipe 2, B the other way round; a round trip is two writes, two reads
// and two wakeups.
func pipeRT(p Pair, budget time.Duration) Figure {
	f := Figure{What: "pipe round trip", Dist: p.Dist, A: p.A, B: p.B}
	var p1, p2 [2]int
	if err := unix.Pipe2(p1[:], unix.O_CLOEXEC); err != nil {
		f.Err = err.Error()
		return f
	}
	if err := unix.Pipe2(p2[:], unix.O_CLOEXEC); err != nil {
		unix.Close(p1[0])
		unix.Close(p1[1])
		f.Err = err.Error()
		return f
	}
	defer unix.Close(p1[0])
	defer unix.Close(p2[0])
	// The echo thread owns pipe 2's write end: when it ends (or cannot
	// be pinned), the main thread's read sees end of file.
	echo := goPinnedOr(p.B, func() error {
		defer unix.Close(p2[1])
		buf := make([]byte, 4)
		for {
			n, err := unix.Read(p1[0], buf)
			if n <= 0 || err != nil {
				return nil // pipe 1 closed: done
			}
			if _, err := unix.Write(p2[1], buf); err != nil {
				return fmt.Errorf("pipe write: %v", err)
			}
		}
	}, func() { unix.Close(p2[1]) })
	main := goPinnedOr(p.A, func() error {
		defer unix.Close(p1[1])
		buf := make([]byte, 4)
		var ioErr error
		const n = 20
		f = batchLoop(f, budget, n, func() (int64, bool) {
			t := now()
			for range n {
				if _, err := unix.Write(p1[1], buf); err != nil {
					ioErr = err
					return 0, false
				}
				if k, err := unix.Read(p2[0], buf); err != nil || k == 0 {
					ioErr = err
					if k == 0 && err == nil {
						ioErr = errors.New("the echo thread ended")
					}
					return 0, false
				}
			}
			return now() - t, true
		})
		if ioErr != nil {
			return fmt.Errorf("pipe: %v", ioErr)
		}
		return nil
	}, func() { unix.Close(p1[1]) })
	if err := waitAll(main, echo); err != nil {
		f.Err = err.Error()
	}
	return f
}

// line is one cache line holding the ping-pong counter.
type line struct {
	_ [64]byte
	v atomic.Int64
	_ [64]byte
}

// linePingPong passes a counter between two CPUs through one cache line:
// each side waits for the other's value and writes the next, so every
// hand-over moves the line once each way. One way = round trip / 2.
func linePingPong(p Pair, budget time.Duration) Figure {
	f := Figure{What: "cache-line transfer (one way)", Dist: p.Dist, A: p.A, B: p.B}
	ln := new(line)
	var stop atomic.Bool
	// spin waits until the counter is want; false when stopped.
	spin := func(want int64) bool {
		for k := 0; ln.v.Load() != want; k++ {
			if k&0xfff == 0 && stop.Load() {
				return false
			}
		}
		return true
	}
	peer := goPinned(p.B, func() error {
		for i := int64(0); ; i++ {
			if !spin(2*i + 1) {
				return nil
			}
			ln.v.Store(2*i + 2)
		}
	})
	main := goPinned(p.A, func() error {
		defer stop.Store(true)
		const n = 200
		var i int64
		f = batchLoop(f, budget, 2*n, func() (int64, bool) {
			t := now()
			for range n {
				ln.v.Store(2*i + 1)
				if !spin(2*i + 2) {
					return 0, false
				}
				i++
			}
			return now() - t, true
		})
		return nil
	})
	// The budget bounds main's batches; a peer that never ran makes main
	// wait forever in spin, so stop it from here too.
	timer := time.AfterFunc(budget+2*time.Second, func() { stop.Store(true) })
	defer timer.Stop()
	if err := waitAll(main, peer); err != nil {
		f.Err = err.Error()
	}
	return f
}

const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

func futexWait(addr *atomic.Int32, val int32, timeout time.Duration) {
	ts := unix.NsecToTimespec(int64(timeout))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitPrivate, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

func futexWakeOne(addr *atomic.Int32) int {
	n, _, _ := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakePrivate, 1, 0, 0, 0)
	return int(n)
}

// futexWake has the thread on p.A wake the one on p.B, asleep in
// FUTEX_WAIT, again and again, ≈50 µs after it went to sleep. It returns
// the waker's FUTEX_WAKE call time and the time from just before that
// call to the wakee running. With busy, a SCHED_IDLE spinner keeps p.B's
// CPU running, so the wakeup is an IPI to a busy CPU and a preemption,
// without an idle exit.
func futexWake(p Pair, budget time.Duration, busy bool) (waker, wake Figure) {
	waker = Figure{What: "futex wake call (waker side)", Dist: p.Dist, A: p.A, B: p.B}
	wake = Figure{What: "futex wake to running", Dist: p.Dist, A: p.A, B: p.B}
	if busy {
		wake.What = "futex wake to running (CPU busy)"
	}
	const maxSamples = 4000
	var word, ready atomic.Int32
	var stop, spinStop atomic.Bool
	t0 := make([]int64, maxSamples)
	lat := make([]int64, maxSamples)
	call := make([]int64, maxSamples)
	woke := make([]bool, maxSamples)
	var chs []<-chan error
	var spinnerUp sync.WaitGroup
	if busy {
		spinnerUp.Add(1)
		chs = append(chs, goPinnedOr(p.B, func() error {
			err := lowerPriority()
			spinnerUp.Done()
			if err != nil {
				return fmt.Errorf("the spinner could not lower its priority: %v", err)
			}
			for !spinStop.Load() {
			}
			return nil
		}, spinnerUp.Done))
		spinnerUp.Wait()
	}
	n := 0
	wakee := goPinned(p.B, func() error {
		for i := 0; i < maxSamples; i++ {
			ready.Store(int32(i + 1))
			for word.Load() == 0 {
				if stop.Load() {
					return nil
				}
				futexWait(&word, 0, 100*time.Millisecond)
			}
			if stop.Load() {
				return nil
			}
			lat[i] = now() - t0[i]
			word.Store(0)
		}
		return nil
	})
	wakerCh := goPinnedOr(p.A, func() error {
		defer func() {
			stop.Store(true)
			word.Store(1)
			futexWakeOne(&word)
		}()
		deadline := now() + int64(budget)
		for i := 0; i < maxSamples && now() < deadline; i++ {
			for ready.Load() != int32(i+1) {
				if now() > deadline+int64(time.Second) {
					return errors.New("the wakee stopped answering")
				}
			}
			// Let the wakee get into FUTEX_WAIT and its CPU idle.
			for t := now() + 50000; now() < t; {
			}
			t0[i] = now()
			word.Store(1)
			k := futexWakeOne(&word)
			call[i] = now() - t0[i]
			woke[i] = k == 1
			n = i + 1
		}
		// Wait for the last wakeup to be consumed.
		for word.Load() != 0 && now() < deadline+int64(time.Second) {
		}
		return nil
	}, func() { stop.Store(true) })
	err := waitAll(wakerCh, wakee)
	spinStop.Store(true)
	if e := waitAll(chs...); e != nil {
		err = errors.Join(err, e)
	}
	if err != nil {
		waker.Err, wake.Err = err.Error(), err.Error()
		return
	}
	var calls, lats []float64
	for i := 0; i < n; i++ {
		if woke[i] && lat[i] > 0 {
			calls = append(calls, float64(call[i]))
			lats = append(lats, float64(lat[i]))
		}
	}
	if len(lats) < 10 {
		waker.Err = fmt.Sprintf("only %d of %d wakeups found the wakee asleep", len(lats), n)
		wake.Err = waker.Err
		return
	}
	return summarize(waker, calls, len(calls)), summarize(wake, lats, len(lats))
}

// lowerPriority makes the calling thread SCHED_IDLE (nice 19 when that is
// refused), so it never preempts a normal thread on wakeup.
func lowerPriority() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return unix.Setpriority(unix.PRIO_PROCESS, 0, 19)
	}
	return nil
}

// futexWakeSameCPU times FUTEX_WAKE of a thread asleep on the waker's
// own CPU: the syscall, try_to_wake_up and the enqueue, without an IPI.
// When the wakee does not preempt the waker, the waker's call is that
// (call); when it does, the wakee runs before the call returns, and its
// wake-to-running time is that plus one context switch (preempted). The
// waker naps (nanosleep) between samples to let the wakee go back to
// sleep.
func futexWakeSameCPU(cpu int, budget time.Duration) (call, preempted Figure) {
	call = Figure{What: "futex wake call, wakee on the same CPU not preempting", Dist: DistSameCPU, A: cpu, B: cpu}
	preempted = Figure{What: "futex wake to running, wakee on the same CPU preempting", Dist: DistSameCPU, A: cpu, B: cpu}
	const maxSamples = 4000
	var word, ready, ran atomic.Int32
	var woken atomic.Int64
	var stop atomic.Bool
	calls := make([]float64, 0, maxSamples)
	lats := make([]float64, 0, maxSamples)
	wakee := goPinnedOr(cpu, func() error {
		for i := 0; ; i++ {
			ready.Store(int32(i + 1))
			for word.Load() == 0 {
				if stop.Load() {
					return nil
				}
				futexWait(&word, 0, 100*time.Millisecond)
			}
			if stop.Load() {
				return nil
			}
			woken.Store(now())
			ran.Add(1)
			word.Store(0)
		}
	}, func() { stop.Store(true) })
	waker := goPinnedOr(cpu, func() error {
		defer func() {
			stop.Store(true)
			word.Store(1)
			futexWakeOne(&word)
		}()
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		nap := unix.NsecToTimespec(20000)
		deadline := now() + int64(budget)
		for i := 0; len(calls)+len(lats) < maxSamples && now() < deadline && !stop.Load(); i++ {
			for ready.Load() != int32(i+1) && now() < deadline+int64(time.Second) {
				unix.Nanosleep(&nap, nil)
			}
			unix.Nanosleep(&nap, nil) // the wakee gets into FUTEX_WAIT
			r0 := ran.Load()
			t0 := now()
			word.Store(1)
			k := futexWakeOne(&word)
			t1 := now()
			switch {
			case k != 1:
			case ran.Load() == r0:
				calls = append(calls, float64(t1-t0))
			default:
				lats = append(lats, float64(woken.Load()-t0))
			}
		}
		return nil
	}, func() { stop.Store(true) })
	if err := waitAll(waker, wakee); err != nil {
		call.Err, preempted.Err = err.Error(), err.Error()
		return
	}
	if len(calls) < 10 {
		call.Err = fmt.Sprintf("the wakee preempted the waker in %d of %d wakeups", len(lats), len(calls)+len(lats))
		calls = nil
	}
	if len(lats) < 10 {
		preempted.Err = fmt.Sprintf("the wakee preempted the waker in only %d of %d wakeups", len(lats), len(calls)+len(lats))
		lats = nil
	}
	return summarize(call, calls, len(calls)), summarize(preempted, lats, len(lats))
}
