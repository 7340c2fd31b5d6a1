package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var sweepArgs = []string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
	"--vary", "SIS_CORE=true,false", "--vary", "workload.t=4,8", "--seeds", "3", "--duration", "40ms"}

// Shards 1/N … N/N together equal the unsharded sweep, result for result.
func TestSweepShardsEqualWhole(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "all.jsonl")
	if code := run(append(append([]string{}, sweepArgs...), "--out", whole), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("whole sweep failed")
	}
	var lines []string
	for i, sh := range []string{"1/3", "2/3", "3/3"} {
		p := filepath.Join(dir, "s"+string(rune('1'+i))+".jsonl")
		var errb bytes.Buffer
		if code := run(append(append([]string{}, sweepArgs...), "--shard", sh, "--out", p), &bytes.Buffer{}, &errb); code != 0 {
			t.Fatalf("shard %s: %s", sh, errb.String())
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	}
	b, _ := os.ReadFile(whole)
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	idx := func(l string) int {
		var x struct{ Index int }
		json.Unmarshal([]byte(l), &x)
		return x.Index
	}
	sort.Slice(lines, func(i, j int) bool { return idx(lines[i]) < idx(lines[j]) })
	if len(want) != 12 || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("shards differ from the whole sweep:\n%s\n----\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// merge of a sweep equals compare's figures for the same arms and seeds.
func TestMergeEqualsCompare(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.jsonl")
	args := []string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
		"--vary", "SIS_CORE=true,false", "--seeds", "3", "--seed", "7", "--duration", "40ms", "--out", p}
	if code := run(args, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("sweep failed")
	}
	var mj bytes.Buffer
	if code := run([]string{"merge", "--format", "json", p}, &mj, &bytes.Buffer{}); code != 0 {
		t.Fatal("merge failed")
	}
	var merged []struct {
		Point, Metric string
		Mean, Stdev   float64
	}
	if err := json.Unmarshal(mj.Bytes(), &merged); err != nil {
		t.Fatal(err)
	}
	var cj bytes.Buffer
	if code := run([]string{"compare", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
		"--a", "SIS_CORE=true", "--b", "SIS_CORE=false", "--runs", "3", "--seed", "7", "--duration", "40ms", "--format", "json"}, &cj, &bytes.Buffer{}); code != 0 {
		t.Fatal("compare failed")
	}
	var cmp struct{ Rows []CompareRow }
	if err := json.Unmarshal(cj.Bytes(), &cmp); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range cmp.Rows {
		for _, m := range merged {
			if m.Metric != r.Metric {
				continue
			}
			switch m.Point {
			case "SIS_CORE=true":
				found++
				if m.Mean != r.AMean || m.Stdev != r.ASd {
					t.Errorf("%s A: merge %v ± %v, compare %v ± %v", r.Metric, m.Mean, m.Stdev, r.AMean, r.ASd)
				}
			case "SIS_CORE=false":
				found++
				if m.Mean != r.BMean || m.Stdev != r.BSd {
					t.Errorf("%s B: merge %v ± %v, compare %v ± %v", r.Metric, m.Mean, m.Stdev, r.BMean, r.BSd)
				}
			}
		}
	}
	if found < 2*len(cmp.Rows) {
		t.Errorf("matched %d of %d figures", found, 2*len(cmp.Rows))
	}
}

// 0 → 0.4 is not +0%: the relative change is absent, the difference is
// shown, and Welch's p says whether it is significant.
func TestCompareRowFromZero(t *testing.T) {
	r := compareRow("x", []float64{0, 0, 0}, []float64{0.4, 0.4, 0.4})
	if r.ChangePct != nil || r.Diff != 0.4 || changeText(r) != "from 0" || !r.Significant {
		t.Errorf("%+v", r)
	}
	r = compareRow("y", []float64{10, 11, 9, 10}, []float64{10, 9, 11, 10.5})
	if r.ChangePct == nil || r.Significant || r.P == nil || *r.P < 0.5 {
		t.Errorf("%+v", r)
	}
}

// resumeArgs is a sweep of 24 runs, two at once (so they finish out of
// order).
var resumeArgs = []string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
	"--vary", "SIS_CORE=true,false", "--vary", "workload.t=4,8", "--seeds", "6", "--duration", "40ms", "--parallel", "2"}

func sweepWith(extra ...string) []string { return append(append([]string{}, resumeArgs...), extra...) }

// sweepWithFlag is resumeArgs with --name's value replaced (or added).
func sweepWithFlag(name, value string) []string {
	args := sweepWith()
	for i := range args {
		if args[i] == name {
			args[i+1] = value
			return args
		}
	}
	return append(args, name, value)
}

