package traceimport

import (
	"bytes"
	"compress/gzip"
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
}

// Import reads a trace and returns the replayable workload and a summary.
// Input that cannot be read is refused with the line (number and text).
func Import(data []byte, opt Options) (*workload.TraceFile, *Summary, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, fmt.Errorf("line 1: bad gzip data: %v", err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, MaxInputBytes+1))
		if err != nil {
			return nil, nil, fmt.Errorf("line 1: bad gzip data: %v", err)
		}
		if len(plain) > MaxInputBytes {
			return nil, nil, fmt.Errorf("line 1: the trace is larger than %d bytes uncompressed (the import's limit)", MaxInputBytes)
		}
		data = plain
	}
	if len(data) > MaxInputBytes {
		return nil, nil, fmt.Errorf("line 1: the trace is larger than %d bytes (the import's limit)", MaxInputBytes)
	}
	f := opt.Format
	if f == "" {
		f = FormatAuto
	}
	switch f {
	case FormatAuto:
		if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			f = FormatChrome
		}
	case FormatFtrace, FormatPerf, FormatChrome:
	default:
		return nil, nil, fmt.Errorf("unknown format %q (allowed: auto, ftrace, perf, chrome)", f)
	}
	var evs []event
	var st *textStats
	var err error
	if f == FormatChrome {
		evs, st, err = parseChrome(data, MaxEvents)
	} else {
		evs, st, err = parseText(data, f, MaxEvents)
		// Per-CPU buffers are merged by time; keep the file's order on
		// ties.
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].ts < evs[j].ts })
	}
	if err != nil {
		return nil, nil, err
	}
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("lines 1-%d: no scheduler events (sched_switch, sched_waking, sched_wakeup, ...); record with -e sched_switch -e sched_waking -e sched_wakeup (see README, \"Your workload: importing a trace\")", st.lines)
	}
	b := newBuilder(opt, evs[0].ts)
	for i := range evs {
		b.handle(&evs[i])
		if b.err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", evs[i].line, b.err)
		}
	}
	b.finish()
	if b.err != nil {
		return nil, nil, b.err
	}
	if len(b.file.Tasks) == 0 {
		return nil, nil, fmt.Errorf("lines 1-%d: no task left to replay: all %d tasks seen are kernel threads or the idle task (--keep-kthreads keeps kernel threads)", st.lines, len(b.all))
	}
	if st.lost > 0 {
		b.dropped[DropLostEvents] += int(min(st.lost, 1<<30))
	}
	format := st.formatSeen
	if format == "" {
		format = f
	}
	sum := &Summary{Format: format, Lines: st.lines, Events: len(evs), Tasks: len(b.file.Tasks),
		Wakes: b.wakes, TimedSleeps: b.timed, Pairs: len(b.pairs), WakePairs: b.pairs, DurationNS: b.file.DurationNS,
		Dropped: b.dropped, SkippedEvents: st.skipped}
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
		"format": string(format), "events": len(evs), "lines": st.lines,
		"start_s": float64(b.t0) / 1e9, "keep_kthreads": opt.KeepKthreads,
		"wakes_kept": b.wakes, "timed_sleeps": b.timed,
	}
	if opt.Source != "" {
		b.file.Source["file"] = opt.Source
	}
	if err := b.file.Validate(); err != nil {
		// The builder only makes valid files; this is a bug, said plainly.
		return nil, nil, fmt.Errorf("internal error: the imported workload does not validate: %v", err)
	}
	return b.file, sum, nil
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
}
