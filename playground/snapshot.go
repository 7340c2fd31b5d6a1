package playground

import (
	"encoding/binary"
	"errors"
	"math"

	"schedplay/engine"
	"schedplay/engine/histo"
	"schedplay/engine/machine"
)

// A Snapshot is what an engine worker posts to the page at display rate:
// one arm's CPU states, counters, the wakeup decisions made since the
// previous snapshot (the newest MaxSnapDecisions of them), per-workload
// operation counts and latency percentiles, and — a few times a second,
// or after a step — the histogram bars. It travels as bytes (Encode,
// Decode) in a transferable typed array, not as JSON.
type Snapshot struct {
	Seq    int64 // the build it belongs to
	Arm    int
	Totals engine.Totals
	// Delayed are era 6.12's delayed-dequeue counters, when HasDelayed
	// (the arm's era has DELAY_DEQUEUE).
	HasDelayed bool
	Delayed    engine.DelayedStats
	// DLStats are the deadline class's counts (engine Sim.DL), when HasDL
	// (the run has deadline tasks).
	HasDL    bool
	DLStats  engine.DLStats
	Finished bool
	Halted   bool
	// PolicyErr is what stopped the arm's run, its wake policy's error
	// naming the file and line (Arm.Err), or "".
	PolicyErr string
	// SimRate is simulated seconds per wall second, EventsPerSec engine
	// events per wall second, both over the worker's last half second.
	SimRate, EventsPerSec float64
	// Pace is simulated seconds per wall second of the worker's own
	// simulating time: what it could do unheld (the page's A/B lead).
	Pace      float64
	Views     []engine.CPUView
	HasIdle   []bool // per LLC
	Decisions []engine.Decision
	Ops       []int64
	Hists     []HistSnap
	HasBars   bool // Hists carry their bars
	// Info is the last decision that chose InfoCPU (the CPU the page's
	// info box shows), when InfoOK.
	InfoCPU int
	InfoOK  bool
	Info    engine.Decision
	// Polling says, per CPU, that it idles in a polling state (the
	// engine's Sim.Polling).
	Polling []bool
	// RT says, per CPU, that it runs an RT task (SCHED_FIFO or
	// SCHED_RR): the map draws it apart from a CPU running a fair task.
	RT []bool
	// DL says, per CPU, that it runs a SCHED_DEADLINE task (drawn apart
	// from both).
	DL []bool
	// Pinned lists the tasks waiting on a runqueue whose affinity does
	// not cover every CPU (the work-conservation meter counts a waiting
	// task only for the idle CPUs it may run on).
	Pinned []PinnedTask

	ring [MaxSnapDecisions]engine.Decision // Fill's scratch
}

// HistSnap is one workload's wakeup latency summary.
type HistSnap struct {
	Name string
	// Class is the scheduling classes of the workload's tasks: ClassFair,
	// ClassRT (all of them SCHED_FIFO/SCHED_RR), ClassMixed (RT and
	// fair), ClassDL (all SCHED_DEADLINE) or a mix with deadline tasks.
	// The engine keeps one latency histogram per workload, so a
	// workload's series is RT (deadline) wakeup latency exactly when its
	// class is ClassRT (ClassDL).
	Class WorkloadClass
	Count int64
	Pct   [3]int64 // p50, p99, p99.9 (µs)
	Max   int64
	Bars  []histo.Bar
}

// PinnedTask is a waiting task with a restricted affinity: the CPU whose
// runqueue it waits on and the CPUs it may run on (bit i of Allowed[i/64]).
type PinnedTask struct {
	CPU     int
	Allowed []uint64
}

// Allows reports whether the task may run on cpu.
func (p *PinnedTask) Allows(cpu int) bool {
	return cpu >= 0 && cpu/64 < len(p.Allowed) && p.Allowed[cpu/64]&(1<<uint(cpu%64)) != 0
}

// WorkloadClass is the scheduling class of a workload's tasks.
type WorkloadClass uint8

