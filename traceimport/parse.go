// Package traceimport reads scheduler traces — ftrace text (the kernel's
// trace and trace_pipe files, `trace-cmd report`), `perf sched script`
// output, a JSON trace's "systemTraceEvents" ftrace text (Perfetto's and
// Chrome's JSON), and the simulator's own exports (its ftrace text and its
// Chrome JSON) — and turns them into a replayable trace workload
// (workload.TraceFile): per task its CPU bursts and sleeps and, above
// all, who woke whom.
//
// The engine does no I/O: this package is what the command line (and a
// test) uses to make the file; the engine replays it (engine/workload,
// kind "trace").
package traceimport

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Format is an input format.
type Format string

// The formats.
const (
	FormatAuto   Format = "auto"
	FormatFtrace Format = "ftrace" // trace, trace_pipe, trace-cmd report, the simulator's .ftrace.txt
	FormatPerf   Format = "perf"   // perf sched script / perf script
	FormatChrome Format = "chrome" // the simulator's Chrome JSON (.json, .json.gz); a JSON trace's systemTraceEvents text
)

// Formats lists the formats --format accepts.
var Formats = []Format{FormatAuto, FormatFtrace, FormatPerf, FormatChrome}

// kind is a scheduler event the import uses.
type kind uint8

const (
	evSwitch kind = iota
	evWaking
	evWakeup
	evWakeupNew
	evFork
	evExit
	evMigrate
)

var kindNames = map[string]kind{
	"sched_switch": evSwitch, "sched_waking": evWaking, "sched_wakeup": evWakeup,
	"sched_wakeup_new": evWakeupNew, "sched_process_fork": evFork,
	"sched_process_exit": evExit, "sched_migrate_task": evMigrate,
}

// pidCurrent as an event's PID means "the task current on the CPU" (the
// Chrome export says which CPU a wakeup was decided on, not by whom).
const pidCurrent = -2

// event is one parsed scheduler event, 64 bytes: the import holds every
// one until the trace is read (see eventLog), so it keeps numbers and
// string ids, not the line.
type event struct {
	ts   int64 // ns
	line int32
	cpu  int32
	// pid and comm are the line's task: the one current on the CPU
	// (common_pid), the waker of a wakeup.
	pid  int32
	comm strID
	// a is prev (switch), the wakee (wakeups), the parent (fork), the
	// task (exit, migrate); b is next (switch) or the child (fork).
	a, b  taskRef
	state strID // switch: prev_state
	// target is a wakeup's target_cpu or a migration's dest_cpu, orig a
	// migration's orig_cpu; -1 when the line has none (ReadSched gives
	// them; the import does not use them).
	target, orig int32
	kind         kind
	// irq: the event happened in interrupt context (the flags say h, s
	// or z), so the line's task did not cause it.
	irq bool
	// order breaks ties between events at the same ts (Chrome only:
	// switches before wakeups); text keeps the file's order.
	order uint8
}

type taskRef struct {
	comm strID
	pid  int32
	prio int16 // clamped to int16: anything outside 100..139 is real-time alike
	has  bool  // prio given
}

// ParseError is an input line that cannot be read.
type ParseError struct {
	Line int
	Text string
	Why  string
	// In names the text the line is of when it is not the file's own
	// lines (a JSON trace's "systemTraceEvents"), "" otherwise.
	In string
}

func (e *ParseError) Error() string {
	if e.In != "" {
		return fmt.Sprintf("line %d of %s: %s: %q", e.Line, e.In, e.Why, shorten(e.Text, 160))
	}
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Why, shorten(e.Text, 160))
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// textStats counts what the text parser skipped.
type textStats struct {
	lines      int
	noise      int            // comments, headers, elisions, buffer-started lines
	lost       int64          // events the tracer says it lost
	lostLines  int            // lines reporting lost events
	skipped    map[string]int // events of other types, by name
	unknownLn  int            // first line of an unreadable kind, for messages
	formatSeen Format
	lineBytes  int64 // Chrome: the bytes examined to number the lines
	// ticks counts the events whose timestamp is an integer: a trace
	// clock counting ticks (counter, x86-tsc, uptime), read as ns.
	ticks int
	// badLines counts the lines that could not be read (the import goes
	// on without them); bad names the first maxBadLines.
	badLines int
	bad      []*ParseError
	fields   []field // parseLine's, reused line to line
}

