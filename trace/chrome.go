// Package trace writes a simulation's scheduling events as a Chrome Trace
// Event JSON file that ui.perfetto.dev and chrome://tracing open: one
// track per CPU (grouped by socket and LLC) with a slice per task run, an
// instant event per wakeup decision (target, prev, chosen CPU, the stage
// that chose it and the CPUs probed) and a flow arrow from each waker to
// its wakee's next run (perfetto.md).
package trace

import (
	"bufio"
	"fmt"
	"io"

	"schedplay/engine"
)

// MaxEvents bounds the file: past it, events are dropped and the metadata
// says how many.
const MaxEvents = 2_000_000

const (
	pidBase = 900000  // pseudo-process per LLC
	tidBase = 1000000 // CPU tracks: tidBase + cpu
)

// Chrome streams a trace as the simulation runs.
type Chrome struct {
	w       *bufio.Writer
	sim     *engine.Sim
	events  int
	dropped int
	first   bool
	err     error

	runStart []int64 // per CPU: start of the current slice, -1 when idle
	running  []*engine.Task
	flowSeq  int
	flowOf   map[engine.TaskID]int // wakee -> pending flow id
}

// Attach starts a trace of sim on w. Call Close after the run.
func Attach(sim *engine.Sim, w io.Writer) *Chrome {
	n := sim.Topology().NCPU
	c := &Chrome{w: bufio.NewWriterSize(w, 1<<16), sim: sim, first: true,
		runStart: make([]int64, n), running: make([]*engine.Task, n), flowOf: map[engine.TaskID]int{}}
	for i := range c.runStart {
		c.runStart[i] = -1
	}
	c.printf(`{"traceEvents":[`)
	c.metadata()
	sim.SetHooks(engine.Hooks{OnSwitch: c.onSwitch, OnWakeup: c.onWakeup})
	return c
}

func (c *Chrome) printf(format string, args ...any) {
	if c.err != nil {
		return
	}
	_, c.err = fmt.Fprintf(c.w, format, args...)
}

func (c *Chrome) event(format string, args ...any) {
	if c.events >= MaxEvents {
		c.dropped++
		return
	}
	c.events++
	if !c.first {
		c.printf(",\n")
	}
	c.first = false
	c.printf(format, args...)
}

func us(ns int64) string { return fmt.Sprintf("%d.%03d", ns/1000, ns%1000) }

func (c *Chrome) metadata() {
	tp := c.sim.Topology()
	for llc := 0; llc < tp.NLLC; llc++ {
		socket := tp.Socket[tp.LLCSpan[llc].First()]
		c.event(`{"ph":"M","name":"process_name","pid":%d,"args":{"name":"Socket%d / LLC%02d"}}`, pidBase+llc, socket, llc)
		c.event(`{"ph":"M","name":"process_sort_index","pid":%d,"args":{"sort_index":%d}}`, pidBase+llc, llc)
	}
	for cpu := 0; cpu < tp.NCPU; cpu++ {
		c.event(`{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"CPU %04d (core %d, T%d)"}}`,
			pidBase+tp.LLC[cpu], tidBase+cpu, cpu, tp.Core[cpu], tp.Thread[cpu])
		c.event(`{"ph":"M","name":"thread_sort_index","pid":%d,"tid":%d,"args":{"sort_index":%d}}`, pidBase+tp.LLC[cpu], tidBase+cpu, cpu)
	}
}

func (c *Chrome) track(cpu int) (int, int) { return pidBase + c.sim.Topology().LLC[cpu], tidBase + cpu }

func (c *Chrome) closeSlice(cpu int, endState string) {
	t := c.running[cpu]
	if t == nil || c.runStart[cpu] < 0 {
		return
	}
	pid, tid := c.track(cpu)
	start := c.runStart[cpu]
	c.event(`{"ph":"X","cat":"sched","name":%q,"pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{"task":%d,"nice":%d,"end_state":%q}}`,
		t.Name, pid, tid, us(start), us(c.sim.Now()-start), t.ID, t.Nice, endState)
	c.running[cpu] = nil
	c.runStart[cpu] = -1
}

func (c *Chrome) onSwitch(cpu int, prev, next *engine.Task) {
	state := "R"
	if prev != nil {
		switch prev.State() {
		case engine.TaskBlocked:
			state = "S"
		case engine.TaskExited:
			state = "X"
		}
	}
	c.closeSlice(cpu, state)
	if next == nil {
		return
	}
	c.running[cpu] = next
	c.runStart[cpu] = c.sim.Now()
	if id, ok := c.flowOf[next.ID]; ok {
		delete(c.flowOf, next.ID)
		pid, tid := c.track(cpu)
		c.event(`{"ph":"f","bp":"e","id":%d,"cat":"wakeup","name":"wake","pid":%d,"tid":%d,"ts":%s}`, id, pid, tid, us(c.sim.Now()+1))
	}
}

func (c *Chrome) onWakeup(d *engine.Decision) {
	pid, tid := c.track(d.WakerCPU)
	c.event(`{"ph":"i","s":"t","cat":"wakeup","name":"select_idle_sibling","pid":%d,"tid":%d,"ts":%s,"args":{"wakee":%d,"prev":%d,"target":%d,"chosen":%d,"stage":%q,"probes":%s,"sync":%t}}`,
		pid, tid, us(d.Time), d.Task, d.Prev, d.Target, d.Chosen, d.Stage.String(), intList(d.Probes), d.Sync)
	if d.Waker >= 0 && c.running[d.WakerCPU] != nil {
		c.flowSeq++
		c.flowOf[d.Task] = c.flowSeq
		c.event(`{"ph":"s","id":%d,"cat":"wakeup","name":"wake","pid":%d,"tid":%d,"ts":%s}`, c.flowSeq, pid, tid, us(d.Time))
	}
}

func intList(xs []int) string {
	b := make([]byte, 0, 4*len(xs)+2)
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", x)
	}
	return string(append(b, ']'))
}

// Close ends the open slices at the current time and finishes the file.
func (c *Chrome) Close() error {
	for cpu := range c.running {
		c.closeSlice(cpu, "R")
	}
	c.printf(`],"displayTimeUnit":"ns","metadata":{"generator":"schedplay","events":%d,"dropped_events":%d}}`+"\n", c.events, c.dropped)
	c.sim.SetHooks(engine.Hooks{})
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}