// wholeSweep is the uninterrupted sweep's file.
func wholeSweep(t *testing.T, dir string) []byte {
	t.Helper()
	p := filepath.Join(dir, "whole.jsonl")
	var errb bytes.Buffer
	if code := run(sweepWith("--out", p), &bytes.Buffer{}, &errb); code != 0 {
		t.Fatalf("whole sweep: exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// interruptedSweep runs the sweep into p and cancels it (as a signal
// does) once it has written 3 lines; it returns stderr.
func interruptedSweep(t *testing.T, p string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sweepLineHook = func(n int) {
		if n == 3 {
			cancel()
		}
	}
	defer func() { sweepLineHook = nil }()
	var errb bytes.Buffer
	if code := runContext(ctx, sweepWith("--out", p), &bytes.Buffer{}, &errb); code != exitInterrupted {
		t.Fatalf("interrupted sweep: exit %d (want %d): %s", code, exitInterrupted, errb.String())
	}
	return errb.String()
}

// linesByIndex splits a sweep file into its lines, each with its
// newline, by run index; a line without its newline fails the test.
func linesByIndex(t *testing.T, b []byte) map[int]string {
	t.Helper()
	m := map[int]string{}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.Fatalf("a partial line: %q", b)
		}
		var x struct{ Index int }
		if err := json.Unmarshal(b[:i], &x); err != nil {
			t.Fatalf("line %q: %v", b[:i], err)
		}
		if _, dup := m[x.Index]; dup {
			t.Fatalf("run %d twice", x.Index)
		}
		m[x.Index] = string(b[:i+1])
		b = b[i+1:]
	}
	return m
}

// A sweep interrupted after some runs leaves exactly the runs it
// finished in --out, each a whole line (the uninterrupted sweep's line of
// that run), and merge reads the file.
func TestSweepInterruptedKeepsFinishedLines(t *testing.T) {
	dir := t.TempDir()
	whole := linesByIndex(t, wholeSweep(t, dir))
	p := filepath.Join(dir, "r.jsonl")
	stderr := interruptedSweep(t, p)
	b, _ := os.ReadFile(p)
	got := linesByIndex(t, b)
	if len(got) < 3 || len(got) >= len(whole) {
		t.Fatalf("%d of %d runs kept", len(got), len(whole))
	}
	for k, l := range got {
		if l != whole[k] {
			t.Errorf("run %d:\n%s\nwant\n%s", k, l, whole[k])
		}
	}
	if !strings.Contains(stderr, fmt.Sprintf("interrupted after %d of 24 runs", len(got))) || !strings.Contains(stderr, "--resume runs the rest") {
		t.Errorf("stderr %q", stderr)
	}
	var out bytes.Buffer
	if code := run([]string{"merge", p}, &out, &bytes.Buffer{}); code != 0 || !strings.Contains(out.String(), "SIS_CORE=") {
		t.Errorf("merge of the kept lines: exit %d\n%s", code, out.String())
	}
}

// --resume runs only the missing runs, and the file is then the
// uninterrupted sweep's, byte for byte (a complete sweep's file is put in
// run order).
func TestSweepResumeRunsOnlyTheMissing(t *testing.T) {
	dir := t.TempDir()
	whole := wholeSweep(t, dir)
	p := filepath.Join(dir, "r.jsonl")
	interruptedSweep(t, p)
	b, _ := os.ReadFile(p)
	kept := len(linesByIndex(t, b))
	var errb bytes.Buffer
	if code := run(sweepWith("--out", p, "--resume"), &bytes.Buffer{}, &errb); code != 0 {
		t.Fatalf("--resume: exit %d: %s", code, errb.String())
	}
	want := fmt.Sprintf("%d of the 24 runs are in %s already; running the other %d\n", kept, p, 24-kept)
	if !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), fmt.Sprintf("sweep: %d/%d runs done", 24-kept, 24-kept)) {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, whole) {
		t.Errorf("resumed file differs from the whole sweep's:\n%s\n----\n%s", got, whole)
	}
	// Resuming a complete sweep runs nothing and changes nothing.
	errb.Reset()
	if code := run(sweepWith("--out", p, "--resume"), &bytes.Buffer{}, &errb); code != 0 || !strings.Contains(errb.String(), "running the other 0") {
		t.Errorf("--resume of a complete file: exit %d: %s", code, errb.String())
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, whole) {
		t.Error("--resume of a complete file changed it")
	}
	// --resume of a file that does not exist is the whole sweep.
	q := filepath.Join(dir, "new.jsonl")
	if code := run(sweepWith("--out", q, "--resume"), &bytes.Buffer{}, &errb); code != 0 {
		t.Fatalf("--resume of no file: exit %d: %s", code, errb.String())
	}
	if got, _ := os.ReadFile(q); !bytes.Equal(got, whole) {
		t.Error("--resume of no file differs from the whole sweep")
	}
}

