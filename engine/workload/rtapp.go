// rt-app workloads.
//
// rt-app (https://github.com/scheduler-tools/rt-app, doc/tutorial.txt) is
// the JSON workload format scheduler developers already write. This file
// accepts the SCHED_OTHER subset of it as the open format for custom
// workloads: ParseRTApp reads a file, RTAppSpec wraps it into a workload
// spec "rtapp:b64=<base64url JSON>" that a share link can carry
// (RTAppFileSpec does both and keeps the parse for the spec), and the
// registered kind "rtapp" builds it.
//
// The JSON is read the way rt-app's json-c reads it: /* */ and // comments
// and trailing commas are accepted, and object members keep their file
// order. Duplicate keys are kept as separate events, in order, which is
// what rt-app's workgen script achieves by renaming them "run1", "run2"...;
// an event key may therefore be the event name followed by digits.
//
// Supported:
//
//   - "global": "duration" (seconds, -1 = none; exposed as RTApp.Duration
//     for the caller to use as the run length), "default_policy" (only
//     SCHED_OTHER), "calibration" (validated — "CPU<n>" or ns per loop —
//     and ignored: a "run" event is work at the machine's nominal
//     single-thread speed, which is what calibration measures), and
//     "lock_pages", "pi_enabled", "logdir", "log_basename", "log_size",
//     "ftrace", "gnuplot", "io_device", "mem_buffer_size",
//     "cumulative_slack", "spacing", "frag" (accepted, ignored: they do not change
//     SCHED_OTHER scheduling; PI does not change a fair task's weight).
//     A top-level "resources" object is accepted and ignored, as rt-app
//     creates resources from the events anyway.
//   - "tasks": name → task with "instance" (copies, 0..4096; threads are
//     named "name" for one instance and "name-0".."name-(N-1)" for more),
//     "loop" (-1 forever, or N ≥ 1), "priority" or "nice" (the nice value,
//     -20..19, as rt-app uses priority for SCHED_OTHER), "cpus" (array of
//     CPU ids: the affinity), "policy" (SCHED_OTHER only), "delay" (µs
//     before the first loop), and either events directly in the task or
//     "phases": an ordered object of phases, each with "loop" (default 1,
//     -1 forever) and events. A task's "loop" counts passes over all its
//     phases; without "phases" it counts passes over its events.
//     "nodes_membind"/"membind_nodes" are accepted and ignored (no memory
//     model). Phase-level "policy" must be SCHED_OTHER and phase-level
//     "cpus"/"priority"/"nice" must equal the task's (the engine cannot
//     change a running task's affinity or nice from its program).
//   - events, run in file order:
//     "run" (µs of CPU work: engine.Run, slowed by a busy SMT sibling),
//     "runtime" (µs of wall-clock busy loop: engine.Spin, as rt-app
//     checks the clock), "sleep" (µs timer sleep, plus timer slack),
//     "timer" {"ref", "period" µs, "mode" relative|absolute}: rt-app's
//     timer — each use advances the timer's deadline by one period and
//     sleeps until it; a timer starts at the first user's start time
//     (after its delay); when the deadline has already passed, "relative"
//     re-anchors the timer at now and "absolute" keeps it, so following
//     loops run back to back until they catch up. A ref is shared by every
//     task and instance that names it (each use advances it) except refs
//     starting with "unique", which are per thread; if any use of a timer
//     says "absolute" the timer is absolute (as in rt-app).
//     "resume" "name" (wakes thread "name", or every instance of task
//     "name") and "suspend" ("" or the task's own name: block until
//     resumed). As in rt-app (src/rt-app.c: suspend is pthread_cond_wait
//     on the thread's own condition variable, resume a
//     pthread_cond_broadcast on the target's), a resume wakes only a
//     thread suspended at that moment: one that arrives before the
//     suspend is lost, and the suspend then waits for the next resume.
//     "signal" "ref" wakes the longest waiter of condition variable ref,
//     "broad" "ref" wakes all of them, "wait" {"ref", "mutex"} blocks on
//     it (pthread_cond_wait: the mutex, if the thread holds it, is released
//     while waiting and re-acquired after), "sync" {"ref", "mutex"} is
//     signal then wait. A signal with no waiter is lost, as with pthreads.
//     A "wait" value may also be a plain string (the ref).
//     "barrier" "ref": the last arriving thread wakes all the others; the
//     number of parties is, as in rt-app, the number of barrier events
//     naming ref, each counted once per instance of its task.
//     "lock"/"unlock" "ref": a mutex as glibc implements it — a contended
//     lock blocks, unlock wakes the longest waiter, which retries (another
//     thread may take the mutex first).
//
// The spec's common keys still apply: nice= and cpus= are the defaults
// for tasks whose file entry sets no "priority"/"nice" or "cpus";
// latency_nice= and smt_pressure= apply to every thread.
//
// Every thread records its wakeup latencies (MeasureWakeups) and counts
// one operation per completed phase loop (one rt-app log line). When every
// task has a finite loop count the workload is finite: the last thread to
// exit marks it finished (Sim.AllFinished).
//
// Rejected with an error naming the task, phase and field: policies other
// than SCHED_OTHER (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE, SCHED_IDLE) and
// their "dl-runtime"/"dl-period"/"dl-deadline"/"period"/"deadline" keys,
// "util_min"/"util_max" (uclamp is not modelled), "taskgroup" (no
// cgroups), the events "mem" and "iorun" (no memory or I/O model),
// "yield" (no sched_yield in the engine) and "fork" (threads are created
// at start only), phase-level affinity or nice changes, unknown keys, and
// references that cannot work: a resume of an unknown task, a suspend
// nobody resumes, a wait nobody signals, a signal nobody waits for, an
// unlock of a mutex the task never locks, a lock it never unlocks, and a
// lock of a mutex the thread already holds at that point of its events
// (including the next pass of a loop): rt-app's mutexes are not
// recursive, so the thread would block there forever.
//
// Each phase loop that took no simulated time at all (for example only
// lost signals and a timer already behind) is charged rtappGuardNS of
// work, so a program can never spin in zero time.

package workload

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	// encoding/json, not goccy: its Decoder.InputOffset is exact after each
	// Token, which the line numbers of errors come from.
	"encoding/json"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// Limits on what an rt-app file may ask for.
const (
	// RTAppMaxThreads caps the total number of threads (sum of instances).
	RTAppMaxThreads = 4096
	// RTAppMaxBytes caps the size of the JSON.
	RTAppMaxBytes  = 1 << 20
	rtappMaxEvents = 1 << 16
	rtappMaxDepth  = 64
	rtappMaxUS     = 3600 * 1000 * 1000 // one hour, in µs
	rtappMaxSecs   = 7 * 24 * 3600      // global duration
	rtappMaxCPU    = 1 << 16
	// rtappGuardNS is charged for a phase loop that took no time.
	rtappGuardNS = 1000
)

func init() {
	register(&Kind{
		Name: "rtapp",
		Doc:  "an rt-app JSON workload (SCHED_OTHER subset: run/runtime/sleep/timer, resume/suspend, signal/broad/wait/sync, barrier, lock/unlock); build the spec with RTAppSpec",
		Keys: []Key{
			{Name: "b64", Type: TextKey, Default: "", Doc: "the rt-app JSON file, base64url-encoded (required; on the command line file= fills it)"},
		},
		build: buildRTApp,
		check: func(b *Builder) error {
			_, err := parseRTAppB64(b.Str("b64"))
			return err
		},
	})
}

