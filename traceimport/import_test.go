package traceimport

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/workload"
	"schedplay/scenario"
	"schedplay/trace"
)

func importFile(t *testing.T, name string, opt Options) (*workload.TraceFile, *Summary) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	f, s, err := Import(data, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkFile(t, f)
	return f, s
}

// checkFile asserts that f is valid and survives JSON.
func checkFile(t testing.TB, f *workload.TraceFile) {
	t.Helper()
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	js, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := workload.ParseTraceFile(js)
	if err != nil {
		t.Fatalf("the marshalled file does not parse: %v\n%s", err, js)
	}
	if len(back.Tasks) != len(f.Tasks) {
		t.Fatalf("round trip through JSON: %d tasks, want %d", len(back.Tasks), len(f.Tasks))
	}
	for i := range f.Tasks {
		if len(back.Tasks[i].Ops) != len(f.Tasks[i].Ops) {
			t.Fatalf("round trip through JSON: task %d has %d ops, want %d", i, len(back.Tasks[i].Ops), len(f.Tasks[i].Ops))
		}
	}
}

func taskByName(t *testing.T, f *workload.TraceFile, name string) (int, *workload.TraceTask) {
	t.Helper()
	for i := range f.Tasks {
		if f.Tasks[i].Name == name {
			return i, &f.Tasks[i]
		}
	}
	var names []string
	for _, x := range f.Tasks {
		names = append(names, x.Name)
	}
	t.Fatalf("no task %q (tasks: %q)", name, names)
	return 0, nil
}

func opsString(ops []workload.TraceOp) string {
	var parts []string
	for _, op := range ops {
		b, _ := op.MarshalJSON()
		parts = append(parts, string(b))
	}
	return strings.Join(parts, " ")
}

