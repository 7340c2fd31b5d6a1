package traceimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"schedplay/engine/workload"
)

// Limits of the import.
const (
	// MaxInputBytes caps the trace read (uncompressed).
	MaxInputBytes = 1 << 30
	// MaxEvents caps the scheduler events used.
	MaxEvents = 20 << 20
)

// Options control an import.
type Options struct {
	// Format of the input; "" or FormatAuto: detect.
	Format Format
	// KeepKthreads keeps kernel threads (kworker/*, ksoftirqd/*, ...) as
	// tasks; the idle task (pid 0) is never a task.
	KeepKthreads bool
	// Source is recorded in the file's "source" (the input's name).
	Source string
}

// Summary says what an import kept and what it could not.
type Summary struct {
	Format      Format
	Lines       int
	Events      int // scheduler events used
	Tasks       int // tasks in the workload
	Forked      int // of which created by a traced fork
	Wakes       int // sleeps ended by a traced task: replayed as that task's wakeup
	TimedSleeps int // sleeps replayed as timed sleeps
	Pairs       int // distinct waker→wakee pairs kept
	// WakePairs counts the wakeups kept per waker→wakee pair of trace
	// pids.
	WakePairs     map[[2]int]int
	DurationNS    int64          // traced span
	Dropped       map[string]int // what could not be kept, by reason
	SkippedEvents map[string]int // events of other types, by name
	// BadLines counts the lines that could not be read: the import went
	// on without them. Unreadable names the first few (line, text, why).
	BadLines   int
	Unreadable []*ParseError
	// TickEvents counts the events whose timestamp is an integer: the
	// trace clock counts ticks (counter, x86-tsc, uptime), not time, and
	// the import reads a tick as a ns.
	TickEvents int

	lineBytes int64 // Chrome: bytes examined to number the lines (tests)
}

// limits bound an import (tests lower them, to cross them cheaply).
type limits struct {
	inputBytes int64 // uncompressed
	events     int
	tasks, ops int // the replay's: workload.TraceMaxTasks, TraceMaxOps
}

var importLimits = limits{inputBytes: MaxInputBytes, events: MaxEvents, tasks: workload.TraceMaxTasks, ops: workload.TraceMaxOps}

// Import reads a trace held in memory: ImportReader of its bytes.
func Import(data []byte, opt Options) (*workload.TraceFile, *Summary, error) {
	return ImportReader(bytes.NewReader(data), opt)
}

// ImportReader reads a trace and returns the replayable workload and a
// summary. Input that cannot be read is refused with the line (number
// and text).
//
// It reads r as a stream, never whole: gzip (recognised by its first
// bytes) is decompressed as it is read, and the limits — MaxInputBytes
// (uncompressed), MaxEvents, and the replay's workload.TraceMaxTasks and
// TraceMaxOps — refuse a trace at the line that crosses them (for text
// whose lines go back in time, the task and op limits apply once it is
// read and sorted). What it holds until the end is the events (64 bytes
// each, see eventLog) and the workload being built.
func ImportReader(r io.Reader, opt Options) (*workload.TraceFile, *Summary, error) {
	return importStream(r, opt, importLimits)
}