var (
	// <comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <secs>.<frac>: <event>: <args>
	// The comm is everything before the last '-' that is followed by the
	// pid and the CPU column (comms may hold spaces, '-', digits, ':',
	// brackets); the flags are 4 to 7 characters (irqs-off, need-resched,
	// hardirq/softirq, preempt depth, migrate-disable; PREEMPT_RT adds
	// two), absent in trace-cmd report's default output.
	//
	// trace-cmd report -l ("latency output") glues the CPU and the flags
	// into one column ("0d.h1."); --ts-diff adds "(+0.000010)" after the
	// timestamp. So does the kernel's options/latency-format ("%8.8s-%-7d
	// %3d" and the flags, kernel/trace/trace_output.c lat_print_generic),
	// whose time is the µs since the trace began with a delay mark
	// ("259us+", "12us ", lat_print_timestamp).
	//
	// The timestamp is <secs>.<frac>, or an integer when the trace clock
	// counts ticks rather than time (trace_clock counter, x86-tsc,
	// uptime: trace_print_time's "%12llu"), read as ns.
	ftraceLine = regexp.MustCompile(`^\s*(.*?)-(\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?(?:\[(\d+)\]\s+(?:([.dDXBbn][^\s]{3,6})\s+)?|(\d+)([.dDXBbn][^\s]{3,6})\s+)(\d+\.\d+|\d+us[ +!#*@$]|\d+)(?:\s*\(\+?-?[\d.]+\))?:\s+([A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?):\s?(.*)$`)
	// <comm> <pid>[/<tid>] [<cpu>] <secs>.<frac>: [<period>] <sys>:<event>: <args>
	perfLine = regexp.MustCompile(`^\s*(.*?)\s+(\d+)(?:/(\d+))?\s+\[(\d+)\]\s+(\d+\.\d+|\d+):\s+(?:\d+\s+)?([A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?):\s?(.*)$`)

	lostLine = regexp.MustCompile(`^\s*CPU:?\s*(\d+)\s*\[LOST\s+(\d+)\s+EVENTS?\]\s*$`)
	// Lines that carry no event: the tracer's and trace-cmd's headers and
	// notes, and elisions in traces pasted into mails and issues.
	noiseLine = regexp.MustCompile(`^\s*(?:$|#|\[\s*\.\.\.\s*\]\s*$|\.\.\.\s*$|…\s*$|cpus=\d+\s*$|version\s*=|CPU\s*\d+ is empty|CPU\s*\d+ buffer started|CPU\s*\d+ data recorded|trace-cmd:|Warning:)`)
	// Systrace HTML (Perfetto's and systrace's): the trace is the text of
	// <script class="trace-data" type="application/text"> blocks; the
	// rest of the page (markup, the viewer's JavaScript) is no event.
	htmlStart     = regexp.MustCompile(`^\s*(?:<!DOCTYPE html|<html)`)
	traceDataOpen = regexp.MustCompile(`<script[^>]*class="trace-data"[^>]*>`)
)

// maxBadLines is how many unreadable lines an import names (it counts
// them all).
const maxBadLines = 10

