package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestPresetsListsEightMachines(t *testing.T) {
	out, _, code := runCLI(t, "presets")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == "machine" {
			n++
		}
	}
	if n != 8 {
		t.Fatalf("want 8 machine presets, got %d:\n%s", n, out)
	}
}

func TestBadInputExitsTwoNamingTheOffender(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--set", "SIS_FOO=1", "--duration", "1ms"}, []string{`"SIS_FOO"`, "SIS_CORE", "SIS_PROP"}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--set", "SIS_CORE=maybe", "--duration", "1ms"}, []string{"SIS_CORE", "maybe", "true"}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--set", "probe_ns=-5", "--duration", "1ms"}, []string{"probe_ns", "-5", "0.."}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,x=3", "--duration", "1ms"}, []string{`"x"`, "valid keys", "m, t"}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=zero", "--duration", "1ms"}, []string{"m", "zero", "1.."}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "bogus:n=1", "--duration", "1ms"}, []string{`"bogus"`, "schbench", "hog"}},
		{[]string{"run", "--preset", "no-such-box", "--duration", "1ms"}, []string{"no-such-box", "intel-2s-44c-88t", "p4-ht-1c-2t"}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--format", "xml", "--duration", "1ms"}, []string{"xml", "text, json, csv, schbench, hackbench, perf-bench"}},
		{[]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "hog:cpus=0-100", "--duration", "1ms"}, []string{"cpus", "0-87"}},
		{[]string{"frobnicate"}, []string{"frobnicate", "run"}},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not mention %q", c.args, errOut, w)
			}
		}
	}
}

func TestRunJSONHasContractFields(t *testing.T) {
	out, errOut, code := runCLI(t, "run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22", "--duration", "2s", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"preset", "seed", "runs", "duration_s", "knobs", "workloads", "search", "migrations", "cpu_busy_pct", "events", "sim_wall_s"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing field %q", k)
		}
	}
	knobs := m["knobs"].(map[string]any)
	if knobs["SIS_CORE"] != true || knobs["SIS_PROP"] != true {
		t.Errorf("knobs lack SIS_CORE/SIS_PROP defaults: %v", knobs)
	}
	search := m["search"].(map[string]any)
	for _, k := range []string{"wakeups", "select_idle_cpu_calls", "probes_mean", "probes_max", "found_idle_pct", "placed_busy_pct"} {
		if _, ok := search[k]; !ok {
			t.Errorf("search lacks %q", k)
		}
	}
	mig := m["migrations"].(map[string]any)
	for _, k := range []string{"smt", "llc", "cross_llc", "cross_socket"} {
		if _, ok := mig[k]; !ok {
			t.Errorf("migrations lacks %q", k)
		}
	}
	w := m["workloads"].([]any)[0].(map[string]any)
	lat := w["wakeup_latency_us"].(map[string]any)
	for _, k := range []string{"p50", "p75", "p90", "p95", "p99", "p99_5", "p99_9", "min", "max", "count"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("wakeup_latency_us lacks %q", k)
		}
	}
	// The smoke of the real use: schbench m=2,t=22 on the Intel box.
	if lat["count"].(float64) <= 0 || lat["p50"].(float64) <= 0 || lat["p50"].(float64) > lat["p99"].(float64) {
		t.Errorf("implausible latency: %v", lat)
	}
	if _, ok := w["throughput_ops_s"]; !ok {
		t.Errorf("workload lacks throughput_ops_s")
	}
	if _, ok := w["completion_s"]; !ok {
		t.Errorf("workload lacks completion_s")
	}
}

func TestSameSeedGivesByteIdenticalJSON(t *testing.T) {
	args := []string{"run", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8", "--workload", "hog:n=4,nice=19",
		"--duration", "1s", "--seed", "42", "--format", "json", "--no-wall-time"}
	a, _, _ := runCLI(t, args...)
	b, _, _ := runCLI(t, args...)
	if a != b || a == "" {
		t.Fatalf("two identical runs differ")
	}
}

