package traceimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
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

type chromeSlice struct {
	line       int
	cpu        int
	task       int
	name       string
	nice       int
	start, end int64
	endState   string
}

// parseChrome reads the simulator's Chrome JSON into events.
func parseChrome(data []byte, limit int) ([]event, *textStats, error) {
	st := &textStats{skipped: map[string]int{}, formatSeen: FormatChrome}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(off, int64(len(data)))], []byte("\n")) }
	bad := func(off int64, format string, args ...any) error {
		return fmt.Errorf("line %d: %s", lineAt(off), fmt.Sprintf(format, args...))
	}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, st, bad(0, "not a Chrome trace (want a JSON object with \"traceEvents\")")
	}
	var slices []chromeSlice
	type instant struct {
		line, cpu, wakee int
		ts               int64
	}
	var instants []instant
	type trackTime struct {
		tid int
		ts  int64
	}
	flows := map[trackTime]bool{}
	found := false
	for dec.More() {
		off := dec.InputOffset()
		kt, err := dec.Token()
		if err != nil {
			return nil, st, bad(off, "bad JSON: %v", err)
		}
		key, _ := kt.(string)
		if key != "traceEvents" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, st, bad(dec.InputOffset(), "bad JSON: %v", err)
			}
			continue
		}
		found = true
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, st, bad(dec.InputOffset(), "\"traceEvents\" must be an array")
		}
		for dec.More() {
			off := dec.InputOffset()
			var ce chromeEvent
			if err := dec.Decode(&ce); err != nil {
				return nil, st, bad(off, "bad trace event: %v", err)
			}
			start := off
			for start < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
				start++
			}
			line := lineAt(start)
			st.lines++
			us := func(v float64) (int64, error) {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 9e12 {
					return 0, fmt.Errorf("line %d: time %v µs out of range", line, v)
				}
				return int64(math.Round(v * 1000)), nil
			}
			switch {
			case ce.Ph == "M":
				st.noise++
			case ce.Ph == "X" && ce.Cat == "sched":
				var a struct {
					Task     *int   `json:"task"`
					Nice     int    `json:"nice"`
					EndState string `json:"end_state"`
				}
				if err := json.Unmarshal(ce.Args, &a); err != nil || a.Task == nil || *a.Task < 0 {
					return nil, st, fmt.Errorf("line %d: a sched slice without args.task (not a schedplay export?)", line)
				}
				if ce.Tid < chromeTidBase {
					return nil, st, fmt.Errorf("line %d: a sched slice on track %d, not a CPU track (tid %d+cpu)", line, ce.Tid, chromeTidBase)
				}
				s, err := us(ce.Ts)
				if err != nil {
					return nil, st, err
				}
				d, err := us(ce.Dur)
				if err != nil {
					return nil, st, err
				}
				slices = append(slices, chromeSlice{line: line, cpu: ce.Tid - chromeTidBase, task: *a.Task, name: ce.Name,
					nice: a.Nice, start: s, end: s + d, endState: a.EndState})
			case ce.Ph == "i" && ce.Name == "select_idle_sibling":
				var a struct {
					Wakee *int `json:"wakee"`
				}
				if err := json.Unmarshal(ce.Args, &a); err != nil || a.Wakee == nil || *a.Wakee < 0 {
					return nil, st, fmt.Errorf("line %d: a wakeup decision without args.wakee", line)
				}
				if ce.Tid < chromeTidBase {
					return nil, st, fmt.Errorf("line %d: a wakeup decision on track %d, not a CPU track", line, ce.Tid)
				}
				ts, err := us(ce.Ts)
				if err != nil {
					return nil, st, err
				}
				instants = append(instants, instant{line: line, cpu: ce.Tid - chromeTidBase, wakee: *a.Wakee, ts: ts})
			case ce.Ph == "s" && ce.Cat == "wakeup":
				ts, err := us(ce.Ts)
				if err != nil {
					return nil, st, err
				}
				flows[trackTime{ce.Tid, ts}] = true
			case ce.Ph == "f":
				st.noise++
			default:
				st.skipped[ce.Ph+":"+ce.Name]++
			}
			if len(slices)*2+len(instants) > limit {
				return nil, st, fmt.Errorf("line %d: more than %d scheduler events (the import's limit); export a shorter window (--trace-window)", line, limit)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, st, bad(dec.InputOffset(), "bad JSON: %v", err)
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, st, bad(dec.InputOffset(), "bad JSON: %v", err)
	}
	if !found {
		return nil, st, fmt.Errorf("line 1: no \"traceEvents\" array: not a Chrome trace")
	}
	if len(slices) == 0 {
		return nil, st, fmt.Errorf("line 1: no sched slices (\"ph\":\"X\",\"cat\":\"sched\"): not a schedplay trace export")
	}
	pid := func(task int) int { return task + 1 } // as the ftrace export numbers them
	names := map[int]string{}
	nices := map[int]int{}
	for _, s := range slices {
		names[s.task], nices[s.task] = s.name, s.nice
	}
	ref := func(task int) taskRef {
		n, ok := names[task]
		if !ok {
			n = fmt.Sprintf("task%d", task)
		}
		return taskRef{comm: n, pid: pid(task), prio: 120 + nices[task], has: true}
	}
	idle := func(cpu int) taskRef { return taskRef{comm: fmt.Sprintf("swapper/%d", cpu), prio: 120, has: true} }
	// Per CPU, the slices in time order become sched_switch events.
	sort.SliceStable(slices, func(i, j int) bool {
		if slices[i].cpu != slices[j].cpu {
			return slices[i].cpu < slices[j].cpu
		}
		return slices[i].start < slices[j].start
	})
	var evs []event
	for i, s := range slices {
		if i == 0 || slices[i-1].cpu != s.cpu || slices[i-1].end < s.start {
			evs = append(evs, event{line: s.line, ts: s.start, cpu: s.cpu, kind: evSwitch, a: idle(s.cpu), state: "R", b: ref(s.task)})
		}
		state := s.endState
		if state == "" {
			state = "R"
		}
		next := idle(s.cpu)
		if i+1 < len(slices) && slices[i+1].cpu == s.cpu && slices[i+1].start == s.end {
			next = ref(slices[i+1].task)
		}
		evs = append(evs, event{line: s.line, ts: s.end, cpu: s.cpu, kind: evSwitch, pid: pid(s.task), comm: s.name, a: ref(s.task), state: state, b: next})
	}
	for _, in := range instants {
		ev := event{line: in.line, ts: in.ts, cpu: in.cpu, kind: evWaking, pid: pidCurrent, a: ref(in.wakee), order: 1}
		if !flows[trackTime{chromeTidBase + in.cpu, in.ts}] {
			ev.irq = true
		}
		evs = append(evs, ev)
	}
	// The export cuts open slices at the end with "R": a slice ending at
	// the very end is not a preemption, but it does no harm either.
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].ts != evs[j].ts {
			return evs[i].ts < evs[j].ts
		}
		return evs[i].order < evs[j].order
	})
	return evs, st, nil
}
