// Package trace writes a simulation's scheduling events as a Chrome Trace
// Event JSON file that ui.perfetto.dev and chrome://tracing open: one
// track per CPU (grouped by socket and LLC) with a slice per task run, an
// instant event per wakeup decision (target, prev, chosen CPU, the stage
// that chose it and the CPUs probed) and a flow arrow from each waker to
// its wakee's next run (perfetto.md).
//
// Every event is written by the JSON encoder, so any task name (control
// characters, quotes, backslashes, invalid UTF-8) gives a valid file.
package trace

import (
	"bufio"
	"fmt"
	"io"

	"schedplay/internal/json"

	"schedplay/engine"
)

const (
	pidBase = 900000  // pseudo-process per LLC
	tidBase = 1000000 // CPU tracks: tidBase + cpu
)

// Chrome streams a trace as the simulation runs.
type Chrome struct {
	w       *bufio.Writer
	cw      *countWriter
	enc     *json.Encoder
	sim     *engine.Sim
	opt     Options
	events  int
	dropped int
	first   bool
	err     error
	cut     cutState

	runStart []int64 // per CPU: start of the current slice, -1 when idle
	running  []*engine.Task
	flowSeq  int
	flowOf   map[engine.TaskID]int // wakee -> pending flow id
}

// The events, one struct per phase; field order is the order written.
type (
	metaEvent struct {
		Ph   string `json:"ph"`
		Name string `json:"name"`
		Pid  int    `json:"pid"`
		Tid  int    `json:"tid,omitempty"` // process metadata has none
		Args any    `json:"args"`
	}
	nameArgs struct {
		Name string `json:"name"`
	}
	sortArgs struct {
		SortIndex int `json:"sort_index"`
	}
	sliceEvent struct {
		Ph   string    `json:"ph"`
		Cat  string    `json:"cat"`
		Name string    `json:"name"`
		Pid  int       `json:"pid"`
		Tid  int       `json:"tid"`
		Ts   float64   `json:"ts"`
		Dur  float64   `json:"dur"`
		Args sliceArgs `json:"args"`
	}
	sliceArgs struct {
		Task     engine.TaskID `json:"task"`
		Nice     int           `json:"nice"`
		EndState string        `json:"end_state"`
	}
	instantEvent struct {
		Ph   string       `json:"ph"`
		S    string       `json:"s"`
		Cat  string       `json:"cat"`
		Name string       `json:"name"`
		Pid  int          `json:"pid"`
		Tid  int          `json:"tid"`
		Ts   float64      `json:"ts"`
		Args decisionArgs `json:"args"`
	}
	decisionArgs struct {
		Wakee  engine.TaskID `json:"wakee"`
		Prev   int           `json:"prev"`
		Target int           `json:"target"`
		Chosen int           `json:"chosen"`
		Stage  string        `json:"stage"`
		Probes []int         `json:"probes"`
		Sync   bool          `json:"sync"`
	}
	flowEvent struct {
		Ph   string  `json:"ph"`
		BP   string  `json:"bp,omitempty"`
		ID   int     `json:"id"`
		Cat  string  `json:"cat"`
		Name string  `json:"name"`
		Pid  int     `json:"pid"`
		Tid  int     `json:"tid"`
		Ts   float64 `json:"ts"`
	}
	// tail ends the file after the events.
	tail struct {
		DisplayTimeUnit string   `json:"displayTimeUnit"`
		Metadata        metadata `json:"metadata"`
	}
	metadata struct {
		Generator     string `json:"generator"`
		Events        int    `json:"events"`
		DroppedEvents int    `json:"dropped_events"`
		// MaxBytes is the cap; CutAtS, when set, the simulated time the
		// cap was reached (the events after it are dropped).
		MaxBytes int64    `json:"max_bytes"`
		CutAtS   *float64 `json:"cut_at_s,omitempty"`
		// WindowS is the --trace-window, [start, end) in seconds.
		WindowS []float64 `json:"window_s,omitempty"`
		// Truncated says the run was interrupted before its end; the
		// trace holds the part done, up to InterruptedAtS.
		Truncated      bool     `json:"truncated,omitempty"`
		InterruptedAtS *float64 `json:"interrupted_at_s,omitempty"`
	}
)

