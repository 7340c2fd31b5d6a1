package traceimport

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"schedplay/engine"
	"schedplay/engine/workload"
	"schedplay/trace"
)

// The streaming import's parts (input.go, events.go) and its limits,
// crossed cheaply by lowering them; regress22_test.go has the issue's
// regression tests, which use only the package's API.

// The line of an event is the line its JSON value starts on, wherever
// the decoder's reads end and however the events are spread over lines.
func TestLineCounterMatchesCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 2))
	for iter := 0; iter < 200; iter++ {
		var b bytes.Buffer
		var starts []int
		for i := rng.IntN(30); i > 0; i-- {
			b.WriteString(strings.Repeat("\n", rng.IntN(3)))
			b.WriteString(strings.Repeat(" ,\n\t"[rng.IntN(4):], rng.IntN(2)))
			starts = append(starts, b.Len())
			b.WriteString(strings.Repeat("x\n", rng.IntN(3)) + "y")
		}
		data := b.Bytes()
		lc := newLineCounter(iotestHalfReader{bytes.NewReader(data), rng})
		buf := make([]byte, len(data)+1)
		read := 0
		prev := 0
		for _, s := range starts {
			// Read past the value (as a decoder does), then ask for the
			// line of an offset before it.
			for read < min(s+1+rng.IntN(40), len(data)) {
				n, _ := lc.Read(buf[read:])
				read += n
			}
			off := prev + rng.IntN(s-prev+1)
			// off..s may hold separators and x-lines: the value starts
			// at the first byte that is no separator.
			want := 1 + bytes.Count(data[:firstNonSeparator(data, off)], []byte{'\n'})
			if got := lc.valueLineAt(int64(off)); got != want {
				t.Fatalf("data %q, offset %d: line %d, want %d", data, off, got, want)
			}
			prev = off
		}
	}
}

func firstNonSeparator(data []byte, off int) int {
	for off < len(data) && isSeparator(data[off]) {
		off++
	}
	return off
}

// iotestHalfReader returns random short reads.
type iotestHalfReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (h iotestHalfReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1+h.rng.IntN(len(p))]
	}
	return h.r.Read(p)
}

// endless is a trace that never ends: sched_switch lines from task k to
// task k+1, k = 1, 2, ...; it counts the bytes read.
type endless struct {
	k, read int
	pending []byte
}

