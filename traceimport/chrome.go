package traceimport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The simulator's Chrome JSON export (trace/chrome.go): CPU tracks are
// tid = chromeTidBase + cpu; a run is an "X" slice (cat "sched") named
// after the task with args.task (the task id) and args.end_state; a
// wakeup decision is an "i" event named "select_idle_sibling" on the
// waker's CPU track with args.wakee; a flow start ("s") at the same track
// and time says a task (the one running there) woke it, its absence that
// an interrupt (a timer) did.
const chromeTidBase = 1000000

// A JSON trace may hold ftrace text too: "systemTraceEvents" as a string
// is the kernel's trace text (catapult's trace viewer reads it so; Chrome
// puts the system tracing agents' text there, and Perfetto's JSON export,
// `traceconv json`, the legacy ftrace text it kept: trace_processor's
// export_json.cc, AddSystemTraceData). Its lines are read as any ftrace
// text, numbered within the string; an object there (Fuchsia's
// {"type":"fuchsia","events":[...]}) is no ftrace text and is skipped.
const systemTraceKey = "systemTraceEvents"

// chromeMaxCPU bounds the CPU of a track, as the text parser bounds its
// CPU column.
const chromeMaxCPU = 1 << 20

type chromeEvent struct {
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Name string          `json:"name"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args json.RawMessage `json:"args"`
}

// chromeSlice is a task's run on a CPU, as kept until the file is read.
type chromeSlice struct {
	start, end int64
	line       int32
	cpu        int32
	task       int32
	nice       int32
	name       strID
	endState   strID
}

// chromeInstant is a wakeup decision: on cpu's track, of task wakee.
type chromeInstant struct {
	ts    int64
	line  int32
	cpu   int32
	wakee int32
}

type trackTime struct {
	tid int
	ts  int64
}

// chromeReader reads the export a JSON token at a time, keeping the
// slices and wakeup decisions compactly; once the file is read they
// become the events a CPU's sched_switch and sched_waking lines would
// be.
type chromeReader struct {
	lc       *lineCounter
	dec      *json.Decoder
	st       *textStats
	strs     *strTable
	lim      limits
	slices   []chromeSlice
	instants []chromeInstant
	// flows holds the tracks and times where a flow starts: a task, not
	// an interrupt, made the wakeup decided there.
	flows map[trackTime]bool
	tally chromeTally
	// sink takes systemTraceEvents' events as they are read; system says
	// there was such text.
	sink   *eventSink
	system bool
}

// parseChrome reads the simulator's Chrome JSON and gives its events, in
// no particular order, to sink.
func parseChrome(r io.Reader, opt Options, lim limits, strs *strTable, sink *eventSink) (*textStats, error) {
	lc := newLineCounter(r)
	c := &chromeReader{lc: lc, dec: json.NewDecoder(lc), strs: strs, lim: lim,
		st:    &textStats{skipped: map[string]int{}, formatSeen: FormatChrome},
		flows: map[trackTime]bool{}, tally: newChromeTally(opt.KeepKthreads), sink: sink}
	err := c.readFile()
	c.st.lineBytes = lc.examined
	if err != nil {
		return c.st, err
	}
	c.giveEvents(sink)
	return c.st, nil
}

// bad is an error at the line of input offset off; a failure of the
// input itself (gzip, size) is reported as such.
func (c *chromeReader) bad(off int64, err error, format string, args ...any) error {
	if ie := asInputError(err); ie != nil {
		return fmt.Errorf("line %d: %s", c.lc.lineAt(off), ie.msg)
	}
	return fmt.Errorf("line %d: %s", c.lc.lineAt(off), fmt.Sprintf(format, args...))
}

// readFile reads the top-level object: its "traceEvents" array event by
// event, its other members skipped.
func (c *chromeReader) readFile() error {
	tok, err := c.dec.Token()
	if err != nil || tok != json.Delim('{') {
		return c.bad(0, err, "not a Chrome trace (want a JSON object with \"traceEvents\")")
	}
	found := false
	for c.dec.More() {
		off := c.dec.InputOffset()
		kt, err := c.dec.Token()
		if err != nil {
			return c.bad(off, err, "bad JSON: %v", err)
		}
		if key, _ := kt.(string); key == systemTraceKey {
			if err := c.readSystemTrace(off); err != nil {
				return err
			}
			continue
		} else if key != "traceEvents" {
			var skip json.RawMessage
			if err := c.dec.Decode(&skip); err != nil {
				return c.bad(c.dec.InputOffset(), err, "bad JSON: %v", err)
			}
			c.lc.advance(c.dec.InputOffset()) // not to keep what was skipped
			continue
		}
		found = true
		if err := c.readEvents(); err != nil {
			return err
		}
	}
	if _, err := c.dec.Token(); err != nil && err != io.EOF {
		return c.bad(c.dec.InputOffset(), err, "bad JSON: %v", err)
	}
	if !found && !c.system {
		return fmt.Errorf("line 1: no \"traceEvents\" array nor \"systemTraceEvents\" text: not a Chrome trace")
	}
	if len(c.slices) == 0 && !c.system {
		return fmt.Errorf("line 1: no sched slices (\"ph\":\"X\",\"cat\":\"sched\"): not a schedplay trace export")
	}
	return nil
}

// readSystemTrace reads the value of "systemTraceEvents" (key at input
// offset off): a string is ftrace text, whose events go to the sink as
// they are read and whose unreadable lines are counted and named as the
// text import's are. The string is held whole while it is read (a JSON
// string has no line to stop at), within the import's input limit.
func (c *chromeReader) readSystemTrace(off int64) error {
	var raw json.RawMessage
	if err := c.dec.Decode(&raw); err != nil {
		return c.bad(off, err, "bad JSON: %v", err)
	}
	at := c.lc.lineAt(off)
	c.lc.advance(c.dec.InputOffset())
	if len(raw) == 0 || raw[0] != '"' {
		c.st.noise++ // Fuchsia's object form
		return nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return fmt.Errorf("line %d: bad \"%s\" string: %v", at, systemTraceKey, err)
	}
	raw = nil
	c.system = true
	in := fmt.Sprintf("%s (at line %d)", systemTraceKey, at)
	st, err := parseText(strings.NewReader(text), FormatFtrace, c.strs, func(ev *event) error {
		if c.sink.log.n >= c.lim.events {
			return fmt.Errorf("line %d of %s: more than %d scheduler events (the import's limit); record a shorter trace", ev.line, in, c.lim.events)
		}
		c.sink.keep(ev)
		return nil
	}, func(pe *ParseError) error {
		pe.In = in
		c.st.badLines++
		if len(c.st.bad) < maxBadLines {
			c.st.bad = append(c.st.bad, pe)
		}
		return nil
	})
	if st != nil {
		c.st.lines += st.lines
		c.st.noise += st.noise
		c.st.lost += st.lost
		c.st.lostLines += st.lostLines
		c.st.ticks += st.ticks
		for k, v := range st.skipped {
			c.st.skipped[k] += v
		}
	}
	return err
}

// readEvents reads the "traceEvents" array, one event at a time.
func (c *chromeReader) readEvents() error {
	if t, err := c.dec.Token(); err != nil || t != json.Delim('[') {
		return c.bad(c.dec.InputOffset(), err, "\"traceEvents\" must be an array")
	}
	for c.dec.More() {
		off := c.dec.InputOffset()
		var ce chromeEvent
		if err := c.dec.Decode(&ce); err != nil {
			return c.bad(off, err, "bad trace event: %v", err)
		}
		line := c.lc.valueLineAt(off)
		c.st.lines++
		if err := c.event(&ce, line); err != nil {
			return err
		}
		if len(c.slices)*2+len(c.instants) > c.lim.events {
			return fmt.Errorf("line %d: more than %d scheduler events (the import's limit); export a shorter window (--trace-window)", line, c.lim.events)
		}
		if err := c.tally.check(c.lim); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
	}
	if _, err := c.dec.Token(); err != nil {
		return c.bad(c.dec.InputOffset(), err, "bad JSON: %v", err)
	}
	return nil
}

// event takes one trace event, read from line.
func (c *chromeReader) event(ce *chromeEvent, line int) error {
	switch {
	case ce.Ph == "M" || ce.Ph == "f":
		c.st.noise++
	case ce.Ph == "X" && ce.Cat == "sched":
		return c.slice(ce, line)
	case ce.Ph == "i" && ce.Name == "select_idle_sibling":
		return c.instant(ce, line)
	case ce.Ph == "s" && ce.Cat == "wakeup":
		ts, err := chromeTime(ce.Ts, line)
		if err != nil {
			return err
		}
		c.flows[trackTime{ce.Tid, ts}] = true
	default:
		c.st.skipped[ce.Ph+":"+ce.Name]++
	}
	return nil
}

// chromeTime converts an event's µs to ns.
func chromeTime(us float64, line int) (int64, error) {
	if math.IsNaN(us) || math.IsInf(us, 0) || us < 0 || us > 9e12 {
		return 0, fmt.Errorf("line %d: time %v µs out of range", line, us)
	}
	return int64(math.Round(us * 1000)), nil
}

// chromeTrack returns the CPU of a track, refusing what is not a CPU
// track.
func chromeTrack(tid, line int, what string) (int32, error) {
	if tid < chromeTidBase {
		return 0, fmt.Errorf("line %d: %s on track %d, not a CPU track (tid %d+cpu)", line, what, tid, chromeTidBase)
	}
	if tid-chromeTidBase > chromeMaxCPU {
		return 0, fmt.Errorf("line %d: %s on track %d: CPU %d out of range", line, what, tid, tid-chromeTidBase)
	}
	return int32(tid - chromeTidBase), nil
}

// chromeTaskID checks a task id (the replay's pid is id+1).
func chromeTaskID(id *int, line int, what string) (int32, error) {
	if id == nil || *id < 0 {
		return 0, fmt.Errorf("line %d: %s", line, what)
	}
	if *id >= math.MaxInt32 {
		return 0, fmt.Errorf("line %d: task id %d out of range", line, *id)
	}
	return int32(*id), nil
}

func (c *chromeReader) slice(ce *chromeEvent, line int) error {
	var a struct {
		Task     *int   `json:"task"`
		Nice     int    `json:"nice"`
		EndState string `json:"end_state"`
	}
	const noTask = "a sched slice without args.task (not a schedplay export?)"
	if err := json.Unmarshal(ce.Args, &a); err != nil {
		return fmt.Errorf("line %d: %s", line, noTask)
	}
	task, err := chromeTaskID(a.Task, line, noTask)
	if err != nil {
		return err
	}
	cpu, err := chromeTrack(ce.Tid, line, "a sched slice")
	if err != nil {
		return err
	}
	s, err := chromeTime(ce.Ts, line)
	if err != nil {
		return err
	}
	d, err := chromeTime(ce.Dur, line)
	if err != nil {
		return err
	}
	name := c.strs.id(ce.Name)
	c.slices = append(c.slices, chromeSlice{line: int32(line), cpu: cpu, task: task, name: name,
		nice: clampInt32(a.Nice), start: s, end: s + d, endState: c.strs.id(a.EndState)})
	c.tally.slice(task, ce.Name, name, stops(a.EndState))
	return nil
}

func (c *chromeReader) instant(ce *chromeEvent, line int) error {
	var a struct {
		Wakee *int `json:"wakee"`
	}
	const noWakee = "a wakeup decision without args.wakee"
	if err := json.Unmarshal(ce.Args, &a); err != nil {
		return fmt.Errorf("line %d: %s", line, noWakee)
	}
	wakee, err := chromeTaskID(a.Wakee, line, noWakee)
	if err != nil {
		return err
	}
	if ce.Tid < chromeTidBase {
		return fmt.Errorf("line %d: a wakeup decision on track %d, not a CPU track", line, ce.Tid)
	}
	cpu, err := chromeTrack(ce.Tid, line, "a wakeup decision")
	if err != nil {
		return err
	}
	ts, err := chromeTime(ce.Ts, line)
	if err != nil {
		return err
	}
	c.instants = append(c.instants, chromeInstant{line: int32(line), cpu: cpu, wakee: wakee, ts: ts})
	c.tally.wakee(wakee)
	return nil
}

// stops reports whether a slice that ends in state ends the task's run
// (a sleep or an exit), which the builder writes as an op; "R" (or
// nothing) is a preemption.
func stops(state string) bool { return state != "" && state[0] != 'R' }

// giveEvents turns the slices into sched_switch events, per CPU in time
// order, and the wakeup decisions into sched_waking events of the task
// current on the CPU, and gives them to sink. What was read is dropped.
func (c *chromeReader) giveEvents(sink *eventSink) {
	refs := c.taskRefs()
	idle := c.idleRefs()
	running := c.strs.id("R")
	// Per CPU, the slices in time order become sched_switch events.
	slices.SortStableFunc(c.slices, func(a, b chromeSlice) int {
		if n := cmp.Compare(a.cpu, b.cpu); n != 0 {
			return n
		}
		return cmp.Compare(a.start, b.start)
	})
	for i, s := range c.slices {
		if i == 0 || c.slices[i-1].cpu != s.cpu || c.slices[i-1].end < s.start {
			sink.keep(&event{line: s.line, ts: s.start, cpu: s.cpu, kind: evSwitch, a: idle(s.cpu), state: running, b: refs(s.task)})
		}
		state := s.endState
		if c.strs.str(state) == "" {
			state = running
		}
		next := idle(s.cpu)
		if i+1 < len(c.slices) && c.slices[i+1].cpu == s.cpu && c.slices[i+1].start == s.end {
			next = refs(c.slices[i+1].task)
		}
		sink.keep(&event{line: s.line, ts: s.end, cpu: s.cpu, kind: evSwitch, pid: s.task + 1, comm: s.name, a: refs(s.task), state: state, b: next})
	}
	for _, in := range c.instants {
		ev := event{line: in.line, ts: in.ts, cpu: in.cpu, kind: evWaking, pid: pidCurrent, a: refs(in.wakee), order: 1}
		if !c.flows[trackTime{chromeTidBase + int(in.cpu), in.ts}] {
			ev.irq = true
		}
		sink.keep(&ev)
	}
	// The export cuts open slices at the end with "R": a slice ending at
	// the very end is not a preemption, but it does no harm either.
	c.slices, c.instants, c.flows = nil, nil, nil
}

// taskRefs returns each task as its events name it: pid id+1 (as the
// ftrace export numbers them), the comm and nice of its last slice in
// the file.
func (c *chromeReader) taskRefs() func(task int32) taskRef {
	refs := map[int32]taskRef{}
	for _, s := range c.slices {
		refs[s.task] = taskRef{comm: s.name, pid: s.task + 1, prio: clampInt16(120 + int(s.nice)), has: true}
	}
	return func(task int32) taskRef {
		r, ok := refs[task]
		if !ok {
			r = taskRef{comm: c.strs.id(fmt.Sprintf("task%d", task)), pid: task + 1, prio: 120, has: true}
			refs[task] = r
		}
		return r
	}
}

// idleRefs returns each CPU's idle task.
func (c *chromeReader) idleRefs() func(cpu int32) taskRef {
	refs := map[int32]taskRef{}
	return func(cpu int32) taskRef {
		r, ok := refs[cpu]
		if !ok {
			r = taskRef{comm: c.strs.id(fmt.Sprintf("swapper/%d", cpu)), prio: 120, has: true}
			refs[cpu] = r
		}
		return r
	}
}

// chromeTally counts, as the events come, what they already commit the
// replay to: a task for each task id not filtered as a kernel thread
// (named by its latest slice, as the conversion names it) and, for each
// of those, an op for each slice that ends in a sleep or an exit (the
// builder writes one for each). Both are lower bounds of what the build
// makes, so a trace past the replay's limits is refused at the line that
// crosses them, not once the whole file is read.
type chromeTally struct {
	keepKthreads bool
	tasks        map[int32]taskTally
	kthread      map[strID]bool // by name
	kept, ops    int
}

type taskTally struct {
	filtered bool
	stops    int
}

func newChromeTally(keepKthreads bool) chromeTally {
	return chromeTally{keepKthreads: keepKthreads, tasks: map[int32]taskTally{}, kthread: map[strID]bool{}}
}

// slice counts a slice of task, named name; stop: it ends in a sleep or
// an exit.
func (t *chromeTally) slice(task int32, name string, id strID, stop bool) {
	k, ok := t.kthread[id]
	if !ok {
		k = !t.keepKthreads && IsKthread(name)
		t.kthread[id] = k
	}
	tt := t.task(task)
	t.setFiltered(&tt, k)
	if stop {
		tt.stops++
		if !tt.filtered {
			t.ops++
		}
	}
	t.tasks[task] = tt
}

// wakee counts a task woken: one without a slice yet is named "task<id>",
// not a kernel thread.
func (t *chromeTally) wakee(task int32) { t.tasks[task] = t.task(task) }

// task returns task's tally, a new task counted as kept.
func (t *chromeTally) task(task int32) taskTally {
	tt, ok := t.tasks[task]
	if !ok {
		t.kept++
	}
	return tt
}

// setFiltered (re)classifies a task whose latest name says it is, or is
// not, a kernel thread.
func (t *chromeTally) setFiltered(tt *taskTally, filtered bool) {
	if tt.filtered == filtered {
		return
	}
	d := 1
	if filtered {
		d = -1
	}
	t.kept += d
	t.ops += d * tt.stops
	tt.filtered = filtered
}

// check refuses what the replay cannot hold.
func (t *chromeTally) check(lim limits) error {
	const fix = "export a shorter window (--trace-window) or fewer CPUs (--trace-cpus)"
	if t.kept > lim.tasks {
		return errTooManyTasks(lim.tasks, fix)
	}
	if t.ops > lim.ops {
		return errTooManyOps(lim.ops, fix)
	}
	return nil
}
