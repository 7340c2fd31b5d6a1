package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"schedplay/engine/machine"
	"schedplay/traceimport"
)

// The measures of the comparison are measures of decisions: where a
// woken task lands, how often on a busy CPU, how far tasks move, how
// long a CPU idles while a task waits elsewhere. Both sides get them from
// a scheduler trace in the kernel's ftrace text, read by the same code
// (traceimport.ReadSched): the guest kernel's own trace file, and the
// simulation's ftrace export.

// Distance classes between two CPUs, nearest first: the engine's own
// (machine.Topology.Distance), as indices.
const (
	SameCPU    = int(machine.SameCPU)
	SMTSibling = int(machine.SameCore)
	SameLLC    = int(machine.SameLLC)
	OtherLLC   = int(machine.SameSocket) // same node
	OtherNode  = int(machine.CrossSocket)
	nDist      = OtherNode + 1
)

// DistNames name the classes.
var DistNames = [nDist]string{"same CPU", "SMT sibling", "same LLC", "other LLC", "other node"}

// distance classifies a and b on tp.
func distance(tp *machine.Topology, a, b int) int { return int(tp.Distance(a, b)) }

// Measures are one side's figures.
type Measures struct {
	Wakeups int `json:"wakeups"`
	// VsPrev and VsWaker are the shares of wakeups by where the wakee
	// lands relative to its previous CPU and to the waker's CPU.
	VsPrev  [nDist]float64 `json:"lands_vs_prev"`
	VsWaker [nDist]float64 `json:"lands_vs_waker"`
	// PlacedBusy is the share of wakeups placed on a CPU that was running
	// a task, or had one waiting, at the decision.
	PlacedBusy float64 `json:"placed_busy"`
	// MigrationsPerWakeup counts, per wakeup, a task's runs that start on
	// another CPU than its last one ended on, by distance (SameCPU: none).
	MigrationsPerWakeup [nDist]float64 `json:"migrations_per_wakeup"`
	// FirstRunLLCSpread is how widely the tasks' first runs spread over
	// the LLCs: distinct LLCs used ÷ min(tasks, LLCs) (1: as widely as
	// they can).
	FirstRunLLCSpread float64 `json:"first_run_llc_spread"`
	// IdleWhileWaiting is the share of CPU time a CPU idled while a
	// runnable task waited behind a running one on another CPU.
	IdleWhileWaiting float64 `json:"idle_while_waiting"`
	// SwitchesPerWakeup is context switches to or from a workload's
	// task, per wakeup of one.
	SwitchesPerWakeup float64 `json:"switches_per_wakeup"`
	// Switches and Migrations are the counts behind the per-wakeup
	// figures (Migrations over every distance).
	Switches   int `json:"switches"`
	Migrations int `json:"migrations"`
	// Ops are the workloads' operations (hackbench messages received,
	// schbench requests, pipe loops: the guest load counts what the
	// simulation's workloads count), and the switches and migrations
	// per operation (0 without operations: hog has none).
	Ops             int64   `json:"ops"`
	SwitchesPerOp   float64 `json:"switches_per_op"`
	MigrationsPerOp float64 `json:"migrations_per_op"`
	// Wakeup latency (wakeup to running), µs: time as the trace's clock
	// has it (the guest's is emulated).
	LatencyP50, LatencyP99 float64 `json:"-"`
	SpanNS                 int64   `json:"span_ns"`
	Tasks                  int     `json:"tasks"`
	// RT is the RT class's part (nil: no task of the workloads was RT).
	RT *RTMeasures `json:"rt,omitempty"`
}

// RTMeasures are where the workloads' RT tasks (SCHED_FIFO, SCHED_RR,
// and SCHED_DEADLINE, which the measures count with them) land and move.
// A task is RT when any line of the trace gives it a prio below 100 (the
// kernel's p->prio: 99 - rt_priority; -1 for a deadline task): the guest's
// tasks are forked SCHED_OTHER and set their policy at their first run,
// so their first lines still say 120, and a hog that never leaves its
// CPU shows its RT prio only when it exits.
type RTMeasures struct {
	Tasks   int `json:"tasks"`
	Wakeups int `json:"wakeups"`
	// LandsPrev, PlacedBusy and PlacedOnRT are shares of the RT
	// wakeups: on the wakee's previous CPU; on a CPU running a task or
	// with one waiting; on a CPU running an RT task of the workloads
	// (what select_task_rq_rt's find_lowest_rq avoids).
	LandsPrev  float64 `json:"lands_on_prev"`
	PlacedBusy float64 `json:"placed_busy"`
	PlacedOnRT float64 `json:"placed_on_rt"`
	// Migrations counts RT runs that start on another CPU than the
	// task's last run ended on; QueuedMoves the RT runs that start on
	// another CPU than the one the task was woken onto or preempted on:
	// moved while it waited (a push or a pull, push_rt_task and
	// pull_rt_task, or a fair-class balance before it turned RT).
	Migrations  int `json:"migrations"`
	QueuedMoves int `json:"queued_moves"`
	// CPUShare is the RT tasks' run time ÷ the CPU time of the span (RT
	// throttling caps each CPU at sched_rt_runtime_us/sched_rt_period_us,
	// 95%).
	CPUShare float64 `json:"cpu_share"`
	// FairWakeups are the workloads' fair wakeups; FairOnRT the share of
	// them placed on a CPU running an RT task of the workloads.
	FairWakeups int     `json:"fair_wakeups"`
	FairOnRT    float64 `json:"fair_placed_on_rt"`
}

