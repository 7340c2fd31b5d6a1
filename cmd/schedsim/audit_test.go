package main

// The inputs of the hostile-input audit (issue 22) that ran something
// other than what was asked, or lost output, each with the behaviour it
// gets now. Each case failed before its fix.

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAuditInputsRefusedByName(t *testing.T) {
	dir := t.TempDir()
	machine := writeMachineFile(t, dir)
	longRT := filepath.Join(dir, "week.json")
	if err := os.WriteFile(longRT, []byte(`{"global": {"duration": 604800}, "tasks": {"t": {"run": 1000, "sleep": 1000}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := []string{"sweep", smallRun, "--workload", "schbench:m=1,t=2", "--duration", "10ms"}
	cases := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		// 5: the second --vary of a knob silently replaced the first.
		{"a knob in two --vary", append(sweep, "--vary", "SIS_CORE=true,false", "--vary", "SIS_CORE=false"),
			[]string{"--vary SIS_CORE=true,false and --vary SIS_CORE=false both vary SIS_CORE", "one --vary"}},
		{"a knob in two --vary, spelt differently", append(sweep, "--vary", "SIS_CORE=true", "--vary", "sis_core=false"),
			[]string{"both vary SIS_CORE"}},
		{"a workload key in two --vary", append(sweep, "--vary", "workload.t=2,4", "--vary", "workload1.t=8"),
			[]string{"both vary workload1.t"}},
		{"a knob in --set and --vary", append(sweep, "--set", "SIS_CORE=false", "--vary", "SIS_CORE=true,false"),
			[]string{"--set SIS_CORE=false and --vary SIS_CORE=true,false both set knob SIS_CORE"}},
		// 9: duplicate values ran the same point twice, and merge then
		// refused the file as overlapping shards.
		{"a value twice", append(sweep, "--vary", "SIS_CORE=true,true"), []string{"--vary SIS_CORE: value true given twice"}},
		{"a value twice, spelt differently", append(sweep, "--vary", "SIS_CORE=true,1"), []string{"values true and 1 are the same"}},
		// 2: 100 M runs were planned in memory (7.3 GB and growing).
		{"100 M runs", append(sweep, "--vary", "sched_latency_ns="+countList(1000000, 1000), "--vary",
			"sched_min_granularity_ns="+countList(100000, 1000), "--seeds", "100"),
			[]string{"1000 sched_latency_ns × 1000 sched_min_granularity_ns × 100 seeds = 100,000,000 runs", fmt.Sprintf("(%d)", MaxSweepRuns)}},
		// 8: the file's machine was simulated, the preset's name printed.
		{"--preset and --machine-file", []string{"run", "--preset", "intel-2s-44c-88t", "--machine-file", machine, "--workload", "hog:n=1", "--duration", "1ms"},
			[]string{"--preset intel-2s-44c-88t and --machine-file", "both name the machine"}},
		// Minor rows.
		{"seed wraps", small("--seed", "18446744073709551615", "--runs", "2"), []string{"--seed 18446744073709551615 with --runs 2", "wrap to 0"}},
		{"seed wraps in a sweep", append(sweep, "--seed", "18446744073709551615", "--seeds", "2"), []string{"--seed 18446744073709551615 with --seeds 2"}},
		{"--preset twice", []string{"run", "--preset", "p4-ht-1c-2t", "--preset", "intel-2s-44c-88t", "--workload", "hog:n=1"},
			[]string{"--preset given twice (p4-ht-1c-2t, then intel-2s-44c-88t)"}},
		{"--duration twice", small("--duration", "1s", "--duration", "2s"), []string{"--duration given twice (1s, then 2s)"}},
		{"a knob set twice", small("--set", "SIS_CORE=true", "--set", "SIS_CORE=false"), []string{"--set SIS_CORE=true and --set SIS_CORE=false both set knob SIS_CORE"}},
		{"--era and --set era", small("--era", "6.6", "--set", "era=5.2"), []string{"both set knob era"}},
		{"--trace-window past the run", small("--trace", filepath.Join(dir, "t.json"), "--trace-window", "1s..2s"),
			[]string{"--trace-window 1s..2s starts at or after the end of the run (20ms simulated)"}},
		{"global.duration of a week", []string{"run", smallRun, "--workload", "rtapp:file=" + longRT},
			[]string{"global.duration is 168h0m0s, more than a run may simulate (1h0m0s)", "--duration"}},
		{"merge of a directory", []string{"merge", dir}, []string{"is a directory"}},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct {
			name string
			args []string
			want []string
		}{"merge of /dev/zero", []string{"merge", "/dev/zero"}, []string{"/dev/zero: a line longer than 64 MB: not a sweep result file"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
	assertOnly(t, dir, "week.json", filepath.Base(machine))
}

// countList is n integers from start, step 1000: "start,start+1000,...".
func countList(start, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(start + 1000*i)
	}
	return strings.Join(parts, ",")
}

// A flag after a verb's positional arguments is a flag (GNU style), not a
// file name; after "--" everything is an argument.
func TestFlagsAfterPositionalArguments(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.jsonl")
	if _, stderr, code := runCLI(t, "sweep", smallRun, "--workload", "schbench:m=1,t=2", "--duration", "10ms", "--seeds", "2",
		"--vary", "SIS_CORE=true,false", "--out", p); code != 0 {
		t.Fatalf("sweep: %s", stderr)
	}
	out, stderr, code := runCLI(t, "merge", p, "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "point,metric,n,mean,stdev,ci95\n") {
		t.Errorf("merge FILE --format csv: exit %d, stdout %.60q, stderr %q", code, out, stderr)
	}
	_, stderr, code = runCLI(t, "merge", "--", p, "--format")
	if code != exitUsage || !strings.Contains(stderr, "merge: --format: no such file") {
		t.Errorf("merge -- FILE --format: exit %d, stderr %q (want --format read as a file)", code, stderr)
	}
	_, stderr, code = runCLI(t, "reproduce", "NOPE", "--quick")
	if code != exitUsage || !strings.Contains(stderr, "NOPE") {
		t.Errorf("reproduce NOPE --quick: exit %d, stderr %q", code, stderr)
	}
}

// A --machine-file run's CSV names the machine simulated (the file's own
// name): there was no machine column, and the preset column said what
// --preset named.
func TestRunCSVNamesTheMachine(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeMachineFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	machine := filepath.Join(dir, "mine.json")
	data = bytes.Replace(data, []byte(`"name": "p4-ht-1c-2t"`), []byte(`"name": "my-box"`), 1)
	if err := os.WriteFile(machine, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "run", "--machine-file", machine, "--workload", "hog:n=1", "--duration", "1ms", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(bytes.NewReader([]byte(out))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	i, ok := col["machine"]
	if !ok {
		t.Fatalf("no machine column: %v", rows[0])
	}
	if got := rows[1][i]; got != "my-box" {
		t.Errorf("machine column %q, want the file's my-box", got)
	}
}