// RTApp is a parsed rt-app file.
type RTApp struct {
	// Duration is global.duration in ns; 0 when the file sets none (-1).
	Duration int64
	// Tasks in file order.
	Tasks []RTAppTask
}

// RTAppTask is one entry of "tasks".
type RTAppTask struct {
	Name      string
	Instances int
	// Loop is how many passes over all phases the task makes; -1: forever.
	Loop int64
	// Nice is "priority"/"nice"; HasNice says whether the file set it.
	Nice    int
	HasNice bool
	// CPUs is the affinity; nil: the spec's cpus (default all).
	CPUs []int
	// Delay before the first loop, ns.
	Delay  int64
	Phases []RTAppPhase
	line   int
}

// RTAppPhase is one phase; a task without "phases" has one phase named "".
type RTAppPhase struct {
	Name string
	// Loop is how many times the phase's events run in a row; -1: forever.
	Loop   int64
	Events []RTAppEvent
}

// RTAppEvent is one event. Kind is the canonical event name ("run",
// "runtime", "sleep", "timer", "resume", "suspend", "signal", "broad",
// "wait", "sync", "barrier", "lock", "unlock"); Key is the key as written.
type RTAppEvent struct {
	Key  string
	Kind string
	// NS is the duration of run/runtime/sleep and the period of timer.
	NS int64
	// Ref names the timer, task, condition variable, barrier or mutex.
	Ref string
	// Mutex is the mutex of wait/sync ("" when none).
	Mutex string
	// Absolute is a timer's mode.
	Absolute bool
	line     int
}

// Threads is the total number of threads the file creates.
func (a *RTApp) Threads() int {
	n := 0
	for i := range a.Tasks {
		n += a.Tasks[i].Instances
	}
	return n
}

// Finite reports whether every thread ends by itself (every task with
// instances has a finite loop count and no phase loops forever).
func (a *RTApp) Finite() bool {
	for i := range a.Tasks {
		t := &a.Tasks[i]
		if t.Instances == 0 {
			continue
		}
		if t.Loop < 0 {
			return false
		}
		for _, p := range t.Phases {
			if p.Loop < 0 {
				return false
			}
		}
	}
	return true
}

// threadNames returns the names of task t's threads.
func (t *RTAppTask) threadNames() []string {
	if t.Instances == 1 {
		return []string{t.Name}
	}
	out := make([]string, t.Instances)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", t.Name, i)
	}
	return out
}

// RTAppSpec returns the workload spec "rtapp:b64=..." carrying data. The
// JSON is compacted first when it parses (comments and trailing commas
// removed), to keep share links short; otherwise it is carried as is and
// the error surfaces when the spec is built.
func RTAppSpec(data []byte) string {
	if clean, err := jsoncClean(data); err == nil {
		var buf bytes.Buffer
		if json.Compact(&buf, clean) == nil {
			data = buf.Bytes()
		}
	}
	return "rtapp:b64=" + base64.RawURLEncoding.EncodeToString(data)
}

// ParseRTAppSpec parses a workload spec of kind rtapp and returns its
// rt-app file, so a caller can read e.g. its Duration (a copy of the
// parse kept for the spec: see rtapp_cache.go).
func ParseRTAppSpec(text string) (*RTApp, error) {
	sp, err := Parse(text)
	if err != nil {
		return nil, err
	}
	if sp.Kind != "rtapp" {
		return nil, fmt.Errorf("workload %q is of kind %s, not rtapp", text, sp.Kind)
	}
	for _, p := range sp.Params {
		if p.Key == "b64" {
			app, err := parseRTAppB64(p.Value)
			if err != nil {
				return nil, err
			}
			return app.clone(), nil
		}
	}
	return nil, fmt.Errorf("rtapp: the spec has no b64= key (build it with RTAppSpec)")
}

func decodeRTAppB64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("rtapp: b64= is empty; it must hold the rt-app JSON, base64url-encoded")
	}
	if len(s) > RTAppMaxBytes*4/3+8 {
		return nil, fmt.Errorf("rtapp: b64= is longer than the %d-byte limit on the JSON", RTAppMaxBytes)
	}
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
		data, err := enc.DecodeString(s)
		if err == nil {
			return data, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("rtapp: b64= is not valid base64url: %v", firstErr)
}

func buildRTApp(b *Builder) error {
	app, err := parseRTAppB64(b.Str("b64"))
	if err != nil {
		return err
	}
	_, err = app.build(b)
	return err
}

// ---- parsing ----

// rtappEvents are the event names, longest prefix first ("runtime" before
// "run"); unsupported ones carry the reason they are refused.
var rtappEvents = []struct{ name, refused string }{
	{"runtime", ""}, {"run", ""}, {"sleep", ""}, {"timer", ""},
	{"resume", ""}, {"suspend", ""}, {"signal", ""}, {"broad", ""},
	{"wait", ""}, {"sync", ""}, {"barrier", ""}, {"lock", ""}, {"unlock", ""},
	{"mem", "memory load is not modelled"},
	{"iorun", "I/O load is not modelled"},
	{"yield", "the engine has no sched_yield"},
	{"fork", "threads are only created at start"},
}

const rtappSupportedEvents = "run, runtime, sleep, timer, resume, suspend, signal, broad, wait, sync, barrier, lock, unlock (each optionally followed by digits, e.g. run1)"

// eventKind maps a key to its event name: the name itself or the name
// followed by digits (workgen's renaming of duplicates).
func eventKind(key string) (name, refused string, ok bool) {
	for _, e := range rtappEvents {
		if !strings.HasPrefix(key, e.name) {
			continue
		}
		suffix := key[len(e.name):]
		if strings.Trim(suffix, "0123456789") == "" {
			return e.name, e.refused, true
		}
	}
	return "", "", false
}

// place says where in the file something is, for error messages.
type place struct{ task, phase string }

func (p place) errf(line int, format string, args ...any) error {
	var b strings.Builder
	b.WriteString("rtapp: ")
	switch {
	case p.task != "":
		fmt.Fprintf(&b, "task %q", p.task)
		if p.phase != "" {
			fmt.Fprintf(&b, ", phase %q", p.phase)
		}
	case p.phase != "":
		b.WriteString(p.phase) // "global", "top level"
	}
	if line > 0 {
		fmt.Fprintf(&b, " (%s)", lineText(line))
	}
	if p.task != "" || p.phase != "" || line > 0 {
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, format, args...)
	return errors.New(b.String())
}

// rtappParsed counts the files ParseRTApp parsed: a run should parse its
// file once (it parsed the same megabyte six times), which the tests
// check.
var rtappParsed atomic.Int64

