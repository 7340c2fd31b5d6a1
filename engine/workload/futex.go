package workload

import "schedplay/engine"

// Futex syscalls. A FUTEX_WAKE is a syscall of its own — entry, the hash
// bucket walk that finds the waiter, the wakeup, the exit — so a thread
// that wakes many others one by one (schbench's message thread) pays it
// each time; a FUTEX_WAIT re-checks the futex word under the bucket lock
// before it sleeps, so a post that lands while the waiter enters the
// syscall is never lost (it returns EAGAIN instead). The try_to_wake_up
// itself is the engine's wakeup (wake_ns, the search, the enqueue, the IPI).
const (
	// futexWakeNS: futex_wake of a private futex: get_futex_key, the
	// hash-bucket spinlock, the plist walk, mark_wake_futex onto the
	// wake_q ≈ 0.15 µs (assumed; the whole FUTEX_WAKE syscall measures
	// 0.42-0.76 µs on a 4 GHz Zen2, presets/CALIBRATION.md §C).
	futexWakeNS = 150
	// futexWaitNS: futex_wait_setup and queue_me: key, bucket lock, the
	// value check, the plist insert ≈ 0.15 µs (assumed).
	futexWaitNS = 150
)

// syscallSeq holds the remaining steps of a multi-step syscall so a
// program can return them one per Next call.
type syscallSeq struct {
	a    [2]engine.Action
	n, i int
}

// next returns the next queued step.
func (q *syscallSeq) next() (engine.Action, bool) {
	if q.i < q.n {
		a := q.a[q.i]
		q.i++
		return a, true
	}
	q.n, q.i = 0, 0
	return engine.Action{}, false
}

// futexWake starts a FUTEX_WAKE syscall whose wakeup is w: it returns the
// entry step and queues the wakeup and the exit.
func (q *syscallSeq) futexWake(w engine.Action) engine.Action {
	w.Chain = true
	q.a[0], q.a[1] = w, engine.KernelRun(syscallExitNS)
	q.n, q.i = 2, 0
	return kernelStep(syscallEntryNS+futexWakeNS, true)
}

// futexWaitEntry is the part of FUTEX_WAIT before the value check.
func futexWaitEntry() engine.Action { return kernelStep(syscallEntryNS+futexWaitNS, true) }

// futexWaitExit is the return from FUTEX_WAIT (woken, or EAGAIN).
func futexWaitExit() engine.Action { return engine.KernelRun(syscallExitNS) }
