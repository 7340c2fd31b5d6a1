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

// pipe as perf bench sched pipe runs it (engine/workload's pipe): two
// tasks pass a 4-byte token through two pipes, l round trips. Threads only
// (T=1), for the reason hackbench gives.
type pipeLoad struct {
	loops int
	com   common
	wg    sync.WaitGroup
	ops   atomic.Int64
	fds   closer
	done  atomic.Bool
}

func newPipe(r workload.Resolved, c common) (load, int, error) {
	if r.Values["T"] != "1" {
		return nil, 0, fmt.Errorf("T=%s: the guest load runs pipe with threads only (T=1): a Go program cannot fork without exec", r.Values["T"])
	}
	l, _ := strconv.Atoi(r.Values["l"])
	return &pipeLoad{loops: l, com: c}, 2, nil
}

func (p *pipeLoad) start(stop <-chan struct{}) error {
	var ab, ba [2]int
	if err := unix.Pipe2(ab[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	if err := unix.Pipe2(ba[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	p.fds.add(ab[0], ab[1], ba[0], ba[1])
	token := func(out, in int, first bool) {
		var b [4]byte
		for i := 0; i < p.loops; i++ {
			if first && !writeAll(out, b[:]) || !readAll(in, b[:]) || !first && !writeAll(out, b[:]) {
				return
			}
			if first {
				p.ops.Add(1)
			}
		}
	}
	thread(&p.wg, "pipe-a", p.com, -1, func() { token(ab[1], ba[0], true) })
	thread(&p.wg, "pipe-b", p.com, -1, func() { token(ba[1], ab[0], false) })
	go func() {
		<-stop
		if !p.done.Load() {
			p.fds.closeAll()
		}
	}()
	return nil
}

func (p *pipeLoad) wait() {
	p.wg.Wait()
	p.done.Store(true)
}

func (p *pipeLoad) report() stats {
	return stats{Kind: "pipe", Threads: 2, Ops: p.ops.Load(), Finished: p.ops.Load() == int64(p.loops)}
}
