// rt-app workloads.
//
// rt-app (https://github.com/scheduler-tools/rt-app, doc/tutorial.txt) is
// the JSON workload format scheduler developers already write. This file
// accepts the subset of it that the engine models (SCHED_OTHER, SCHED_FIFO,
// SCHED_RR and SCHED_DEADLINE threads) as the open format for custom
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
//     for the caller to use as the run length), "default_policy"
//     (SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE), "calibration" (validated — "CPU<n>" or ns per loop —
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
//     CPU ids: the affinity), "policy" (SCHED_OTHER, SCHED_FIFO, SCHED_RR,
//     SCHED_DEADLINE), "delay" (µs before the first loop), "dl-runtime"
//     (µs: the custom slice rt-app requests for a SCHED_OTHER thread with
//     sched_attr.sched_runtime, engine.TaskSpec.Slice: era 6.12; for a
//     SCHED_DEADLINE thread its runtime), "dl-period", "dl-deadline" (µs,
//     a SCHED_DEADLINE thread's period and relative deadline; missing, the
//     runtime and the period, as rt-app's parse_sched_data fills them,
//     with its legacy "runtime"/"period"/"deadline" for what is still 0)
//     and "dl-reclaim" (true: SCHED_FLAG_RECLAIM, from rt-app's wip/grub
//     branch), engine.TaskSpec.DL, and either events directly in the
//     task or "phases": an ordered object of phases, each with "loop"
//     (default 1, -1 forever), "cpus" (the affinity while the phase runs;
//     without it the task's: rt-app's set_thread_affinity, a
//     sched_setaffinity at the phase loop when the mask changes,
//     engine.Ctx.SetAffinity) and events. A task's "loop" counts passes
//     over all its phases; without "phases" it counts passes over its
//     events. Read and ignored: "util_min"/"util_max" (uclamp steers
//     only frequency and asymmetric-capacity placement, neither
//     simulated), "dl-period"/"dl-deadline"/"period"/"deadline"/
//     "dl-reclaim" on other policies (rt-app gives a SCHED_OTHER thread
//     only the runtime), "priority" of a SCHED_DEADLINE thread (rt-app
//     passes 0),
//     "nodes_membind"/"membind_nodes" (no memory binding). Phase-level
//     "policy" must be the task's and phase-level "priority"/"nice" must
//     equal the task's (the engine cannot renice a running task); a
//     SCHED_DEADLINE task's phases set none of "policy", "priority",
//     "util_min", "util_max" (rt-app would apply them with a runtime of
//     0 and exit on EINVAL).
//   - events, run in file order; as in rt-app, a key is an event when it
//     starts with the event's name ("run1", "run_long"):
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
//     "sem_post"/"sem_wait" "ref": a counting semaphore, initial count 0,
//     as glibc's (a post raises the count and wakes the longest waiter,
//     which retries); posts are remembered.
//     "yield": sched_yield (engine.Yield: the era's yield_task_fair).
//     "fork" "task": creates one thread of the task there (rt-app's
//     create_thread, named "task-<index>-<nforks>"), its first affinity
//     the forker's; its tasks' threads are counted, and refused beyond
//     rt-app's FORKS_LIMIT (1024 forks of a task).
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
// Rejected with an error naming the task, phase and field: SCHED_BATCH and
// SCHED_IDLE (their rules are not modelled), SCHED_DEADLINE parameters
// sched_setattr refuses (no runtime, runtime < 1024 ns, not runtime <=
// deadline <= period), a SCHED_DEADLINE thread that forks or a fork of a
// SCHED_DEADLINE task, "taskgroup" (no cgroups), the events "mem", "memrun" and
// "iorun" (no memory or I/O model), "yield" on an era without a modelled
// sched_yield (2.6-o1), per-phase nice or slice changes, rt-app's old
// task grammar ("exec", "lock_order", "resources", which current rt-app
// does not read either), unknown keys, and references that cannot work: a
// resume of an unknown task, a suspend nobody resumes, a wait nobody
// signals, a sem_wait on a semaphore nobody posts, a signal nobody waits
// for, a fork of an unknown task or one without end, a barrier in a
// forked task (rt-app counts barrier parties at parse time), an unlock of
// a mutex the task never locks, a lock it never unlocks, and a lock of a
// mutex the thread already holds at that point of its events (including
// the next pass of a loop): rt-app's mutexes are not recursive, so the
// thread would block there forever. README.md's "rt-app grammar" lists
// every key.
//
// Each phase loop that took no simulated time at all (for example only
// lost signals and a timer already behind) is charged rtappGuardNS of
// work, so a program can never spin in zero time.

