// Trace replay workloads.
//
// A trace workload replays what `schedsim import` extracted from a
// scheduler trace (ftrace text, `perf sched script`, the simulator's own
// exports): per task, its CPU bursts and sleeps in order and, above all,
// who woke whom. The file is JSON (format "schedplay-trace-workload",
// version 1, documented in the README, "Your workload: importing a
// trace"):
//
//	{"format": "schedplay-trace-workload", "version": 1,
//	 "duration_ns": 1000000,
//	 "source": {...},               // free-form: where it came from
//	 "dropped": {"reason": count},  // free-form: what the import lost
//	 "tasks": [
//	   {"name": "pipe/0", "pid": 1, "nice": 0,
//	    "ops": [["run", 2500], ["wake", 1, "sync"], ["wait", 1],
//	            ["sleep", 50000], ["fork", 2], ["exit"]]},
//	   {"name": "child", "pid": 7, "parent": 0, "ops": [...]}]}
//
// Ops, run in order by each task:
//
//   - ["run", ns]: ns of CPU work (engine.Run).
//   - ["wake", t] or ["wake", t, "sync"]: wake task t (its index in
//     "tasks"), with the WF_SYNC hint when "sync". A wake is matched to
//     one ["wait", me] of t: if t is blocked in that wait it is woken now
//     (engine.Wake, from this task, on this task's CPU); otherwise the
//     wake is kept and t's next wait for this task returns at once, as a
//     pipe keeps the byte written before the reader reads. Wakes are
//     therefore never lost and a replay cannot deadlock where the trace
//     did not.
//   - ["wait", t]: block until task t wakes this task (see wake).
//   - ["sleep", ns]: a timer sleep of ns (engine.Sleep: the machine's
//     timer slack is added): what a sleep ended by an interrupt, a
//     kernel thread or an untraced task becomes.
//   - ["fork", t]: create task t (whose "parent" must be this task);
//     it starts runnable with its own ops.
//   - ["exit"]: the task ends (only as the last op). A task whose ops
//     run out ends too.
//
// Tasks without "parent" start at time 0 (a task that appeared later in
// the trace starts with a sleep or a wait). "nice" is -20..19. Every task
// is its own process (the trace does not say which share an address
// space) and may run on every CPU (the trace does not carry affinity).
// The workload is finite: it finishes when every task has ended, so a
// run stops there unless --duration cuts it first; "duration_ns" (the
// traced span) is informative.
//
// Refused with an error naming the task and op: a file over
// TraceMaxBytes, more than TraceMaxTasks tasks or TraceMaxOps ops in all,
// unknown fields or ops, a task index out of range or naming the task
// itself, a forked task that no op of its parent forks (or that two ops
// fork), a task that waits for t more often than t wakes it (that
// wait could never end), tasks that fork each other (a fork cycle: none
// starts) and tasks that wait for each other (a deadlock: each wait is
// for a wake the other issues only after its own wait). Since a wake is
// never lost, whether a replay finishes does not depend on timing, and
// these last checks (tracecheck.go) are exact: a file they accept always
// finishes, given time.
//
// The spec carries the file like rtapp's: "trace:b64=<base64url>", the
// JSON gzip-compressed first (TraceSpec); on the command line
// "trace:file=workload.json" fills b64.

package workload

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"schedplay/engine"
)

// Limits on a trace workload.
const (
	// TraceFormat and TraceVersion identify the file.
	TraceFormat  = "schedplay-trace-workload"
	TraceVersion = 1
	// TraceMaxBytes caps the JSON (uncompressed).
	TraceMaxBytes = 64 << 20
	// TraceMaxTasks caps the number of tasks.
	TraceMaxTasks = 4096
	// TraceMaxOps caps the number of ops over all tasks.
	TraceMaxOps = 4 << 20
	// TraceMaxNS caps one run or sleep (one hour).
	TraceMaxNS = 3600 * int64(engine.Second)
)

func init() {
	register(&Kind{
		Name: "trace",
		Doc:  "replay of a scheduler trace imported with `schedsim import` (run bursts, sleeps, who wakes whom, forks, exits); finishes",
		Keys: []Key{
			{Name: "b64", Type: TextKey, Default: "", Doc: "the imported workload JSON, gzip+base64url-encoded (required; on the command line file= fills it)"},
		},
		build: buildTraceReplay,
		check: func(b *Builder) error {
			_, err := decodeTraceB64(b.Str("b64"))
			return err
		},
		forks: func(b *Builder) string {
			f, err := decodeTraceB64(b.Str("b64"))
			if err != nil {
				return ""
			}
			for i := range f.Tasks {
				if f.Tasks[i].Parent != nil {
					return fmt.Sprintf("the trace's task %d is forked by task %d", i, *f.Tasks[i].Parent)
				}
			}
			return ""
		},
	})
}