// The 6.x kernel's trace: 5-character flags, the (tgid) column, comms
// with spaces, colons, brackets, dashes and digits, "<...>", a lost-events
// line, an elision, a buffer-started line, an interrupt wakeup (h flag),
// a kernel-thread waker, the idle task as waker, a fork, an exit, a
// migration and an event of another type.
func TestFtrace6xOddComms(t *testing.T) {
	f, s := importFile(t, "ftrace-6x-odd.txt", Options{})
	if s.Format != FormatFtrace {
		t.Errorf("format %s, want ftrace", s.Format)
	}
	a, ta := taskByName(t, f, "Gamepad polling")
	b, tb := taskByName(t, f, "memfd:sealed-91")
	c, tc := taskByName(t, f, "[pool] w-3")
	e, te := taskByName(t, f, "worker-5")
	if len(f.Tasks) != 4 {
		t.Errorf("%d tasks, want 4 (the kworker filtered)", len(f.Tasks))
	}
	if ta.PID != 200 || tb.PID != 201 || tc.PID != 202 || te.PID != 210 {
		t.Errorf("pids %d %d %d %d, want 200 201 202 210", ta.PID, tb.PID, tc.PID, te.PID)
	}
	if te.Parent == nil || *te.Parent != a {
		t.Errorf("worker-5's parent %v, want %d", te.Parent, a)
	}
	want := map[int]string{
		// A: runs, forks E, wakes B, sleeps until B wakes it, runs,
		// preempted by the kworker, runs, sleeps until the idle task's
		// wakeup (a timed sleep) and is switched in at the very end.
		a: fmt.Sprintf(`["run",100000] ["fork",%d] ["run",100000] ["wake",%d] ["run",100000] ["wait",%d] ["run",350000] ["sleep",80000]`, e, b, b),
		// B: asleep from the start until A wakes it; wakes A just before
		// it sleeps (the sync hint); sleeps until an interrupt (timed);
		// runs; asleep at the end.
		b: fmt.Sprintf(`["wait",%d] ["run",150000] ["wake",%d,"sync"] ["run",10000] ["sleep",290000] ["run",135000]`, a, a),
		// C: asleep until E wakes it; runs; sleeps until the kworker
		// wakes it (timed); runs; asleep at the end.
		c: fmt.Sprintf(`["wait",%d] ["run",105000] ["sleep",15000] ["run",180000]`, e),
		e: fmt.Sprintf(`["run",90000] ["wake",%d] ["run",110000] ["exit"]`, c),
	}
	for i, w := range want {
		if got := opsString(f.Tasks[i].Ops); got != w {
			t.Errorf("task %d (%s) ops\n got %s\nwant %s", i, f.Tasks[i].Name, got, w)
		}
	}
	if s.Wakes != 3 || s.TimedSleeps != 3 || s.Pairs != 3 {
		t.Errorf("wakes %d, timed sleeps %d, pairs %d; want 3, 3, 3", s.Wakes, s.TimedSleeps, s.Pairs)
	}
	for reason, n := range map[string]int{
		DropIRQWaker: 1, DropKthreadWaker: 1, DropIdleWaker: 1, DropKthreads: 1,
		DropMigrations: 1, DropLostEvents: 5, DropAsleepAtEnd: 2,
	} {
		if s.Dropped[reason] != n {
			t.Errorf("dropped %q = %d, want %d", reason, s.Dropped[reason], n)
		}
	}
	if s.SkippedEvents["irq_handler_entry"] != 1 {
		t.Errorf("skipped events %v, want irq_handler_entry 1", s.SkippedEvents)
	}
	var out bytes.Buffer
	s.Report(&out)
	for _, w := range []string{"kept 4 tasks", "3 wakeups by a traced task", "sleep ended by an interrupt", "irq_handler_entry 1"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	// --keep-kthreads keeps the kworker: its wakeup of C is then kept.
	f2, s2 := importFile(t, "ftrace-6x-odd.txt", Options{KeepKthreads: true})
	taskByName(t, f2, "kworker/0:1")
	if s2.Wakes != 4 || s2.Dropped[DropKthreadWaker] != 0 {
		t.Errorf("--keep-kthreads: wakes %d (want 4), kthread wakers %d (want 0)", s2.Wakes, s2.Dropped[DropKthreadWaker])
	}
}

// An older kernel: 4-character flags, sched_wakeup only (with success=),
// a softirq wakeup, nice from prio, a real-time task.
func TestFtrace4FlagsWakeupOnly(t *testing.T) {
	f, s := importFile(t, "ftrace-4flags-wakeup.txt", Options{})
	_, ping := taskByName(t, f, "ping")
	pi, pong := taskByName(t, f, "pong")
	_, rt := taskByName(t, f, "rt-thread")
	if pong.Nice != -10 || ping.Nice != 0 {
		t.Errorf("nice ping %d pong %d, want 0 -10", ping.Nice, pong.Nice)
	}
	if rt.Nice != 0 || s.Dropped[DropRT] != 1 {
		t.Errorf("rt task nice %d, RT count %d; want 0, 1", rt.Nice, s.Dropped[DropRT])
	}
	if got := opsString(ping.Ops); !strings.Contains(got, `["wait",`+itoa(pi)+`]`) {
		t.Errorf("ping ops %s: want runs and waits for pong", got)
	}
	if s.Wakes != 3 || s.Dropped[DropIRQWaker] != 1 {
		t.Errorf("wakes %d (want 3: pong→ping twice, ping→pong), interrupt wakers %d (want 1: the softirq one)", s.Wakes, s.Dropped[DropIRQWaker])
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

// trace-cmd report: no flags column, the sched plugin's formats
// ("comm:pid [prio] S ==> comm:pid [prio]", "comm:pid [prio] CPU:001"),
// sched_waking followed by its sched_wakeup, and its header lines.
func TestTraceCmdReport(t *testing.T) {
	f, s := importFile(t, "tracecmd-report.txt", Options{})
	ci, client := taskByName(t, f, "client")
	si, server := taskByName(t, f, "server")
	taskByName(t, f, "trace-cmd")
	if s.Wakes != 3 {
		t.Errorf("wakes %d, want 3 (client→server twice, server→client)", s.Wakes)
	}
	if s.Dropped[DropNotAsleep] != 0 {
		t.Errorf("the sched_wakeup after its sched_waking was counted as a wakeup of a task not asleep")
	}
	if got := opsString(server.Ops); !strings.Contains(got, `["wait",`+itoa(ci)+`]`) || !strings.Contains(got, `["wake",`+itoa(ci)) {
		t.Errorf("server ops %s", got)
	}
	if got := opsString(client.Ops); !strings.Contains(got, `["wake",`+itoa(si)) {
		t.Errorf("client ops %s", got)
	}
}

// perf sched script: "comm pid [cpu] secs: sched:event:", pid/tid, comms
// with spaces, sched_stat_runtime (skipped), fork, exit.
func TestPerfSchedScript(t *testing.T) {
	f, s := importFile(t, "perf-sched-script.txt", Options{})
	if s.Format != FormatPerf {
		t.Errorf("format %s, want perf", s.Format)
	}
	if s.SkippedEvents["sched_stat_runtime"] != 2 {
		t.Errorf("skipped %v, want sched_stat_runtime 2", s.SkippedEvents)
	}
	var child *workload.TraceTask
	for i := range f.Tasks {
		if f.Tasks[i].PID == 31691 {
			child = &f.Tasks[i]
		}
	}
	if child == nil || child.Parent == nil {
		t.Fatalf("the forked sched-pipe (31691) is missing or has no parent")
	}
	if got := opsString(child.Ops); !strings.HasSuffix(got, `["exit"]`) {
		t.Errorf("child ops %s: want an exit at the end", got)
	}
	if s.Wakes < 3 {
		t.Errorf("wakes %d, want at least 3 between the two sched-pipe tasks", s.Wakes)
	}
	// Forcing the wrong format names the first line it cannot read.
	data, _ := os.ReadFile("testdata/perf-sched-script.txt")
	if _, _, err := Import(data, Options{Format: FormatFtrace}); err == nil || !strings.Contains(err.Error(), "line 1:") {
		t.Errorf("perf text read as ftrace: %v, want an error naming line 1", err)
	}
}

// Real captures from this project's development VM (Linux 6.18, a tracefs
// instance and perf 6.1 `perf sched record`), trimmed around `perf bench
// sched pipe`.
func TestRealCaptures(t *testing.T) {
	for _, name := range []string{"real-ftrace-6.18.txt", "real-perf-sched-6.1.txt"} {
		f, s := importFile(t, name, Options{})
		pipes := 0
		for _, x := range f.Tasks {
			if x.Name == "sched-pipe" {
				pipes++
			}
		}
		if pipes < 2 {
			t.Errorf("%s: %d sched-pipe tasks, want 2", name, pipes)
		}
		if s.Wakes < 20 {
			t.Errorf("%s: %d wakes kept, want the pipe's ping-pong", name, s.Wakes)
		}
	}
}

// The kernel comparison's own real inputs: the traces of Debian's
// 6.12.117 (under QEMU with icount) and 6.1.192 (host time: 6.1 does not
// boot under icount) running the guest load's hackbench:g=2,f=4,l=200 on
// the 16-CPU Intel shape (`schedsim kernel --kernel 6.12|6.1 --preset
// intel-2s-44c-88t --workload hackbench:g=2,f=4,l=200 --keep DIR`,
// DIR/guest.ftrace.txt; 6.12 on 2026-12-02, whole; 6.1 on 2026-12-03, its
// first 420 events). The importer reads every line, and so does the
// oracle's strict ReadSched.
func TestRealKernelComparisonTrace(t *testing.T) {
	for _, name := range []string{"real-ftrace-6.12-guest-hackbench.txt", "real-ftrace-6.1-guest-hackbench.txt"} {
		f, s := importFile(t, name, Options{})
		if s.BadLines != 0 {
			t.Errorf("%s: %d unreadable lines: %v", name, s.BadLines, s.Unreadable)
		}
		hb := 0
		for _, x := range f.Tasks {
			if strings.HasPrefix(x.Name, "hackbench") {
				hb++
			}
		}
		if hb < 16 || s.Wakes < 30 {
			t.Errorf("%s: %d hackbench tasks and %d wakes, want the 16 senders and receivers and their wakeups", name, hb, s.Wakes)
		}
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := ReadSched(bytes.NewReader(data), func(*SchedEvent) error { n++; return nil }); err != nil || n < 400 {
			t.Errorf("%s: ReadSched: %d events, %v", name, n, err)
		}
	}
}

var namesLine = regexp.MustCompile(`\blines? \d+`)

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		file, want string
		format     Format
	}{
		{"bad-garbage-only.txt", `line 2: not an event line of ftrace, trace-cmd report or perf script: "this file is not a trace"`, ""},
		{"bad-garbage-only.txt", `line 2: not an ftrace event line`, FormatFtrace},
		{"bad-timestamp.txt", `line 1: timestamp 50000000000.100000 out of range`, ""},
		{"bad-chrome.json", `line 3: a sched slice on track 5, not a CPU track`, ""},
		{"ftrace-6x-odd.txt", `line 14: not a perf script event line`, FormatPerf},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Import(data, Options{Format: c.format})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (format %q): error %v, want %q", c.file, c.format, err, c.want)
		}
	}
	for _, in := range []string{"", "# tracer: nop\n#\n", "{}", `{"traceEvents":[]}`, "\x1f\x8b garbage"} {
		_, _, err := Import([]byte(in), Options{})
		if err == nil || !namesLine.MatchString(err.Error()) {
			t.Errorf("input %q: error %v, want one naming the line", in, err)
		}
	}
}

