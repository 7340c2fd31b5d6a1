package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// twin end to end: --quick and tiny loops, a few seconds, both columns.
func TestTwinQuick(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("twin detects and benchmarks Linux")
	}
	for _, extra := range [][]string{nil, {"--builtin"}} {
		args := append([]string{"twin", "--quick", "--bench", "pipe,messaging", "--loops", "300", "--groups", "1", "--msg-loops", "5"}, extra...)
		var stdout, stderr bytes.Buffer
		start := time.Now()
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
		}
		t.Logf("%v: %v", args, time.Since(start))
		out := stdout.String()
		for _, want := range []string{"benchmark  metric", "real  simulated  sim/real", "pipe       usecs/op (µs)", "pipe       ops/sec", "messaging  total time (s)",
			"simulated: --workload pipe:l=300", "simulated: --workload hackbench:g=1,l=5", "detected --quick"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: stdout lacks %q:\n%s", args, want, out)
			}
		}
		// Every row has a real figure, a simulated one and a ratio.
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "pipe ") || strings.HasPrefix(l, "messaging ") {
				f := strings.Fields(l)
				if f[len(f)-1] == "-" || f[len(f)-2] == "-" || f[len(f)-3] == "-" {
					t.Errorf("%v: a figure is missing: %q", args, l)
				}
			}
		}
		if extra != nil && !strings.Contains(out, "built-in instead of the tool: --builtin") {
			t.Errorf("--builtin: the output does not say the built-in ran:\n%s", out)
		}
	}
}

func TestTwinJSONAndOut(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("twin detects and benchmarks Linux")
	}
	dir := t.TempDir()
	preset := filepath.Join(dir, "box.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"machine", "detect", "--quick", "-o", preset}, &stdout, &stderr); code != exitOK {
		t.Fatalf("detect: exit %d: %s", code, stderr.String())
	}
	out := filepath.Join(dir, "twin.json")
	stdout.Reset()
	stderr.Reset()
	args := []string{"twin", "--machine-file", preset, "--bench", "pipe", "--loops", "200", "--builtin", "--format", "json", "--out", out}
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Schema string `json:"schema"`
		Host   struct {
			CPUs       int      `json:"cpus"`
			LoadBefore *float64 `json:"load_avg_before"`
			Noisy      *bool    `json:"noisy"`
		} `json:"host"`
		Preset struct {
			Name, Source, File string
		} `json:"preset"`
		Benchmarks []struct {
			Bench string `json:"bench"`
			Real  struct {
				Runner, Mode, Command string
			} `json:"real"`
			Sim struct {
				Workload string `json:"workload"`
			} `json:"sim"`
			Metrics []struct {
				Metric           string
				Real, Sim, Ratio *float64
				Unit, Better     string
			} `json:"metrics"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if rep.Schema != "schedplay-twin/1" || rep.Host.CPUs < 1 || rep.Host.LoadBefore == nil || rep.Host.Noisy == nil {
		t.Errorf("header: %+v", rep)
	}
	if rep.Preset.Source != "file" || rep.Preset.File != preset || rep.Preset.Name != "box" {
		t.Errorf("preset: %+v", rep.Preset)
	}
	if len(rep.Benchmarks) != 1 || rep.Benchmarks[0].Bench != "pipe" || rep.Benchmarks[0].Real.Runner != "builtin" ||
		rep.Benchmarks[0].Sim.Workload != "pipe:l=200,T=1" || len(rep.Benchmarks[0].Metrics) != 2 {
		t.Fatalf("benchmarks: %+v", rep.Benchmarks)
	}
	for _, m := range rep.Benchmarks[0].Metrics {
		if m.Real == nil || m.Sim == nil || m.Ratio == nil || *m.Real <= 0 || *m.Sim <= 0 {
			t.Errorf("metric %+v", m)
		}
	}
	// --out written whole; nothing on stdout; an existing file needs --force.
	if stdout.Len() != 0 {
		t.Errorf("stdout with --out: %q", stdout.String())
	}
	if code := run(args, &stdout, &stderr); code != exitUsage {
		t.Errorf("existing --out without --force: exit %d", code)
	}
}

func TestTwinUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"twin", "--bench", "pipe,tbench"}, `unknown benchmark "tbench"`},
		{[]string{"twin", "--format", "csv"}, `--format "csv" not allowed`},
		{[]string{"twin", "--quick", "--machine-file", "x.json"}, "exclude each other"},
		{[]string{"twin", "--loops", "0"}, "--loops 0 out of range"},
		{[]string{"twin", "--machine-file", "/nonexistent/box.json"}, "--machine-file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"twin", "-h"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "usage: schedsim twin") {
		t.Errorf("twin -h: exit %d: %s", code, stdout.String())
	}
	stdout.Reset()
	run([]string{"-h"}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "  twin [--machine-file FILE | --quick]") {
		t.Errorf("the usage does not list twin:\n%s", stdout.String())
	}
}