// TraceFile is an imported trace workload.
type TraceFile struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	DurationNS int64          `json:"duration_ns"`
	Source     map[string]any `json:"source,omitempty"`
	Dropped    map[string]int `json:"dropped,omitempty"`
	Tasks      []TraceTask    `json:"tasks"`
}

// TraceTask is one task of a trace workload.
type TraceTask struct {
	Name string `json:"name"`
	// PID is the task's pid in the trace (informative).
	PID  int `json:"pid"`
	Nice int `json:"nice"`
	// Parent is the index of the task that forks this one; nil: the task
	// starts at time 0.
	Parent *int      `json:"parent,omitempty"`
	Ops    []TraceOp `json:"ops"`
}

// TraceOpKind is what one op does.
type TraceOpKind uint8

// The ops.
const (
	TraceRun TraceOpKind = iota
	TraceWake
	TraceWait
	TraceSleep
	TraceFork
	TraceExit
)

var traceOpNames = [...]string{"run", "wake", "wait", "sleep", "fork", "exit"}

func (k TraceOpKind) String() string { return traceOpNames[k] }

// TraceOp is one op: NS for run and sleep, Task for wake, wait and fork.
type TraceOp struct {
	Kind TraceOpKind
	NS   int64
	Task int
	Sync bool
}

// MarshalJSON writes the op as an array: ["run", ns], ["wake", t],
// ["wake", t, "sync"], ["exit"].
func (o TraceOp) MarshalJSON() ([]byte, error) {
	switch o.Kind {
	case TraceRun, TraceSleep:
		return fmt.Appendf(nil, `["%s",%d]`, o.Kind, o.NS), nil
	case TraceWake:
		if o.Sync {
			return fmt.Appendf(nil, `["wake",%d,"sync"]`, o.Task), nil
		}
		return fmt.Appendf(nil, `["wake",%d]`, o.Task), nil
	case TraceWait, TraceFork:
		return fmt.Appendf(nil, `["%s",%d]`, o.Kind, o.Task), nil
	case TraceExit:
		return []byte(`["exit"]`), nil
	}
	return nil, fmt.Errorf("trace op: unknown kind %d", o.Kind)
}

// UnmarshalJSON reads the array form.
func (o *TraceOp) UnmarshalJSON(data []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("an op must be an array like [\"run\", 1000], got %s", shorten(string(data), 40))
	}
	if len(parts) == 0 {
		return errors.New("an op must not be empty")
	}
	var name string
	if err := json.Unmarshal(parts[0], &name); err != nil {
		return fmt.Errorf("an op must start with its name (run, wake, wait, sleep, fork, exit), got %s", shorten(string(parts[0]), 40))
	}
	kind := -1
	for i, n := range traceOpNames {
		if n == name {
			kind = i
		}
	}
	if kind < 0 {
		return fmt.Errorf("unknown op %q (allowed: %s)", name, strings.Join(traceOpNames[:], ", "))
	}
	*o = TraceOp{Kind: TraceOpKind(kind)}
	want := 2
	switch o.Kind {
	case TraceExit:
		want = 1
	case TraceWake:
		if len(parts) == 3 {
			var s string
			if json.Unmarshal(parts[2], &s) != nil || s != "sync" {
				return fmt.Errorf("op wake: the third element may only be \"sync\", got %s", shorten(string(parts[2]), 40))
			}
			o.Sync = true
			want = 3
		}
	}
	if len(parts) != want {
		return fmt.Errorf("op %s takes %d element(s), got %d", name, want, len(parts))
	}
	if want == 1 {
		return nil
	}
	var n int64
	if err := json.Unmarshal(parts[1], &n); err != nil {
		return fmt.Errorf("op %s: %s is not an integer", name, shorten(string(parts[1]), 40))
	}
	switch o.Kind {
	case TraceRun, TraceSleep:
		if n < 0 || n > TraceMaxNS {
			return fmt.Errorf("op %s: %d ns out of range (allowed: 0..%d)", name, n, TraceMaxNS)
		}
		o.NS = n
	default:
		if n < 0 || n >= TraceMaxTasks {
			return fmt.Errorf("op %s: task %d out of range (allowed: 0..%d)", name, n, TraceMaxTasks-1)
		}
		o.Task = int(n)
	}
	return nil
}

// TraceSpec returns the workload spec "trace:b64=..." carrying data (the
// workload JSON), gzip-compressed and base64url-encoded.
func TraceSpec(data []byte) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return "trace:b64=" + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// ParseTraceSpec parses a workload spec of kind trace and returns its
// file.
func ParseTraceSpec(text string) (*TraceFile, error) {
	sp, err := Parse(text)
	if err != nil {
		return nil, err
	}
	if sp.Kind != "trace" {
		return nil, fmt.Errorf("workload %q is of kind %s, not trace", shorten(text, 60), sp.Kind)
	}
	for _, p := range sp.Params {
		if p.Key == "b64" {
			return decodeTraceB64(p.Value)
		}
	}
	return nil, fmt.Errorf("trace: the spec has no b64= key (build it with TraceSpec)")
}

