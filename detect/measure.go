package detect

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Distances between two CPUs, named like the line_*_ns knobs.
const (
	DistSameCPU     = "same_cpu"
	DistSMT         = "smt"
	DistLLC         = "llc"
	DistCrossLLC    = "cross_llc"
	DistCrossSocket = "cross_socket"
)

// distances lists the distance classes nearest first.
var distances = []string{DistSameCPU, DistSMT, DistLLC, DistCrossLLC, DistCrossSocket}

// Pair is two real CPUs at one distance (A == B for DistSameCPU).
type Pair struct {
	Dist string
	A, B int
}

// Pairs returns one pair of real CPUs per distance class the modelled
// topology has, among the CPUs allowed (nil: every online CPU): the CPU
// of the LLC the run is allowed on, paired with the nearest one at each
// distance. Distances are the simulator's (an LLC assumed to span the
// package counts as one LLC), so what is measured is what the knob means
// in the model.
func (r *Result) Pairs(allowed map[int]bool) []Pair {
	tp, err := machine.Build(r.Spec)
	if err != nil {
		return nil
	}
	simOf := map[int]int{}
	for sim, real := range r.SimToReal {
		simOf[real] = sim
	}
	dist := func(a, b int) string {
		sa, sb := simOf[a], simOf[b]
		switch {
		case a == b:
			return DistSameCPU
		case tp.Core[sa] == tp.Core[sb]:
			return DistSMT
		case tp.LLC[sa] == tp.LLC[sb]:
			return DistLLC
		case tp.Socket[sa] == tp.Socket[sb]:
			return DistCrossLLC
		}
		return DistCrossSocket
	}
	ok := func(c int) bool { return allowed == nil || allowed[c] }
	found := map[string]Pair{}
	for _, a := range r.Found.CPUs {
		if !ok(a) {
			continue
		}
		if _, have := found[DistSameCPU]; !have {
			found[DistSameCPU] = Pair{DistSameCPU, a, a}
		}
		for _, b := range r.Found.CPUs {
			if b == a || !ok(b) {
				continue
			}
			d := dist(a, b)
			if _, have := found[d]; !have {
				found[d] = Pair{d, a, b}
			}
		}
	}
	var out []Pair
	for _, d := range distances {
		if p, have := found[d]; have {
			out = append(out, p)
		}
	}
	return out
}

// Figure is one measured figure: the median of per-batch figures.
type Figure struct {
	What  string  // "pipe round trip", …
	Dist  string  // a distance class, "" when not a pair figure
	A, B  int     // the CPUs
	NS    float64 // median, ns per operation; 0 when not measured
	P10   float64 // 10th and 90th percentile of the batches
	P90   float64
	Ops   int    // operations timed
	Err   string // why there is no figure
	Batch int    // batches (or samples) the median is over
}

// OK says the figure was measured and is positive and finite.
func (f Figure) OK() bool {
	return f.Err == "" && f.NS > 0 && !math.IsInf(f.NS, 0) && !math.IsNaN(f.NS)
}

func (f Figure) String() string {
	where := fmt.Sprintf("CPU %d", f.A)
	if f.A != f.B {
		where = fmt.Sprintf("CPUs %d↔%d", f.A, f.B)
	}
	if f.Dist != "" {
		where += " (" + f.Dist + ")"
	}
	if !f.OK() {
		return fmt.Sprintf("%s, %s: not measured: %s", f.What, where, f.Err)
	}
	return fmt.Sprintf("%s, %s: %s median (p10 %s, p90 %s) over %d ops", f.What, where, fmtNS(f.NS), fmtNS(f.P10), fmtNS(f.P90), f.Ops)
}

