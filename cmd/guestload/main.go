//go:build linux

// Command guestload runs, on a real Linux kernel, the workloads the
// simulator models, read from the same specs with the same keys and
// defaults (engine/workload.Resolve): schedsim kernel boots it in a QEMU
// guest and traces the kernel's scheduling decisions while it runs.
//
//	guestload -duration 1s -workload schbench:m=2,t=4 [-workload ...]
//
// Every task is an OS thread (runtime.LockOSThread) that blocks in the
// kernel — on a futex, a pipe or a socket — where the real tool's threads
// block, named after its role (prctl PR_SET_NAME, the comm the trace
// shows: "schbench-m0", "schbench-w0.3", "hackbench-s0.1", ...). The Go
// runtime must not get between a wakeup and the thread it wakes: the
// number of Ps is set above the thread count (a woken thread leaving a
// system call needs one, and would otherwise park on the runtime's own
// futex), and the garbage collector is off during the run. What remains
// of the runtime (sysmon's occasional wakeups, the threads it starts) has
// its own comms, which the oracle's measures leave out.
//
// At the end it prints one line per workload to stdout:
// "guestload: {json}" with its ops and its own wakeup-latency summary
// (guest time), then exits 0; a bad spec exits 2 naming it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"schedplay/engine/workload"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, " ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// A load is one running workload: its threads started, it stops when
// stop is closed or (finite kinds) when its work is done.
type load interface {
	start(stop <-chan struct{}) error
	wait()         // until every thread has ended
	report() stats // after wait
}

// stats is what a workload reports.
type stats struct {
	Workload string  `json:"workload"`
	Kind     string  `json:"kind"`
	Threads  int     `json:"threads"`
	Ops      int64   `json:"ops"`
	Finished bool    `json:"finished"`
	WallS    float64 `json:"wall_s"`
	Latency  *hist   `json:"wakeup_latency_us,omitempty"`
}

func main() {
	var specs multi
	dur := flag.Duration("duration", time.Second, "how long the workloads run (finite ones may end first)")
	ncpu := flag.Int("ncpu", runtime.NumCPU(), "CPUs a cpus= list may name")
	flag.Var(&specs, "workload", "workload `SPEC`, as schedsim run takes it (repeatable)")
	flag.Parse()
	if len(specs) == 0 {
		fmt.Fprintln(os.Stderr, "guestload: no -workload given")
		os.Exit(2)
	}
	var loads []load
	var names []string
	threads := 0
	for _, sp := range specs {
		l, n, err := newLoad(sp, *ncpu)
		if err != nil {
			fmt.Fprintf(os.Stderr, "guestload: -workload %q: %v\n", sp, err)
			os.Exit(2)
		}
		loads, names = append(loads, l), append(names, sp)
		threads += n
	}
	// A P for every thread and then some (see the package comment).
	runtime.GOMAXPROCS(threads + runtime.NumCPU() + 4)
	debug.SetGCPercent(-1)
	stop := make(chan struct{})
	start := time.Now()
	for i, l := range loads {
		if err := l.start(stop); err != nil {
			fmt.Fprintf(os.Stderr, "guestload: -workload %q: %v\n", names[i], err)
			os.Exit(1)
		}
	}
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, l := range loads {
			wg.Add(1)
			go func(l load) { defer wg.Done(); l.wait() }(l)
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-time.After(*dur):
	case <-done:
	}
	close(stop)
	<-done
	wall := time.Since(start).Seconds()
	for i, l := range loads {
		st := l.report()
		st.Workload, st.WallS = names[i], wall
		b, _ := json.Marshal(st)
		fmt.Printf("guestload: %s\n", b)
	}
}

// newLoad reads one spec (the simulator's parser: the same keys and
// defaults) and returns its load and its thread count.
func newLoad(spec string, ncpu int) (load, int, error) {
	r, err := workload.Resolve(spec, ncpu)
	if err != nil {
		return nil, 0, err
	}
	c, err := commonOf(r.Values, ncpu)
	if err != nil {
		return nil, 0, err
	}
	switch r.Kind {
	case "schbench":
		return newSchbench(r, c)
	case "hackbench":
		return newHackbench(r, c)
	case "pipe":
		return newPipe(r, c)
	case "hog":
		return newHog(r, c)
	}
	return nil, 0, fmt.Errorf("kind %s has no guest load (the guest runs schbench, hackbench, pipe, hog)", r.Kind)
}
