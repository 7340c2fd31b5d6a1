package twin

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"schedplay/engine/machine"
	"schedplay/presets"
)

func smallSpec(t *testing.T) *machine.Spec {
	t.Helper()
	spec, err := presets.Machine("p4-ht-1c-2t")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func fake(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "js" {
		t.Skip("the fake tools are shell scripts")
	}
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func finitePositive(v *float64) bool {
	return v != nil && *v > 0 && !math.IsInf(*v, 0) && !math.IsNaN(*v)
}

// The perf path: the tool's output is parsed, the simulated run takes the
// same parameters, the ratio is sim/real.
func TestRunWithPerf(t *testing.T) {
	perf := fake(t, "fake-perf.sh")
	sb := fake(t, "fake-schbench.sh")
	rep, err := Run(context.Background(), smallSpec(t), Preset{Source: "file", File: "x.json"}, Host{CPUs: 2}, Options{
		PipeLoops: 20000, Groups: 2, MsgLoops: 200, SchbenchM: 1, SchbenchT: 2, SchbenchRuntime: time.Second,
		PerfPath: perf, SchbenchPath: sb, Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Benchmarks) != 3 {
		t.Fatalf("%d benchmarks, want 3", len(rep.Benchmarks))
	}
	want := map[string]map[string]float64{
		"pipe":      {"usecs/op": 18.0865, "ops/sec": 55289},
		"messaging": {"total time": 2.251},
		"schbench":  {"wakeup p50": 4, "wakeup p99": 12912},
	}
	for _, br := range rep.Benchmarks {
		if br.Real.Error != "" || br.Sim.Error != "" || br.Skipped != "" {
			t.Errorf("%s: real error %q, sim error %q, skipped %q", br.Bench, br.Real.Error, br.Sim.Error, br.Skipped)
		}
		if br.Real.Runner == "builtin" {
			t.Errorf("%s: the built-in ran (%s)", br.Bench, br.Real.Fallback)
		}
		for _, m := range br.Metrics {
			w, ok := want[br.Bench][m.Metric]
			if !ok {
				t.Errorf("%s: unexpected metric %q", br.Bench, m.Metric)
				continue
			}
			if m.Real == nil || *m.Real != w {
				t.Errorf("%s %s: real %v, want %v", br.Bench, m.Metric, m.Real, w)
			}
			if !finitePositive(m.Sim) || !finitePositive(m.Ratio) || math.Abs(*m.Ratio - *m.Sim / *m.Real) > 1e-12 {
				t.Errorf("%s %s: sim %v ratio %v", br.Bench, m.Metric, m.Sim, m.Ratio)
			}
		}
	}
	if got := rep.Benchmarks[0].Sim.Workload; got != "pipe:l=20000" {
		t.Errorf("simulated pipe workload %q", got)
	}
	if got := rep.Benchmarks[1].Sim.Workload; got != "hackbench:g=2,l=200,f=20,s=100" {
		t.Errorf("simulated messaging workload %q", got)
	}
	if got := rep.Benchmarks[2].Sim.Workload; got != "schbench:m=1,t=2" {
		t.Errorf("simulated schbench workload %q", got)
	}
	// A 2-CPU preset and a 2-CPU host: no note that the machines differ.
	for _, n := range rep.Notes {
		if strings.Contains(n, "the two columns run on different machines") {
			t.Errorf("unexpected note %q", n)
		}
	}
}

// A perf that fails (a distribution's wrapper without the kernel's perf)
// falls back to the built-in, which says why and runs in thread mode, and
// the simulated run follows it into thread mode.
func TestRunPerfBrokenFallsBack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the built-in benchmarks run on Linux only")
	}
	perf := fake(t, "fake-perf-broken.sh")
	rep, err := Run(context.Background(), smallSpec(t), Preset{Source: "file"}, Host{CPUs: 2}, Options{
		Benches: []string{BenchPipe, BenchMessaging, BenchSchbench}, PipeLoops: 300, Groups: 1, MsgLoops: 5,
		PerfPath: perf, SchbenchPath: "-", Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, br := range rep.Benchmarks[:2] {
		if br.Real.Runner != "builtin" || br.Real.Mode != "threads" {
			t.Errorf("%s: runner %q mode %q, want builtin threads", br.Bench, br.Real.Runner, br.Real.Mode)
		}
		if !strings.Contains(br.Real.Fallback, "perf failed") || !strings.Contains(br.Real.Fallback, "perf not found for kernel") {
			t.Errorf("%s: fallback %q does not say why", br.Bench, br.Real.Fallback)
		}
		if !strings.HasSuffix(br.Sim.Workload, ",T=1") {
			t.Errorf("%s: simulated %q, want thread mode", br.Bench, br.Sim.Workload)
		}
		for _, m := range br.Metrics {
			if !finitePositive(m.Real) || !finitePositive(m.Sim) || !finitePositive(m.Ratio) {
				t.Errorf("%s %s: real %v sim %v ratio %v", br.Bench, m.Metric, m.Real, m.Sim, m.Ratio)
			}
		}
	}
	if sb := rep.Benchmarks[2]; sb.Skipped == "" || len(sb.Metrics) != 0 {
		t.Errorf("schbench absent but not skipped: %+v", sb)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"built-in instead of the tool: perf failed", "schbench   (skipped)", "schbench: skipped: schbench is not installed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// A tool that hangs is killed at the timeout with everything it forked.
func TestRunToolTimeout(t *testing.T) {
	sleep := fake(t, "fake-sleep.sh")
	start := time.Now()
	_, _, err := runTool(context.Background(), 300*time.Millisecond, sleep)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("returned after %v", el)
	}
}

// A simulated run that exceeds its wall-time budget is reported, not hung on.
func TestSimulateTimeout(t *testing.T) {
	var s Sim
	opt := Options{Timeout: 50 * time.Millisecond}
	opt.Defaults()
	opt.Timeout = 50 * time.Millisecond
	if res := simulate(context.Background(), smallSpec(t), "pipe:l=1000000000", 3600e9, opt, &s); res != nil {
		t.Fatalf("finished: %+v", res)
	}
	if !strings.Contains(s.Error, "longer than") {
		t.Errorf("error %q", s.Error)
	}
}

// The JSON report's schema: the documented keys, null for a missing side.
func TestReportJSONSchema(t *testing.T) {
	real := 10.0
	rep := &Report{Schema: Schema, Date: "2025-01-01T00:00:00Z", Host: Host{CPUs: 2, LoadBefore: 3, LoadAfter: 4, Noisy: true},
		Preset: Preset{Name: "this-machine", Source: "detected-quick", CPUs: 2},
		Benchmarks: []BenchResult{
			{Bench: "pipe", Real: Real{Runner: "perf", Command: "perf bench sched pipe -l 10", Mode: "processes", WallS: 0.1},
				Sim:     Sim{Workload: "pipe:l=10", Seed: 1, DurationS: 0.001, WallS: 0.01},
				Metrics: []Metric{metric("usecs/op", "µs", "lower", &real, ptr(5)), metric("ops/sec", "1/s", "higher", nil, ptr(2))}},
			{Bench: "schbench", Skipped: "schbench is not installed"},
		}}
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(what string, m any, want ...string) {
		t.Helper()
		mm, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("%s is %T", what, m)
		}
		for _, k := range want {
			if _, ok := mm[k]; !ok {
				t.Errorf("%s lacks %q: %s", what, k, b)
			}
		}
	}
	keys("report", doc, "schema", "date", "host", "preset", "benchmarks")
	if doc["schema"] != "schedplay-twin/1" {
		t.Errorf("schema %v", doc["schema"])
	}
	keys("host", doc["host"], "cpus", "load_avg_before", "load_avg_after", "noisy")
	keys("preset", doc["preset"], "name", "source", "cpus")
	bs := doc["benchmarks"].([]any)
	keys("benchmark", bs[0], "bench", "real", "sim", "metrics")
	b0 := bs[0].(map[string]any)
	keys("real", b0["real"], "runner", "command", "mode", "wall_s")
	keys("sim", b0["sim"], "workload", "seed", "duration_s", "wall_s", "ipis_sent", "cpu_busy_pct")
	ms := b0["metrics"].([]any)
	keys("metric", ms[0], "metric", "unit", "real", "sim", "ratio", "better")
	if r := ms[0].(map[string]any)["ratio"]; r != 0.5 {
		t.Errorf("ratio %v, want 0.5", r)
	}
	if m1 := ms[1].(map[string]any); m1["real"] != nil || m1["ratio"] != nil {
		t.Errorf("a missing side is not null: %v", m1)
	}
	keys("skipped benchmark", bs[1], "bench", "skipped")
}