const (
	ClassFair     WorkloadClass = iota // every task SCHED_OTHER (or no task yet)
	ClassRT                            // every task SCHED_FIFO or SCHED_RR
	ClassMixed                         // RT and fair tasks
	ClassDL                            // every task SCHED_DEADLINE
	ClassDLFair                        // deadline and fair tasks
	ClassDLRT                          // deadline and RT tasks
	ClassDLRTFair                      // deadline, RT and fair tasks
)

// classOf is the class of a workload with tasks of the classes given.
func classOf(dl, rt, fair bool) WorkloadClass {
	switch {
	case dl && rt && fair:
		return ClassDLRTFair
	case dl && rt:
		return ClassDLRT
	case dl && fair:
		return ClassDLFair
	case dl:
		return ClassDL
	case rt && fair:
		return ClassMixed
	case rt:
		return ClassRT
	}
	return ClassFair
}

// HasRT reports whether some of the workload's tasks are SCHED_FIFO or
// SCHED_RR; HasDL whether some are SCHED_DEADLINE.
func (c WorkloadClass) HasRT() bool {
	return c == ClassRT || c == ClassMixed || c == ClassDLRT || c == ClassDLRTFair
}
func (c WorkloadClass) HasDL() bool { return c >= ClassDL && c <= ClassDLRTFair }

// Tag is the class as the page labels a workload: "" for fair, "RT",
// "RT+fair", "DL", "DL+fair", "DL+RT", "DL+RT+fair".
func (c WorkloadClass) Tag() string {
	switch c {
	case ClassRT:
		return "RT"
	case ClassMixed:
		return "RT+fair"
	case ClassDL:
		return "DL"
	case ClassDLFair:
		return "DL+fair"
	case ClassDLRT:
		return "DL+RT"
	case ClassDLRTFair:
		return "DL+RT+fair"
	}
	return ""
}

// SnapPercentiles are the percentiles HistSnap.Pct holds.
var SnapPercentiles = [3]float64{50, 99, 99.9}

// MaxSnapDecisions bounds the decisions one snapshot carries (the page
// flashes only the newest few of a frame).
const MaxSnapDecisions = 16

// maxSnapProbes bounds the probes kept per decision in a snapshot.
const maxSnapProbes = 64