// ParseRTApp reads an rt-app JSON file (see the comment at the top of
// this file for the supported subset).
func ParseRTApp(data []byte) (*RTApp, error) {
	rtappParsed.Add(1)
	if len(data) > RTAppMaxBytes {
		return nil, fmt.Errorf("rtapp: the file is %d bytes, more than the %d-byte limit", len(data), RTAppMaxBytes)
	}
	root, err := parseOrderedJSON(data)
	if err != nil {
		return nil, err
	}
	top := place{phase: "top level"}
	if root.kind != jObject {
		return nil, top.errf(root.line, "the file must be a JSON object with \"tasks\", got %s", root.kindName())
	}
	app := &RTApp{}
	var tasks *jNode
	for _, f := range root.fields {
		switch f.key {
		case "global":
			if err := app.parseGlobal(f.val); err != nil {
				return nil, err
			}
		case "tasks":
			if tasks != nil {
				return nil, top.errf(f.line, "\"tasks\" given twice")
			}
			tasks = f.val
		case "resources":
			// Backward compatibility only: rt-app creates resources from
			// the events.
		default:
			return nil, top.errf(f.line, "unknown field %q (supported: global, tasks, resources)", f.key)
		}
	}
	if tasks == nil {
		return nil, top.errf(0, "no \"tasks\" object")
	}
	if tasks.kind != jObject {
		return nil, top.errf(tasks.line, "\"tasks\" must be an object of task name → task, got %s", tasks.kindName())
	}
	if len(tasks.fields) == 0 {
		return nil, top.errf(tasks.line, "\"tasks\" is empty")
	}
	seen := map[string]bool{}
	total, events := 0, 0
	for _, f := range tasks.fields {
		if seen[f.key] {
			return nil, place{task: f.key}.errf(f.line, "task defined twice")
		}
		seen[f.key] = true
		t, err := parseTask(f.key, f.line, f.val)
		if err != nil {
			return nil, err
		}
		total += t.Instances
		if total > RTAppMaxThreads {
			return nil, place{task: f.key}.errf(f.line, "the file asks for more than %d threads in total (sum of \"instance\")", RTAppMaxThreads)
		}
		for _, p := range t.Phases {
			events += len(p.Events)
		}
		if events > rtappMaxEvents {
			return nil, fmt.Errorf("rtapp: more than %d events in total", rtappMaxEvents)
		}
		app.Tasks = append(app.Tasks, t)
	}
	if total == 0 {
		return nil, top.errf(tasks.line, "no threads: every task has \"instance\": 0")
	}
	if err := app.checkNames(); err != nil {
		return nil, err
	}
	if err := app.checkRefs(); err != nil {
		return nil, err
	}
	return app, nil
}

// RTAppIgnoredGlobals are the "global" keys accepted and ignored.
const RTAppIgnoredGlobals = "lock_pages, pi_enabled, logdir, log_basename, log_size, ftrace, gnuplot, io_device, mem_buffer_size, cumulative_slack, spacing, frag"

func (app *RTApp) parseGlobal(n *jNode) error {
	g := place{phase: "global"}
	if n.kind != jObject {
		return g.errf(n.line, "must be an object, got %s", n.kindName())
	}
	for _, f := range n.fields {
		switch f.key {
		case "duration":
			d, err := f.val.integer()
			if err != nil {
				return g.errf(f.line, "duration: %v", err)
			}
			switch {
			case d == -1:
				app.Duration = 0
			case d >= 1 && d <= rtappMaxSecs:
				app.Duration = d * engine.Second
			default:
				return g.errf(f.line, "duration: %d out of range (seconds, 1..%d, or -1 for none)", d, rtappMaxSecs)
			}
		case "default_policy":
			if err := checkPolicy(f.val); err != nil {
				return g.errf(f.line, "default_policy: %v", err)
			}
		case "calibration":
			switch f.val.kind {
			case jNumber:
				v, err := f.val.integer()
				if err != nil || v <= 0 {
					return g.errf(f.line, "calibration: must be \"CPU<n>\" or a positive integer (ns per loop)")
				}
			case jString:
				if _, err := strconv.Atoi(strings.TrimPrefix(f.val.str, "CPU")); err != nil || !strings.HasPrefix(f.val.str, "CPU") {
					return g.errf(f.line, "calibration: %q must be \"CPU<n>\" or a positive integer (ns per loop)", f.val.str)
				}
			default:
				return g.errf(f.line, "calibration: must be \"CPU<n>\" or a positive integer (ns per loop), got %s", f.val.kindName())
			}
		case "lock_pages", "pi_enabled", "logdir", "log_basename", "log_size", "ftrace",
			"gnuplot", "io_device", "mem_buffer_size", "cumulative_slack", "spacing", "frag":
			// Accepted and ignored: no effect on SCHED_OTHER scheduling.
			// "frag" appears in rt-app's own doc/examples (browser, mp3,
			// video, merge/global.json) but its parser reads no such key.
		default:
			return g.errf(f.line, "unknown field %q (supported: duration, default_policy, calibration; ignored: %s)", f.key, RTAppIgnoredGlobals)
		}
	}
	return nil
}

// namedSuspends are the refs of suspend events that name something other
// than their own task or thread: rt-app before 2025-05 (commit 32fcddf,
// "Obsolete parameter of suspend event") waited on the condition variable
// the string named, and its doc/examples (browser-*.json) rely on it: a
// suspend "Browser" is woken by a resume "Browser". Such a suspend is a
// wait on that condition (the one signal/broad/wait also use, as in
// rt-app's one resource table), and a resume of it broadcasts it.
func namedSuspends(app *RTApp, threads map[string]*RTAppTask) map[string]bool {
	named := map[string]bool{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "suspend" && e.Ref != "" && threads[e.Ref] != t {
					named[e.Ref] = true
				}
			}
		}
	}
	return named
}

// lastWins folds repeated keys as json-c (rt-app's parser) does: a key
// given twice keeps its first place and takes its last value (rt-app's
// doc/examples/spreading-tasks.json defines phase "heavy1" twice).
func lastWins(fields []jField) []jField {
	at := map[string]int{}
	var out []jField
	for _, f := range fields {
		if i, ok := at[f.key]; ok {
			out[i].val = f.val
			continue
		}
		at[f.key] = len(out)
		out = append(out, f)
	}
	return out
}

// checkPolicy accepts only SCHED_OTHER.
func checkPolicy(n *jNode) error {
	if n.kind != jString {
		return fmt.Errorf("must be a string, got %s", n.kindName())
	}
	switch n.str {
	case "SCHED_OTHER":
		return nil
	case "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE", "SCHED_IDLE":
		return fmt.Errorf("%q is not supported: the simulator models only the fair class (use SCHED_OTHER)", n.str)
	}
	return fmt.Errorf("%q is not a policy (rt-app knows SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE; only SCHED_OTHER is supported)", n.str)
}

// rejectedKey returns why a task or phase key is refused, or "".
func rejectedKey(key string) string {
	switch key {
	case "util_min", "util_max":
		return "utilization clamping is not modelled"
	case "taskgroup":
		return "task groups (cgroups) are not modelled"
	case "dl-runtime", "dl-period", "dl-deadline", "period", "deadline":
		return "it only applies to SCHED_DEADLINE, which is not supported"
	}
	return ""
}

const rtappTaskFields = "instance, loop, delay, priority, nice, policy, cpus, phases; ignored: nodes_membind, membind_nodes"
const rtappPhaseFields = "loop, policy, priority, nice, cpus; ignored: nodes_membind, membind_nodes"

