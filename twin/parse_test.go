package twin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParsePerfPipe(t *testing.T) {
	for _, tc := range []struct {
		file       string
		want       PerfPipe
		checkTotal bool
	}{
		{"perf-pipe-processes.txt", PerfPipe{Loops: 20000, Mode: "processes", TotalS: 0.361, UsecsPerOp: 18.0865, OpsPerSec: 55289}, true},
		{"perf-pipe-threads.txt", PerfPipe{Loops: 20000, Mode: "threads", TotalS: 0.196, UsecsPerOp: 9.8076, OpsPerSec: 101961}, true},
		{"perf-pipe-lkml.txt", PerfPipe{Loops: 1000000, Mode: "processes", TotalS: 7.870, UsecsPerOp: 7.870224, OpsPerSec: 127061}, true},
	} {
		got, err := ParsePerfPipe(fixture(t, tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.file, got, tc.want)
		}
	}
}

func TestParsePerfMessaging(t *testing.T) {
	for _, tc := range []struct {
		file string
		want PerfMessaging
	}{
		{"perf-messaging-processes.txt", PerfMessaging{PerGroup: 20, Groups: 2, Tasks: 80, Mode: "processes", TotalS: 2.251}},
		{"perf-messaging-threads.txt", PerfMessaging{PerGroup: 20, Groups: 2, Tasks: 80, Mode: "threads", TotalS: 0.499}},
		{"perf-messaging-lkml.txt", PerfMessaging{PerGroup: 20, Groups: 1000, Tasks: 40000, Mode: "processes", TotalS: 2.825}},
	} {
		got, err := ParsePerfMessaging(fixture(t, tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.file, got, tc.want)
		}
	}
}

func TestParseSchbench(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Schbench
	}{
		{"schbench-2016-rps.txt", Schbench{Layout: "2016", P50: 8, P99: 13, Min: 0, Max: 7576}},
		{"schbench-2019.txt", Schbench{Layout: "2019", P50: 4, P99: 12912, Min: 0, Max: 30723}},
		{"schbench-2023.txt", Schbench{Layout: "2023", P50: 7, P99: 175, Min: 1, Max: 10224, Samples: 30212}},
		// The interval block comes first; the final block wins, and the
		// Request block (p50 16864) is never taken for the wakeup one.
		{"schbench-2023-intervals.txt", Schbench{Layout: "2023", P50: 7, P99: 175, Min: 1, Max: 10224, Samples: 30212}},
	} {
		got, err := ParseSchbench(fixture(t, tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.file, got, tc.want)
		}
	}
}

func TestParseErrorsNameWhatIsMissing(t *testing.T) {
	cut := strings.Replace(fixture(t, "perf-pipe-threads.txt"), "ops/sec", "", 1)
	if _, err := ParsePerfPipe(cut); err == nil || !strings.Contains(err.Error(), `"ops/sec"`) {
		t.Errorf("pipe without ops/sec: %v", err)
	}
	if _, err := ParsePerfPipe(""); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty pipe output: %v", err)
	}
	if _, err := ParsePerfMessaging("# Running 'sched/messaging' benchmark:\n"); err == nil || !strings.Contains(err.Error(), "Total time") {
		t.Errorf("messaging without total: %v", err)
	}
	// perf's wrapper script on a kernel without a matching perf binary.
	if _, err := ParsePerfPipe("WARNING: perf not found for kernel 6.1.0-18\n"); err == nil || !strings.Contains(err.Error(), "WARNING: perf not found") {
		t.Errorf("wrapper warning: %v", err)
	}
	// A block without its 99th percentile is not a result.
	if _, err := ParseSchbench("Latency percentiles (usec)\n\t50.0th: 4\n\tmin=0, max=3\n"); err == nil {
		t.Error("schbench block without p99 accepted")
	}
	// The request block alone is not a wakeup block.
	req := "Request Latencies percentiles (usec) runtime 10 (s) (3 total samples)\n\t  50.0th: 16864      (1 samples)\n\t* 99.0th: 17248      (1 samples)\n\t  min=9243, max=27964\n"
	if _, err := ParseSchbench(req); err == nil {
		t.Error("a request block was taken for the wakeup block")
	}
}
