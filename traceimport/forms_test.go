package traceimport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readSched returns the scheduler events of a testdata file as the
// oracle's ReadSched reads them.
func readSched(t *testing.T, name string) []SchedEvent {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var evs []SchedEvent
	if err := ReadSched(bytes.NewReader(data), func(e *SchedEvent) error { evs = append(evs, *e); return nil }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return evs
}

// switchStates lists the prev_state of each sched_switch, in order.
func switchStates(evs []SchedEvent) string {
	var st []string
	for _, e := range evs {
		if e.Name == "sched_switch" {
			st = append(st, e.PrevState)
		}
	}
	return strings.Join(st, " ")
}

// The forms of issue 27 item 1's second part (testdata/README.md cites
// each): each sample imports whole, with the ping-pong's two tasks and
// two wakeups, and what the form is about is read right.
func TestMoreFormSamples(t *testing.T) {
	for _, c := range []struct {
		file   string
		format Format
		events int
		ticks  bool
	}{
		{"fmt-ftrace-latency.txt", FormatFtrace, 9, false},
		{"fmt-ftrace-counter-clock.txt", FormatFtrace, 9, true},
		{"fmt-ftrace-glued-arrow.txt", FormatFtrace, 9, false},
		{"fmt-tracecmd-raw-state.txt", FormatFtrace, 9, false},
		{"fmt-chrome-systemtrace.json", FormatChrome, 9, false},
	} {
		t.Run(c.file, func(t *testing.T) {
			f, s := importFile(t, c.file, Options{})
			if s.BadLines != 0 {
				t.Errorf("%d unreadable lines: %v", s.BadLines, s.Unreadable)
			}
			if s.Format != c.format || s.Tasks != 2 || s.Events != c.events || s.Wakes != 2 || s.Pairs != 2 {
				t.Errorf("format %s, %d tasks, %d events, %d wakes, %d pairs; want %s, 2, %d, 2, 2", s.Format, s.Tasks, s.Events, s.Wakes, s.Pairs, c.format, c.events)
			}
			if (s.TickEvents > 0) != c.ticks || (f.Source["timestamps"] != nil) != c.ticks {
				t.Errorf("tick timestamps %d, source %v; want ticks %v", s.TickEvents, f.Source["timestamps"], c.ticks)
			}
			_, ping := taskByName(t, f, "ping")
			_, pong := taskByName(t, f, "pong")
			if ping.PID != 1000 || pong.PID != 1001 {
				t.Errorf("pids %d %d", ping.PID, pong.PID)
			}
		})
	}
	// Latency format: the µs since the start, the delay mark, the comm
	// cut to 8; ping ran from 0 to 200 µs, then from 350.
	f, _ := importFile(t, "fmt-ftrace-latency.txt", Options{})
	pi, _ := taskByName(t, f, "ping")
	if got := opsString(f.Tasks[pi].Ops); !strings.HasPrefix(got, `["run",100000] ["wake",`) || !strings.Contains(got, `["run",100000] ["wait",`) {
		t.Errorf("latency-format ping ops %s: want 100 µs runs around its wakeup of pong", got)
	}
	evs := readSched(t, "fmt-ftrace-latency.txt")
	if evs[1].TS != 100000 || evs[2].TS != 101000 || evs[0].Comm != "<idle>" {
		t.Errorf("latency-format times %d %d, comm %q; want 100000 101000 <idle>", evs[1].TS, evs[2].TS, evs[0].Comm)
	}
	// x86-tsc: 3000 ticks a µs, read as ns.
	evs = readSched(t, "fmt-ftrace-counter-clock.txt")
	if evs[0].TS != 512345678901 || evs[1].TS-evs[0].TS != 300000 {
		t.Errorf("tick timestamps %d, %d; want 512345678901 and 300000 later", evs[0].TS, evs[1].TS)
	}
	var out bytes.Buffer
	_, s := importFile(t, "fmt-ftrace-counter-clock.txt", Options{})
	s.Report(&out)
	if !strings.Contains(out.String(), "integer timestamp") {
		t.Errorf("the report does not say the timestamps are ticks:\n%s", out.String())
	}
	// ==>next_comm=: the next task is read.
	evs = readSched(t, "fmt-ftrace-glued-arrow.txt")
	if evs[3].Next.Comm != "pong" || evs[3].PrevState != "R+" || evs[4].Next.Comm != "swapper/0" || evs[4].PrevState != "S" {
		t.Errorf("glued ==>: %+v / %+v", evs[3], evs[4])
	}
	// Numeric prev_state: decimal and hex, made the kernel's letters.
	if got := switchStates(readSched(t, "fmt-tracecmd-raw-state.txt")); got != "R R+ S R S" {
		t.Errorf("numeric prev_state read as %q, want \"R R+ S R S\"", got)
	}
	// systemTraceEvents: the text's lines, numbered within it.
	data, err := os.ReadFile("testdata/fmt-chrome-systemtrace.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`target_cpu=001\n`), []byte(`target_cpu=001 garbage\nnot a line\n`), 1)
	_, s, err = Import(bad, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.BadLines != 1 || !strings.Contains(s.Unreadable[0].Error(), "line 7 of systemTraceEvents (at line ") {
		t.Errorf("a bad line in systemTraceEvents: %d bad, %v", s.BadLines, s.Unreadable)
	}
	// Fuchsia's object form is no ftrace text, and alone no trace.
	if _, _, err := Import([]byte(`{"systemTraceEvents":{"type":"fuchsia","events":[]}}`), Options{}); err == nil || !namesLine.MatchString(err.Error()) {
		t.Errorf("Fuchsia systemTraceEvents alone: %v, want an error naming a line", err)
	}
}

// A numeric prev_state, by kernel era (include/trace/events/sched.h,
// __trace_sched_switch_state and TP_printk).
func TestNumericPrevState(t *testing.T) {
	for in, want := range map[string]string{
		"0": "R", "0x0": "R", "1": "S", "0x1": "S", "2": "D", "0x2": "D",
		"256": "R+", "0x100": "R+", // TASK_REPORT_MAX (≥ 4.14): preempted
		"16": "X", "32": "Z", "0x80": "I", "3": "S|D",
		"1024": "R+", "2048": "R+", "4096": "R+", // TASK_STATE_MAX (older): preempted
		"1026": "D",   // TASK_IDLE = D|N (4.2..4.13)
		"130":  "D|I", // read as ≥ 4.14 (older: D|K, TASK_KILLABLE): a sleep either way
		"R+":   "R+", "S|D": "S|D", "D|K": "D|K", "x": "x",
	} {
		if got := switchState(in); got != want {
			t.Errorf("prev_state=%s read as %q, want %q", in, got, want)
		}
	}
}

// Single lines of the forms, read as ReadSched gives them.
func TestLineForms(t *testing.T) {
	for _, c := range []struct {
		line string
		ts   int64
		what string
	}{
		// latency-format with a tick clock: lat_print_timestamp's " %4lld: "
		{`    ping-1000      0d..2.   42: sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 42, "latency-format, ticks"},
		// latency-format, delay marks
		{`    ping-1000      0d..2. 1234us!: sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 1234000, "mark !"},
		{`    ping-1000      0d..2. 12us#: sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 12000, "mark #"},
		// trace-cmd report -l with seconds, as before
		{`    ping-1000    0d.h2.  123.456789: sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 123456789000, "-l seconds"},
		// perf script, an integer time
		{`            ping  1000 [000]   123456: sched:sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 123456, "perf ticks"},
		// a mail-quoted line
		{`> >      ping-1000  [000] d..4.  7.000001: sched_waking: comm=pong pid=1001 prio=120 target_cpu=001`, 7000001000, "quoted twice"},
	} {
		var got []SchedEvent
		err := ReadSched(strings.NewReader(c.line+"\n"), func(e *SchedEvent) error { got = append(got, *e); return nil })
		if err != nil || len(got) != 1 || got[0].TS != c.ts || got[0].Task.PID != 1001 || got[0].PID != 1000 {
			t.Errorf("%s: %v, %+v; want one event at %d", c.what, err, got, c.ts)
		}
		if len(got) == 1 && c.what == "quoted twice" && got[0].Comm != "ping" {
			t.Errorf("%s: comm %q", c.what, got[0].Comm)
		}
	}
	// A line a mail client wrapped in two is one event; a bad line before
	// a good one stays bad.
	wrapped := "   ping-1000  [000] d..2.  7.000001: sched_switch: prev_comm=ping prev_pid=1000 prev_prio=120 prev_state=S ==>\n next_comm=swapper/0 next_pid=0 next_prio=120\n"
	n := 0
	if err := ReadSched(strings.NewReader(wrapped), func(e *SchedEvent) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("wrapped line: %d events, %v; want 1", n, err)
	}
	three := "   ping-1000  [000] d..2.  7.000001: sched_switch: prev_comm=ping\nprev_pid=1000 prev_prio=120 prev_state=S ==>\n next_comm=swapper/0 next_pid=0 next_prio=120\n"
	var got []SchedEvent
	if err := ReadSched(strings.NewReader(three), func(e *SchedEvent) error { got = append(got, *e); return nil }); err != nil || len(got) != 1 || got[0].Prev.PID != 1000 || got[0].Next.Comm != "swapper/0" || got[0].Line != 1 {
		t.Errorf("a line wrapped in three: %+v, %v; want one event of line 1", got, err)
	}
	if err := ReadSched(strings.NewReader("garbage\n"+wrapped), func(*SchedEvent) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 1:") {
		t.Errorf("garbage before a wrapped line: %v, want line 1's error", err)
	}
}

// The nine real-world forms issue 27 collects (testdata/snippet-*.txt;
// testdata/README.md cites where each form comes from): the kernel's
// documentation, a mailing-list reply, trace-cmd report, Perfetto's
// systrace text, perf sched script's aligned columns, a 3.x kernel's
// prev_state=D|K, a 6.x kernel's prev_state=R+ ==>, trace-cmd without the
// flags column, and ftrace text wrapped in Perfetto's JSON. Every one
// imports, every line read, with ping and pong and their wakeups.
func TestRealWorldSnippets(t *testing.T) {
	files, err := filepath.Glob("testdata/snippet-*.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The wakeups each keeps: snippet 1's second is an interrupt's (its
	// h flag).
	wakes := map[string]int{"snippet-1-ftrace-doc.txt": 1}
	ok := 0
	for _, p := range files {
		name := filepath.Base(p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, s, err := Import(data, Options{})
		if err != nil {
			t.Errorf("%s refused: %v", name, err)
			continue
		}
		checkFile(t, f)
		want := 2
		if w, ok := wakes[name]; ok {
			want = w
		}
		if s.BadLines != 0 || s.Tasks != 2 || s.Wakes != want {
			t.Errorf("%s: %d unreadable lines %v, %d tasks, %d wakes; want 0, 2, %d", name, s.BadLines, s.Unreadable, s.Tasks, s.Wakes, want)
			continue
		}
		ok++
	}
	t.Logf("real-world snippets: %d of %d imported", ok, len(files))
	if len(files) != 9 || ok != 9 {
		t.Errorf("real-world snippets: %d of %d imported, want 9 of 9", ok, len(files))
	}
	// What some are about.
	if got := switchStates(readSched(t, "snippet-6-old-kernel-DK.txt")); got != "R R S R D|K R+ I x" {
		t.Errorf("3.x states %q", got)
	}
	f, _ := importFile(t, "snippet-6-old-kernel-DK.txt", Options{})
	if _, ping := taskByName(t, f, "ping"); !strings.HasSuffix(opsString(ping.Ops), `["exit"]`) {
		t.Errorf("3.x: ping's ops %s, want its exit", opsString(ping.Ops))
	}
	if got := switchStates(readSched(t, "snippet-7-6x-rplus.txt")); got != "R R S R S R+ I" {
		t.Errorf("6.x states %q", got)
	}
	// Perfetto writes '-' in a thread name as '_' in the line's own comm;
	// the fields keep it.
	f, _ = importFile(t, "snippet-4-perfetto-systrace.txt", Options{})
	taskByName(t, f, "ping-main")
	evs := readSched(t, "snippet-2-lkml-post.txt")
	if len(evs) != 10 || evs[3].Prev.Comm != "ping" || evs[3].Next.Comm != "swapper/0" || evs[3].Line != 15 {
		t.Errorf("the mail-wrapped line: %d events, the fourth %+v", len(evs), evs[3])
	}
}