// parseText reads ftrace or perf text line by line, giving each event
// to emit. f is FormatFtrace, FormatPerf or FormatAuto (each line may be
// either). A line it cannot read is given to bad (*ParseError): bad's
// error stops the read; nil bad means the first such line is the error.
//
// A line that cannot be read is held: when the next lines cannot be read
// alone either but they read as one event with it, they are one line
// wrapped in several (up to maxWrap: a mail client's, a terminal's copy).
func parseText(r io.Reader, f Format, strs *strTable, emit func(*event) error, bad func(*ParseError) error) (*textStats, error) {
	st := &textStats{skipped: map[string]int{}}
	lines := newLineReader(r)
	// html: the input is a systrace HTML page; inData: inside one of its
	// trace-data blocks.
	html, inData := false, false
	// held are the unreadable lines kept to be joined with the next.
	var held []*ParseError
	flush := func() error {
		for _, pe := range held {
			if bad == nil {
				return pe
			}
			if err := bad(pe); err != nil {
				return err
			}
		}
		held = held[:0]
		return nil
	}
	take := func(ev event, name string) error {
		if name != "" {
			st.skipped[name]++
			return nil
		}
		return emit(&ev)
	}
	for lineNo := 1; ; lineNo++ {
		raw, err := lines.next()
		if err == io.EOF {
			return st, flush()
		}
		if err != nil {
			return st, fmt.Errorf("line %d: %v", lineNo, err)
		}
		line := strings.TrimRight(string(raw), "\r")
		st.lines++
		if st.lines == 1 || (!html && st.lines == st.noise+1) {
			html = htmlStart.MatchString(line)
		}
		if html {
			if !inData {
				loc := traceDataOpen.FindStringIndex(line)
				if loc == nil {
					st.noise++
					continue
				}
				inData, line = true, line[loc[1]:]
			}
			if i := strings.Index(line, "</script>"); i >= 0 {
				inData, line = false, line[:i]
			}
			// A trace-data block may hold JSON (metadata, other tracks).
			if t := strings.TrimSpace(line); t != "" && strings.ContainsRune("{}[]\"", rune(t[0])) {
				st.noise++
				continue
			}
		}
		line = unquoteMail(line)
		if isNoise(line) {
			st.noise++
			if err := flush(); err != nil {
				return st, err
			}
			continue
		}
		if m := lostLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			st.lost += n
			st.lostLines++
			if err := flush(); err != nil {
				return st, err
			}
			continue
		}
		ev, name, err := parseLine(line, lineNo, f, st, strs)
		if err == nil {
			if err := flush(); err != nil {
				return st, err
			}
			if err := take(ev, name); err != nil {
				return st, err
			}
			continue
		}
		pe, ok := err.(*ParseError)
		if !ok {
			return st, err
		}
		// The lines before could not be read either: they may be one
		// line wrapped, starting at the latest of them that makes one
		// (a comm takes anything before it, so an earlier start would
		// swallow an unreadable line into it).
		joined := false
		for i := len(held) - 1; i >= 0 && !joined; i-- {
			var b strings.Builder
			for _, h := range held[i:] {
				b.WriteString(strings.TrimRight(h.Text, " \t"))
				b.WriteByte(' ')
			}
			b.WriteString(strings.TrimLeft(line, " \t"))
			jev, jname, jerr := parseLine(b.String(), held[i].Line, f, st, strs)
			if jerr != nil {
				continue
			}
			held = held[:i]
			if err := flush(); err != nil {
				return st, err
			}
			if err := take(jev, jname); err != nil {
				return st, err
			}
			joined = true
		}
		if joined {
			continue
		}
		if len(held) == maxWrap-1 {
			if err := flush(); err != nil {
				return st, err
			}
		}
		held = append(held, pe)
	}
}

// maxWrap is the most lines one event line is taken to be wrapped in.
const maxWrap = 4

// unquoteMail drops the "> " marks a mail reply puts before the lines it
// quotes (no trace line starts with '>').
func unquoteMail(line string) string {
	t := strings.TrimLeft(line, " \t")
	if t == "" || t[0] != '>' {
		return line
	}
	for t != "" && t[0] == '>' {
		t = strings.TrimLeft(t[1:], " \t")
	}
	return t
}

// isNoise reports whether a line carries no event: a header, a note, an
// elision, a latency tracer's stack trace.
func isNoise(line string) bool {
	if noiseLine.MatchString(line) {
		return true
	}
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "=> ") || strings.HasSuffix(t, ": <stack trace>") || strings.HasSuffix(t, ": <user stack trace>")
}