// The format samples of testdata/fmt-* (testdata/README.md says where each
// form comes from) import whole: every line read, the expected tasks,
// events and wakeups.
func TestFormatSamples(t *testing.T) {
	for _, c := range []struct {
		file                 string
		format               Format
		tasks, events, wakes int
		skipped              string // an event of another type counted
	}{
		{"fmt-ftrace-aligned.txt", FormatFtrace, 2, 8, 2, "sched_stat_runtime"},
		{"fmt-tracecmd-latency.txt", FormatFtrace, 2, 8, 2, "irq_handler_entry"},
		{"fmt-tracecmd-noflags.txt", FormatFtrace, 3, 9, 1, ""},
		{"fmt-systrace.html", FormatFtrace, 2, 7, 2, "tracing_mark_write"},
		{"fmt-perf-sched-aligned.txt", FormatPerf, 2, 7, 2, ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			f, s := importFile(t, c.file, Options{})
			if s.BadLines != 0 {
				t.Errorf("%d unreadable lines: %v", s.BadLines, s.Unreadable)
			}
			if s.Format != c.format || s.Tasks != c.tasks || s.Events != c.events || s.Wakes != c.wakes {
				t.Errorf("format %s, %d tasks, %d events, %d wakes; want %s, %d, %d, %d", s.Format, s.Tasks, s.Events, s.Wakes, c.format, c.tasks, c.events, c.wakes)
			}
			if c.skipped != "" && s.SkippedEvents[c.skipped] != 1 {
				t.Errorf("skipped %v, want %s 1", s.SkippedEvents, c.skipped)
			}
			if len(f.Tasks) != c.tasks {
				t.Errorf("%d tasks in the file", len(f.Tasks))
			}
		})
	}
	// The details the samples are about.
	f, _ := importFile(t, "fmt-tracecmd-noflags.txt", Options{})
	if got := opsString(f.Tasks[len(f.Tasks)-1].Ops); !strings.HasSuffix(got, `["exit"]`) || f.Tasks[len(f.Tasks)-1].Parent == nil {
		t.Errorf("the forked child: ops %s, parent %v; want a fork child that exits", got, f.Tasks[len(f.Tasks)-1].Parent)
	}
	var evs []SchedEvent
	data, _ := os.ReadFile("testdata/fmt-ftrace-aligned.txt")
	if err := ReadSched(bytes.NewReader(data), func(e *SchedEvent) error { evs = append(evs, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		i     int
		check bool
		what  string
	}{
		{0, evs[0].Next.Comm == "ping" && evs[0].Next.PID == 1000 && evs[0].Prev.Prio == 120, "padded fields"},
		{1, evs[1].Task.Comm == "pong" && evs[1].Task.PID == 1001 && evs[1].TargetCPU == 1, "padded wakeup"},
		{3, evs[3].PrevState == "R+" && evs[3].Next.Comm == "pong" && evs[3].Next.Prio == 120, "R+ and an extra field"},
		{5, evs[5].Task.Comm == "ping" && evs[5].Task.PID == 1000 && evs[5].TargetCPU == 0 && evs[5].Task.Prio == 120, "fields in another order, 7 flags"},
		{6, evs[6].PrevState == "R+" && evs[6].Next.Comm == "ping", "R+==> glued"},
		{7, evs[7].PrevState == "S|D", "S|D"},
	} {
		if !w.check {
			t.Errorf("event %d (%s) read as %+v", w.i, w.what, evs[w.i])
		}
	}
}

// A line that cannot be read is reported with its number and why, and
// the import goes on without it (bad-garbage.txt and bad-switch-fields.txt
// were refused whole before issue 27).
func TestUnreadableLineReported(t *testing.T) {
	for _, c := range []struct {
		file   string
		format Format
		want   string
		events int
	}{
		{"bad-garbage.txt", "", `line 4: not an event line of ftrace, trace-cmd report or perf script: "this line is not part of any trace"`, 3},
		{"bad-garbage.txt", FormatFtrace, `line 4: not an ftrace event line`, 3},
		{"bad-switch-fields.txt", "", `line 3: a pid or prio is not a number in range`, 1},
	} {
		_, s := importFile(t, c.file, Options{Format: c.format})
		if s.BadLines != 1 || len(s.Unreadable) != 1 || !strings.Contains(s.Unreadable[0].Error(), c.want) {
			t.Errorf("%s (format %q): %d bad lines %v, want 1: %q", c.file, c.format, s.BadLines, s.Unreadable, c.want)
		}
		if s.Events != c.events || s.Dropped[DropUnreadable] != 1 {
			t.Errorf("%s: %d events, %d unreadable dropped; want %d, 1", c.file, s.Events, s.Dropped[DropUnreadable], c.events)
		}
		var out bytes.Buffer
		s.Report(&out)
		if !strings.Contains(out.String(), "unreadable "+c.want) {
			t.Errorf("%s: the report does not name the line:\n%s", c.file, out.String())
		}
	}
	// Many bad lines: all counted, the first maxBadLines named.
	var in strings.Builder
	in.Write(switchLines(20, ""))
	for i := 0; i < 15; i++ {
		in.WriteString("garbage\n")
	}
	_, s, err := Import([]byte(in.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.BadLines != 15 || len(s.Unreadable) != maxBadLines || s.Unreadable[0].Line != 21 {
		t.Errorf("%d bad lines, %d named, first %v; want 15, %d, line 21", s.BadLines, len(s.Unreadable), s.Unreadable[0], maxBadLines)
	}
	// The kernel oracle's reader stays strict: the first bad line is its error.
	data, _ := os.ReadFile("testdata/bad-garbage.txt")
	if err := ReadSched(bytes.NewReader(data), func(*SchedEvent) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 4:") {
		t.Errorf("ReadSched: %v, want line 4's error", err)
	}
}

// simTrace runs spec on preset and returns its trace in format f.
func simTrace(t testing.TB, preset string, dur int64, f trace.Format, specs ...string) []byte {
	t.Helper()
	cfg := scenario.Config{Preset: preset, Workloads: specs, Seed: 1, Duration: dur}
	sim, err := cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := trace.Open(sim, &buf, f, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scenario.Advance(sim, dur)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// roundTrip exports a run as ftrace text, imports it, replays it with
// trace:b64= (what trace:file= expands to) and imports the replay's own
// trace. It returns both summaries and the imported file.
func roundTrip(t *testing.T, preset string, f trace.Format, spec string) (*Summary, *Summary, *workload.TraceFile) {
	t.Helper()
	orig := simTrace(t, preset, engine.Second, f, spec)
	file, s1, err := Import(orig, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, file)
	js, err := Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	replay := simTrace(t, preset, engine.Second, trace.FormatFtrace, workload.TraceSpec(js))
	_, s2, err := Import(replay, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s1, s2, file
}

// comparePairs checks that the replay's wakeups are issued by the same
// waker→wakee pairs, in about the same numbers. Replay task i has pid
// i+1 (no forks in the simulator's exports); file maps it back.
func comparePairs(t *testing.T, name string, s1, s2 *Summary, file *workload.TraceFile, tolPct float64) {
	t.Helper()
	back := func(pid int) int { return file.Tasks[pid-1].PID }
	replayed := map[[2]int]int{}
	for p, n := range s2.WakePairs {
		replayed[[2]int{back(p[0]), back(p[1])}] += n
	}
	kept, extra := 0, 0
	for p := range s1.WakePairs {
		if replayed[p] > 0 {
			kept++
		}
	}
	for p := range replayed {
		if s1.WakePairs[p] == 0 {
			extra++
		}
	}
	diff := 100 * float64(s2.Wakes-s1.Wakes) / float64(s1.Wakes)
	t.Logf("%s: wakeups original %d, replay %d (%+.1f%%); waker→wakee pairs original %d, replay %d, kept %d, new %d; timed sleeps %d → %d",
		name, s1.Wakes, s2.Wakes, diff, len(s1.WakePairs), len(replayed), kept, extra, s1.TimedSleeps, s2.TimedSleeps)
	if s1.Wakes == 0 {
		t.Fatalf("%s: no task-to-task wakeups in the original", name)
	}
	if diff < -tolPct || diff > tolPct {
		t.Errorf("%s: wakeups original %d, replay %d: %.1f%% apart, more than %.0f%%", name, s1.Wakes, s2.Wakes, diff, tolPct)
	}
	if extra > 0 {
		t.Errorf("%s: the replay has %d waker→wakee pairs the original does not", name, extra)
	}
	if float64(kept) < float64(len(s1.WakePairs))*(1-tolPct/100) {
		t.Errorf("%s: only %d of %d waker→wakee pairs kept", name, kept, len(s1.WakePairs))
	}
	if s2.Tasks != s1.Tasks {
		t.Errorf("%s: %d tasks in the replay, %d in the original", name, s2.Tasks, s1.Tasks)
	}
}

func TestRoundTripPipe(t *testing.T) {
	s1, s2, file := roundTrip(t, "intel-2s-44c-88t", trace.FormatFtrace, "pipe:l=50")
	comparePairs(t, "pipe:l=50", s1, s2, file, 3)
	if s1.Pairs != 2 {
		t.Errorf("pipe: %d pairs, want 2 (0→1, 1→0)", s1.Pairs)
	}
}

func TestRoundTripHackbench(t *testing.T) {
	s1, s2, file := roundTrip(t, "intel-2s-44c-88t", trace.FormatFtrace, "hackbench:g=1,l=5")
	comparePairs(t, "hackbench:g=1,l=5", s1, s2, file, 5)
}

// The simulator's Chrome JSON gives the same workload as its ftrace text.
func TestRoundTripChrome(t *testing.T) {
	s1, s2, file := roundTrip(t, "intel-2s-44c-88t", trace.FormatJSONGz, "hackbench:g=1,l=5")
	comparePairs(t, "hackbench (Chrome JSON)", s1, s2, file, 5)
	ft, sf, err := Import(simTrace(t, "intel-2s-44c-88t", engine.Second, trace.FormatFtrace, "hackbench:g=1,l=5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sf.Wakes != s1.Wakes || len(ft.Tasks) != len(file.Tasks) {
		t.Errorf("ftrace: %d wakes, %d tasks; Chrome JSON: %d wakes, %d tasks", sf.Wakes, len(ft.Tasks), s1.Wakes, len(file.Tasks))
	}
}

// A sleep ended by a timer on an idle CPU has no task as its waker: it
// becomes a timed sleep (counted), while the resume→suspend handoff stays
// a wakeup by the task.
func TestRoundTripTimerBecomesTimedSleep(t *testing.T) {
	rt := `{"tasks": {
		"a": {"loop": 20, "run": 200, "resume": "b", "sleep": 2000},
		"b": {"loop": 20, "suspend": "b", "run": 100}},
		"global": {"duration": 1}}`
	s1, s2, file := roundTrip(t, "intel-2s-44c-88t", trace.FormatFtrace, workload.RTAppSpec([]byte(rt)))
	if s1.TimedSleeps < 15 || s1.Dropped[DropIdleWaker] < 15 {
		t.Errorf("timed sleeps %d, idle-task wakers %d: want about 20 (a's timer sleeps)", s1.TimedSleeps, s1.Dropped[DropIdleWaker])
	}
	_, a := taskByName(t, file, "a")
	if !strings.Contains(opsString(a.Ops), `["sleep",`) {
		t.Errorf("a's ops have no timed sleep: %s", opsString(a.Ops))
	}
	comparePairs(t, "rtapp resume/sleep", s1, s2, file, 10)
	if s2.TimedSleeps < s1.TimedSleeps*8/10 {
		t.Errorf("the replay's timed sleeps %d, the original's %d", s2.TimedSleeps, s1.TimedSleeps)
	}
	var out bytes.Buffer
	s1.Report(&out)
	if !strings.Contains(out.String(), DropIdleWaker) {
		t.Errorf("the summary does not count the timed sleeps:\n%s", out.String())
	}
}

func FuzzTraceImport(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	json, _ := filepath.Glob("testdata/*.json")
	for _, p := range append(files, json...) {
		data, err := os.ReadFile(p)
		if err == nil && len(data) < 8192 {
			f.Add(data, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, fm uint8) {
		opt := Options{Format: Formats[int(fm)%len(Formats)], KeepKthreads: fm&0x80 != 0}
		file, _, err := Import(data, opt)
		if err != nil {
			if !namesLine.MatchString(err.Error()) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		checkFile(t, file)
	})
}
