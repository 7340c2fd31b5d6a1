package trace

import (
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
)

func smallSim(t *testing.T) *engine.Sim {
	t.Helper()
	tp, err := machine.Build(&machine.Spec{Name: "t", Topology: machine.TopologySpec{Sockets: 1, CoresPerSocket: 4, ThreadsPerCore: 2, CoresPerLLC: 4, Numbering: "interleaved"},
		SMTThroughput: []float64{1, 1.2}, IdleStates: []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: 1})
	if _, err := workload.Add(sim, "schbench:m=1,t=4,c=2000,s=1000", ""); err != nil {
		t.Fatal(err)
	}
	return sim
}

type traceDoc struct {
	TraceEvents []struct {
		Ph  string
		Ts  float64
		Dur float64
		Tid int
	} `json:"traceEvents"`
	Metadata struct {
		Events   int      `json:"events"`
		Dropped  int      `json:"dropped_events"`
		MaxBytes int64    `json:"max_bytes"`
		CutAtS   *float64 `json:"cut_at_s"`
	} `json:"metadata"`
}

// The byte cap holds (the file stays valid JSON and within the cap), the
// cut is recorded with its time, and Stats reports it.
func TestTraceByteCap(t *testing.T) {
	for _, f := range []Format{FormatJSON, FormatFtrace} {
		sim := smallSim(t)
		var buf bytes.Buffer
		w, err := Open(sim, &buf, f, Options{MaxBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		sim.RunUntil(500 * engine.Millisecond)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if int64(buf.Len()) > 64<<10 || st.CutAt < 0 || st.Dropped == 0 || st.Bytes != int64(buf.Len()) {
			t.Errorf("%s: %d bytes, stats %+v", f, buf.Len(), st)
		}
		if f == FormatJSON {
			var d traceDoc
			if err := stdjson.Unmarshal(buf.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			if d.Metadata.CutAtS == nil || d.Metadata.MaxBytes != 64<<10 || d.Metadata.Dropped != st.Dropped {
				t.Errorf("metadata %+v", d.Metadata)
			}
		} else if !strings.Contains(buf.String(), "# schedplay: cut at") {
			t.Errorf("ftrace: no cut note")
		}
	}
}

// A window keeps only events inside it, slices clipped to its edges; a
// CPU list only those CPUs' tracks.
func TestTraceWindowAndCPUs(t *testing.T) {
	sim := smallSim(t)
	var buf bytes.Buffer
	cpus, _ := cpumask.Parse("0-1", 8)
	w, _ := Open(sim, &buf, FormatJSON, Options{Start: 10 * engine.Millisecond, End: 20 * engine.Millisecond, CPUs: cpus})
	sim.RunUntil(50 * engine.Millisecond)
	w.Close()
	var d traceDoc
	if err := stdjson.Unmarshal(buf.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range d.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		n++
		if e.Ts < 10000 || e.Ts+e.Dur > 20000.001 || (e.Tid != tidBase && e.Tid != tidBase+1) {
			t.Errorf("event outside the window or CPUs: %+v", e)
		}
	}
	if n == 0 {
		t.Error("no events in the window")
	}
}

// The ftrace text follows the grammar Perfetto's text tokenizer reads
// (perfetto.md): "<comm>-<pid> [<cpu>] <flags> <secs.frac>: <event>: <args>",
// with the four sched events and their keys; the gzip JSON decompresses
// to the plain JSON.
func TestFtraceGrammarAndGzip(t *testing.T) {
	sim := smallSim(t)
	var buf bytes.Buffer
	w, _ := Open(sim, &buf, FormatFtrace, Options{})
	sim.RunUntil(50 * engine.Millisecond)
	w.Close()
	lineRE := regexp.MustCompile(`^\s*(\S+)-(\d+)\s+\[(\d{3})\] [dN.][.hs][.0-9][.0-9] (\d+\.\d{9}): (sched_\w+): (.*)$`)
	argsRE := map[string]*regexp.Regexp{
		"sched_switch":       regexp.MustCompile(`^prev_comm=\S+ prev_pid=\d+ prev_prio=\d+ prev_state=[RSX] ==> next_comm=\S+ next_pid=\d+ next_prio=\d+$`),
		"sched_waking":       regexp.MustCompile(`^comm=\S+ pid=\d+ prio=\d+ target_cpu=\d{3}$`),
		"sched_wakeup":       regexp.MustCompile(`^comm=\S+ pid=\d+ prio=\d+ target_cpu=\d{3}$`),
		"sched_migrate_task": regexp.MustCompile(`^comm=\S+ pid=\d+ prio=\d+ orig_cpu=\d+ dest_cpu=\d+$`),
	}
	seen := map[string]int{}
	last := ""
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line does not parse: %q", l)
		}
		if re := argsRE[m[5]]; re == nil || !re.MatchString(m[6]) {
			t.Fatalf("%s args do not parse: %q", m[5], m[6])
		}
		if m[4] < last && len(m[4]) == len(last) {
			t.Fatalf("time goes back: %s after %s", m[4], last)
		}
		last = m[4]
		seen[m[5]]++
	}
	if !strings.HasPrefix(buf.String(), "# tracer: nop\n") {
		t.Error("no # tracer: nop header")
	}
	for _, ev := range []string{"sched_switch", "sched_waking", "sched_wakeup"} {
		if seen[ev] == 0 {
			t.Errorf("no %s line", ev)
		}
	}
	var plain, gz bytes.Buffer
	sa, sb := smallSim(t), smallSim(t)
	wa, _ := Open(sa, &plain, FormatJSON, Options{})
	wb, _ := Open(sb, &gz, FormatJSONGz, Options{})
	sa.RunUntil(20 * engine.Millisecond)
	sb.RunUntil(20 * engine.Millisecond)
	wa.Close()
	wb.Close()
	zr, err := gzip.NewReader(&gz)
	if err != nil {
		t.Fatal(err)
	}
	un, _ := io.ReadAll(zr)
	if !bytes.Equal(un, plain.Bytes()) {
		t.Error("json.gz does not decompress to the JSON trace")
	}
}

// An RT task's lines carry the kernel's prio for it (99 - rt_priority),
// a fair task's 120 + nice.
func TestFtracePrioOfRTTasks(t *testing.T) {
	tp, err := machine.Build(&machine.Spec{Name: "t", Topology: machine.TopologySpec{Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 1, CoresPerLLC: 2, Numbering: "interleaved"},
		SMTThroughput: []float64{1}, IdleStates: []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: 1})
	if _, err := workload.Add(sim, "pipe:l=50,policy=fifo,rtprio=50", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Add(sim, "hog:n=1,nice=5", ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := AttachFtrace(sim, &buf, Options{})
	sim.RunUntil(20 * engine.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"comm=pipe/1 pid=", "prio=49 target_cpu=", "next_comm=hog/0 next_pid="} {
		if !strings.Contains(out, want) {
			t.Errorf("the trace has no %q", want)
		}
	}
	if regexp.MustCompile(`comm=pipe\S* pid=\d+ prio=1`).MatchString(out) {
		t.Errorf("an RT pipe task's wakeup has a fair prio")
	}
	if !regexp.MustCompile(`next_comm=hog\S* next_pid=\d+ next_prio=125`).MatchString(out) {
		t.Errorf("the nice-5 hog's switch has no prio 125")
	}
}