// parseLine reads one event line. A well-formed line of an event type the
// import does not use returns its name (to be counted), no error.
func parseLine(line string, lineNo int, f Format, st *textStats, strs *strTable) (event, string, error) {
	var comm, pidS, cpuS, flags, tsS, name, args string
	matched := false
	if f != FormatPerf {
		if m := ftraceLine.FindStringSubmatch(line); m != nil {
			comm, pidS, cpuS, flags, tsS, name, args = m[1], m[2], m[3], m[4], m[7], m[8], m[9]
			if cpuS == "" { // trace-cmd report -l
				cpuS, flags = m[5], m[6]
			}
			matched = true
			if st.formatSeen == "" {
				st.formatSeen = FormatFtrace
			}
		}
	}
	if !matched && f != FormatFtrace {
		if m := perfLine.FindStringSubmatch(line); m != nil {
			comm, pidS, cpuS, tsS, name, args = m[1], m[2], m[4], m[5], m[6], m[7]
			if m[3] != "" {
				pidS = m[3] // pid/tid: the thread is the task
			}
			matched = true
			if st.formatSeen == "" {
				st.formatSeen = FormatPerf
			}
		}
	}
	bad := func(why string) (event, string, error) {
		return event{}, "", &ParseError{Line: lineNo, Text: line, Why: why}
	}
	if !matched {
		switch f {
		case FormatFtrace:
			return bad("not an ftrace event line (<comm>-<pid> [<cpu>] [<flags>] <secs>: <event>: <fields>)")
		case FormatPerf:
			return bad("not a perf script event line (<comm> <pid> [<cpu>] <secs>: <event>: <fields>)")
		}
		return bad("not an event line of ftrace, trace-cmd report or perf script")
	}
	name = strings.TrimPrefix(name, "sched:")
	args = strings.TrimLeft(args, " \t")
	k, ok := kindNames[name]
	if !ok {
		return event{}, name, nil
	}
	ev := event{line: int32(lineNo), kind: k, comm: strs.id(strings.TrimSpace(comm)), target: -1, orig: -1}
	pid, err := strconv.ParseInt(pidS, 10, 32)
	if err != nil {
		return bad("pid out of range")
	}
	ev.pid = int32(pid)
	cpu, err := strconv.Atoi(cpuS)
	if err != nil || cpu > 1<<20 {
		return bad("CPU number out of range")
	}
	ev.cpu = int32(cpu)
	var ticks bool
	if ev.ts, ticks, err = parseSeconds(tsS); err != nil {
		return bad(err.Error())
	}
	if ticks {
		st.ticks++
	}
	if len(flags) >= 3 {
		switch flags[2] {
		case 'h', 's', 'H', 'z', 'Z':
			ev.irq = true
		}
	}
	ref := func(c, p, prio string) (taskRef, bool) {
		pid, err := strconv.ParseInt(p, 10, 32)
		if err != nil || pid < 0 {
			return taskRef{}, false
		}
		r := taskRef{comm: strs.id(c), pid: int32(pid)}
		if prio != "" {
			pr, err := strconv.Atoi(prio)
			if err != nil {
				return taskRef{}, false
			}
			r.prio, r.has = clampInt16(pr), true
		}
		return r, true
	}
	var ok1, ok2 bool
	fs := splitFields(args, st.fields[:0])
	st.fields = fs
	need := func(keys ...string) (string, bool) {
		for _, key := range keys {
			if _, ok := get(fs, key); !ok {
				return key, false
			}
		}
		return "", true
	}
	val := func(key string) string { v, _ := get(fs, key); return v }
	switch k {
	case evSwitch:
		if fs != nil {
			if key, ok := need("prev_comm", "prev_pid", "prev_state", "next_comm", "next_pid"); !ok {
				return bad("sched_switch fields not understood: no " + key + "= (want prev_comm= prev_pid= prev_prio= prev_state= ==> next_comm= next_pid= next_prio=)")
			}
			ev.a, ok1 = ref(val("prev_comm"), val("prev_pid"), val("prev_prio"))
			ev.state = strs.id(switchState(val("prev_state")))
			ev.b, ok2 = ref(val("next_comm"), val("next_pid"), val("next_prio"))
			break
		}
		m := switchPluginArgs.FindStringSubmatch(args)
		if m == nil {
			return bad("sched_switch fields not understood (want prev_comm= prev_pid= prev_prio= prev_state= ==> next_comm= next_pid= next_prio=)")
		}
		ev.a, ok1 = ref(m[1], m[2], m[3])
		ev.state = strs.id(switchState(m[4]))
		ev.b, ok2 = ref(m[5], m[6], m[7])
	case evWaking, evWakeup, evWakeupNew:
		if fs != nil {
			if key, ok := need("comm", "pid"); !ok {
				return bad(name + " fields not understood: no " + key + "= (want comm= pid= prio= target_cpu=)")
			}
			ev.a, ok1 = ref(val("comm"), val("pid"), val("prio"))
			ev.target = cpuField(val("target_cpu"))
			ok2 = true
			break
		}
		m := wakePluginArgs.FindStringSubmatch(args)
		if m == nil {
			return bad(name + " fields not understood (want comm= pid= prio= target_cpu=)")
		}
		ev.a, ok1 = ref(m[1], m[2], m[3])
		ev.target = cpuField(m[4])
		ok2 = true
	case evFork:
		if key, ok := need("comm", "pid", "child_comm", "child_pid"); fs == nil || !ok {
			if fs == nil {
				key = "comm"
			}
			return bad("sched_process_fork fields not understood: no " + key + "= (want comm= pid= child_comm= child_pid=)")
		}
		ev.a, ok1 = ref(val("comm"), val("pid"), "")
		ev.b, ok2 = ref(val("child_comm"), val("child_pid"), "")
	case evExit:
		if key, ok := need("comm", "pid"); fs == nil || !ok {
			if fs == nil {
				key = "comm"
			}
			return bad("sched_process_exit fields not understood: no " + key + "= (want comm= pid= prio=)")
		}
		ev.a, ok1 = ref(val("comm"), val("pid"), val("prio"))
		ok2 = true
	case evMigrate:
		if key, ok := need("comm", "pid"); fs == nil || !ok {
			if fs == nil {
				key = "comm"
			}
			return bad("sched_migrate_task fields not understood: no " + key + "= (want comm= pid= prio= orig_cpu= dest_cpu=)")
		}
		ev.a, ok1 = ref(val("comm"), val("pid"), val("prio"))
		ev.orig, ev.target = cpuField(val("orig_cpu")), cpuField(val("dest_cpu"))
		ok2 = true
	}
	if !ok1 || !ok2 {
		return bad("a pid or prio is not a number in range")
	}
	return ev, "", nil
}

