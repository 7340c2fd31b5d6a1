package main

import (
	"bytes"
	"encoding/json"
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