func fmtNS(ns float64) string {
	if ns >= 10000 {
		return fmt.Sprintf("%.1f µs", ns/1000)
	}
	if ns >= 1000 {
		return fmt.Sprintf("%.2f µs", ns/1000)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// Measurements are the cost figures Measure takes.
type Measurements struct {
	Date             time.Time
	Elapsed          time.Duration
	NullSyscall      Figure   // getppid on one CPU
	Yield            Figure   // sched_yield switch between two threads on one CPU
	Pipe             []Figure // pipe round trip per distance
	Line             []Figure // cache-line transfer (one way) per distance
	FutexSame        Figure   // the waker's FUTEX_WAKE call, wakee asleep on the same CPU and not preempting
	FutexSamePreempt Figure   // wake to running, wakee asleep on the same CPU and preempting the waker
	FutexWaker       Figure   // the waker's FUTEX_WAKE call, wakee asleep on another CPU
	FutexIdle        Figure   // wake to running, the wakee's CPU idle
	FutexBusy        Figure   // wake to running, the wakee's CPU running a SCHED_IDLE spinner
	Skipped          []string
	// LoadBefore and LoadAfter are /proc/loadavg's 1-minute figure
	// around the run (-1: unknown), so a reader can tell a quiet run from
	// one that competed with other work.
	LoadBefore, LoadAfter float64
	NCPU                  int
}

// MeasureOptions bound Measure.
type MeasureOptions struct {
	// Budget is the wall time of one figure (default 1.2 s; the whole
	// run takes about 12 × Budget at most).
	Budget time.Duration
	// Progress receives one line per figure (nil: none).
	Progress io.Writer
	// Allowed restricts the CPUs (nil: the process's affinity mask).
	Allowed map[int]bool
}

// Measure runs the microbenchmarks on real OS threads pinned to the CPU
// pairs of r's topology (Linux only; elsewhere it returns an error). Each
// figure stops at its time budget; ctx ends the run between figures.
func Measure(ctx context.Context, r *Result, opt MeasureOptions) (*Measurements, error) {
	if opt.Budget <= 0 {
		opt.Budget = 1200 * time.Millisecond
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	return measure(ctx, r, opt)
}

// pick returns the pair at the first of dists that r has.
func pick(pairs []Pair, dists ...string) (Pair, bool) {
	for _, d := range dists {
		for _, p := range pairs {
			if p.Dist == d {
				return p, true
			}
		}
	}
	return Pair{}, false
}

// summarize turns per-batch figures (ns per op) into a Figure.
func summarize(f Figure, perOp []float64, ops int) Figure {
	var clean []float64
	for _, v := range perOp {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			clean = append(clean, v)
		}
	}
	if len(clean) == 0 {
		if f.Err == "" {
			f.Err = "no complete batch within the time budget"
		}
		return f
	}
	sort.Float64s(clean)
	q := func(p float64) float64 { return clean[int(p*float64(len(clean)-1)+0.5)] }
	f.NS, f.P10, f.P90, f.Ops, f.Batch = q(0.5), q(0.1), q(0.9), ops, len(clean)
	return f
}

// Apply writes the measured figures into spec's costs (and the one idle
// state of a machine without cpuidle), each with a note saying what was
// measured and how the knob follows from it; the figures that map to no
// knob go into the notes. Knobs not measured keep their "assumed" note.
func Apply(spec *machine.Spec, m *Measurements) {
	date := m.Date.UTC().Format("2006-01-02")
	by := "measured by schedsim machine detect on " + date + ": "
	set := func(k string, v float64, note string) {
		id, ok := knob.Lookup(k)
		if !ok {
			return
		}
		d := knob.ByID(id)
		n := int64(math.Round(v))
		if n < d.Min {
			n = d.Min
		}
		if n > d.Max {
			n = d.Max
		}
		spec.Costs[k] = n
		spec.CostNotes[k] = note
	}
	sys := 0.0
	if m.NullSyscall.OK() {
		sys = m.NullSyscall.NS
	}

	// Cache-line transfers: one way, per distance; distances the machine
	// lacks take the nearest measured one (they are never used).
	lineKnob := map[string]string{DistSMT: "line_smt_ns", DistLLC: "line_llc_ns", DistCrossLLC: "line_cross_llc_ns", DistCrossSocket: "line_cross_socket_ns"}
	lineDists := []string{DistSMT, DistLLC, DistCrossLLC, DistCrossSocket}
	measured := map[string]Figure{}
	for _, f := range m.Line {
		if f.OK() {
			measured[f.Dist] = f
		}
	}
	for i, d := range lineDists {
		if f, ok := measured[d]; ok {
			set(lineKnob[d], f.NS, fmt.Sprintf("%satomic load/store ping-pong on one cache line between CPUs %d and %d (%s), one way = round trip / 2, median %s (p10 %s, p90 %s) of %d batches", by, f.A, f.B, d, fmtNS(f.NS), fmtNS(f.P10), fmtNS(f.P90), f.Batch))
			continue
		}
		if len(measured) == 0 {
			continue
		}
		var near Figure
		found := false
		for j := i - 1; j >= 0 && !found; j-- {
			near, found = measured[lineDists[j]]
		}
		v := 0.0
		if found {
			v = near.NS
		} else {
			for j := i + 1; j < len(lineDists) && !found; j++ {
				near, found = measured[lineDists[j]]
			}
			def := float64(knob.ByID(mustLookup(lineKnob[d])).Default)
			v = math.Min(def, near.NS)
		}
		set(lineKnob[d], v, fmt.Sprintf("assumed: no two CPUs at distance %s here (never used); set from the measured %s transfer (schedsim machine detect on %s)", d, near.Dist, date))
	}

	ctx := 0.0
	if m.Yield.OK() {
		ctx = math.Max(50, m.Yield.NS-sys)
		set("ctx_switch_ns", ctx, fmt.Sprintf("%ssched_yield ping-pong of two threads on CPU %d, %s per switch, less a null syscall (%s)", by, m.Yield.A, fmtNS(m.Yield.NS), fmtNS(sys)))
	}

	// The waker's side: on its own CPU FUTEX_WAKE is the syscall,
	// try_to_wake_up and the enqueue; on another CPU it adds the IPI.
	waker := 0.0
	dw, de, di := defaultOf("wake_ns"), defaultOf("enqueue_ns"), defaultOf("ipi_send_ns")
	local, how := 0.0, ""
	switch {
	case m.FutexSame.OK():
		local = m.FutexSame.NS
		how = fmt.Sprintf("FUTEX_WAKE of a thread asleep on the waker's CPU %d took %s median, less a null syscall (%s)", m.FutexSame.A, fmtNS(m.FutexSame.NS), fmtNS(sys))
	case m.FutexSamePreempt.OK() && ctx > 0:
		local = m.FutexSamePreempt.NS - ctx
		how = fmt.Sprintf("a thread asleep on the waker's CPU %d ran %s (median) after FUTEX_WAKE, less a context switch (%s) and a null syscall (%s)", m.FutexSamePreempt.A, fmtNS(m.FutexSamePreempt.NS), fmtNS(ctx), fmtNS(sys))
	}
	if how != "" {
		local = math.Max(50, local-sys)
		split := fmt.Sprintf("%s%s = %s, split %.0f:%.0f between wake_ns and enqueue_ns as the knob defaults are (the split is assumed)",
			by, how, fmtNS(local), dw, de)
		set("wake_ns", local*dw/(dw+de), split)
		set("enqueue_ns", local*de/(dw+de), split)
		waker = local
		if m.FutexWaker.OK() {
			ipiSend := math.Max(20, m.FutexWaker.NS-sys-local)
			set("ipi_send_ns", ipiSend, fmt.Sprintf("%sFUTEX_WAKE of a thread asleep on CPU %d from CPU %d took %s median, %s more than a null syscall and the local wakeup: the reschedule IPI%s",
				by, m.FutexWaker.B, m.FutexWaker.A, fmtNS(m.FutexWaker.NS), fmtNS(ipiSend), map[bool]string{true: " (far above bare metal's ≈0.1-0.3 µs: probably the VM exit of the ICR write)", false: ""}[ipiSend > 3000]))
			waker = m.FutexWaker.NS - sys
		}
	} else if m.FutexWaker.OK() { // no local figure: split the remote one
		waker = math.Max(100, m.FutexWaker.NS-sys)
		tot := dw + de + di
		split := fmt.Sprintf("%sthe waker's FUTEX_WAKE of a sleeper on CPU %d from CPU %d took %s median, less a null syscall (%s) = %s, split in the knob defaults' ratio %.0f:%.0f:%.0f between wake_ns, enqueue_ns and ipi_send_ns (the split is assumed)",
			by, m.FutexWaker.B, m.FutexWaker.A, fmtNS(m.FutexWaker.NS), fmtNS(sys), fmtNS(waker), dw, de, di)
		set("wake_ns", waker*dw/tot, split)
		set("enqueue_ns", waker*de/tot, split)
		set("ipi_send_ns", waker*di/tot, split)
	}
	if m.FutexBusy.OK() && waker > 0 && ctx > 0 {
		ipi := math.Max(100, m.FutexBusy.NS-waker-ctx)
		set("ipi_ns", ipi, fmt.Sprintf("%sfutex wake to running on a busy CPU %d (a SCHED_IDLE spinner preempted) %s median, less the waker's call (%s) and a context switch (%s)",
			by, m.FutexBusy.B, fmtNS(m.FutexBusy.NS), fmtNS(waker+sys), fmtNS(ctx)))
	}
	if m.FutexIdle.OK() && m.FutexBusy.OK() {
		exit := math.Max(0, m.FutexIdle.NS-m.FutexBusy.NS)
		line := fmt.Sprintf("measured: idle exit ≈ %s: futex wake to running %s when CPU %d was idle ≈50 µs vs %s when it was busy (schedsim machine detect on %s).",
			fmtNS(exit), fmtNS(m.FutexIdle.NS), m.FutexIdle.B, fmtNS(m.FutexBusy.NS), date)
		if m.FutexIdle.NS <= m.FutexBusy.NS {
			line += " The idle figure is not above the busy one (other work on the machine hides the exit): idle_states left as declared."
		} else if spec.IdleDriver == machine.IdleDriverNone && len(spec.IdleStates) == 1 {
			st := &spec.IdleStates[0]
			st.MeasuredExitNS = max(1, int64(math.Round(exit)))
			if st.MeasuredExitNS > 100000000 {
				st.MeasuredExitNS = 100000000
			}
			line += fmt.Sprintf(" Written as the %s state's measured_exit_ns.", st.Name)
		} else {
			line += " Not written into idle_states: which state the governor chose is unknown."
		}
		spec.Notes = append(spec.Notes, line)
	}
	var pipes []string
	for _, f := range m.Pipe {
		if f.OK() {
			pipes = append(pipes, fmt.Sprintf("%s %s (CPUs %d,%d)", f.Dist, fmtNS(f.NS), f.A, f.B))
		}
	}
	if len(pipes) > 0 {
		spec.Notes = append(spec.Notes, fmt.Sprintf("measured: pipe round trip between two pinned threads (like perf bench sched pipe -T, through Go's syscall wrappers): %s (schedsim machine detect on %s; no knob: a check for the simulated pipe workload).", strings.Join(pipes, ", "), date))
	}
	var figs []string
	for _, f := range []Figure{m.NullSyscall, m.Yield, m.FutexSame, m.FutexSamePreempt, m.FutexWaker, m.FutexIdle, m.FutexBusy} {
		if f.What != "" {
			figs = append(figs, f.String())
		}
	}
	spec.Notes = append(spec.Notes, "measured: "+strings.Join(figs, "; ")+".")
	for _, s := range m.Skipped {
		spec.Notes = append(spec.Notes, "missing: not measured: "+s)
	}
	if m.LoadBefore >= 0 && m.NCPU > 0 {
		load := math.Max(m.LoadBefore, m.LoadAfter)
		line := fmt.Sprintf("measured: load average %.1f before and %.1f after the measurements, on %d CPUs.", m.LoadBefore, m.LoadAfter, m.NCPU)
		if load > float64(m.NCPU)/2 {
			line += " The machine was busy: the cross-CPU figures (pipe, futex wake to running, ipi_ns) include waiting behind other runnable tasks; rerun on a quiet machine for the machine's own costs."
		}
		spec.Notes = append(spec.Notes, line)
	}
	spec.Notes = append(spec.Notes, fmt.Sprintf("assumed: the measured figures are medians of short batches taken in %.0f s on a machine that may have been running other work; they include Go's syscall wrappers (≈0.05-0.1 µs a call) and, in a VM, the hypervisor. Knobs noted \"assumed\" were not measured.", m.Elapsed.Seconds()))
	spec.Source += "; costs measured (see cost_notes)"
}

func mustLookup(name string) knob.ID {
	id, ok := knob.Lookup(name)
	if !ok {
		panic("detect: no knob " + name)
	}
	return id
}

func defaultOf(name string) float64 { return float64(knob.ByID(mustLookup(name)).Default) }
