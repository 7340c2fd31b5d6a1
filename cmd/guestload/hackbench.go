//go:build linux

package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"schedplay/engine/workload"
)

// hackbench as rt-tests' hackbench and perf bench sched messaging run it
// (engine/workload's hackbench): g groups of f receivers and f senders.
// Each receiver reads from its own socketpair (or pipe, p=1); each
// sender writes l messages of s bytes to every receiver of its group.
// The tasks first wait together on a pipe the runner then closes (the
// tools' poll on their wakeup fd), so the work starts at once. Threads
// only (T=1): a Go program cannot fork without exec, and exec balancing
// would move the children where hackbench's forked ones stay.
type hackbench struct {
	g, f, l, size int
	pipes         bool
	com           common
	wg            sync.WaitGroup
	ops           atomic.Int64
	done          atomic.Bool
	fds           closer
}

func newHackbench(r workload.Resolved, c common) (load, int, error) {
	atoi := func(k string) int { n, _ := strconv.Atoi(r.Values[k]); return n }
	if atoi("T") != 1 {
		return nil, 0, fmt.Errorf("T=%s: the guest load runs hackbench with threads only (T=1): a Go program cannot fork without exec, and exec balancing would place the children differently", r.Values["T"])
	}
	h := &hackbench{g: atoi("g"), f: atoi("f"), l: atoi("l"), size: atoi("s"), pipes: atoi("p") == 1, com: c}
	return h, 2 * h.g * h.f, nil
}

// channel returns a (read, write) pair of blocking fds.
func (h *hackbench) channel() (int, int, error) {
	if h.pipes {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return 0, 0, err
		}
		return p[0], p[1], nil
	}
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	return p[0], p[1], nil
}

func (h *hackbench) start(stop <-chan struct{}) error {
	var gate [2]int
	if err := unix.Pipe2(gate[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	waitGate := func() {
		var b [1]byte
		unix.Read(gate[0], b[:])
	}
	for g := 0; g < h.g; g++ {
		var outs []int
		for i := 0; i < h.f; i++ {
			rd, wr, err := h.channel()
			if err != nil {
				return err
			}
			h.fds.add(rd, wr)
			outs = append(outs, wr)
			thread(&h.wg, fmt.Sprintf("hackbench-r%d.%d", g, i), h.com, -1, func() {
				waitGate()
				h.receive(rd)
			})
		}
		for i := 0; i < h.f; i++ {
			thread(&h.wg, fmt.Sprintf("hackbench-s%d.%d", g, i), h.com, -1, func() {
				waitGate()
				h.send(outs)
			})
		}
	}
	unix.Close(gate[1]) // every task wakes from its read (EOF) and starts
	go func() {
		<-stop
		if !h.done.Load() {
			h.fds.closeAll() // a blocked read or write returns
		}
	}()
	return nil
}

func (h *hackbench) send(outs []int) {
	msg := make([]byte, h.size)
	for i := 0; i < h.l; i++ {
		for _, fd := range outs {
			if !writeAll(fd, msg) {
				return
			}
		}
	}
}

func (h *hackbench) receive(fd int) {
	buf := make([]byte, h.size)
	want := h.f * h.l
	for n := 0; n < want; n++ {
		if !readAll(fd, buf) {
			return
		}
		h.ops.Add(1)
	}
}

func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func readAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func (h *hackbench) wait() {
	h.wg.Wait()
	h.done.Store(true)
}

func (h *hackbench) report() stats {
	return stats{Kind: "hackbench", Threads: 2 * h.g * h.f, Ops: h.ops.Load(), Finished: h.ops.Load() == int64(h.g*h.f*h.f*h.l)}
}