func importStream(r io.Reader, opt Options, lim limits) (*workload.TraceFile, *Summary, error) {
	f := opt.Format
	if f == "" {
		f = FormatAuto
	}
	switch f {
	case FormatAuto, FormatFtrace, FormatPerf, FormatChrome:
	default:
		return nil, nil, fmt.Errorf("unknown format %q (allowed: auto, ftrace, perf, chrome)", f)
	}
	in, err := openInput(r, lim.inputBytes)
	if err != nil {
		return nil, nil, err
	}
	src := io.Reader(in)
	if f == FormatAuto {
		var isJSON bool
		if src, isJSON, err = opensJSON(in); err != nil {
			return nil, nil, err
		}
		if isJSON {
			f = FormatChrome
		}
	}
	strs := newStrTable()
	var st *textStats
	var sink *eventSink
	if f == FormatChrome {
		sink = newEventSink(opt, lim, strs, false)
		st, err = parseChrome(src, opt, lim, strs, sink)
	} else {
		sink = newEventSink(opt, lim, strs, true)
		var bad textStats
		st, err = parseText(src, f, strs, func(ev *event) error { return sink.add(ev, "cut the trace to a shorter window") },
			func(pe *ParseError) error {
				bad.badLines++
				if len(bad.bad) < maxBadLines {
					bad.bad = append(bad.bad, pe)
				}
				return nil
			})
		if st != nil {
			st.badLines, st.bad = bad.badLines, bad.bad
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if sink.log.n == 0 && st.badLines > 0 {
		// Nothing could be read: the first line that could not is why.
		return nil, nil, fmt.Errorf("%v; no scheduler event could be read (%d unreadable lines)", st.bad[0], st.badLines)
	}
	if sink.log.n == 0 {
		return nil, nil, fmt.Errorf("lines 1-%d: no scheduler events (sched_switch, sched_waking, sched_wakeup, ...); record with -e sched_switch -e sched_waking -e sched_wakeup (see README, \"Your workload: importing a trace\")", st.lines)
	}
	b, err := sink.built()
	if err != nil {
		return nil, nil, err
	}
	return summarize(b, st, f, sink.log.n, opt)
}

// summarize closes the build and writes what it kept and lost into the
// file's "source" and "dropped" and the summary.
func summarize(b *builder, st *textStats, f Format, events int, opt Options) (*workload.TraceFile, *Summary, error) {
	b.finish()
	if b.err != nil {
		return nil, nil, b.err
	}
	if len(b.file.Tasks) == 0 {
		why := ""
		if st.badLines > 0 {
			why = fmt.Sprintf("; %d lines could not be read, the first: %v", st.badLines, st.bad[0])
		}
		return nil, nil, fmt.Errorf("lines 1-%d: no task left to replay: all %d tasks seen are kernel threads or the idle task (--keep-kthreads keeps kernel threads)%s", st.lines, len(b.all), why)
	}
	if st.badLines > 0 {
		b.dropped[DropUnreadable] = st.badLines
	}
	if st.lost > 0 {
		b.dropped[DropLostEvents] += int(min(st.lost, 1<<30))
	}
	format := st.formatSeen
	if format == "" {
		format = f
	}
	sum := &Summary{Format: format, Lines: st.lines, Events: events, Tasks: len(b.file.Tasks),
		Wakes: b.wakes, TimedSleeps: b.timed, Pairs: len(b.pairs), WakePairs: b.pairs, DurationNS: b.file.DurationNS,
		Dropped: b.dropped, SkippedEvents: st.skipped, BadLines: st.badLines, Unreadable: st.bad, TickEvents: st.ticks, lineBytes: st.lineBytes}
	for i := range b.file.Tasks {
		if b.file.Tasks[i].Parent != nil {
			sum.Forked++
		}
	}
	b.file.Dropped = map[string]int{}
	for k, v := range b.dropped {
		b.file.Dropped[k] = v
	}
	for k, v := range st.skipped {
		b.file.Dropped[DropEventTypePref+k] = v
	}
	b.file.Source = map[string]any{
		"format": string(format), "events": events, "lines": st.lines,
		"start_s": float64(b.t0) / 1e9, "keep_kthreads": opt.KeepKthreads,
		"wakes_kept": b.wakes, "timed_sleeps": b.timed,
	}
	if opt.Source != "" {
		b.file.Source["file"] = opt.Source
	}
	if st.ticks > 0 {
		b.file.Source["timestamps"] = "integer ticks, read as ns"
	}
	if err := b.file.Validate(); err != nil {
		// The builder only makes valid files; this is a bug, said plainly.
		return nil, nil, fmt.Errorf("internal error: the imported workload does not validate: %v", err)
	}
	return b.file, sum, nil
}

// eventSink takes the events as they are read. For text, which comes in
// time order from every tracer's merged output, it builds each at once,
// so that the replay's limits (tasks, ops) refuse a trace at the line
// that crosses them; it keeps them all too, in case a later line goes
// back in time (per-CPU buffers one after the other): then what was
// built is dropped, and the events are merged by time and built once the
// trace is read, as for Chrome JSON (whose slices come in no time order).
type eventSink struct {
	opt  Options
	lim  limits
	strs *strTable
	log  eventLog
	// b builds the events as they come; nil once one came before the
	// one before it (or for Chrome).
	b      *builder
	lastTS int64
}

func newEventSink(opt Options, lim limits, strs *strTable, streaming bool) *eventSink {
	s := &eventSink{opt: opt, lim: lim, strs: strs}
	if streaming {
		// The first event is the earliest while the events are in order.
		s.b = newBuilder(opt, lim, strs, 0)
	}
	return s
}

// add takes a text event; cut says how to make a trace smaller.
func (s *eventSink) add(ev *event, cut string) error {
	if s.log.n >= s.lim.events {
		return fmt.Errorf("line %d: more than %d scheduler events (the import's limit); %s", ev.line, s.lim.events, cut)
	}
	switch {
	case s.log.n == 0 && s.b != nil:
		s.b.t0, s.b.tEnd = ev.ts, ev.ts
	case ev.ts < s.lastTS:
		s.b = nil // out of time order: built at the end
	}
	s.lastTS = ev.ts
	s.log.add(ev)
	if s.b != nil {
		s.b.handle(ev)
		if s.b.err != nil {
			return fmt.Errorf("line %d: %v", ev.line, s.b.err)
		}
	}
	return nil
}

// keep takes an event to be built at the end.
func (s *eventSink) keep(ev *event) {
	s.b = nil
	s.log.add(ev)
}

// built returns the build of every event, in time order.
func (s *eventSink) built() (*builder, error) {
	if s.b != nil {
		return s.b, nil // built as read
	}
	var err error
	s.log.eachByTime(func(ev *event) bool {
		if s.b == nil {
			s.b = newBuilder(s.opt, s.lim, s.strs, ev.ts)
		}
		s.b.handle(ev)
		if s.b.err != nil {
			err = fmt.Errorf("line %d: %v", ev.line, s.b.err)
			return false
		}
		return true
	})
	return s.b, err
}

// Marshal renders a workload file as JSON: one task per line block, one
// op array per line group, readable and diffable.
func Marshal(f *workload.TraceFile) ([]byte, error) {
	var buf bytes.Buffer
	head := *f
	head.Tasks = nil
	h, err := json.MarshalIndent(struct {
		Format     string         `json:"format"`
		Version    int            `json:"version"`
		DurationNS int64          `json:"duration_ns"`
		Source     map[string]any `json:"source,omitempty"`
		Dropped    map[string]int `json:"dropped,omitempty"`
	}{head.Format, head.Version, head.DurationNS, head.Source, head.Dropped}, "", "  ")
	if err != nil {
		return nil, err
	}
	buf.Write(h[:len(h)-2]) // drop "\n}"
	buf.WriteString(",\n  \"tasks\": [")
	for i, t := range f.Tasks {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		fmt.Fprintf(&buf, "\n    {\"name\": %s, \"pid\": %d, \"nice\": %d", name, t.PID, t.Nice)
		if t.Parent != nil {
			fmt.Fprintf(&buf, ", \"parent\": %d", *t.Parent)
		}
		buf.WriteString(", \"ops\": [")
		for k, op := range t.Ops {
			if k > 0 {
				buf.WriteByte(',')
			}
			if k%8 == 0 {
				buf.WriteString("\n      ")
			}
			b, err := op.MarshalJSON()
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
		buf.WriteString("]}")
	}
	buf.WriteString("\n  ]\n}\n")
	return buf.Bytes(), nil
}

// Report writes the summary for a person: what was kept, what was not.
func (s *Summary) Report(w io.Writer) {
	fmt.Fprintf(w, "read %d lines (%s): %d scheduler events over %.6f s\n", s.Lines, s.Format, s.Events, float64(s.DurationNS)/1e9)
	fmt.Fprintf(w, "kept %d tasks (%d created by a traced fork); %d wakeups by a traced task kept as that task's wakeup (%d waker→wakee pairs); %d sleeps replayed as timed sleeps\n",
		s.Tasks, s.Forked, s.Wakes, s.Pairs, s.TimedSleeps)
	if s.TickEvents > 0 {
		fmt.Fprintf(w, "%d events have an integer timestamp (a trace clock counting ticks: counter, x86-tsc, uptime), read as ns: durations are in ticks\n", s.TickEvents)
	}
	if len(s.Dropped) == 0 && len(s.SkippedEvents) == 0 {
		fmt.Fprintln(w, "nothing lost")
		return
	}
	fmt.Fprintln(w, "not kept:")
	keys := make([]string, 0, len(s.Dropped))
	for k := range s.Dropped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %8d  %s\n", s.Dropped[k], k)
	}
	if len(s.SkippedEvents) > 0 {
		var parts []string
		keys = keys[:0]
		for k := range s.SkippedEvents {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		total := 0
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.SkippedEvents[k]))
			total += s.SkippedEvents[k]
		}
		fmt.Fprintf(w, "  %8d  events of other types skipped (%s)\n", total, strings.Join(parts, ", "))
	}
	for _, pe := range s.Unreadable {
		fmt.Fprintf(w, "  unreadable %v\n", pe)
	}
	if more := s.BadLines - len(s.Unreadable); more > 0 {
		fmt.Fprintf(w, "  unreadable: %d more lines\n", more)
	}
}