// rtTasks reads a trace for the workloads' tasks that any line shows
// with an RT prio (below 100, -1 for a deadline task; 0, which the
// reader gives a line without a prio, is not taken).
func rtTasks(trace []byte, keep taskFilter) (map[int]bool, error) {
	rt := map[int]bool{}
	see := func(t traceimport.SchedTask) {
		if t.PID != 0 && t.Prio != 0 && t.Prio < 100 && keep(t.Comm) {
			rt[t.PID] = true
		}
	}
	err := traceimport.ReadSched(bytes.NewReader(trace), func(e *traceimport.SchedEvent) error {
		if e.Name == "sched_switch" {
			see(e.Prev)
			see(e.Next)
		} else {
			see(e.Task)
		}
		return nil
	})
	return rt, err
}

// taskFilter says which tasks are the workload's (by comm): the
// measures count their wakeups and runs, and leave out the kernel's
// threads and the guest load's Go runtime threads.
type taskFilter func(comm string) bool

// kindFilter keeps the tasks whose comm starts with a workload kind's
// name (the guest load names its threads "schbench-w0.1", the
// simulation's export "schbench-worker…").
func kindFilter(kinds []string) taskFilter {
	return func(comm string) bool {
		for _, k := range kinds {
			if strings.HasPrefix(comm, k) {
				return true
			}
		}
		return false
	}
}

// taskState is what the measures follow of one task.
type taskState struct {
	pending     bool  // a sched_waking awaits its sched_wakeup
	waker, prev int   // the sched_waking's CPU and target_cpu
	woken       bool  // a wakeup awaits its switch-in (latency)
	wokenAt     int64 // the sched_wakeup's time
	lastCPU     int   // where its last run ended (-1: never ran)
	firstRunLLC int   // -1 until it runs
	queuedOn    int   // the CPU it waits on, -1 when not waiting
}

