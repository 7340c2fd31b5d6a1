package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policySweep is a sweep over the policy axis: kernel.star (the era's own
// search, written as a policy), bounded.star and none, 2 seeds each.
func policySweep(dir string, extra ...string) []string {
	return append([]string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000",
		"--set", "era=5.2", "--vary", "policy=" + filepath.Join(dir, "kernel.star") + "," + filepath.Join(dir, "bounded.star") + ",none",
		"--seeds", "2", "--duration", "40ms"}, extra...)
}

func copyPolicies(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{"kernel.star", "bounded.star"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "policies", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The policy axis: each line names its policy and the source's sha256;
// kernel.star's runs equal none's (it is the era's own search); resume
// refuses a journal of an edited policy, merge two shards that ran
// different sources of one policy.
func TestSweepPolicyAxis(t *testing.T) {
	dir := t.TempDir()
	copyPolicies(t, dir)
	p := filepath.Join(dir, "s.jsonl")
	if _, stderr, code := runCLI(t, policySweep(dir, "--out", p)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6", len(lines))
	}
	var ls []sweepLine
	for _, l := range lines {
		var x sweepLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		if x.Error != "" {
			t.Fatalf("run %d: %s", x.Index, x.Error)
		}
		ls = append(ls, x)
	}
	for i, want := range []string{"kernel.star", "kernel.star", "bounded.star", "bounded.star", "", ""} {
		if filepath.Base(ls[i].Policy) != want && !(want == "" && ls[i].Policy == "") || (want == "") != (ls[i].PolicySum == "") {
			t.Errorf("run %d: policy %q sum %q, want %q", i, ls[i].Policy, ls[i].PolicySum, want)
		}
	}
	for s := 0; s < 2; s++ {
		a, _ := json.Marshal(ls[s].Metrics)
		c, _ := json.Marshal(ls[4+s].Metrics)
		if !bytes.Equal(a, c) {
			t.Errorf("seed %d: kernel.star's metrics differ from none's:\n%s\n%s", s, a, c)
		}
	}

	// An edited policy: --resume refuses the journal.
	os.WriteFile(p, []byte(strings.Join(lines[:3], "\n")+"\n"), 0o644)
	f, _ := os.OpenFile(filepath.Join(dir, "bounded.star"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("# edited\n")
	f.Close()
	_, stderr, code := runCLI(t, policySweep(dir, "--out", p, "--resume")...)
	if code != exitUsage || !strings.Contains(stderr, "line 3: run 2 is not this sweep's run 2: its policy is") ||
		!strings.Contains(stderr, "the policy file was edited since those runs") {
		t.Errorf("resume of an edited policy: exit %d, stderr %q", code, stderr)
	}

	// Shards of two versions: merge refuses them.
	s1, s2 := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl")
	if _, stderr, code := runCLI(t, policySweep(dir, "--shard", "1/2", "--out", s1)...); code != 0 {
		t.Fatal(stderr)
	}
	copyPolicies(t, dir)
	if _, stderr, code := runCLI(t, policySweep(dir, "--shard", "2/2", "--out", s2)...); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := runCLI(t, "merge", s1, s2); code != exitUsage || !strings.Contains(stderr, "not the same sweep (a policy file edited between shards?)") {
		t.Errorf("merge of two versions: exit %d, stderr %q", code, stderr)
	}

	// --policy and a policy axis together are refused; --policy alone
	// runs every run with it.
	if _, stderr, code := runCLI(t, "sweep", "--preset", "amd-7950x-16c-32t", "--workload", "hog:n=1", "--policy", filepath.Join(dir, "kernel.star"), "--vary", "policy=none", "--seeds", "1"); code != exitUsage || !strings.Contains(stderr, "drop one") {
		t.Errorf("--policy with --vary policy: exit %d, %q", code, stderr)
	}
	out, stderr, code := runCLI(t, "sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8,s=2000,c=1000", "--set", "era=5.2",
		"--policy", filepath.Join(dir, "bounded.star"), "--vary", "SIS_CORE=true,false", "--seeds", "1", "--duration", "40ms")
	if code != 0 || strings.Count(out, `"policy_sha256"`) != 2 {
		t.Errorf("--policy: exit %d, %s\n%s", code, stderr, out)
	}
}
