package workload

// rt-app files: parsing and checking (the workload is described in rtapp.go).

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"schedplay/engine"
)

// ---- parsing ----

// rtappEvents are the event names of rt-app's parser (the events table of
// src/rt-app_parse_config.c), longest prefix first ("runtime" before
// "run", "memrun" before "mem"); unsupported ones carry the reason they
// are refused.
var rtappEvents = []struct{ name, refused string }{
	{"runtime", ""}, {"run", ""}, {"sleep", ""}, {"timer", ""},
	{"resume", ""}, {"suspend", ""}, {"signal", ""}, {"broad", ""},
	{"wait", ""}, {"sync", ""}, {"barrier", ""}, {"lock", ""}, {"unlock", ""},
	{"sem_post", ""}, {"sem_wait", ""}, {"yield", ""}, {"fork", ""},
	{"memrun", "memory access load (read, write, pointer chase) is not modelled"},
	{"mem", "memory bandwidth load is not modelled"},
	{"iorun", "I/O load is not modelled"},
}

const rtappSupportedEvents = "run, runtime, sleep, timer, resume, suspend, signal, broad, wait, sync, barrier, lock, unlock, sem_post, sem_wait, yield, fork (a key is an event when it starts with an event name, e.g. run1 or run_long)"

// eventKind maps a key to its event name: as in rt-app's obj_is_event
// (strncmp of the event name), any key that starts with an event name is
// that event, e.g. "run1" (workgen's renaming of duplicates) or
// "memrun_a" (the tutorial's).
func eventKind(key string) (name, refused string, ok bool) {
	for _, e := range rtappEvents {
		if strings.HasPrefix(key, e.name) {
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
	return parseRTAppRoot(root)
}

// parseRTAppRoot checks the parsed file (or files merged: ParseRTAppFiles).
func parseRTAppRoot(root *jNode) (*RTApp, error) {
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
	// Under workgen a task given twice is two tasks (rtapp_workgen.go).
	for _, f := range workgenUnique(tasks.fields) {
		if seen[f.key] {
			return nil, place{task: f.key}.errf(f.line, "task defined twice")
		}
		seen[f.key] = true
		t, err := parseTask(f.key, f.line, f.val, app.DefaultPolicy)
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
	if err := app.checkForks(); err != nil {
		return nil, err
	}
	if err := app.deadlineForks(engine.PolicyNormal); err != nil {
		return nil, err
	}
	return app, nil
}

// policyUnder is the policy t's threads run with when the spec's policy=
// is spec: the file's (its "policy" or default_policy), else the spec's.
func (t *RTAppTask) policyUnder(spec engine.Policy) engine.Policy {
	if t.HasPolicy || t.Policy != engine.PolicyNormal {
		return t.Policy
	}
	return spec
}

// deadlineForks refuses the fork events that SCHED_DEADLINE threads
// cannot do, the spec's policy= being spec: a SCHED_DEADLINE thread that
// forks (rt-app's create_thread: pthread_create fails, sched_fork returns
// EAGAIN), and a fork of a SCHED_DEADLINE task (in rt-app the new thread
// sets its policy once it runs; the engine creates a forked thread from
// its forker with its policy, and refuses a SCHED_DEADLINE child).
func (app *RTApp) deadlineForks(spec engine.Policy) error {
	byName := map[string]*RTAppTask{}
	for i := range app.Tasks {
		byName[app.Tasks[i].Name] = &app.Tasks[i]
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind != "fork" {
					continue
				}
				p := place{task: t.Name, phase: ph.Name}
				if t.policyUnder(spec) == engine.PolicyDeadline {
					return p.errf(e.line, "event %q: a SCHED_DEADLINE thread cannot fork (pthread_create fails: sched_fork returns EAGAIN)", e.Key)
				}
				if c := byName[e.Ref]; c != nil && c.policyUnder(spec) == engine.PolicyDeadline {
					return p.errf(e.line, "event %q: task %q is SCHED_DEADLINE, and forking one is not modelled (the engine creates a forked thread with its policy from the forker; in rt-app it takes the policy once it runs)", e.Key, e.Ref)
				}
			}
		}
	}
	return nil
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
			pol, err := checkPolicy(f.val)
			if err != nil {
				return g.errf(f.line, "default_policy: %v", err)
			}
			app.DefaultPolicy = pol
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

// checkPolicy reads a policy name: SCHED_OTHER, SCHED_FIFO, SCHED_RR and
// SCHED_DEADLINE are modelled (the fair, RT and deadline classes); the
// others are refused by name.
func checkPolicy(n *jNode) (engine.Policy, error) {
	if n.kind != jString {
		return 0, fmt.Errorf("must be a string, got %s", n.kindName())
	}
	switch n.str {
	case "SCHED_OTHER":
		return engine.PolicyNormal, nil
	case "SCHED_FIFO":
		return engine.PolicyFIFO, nil
	case "SCHED_RR":
		return engine.PolicyRR, nil
	case "SCHED_DEADLINE":
		return engine.PolicyDeadline, nil
	case "SCHED_BATCH", "SCHED_IDLE":
		return 0, fmt.Errorf("%q is not supported: the fair class's %s rules (%s) are not modelled (use SCHED_OTHER)", n.str, n.str, map[string]string{
			"SCHED_BATCH": "no wakeup preemption by a batch task, no buddies",
			"SCHED_IDLE":  "minimal weight, preempted by any other fair task"}[n.str])
	}
	return 0, fmt.Errorf("%q is not a policy (rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE; SCHED_OTHER, SCHED_FIFO, SCHED_RR and SCHED_DEADLINE are supported)", n.str)
}

// rejectedKey returns why a task or phase key is refused, or "".
func rejectedKey(key string) string {
	switch key {
	case "taskgroup":
		return "task groups (cgroups) are not modelled"
	}
	return ""
}

// rtappOldGrammar are keys of rt-app's old task grammar ("exec",
// "period", "deadline", "lock_order", "resources" per task: the
// doc/examples/merge thread files still use it). Current rt-app does not
// read it either: parse_task_data ignores "exec", and obj_is_event takes
// "lock_order" for a "lock" event whose array value makes rt-app exit
// ("Unknown or mismatch lock_order event type").
var rtappOldGrammar = []string{"exec", "lock_order", "resources"}

// checkUclamp validates util_min/util_max as rt-app's parse_sched_data
// does (-1: unchanged, else at most 1024); the value is then ignored:
// uclamp only steers CPU frequency (schedutil) and placement on CPUs of
// unequal capacity (EAS, util_fits_cpu), and the engine models neither,
// so on its machines it changes no scheduling decision.
func checkUclamp(f *jField) error {
	v, err := f.val.integer()
	if err != nil || v < -1 || v > 1024 {
		return fmt.Errorf("%s: must be an integer 0..1024 (or -1: unchanged)", f.key)
	}
	return nil
}

const rtappTaskFields = "instance, loop, delay, priority, nice, policy, cpus, phases, dl-runtime (SCHED_DEADLINE's runtime, else the custom slice), dl-period, dl-deadline, dl-reclaim, period, deadline (SCHED_DEADLINE only); ignored: util_min, util_max, nodes_membind, membind_nodes"
const rtappPhaseFields = "loop, policy, priority, nice, cpus; ignored: util_min, util_max, nodes_membind, membind_nodes"

func parseTask(name string, line int, n *jNode, def engine.Policy) (RTAppTask, error) {
	p := place{task: name}
	t := RTAppTask{Name: name, Instances: 1, Loop: -1, line: line, Policy: def}
	if name == "" {
		return t, p.errf(line, "a task needs a non-empty name")
	}
	if n.kind != jObject {
		return t, p.errf(n.line, "must be an object, got %s", n.kindName())
	}
	for i := range n.fields {
		f := &n.fields[i]
		for _, k := range rtappOldGrammar {
			if f.key == k {
				return t, p.errf(f.line, "field %q is rt-app's old task grammar (exec, period, deadline, lock_order, resources), which current rt-app does not read either: its parser ignores \"exec\" and takes \"lock_order\" for a \"lock\" event, then exits on its array value; write the task with events (run, sleep, lock, ...)", f.key)
			}
		}
	}
	var phases *jNode
	var loop *jField
	var direct []*jField // events written directly in the task
	var prio, nice *jField
	var dl rtappDLFields
	for i := range n.fields {
		f := &n.fields[i]
		switch f.key {
		case "dl-runtime":
			v, err := f.val.integer()
			if err != nil || v < 0 || v > rtappMaxUS {
				return t, p.errf(f.line, "dl-runtime: must be an integer 0..%d (µs)", rtappMaxUS)
			}
			t.Slice = v * engine.Microsecond
			dl.runtime = f
		case "dl-period", "dl-deadline", "period", "deadline":
			// rt-app hands a SCHED_OTHER thread only the runtime
			// (__set_thread_sched_other_attrs: sched_runtime); a
			// SCHED_DEADLINE thread gets them all (dlParams).
			if v, err := f.val.integer(); err != nil || v < 0 || v > rtappMaxUS {
				return t, p.errf(f.line, "%s: must be an integer 0..%d (µs)", f.key, rtappMaxUS)
			}
			*map[string]**jField{"dl-period": &dl.period, "dl-deadline": &dl.deadline, "period": &dl.oldPeriod, "deadline": &dl.oldDeadline}[f.key] = f
		case "dl-reclaim":
			// rt-app's wip/grub branch (commit 301dac2, "add support for
			// SCHED_DEADLINE bandwidth reclaiming"): parse_thread_data
			// reads a boolean and sets SCHED_FLAG_RECLAIM with it.
			if f.val.kind != jBool {
				return t, p.errf(f.line, "dl-reclaim: must be true or false, got %s", f.val.kindName())
			}
			t.DL.Reclaim = f.val.b
		case "util_min", "util_max":
			if err := checkUclamp(f); err != nil {
				return t, p.errf(f.line, "%v", err)
			}
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
			pol, err := checkPolicy(f.val)
			if err != nil {
				return t, p.errf(f.line, "policy: %v", err)
			}
			t.Policy, t.HasPolicy = pol, true
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
				if f.key == "runtime" {
					dl.oldRuntime = f
				}
				continue
			}
			return t, p.errf(f.line, "unknown field %q (task fields: %s; events: %s)", f.key, rtappTaskFields, rtappSupportedEvents)
		}
	}
	if t.Policy == engine.PolicyDeadline {
		if err := dl.params(p, &t); err != nil {
			return t, err
		}
		// parse_sched_data reads "priority" (an integer, default 0) but
		// __sched_priority hands a SCHED_DEADLINE thread 0; rt-app
		// reads no "nice".
		if prio != nil {
			if _, err := prio.val.integer(); err != nil {
				return t, p.errf(prio.line, "priority: must be an integer (ignored under SCHED_DEADLINE)")
			}
		}
		if nice != nil {
			return t, p.errf(nice.line, "nice: a SCHED_DEADLINE task has no nice value (its reservation is dl-runtime, dl-period, dl-deadline)")
		}
		t.Slice = 0
		prio, nice = nil, nil
	} else {
		t.DL = engine.DLParams{}
	}
	if t.Policy == engine.PolicyFIFO || t.Policy == engine.PolicyRR {
		// parse_sched_data: "priority" is the rt_priority (default
		// DEFAULT_THREAD_PRIORITY, 10); a SCHED_FIFO/RR thread has no
		// nice, and rt-app does not hand it the dl-runtime.
		t.RTPrio = 10
		if prio != nil {
			v, err := prio.val.integer()
			if err != nil || v < 1 || v > 99 {
				return t, p.errf(prio.line, "priority: must be an rt priority, an integer 1..99, under %s", rtappPolicyName(t.Policy))
			}
			t.RTPrio = int(v)
		}
		if nice != nil {
			return t, p.errf(nice.line, "nice: a %s task has no nice value (its \"priority\" is the rt priority)", rtappPolicyName(t.Policy))
		}
		t.Slice = 0
		prio, nice = nil, nil
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
		// Under workgen a phase given twice is two phases (rtapp_workgen.go).
		for _, pf := range workgenUnique(phases.fields) {
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
		case "policy", "priority", "util_min", "util_max":
			if t.Policy == engine.PolicyDeadline {
				// parse_sched_data gives the phase scheduling data of its
				// own, which set_thread_param applies when the phase
				// starts (_set_thread_deadline, with the phase's runtime:
				// 0); sched_setattr refuses it (EINVAL) and rt-app exits.
				return ph, p.errf(f.line, "field %q: a SCHED_DEADLINE task's phase cannot set scheduling parameters (rt-app would call sched_setattr with the phase's runtime, 0, and exit on EINVAL); set them on the task", f.key)
			}
		}
		switch f.key {
		case "loop":
			v, err := parseLoop(f.val)
			if err != nil {
				return ph, p.errf(f.line, "loop: %v", err)
			}
			ph.Loop = v
		case "policy":
			pol, err := checkPolicy(f.val)
			if err != nil {
				return ph, p.errf(f.line, "policy: %v", err)
			}
			if pol != t.Policy {
				return ph, p.errf(f.line, "policy: changing the policy per phase (%s to %s) is not supported: the engine cannot change a running task's class; set \"policy\" on the task", rtappPolicyName(t.Policy), rtappPolicyName(pol))
			}
		case "priority", "nice":
			if t.Policy == engine.PolicyDeadline {
				return ph, p.errf(f.line, "nice: a SCHED_DEADLINE task has no nice value")
			}
			if t.Policy != engine.PolicyNormal {
				v, err := f.val.integer()
				if err != nil || f.key != "priority" || int(v) != t.RTPrio {
					return ph, p.errf(f.line, "%s: changing a %s task's priority per phase is not supported (the engine cannot change a running task's priority); set \"priority\" on the task", f.key, rtappPolicyName(t.Policy))
				}
				continue
			}
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
			ph.CPUs = cpus
		case "util_min", "util_max":
			if err := checkUclamp(f); err != nil {
				return ph, p.errf(f.line, "%v", err)
			}
		case "dl-runtime", "dl-period", "dl-deadline":
			return ph, p.errf(f.line, "field %q is not supported per phase: rt-app applies a phase's scheduling parameters only with its priority, and the engine cannot renice or re-slice a running task (set \"dl-runtime\" on the task)", f.key)
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

// rtappDLFields are a task's fields that make a SCHED_DEADLINE
// reservation: "dl-runtime", "dl-period", "dl-deadline" and, from rt-app's
// legacy grammar, "runtime" (a runtime event written in the task),
// "period" and "deadline".
type rtappDLFields struct {
	runtime, period, deadline          *jField
	oldRuntime, oldPeriod, oldDeadline *jField
}

// dlValue is one deadline parameter as rt-app resolves it: µs, and the
// field it came from ("" when it is 0 from no field), for errors.
type dlValue struct {
	us   int64
	from *jField
}

// or is v, else (when v is 0) the field f's value, else def.
func (v dlValue) or(f *jField, def dlValue) dlValue {
	if v.us != 0 {
		return v
	}
	if f == nil {
		return def
	}
	x, _ := f.val.integer()
	return dlValue{x, f}
}

// params sets t.DL as rt-app's parse_sched_data (src/rt-app_parse_config.c
// at HEAD, 55cb0c0) reads a thread's deadline parameters: dl-runtime
// (default 0), dl-period (default the runtime), dl-deadline (default the
// period); then, for the thread object, the legacy "runtime", "period"
// (default the runtime) and "deadline" (default the period) fill those
// still 0; all µs, then ns. So with a dl-runtime, a missing dl-period is
// the runtime (a 100% reservation) and a missing dl-deadline the period.
// (The wip/grub branch's parse_thread_data, 301dac2, has the same
// defaults but consults the legacy "period"/"deadline" whenever dl-period
// or dl-deadline is missing; HEAD's reading is the one modelled.) rt-app
// hands the three to sched_setattr, so they must pass __checkparam_dl
// (runtime >= 1024 ns, runtime <= deadline <= period), else rt-app exits
// on EINVAL: refused here, naming the field the value came from.
func (dl *rtappDLFields) params(p place, t *RTAppTask) error {
	runtime := dlValue{}.or(dl.runtime, dlValue{})
	period := dlValue{}.or(dl.period, runtime)
	deadline := dlValue{}.or(dl.deadline, period)
	if runtime.us == 0 && dl.oldRuntime != nil {
		runtime = runtime.or(dl.oldRuntime, runtime)
	}
	period = period.or(dl.oldPeriod, runtime)
	deadline = deadline.or(dl.oldDeadline, period)
	name := func(v dlValue) (string, int) {
		if v.from == nil {
			return "dl-runtime", 0
		}
		return v.from.key, v.from.line
	}
	switch {
	case runtime.us <= 0:
		_, line := name(runtime)
		return p.errf(line, "dl-runtime: a SCHED_DEADLINE task needs a runtime (µs, at least 2): rt-app would hand sched_setattr a runtime of 0, which it refuses (EINVAL)")
	case runtime.us*engine.Microsecond < dlMinRuntimeNS:
		key, line := name(runtime)
		return p.errf(line, "%s: %d µs is below the kernel's minimum SCHED_DEADLINE runtime of 1024 ns (1 << DL_SCALE): at least 2", key, runtime.us)
	case deadline.us < runtime.us:
		key, line := name(deadline)
		return p.errf(line, "%s: the deadline, %d µs, is shorter than the runtime, %d µs (sched_setattr needs runtime <= deadline <= period: EINVAL)", key, deadline.us, runtime.us)
	case period.us < deadline.us:
		key, line := name(deadline)
		why := ""
		if period.from == runtime.from {
			why = "; without dl-period rt-app takes the runtime as the period"
		}
		return p.errf(line, "%s: the deadline, %d µs, is longer than the period, %d µs (sched_setattr needs runtime <= deadline <= period: EINVAL%s)", key, deadline.us, period.us, why)
	}
	t.DL.Runtime = runtime.us * engine.Microsecond
	t.DL.Period = period.us * engine.Microsecond
	t.DL.Deadline = deadline.us * engine.Microsecond
	return nil
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
	case "resume", "signal", "broad", "barrier", "lock", "unlock", "sem_post", "sem_wait", "fork":
		if v.kind != jString || v.str == "" {
			return e, bad("must be a non-empty string naming the %s", map[string]string{
				"resume": "task to resume", "signal": "condition variable", "broad": "condition variable",
				"barrier": "barrier", "lock": "mutex", "unlock": "mutex",
				"sem_post": "semaphore", "sem_wait": "semaphore", "fork": "task to fork"}[kind])
		}
		e.Ref = v.str
	case "yield":
		// rt-app reads no value ("String can be empty").
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
	posted := map[string]bool{}     // semaphores with a sem_post
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
				case "sem_post":
					posted[e.Ref] = true
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
				case "sem_wait":
					if !posted[e.Ref] {
						return p.errf(e.line, "event %q: no task posts semaphore %q (sem_post), so the wait never returns", e.Key, e.Ref)
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

// rtappForksLimit is rt-app's FORKS_LIMIT (src/rt-app.c): the forks of
// one "fork" name after which rt-app exits with an error.
const rtappForksLimit = 1024

// checkForks checks the "fork" events: each names a task (rt-app's
// find_thread_data looks the task up by name), a forked task has no
// barrier ("barrier can't be used with fork event": the number of parties
// must be known at parse time), and the forks of a name stay within
// rt-app's FORKS_LIMIT, counting the forks that forked threads make in
// turn. It marks the forked tasks.
func (app *RTApp) checkForks() error {
	byName := map[string]int{}
	for i := range app.Tasks {
		byName[app.Tasks[i].Name] = i
	}
	some := false
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind != "fork" {
					continue
				}
				j, ok := byName[e.Ref]
				if !ok {
					return place{task: t.Name, phase: ph.Name}.errf(e.line, "event %q: no task named %q to fork (known: %s)", e.Key, e.Ref, strings.Join(sortedKeys(byName), ", "))
				}
				app.Tasks[j].Forked, some = true, true
			}
		}
	}
	if !some {
		return nil
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		if !t.Forked {
			continue
		}
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "barrier" {
					return place{task: t.Name, phase: ph.Name}.errf(e.line, "event %q: task %q is forked, and a barrier cannot be used with fork events (rt-app counts a barrier's parties when it parses the file)", e.Key, t.Name)
				}
			}
		}
	}
	_, err := app.forkFlow(app.forkPer())
	return err
}

// forkFlow returns how many threads of each task fork events create in
// all, given per (per[i][j]: the threads of task j one thread of task i
// forks in its life, -1 without end): the threads of a task are its
// instances and its forks, and each forks in turn; iterated to the fixed
// point, where a cycle of forks grows past any limit.
func (app *RTApp) forkFlow(per []map[int]int64) ([]int64, error) {
	threads := make([]int64, len(app.Tasks))
	for i := range app.Tasks {
		threads[i] = int64(app.Tasks[i].Instances)
	}
	for range 2*len(app.Tasks) + 2 {
		forks := make([]int64, len(app.Tasks))
		for i, m := range per {
			for j, n := range m {
				if threads[i] > 0 {
					forks[j] = satAdd(forks[j], satMul(threads[i], n))
				}
			}
		}
		changed := false
		for j := range app.Tasks {
			if forks[j] < 0 || forks[j] > rtappForksLimit {
				t := &app.Tasks[j]
				return nil, place{task: t.Name}.errf(t.line, "is forked more than rt-app's limit of %d times (FORKS_LIMIT: rt-app exits there), counting every loop of every forking thread; give the forking loops an end", rtappForksLimit)
			}
			if n := int64(app.Tasks[j].Instances) + forks[j]; n != threads[j] {
				threads[j], changed = n, true
			}
		}
		if !changed {
			total := int64(0)
			for _, n := range threads {
				total += n
			}
			if total > RTAppMaxThreads {
				return nil, place{phase: "top level"}.errf(0, "the file creates %d threads with its forks, more than %d", total, RTAppMaxThreads)
			}
			return forks, nil
		}
	}
	return nil, place{phase: "top level"}.errf(0, "fork events form a cycle that forks without end (rt-app exits at FORKS_LIMIT, %d forks)", rtappForksLimit)
}

// forkCounts is forkFlow of the file's fork events (checked already).
func (app *RTApp) forkCounts() []int64 {
	forks, _ := app.forkFlow(app.forkPer())
	return forks
}

// forkPer returns per[i][j]: how many threads of task j one thread of
// task i forks in its life (-1: without end).
func (app *RTApp) forkPer() []map[int]int64 {
	per := make([]map[int]int64, len(app.Tasks))
	byName := map[string]int{}
	for i := range app.Tasks {
		byName[app.Tasks[i].Name] = i
	}
	for i := range app.Tasks {
		t := &app.Tasks[i]
		for _, ph := range t.Phases {
			for _, e := range ph.Events {
				if e.Kind == "fork" {
					if per[i] == nil {
						per[i] = map[int]int64{}
					}
					per[i][byName[e.Ref]] = satAdd(per[i][byName[e.Ref]], satMul(t.Loop, ph.Loop))
				}
			}
		}
	}
	return per
}

// satMul and satAdd multiply and add loop counts, -1 meaning without end.
func satMul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if a != 0 && b > (1<<40)/a {
		return 1 << 40
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return min(a+b, 1<<40)
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
	if f := pos / rtappFileScale; f > 0 {
		return fmt.Sprintf("%s%d, %s", rtappFileMark, f, lineText(pos%rtappFileScale))
	}
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

// rtappPolicyName is rt-app's name of a policy.
func rtappPolicyName(p engine.Policy) string {
	return map[engine.Policy]string{engine.PolicyNormal: "SCHED_OTHER", engine.PolicyFIFO: "SCHED_FIFO", engine.PolicyRR: "SCHED_RR", engine.PolicyDeadline: "SCHED_DEADLINE"}[p]
}