func TestRunsReportMeanAndStdev(t *testing.T) {
	out, errOut, code := runCLI(t, "run", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=1,t=8", "--duration", "500ms",
		"--runs", "3", "--seed", "5", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	seeds := m["seeds"].([]any)
	if len(seeds) != 3 || seeds[0].(float64) != 5 || seeds[2].(float64) != 7 {
		t.Fatalf("seeds %v", seeds)
	}
	p50 := m["workloads"].([]any)[0].(map[string]any)["wakeup_latency_us"].(map[string]any)["p50"].(map[string]any)
	if _, ok := p50["mean"]; !ok {
		t.Fatalf("p50 not aggregated: %v", p50)
	}
	if _, ok := p50["stdev"]; !ok {
		t.Fatalf("p50 lacks stdev: %v", p50)
	}
	if m["runs"].(float64) != 3 {
		t.Fatalf("runs %v", m["runs"])
	}
}

// The WebAssembly build of the simulator (what the browser runs) must
// produce exactly what the native build produces for the same preset,
// knobs and seed.
func TestWasmBuildMatchesNative(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wasm binary")
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is required under CI to run the wasm build")
		}
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "schedsim.wasm")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("wasm build: %v\n%s", err, out)
	}
	execWrapper := filepath.Join(runtime.GOROOT(), "lib", "wasm", "go_js_wasm_exec")
	cases := [][]string{
		{"--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22", "--seed", "1", "--duration", "1s"},
		{"--preset", "amd-zen3-2s-128c-256t", "--workload", "schbench:m=4,t=16", "--workload", "hog:n=32,nice=10", "--seed", "9", "--duration", "300ms", "--set", "SIS_CORE=false"},
		{"--preset", "p4-ht-1c-2t", "--workload", "schbench:m=1,t=1,p=4", "--seed", "3", "--duration", "200ms"},
	}
	for _, c := range cases {
		args := append([]string{"run", "--format", "json", "--no-wall-time"}, c...)
		native, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("native %v: %s", c, errOut)
		}
		cmd := exec.Command(execWrapper, append([]string{bin}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wasm, err := cmd.Output()
		if err != nil {
			t.Fatalf("wasm %v: %v\n%s", c, err, stderr.String())
		}
		if string(wasm) != native {
			t.Errorf("wasm and native differ for %v:\nnative: %.400s\nwasm:   %.400s", c, native, wasm)
		}
	}
}

// The README's knob table is generated from the knob table; this keeps
// them in sync (regenerate with `go run ./cmd/schedsim knobs --format markdown`).
func TestReadmeKnobTableIsCurrent(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- knobs:begin -->\n", "<!-- knobs:end -->"
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README lacks the %q ... %q markers", begin, end)
	}
	if got, want := s[i+len(begin):j], knobMarkdown(); got != want {
		t.Fatalf("README knob table is stale; replace it with the output of `go run ./cmd/schedsim knobs --format markdown`")
	}
}

// schedsim run --link runs exactly the run a share link opens on the page
// (its arm --arm): the same output as the equivalent flags.
func TestRunLinkIsThePagesRun(t *testing.T) {
	link := "http://example.org/schedplay/#v=1&preset=p4-ht-1c-2t&w=schbench:m%3D1,t%3D2&ab=1&b.era=6.12&b.DELAY_DEQUEUE=false&seed=3"
	for _, c := range []struct {
		arm   string
		flags []string
	}{
		{"A", []string{"--preset", "p4-ht-1c-2t", "--workload", "schbench:m=1,t=2", "--seed", "3"}},
		{"b", []string{"--preset", "p4-ht-1c-2t", "--workload", "schbench:m=1,t=2", "--seed", "3", "--era", "6.12", "--set", "DELAY_DEQUEUE=false"}},
	} {
		common := []string{"--duration", "50ms", "--format", "json", "--no-wall-time"}
		got, stderr, code := runCLI(t, append([]string{"run", "--link", link, "--arm", c.arm}, common...)...)
		if code != 0 {
			t.Fatalf("arm %s: exit %d: %s", c.arm, code, stderr)
		}
		want, stderr, code := runCLI(t, append(append([]string{"run"}, c.flags...), common...)...)
		if code != 0 {
			t.Fatalf("flags: exit %d: %s", code, stderr)
		}
		if got != want {
			t.Errorf("arm %s: --link output differs from the flags' run", c.arm)
		}
	}
	for args, want := range map[string]string{
		"--arm C":                   "the link has arms A, B",
		"--preset intel-2s-44c-88t": "give it without --preset",
	} {
		_, stderr, code := runCLI(t, append([]string{"run", "--link", link, "--duration", "10ms"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", args, code, stderr, want)
		}
	}
}