// Attach starts a trace of sim on w with the default Options. Call Close
// (or CloseInterrupted) after the run.
func Attach(sim *engine.Sim, w io.Writer) *Chrome { return AttachOptions(sim, w, Options{}) }

// AttachOptions starts a trace of sim on w, bounded by opt.
func AttachOptions(sim *engine.Sim, w io.Writer, opt Options) *Chrome {
	n := sim.Topology().NCPU
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	c := &Chrome{w: bw, cw: cw, enc: enc, sim: sim, first: true, opt: opt.withDefaults(),
		runStart: make([]int64, n), running: make([]*engine.Task, n), flowOf: map[engine.TaskID]int{}, cut: cutState{at: -1}}
	for i := range c.runStart {
		c.runStart[i] = -1
	}
	// The opening must be exactly this for Perfetto's sniffer (perfetto.md).
	c.write(`{"traceEvents":[`)
	c.metadata()
	sim.SetHooks(engine.Hooks{OnSwitch: c.onSwitch, OnWakeup: c.onWakeup})
	return c
}

// write writes fixed JSON punctuation (never data).
func (c *Chrome) write(s string) {
	if c.err != nil {
		return
	}
	_, c.err = c.w.WriteString(s)
}

// event encodes one event (the encoder ends it with a newline).
func (c *Chrome) event(v any) {
	if c.cut.at >= 0 || c.cw.n+int64(c.w.Buffered()) >= c.opt.MaxBytes-tailRoom {
		if c.cut.at < 0 {
			c.cut.at = c.sim.Now()
		}
		c.dropped++
		return
	}
	c.events++
	if !c.first {
		c.write(",")
	}
	c.first = false
	if c.err != nil {
		return
	}
	c.err = c.enc.Encode(v)
}

// us converts simulated ns to the format's µs, keeping ns precision.
func us(ns int64) float64 { return float64(ns) / 1000 }

func (c *Chrome) metadata() {
	tp := c.sim.Topology()
	for llc := 0; llc < tp.NLLC; llc++ {
		socket := tp.Socket[tp.LLCSpan[llc].First()]
		c.event(metaEvent{Ph: "M", Name: "process_name", Pid: pidBase + llc,
			Args: nameArgs{Name: fmt.Sprintf("Socket%d / LLC%02d", socket, llc)}})
		c.event(metaEvent{Ph: "M", Name: "process_sort_index", Pid: pidBase + llc, Args: sortArgs{SortIndex: llc}})
	}
	for cpu := 0; cpu < tp.NCPU; cpu++ {
		pid, tid := pidBase+tp.LLC[cpu], tidBase+cpu
		c.event(metaEvent{Ph: "M", Name: "thread_name", Pid: pid, Tid: tid,
			Args: nameArgs{Name: fmt.Sprintf("CPU %04d (core %d, T%d)", cpu, tp.Core[cpu], tp.Thread[cpu])}})
		c.event(metaEvent{Ph: "M", Name: "thread_sort_index", Pid: pid, Tid: tid, Args: sortArgs{SortIndex: cpu}})
	}
}

func (c *Chrome) track(cpu int) (int, int) { return pidBase + c.sim.Topology().LLC[cpu], tidBase + cpu }

func (c *Chrome) closeSlice(cpu int, endState string) {
	t := c.running[cpu]
	if t == nil || c.runStart[cpu] < 0 {
		return
	}
	pid, tid := c.track(cpu)
	start, end := c.runStart[cpu], c.sim.Now()
	if s, e, ok := c.opt.clip(start, end); ok && c.opt.cpu(cpu) {
		c.event(sliceEvent{Ph: "X", Cat: "sched", Name: t.Name, Pid: pid, Tid: tid, Ts: us(s), Dur: us(e - s),
			Args: sliceArgs{Task: t.ID, Nice: t.Nice, EndState: endState}})
	}
	c.running[cpu] = nil
	c.runStart[cpu] = -1
}