func (e *endless) Read(p []byte) (int, error) {
	for len(e.pending) < len(p) {
		e.k++
		e.pending = fmt.Appendf(e.pending, "   task-%d [000] d..3 1.%09d: sched_switch: prev_comm=task prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=task next_pid=%d next_prio=120\n", e.k, e.k, e.k, e.k+1)
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	e.read += n
	return n, nil
}

// ImportReader reads a stream, and stops at the limit: a trace without
// end is refused at the line that crosses the task limit, having read
// little past it.
func TestImportReaderStopsAtTheLimit(t *testing.T) {
	src := &endless{}
	_, _, err := ImportReader(src, Options{Format: FormatFtrace})
	n := workload.TraceMaxTasks
	want := fmt.Sprintf("line %d: more than %d tasks", n, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	lineBytes := len(switchLines(n, "")) / n
	if src.read > n*lineBytes+1<<18 {
		t.Errorf("read %d bytes for %d lines of about %d bytes: it does not stop where the limit is crossed", src.read, n, lineBytes)
	}
}

// The op, event and size limits refuse at their line too (lowered, so
// that crossing them is cheap).
func TestLimitsRefusedAtTheirLine(t *testing.T) {
	data := switchLines(300, "")
	for _, c := range []struct {
		name string
		lim  limits
		in   []byte
		want string
	}{
		// Line k writes task k's run and its sleep (line 1 no run: the
		// task has not run yet): 2k-1 ops.
		{"ops", limits{1 << 30, 1 << 20, 4096, 100}, data, "line 51: more than 100 ops (the replay's limit, workload.TraceMaxOps)"},
		{"events", limits{1 << 30, 50, 4096, 1 << 20}, data, "line 51: more than 50 scheduler events (the import's limit)"},
		{"bytes", limits{int64(len(switchLines(10, ""))) + 5, 1 << 20, 4096, 1 << 20}, data, "line 11: the trace is larger than"},
		{"bytes exactly at the limit", limits{int64(len(data)), 1 << 20, 4096, 1 << 20}, data, ""},
		{"bytes, gzip", limits{int64(len(switchLines(20, ""))) + 5, 1 << 20, 4096, 1 << 20}, gz(data), "line 21: the trace is larger than"},
		// Slice i is on line i+1; each ends in a sleep, an op; task i%64.
		{"Chrome ops", limits{1 << 30, 1 << 20, 4096, 100}, chromeLines(300), "line 101: more than 100 ops"},
		{"Chrome tasks", limits{1 << 30, 1 << 20, 10, 1 << 20}, chromeLines(300), "line 11: more than 10 tasks"},
	} {
		_, _, err := importStream(bytes.NewReader(c.in), Options{}, c.lim)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// Bad gzip data past the header is named at the line being read.
func TestBadGzipNamesTheLine(t *testing.T) {
	z := gz(switchLines(2000, ""))
	z = z[:len(z)*3/4]
	_, _, err := Import(z, Options{})
	if err == nil || !regexp.MustCompile(`^line \d+: bad gzip data: unexpected EOF`).MatchString(err.Error()) {
		t.Errorf("error %v, want a line and bad gzip data", err)
	}
}

var tsField = regexp.MustCompile(`\s(\d+\.\d+):\s`)

// A text trace whose lines are not in time order (here, its CPUs one
// after the other) gives what the same lines sorted by time (stably: the
// file's order on ties) give: the events are merged by time, across more
// than one chunk of the event log.
func TestOutOfOrderTextIsMergedByTime(t *testing.T) {
	orig := simTrace(t, "intel-2s-44c-88t", engine.Second/10, trace.FormatFtrace, "hackbench:g=1,l=100000")
	var head, evs []string
	for _, l := range strings.Split(strings.TrimSuffix(string(orig), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			head = append(head, l)
		} else {
			evs = append(evs, l)
		}
	}
	if len(evs) < 3*eventChunk {
		t.Fatalf("%d events: want several chunks of %d", len(evs), eventChunk)
	}
	cpu := func(l string) string { return l[strings.Index(l, "[")+1 : strings.Index(l, "]")] }
	byCPU := slices.Clone(evs)
	slices.SortStableFunc(byCPU, func(a, b string) int { return strings.Compare(cpu(a), cpu(b)) })
	ts := map[string]int64{}
	for _, l := range evs {
		v, _, err := parseSeconds(tsField.FindStringSubmatch(l)[1])
		if err != nil {
			t.Fatal(err)
		}
		ts[l] = v
	}
	sorted := slices.Clone(byCPU)
	slices.SortStableFunc(sorted, func(a, b string) int { return cmp.Compare(ts[a], ts[b]) })
	if slices.Equal(sorted, byCPU) {
		t.Fatal("the per-CPU file is in time order: nothing tested")
	}
	text := func(lines []string) []byte {
		return []byte(strings.Join(append(slices.Clone(head), lines...), "\n") + "\n")
	}
	got := marshalled(t, text(byCPU))
	if want := marshalled(t, text(sorted)); !bytes.Equal(got, want) {
		t.Errorf("the per-CPU file imports differently from the same lines in time order")
	}
}

func marshalled(t *testing.T, data []byte) []byte {
	t.Helper()
	f, _, err := Import(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// An event is 64 bytes, whatever its line: the import holds every one
// until the trace is read.
func TestEventIsCompact(t *testing.T) {
	if n := unsafe.Sizeof(event{}); n > 64 {
		t.Errorf("an event is %d bytes, want at most 64", n)
	}
}
