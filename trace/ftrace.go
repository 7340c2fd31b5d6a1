package trace

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"schedplay/engine"
)

// Ftrace writes a simulation's scheduling events as Linux ftrace text, the
// way the kernel's trace file (and `trace-cmd report`) prints the sched
// tracepoints: sched_switch, sched_waking, sched_wakeup and
// sched_migrate_task. Perfetto reads it natively ("# tracer: nop" header)
// and builds CPU scheduling tracks, thread-state tracks and waker
// attribution from it (perfetto.md, "Native alternative").
//
// Each line is "<comm>-<pid> [<cpu>] <flags> <secs>.<ns>: <event>: <args>".
// A task's pid is its simulator task id + 1 (0 is the idle task
// "<idle>"), its prio 120 + nice (99 - rt_priority for an RT task, as
// the kernel's p->prio), its comm the task name with spaces and '='
// replaced by '_' and cut to 15 bytes (TASK_COMM_LEN). Timestamps have
// 9 decimals (ns). sched_waking and sched_wakeup are printed on the
// waker's CPU at the decision time (the line's task is the waker; for a
// timer or interrupt wakeup the CPU's current task), sched_migrate_task
// when the chosen CPU differs from the task's previous one.
type Ftrace struct {
	w       *bufio.Writer
	cw      *countWriter
	sim     *engine.Sim
	opt     Options
	events  int
	dropped int
	cut     cutState
	err     error
	running []*engine.Task
}

// AttachFtrace starts an ftrace text trace of sim on w, bounded by opt.
func AttachFtrace(sim *engine.Sim, w io.Writer, opt Options) *Ftrace {
	cw := &countWriter{w: w}
	f := &Ftrace{w: bufio.NewWriterSize(cw, 1<<16), cw: cw, sim: sim, opt: opt.withDefaults(),
		running: make([]*engine.Task, sim.Topology().NCPU), cut: cutState{at: -1}}
	f.printf("# tracer: nop\n#\n# schedplay: machine %s, %d CPUs\n#\n#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION\n#              | |         |   ||||      |         |\n",
		sim.Topology().Spec.Name, sim.Topology().NCPU)
	sim.SetHooks(engine.Hooks{OnSwitch: f.onSwitch, OnWakeup: f.onWakeup})
	return f
}

func (f *Ftrace) printf(format string, args ...any) {
	if f.err == nil {
		_, f.err = fmt.Fprintf(f.w, format, args...)
	}
}

// comm is a task's command name as the kernel would print it.
func comm(t *engine.Task) string {
	if t == nil {
		return "<idle>"
	}
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '=' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, t.Name)
	if len(s) > 15 {
		s = s[:15]
	}
	if s == "" {
		s = "task"
	}
	return s
}

// argComm is comm as sched_switch's fields print it: the idle task is
// "swapper/<cpu>" there (the line's own task column says "<idle>").
func argComm(t *engine.Task, cpu int) string {
	if t == nil {
		return fmt.Sprintf("swapper/%d", cpu)
	}
	return comm(t)
}

func pid(t *engine.Task) int {
	if t == nil {
		return 0
	}
	return int(t.ID) + 1
}

func prio(t *engine.Task) int {
	if t == nil {
		return 120
	}
	// The kernel's p->prio: 99 - rt_priority for SCHED_FIFO/SCHED_RR
	// (below 100: the RT class), 120 + nice for a fair task.
	if t.Policy() != engine.PolicyNormal {
		return 99 - t.RTPrio()
	}
	return 120 + t.Nice
}

// line writes one event line, unless the window, the CPUs or the byte
// cap exclude it.
func (f *Ftrace) line(cpu int, cur *engine.Task, event, format string, args ...any) {
	now := f.sim.Now()
	if !f.opt.in(now) || !f.opt.cpu(cpu) {
		return
	}
	if f.cut.at >= 0 || f.cw.n+int64(f.w.Buffered()) >= f.opt.MaxBytes-256 {
		if f.cut.at < 0 {
			f.cut.at = now
		}
		f.dropped++
		return
	}
	f.events++
	f.printf("%16s-%-7d [%03d] d..3 %d.%09d: %s: ", comm(cur), pid(cur), cpu, now/1e9, now%1e9, event)
	f.printf(format, args...)
	f.printf("\n")
}