// switchState reads a prev_state: the kernel's letters as they are
// ("R+" preempted, "S|D", "D|K", ...), or a number (trace-cmd report
// without the event's print format or with -R, old perf), made letters.
func switchState(s string) string {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return s
	}
	var n uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err = strconv.ParseUint(h, 16, 64)
	} else {
		n, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return s
	}
	return stateLetters(n)
}

// stateLetters turns a numeric prev_state into the letters the kernel's
// TP_printk prints, as include/trace/events/sched.h's
// __trace_sched_switch_state makes the number:
//
//   - since 4.14, the reported state's bit (S 0x1, D 0x2, T 0x4, t 0x8,
//     X 0x10, Z 0x20, P 0x40, I 0x80; 0 is R) or TASK_REPORT_MAX (0x100)
//     alone for a preempted task, printed "R+";
//   - before, the task's raw state (S 1, D 2, T 4, t 8, Z 16, X 32, x 64,
//     K 128, W 256, P 512, and in 4.2 to 4.13 N 1024), TASK_RUNNING |
//     TASK_STATE_MAX (1024, 2048 or 4096 as states were added) for a
//     preempted task.
//
// A number with bits above 0x1ff is of the older kind; else the newer
// table is used (the two agree on S, D, T, t; 0x10 and 0x20 are an exit
// in both; 0x40 is read as P, a parked kernel thread, not the older x).
// What the import needs is only R (runnable), an exit (X, Z, x) or a
// sleep (anything else).
func stateLetters(n uint64) string {
	if n == 0 {
		return "R"
	}
	names, low := []string{"S", "D", "T", "t", "X", "Z", "P", "I"}, n&0xff // ≥ 4.14
	if n > 0x1ff {
		names, low = []string{"S", "D", "T", "t", "Z", "X", "x", "K", "W", "P"}, n&0x3ff
	}
	if low == 0 {
		return "R+" // TASK_REPORT_MAX or TASK_STATE_MAX: preempted
	}
	var parts []string
	for i, name := range names {
		if low&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "|")
}

// clampInt32 keeps a number in int32 (a nice value of a Chrome export).
func clampInt32(n int) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

// clampInt16 keeps a priority in int16: a priority outside 100..139 means
// a real-time task however far outside it is.
func clampInt16(n int) int16 { return int16(min(max(n, math.MinInt16), math.MaxInt16)) }

// cpuField reads a CPU number field of a line ("" or out of range: -1).
func cpuField(s string) int32 {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<20 {
		return -1
	}
	return int32(n)
}

// parseSeconds reads "<secs>.<frac>" as ns (digits past the ninth
// decimal are dropped), "<n>us<mark>" (the latency format's µs since the
// trace began) as n µs, and an integer (a tick-counting trace clock) as
// that many ns; ticks says it was an integer.
func parseSeconds(s string) (ns int64, ticks bool, err error) {
	if us, ok := strings.CutSuffix(strings.TrimRight(s, " +!#*@$"), "us"); ok {
		n, err := strconv.ParseInt(us, 10, 64)
		if err != nil || n > 9e12 {
			return 0, false, fmt.Errorf("timestamp %s out of range", s)
		}
		return n * 1000, false, nil
	}
	sec, frac, dot := strings.Cut(s, ".")
	if !dot {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > 9e18 {
			return 0, false, fmt.Errorf("timestamp %s out of range", s)
		}
		return n, true, nil
	}
	if len(sec) > 10 {
		return 0, false, fmt.Errorf("timestamp %s out of range", s)
	}
	secs, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("timestamp %s not understood", s)
	}
	if secs > 9e9 {
		return 0, false, fmt.Errorf("timestamp %s out of range", s)
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	if frac != "" {
		n, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("timestamp %s not understood", s)
		}
		for i := len(frac); i < 9; i++ {
			n *= 10
		}
		ns = n
	}
	return secs*1e9 + ns, false, nil
}