// measure reads a trace and computes the measures on tp.
func measure(r io.Reader, tp *machine.Topology, keep taskFilter) (*Measures, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	isRT, err := rtTasks(raw, keep)
	if err != nil {
		return nil, err
	}
	rm := &RTMeasures{Tasks: len(isRT)}
	var rtTime float64
	m := &Measures{}
	n := tp.NCPU
	curr := make([]int, n)    // pid running on each CPU (0: idle)
	waiting := make([]int, n) // tasks waiting on each CPU's runqueue
	tasks := map[int]*taskState{}
	state := func(pid int) *taskState {
		t := tasks[pid]
		if t == nil {
			t = &taskState{lastCPU: -1, firstRunLLC: -1, queuedOn: -1}
			tasks[pid] = t
		}
		return t
	}
	mine := map[int]bool{}
	var lat []float64
	var first, last int64 = -1, 0
	var idleWait, cpuTime float64
	var switches int
	advance := func(ts int64) {
		if first < 0 {
			first, last = ts, ts
			return
		}
		dt := float64(ts - last)
		if dt <= 0 {
			return
		}
		// A task waits behind a running one (a woken task on its way
		// to an idle CPU is the wakeup's latency, not a wait).
		anyWaiting := false
		for c, w := range waiting {
			if w > 0 && curr[c] != 0 {
				anyWaiting = true
				break
			}
		}
		for c := 0; c < n; c++ {
			if isRT[curr[c]] {
				rtTime += dt
			}
		}
		if anyWaiting {
			for c := 0; c < n; c++ {
				if curr[c] == 0 && waiting[c] == 0 {
					idleWait += dt
				}
			}
		}
		cpuTime += dt * float64(n)
		last = ts
	}
	unqueue := func(t *taskState) {
		if t.queuedOn >= 0 {
			waiting[t.queuedOn]--
			t.queuedOn = -1
		}
	}
	err = traceimport.ReadSched(bytes.NewReader(raw), func(e *traceimport.SchedEvent) error {
		if e.CPU < 0 || e.CPU >= n {
			return fmt.Errorf("trace line %d: CPU %d on a machine of %d CPUs", e.Line, e.CPU, n)
		}
		if e.TS < last {
			return fmt.Errorf("trace line %d: time goes back (%d ns after %d ns)", e.Line, e.TS, last)
		}
		advance(e.TS)
		switch e.Name {
		case "sched_waking":
			if !keep(e.Task.Comm) {
				return nil
			}
			t := state(e.Task.PID)
			mine[e.Task.PID] = true
			t.pending, t.waker = true, e.CPU
			t.prev = e.TargetCPU
			if t.prev < 0 {
				t.prev = t.lastCPU
			}
		case "sched_wakeup":
			if !keep(e.Task.Comm) {
				return nil
			}
			t := state(e.Task.PID)
			if !t.pending || e.TargetCPU < 0 || e.TargetCPU >= n {
				return nil // a wakeup without its waking (the trace's first lines)
			}
			t.pending = false
			c := e.TargetCPU
			m.Wakeups++
			if t.prev >= 0 && t.prev < n {
				m.VsPrev[distance(tp, t.prev, c)]++
			}
			m.VsWaker[distance(tp, t.waker, c)]++
			busy := curr[c] != 0 || waiting[c] > 0
			if busy {
				m.PlacedBusy++
			}
			if isRT[e.Task.PID] {
				rm.Wakeups++
				if c == t.prev {
					rm.LandsPrev++
				}
				if busy {
					rm.PlacedBusy++
				}
				if isRT[curr[c]] {
					rm.PlacedOnRT++
				}
			} else {
				rm.FairWakeups++
				if isRT[curr[c]] {
					rm.FairOnRT++
				}
			}
			unqueue(t)
			t.queuedOn = c
			waiting[c]++
			t.woken, t.wokenAt = true, e.TS
		case "sched_switch":
			if keep(e.Prev.Comm) || keep(e.Next.Comm) {
				switches++
			}
			prev, next := e.Prev.PID, e.Next.PID
			if prev != 0 {
				p := state(prev)
				p.lastCPU = e.CPU
				if strings.HasPrefix(e.PrevState, "R") { // preempted: waits here
					unqueue(p)
					p.queuedOn = e.CPU
					waiting[e.CPU]++
				}
			}
			curr[e.CPU] = next
			if next != 0 {
				t := state(next)
				if isRT[next] && t.queuedOn >= 0 && t.queuedOn != e.CPU {
					rm.QueuedMoves++
				}
				unqueue(t)
				// The first run counts under any name: a guest task
				// names itself (prctl) after its first run, which may
				// be on another CPU than its next.
				if t.firstRunLLC < 0 {
					t.firstRunLLC = tp.LLC[e.CPU]
				}
				if keep(e.Next.Comm) {
					mine[next] = true
					if t.lastCPU >= 0 && t.lastCPU != e.CPU {
						m.MigrationsPerWakeup[distance(tp, t.lastCPU, e.CPU)]++
						m.Migrations++
						if isRT[next] {
							rm.Migrations++
						}
					}
					if t.woken {
						lat = append(lat, float64(e.TS-t.wokenAt)/1000)
						t.woken = false
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.Wakeups == 0 {
		return nil, fmt.Errorf("the trace has no wakeups of the workload's tasks (%d tasks seen)", len(mine))
	}
	w := float64(m.Wakeups)
	for d := 0; d < nDist; d++ {
		m.VsPrev[d] /= w
		m.VsWaker[d] /= w
		m.MigrationsPerWakeup[d] /= w
	}
	m.PlacedBusy /= w
	m.SwitchesPerWakeup = float64(switches) / w
	m.Switches = switches
	if cpuTime > 0 {
		m.IdleWhileWaiting = idleWait / cpuTime
	}
	llcs := map[int]bool{}
	for pid := range mine {
		if t := tasks[pid]; t.firstRunLLC >= 0 {
			llcs[t.firstRunLLC] = true
		}
	}
	m.Tasks = len(mine)
	if k := min(len(mine), tp.NLLC); k > 0 {
		m.FirstRunLLCSpread = float64(len(llcs)) / float64(k)
	}
	sort.Float64s(lat)
	if len(lat) > 0 {
		m.LatencyP50 = lat[len(lat)/2]
		m.LatencyP99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	m.SpanNS = last - first
	if rm.Tasks > 0 {
		if rm.Wakeups > 0 {
			w := float64(rm.Wakeups)
			rm.LandsPrev /= w
			rm.PlacedBusy /= w
			rm.PlacedOnRT /= w
		}
		if rm.FairWakeups > 0 {
			rm.FairOnRT /= float64(rm.FairWakeups)
		}
		if cpuTime > 0 {
			rm.CPUShare = rtTime / cpuTime
		}
		m.RT = rm
	}
	return m, nil
}

// setOps records the workloads' operations and the per-operation rates.
func (m *Measures) setOps(ops int64) {
	m.Ops = ops
	if ops > 0 {
		m.SwitchesPerOp = float64(m.Switches) / float64(ops)
		m.MigrationsPerOp = float64(m.Migrations) / float64(ops)
	}
}

// guestOps sums the operations the guest load reports, one
// "guestload: {...}" line per workload.
func guestOps(load []string) int64 {
	var n int64
	for _, l := range load {
		js, ok := strings.CutPrefix(l, "guestload: ")
		if !ok {
			continue
		}
		var r struct {
			Ops int64 `json:"ops"`
		}
		if json.Unmarshal([]byte(js), &r) == nil {
			n += r.Ops
		}
	}
	return n
}