func (f *Ftrace) onSwitch(cpu int, prev, next *engine.Task) {
	state := prevState(prev)
	f.line(cpu, prev, "sched_switch", "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d",
		argComm(prev, cpu), pid(prev), prio(prev), state, argComm(next, cpu), pid(next), prio(next))
	f.running[cpu] = next
}

func (f *Ftrace) onWakeup(d *engine.Decision) {
	t := f.sim.Task(d.Task)
	cur := f.running[d.WakerCPU]
	// sched_waking's target_cpu is task_cpu(p) before select_task_rq
	// moves it (include/trace/events/sched.h, sched_wakeup_template; the
	// tracepoint is at the top of try_to_wake_up, kernel/sched/core.c,
	// v5.2 and v6.6): the previous CPU. sched_wakeup's is the chosen one.
	f.line(d.WakerCPU, cur, "sched_waking", "comm=%s pid=%d prio=%d target_cpu=%03d", comm(t), pid(t), prio(t), d.Prev)
	if d.Chosen != d.Prev {
		f.line(d.WakerCPU, cur, "sched_migrate_task", "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", comm(t), pid(t), prio(t), d.Prev, d.Chosen)
	}
	f.line(d.WakerCPU, cur, "sched_wakeup", "comm=%s pid=%d prio=%d target_cpu=%03d", comm(t), pid(t), prio(t), d.Chosen)
}

// Close finishes the file (a last comment line says where the cap cut it).
func (f *Ftrace) Close() error { return f.finish(false) }

// CloseInterrupted is Close for a run stopped before its end.
func (f *Ftrace) CloseInterrupted() error { return f.finish(true) }

func (f *Ftrace) finish(interrupted bool) error {
	f.sim.SetHooks(engine.Hooks{})
	if f.cut.at >= 0 {
		f.printf("# schedplay: cut at %.9f s by the %d-byte cap; %d events dropped\n", float64(f.cut.at)/1e9, f.opt.MaxBytes, f.dropped)
	}
	if interrupted {
		f.printf("# schedplay: truncated: the run was interrupted at %.9f s\n", float64(f.sim.Now())/1e9)
	}
	if f.err != nil {
		return f.err
	}
	return f.w.Flush()
}

// Stats describes the trace written.
func (f *Ftrace) Stats() Stats {
	return Stats{Events: f.events, Dropped: f.dropped, Bytes: f.cw.n, CutAt: f.cut.at, MaxBytes: f.opt.MaxBytes}
}

// Writer is a trace being written: Chrome JSON or ftrace text.
type Writer interface {
	Close() error
	CloseInterrupted() error
	Stats() Stats
}

// Format is a trace file format.
type Format string

// The formats.
const (
	FormatJSON   Format = "json"    // Chrome Trace Event JSON
	FormatJSONGz Format = "json.gz" // the same, gzip-compressed
	FormatFtrace Format = "ftrace"  // ftrace text
)

// Formats lists the formats by name.
var Formats = []Format{FormatJSON, FormatJSONGz, FormatFtrace}

// FormatOf picks the format from a file name: .json, .json.gz (or .gz),
// .ftrace.txt (or .ftrace, .txt); ok is false for another name.
func FormatOf(name string) (Format, bool) {
	switch {
	case strings.HasSuffix(name, ".json.gz"), strings.HasSuffix(name, ".gz"):
		return FormatJSONGz, true
	case strings.HasSuffix(name, ".json"):
		return FormatJSON, true
	case strings.HasSuffix(name, ".ftrace.txt"), strings.HasSuffix(name, ".ftrace"), strings.HasSuffix(name, ".txt"):
		return FormatFtrace, true
	}
	return "", false
}

// prevState is the task-state letter a switch records for the task that
// leaves the CPU, as sched_switch's prev_state prints it: S blocked, X
// exited, R still runnable (preempted) or no task (idle).
func prevState(prev *engine.Task) string {
	if prev == nil {
		return "R"
	}
	switch prev.State() {
	case engine.TaskBlocked:
		return "S"
	case engine.TaskExited:
		return "X"
	}
	return "R"
}