func parseTask(name string, line int, n *jNode) (RTAppTask, error) {
	p := place{task: name}
	t := RTAppTask{Name: name, Instances: 1, Loop: -1, line: line}
	if name == "" {
		return t, p.errf(line, "a task needs a non-empty name")
	}
	if n.kind != jObject {
		return t, p.errf(n.line, "must be an object, got %s", n.kindName())
	}
	var phases *jNode
	var loop *jField
	var direct []*jField // events written directly in the task
	var prio, nice *jField
	for i := range n.fields {
		f := &n.fields[i]
		switch f.key {
		case "instance":
			v, err := f.val.integer()
			if err != nil || v < 0 || v > RTAppMaxThreads {
				return t, p.errf(f.line, "instance: must be an integer 0..%d", RTAppMaxThreads)
			}
			t.Instances = int(v)
		case "loop":
			loop = f
		case "delay":
			v, err := f.val.integer()
			if err != nil || v < 0 || v > rtappMaxUS {
				return t, p.errf(f.line, "delay: must be an integer 0..%d (µs)", rtappMaxUS)
			}
			t.Delay = v * engine.Microsecond
		case "priority":
			prio = f
		case "nice":
			nice = f
		case "policy":
			if err := checkPolicy(f.val); err != nil {
				return t, p.errf(f.line, "policy: %v", err)
			}
		case "cpus":
			cpus, err := parseCPUs(f.val)
			if err != nil {
				return t, p.errf(f.line, "cpus: %v", err)
			}
			t.CPUs = cpus
		case "phases":
			phases = f.val
		case "nodes_membind", "membind_nodes":
		default:
			if why := rejectedKey(f.key); why != "" {
				return t, p.errf(f.line, "field %q is not supported: %s", f.key, why)
			}
			if _, _, ok := eventKind(f.key); ok {
				direct = append(direct, f)
				continue
			}
			return t, p.errf(f.line, "unknown field %q (task fields: %s; events: %s)", f.key, rtappTaskFields, rtappSupportedEvents)
		}
	}
	for _, f := range []*jField{prio, nice} {
		if f == nil {
			continue
		}
		v, err := f.val.integer()
		if err != nil || v < -20 || v > 19 {
			return t, p.errf(f.line, "%s: must be a nice value, an integer -20..19", f.key)
		}
		if t.HasNice && int(v) != t.Nice {
			return t, p.errf(f.line, "priority %d and nice %d disagree (for SCHED_OTHER both are the nice value)", t.Nice, v)
		}
		t.Nice, t.HasNice = int(v), true
	}
	loopVal := int64(-1)
	if loop != nil {
		v, err := parseLoop(loop.val)
		if err != nil {
			return t, p.errf(loop.line, "loop: %v", err)
		}
		loopVal = v
	}
	if phases != nil {
		if len(direct) > 0 {
			return t, p.errf(direct[0].line, "event %q is written in the task although it has \"phases\"; put it in a phase", direct[0].key)
		}
		if phases.kind != jObject {
			return t, p.errf(phases.line, "phases: must be an object of phase name → phase, got %s", phases.kindName())
		}
		if len(phases.fields) == 0 {
			return t, p.errf(phases.line, "phases: empty")
		}
		seen := map[string]bool{}
		for _, pf := range lastWins(phases.fields) {
			if seen[pf.key] {
				return t, place{task: name, phase: pf.key}.errf(pf.line, "phase defined twice")
			}
			seen[pf.key] = true
			ph, err := parsePhase(&t, pf.key, pf.line, pf.val)
			if err != nil {
				return t, err
			}
			t.Phases = append(t.Phases, ph)
		}
		t.Loop = loopVal
		return t, nil
	}
	if len(direct) == 0 {
		return t, p.errf(line, "no events (supported events: %s)", rtappSupportedEvents)
	}
	ph := RTAppPhase{Loop: 1}
	for _, f := range direct {
		e, err := parseEvent(p, f)
		if err != nil {
			return t, err
		}
		ph.Events = append(ph.Events, e)
	}
	t.Phases = []RTAppPhase{ph}
	t.Loop = loopVal
	return t, nil
}

func parsePhase(t *RTAppTask, name string, line int, n *jNode) (RTAppPhase, error) {
	p := place{task: t.Name, phase: name}
	ph := RTAppPhase{Name: name, Loop: 1}
	if n.kind != jObject {
		return ph, p.errf(n.line, "must be an object, got %s", n.kindName())
	}
	for i := range n.fields {
		f := &n.fields[i]
		switch f.key {
		case "loop":
			v, err := parseLoop(f.val)
			if err != nil {
				return ph, p.errf(f.line, "loop: %v", err)
			}
			ph.Loop = v
		case "policy":
			if err := checkPolicy(f.val); err != nil {
				return ph, p.errf(f.line, "policy: %v", err)
			}
		case "priority", "nice":
			v, err := f.val.integer()
			if err != nil || v < -20 || v > 19 {
				return ph, p.errf(f.line, "%s: must be a nice value, an integer -20..19", f.key)
			}
			if !t.HasNice || int(v) != t.Nice {
				return ph, p.errf(f.line, "%s: setting nice per phase is not supported (the engine cannot renice a running task); set \"priority\" on the task", f.key)
			}
		case "cpus":
			cpus, err := parseCPUs(f.val)
			if err != nil {
				return ph, p.errf(f.line, "cpus: %v", err)
			}
			if !sameCPUs(cpus, t.CPUs) {
				return ph, p.errf(f.line, "cpus: changing affinity per phase is not supported; the engine cannot change it from a task's program (set \"cpus\" on the task)")
			}
		case "nodes_membind", "membind_nodes":
		default:
			if why := rejectedKey(f.key); why != "" {
				return ph, p.errf(f.line, "field %q is not supported: %s", f.key, why)
			}
			if _, _, ok := eventKind(f.key); !ok {
				return ph, p.errf(f.line, "unknown field %q (phase fields: %s; events: %s)", f.key, rtappPhaseFields, rtappSupportedEvents)
			}
			e, err := parseEvent(p, f)
			if err != nil {
				return ph, err
			}
			ph.Events = append(ph.Events, e)
		}
	}
	if len(ph.Events) == 0 {
		return ph, p.errf(line, "no events (supported events: %s)", rtappSupportedEvents)
	}
	return ph, nil
}

func parseLoop(n *jNode) (int64, error) {
	v, err := n.integer()
	if err != nil {
		return 0, err
	}
	if v == 0 || v < -1 {
		return 0, fmt.Errorf("%d is not allowed (-1 for forever, or a count ≥ 1)", v)
	}
	return v, nil
}

func parseCPUs(n *jNode) ([]int, error) {
	if n.kind != jArray {
		return nil, fmt.Errorf("must be an array of CPU ids, e.g. [0, 2], got %s", n.kindName())
	}
	if len(n.elems) == 0 {
		return nil, fmt.Errorf("empty; omit it for all CPUs")
	}
	var out []int
	for _, e := range n.elems {
		v, err := e.integer()
		if err != nil || v < 0 || v >= rtappMaxCPU {
			return nil, fmt.Errorf("%s is not a CPU id", e.text())
		}
		out = append(out, int(v))
	}
	sort.Ints(out)
	uniq := out[:1]
	for _, c := range out[1:] {
		if c != uniq[len(uniq)-1] {
			uniq = append(uniq, c)
		}
	}
	return uniq, nil
}