// A last line cut short (a kill in the middle of a write) is dropped with
// a message, and its run runs again.
func TestSweepResumeDropsPartialLastLine(t *testing.T) {
	dir := t.TempDir()
	whole := wholeSweep(t, dir)
	cut := 0
	for range 5 {
		cut += bytes.IndexByte(whole[cut:], '\n') + 1
	}
	next := cut + bytes.IndexByte(whole[cut:], '\n') + 1
	p := filepath.Join(dir, "r.jsonl")
	os.WriteFile(p, whole[:(cut+next)/2], 0o644)
	var errb bytes.Buffer
	if code := run(sweepWith("--out", p, "--resume"), &bytes.Buffer{}, &errb); code != 0 {
		t.Fatalf("--resume: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), fmt.Sprintf("ends in a partial line (%d bytes without a newline", (cut+next)/2-cut)) ||
		!strings.Contains(errb.String(), "5 of the 24 runs are in") {
		t.Errorf("stderr %q", errb.String())
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, whole) {
		t.Errorf("resumed file differs from the whole sweep's:\n%s\n----\n%s", got, whole)
	}
	// merge reads such a file too, leaving the partial line out.
	os.WriteFile(p, whole[:(cut+next)/2], 0o644)
	var out bytes.Buffer
	errb.Reset()
	if code := run([]string{"merge", "--format", "json", p}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "line 6: a partial last line") {
		t.Fatalf("merge of a file with a partial last line: exit %d, stderr %q", code, errb.String())
	}
	var rows []struct{ N int }
	json.Unmarshal(out.Bytes(), &rows)
	if n := rows[0].N; n != 5 { // the first point's 5 seeds of 6 (runs 0..4)
		t.Errorf("merge: n %d, want 5", n)
	}
	// A bad line that is not the last is still an error.
	os.WriteFile(p, append(append([]byte{}, whole[:cut+10]...), append([]byte("\n"), whole[next:]...)...), 0o644)
	if _, stderr, code := runCLI(t, "merge", p); code != exitUsage || !strings.Contains(stderr, "line 6: not a sweep result line") {
		t.Errorf("merge of a cut line in the middle: exit %d, stderr %q", code, stderr)
	}
}

// --resume of another sweep's file is refused, naming what differs, and
// leaves the file alone; so are an existing --out without --resume or
// --force, and --resume with --force or without --out.
func TestSweepResumeRefusesAnotherPlan(t *testing.T) {
	dir := t.TempDir()
	whole := wholeSweep(t, dir)
	p := filepath.Join(dir, "r.jsonl")
	os.WriteFile(p, whole, 0o644)
	for _, c := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"another duration", []string{"--duration", "50ms"}, "line 1: run 0 is not this sweep's run 0: its duration is 0.04s, this sweep's is 0.05s; the file is of a different sweep plan"},
		{"another seed", []string{"--seed", "9"}, "its seed is 1, this sweep's is 9"},
		{"fewer seeds", []string{"--seeds", "2"}, "line 3: run 2 is not this sweep's run 2: its point is SIS_CORE=true workload.t=4, this sweep's is SIS_CORE=true workload.t=8"},
		{"other values", []string{"--vary", "SIS_CORE=true,false", "--vary", "workload.t=2,4"}, "its point is SIS_CORE=true workload.t=4, this sweep's is SIS_CORE=true workload.t=2"},
		{"another --set", []string{"--set", "SIS_PROP=false"}, "its knobs are [SIS_CORE=true], this sweep's are [SIS_PROP=false SIS_CORE=true]"},
		{"another shard", []string{"--shard", "2/3"}, "line 1: run 0 belongs to shard 1/3, not to this --shard 2/3"},
	} {
		args := sweepWith("--out", p, "--resume")
		if c.name == "other values" {
			args = []string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
				"--vary", "SIS_CORE=true,false", "--vary", "workload.t=2,4", "--seeds", "6", "--duration", "40ms", "--out", p, "--resume"}
		} else if c.extra[0] == "--set" {
			args = append(args, c.extra...)
		} else {
			args = append(sweepWithFlag(c.extra[0], c.extra[1]), "--out", p, "--resume")
		}
		_, stderr, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "refusing to resume it") {
			t.Errorf("%s: exit %d, stderr %q (want %q)", c.name, code, stderr, c.want)
		}
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, whole) {
		t.Error("a refused --resume changed the file")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{sweepWith("--out", p), "--out " + p + " exists; refusing to overwrite it"},
		{sweepWith("--out", p, "--resume", "--force"), "--resume and --force"},
		{sweepWith("--resume"), "--resume continues the sweep in --out FILE"},
	} {
		if _, stderr, code := runCLI(t, c.args...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args[len(c.args)-2:], code, stderr)
		}
	}
	os.WriteFile(p, append(whole, "not json\n"...), 0o644)
	if _, stderr, code := runCLI(t, sweepWith("--out", p, "--resume")...); code != exitUsage || !strings.Contains(stderr, "line 25: not a sweep result line") {
		t.Errorf("a foreign line: exit %d, stderr %q", code, stderr)
	}
}
