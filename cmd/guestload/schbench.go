//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"schedplay/engine/workload"
)

// schbench, the 2016-2020 generation the simulator models
// (engine/workload/schbench.go): m message threads, each with t workers.
// A worker spins c µs of wall-clock time, pushes itself on its message
// thread's list, posts the message thread's futex and waits on its own. A
// message thread waits for a post, sleeps s µs plus up to s/4 of jitter,
// reads the clock once and wakes every listed worker, one FUTEX_WAKE
// each; a worker's wakeup latency runs from that clock read to it running
// again. Pipe mode (p bytes): no spin and no sleep (unless c or s are
// given); each side copies the buffer and the wake time is stamped per
// worker just before its post. RPS mode (R) is not run here.
type schbench struct {
	m, t     int
	c, s     time.Duration
	pipe     int
	com      common
	msgs     []*sbMsg
	wg       sync.WaitGroup
	lat      hist
	ops      atomic.Int64
	stopOnce sync.Once
}

type sbMsg struct {
	futex
	list    atomic.Pointer[sbWorker] // pushed by workers, taken whole
	workers []*sbWorker
	buf     []byte
}

type sbWorker struct {
	futex
	next     *sbWorker
	wakeTime atomic.Int64
	buf      []byte
	samples  []int64
}

func newSchbench(r workload.Resolved, c common) (load, int, error) {
	atoi := func(k string) int { n, _ := strconv.Atoi(r.Values[k]); return n }
	if atoi("R") != 0 {
		return nil, 0, fmt.Errorf("R=%s: RPS mode has no guest load yet", r.Values["R"])
	}
	b := &schbench{m: atoi("m"), t: atoi("t"), pipe: atoi("p"), com: c}
	b.c, b.s = time.Duration(atoi("c"))*time.Microsecond, time.Duration(atoi("s"))*time.Microsecond
	if b.pipe > 0 {
		// As schbench -p: no think time unless asked for.
		if !r.Given["c"] {
			b.c = 0
		}
		if !r.Given["s"] {
			b.s = 0
		}
	}
	return b, b.m * (b.t + 1), nil
}

func (b *schbench) start(stop <-chan struct{}) error {
	for i := 0; i < b.m; i++ {
		msg := &sbMsg{buf: make([]byte, b.pipe)}
		for j := 0; j < b.t; j++ {
			msg.workers = append(msg.workers, &sbWorker{buf: make([]byte, b.pipe), samples: make([]int64, 0, 1<<16)})
		}
		b.msgs = append(b.msgs, msg)
	}
	for i, msg := range b.msgs {
		thread(&b.wg, fmt.Sprintf("schbench-m%d", i), b.com, -1, func() { b.runMsg(msg, stop) })
		for j, w := range msg.workers {
			thread(&b.wg, fmt.Sprintf("schbench-w%d.%d", i, j), b.com, -1, func() { b.runWorker(msg, w, stop) })
		}
	}
	go func() {
		<-stop
		// Release every thread blocked on its futex.
		for _, msg := range b.msgs {
			msg.post()
			for _, w := range msg.workers {
				w.post()
			}
		}
	}()
	return nil
}

func (b *schbench) runWorker(msg *sbMsg, w *sbWorker, stop <-chan struct{}) {
	for {
		spin(b.c)
		if b.pipe > 0 {
			copy(w.buf, msg.buf)
		}
		// Push on the message thread's list, post it, wait for its wake.
		for {
			head := msg.list.Load()
			w.next = head
			if msg.list.CompareAndSwap(head, w) {
				break
			}
		}
		msg.post()
		if !w.block(stop) {
			break
		}
		if lat := (now() - w.wakeTime.Load()) / 1000; w.wakeTime.Load() > 0 {
			w.samples = append(w.samples, max(lat, 0))
		}
		b.ops.Add(1)
	}
	b.lat.add(w.samples)
}

func (b *schbench) runMsg(msg *sbMsg, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(len(msg.workers)), 1))
	for {
		if !msg.block(stop) {
			return
		}
		if b.s > 0 {
			// nanosleep in the kernel (an hrtimer wakes the thread, as
			// usleep does), not time.Sleep (the Go runtime's timer
			// thread would be its waker).
			sleep(b.s + time.Duration(rng.Int64N(int64(b.s/4)+1)))
		}
		list := msg.list.Swap(nil)
		stamp := now()
		for w := list; w != nil; {
			next := w.next // read before the post: the worker reuses it
			if b.pipe > 0 {
				copy(msg.buf, w.buf)
				stamp = now()
			}
			w.wakeTime.Store(stamp)
			w.post()
			w = next
		}
	}
}

func (b *schbench) wait() { b.wg.Wait() }

func (b *schbench) report() stats {
	return stats{Kind: "schbench", Threads: b.m * (b.t + 1), Ops: b.ops.Load(), Latency: b.lat.summarise()}
}