func sameCPUs(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func parseEvent(p place, f *jField) (RTAppEvent, error) {
	kind, refused, _ := eventKind(f.key)
	e := RTAppEvent{Key: f.key, Kind: kind, line: f.line}
	bad := func(format string, args ...any) error {
		return p.errf(f.line, "event %q: %s", f.key, fmt.Sprintf(format, args...))
	}
	if refused != "" {
		return e, bad("not supported: %s", refused)
	}
	v := f.val
	switch kind {
	case "run", "runtime", "sleep":
		us, err := v.integer()
		if err != nil || us < 0 || us > rtappMaxUS {
			return e, bad("must be a duration in µs, an integer 0..%d", rtappMaxUS)
		}
		e.NS = us * engine.Microsecond
	case "timer":
		if v.kind != jObject {
			return e, bad("must be an object {\"ref\": name, \"period\": µs, \"mode\": \"relative\"|\"absolute\"}, got %s", v.kindName())
		}
		for _, tf := range v.fields {
			switch tf.key {
			case "ref":
				if tf.val.kind != jString || tf.val.str == "" {
					return e, bad("\"ref\" must be a non-empty string")
				}
				e.Ref = tf.val.str
			case "period":
				us, err := tf.val.integer()
				if err != nil || us <= 0 || us > rtappMaxUS {
					return e, bad("\"period\" must be an integer 1..%d (µs)", rtappMaxUS)
				}
				e.NS = us * engine.Microsecond
			case "mode":
				switch {
				case tf.val.kind == jString && tf.val.str == "relative":
				case tf.val.kind == jString && tf.val.str == "absolute":
					e.Absolute = true
				default:
					return e, bad("\"mode\" must be \"relative\" or \"absolute\", got %s", tf.val.text())
				}
			default:
				return e, bad("unknown field %q (timer fields: ref, period, mode)", tf.key)
			}
		}
		if e.Ref == "" {
			return e, bad("missing \"ref\" (the timer's name; names starting with \"unique\" are per thread)")
		}
		if e.NS == 0 {
			return e, bad("missing \"period\" (µs)")
		}
	case "resume", "signal", "broad", "barrier", "lock", "unlock":
		if v.kind != jString || v.str == "" {
			return e, bad("must be a non-empty string naming the %s", map[string]string{
				"resume": "task to resume", "signal": "condition variable", "broad": "condition variable",
				"barrier": "barrier", "lock": "mutex", "unlock": "mutex"}[kind])
		}
		e.Ref = v.str
	case "suspend":
		if v.kind != jString {
			return e, bad("must be a string: \"\" or the task's own name")
		}
		e.Ref = v.str
	case "wait", "sync":
		switch v.kind {
		case jString:
			e.Ref = v.str
		case jObject:
			for _, wf := range v.fields {
				switch wf.key {
				case "ref", "mutex":
					if wf.val.kind != jString || wf.val.str == "" {
						return e, bad("%q must be a non-empty string", wf.key)
					}
					if wf.key == "ref" {
						e.Ref = wf.val.str
					} else {
						e.Mutex = wf.val.str
					}
				default:
					return e, bad("unknown field %q (fields: ref, mutex)", wf.key)
				}
			}
		default:
			return e, bad("must be an object {\"ref\": condition, \"mutex\": mutex}, got %s", v.kindName())
		}
		if e.Ref == "" {
			return e, bad("missing \"ref\" (the condition variable's name)")
		}
	}
	return e, nil
}

// checkNames makes sure thread names are unique.
func (app *RTApp) checkNames() error {
	owner := map[string]string{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, n := range t.threadNames() {
			if o, ok := owner[n]; ok && o != t.Name {
				return place{task: t.Name}.errf(t.line, "thread name %q is also a thread of task %q; rename one", n, o)
			}
			owner[n] = t.Name
		}
	}
	return nil
}

// threadTasks maps every thread and task name to its task.
func (app *RTApp) threadTasks() map[string]*RTAppTask {
	threads := map[string]*RTAppTask{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		threads[t.Name] = t
		for _, n := range t.threadNames() {
			threads[n] = t
		}
	}
	return threads
}

// checkRefs rejects references that cannot work.
func (app *RTApp) checkRefs() error {
	threads := app.threadTasks()
	signalled := map[string]bool{}  // cond refs with a signal/broad/sync
	waited := map[string]bool{}     // cond refs with a wait/sync
	resumed := map[string]bool{}    // task names resumed by someone
	resumedRef := map[string]bool{} // every name a resume names
	named := namedSuspends(app, threads)
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				switch e.Kind {
				case "signal", "broad":
					signalled[e.Ref] = true
				case "wait":
					waited[e.Ref] = true
				case "sync":
					signalled[e.Ref], waited[e.Ref] = true, true
				case "resume":
					if tt, ok := threads[e.Ref]; ok {
						resumed[tt.Name] = true
					}
					resumedRef[e.Ref] = true
				}
			}
		}
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		locks, unlocks := map[string]bool{}, map[string]bool{}
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "lock" {
					locks[e.Ref] = true
				}
			}
		}
		for _, ph := range t.Phases {
			p := place{task: t.Name, phase: ph.Name}
			for _, e := range ph.Events {
				switch e.Kind {
				case "resume":
					if _, ok := threads[e.Ref]; !ok && !named[e.Ref] {
						return p.errf(e.line, "event %q: no task or thread named %q, and no suspend on %q, to resume (known: %s)", e.Key, e.Ref, e.Ref, strings.Join(sortedKeys(threads), ", "))
					}
				case "suspend":
					if named[e.Ref] {
						if !resumedRef[e.Ref] {
							return p.errf(e.line, "event %q: no task resumes %q, so it would sleep forever", e.Key, e.Ref)
						}
						continue
					}
					if !resumed[t.Name] {
						return p.errf(e.line, "event %q: no task resumes %q, so it would sleep forever", e.Key, t.Name)
					}
				case "wait":
					if !signalled[e.Ref] {
						return p.errf(e.line, "event %q: no task signals %q (signal, broad or sync), so the wait never returns", e.Key, e.Ref)
					}
				case "signal", "broad":
					if !waited[e.Ref] {
						return p.errf(e.line, "event %q: no task waits on %q (wait or sync); check the name", e.Key, e.Ref)
					}
				case "unlock":
					if !locks[e.Ref] {
						return p.errf(e.line, "event %q: the task never locks %q", e.Key, e.Ref)
					}
					unlocks[e.Ref] = true
				}
			}
		}
		for _, ref := range sortedKeys(locks) {
			if !unlocks[ref] {
				return place{task: t.Name}.errf(t.line, "locks %q but never unlocks it", ref)
			}
		}
		if err := checkRelock(t); err != nil {
			return err
		}
	}
	return nil
}

// heldLock is where a thread took a mutex it still holds: the lock
// event's line, and the pass over the task's phases, the phase and the
// run of that phase of the walk that checkRelock makes.
type heldLock struct {
	line             int
	pass, phase, run int
}