// Fill takes a snapshot of sim into s, reusing its buffers. dec is the
// DecisionsSince cursor (returned advanced); bars asks for the
// histogram bars; info is the CPU whose last decision to include (-1:
// none).
func (s *Snapshot) Fill(sim *engine.Sim, dec int64, bars bool, info int) int64 {
	s.Totals = sim.Totals()
	s.HasDelayed, s.Delayed = false, engine.DelayedStats{}
	if d := sim.Delayed(); d != nil {
		s.HasDelayed, s.Delayed = true, *d
	}
	s.HasDL, s.DLStats = false, engine.DLStats{Tasks: s.DLStats.Tasks[:0]}
	if d := sim.DL(); d != nil && len(d.Tasks) > 0 {
		s.HasDL, s.DLStats = true, *d
	}
	s.Views = sim.CPUViews(s.Views)
	nllc := sim.Topology().NLLC
	s.HasIdle = s.HasIdle[:0]
	for l := 0; l < nllc; l++ {
		s.HasIdle = append(s.HasIdle, sim.HasIdleCores(l))
	}
	// The newest MaxSnapDecisions, in a ring whose probe buffers are
	// reused, then put in order.
	ring := s.ring[:]
	n := 0
	dec = sim.DecisionsSince(dec, func(d *engine.Decision) {
		r := &ring[n%MaxSnapDecisions]
		pr := append(r.Probes[:0], d.Probes[:min(len(d.Probes), maxSnapProbes)]...)
		*r = *d
		r.Probes = pr
		n++
	})
	s.Decisions = s.Decisions[:0]
	for k := max(0, n-MaxSnapDecisions); k < n; k++ {
		r := &ring[k%MaxSnapDecisions]
		s.Decisions = append(s.Decisions, *r)
		s.Decisions[len(s.Decisions)-1].Probes = append([]int(nil), r.Probes...)
	}
	nw := sim.NumWorkloads()
	s.Ops = s.Ops[:0]
	if cap(s.Hists) < nw {
		s.Hists = make([]HistSnap, nw)
	}
	s.Hists = s.Hists[:nw]
	s.HasBars = bars
	for w := 0; w < nw; w++ {
		s.Ops = append(s.Ops, sim.WorkloadOps(w))
		h := sim.WakeupHistogram(w)
		hs := &s.Hists[w]
		hs.Name = sim.WorkloadName(w)
		hs.Count = h.Count()
		for k, p := range SnapPercentiles {
			hs.Pct[k] = h.Percentile(p)
		}
		hs.Max = h.Percentile(100)
		hs.Bars = hs.Bars[:0]
		if bars {
			hs.Bars = h.AppendBars(hs.Bars)
		}
	}
	s.Polling, s.RT, s.DL = s.Polling[:0], s.RT[:0], s.DL[:0]
	for c := range s.Views {
		v := &s.Views[c]
		s.Polling = append(s.Polling, v.Curr < 0 && sim.Polling(c))
		pol := engine.PolicyNormal
		if v.Curr >= 0 && int(v.Curr) < sim.NumTasks() {
			pol = sim.Task(v.Curr).Policy()
		}
		s.RT = append(s.RT, pol == engine.PolicyFIFO || pol == engine.PolicyRR)
		s.DL = append(s.DL, pol == engine.PolicyDeadline)
	}
	s.fillClasses(sim)
	s.fillPinned(sim)
	s.InfoCPU, s.InfoOK = info, false
	if info >= 0 && info < len(s.Views) {
		d, probes, ok := sim.LastDecisionOn(info, nil)
		if ok {
			d.Probes = probes
			s.Info, s.InfoOK = d, true
		}
	}
	return dec
}

// fillClasses sets each workload histogram's class from its tasks.
func (s *Snapshot) fillClasses(sim *engine.Sim) {
	var dl, rt, fair [MaxClassWorkloads]bool
	for id := 0; id < sim.NumTasks(); id++ {
		t := sim.Task(engine.TaskID(id))
		if t == nil {
			continue
		}
		w := t.Workload()
		if w < 0 || w >= len(s.Hists) || w >= MaxClassWorkloads {
			continue
		}
		switch t.Policy() {
		case engine.PolicyNormal:
			fair[w] = true
		case engine.PolicyDeadline:
			dl[w] = true
		default:
			rt[w] = true
		}
	}
	for w := range s.Hists {
		c := ClassFair
		if w < MaxClassWorkloads {
			c = classOf(dl[w], rt[w], fair[w])
		}
		s.Hists[w].Class = c
	}
}

// MaxClassWorkloads bounds the workloads whose class a snapshot tells
// (the rest read as fair); the page shows fewer.
const MaxClassWorkloads = 64

// fillPinned lists the runnable tasks with a restricted affinity.
func (s *Snapshot) fillPinned(sim *engine.Sim) {
	ncpu := len(s.Views)
	n := 0
	for id := 0; id < sim.NumTasks(); id++ {
		t := sim.Task(engine.TaskID(id))
		if t == nil || t.State() != engine.TaskRunnable {
			continue
		}
		m := t.Allowed()
		if m.Weight() >= ncpu {
			continue
		}
		if n == len(s.Pinned) {
			s.Pinned = append(s.Pinned, PinnedTask{})
		}
		p := &s.Pinned[n]
		n++
		p.CPU = t.CPU()
		p.Allowed = p.Allowed[:0]
		for w := 0; w < (ncpu+63)/64; w++ {
			p.Allowed = append(p.Allowed, 0)
		}
		for c := m.First(); c >= 0 && c < ncpu; c = m.Next(c + 1) {
			p.Allowed[c/64] |= 1 << uint(c%64)
		}
	}
	s.Pinned = s.Pinned[:n]
}