package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	// encoding/json, not goccy: its Decoder.InputOffset is exact after each
	// Token, which the line numbers of errors come from.
	"encoding/json"

	"schedplay/engine"
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
		Doc:  "an rt-app JSON workload (SCHED_OTHER, SCHED_FIFO/RR and SCHED_DEADLINE threads; run/runtime/sleep/timer, resume/suspend, signal/broad/wait/sync, barrier, lock/unlock); build the spec with RTAppSpec",
		Keys: []Key{
			{Name: "b64", Type: TextKey, Default: "", Doc: "the rt-app JSON file, base64url-encoded (required; on the command line file= fills it)"},
		},
		build: buildRTApp,
		check: func(b *Builder) error {
			app, err := parseRTAppB64(b.Str("b64"))
			if err != nil {
				return err
			}
			if b.Policy == engine.PolicyNormal {
				return nil
			}
			for i := range app.Tasks {
				t := &app.Tasks[i]
				if t.policyUnder(b.Policy) == b.Policy && t.Slice > 0 {
					return place{task: t.Name}.errf(t.line, "dl-runtime: asks for a SCHED_OTHER custom slice, but the task names no policy, so the spec's policy=%s applies; set \"policy\" in the file", b.Policy)
				}
			}
			return nil
		},
		forks: func(b *Builder) string {
			app, err := parseRTAppB64(b.Str("b64"))
			if err != nil {
				return ""
			}
			if err := app.deadlineForks(b.Policy); err != nil {
				return strings.TrimPrefix(err.Error(), "rtapp: ")
			}
			return ""
		},
	})
}

// RTApp is a parsed rt-app file.
type RTApp struct {
	// Duration is global.duration in ns; 0 when the file sets none (-1).
	Duration int64
	// DefaultPolicy is global.default_policy (SCHED_OTHER when unset).
	DefaultPolicy engine.Policy
	// Tasks in file order.
	Tasks []RTAppTask
}

// RTAppTask is one entry of "tasks".
type RTAppTask struct {
	Name      string
	Instances int
	// Loop is how many passes over all phases the task makes; -1: forever.
	Loop int64
	// Nice is "priority"/"nice" of a SCHED_OTHER task; HasNice says
	// whether the file set it.
	Nice    int
	HasNice bool
	// Policy is the task's "policy", else global.default_policy; RTPrio
	// its "priority" under SCHED_FIFO/SCHED_RR (rt-app's default 10,
	// DEFAULT_THREAD_PRIORITY). HasPolicy: the file chose the policy.
	Policy    engine.Policy
	RTPrio    int
	HasPolicy bool
	// CPUs is the affinity; nil: the spec's cpus (default all).
	CPUs []int
	// Delay before the first loop, ns.
	Delay int64
	// Slice is the custom slice "dl-runtime" asks for (ns; 0: none):
	// rt-app passes it to a SCHED_OTHER thread as sched_attr.sched_runtime,
	// which Linux 6.12 makes the task's slice (engine.TaskSpec.Slice).
	Slice int64
	// DL is a SCHED_DEADLINE task's reservation: "dl-runtime",
	// "dl-period", "dl-deadline" (µs; rt-app's defaults filled in, so
	// all three are set) and "dl-reclaim" (SCHED_FLAG_RECLAIM). Zero for
	// the other policies.
	DL engine.DLParams
	// Forked: some "fork" event creates threads of this task at run time
	// (besides its Instances created at start).
	Forked bool
	Phases []RTAppPhase
	line   int
}

// RTAppPhase is one phase; a task without "phases" has one phase named "".
type RTAppPhase struct {
	Name string
	// Loop is how many times the phase's events run in a row; -1: forever.
	Loop int64
	// CPUs is the phase's affinity, set when the phase starts; nil: the
	// task's (rt-app's set_thread_affinity: phase, else task, else the
	// thread's affinity when it first ran).
	CPUs   []int
	Events []RTAppEvent
}

// RTAppEvent is one event. Kind is the canonical event name ("run",
// "runtime", "sleep", "timer", "resume", "suspend", "signal", "broad",
// "wait", "sync", "barrier", "lock", "unlock", "sem_post", "sem_wait",
// "yield", "fork"); Key is the key as written.
type RTAppEvent struct {
	Key  string
	Kind string
	// NS is the duration of run/runtime/sleep and the period of timer.
	NS int64
	// Ref names the timer, task, condition variable, barrier, mutex or
	// semaphore.
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
		if t.Instances == 0 && !t.Forked {
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
		clean, _ = workgenFill(clean)
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