// checkRelock refuses a thread that locks a mutex it already holds. rt-app
// creates its mutexes with default attributes, a normal (non-recursive)
// mutex on glibc, so the second pthread_mutex_lock blocks forever; the
// simulator's lock would likewise queue the thread behind itself, and the
// run would go on without a word. The walk follows the thread's events in
// the order they run. A phase that loops is walked twice, and so are all
// the phases when the task loops: a pass leaves each mutex it touches in
// the state its last lock or unlock of it says, whatever the state before,
// so a second pass starts as every later one does and meets every relock
// they would. wait and sync give their mutex back before returning, so
// they change nothing held.
func checkRelock(t *RTAppTask) error {
	held := map[string]heldLock{}
	for pass := range passes(t.Loop) {
		for i, ph := range t.Phases {
			for run := range passes(ph.Loop) {
				for _, e := range ph.Events {
					switch e.Kind {
					case "lock":
						now := heldLock{line: e.line, pass: pass, phase: i, run: run}
						if h, ok := held[e.Ref]; ok {
							return place{task: t.Name, phase: ph.Name}.errf(e.line,
								"event %q: locks %q again while holding it (locked at %s, not unlocked since); an rt-app mutex is not recursive, so the thread would block here forever",
								e.Key, e.Ref, h.describe(now, t))
						}
						held[e.Ref] = now
					case "unlock":
						delete(held, e.Ref)
					}
				}
			}
			if ph.Loop < 0 {
				return nil // the phases after it never run
			}
		}
	}
	return nil
}

// describe says where h was taken, seen from the relock at now: its line,
// and the loop or phase it was in when that is not now's.
func (h heldLock) describe(now heldLock, t *RTAppTask) string {
	at := lineText(h.line)
	switch {
	case h.pass != now.pass:
		return at + " in the task's previous loop"
	case h.phase != now.phase:
		return fmt.Sprintf("%s in phase %q", at, t.Phases[h.phase].Name)
	case h.run != now.run:
		return at + " in the phase's previous loop"
	}
	return at
}

// passes is how many times a walk of a loop of count n (-1: forever) must
// go through it: once for a single pass, twice for any repetition.
func passes(n int64) int {
	if n == 1 {
		return 1
	}
	return 2
}

// lineText writes a position as errors do: "line L, column C" for one
// packed by posAt, "line L" for a bare line number.
func lineText(pos int) string {
	if l, c := pos/posScale, pos%posScale; l > 0 {
		return fmt.Sprintf("line %d, column %d", l, c)
	}
	return fmt.Sprintf("line %d", pos)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- ordered JSON ----

type jKind uint8

const (
	jNull jKind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

// jNode is a JSON value that keeps object members in file order,
// duplicates included.
type jNode struct {
	kind   jKind
	fields []jField
	elems  []*jNode
	str    string // string, or number text
	b      bool
	line   int
}

type jField struct {
	key  string
	line int
	val  *jNode
}

func (n *jNode) kindName() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[n.kind]
}

func (n *jNode) text() string {
	switch n.kind {
	case jNumber:
		return n.str
	case jString:
		return strconv.Quote(n.str)
	}
	return n.kindName()
}

func (n *jNode) integer() (int64, error) {
	if n.kind != jNumber {
		return 0, fmt.Errorf("expected an integer, got %s", n.kindName())
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("expected an integer, got %s", n.str)
	}
	return v, nil
}

type jParser struct {
	d     *json.Decoder
	src   []byte
	lines lineTable
}

// posScale packs a line and a column into the one int the parse tree
// keeps per node and field: line*posScale + column (columns of a file of
// at most RTAppMaxBytes fit).
const posScale = 1 << 21

// lineTable maps a byte offset of a text to its line and column. The
// parser asks for a position at every value and key; finding the line's
// start by scanning back from the offset costs the line's length, which
// for a spec's JSON (compacted onto one line) is the whole text so far:
// quadratic in the file's size (issue 22: a 1 MB file took minutes). The
// table of line starts, built once, answers with a binary search.
type lineTable struct {
	starts []int // starts[i] is the offset of line i+1's first byte
	size   int   // the text's length
}

func newLineTable(src []byte) lineTable {
	starts := make([]int, 1, 1+bytes.Count(src, []byte{'\n'}))
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineTable{starts: starts, size: len(src)}
}

// lineCol is the 1-based line and column of byte offset off (clamped to
// the text).
func (t lineTable) lineCol(off int64) (line, col int) {
	o := int(min(max(off, 0), int64(t.size)))
	// The last line starting at or before o.
	i := sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > o }) - 1
	return i + 1, o - t.starts[i] + 1
}

// posAt is the 1-based line and column of byte offset off, packed.
func (p *jParser) posAt(off int64) int {
	line, col := p.lines.lineCol(off)
	return line*posScale + col
}

// lineAt is the 1-based line of byte offset off.
func (p *jParser) lineAt(off int64) int {
	line, _ := p.lines.lineCol(off)
	return line
}

func (p *jParser) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("rtapp: bad JSON: unexpected end of input at line %d", p.lineAt(int64(len(p.src))))
	}
	line, col := p.lines.lineCol(p.d.InputOffset())
	return fmt.Errorf("rtapp: bad JSON at line %d, column %d: %v", line, col, err)
}

// parseOrderedJSON reads data as json-c does (comments and trailing
// commas allowed) into a jNode tree.
func parseOrderedJSON(data []byte) (*jNode, error) {
	clean, err := jsoncClean(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		return nil, fmt.Errorf("rtapp: bad JSON: the file is empty")
	}
	d := json.NewDecoder(bytes.NewReader(clean))
	d.UseNumber()
	p := &jParser{d: d, src: clean, lines: newLineTable(clean)}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if tok, err := d.Token(); err == nil {
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %v after the top-level value", p.lineAt(d.InputOffset()), tok)
	} else if !errors.Is(err, io.EOF) {
		return nil, p.fail(err)
	}
	return root, nil
}

func (p *jParser) value(depth int) (*jNode, error) {
	if depth > rtappMaxDepth {
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: nested more than %d levels deep", p.lineAt(p.d.InputOffset()), rtappMaxDepth)
	}
	tok, err := p.d.Token()
	if err != nil {
		return nil, p.fail(err)
	}
	n := &jNode{line: p.posAt(p.d.InputOffset() - 1)}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n.kind = jObject
			for p.d.More() {
				kt, err := p.d.Token()
				if err != nil {
					return nil, p.fail(err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("rtapp: bad JSON at line %d: object key %v is not a string", p.lineAt(p.d.InputOffset()), kt)
				}
				// The key's opening quote: the offset is just past
				// its closing one.
				end := p.d.InputOffset()
				open := bytes.LastIndexByte(p.src[:max(end-1, 0)], '"')
				line := p.posAt(int64(max(open, 0)))
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.fields = append(n.fields, jField{key: key, line: line, val: val})
			}
		case '[':
			n.kind = jArray
			for p.d.More() {
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, val)
			}
		default:
			return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %q", n.line/posScale, string(v))
		}
		end, err := p.d.Token()
		if err != nil {
			return nil, p.fail(err)
		}
		if d, ok := end.(json.Delim); !ok || (v == '{' && d != '}') || (v == '[' && d != ']') {
			return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %v", p.lineAt(p.d.InputOffset()), end)
		}
	case string:
		n.kind, n.str = jString, v
	case json.Number:
		n.kind, n.str = jNumber, string(v)
	case float64: // not produced with UseNumber; kept for safety
		n.kind, n.str = jNumber, strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		n.kind, n.b = jBool, v
	case nil:
		n.kind = jNull
	default:
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected token %v", n.line/posScale, tok)
	}
	return n, nil
}

