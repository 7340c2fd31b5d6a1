//go:build linux

package twin

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The built-in equivalents run on goroutines locked to their own OS
// threads (not pinned: perf does not pin either) and make the syscalls
// perf's benchmarks make — read and write on pipes and AF_UNIX
// socketpairs — through golang.org/x/sys/unix, so the Go runtime's
// netpoller is not involved: a read that finds nothing blocks in the
// kernel, and the wakeup is the kernel's. While they run, GOMAXPROCS is
// raised above the thread count (a thread coming back from a blocking
// syscall then always finds a free P, and Go's scheduler adds no wait)
// and the garbage collector is off.

// goRuntimeFor raises GOMAXPROCS to fit threads and turns the GC off; the
// returned func restores both.
func goRuntimeFor(threads int) func() {
	procs := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), threads+4))
	gc := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(gc)
		runtime.GOMAXPROCS(procs)
	}
}

// onThread runs fn on a goroutine locked to an OS thread.
func onThread(wg *sync.WaitGroup, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fn()
	}()
}

// readFull reads len(b) bytes from fd (perf's "goto again" on a short
// read); io.EOF-like: ok false when the other end is closed first.
func readFull(fd int, b []byte) (bool, error) {
	for done := 0; done < len(b); {
		n, err := unix.Read(fd, b[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		if n == 0 {
			return false, nil
		}
		done += n
	}
	return true, nil
}

func writeFull(fd int, b []byte) error {
	for done := 0; done < len(b); {
		n, err := unix.Write(fd, b[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		done += n
	}
	return nil
}

// BuiltinPipe is perf bench sched pipe -T: two OS threads pass a 4-byte
// token through two pipes, loops round trips; it returns the wall time
// from before the threads start to after both finish (perf's span).
func BuiltinPipe(ctx context.Context, loops int64, timeout time.Duration) (time.Duration, error) {
	if loops <= 0 {
		return 0, errors.New("loops must be positive")
	}
	var p1, p2 [2]int
	if err := unix.Pipe2(p1[:], unix.O_CLOEXEC); err != nil {
		return 0, fmt.Errorf("pipe: %v", err)
	}
	defer unix.Close(p1[0])
	defer unix.Close(p1[1])
	if err := unix.Pipe2(p2[:], unix.O_CLOEXEC); err != nil {
		return 0, fmt.Errorf("pipe: %v", err)
	}
	defer unix.Close(p2[0])
	defer unix.Close(p2[1])
	defer goRuntimeFor(2)()

	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, 2)
	var trips int64
	start := time.Now()
	// Thread 0 reads pipe 1 and writes pipe 2; thread 1 writes pipe 1
	// and reads pipe 2 and counts the round trips (perf's worker_thread).
	onThread(&wg, func() {
		tok := make([]byte, 4)
		for i := int64(0); i < loops; i++ {
			ok, err := readFull(p1[0], tok)
			if err != nil || !ok || stop.Load() {
				errs[0] = err
				return
			}
			if err := writeFull(p2[1], tok); err != nil {
				errs[0] = err
				return
			}
		}
	})
	onThread(&wg, func() {
		tok := make([]byte, 4)
		for i := int64(0); i < loops; i++ {
			if i&63 == 0 && (ctx.Err() != nil || time.Now().After(deadline)) {
				// Release thread 0 from its read; it sees stop and ends.
				stop.Store(true)
				errs[1] = writeFull(p1[1], tok)
				return
			}
			if err := writeFull(p1[1], tok); err != nil {
				errs[1] = err
				return
			}
			ok, err := readFull(p2[0], tok)
			if err != nil || !ok {
				errs[1] = err
				return
			}
			trips++
		}
	})
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return wall, fmt.Errorf("pipe ping-pong: %v", err)
	}
	if stop.Load() {
		return wall, fmt.Errorf("pipe ping-pong: stopped after %v, %d of %d round trips done", wall.Round(time.Millisecond), trips, loops)
	}
	return wall, nil
}

// perf bench sched messaging's fixed shape: 20 senders and 20 receivers
// per group, 100-byte messages.
const (
	msgFDs  = 20
	msgSize = 100
)

// BuiltinMessaging is perf bench sched messaging -t (hackbench, threads,
// socketpairs): groups of 20 receiver threads, each reading its own
// AF_UNIX stream socket, and 20 sender threads, each writing loops rounds
// of one 100-byte message to every receiver of its group. All threads
// start together (they report ready on a pipe, then block reading a wake
// pipe the controller closes); it returns the wall time from the release
// to the last thread's end (perf's span).
func BuiltinMessaging(ctx context.Context, groups, loops int, timeout time.Duration) (time.Duration, error) {
	if groups <= 0 || loops <= 0 {
		return 0, errors.New("groups and loops must be positive")
	}
	wakeW := -1
	var fds []int // closed at the end, except those set to -1 before
	closeAll := func() {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
	defer closeAll()
	// release closes the wake pipe's write end once: every thread
	// blocked reading it returns.
	released := false
	release := func() error {
		if released {
			return nil
		}
		released = true
		for i, fd := range fds {
			if fd == wakeW {
				fds[i] = -1
			}
		}
		return unix.Close(wakeW)
	}
	pipe := func() ([2]int, error) {
		var p [2]int
		err := unix.Pipe2(p[:], unix.O_CLOEXEC)
		if err == nil {
			fds = append(fds, p[0], p[1])
		}
		return p, err
	}
	ready, err := pipe()
	if err != nil {
		return 0, fmt.Errorf("pipe: %v", err)
	}
	wake, err := pipe()
	if err != nil {
		return 0, fmt.Errorf("pipe: %v", err)
	}
	wakeW = wake[1]
	// in[g][r] is receiver r's end; out[g][r] the senders' end.
	in := make([][]int, groups)
	out := make([][]int, groups)
	for g := range groups {
		for range msgFDs {
			sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return 0, fmt.Errorf("socketpair: %v (group %d; lower --groups)", err, g)
			}
			fds = append(fds, sp[0], sp[1])
			in[g] = append(in[g], sp[0])
			out[g] = append(out[g], sp[1])
		}
	}
	threads := groups * 2 * msgFDs
	defer goRuntimeFor(threads)()

	var stop atomic.Bool
	var senders, receivers sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// waitStart reports ready and blocks until the wake pipe is closed.
	waitStart := func() bool {
		if err := writeFull(ready[1], []byte{1}); err != nil {
			fail(err)
			return false
		}
		var b [1]byte
		for {
			n, err := unix.Read(wake[0], b[:])
			if err == unix.EINTR {
				continue
			}
			return err == nil && n == 0 && !stop.Load()
		}
	}
	var short atomic.Int64
	for g := range groups {
		for r := range msgFDs {
			fd := in[g][r]
			onThread(&receivers, func() {
				if !waitStart() {
					return
				}
				buf := make([]byte, msgSize)
				for i := 0; i < loops*msgFDs; i++ {
					ok, err := readFull(fd, buf)
					if err != nil {
						fail(fmt.Errorf("receiver read: %v", err))
						return
					}
					if !ok {
						short.Add(1)
						return
					}
				}
			})
		}
		for range msgFDs {
			dst := out[g]
			onThread(&senders, func() {
				if !waitStart() {
					return
				}
				data := make([]byte, msgSize)
				for i := 0; i < loops; i++ {
					for _, fd := range dst {
						if stop.Load() {
							return
						}
						if err := writeFull(fd, data); err != nil {
							fail(fmt.Errorf("sender write: %v", err))
							return
						}
					}
				}
			})
		}
	}
	// Every thread ready, then the release.
	buf := make([]byte, threads)
	if ok, err := readFull(ready[0], buf); !ok || err != nil {
		stop.Store(true)
		release()
		return 0, fmt.Errorf("messaging: the threads did not start: %v", err)
	}
	timer := time.AfterFunc(timeout, func() { stop.Store(true) })
	defer timer.Stop()
	stopOnCancel := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopOnCancel()
	start := time.Now()
	if err := release(); err != nil {
		stop.Store(true)
		return 0, fmt.Errorf("messaging: closing the wake pipe: %v", err)
	}
	senders.Wait()
	// A receiver still waiting for messages a stopped sender never sent
	// sees the end of its stream once the senders' ends are closed.
	if stop.Load() {
		for g := range out {
			for _, fd := range out[g] {
				unix.Shutdown(fd, unix.SHUT_WR)
			}
		}
	}
	receivers.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return wall, fmt.Errorf("messaging: %v", err)
	}
	if stop.Load() || short.Load() > 0 {
		return wall, fmt.Errorf("messaging: stopped after %v (timeout %v) before every message was delivered", wall.Round(time.Millisecond), timeout)
	}
	return wall, nil
}