func decodeTraceB64(s string) (*TraceFile, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("trace: b64= is empty; it must hold the workload JSON, gzip+base64url-encoded")
	}
	if len(s) > TraceMaxBytes*4/3+8 {
		return nil, fmt.Errorf("trace: b64= is longer than the %d-byte limit", TraceMaxBytes)
	}
	var data []byte
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
		d, err := enc.DecodeString(s)
		if err == nil {
			data, firstErr = d, nil
			break
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, fmt.Errorf("trace: b64= is not valid base64url: %v", firstErr)
	}
	return ParseTraceFile(data)
}

// ParseTraceFile reads a trace workload file: JSON, or the same
// gzip-compressed.
func ParseTraceFile(data []byte) (*TraceFile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("trace: bad gzip data: %v", err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, TraceMaxBytes+1))
		if err != nil {
			return nil, fmt.Errorf("trace: bad gzip data: %v", err)
		}
		data = plain
	}
	if len(data) > TraceMaxBytes {
		return nil, fmt.Errorf("trace: the workload JSON is larger than the %d-byte limit (TraceMaxBytes)", TraceMaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f TraceFile
	if err := dec.Decode(&f); err != nil {
		return nil, traceJSONError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trace: data after the workload object")
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// traceJSONError adds the line to a decoding error where the decoder
// says where it is.
func traceJSONError(data []byte, err error) error {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off >= 0 && off <= int64(len(data)) {
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		return fmt.Errorf("trace: line %d: %v", line, err)
	}
	return fmt.Errorf("trace: %v", err)
}

// Validate checks a file for everything that the replay relies on.
func (f *TraceFile) Validate() error {
	if f.Format != TraceFormat {
		return fmt.Errorf("trace: \"format\" is %q; a trace workload says %q (made by schedsim import)", f.Format, TraceFormat)
	}
	if f.Version != TraceVersion {
		return fmt.Errorf("trace: version %d is not supported (allowed: %d)", f.Version, TraceVersion)
	}
	if f.DurationNS < 0 {
		return fmt.Errorf("trace: duration_ns %d is negative", f.DurationNS)
	}
	n := len(f.Tasks)
	if n == 0 {
		return fmt.Errorf("trace: the file has no tasks")
	}
	if n > TraceMaxTasks {
		return fmt.Errorf("trace: %d tasks, more than the limit of %d (TraceMaxTasks)", n, TraceMaxTasks)
	}
	ops := 0
	for i := range f.Tasks {
		ops += len(f.Tasks[i].Ops)
	}
	if ops > TraceMaxOps {
		return fmt.Errorf("trace: %d ops, more than the limit of %d (TraceMaxOps)", ops, TraceMaxOps)
	}
	forkedBy := make([]int, n)
	for i := range forkedBy {
		forkedBy[i] = -1
	}
	// waits[i][j]: how often i waits for j; wakes likewise.
	type pair struct{ a, b int }
	waits, wakes := map[pair]int{}, map[pair]int{}
	for i := range f.Tasks {
		t := &f.Tasks[i]
		where := func(k int) string { return fmt.Sprintf("trace: task %d (%q), op %d", i, shorten(t.Name, 40), k) }
		if t.Nice < -20 || t.Nice > 19 {
			return fmt.Errorf("trace: task %d (%q): nice %d out of range (allowed: -20..19)", i, shorten(t.Name, 40), t.Nice)
		}
		if t.Parent != nil && (*t.Parent < 0 || *t.Parent >= n || *t.Parent == i) {
			return fmt.Errorf("trace: task %d (%q): parent %d is not another task (allowed: 0..%d)", i, shorten(t.Name, 40), *t.Parent, n-1)
		}
		for k, op := range t.Ops {
			switch op.Kind {
			case TraceWake, TraceWait, TraceFork:
				if op.Task >= n {
					return fmt.Errorf("%s: %s names task %d, but there are %d tasks", where(k), op.Kind, op.Task, n)
				}
				if op.Task == i {
					return fmt.Errorf("%s: %s names the task itself", where(k), op.Kind)
				}
			}
			switch op.Kind {
			case TraceWake:
				wakes[pair{i, op.Task}]++
			case TraceWait:
				waits[pair{i, op.Task}]++
			case TraceExit:
				if k != len(t.Ops)-1 {
					return fmt.Errorf("%s: exit must be the task's last op", where(k))
				}
			case TraceFork:
				c := &f.Tasks[op.Task]
				if c.Parent == nil || *c.Parent != i {
					return fmt.Errorf("%s: fork of task %d, whose \"parent\" is not %d", where(k), op.Task, i)
				}
				if forkedBy[op.Task] >= 0 {
					return fmt.Errorf("%s: task %d is forked twice", where(k), op.Task)
				}
				forkedBy[op.Task] = i
			}
		}
	}
	for i := range f.Tasks {
		if f.Tasks[i].Parent != nil && forkedBy[i] < 0 {
			return fmt.Errorf("trace: task %d (%q) has parent %d, but no op of task %d forks it", i, shorten(f.Tasks[i].Name, 40), *f.Tasks[i].Parent, *f.Tasks[i].Parent)
		}
	}
	for p, w := range waits {
		if wakes[pair{p.b, p.a}] < w {
			return fmt.Errorf("trace: task %d (%q) waits %d times for task %d (%q), which wakes it only %d times: the last wait would never end",
				p.a, shorten(f.Tasks[p.a].Name, 40), w, p.b, shorten(f.Tasks[p.b].Name, 40), wakes[pair{p.b, p.a}])
		}
	}
	if err := f.checkForkCycles(); err != nil {
		return err
	}
	return f.checkDeadlock()
}

// ---- replay ----

type traceReplay struct {
	f     *TraceFile
	tasks []*traceTask
	// tokens[waker*n+wakee]: wakes issued and not yet consumed by a wait.
	tokens map[int64]int32
	live   int
	// Wakes counts the wakes issued as engine wakeups; Banked those that
	// found their wakee not yet waiting.
	Wakes, Banked int64
}

type traceTask struct {
	r      *traceReplay
	idx    int
	id     engine.TaskID
	spec   engine.TaskSpec
	ops    []TraceOp
	pc     int
	parked int // the task it waits for, -1 when not waiting
	done   bool
}

func buildTraceReplay(b *Builder) error {
	f, err := decodeTraceB64(b.Str("b64"))
	if err != nil {
		return err
	}
	_, err = addTraceReplay(b, f)
	return err
}

func addTraceReplay(b *Builder, f *TraceFile) (*traceReplay, error) {
	r := &traceReplay{f: f, tokens: map[int64]int32{}}
	forked := 0
	for i := range f.Tasks {
		t := &f.Tasks[i]
		tt := &traceTask{r: r, idx: i, ops: t.Ops, parked: -1}
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("task%d", i)
		}
		tt.spec = b.TaskSpec(name, tt)
		tt.spec.Nice = t.Nice
		tt.spec.MeasureWakeups = true
		tt.spec.MM = b.Sim.NewAddressSpace()
		r.tasks = append(r.tasks, tt)
		if t.Parent != nil {
			forked++
		}
	}
	if forked > 0 {
		if err := b.Sim.ReserveTasks(forked); err != nil {
			return nil, err
		}
	}
	b.Sim.SetFinite(b.ID)
	r.live = len(r.tasks)
	for i, tt := range r.tasks {
		if f.Tasks[i].Parent != nil {
			continue
		}
		id, err := b.Spawn(tt.spec)
		if err != nil {
			return nil, err
		}
		tt.id = id
	}
	return r, nil
}

func (r *traceReplay) key(waker, wakee int) int64 {
	return int64(waker)*int64(len(r.tasks)) + int64(wakee)
}

// Next implements engine.Program.
func (t *traceTask) Next(ctx *engine.Ctx) engine.Action {
	r := t.r
	for t.pc < len(t.ops) {
		op := t.ops[t.pc]
		t.pc++
		switch op.Kind {
		case TraceRun:
			if op.NS > 0 {
				return engine.Run(op.NS)
			}
		case TraceSleep:
			if op.NS > 0 {
				return engine.Sleep(op.NS)
			}
		case TraceWake:
			w := r.tasks[op.Task]
			if w.parked == t.idx {
				w.parked = -1
				r.Wakes++
				return engine.Wake(w.id, op.Sync)
			}
			r.tokens[r.key(t.idx, op.Task)]++
			r.Banked++
		case TraceWait:
			k := r.key(op.Task, t.idx)
			if r.tokens[k] > 0 {
				r.tokens[k]--
				continue
			}
			t.parked = op.Task
			return engine.Block()
		case TraceFork:
			c := r.tasks[op.Task]
			id, err := ctx.SpawnReserved(c.spec)
			if err != nil {
				// addTraceReplay reserved one task per fork.
				panic(fmt.Sprintf("trace: cannot fork task %d: %v", op.Task, err))
			}
			c.id = id
		case TraceExit:
			t.pc = len(t.ops)
		}
	}
	if !t.done {
		t.done = true
		r.live--
		if r.live == 0 {
			ctx.Finish()
		}
	}
	return engine.Exit()
}
