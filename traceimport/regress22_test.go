package traceimport

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"schedplay/engine"
	"schedplay/engine/workload"
	"schedplay/trace"
)

// Issue 22: the import of the simulator's own Chrome JSON was quadratic
// (each event's line counted from the start of the file: 4 MB 2.1 s,
// 8 MB 8.4 s, 100 MB killed after 300 s); the import held about 7× its
// input and applied the replay's limits only once all was read; and
// these tests are what shows each is gone.

// chromeLines returns a Chrome JSON trace of n slices, one event a line
// as the simulator writes them, each run on one of 8 CPUs ending in a
// sleep, of 64 tasks.
func chromeLines(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("\n,")
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"sched","name":"worker/%d","pid":900000,"tid":%d,"ts":%d.5,"dur":2.25,"args":{"task":%d,"nice":0,"end_state":"S"}}`,
			i%64, chromeTidBase+i%8, 10*i, i%64)
	}
	b.WriteString("\n],\"displayTimeUnit\":\"ns\"}\n")
	return b.Bytes()
}

// Numbering the lines of a Chrome JSON looks at each byte about once:
// every event's line was counted from the start of the file (quadratic:
// 1 MB 0.18 s, 8 MB 8.8 s, 100 MB killed after 300 s). A count, not a
// time: BenchmarkImport (make bench-import) measures the speed.
func TestChromeLinesNumberedInOnePass(t *testing.T) {
	for _, n := range []int{7500, 60000} {
		data := chromeLines(n)
		_, sum, err := Import(data, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d events, %d bytes: %d bytes examined for line numbers", n, len(data), sum.lineBytes)
		if sum.lineBytes == 0 || sum.lineBytes > 2*int64(len(data)) {
			t.Errorf("%d bytes of input, %d examined to number its lines (want at most twice the input)", len(data), sum.lineBytes)
		}
	}
}

// An error in a Chrome trace whose events span many lines names the line
// the bad event starts on.
func TestChromeErrorLineOnManyLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n  \"traceEvents\": [\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "    {\n      \"ph\": \"X\", \"cat\": \"sched\", \"name\": \"a\",\n      \"tid\": %d, \"ts\": %d, \"dur\": 1,\n      \"args\": {\"task\": 0, \"end_state\": \"S\"}\n    },\n", chromeTidBase, 2*i)
	}
	// Event 301 starts on line 2 + 300*5 + 1.
	b.WriteString("    {\"ph\": \"X\", \"cat\": \"sched\", \"name\": \"a\", \"tid\": 7, \"ts\": 1000, \"dur\": 1, \"args\": {\"task\": 0}}\n  ]\n}\n")
	_, _, err := Import([]byte(b.String()), Options{})
	if want := "line 1503: a sched slice on track 7, not a CPU track"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// switchLines writes n sched_switch lines, each from task k to task k+1
// on CPU 0 (so line k creates task k+1), then what follows.
func switchLines(n int, follow string) []byte {
	var b bytes.Buffer
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "   task-%d [000] d..3 1.%09d: sched_switch: prev_comm=task prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=task next_pid=%d next_prio=120\n", k, k, k, k+1)
	}
	b.WriteString(follow)
	return b.Bytes()
}

// A trace with more tasks than the replay holds is refused at the line
// that crosses the limit, before the rest is read: the garbage after it
// was reported first when the limits applied only to the whole trace.
func TestTaskLimitRefusedAtItsLine(t *testing.T) {
	n := workload.TraceMaxTasks
	data := switchLines(n, "garbage that is no trace line\n")
	_, _, err := Import(data, Options{})
	want := fmt.Sprintf("line %d: more than %d tasks (the replay's limit", n, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ftrace: error %v, want %q", err, want)
	}
	var b bytes.Buffer
	b.WriteString("{\"traceEvents\":[\n")
	for i := 0; i <= n; i++ {
		fmt.Fprintf(&b, `%s{"ph":"X","cat":"sched","name":"t","tid":%d,"ts":%d,"dur":1,"args":{"task":%d,"end_state":"S"}}`+"\n",
			map[bool]string{true: ",", false: ""}[i > 0], chromeTidBase, 2*i, i)
	}
	b.WriteString(",{garbage\n")
	_, _, err = Import(b.Bytes(), Options{})
	want = fmt.Sprintf("line %d: more than %d tasks (the replay's limit", n+2, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Chrome JSON: error %v, want %q", err, want)
	}
}

// peakHeap runs fn with the collector keeping the heap close to what is
// live (GOGC 10), and returns the most heap held above what it held
// before.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	done := make(chan bool)
	peak := make(chan uint64)
	go func() {
		high := base
		for {
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- high - base
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	done <- true
	return <-peak
}

// The import holds much less than its input on top of it: its events,
// compact, and the workload (it held the input's lines and events of
// 160 bytes: about twice the input more).
func TestImportHoldsLessThanItsInput(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 2 traces of 10 MB")
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"ftrace", simTrace(t, "intel-2s-44c-88t", engine.Second/20, trace.FormatFtrace, "hackbench:g=2,l=100000")},
		{"Chrome JSON", simTrace(t, "intel-2s-44c-88t", engine.Second/20, trace.FormatJSON, "hackbench:g=2,l=100000")},
	} {
		var f *workload.TraceFile
		held := peakHeap(func() {
			var err error
			if f, _, err = Import(c.data, Options{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s: %d bytes in, at most %d bytes held on top (%.2f×), %d tasks", c.name, len(c.data), held, float64(held)/float64(len(c.data)), len(f.Tasks))
		if held > uint64(len(c.data)) {
			t.Errorf("%s: held %d bytes importing %d", c.name, held, len(c.data))
		}
	}
}