// snapVersion starts every encoded snapshot.
const snapVersion = 7

type enc struct{ b []byte }

func (e *enc) i(v int64)   { e.b = binary.LittleEndian.AppendUint64(e.b, uint64(v)) }
func (e *enc) f(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *enc) u(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *enc) s(v string) { e.i(int64(len(v))); e.b = append(e.b, v...) }

func (e *enc) decision(d *engine.Decision) {
	e.i(d.Time)
	e.i(int64(d.Task))
	e.i(int64(d.Waker))
	for _, v := range []int{d.WakerCPU, d.Prev, d.Target, d.Chosen, int(d.Stage), d.SISProbes, d.SISLimit} {
		e.i(int64(v))
	}
	for _, v := range []bool{d.Sync, d.WakeWide, d.WantAffine, d.SISCalled, d.SISCutShort, d.ChosenIdle, d.RTFind} {
		e.u(v)
	}
	e.i(d.Cost)
	for _, v := range []int{d.PrevPri, d.ChosenPri, d.LowestPri, d.LowestN} {
		e.i(int64(v))
	}
	e.i(int64(len(d.Probes)))
	for _, p := range d.Probes {
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(p))
	}
}

// Encode appends the snapshot's bytes to b.
func (s *Snapshot) Encode(b []byte) []byte {
	e := enc{b}
	e.i(snapVersion)
	e.i(s.Seq)
	e.i(int64(s.Arm))
	t := &s.Totals
	for _, v := range []int64{t.Now, t.Events, t.Ticks, t.Wakeups, t.SISCalls, t.SISProbes, t.SISFound, t.PlacedBusy,
		t.SearchNS, t.CtxSwitches, t.Migrations, t.ConservationNS, t.LLCConservationNS} {
		e.i(v)
	}
	e.u(s.HasDelayed)
	for _, v := range []int64{s.Delayed.Delayed, s.Delayed.Requeued, s.Delayed.Dequeued, s.Delayed.Migrated} {
		e.i(v)
	}
	e.u(s.HasDL)
	if s.HasDL {
		e.dlStats(&s.DLStats)
	}
	e.u(s.Finished)
	e.u(s.Halted)
	e.s(s.PolicyErr)
	e.f(s.SimRate)
	e.f(s.EventsPerSec)
	e.f(s.Pace)
	e.i(int64(len(s.Views)))
	for i := range s.Views {
		v := &s.Views[i]
		for _, x := range []int{v.ID, v.Core, v.Thread, v.LLC, v.Socket, int(v.Curr), v.Workload, v.Nice, v.LatencyNice, v.Queued, v.CState} {
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(int32(x)))
		}
		e.u(v.Idle)
		e.u(v.SMTHeld)
		e.f(v.Busy)
	}
	e.i(int64(len(s.HasIdle)))
	for _, v := range s.HasIdle {
		e.u(v)
	}
	e.i(int64(len(s.Decisions)))
	for i := range s.Decisions {
		e.decision(&s.Decisions[i])
	}
	e.i(int64(len(s.Ops)))
	for _, v := range s.Ops {
		e.i(v)
	}
	e.u(s.HasBars)
	e.i(int64(len(s.Hists)))
	for i := range s.Hists {
		h := &s.Hists[i]
		e.s(h.Name)
		e.b = append(e.b, byte(h.Class))
		e.i(h.Count)
		for _, p := range h.Pct {
			e.i(p)
		}
		e.i(h.Max)
		e.i(int64(len(h.Bars)))
		for _, bar := range h.Bars {
			e.i(bar.From)
			e.i(bar.To)
			e.i(bar.Count)
		}
	}
	e.i(int64(s.InfoCPU))
	e.u(s.InfoOK)
	if s.InfoOK {
		e.decision(&s.Info)
	}
	e.i(int64(len(s.Polling)))
	for _, v := range s.Polling {
		e.u(v)
	}
	e.i(int64(len(s.RT)))
	for _, v := range s.RT {
		e.u(v)
	}
	e.i(int64(len(s.DL)))
	for _, v := range s.DL {
		e.u(v)
	}
	e.i(int64(len(s.Pinned)))
	for i := range s.Pinned {
		p := &s.Pinned[i]
		e.i(int64(p.CPU))
		e.i(int64(len(p.Allowed)))
		for _, w := range p.Allowed {
			e.i(int64(w))
		}
	}
	return e.b
}

