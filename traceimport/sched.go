package traceimport

import (
	"io"
)

// SchedEvent is one scheduler tracepoint of a text trace (ftrace,
// trace-cmd report, perf sched script), as ReadSched gives it: what the
// kernel oracle's measures read from the real kernel's trace and from
// the simulation's ftrace export alike.
type SchedEvent struct {
	Line int
	TS   int64 // ns
	CPU  int
	// Name is the tracepoint: sched_switch, sched_waking, sched_wakeup,
	// sched_wakeup_new, sched_process_fork, sched_process_exit,
	// sched_migrate_task.
	Name string
	// PID and Comm are the line's task: the one current on the CPU (a
	// wakeup's waker, unless IRQ).
	PID  int
	Comm string
	IRQ  bool // in interrupt context (the flags say h, s or z)
	// Task is the wakee (wakeups), the task (exit, migrate) or the
	// parent (fork); Prev and Next are a switch's, with PrevState; Child
	// is a fork's.
	Task, Prev, Next, Child SchedTask
	PrevState               string
	// TargetCPU is a wakeup's target_cpu or a migration's dest_cpu,
	// OrigCPU a migration's orig_cpu; -1 when the line has none.
	TargetCPU, OrigCPU int
}

// SchedTask is a task an event names.
type SchedTask struct {
	Comm string
	PID  int
	Prio int // 0 when not given
}

// ReadSched reads a text trace line by line and calls fn with each
// scheduler event, in the file's order (a trace file's per-CPU buffers
// come merged by time; perf's do not always). Lines of other events and
// the tracer's comments are skipped; a line it cannot read is an error
// naming it (*ParseError). It stops at fn's first error.
func ReadSched(r io.Reader, fn func(*SchedEvent) error) error {
	strs := newStrTable()
	src, err := openInput(r, MaxInputBytes) // gzip'd or plain
	if err != nil {
		return err
	}
	var se SchedEvent
	task := func(t taskRef) SchedTask {
		return SchedTask{Comm: strs.str(t.comm), PID: int(t.pid), Prio: int(t.prio)}
	}
	_, err = parseText(src, FormatAuto, strs, func(ev *event) error {
		se = SchedEvent{Line: int(ev.line), TS: ev.ts, CPU: int(ev.cpu), Name: kindName(ev.kind), PID: int(ev.pid),
			Comm: strs.str(ev.comm), IRQ: ev.irq, TargetCPU: int(ev.target), OrigCPU: int(ev.orig)}
		switch ev.kind {
		case evSwitch:
			se.Prev, se.Next, se.PrevState = task(ev.a), task(ev.b), strs.str(ev.state)
		case evFork:
			se.Task, se.Child = task(ev.a), task(ev.b)
		default:
			se.Task = task(ev.a)
		}
		return fn(&se)
	}, nil)
	return err
}

// kindName is a kind's tracepoint name.
func kindName(k kind) string {
	for name, kk := range kindNames {
		if kk == k {
			return name
		}
	}
	return ""
}
