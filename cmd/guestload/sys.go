//go:build linux

package main

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"schedplay/engine/cpumask"
)

// common are the keys every kind takes that a real thread can honour:
// its nice value and its CPU affinity. latency_nice is refused when set
// (mainline Linux has no such attribute); smt_pressure and wss_kb shape
// the simulator's cost model and mean nothing to a real thread.
type common struct {
	nice int
	cpus []int // empty: all
}

func commonOf(v map[string]string, ncpu int) (common, error) {
	var c common
	n, err := strconv.Atoi(v["nice"])
	if err != nil {
		return c, fmt.Errorf("nice %q", v["nice"])
	}
	c.nice = n
	if v["latency_nice"] != "0" {
		return c, fmt.Errorf("latency_nice=%s: the guest's kernel has no latency-nice (a patch set, not mainline)", v["latency_nice"])
	}
	if cl := v["cpus"]; cl != "" {
		m, err := cpumask.Parse(cl, ncpu)
		if err != nil {
			return c, fmt.Errorf("cpus: %v", err)
		}
		for cpu := 0; cpu < ncpu; cpu++ {
			if m.Test(cpu) {
				c.cpus = append(c.cpus, cpu)
			}
		}
	}
	return c, nil
}

// thread runs fn on an OS thread of its own, named name (the comm the
// trace shows, 15 bytes at most), with c's nice value and affinity (or
// the one CPU pin, when pin >= 0). wg counts it.
func thread(wg *sync.WaitGroup, name string, c common, pin int, fn func()) {
	wg.Add(1)
	ready := make(chan error, 1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		ready <- setup(name, c, pin)
		fn()
	}()
	if err := <-ready; err != nil {
		panic(fmt.Sprintf("guestload: thread %s: %v", name, err))
	}
}

func setup(name string, c common, pin int) error {
	if len(name) > 15 {
		name = name[:15]
	}
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(name+"\x00"))), 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_NAME: %v", err)
	}
	if c.nice != 0 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), c.nice); err != nil {
			return fmt.Errorf("setpriority %d: %v", c.nice, err)
		}
	}
	cpus := c.cpus
	if pin >= 0 {
		cpus = []int{pin}
	}
	if len(cpus) > 0 {
		var set unix.CPUSet
		for _, cpu := range cpus {
			set.Set(cpu)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity %v: %v", cpus, err)
		}
	}
	return nil
}

// A futex word: wait blocks in the kernel while it holds val; wake wakes
// one waiter. (The Go runtime's own locks would not do: they may spin or
// hand the thread to the runtime's scheduler.)
type futex struct{ v atomic.Uint32 }

// The futex(2) operations (linux/futex.h; x/sys/unix does not name
// them).
const (
	futexWait        = 0
	futexWake        = 1
	futexPrivateFlag = 128
)

func (f *futex) wait(val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&f.v)), futexWait|futexPrivateFlag, uintptr(val), 0, 0, 0)
}

func (f *futex) wake() {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&f.v)), futexWake|futexPrivateFlag, 1, 0, 0, 0)
}

// post hands the word to its waiter and wakes it (schbench's fpost): a
// post to a word nobody waits on yet is kept for the next block.
func (f *futex) post() {
	if f.v.CompareAndSwap(blocked, running) {
		f.wake()
	}
}

// block takes a post, sleeping in the kernel until there is one
// (schbench's fwait). A word starts blocked (zero value: see below).
// It returns false once stop is closed (the stopper posts every word).
func (f *futex) block(stop <-chan struct{}) bool {
	for !f.v.CompareAndSwap(running, blocked) {
		f.wait(blocked)
	}
	select {
	case <-stop:
		return false
	default:
		return true
	}
}

// The word's states. blocked is the zero value: a new word holds no post.
const (
	blocked uint32 = 0
	running uint32 = 1
)

// now is the monotonic clock in ns (the vDSO's clock_gettime).
func now() int64 { return time.Now().UnixNano() }

// sleep blocks the thread in nanosleep(2) for d: the kernel's hrtimer
// wakes it, as usleep and nanosleep do in the real tools.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// spin burns CPU for d of wall-clock time, reading the clock as schbench
// does.
func spin(d time.Duration) {
	end := now() + int64(d)
	for now() < end {
	}
}

// hist collects latency samples (µs) and summarises them.
type hist struct {
	mu      sync.Mutex
	samples []int64
	Count   int   `json:"count"`
	P50     int64 `json:"p50"`
	P90     int64 `json:"p90"`
	P99     int64 `json:"p99"`
	Max     int64 `json:"max"`
}

func (h *hist) add(us []int64) {
	h.mu.Lock()
	h.samples = append(h.samples, us...)
	h.mu.Unlock()
}

func (h *hist) summarise() *hist {
	s := h.samples
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	h.Count = len(s)
	if len(s) == 0 {
		return h
	}
	at := func(p float64) int64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	h.P50, h.P90, h.P99, h.Max = at(0.50), at(0.90), at(0.99), s[len(s)-1]
	return h
}

// closer closes stop-watching fds: a thread blocked in read(2) on a pipe
// or socket is released by closing the other end.
type closer struct {
	mu  sync.Mutex
	fds []int
}

func (c *closer) add(fds ...int) {
	c.mu.Lock()
	c.fds = append(c.fds, fds...)
	c.mu.Unlock()
}

func (c *closer) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}