// jsoncClean blanks out what json-c tolerates and strict JSON does not —
// /* */ and // comments, trailing commas before } or ], a UTF-8 byte order
// mark — keeping every newline so line numbers still match the file.
func jsoncClean(src []byte) ([]byte, error) {
	out := bytes.Clone(src)
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		copy(out, "   ")
	}
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	var err error
	eachCodeByte(out, func(i int) int {
		if out[i] != '/' || i+1 >= len(out) {
			return 0
		}
		switch out[i+1] {
		case '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				err = fmt.Errorf("rtapp: bad JSON at line %d: unterminated /* comment", 1+bytes.Count(src[:i], []byte{'\n'}))
				return len(out)
			}
			blank(i, i+2+end+2)
			return 2 + end + 1
		case '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			return end
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	eachCodeByte(out, func(i int) int {
		if out[i] != ',' {
			return 0
		}
		j := i + 1
		for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
			j++
		}
		if j < len(out) && (out[j] == '}' || out[j] == ']') {
			out[i] = ' '
		}
		return 0
	})
	return out, nil
}

// eachCodeByte calls f for each byte of b outside JSON strings, in order;
// f returns how many of the following bytes to skip.
func eachCodeByte(b []byte, f func(i int) int) {
	inStr := false
	for i := 0; i < len(b); i++ {
		switch {
		case inStr && b[i] == '\\':
			i++
		case inStr:
			inStr = b[i] != '"'
		case b[i] == '"':
			inStr = true
		default:
			i += f(i)
		}
	}
}

// ---- building and running ----

// rtWorld is the shared state of one rt-app workload.
type rtWorld struct {
	t0      int64 // rt-app's t_zero: when the workload was built
	threads []*rtThread
	live    int
	finite  bool
}

type rtCond struct{ waiters []*rtThread }

type rtMutex struct {
	owner   *rtThread
	waiters []*rtThread
}

type rtBarrier struct {
	parties, arrived int
	waiters          []*rtThread
}

type rtTimer struct {
	init     bool
	next     int64
	absolute bool
}

// rtOp is a compiled event.
type rtOp struct {
	kind    string
	ns      int64
	ref     string
	timer   *rtTimer // shared timer (nil for a unique one)
	abs     bool     // unique timer: absolute mode
	cond    *rtCond
	mutex   *rtMutex
	barrier *rtBarrier
	targets []*rtThread // resume
}

type rtPhase struct {
	loop int64
	ops  []rtOp
}

// Program states of an rt-app thread.
const (
	rtStart = iota
	rtIterStart
	rtEvent
	rtIterEnd
	rtExit
	rtDone
)

// rtThread is one rt-app thread: its program counter and its side of the
// synchronisation objects.
type rtThread struct {
	w      *rtWorld
	name   string
	id     engine.TaskID
	phases []rtPhase
	loop   int64
	tFirst int64
	timers map[string]*rtTimer // "unique..." timers

	state      int
	phase      int
	phaseIter  int64
	threadIter int64
	ev, sub    int
	iterStart  int64

	// parked: the thread blocked waiting for a release; token: it was
	// released while registered but before it blocked.
	parked, token bool
	suspended     bool // registered in suspend
	reacquire     *rtMutex
	held          []*rtMutex
	wakes         []engine.TaskID
	wi            int

	iters    int64 // completed phase loops
	exitedAt int64
}

// build creates the threads of app in b's workload.
func (app *RTApp) build(b *Builder) (*rtWorld, error) {
	sim := b.Sim
	ncpu := sim.Topology().NCPU
	masks := make([]cpumask.Mask, len(app.Tasks))
	for i := range app.Tasks {
		t := &app.Tasks[i]
		if t.CPUs == nil {
			continue
		}
		for _, c := range t.CPUs {
			if c >= ncpu {
				return nil, place{task: t.Name}.errf(t.line, "cpus: CPU %d does not exist (the machine has CPUs 0-%d)", c, ncpu-1)
			}
		}
		masks[i] = cpumask.Of(ncpu, t.CPUs...)
	}

	w := &rtWorld{t0: sim.Now(), finite: app.Finite()}
	byName := map[string][]*rtThread{}
	named := namedSuspends(app, app.threadTasks())
	perTask := make([][]*rtThread, len(app.Tasks))
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, name := range t.threadNames() {
			th := &rtThread{w: w, name: name, loop: t.Loop, tFirst: w.t0 + t.Delay, timers: map[string]*rtTimer{}, exitedAt: -1}
			perTask[i] = append(perTask[i], th)
			byName[name] = append(byName[name], th)
			w.threads = append(w.threads, th)
		}
		if t.Instances != 1 {
			byName[t.Name] = perTask[i]
		}
	}

	conds := map[string]*rtCond{}
	mutexes := map[string]*rtMutex{}
	barriers := map[string]*rtBarrier{}
	timers := map[string]*rtTimer{}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				switch e.Kind {
				case "barrier":
					if barriers[e.Ref] == nil {
						barriers[e.Ref] = &rtBarrier{}
					}
					barriers[e.Ref].parties += t.Instances
				case "timer":
					if !strings.HasPrefix(e.Ref, "unique") {
						if timers[e.Ref] == nil {
							timers[e.Ref] = &rtTimer{}
						}
						timers[e.Ref].absolute = timers[e.Ref].absolute || e.Absolute
					}
				}
			}
		}
	}
	cond := func(ref string) *rtCond {
		if conds[ref] == nil {
			conds[ref] = &rtCond{}
		}
		return conds[ref]
	}
	mutex := func(ref string) *rtMutex {
		if ref == "" {
			return nil
		}
		if mutexes[ref] == nil {
			mutexes[ref] = &rtMutex{}
		}
		return mutexes[ref]
	}

	for i := range app.Tasks {
		t := &app.Tasks[i]
		uniqueAbs := map[string]bool{}
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "timer" && e.Absolute {
					uniqueAbs[e.Ref] = true
				}
			}
		}
		var phases []rtPhase
		for _, ph := range t.Phases {
			rp := rtPhase{loop: ph.Loop}
			for _, e := range ph.Events {
				op := rtOp{kind: e.Kind, ns: e.NS, ref: e.Ref}
				switch e.Kind {
				case "timer":
					if strings.HasPrefix(e.Ref, "unique") {
						op.abs = uniqueAbs[e.Ref]
					} else {
						op.timer = timers[e.Ref]
					}
				case "resume":
					op.targets = byName[e.Ref]
					if named[e.Ref] {
						// Also broadcast the named condition the
						// suspends on e.Ref wait on.
						rp.ops = append(rp.ops, op)
						op = rtOp{kind: "broad", ref: e.Ref, cond: cond(e.Ref)}
					}
				case "suspend":
					if named[e.Ref] {
						op = rtOp{kind: "wait", ref: e.Ref, cond: cond(e.Ref)}
					}
				case "signal", "broad":
					op.cond = cond(e.Ref)
				case "wait":
					op.cond, op.mutex = cond(e.Ref), mutex(e.Mutex)
				case "sync":
					// signal then wait on the same condition variable
					rp.ops = append(rp.ops, rtOp{kind: "signal", ref: e.Ref, cond: cond(e.Ref)})
					op = rtOp{kind: "wait", ref: e.Ref, cond: cond(e.Ref), mutex: mutex(e.Mutex)}
				case "barrier":
					op.barrier = barriers[e.Ref]
				case "lock", "unlock":
					op.mutex = mutex(e.Ref)
				}
				rp.ops = append(rp.ops, op)
			}
			phases = append(phases, rp)
		}
		for _, th := range perTask[i] {
			th.phases = phases
		}
	}

	if w.finite {
		sim.SetFinite(b.ID)
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, th := range perTask[i] {
			ts := b.TaskSpec(th.name, th)
			ts.MeasureWakeups = true
			if t.HasNice {
				ts.Nice = t.Nice
			}
			if t.CPUs != nil {
				ts.Allowed = masks[i]
				ts.ParentCPU = t.CPUs[0]
			}
			id, err := b.Spawn(ts)
			if err != nil {
				return nil, err
			}
			th.id = id
			w.live++
		}
	}
	return w, nil
}