func (c *Chrome) onSwitch(cpu int, prev, next *engine.Task) {
	state := prevState(prev)
	c.closeSlice(cpu, state)
	if next == nil {
		return
	}
	c.running[cpu] = next
	c.runStart[cpu] = c.sim.Now()
	if id, ok := c.flowOf[next.ID]; ok {
		delete(c.flowOf, next.ID)
		if !c.opt.in(c.sim.Now()) || !c.opt.cpu(cpu) {
			return
		}
		pid, tid := c.track(cpu)
		c.event(flowEvent{Ph: "f", BP: "e", ID: id, Cat: "wakeup", Name: "wake", Pid: pid, Tid: tid, Ts: us(c.sim.Now() + 1)})
	}
}

func (c *Chrome) onWakeup(d *engine.Decision) {
	if !c.opt.in(d.Time) || !c.opt.cpu(d.WakerCPU) {
		return
	}
	pid, tid := c.track(d.WakerCPU)
	probes := d.Probes
	if probes == nil {
		probes = []int{}
	}
	c.event(instantEvent{Ph: "i", S: "t", Cat: "wakeup", Name: "select_idle_sibling", Pid: pid, Tid: tid, Ts: us(d.Time),
		Args: decisionArgs{Wakee: d.Task, Prev: d.Prev, Target: d.Target, Chosen: d.Chosen, Stage: d.Stage.String(), Probes: probes, Sync: d.Sync}})
	if d.Waker >= 0 && c.running[d.WakerCPU] != nil {
		c.flowSeq++
		c.flowOf[d.Task] = c.flowSeq
		c.event(flowEvent{Ph: "s", ID: c.flowSeq, Cat: "wakeup", Name: "wake", Pid: pid, Tid: tid, Ts: us(d.Time)})
	}
}

// Close ends the open slices at the current time and finishes the file.
func (c *Chrome) Close() error { return c.finish(false) }

// CloseInterrupted is Close for a run stopped before its end: the file is
// complete and valid, holds the part done, and its metadata says
// "truncated": true and "interrupted_at_s" (the simulated time reached).
func (c *Chrome) CloseInterrupted() error { return c.finish(true) }

func (c *Chrome) finish(interrupted bool) error {
	for cpu := range c.running {
		c.closeSlice(cpu, "R")
	}
	t := tail{DisplayTimeUnit: "ns", Metadata: metadata{Generator: "schedplay", Events: c.events, DroppedEvents: c.dropped, MaxBytes: c.opt.MaxBytes}}
	if c.cut.at >= 0 {
		at := float64(c.cut.at) / float64(engine.Second)
		t.Metadata.CutAtS = &at
	}
	if c.opt.End > 0 || c.opt.Start > 0 {
		t.Metadata.WindowS = []float64{float64(c.opt.Start) / 1e9, float64(c.opt.End) / 1e9}
	}
	if interrupted {
		at := float64(c.sim.Now()) / float64(engine.Second)
		t.Metadata.Truncated, t.Metadata.InterruptedAtS = true, &at
	}
	c.sim.SetHooks(engine.Hooks{})
	// The events array ends, then the tail object's members follow in the
	// same top-level object: encode the tail and splice off its braces.
	b, err := json.Marshal(t)
	if c.err == nil {
		c.err = err
	}
	c.write("],")
	if c.err == nil {
		_, c.err = c.w.Write(b[1:])
	}
	c.write("\n")
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

// Stats says what the trace holds: events written, events dropped, bytes
// written (after Close) and, when the byte cap cut it, the simulated time
// of the cut (-1 otherwise).
func (c *Chrome) Stats() Stats {
	return Stats{Events: c.events, Dropped: c.dropped, Bytes: c.cw.n, CutAt: c.cut.at, MaxBytes: c.opt.MaxBytes}
}