// dlStats writes the deadline class's counts.
func (e *enc) dlStats(st *engine.DLStats) {
	e.f(st.CPUPct)
	e.f(st.TotalBW)
	e.f(st.LimitBW)
	e.i(st.Pushes)
	e.i(st.Pulls)
	e.i(st.Throttles)
	e.i(int64(len(st.Tasks)))
	for i := range st.Tasks {
		t := &st.Tasks[i]
		e.i(int64(t.Task))
		e.s(t.Name)
		e.i(int64(t.Workload))
		e.i(t.RuntimeNS)
		e.i(t.DeadlineNS)
		e.i(t.PeriodNS)
		e.u(t.Reclaim)
		e.f(t.Reserved)
		e.f(t.Share)
		e.i(t.Jobs)
		e.i(t.Misses)
		e.i(t.Throttles)
	}
}

// errSnapshot reports bytes that are not a snapshot.
var errSnapshot = errors.New("snapshot: truncated or corrupt")

type dec struct {
	b   []byte
	bad bool
}

func (d *dec) i() int64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := int64(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}
func (d *dec) i32() int {
	if len(d.b) < 4 {
		d.bad = true
		return 0
	}
	v := int(int32(binary.LittleEndian.Uint32(d.b)))
	d.b = d.b[4:]
	return v
}
func (d *dec) byte() byte {
	if len(d.b) < 1 {
		d.bad = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}
func (d *dec) f() float64 { return math.Float64frombits(uint64(d.i())) }
func (d *dec) u() bool {
	if len(d.b) < 1 {
		d.bad = true
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

// n reads a length, refusing one longer than the bytes left could hold
// at size bytes per item.
func (d *dec) n(size int) int {
	v := d.i()
	if v < 0 || v > int64(len(d.b)/size) {
		d.bad = true
		return 0
	}
	return int(v)
}
func (d *dec) s() string {
	n := d.n(1)
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *dec) decision(x *engine.Decision) {
	x.Time = d.i()
	x.Task = engine.TaskID(d.i())
	x.Waker = engine.TaskID(d.i())
	for _, p := range []*int{&x.WakerCPU, &x.Prev, &x.Target, &x.Chosen} {
		*p = int(d.i())
	}
	x.Stage = engine.Stage(d.i())
	x.SISProbes, x.SISLimit = int(d.i()), int(d.i())
	for _, p := range []*bool{&x.Sync, &x.WakeWide, &x.WantAffine, &x.SISCalled, &x.SISCutShort, &x.ChosenIdle, &x.RTFind} {
		*p = d.u()
	}
	x.Cost = d.i()
	x.PrevPri, x.ChosenPri, x.LowestPri, x.LowestN = int(d.i()), int(d.i()), int(d.i()), int(d.i())
	n := d.n(4)
	x.Probes = x.Probes[:0]
	for k := 0; k < n; k++ {
		x.Probes = append(x.Probes, d.i32())
	}
}

// dlStats reads what enc.dlStats wrote into st (its Tasks reused).
func (d *dec) dlStats(st *engine.DLStats) {
	st.CPUPct, st.TotalBW, st.LimitBW = d.f(), d.f(), d.f()
	st.Pushes, st.Pulls, st.Throttles = d.i(), d.i(), d.i()
	n := d.n(8*11 + 1)
	for k := 0; k < n && !d.bad; k++ {
		var t engine.DLTaskStats
		t.Task = engine.TaskID(d.i())
		t.Name = d.s()
		t.Workload = int(d.i())
		t.RuntimeNS, t.DeadlineNS, t.PeriodNS = d.i(), d.i(), d.i()
		t.Reclaim = d.u()
		t.Reserved, t.Share = d.f(), d.f()
		t.Jobs, t.Misses, t.Throttles = d.i(), d.i(), d.i()
		st.Tasks = append(st.Tasks, t)
	}
}

// Decode reads a snapshot written by Encode into s, reusing its buffers.
func (s *Snapshot) Decode(b []byte) error {
	d := dec{b: b}
	if d.i() != snapVersion {
		return errSnapshot
	}
	s.Seq = d.i()
	s.Arm = int(d.i())
	t := &s.Totals
	for _, p := range []*int64{&t.Now, &t.Events, &t.Ticks, &t.Wakeups, &t.SISCalls, &t.SISProbes, &t.SISFound, &t.PlacedBusy,
		&t.SearchNS, &t.CtxSwitches, &t.Migrations, &t.ConservationNS, &t.LLCConservationNS} {
		*p = d.i()
	}
	s.HasDelayed = d.u()
	for _, p := range []*int64{&s.Delayed.Delayed, &s.Delayed.Requeued, &s.Delayed.Dequeued, &s.Delayed.Migrated} {
		*p = d.i()
	}
	s.HasDL = d.u()
	s.DLStats = engine.DLStats{Tasks: s.DLStats.Tasks[:0]}
	if s.HasDL {
		d.dlStats(&s.DLStats)
	}
	s.Finished, s.Halted = d.u(), d.u()
	s.PolicyErr = d.s()
	s.SimRate, s.EventsPerSec, s.Pace = d.f(), d.f(), d.f()
	n := d.n(4*11 + 2 + 8)
	s.Views = s.Views[:0]
	for k := 0; k < n; k++ {
		var v engine.CPUView
		v.ID, v.Core, v.Thread, v.LLC, v.Socket = d.i32(), d.i32(), d.i32(), d.i32(), d.i32()
		v.Curr = engine.TaskID(d.i32())
		v.Workload, v.Nice, v.LatencyNice, v.Queued, v.CState = d.i32(), d.i32(), d.i32(), d.i32(), d.i32()
		v.Idle, v.SMTHeld = d.u(), d.u()
		v.Busy = d.f()
		s.Views = append(s.Views, v)
	}
	n = d.n(1)
	s.HasIdle = s.HasIdle[:0]
	for k := 0; k < n; k++ {
		s.HasIdle = append(s.HasIdle, d.u())
	}
	n = d.n(8)
	s.Decisions = s.Decisions[:0]
	for k := 0; k < n && !d.bad; k++ {
		s.Decisions = append(s.Decisions, engine.Decision{})
		d.decision(&s.Decisions[len(s.Decisions)-1])
	}
	n = d.n(8)
	s.Ops = s.Ops[:0]
	for k := 0; k < n; k++ {
		s.Ops = append(s.Ops, d.i())
	}
	s.HasBars = d.u()
	n = d.n(8)
	if cap(s.Hists) < n {
		s.Hists = make([]HistSnap, n)
	}
	s.Hists = s.Hists[:n]
	for k := 0; k < n && !d.bad; k++ {
		h := &s.Hists[k]
		h.Name = d.s()
		h.Class = WorkloadClass(d.byte())
		h.Count = d.i()
		for p := range h.Pct {
			h.Pct[p] = d.i()
		}
		h.Max = d.i()
		m := d.n(24)
		h.Bars = h.Bars[:0]
		for q := 0; q < m; q++ {
			h.Bars = append(h.Bars, histo.Bar{From: d.i(), To: d.i(), Count: d.i()})
		}
	}
	s.InfoCPU = int(d.i())
	s.InfoOK = d.u()
	if s.InfoOK {
		d.decision(&s.Info)
	}
	n = d.n(1)
	s.Polling = s.Polling[:0]
	for k := 0; k < n; k++ {
		s.Polling = append(s.Polling, d.u())
	}
	n = d.n(1)
	s.RT = s.RT[:0]
	for k := 0; k < n; k++ {
		s.RT = append(s.RT, d.u())
	}
	n = d.n(1)
	s.DL = s.DL[:0]
	for k := 0; k < n; k++ {
		s.DL = append(s.DL, d.u())
	}
	n = d.n(16)
	s.Pinned = s.Pinned[:0]
	for k := 0; k < n && !d.bad; k++ {
		p := PinnedTask{CPU: int(d.i())}
		m := d.n(8)
		for q := 0; q < m; q++ {
			p.Allowed = append(p.Allowed, uint64(d.i()))
		}
		s.Pinned = append(s.Pinned, p)
	}
	if d.bad {
		return errSnapshot
	}
	return nil
}

// ArmView is what the page's main thread holds of one arm that runs in
// a worker: its label and knobs, the machine's topology (for the map),
// the latest snapshot, and the decisions posted since the display last
// took them.
type ArmView struct {
	Label string
	Knobs []string
	Topo  *machine.Topology
	Snap  Snapshot
	Have  bool // a snapshot arrived
	// Takes counts the snapshots taken: the canvas redraws only when it
	// (or anything else it shows) changed.
	Takes int64
	// Decs are the newest decisions not yet flashed (at most
	// MaxSnapDecisions), with their own probe slices.
	Decs []engine.Decision
	// Log is the decision panel's ring (the last LogSize decisions, in
	// full, oldest first), as the worker last posted it.
	Log []LoggedDecision
	// Highlight, when not nil, is the decision whose probe path the map
	// shows, in order (Probes), ending at Chosen: the one "Step one
	// wakeup" reached, or the one picked in the panel.
	Highlight *engine.Decision
}

// SetHighlight highlights the logged decision number n (0: none); it
// reports whether the log holds it.
func (v *ArmView) SetHighlight(n int64) bool {
	v.Highlight = nil
	if n <= 0 {
		return false
	}
	for i := range v.Log {
		if d := &v.Log[i]; d.N == n {
			h := &engine.Decision{Time: d.TimeNS, WakerCPU: d.WakerCPU, Prev: d.Prev, Target: d.Target, Chosen: d.Chosen, Cost: d.CostNS}
			for k, name := range engine.StageNames() {
				if name == d.Stage {
					h.Stage = engine.Stage(k)
				}
			}
			for _, p := range d.Probes {
				h.Probes = append(h.Probes, p.CPU)
			}
			v.Highlight = h
			return true
		}
	}
	return false
}

// Take merges snapshot s (decoded into scratch space the caller reuses)
// into v: the histogram bars of the last snapshot that had them stay
// until newer ones come, the decisions accumulate. It returns the
// scratch space for the next decode.
func (v *ArmView) Take(s *Snapshot) *Snapshot {
	for _, d := range s.Decisions {
		if len(v.Decs) >= MaxSnapDecisions {
			copy(v.Decs, v.Decs[1:])
			v.Decs = v.Decs[:len(v.Decs)-1]
		}
		d.Probes = append([]int(nil), d.Probes...)
		v.Decs = append(v.Decs, d)
	}
	if !s.HasBars && len(s.Hists) == len(v.Snap.Hists) {
		for w := range s.Hists {
			s.Hists[w].Bars, v.Snap.Hists[w].Bars = v.Snap.Hists[w].Bars, s.Hists[w].Bars
		}
		s.HasBars = v.Snap.HasBars
	}
	old := v.Snap
	v.Snap, v.Have = *s, true
	v.Takes++
	*s = old
	return s
}