// release lets x go on after a wait it registered for: a wake if it has
// blocked, else a token it consumes instead of blocking.
func (t *rtThread) release(x *rtThread) {
	if x.parked {
		x.parked = false
		t.wakes = append(t.wakes, x.id)
		return
	}
	x.token = true
}

// park blocks until released, unless already released.
func (t *rtThread) park() (engine.Action, bool) {
	if t.token {
		t.token = false
		return engine.Action{}, false
	}
	t.parked = true
	return engine.Block(), true
}

// tryLock takes m if free; otherwise it queues t on m and blocks.
func (t *rtThread) tryLock(m *rtMutex) (engine.Action, bool, bool) {
	if m.owner == nil {
		m.owner = t
		t.held = append(t.held, m)
		return engine.Action{}, false, true
	}
	m.waiters = append(m.waiters, t)
	a, blocked := t.park()
	return a, blocked, false
}

// unlock frees m (held by t) and wakes its longest waiter, which retries.
func (t *rtThread) unlock(m *rtMutex) {
	m.owner = nil
	for i, h := range t.held {
		if h == m {
			t.held = append(t.held[:i], t.held[i+1:]...)
			break
		}
	}
	if len(m.waiters) > 0 {
		x := m.waiters[0]
		m.waiters = m.waiters[1:]
		t.release(x)
	}
}

func (t *rtThread) nextEvent() { t.ev, t.sub = t.ev+1, 0 }

// Next implements engine.Program.
func (t *rtThread) Next(ctx *engine.Ctx) engine.Action {
	for {
		if t.wi < len(t.wakes) {
			id := t.wakes[t.wi]
			t.wi++
			if t.wi == len(t.wakes) {
				t.wakes, t.wi = t.wakes[:0], 0
			}
			return engine.Wake(id, false)
		}
		switch t.state {
		case rtStart:
			t.state = rtIterStart
			if d := t.tFirst - ctx.Now(); d > 0 {
				return engine.Sleep(d)
			}
		case rtIterStart:
			t.iterStart = ctx.Now()
			t.ev, t.sub = 0, 0
			t.state = rtEvent
		case rtEvent:
			ops := t.phases[t.phase].ops
			if t.ev >= len(ops) {
				t.state = rtIterEnd
				continue
			}
			if a, ok := t.do(ctx, &ops[t.ev]); ok {
				return a
			}
		case rtIterEnd:
			ctx.CountOp(1)
			t.iters++
			t.advance()
			if ctx.Now() == t.iterStart {
				return engine.Run(rtappGuardNS)
			}
		case rtExit:
			t.state = rtDone
			t.exitedAt = ctx.Now()
			t.w.live--
			if t.w.finite && t.w.live == 0 {
				ctx.Finish()
			}
			return engine.Exit()
		default:
			panic(fmt.Sprintf("rtapp: thread %s runs after exiting", t.name))
		}
	}
}

// advance moves the program counter past a completed phase loop.
func (t *rtThread) advance() {
	t.state = rtIterStart
	t.phaseIter++
	if l := t.phases[t.phase].loop; l < 0 || t.phaseIter < l {
		return
	}
	t.phaseIter = 0
	t.phase++
	if t.phase < len(t.phases) {
		return
	}
	t.phase = 0
	t.threadIter++
	if t.loop >= 0 && t.threadIter >= t.loop {
		t.state = rtExit
	}
}

// do runs (a step of) op. It returns an action to perform, or ok=false
// when the step took no time and the program should go on.
func (t *rtThread) do(ctx *engine.Ctx, op *rtOp) (engine.Action, bool) {
	switch op.kind {
	case "run":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Run(op.ns), true
		}
	case "runtime":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Spin(op.ns), true
		}
	case "sleep":
		t.nextEvent()
		if op.ns > 0 {
			return engine.Sleep(op.ns), true
		}
	case "timer":
		t.nextEvent()
		tm := op.timer
		if tm == nil {
			tm = t.timers[op.ref]
			if tm == nil {
				tm = &rtTimer{absolute: op.abs}
				t.timers[op.ref] = tm
			}
		}
		if !tm.init {
			tm.init, tm.next = true, t.tFirst
		}
		tm.next += op.ns
		now := ctx.Now()
		if now < tm.next {
			return engine.Sleep(tm.next - now), true
		}
		if !tm.absolute {
			tm.next = now
		}
	case "resume":
		t.nextEvent()
		for _, x := range op.targets {
			// rt-app broadcasts the target's condition variable: a
			// thread not suspended at that moment misses it.
			if x.suspended {
				x.suspended = false
				t.release(x)
			}
		}
	case "suspend":
		if t.sub == 1 {
			t.nextEvent()
			break
		}
		t.suspended, t.sub = true, 1
		if a, ok := t.park(); ok {
			return a, true
		}
	case "signal":
		t.nextEvent()
		if c := op.cond; len(c.waiters) > 0 {
			x := c.waiters[0]
			c.waiters = c.waiters[1:]
			t.release(x)
		}
	case "broad":
		t.nextEvent()
		c := op.cond
		for _, x := range c.waiters {
			t.release(x)
		}
		c.waiters = c.waiters[:0]
	case "wait":
		switch t.sub {
		case 0:
			// pthread_cond_wait: queue on the condition, then release the
			// mutex if held (its waiter's wake is issued before blocking).
			op.cond.waiters = append(op.cond.waiters, t)
			t.reacquire = nil
			if m := op.mutex; m != nil && m.owner == t {
				t.unlock(m)
				t.reacquire = m
			}
			t.sub = 1
		case 1:
			t.sub = 2
			if a, ok := t.park(); ok {
				return a, true
			}
		case 2:
			if t.reacquire == nil {
				t.nextEvent()
				break
			}
			if a, blocked, got := t.tryLock(t.reacquire); got {
				t.reacquire = nil
				t.nextEvent()
			} else if blocked {
				return a, true
			}
		}
	case "barrier":
		if t.sub == 1 {
			t.nextEvent()
			break
		}
		bar := op.barrier
		bar.arrived++
		if bar.arrived >= bar.parties {
			bar.arrived = 0
			for _, x := range bar.waiters {
				t.release(x)
			}
			bar.waiters = bar.waiters[:0]
			t.nextEvent()
			break
		}
		bar.waiters = append(bar.waiters, t)
		t.sub = 1
		if a, ok := t.park(); ok {
			return a, true
		}
	case "lock":
		if a, blocked, got := t.tryLock(op.mutex); got {
			t.nextEvent()
		} else if blocked {
			return a, true
		}
	case "unlock":
		t.nextEvent()
		if op.mutex.owner == t {
			t.unlock(op.mutex)
		}
	default:
		panic("rtapp: unknown op " + op.kind)
	}
	return engine.Action{}, false
}
