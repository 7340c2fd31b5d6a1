package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

// threadRE reads a cyclictest thread line the way line-based parsers do
// (split on spaces and colons: T, the pid in parentheses, P, I, C, Min,
// Act, Avg, Max).
var threadRE = regexp.MustCompile(`^T: *(\d+) \( *(\d+)\) P: *(\d+) I:(\d+) C: *(\d+) Min: *(\d+) Act: *(\d+) Avg: *(\d+) Max: *(\d+)$`)

// checkCyclictestLines checks cyclictest -q output: the latency-target
// line, then thread lines that read back and that print_stat's format
// renders byte for byte from the values read. It returns the values.
func checkCyclictestLines(t *testing.T, who string, lines []string) [][]int64 {
	t.Helper()
	if want := fmt.Sprintf(cyclictestLatencyLine, 0); len(lines) < 2 || lines[0] != want {
		t.Fatalf("%s: want %q and thread lines, got %q", who, want, lines)
	}
	var out [][]int64
	for _, l := range lines[1:] {
		m := threadRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: %q is not a cyclictest thread line", who, l)
		}
		var v []int64
		var args []any
		for _, f := range m[1:] {
			n, _ := strconv.ParseInt(f, 10, 64)
			v = append(v, n)
			args = append(args, n)
		}
		if again := fmt.Sprintf(cyclictestThreadLine, args...); again != l {
			t.Errorf("%s: %q, printed with print_stat's format: %q", who, l, again)
		}
		out = append(out, v)
	}
	return out
}

// The format string reproduces the real cyclictest's lines (captured from
// Debian's rt-tests 2.4), and the simulated run prints lines of the same
// form: one per thread, thread k's interval i + k·d, every cycle counted.
func TestCyclictestFormat(t *testing.T) {
	data, err := os.ReadFile("testdata/cyclictest/real-cyclictest-2.4.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, real, _ := strings.Cut(string(data), "---- stdout\n")
	checkCyclictestLines(t, "real cyclictest", splitLines([]byte(real)))

	var out, errb bytes.Buffer
	args := []string{"run", "--preset", "intel-2s-44c-88t", "--era", "6.6", "--workload", "cyclictest:t=3,i=1000,d=500,p=80",
		"--workload", "hackbench:g=4", "--duration", "1s", "--format", "cyclictest"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	vals := checkCyclictestLines(t, "schedsim", splitLines(out.Bytes()))
	if len(vals) != 3 {
		t.Fatalf("%d thread lines, want 3", len(vals))
	}
	for k, v := range vals {
		interval, cycles, minUS, avg, maxUS := v[3], v[4], v[5], v[7], v[8]
		if v[0] != int64(k) || v[2] != 80 || interval != 1000+500*int64(k) {
			t.Errorf("thread %d: T %d P %d I %d, want T %d P 80 I %d", k, v[0], v[2], interval, k, 1000+500*k)
		}
		if want := 1000000 / interval; cycles < want-1 || cycles > want {
			t.Errorf("thread %d: %d cycles of %d µs in 1 s, want %d", k, cycles, interval, want)
		}
		if !(minUS <= avg && avg <= maxUS) {
			t.Errorf("thread %d: min %d avg %d max %d out of order", k, minUS, avg, maxUS)
		}
	}
	// The machine's own cyclictest, when it can run (root: -p needs
	// SCHED_FIFO), checks the layout again today. CI installs rt-tests.
	if path, err := exec.LookPath("cyclictest"); err == nil && os.Geteuid() == 0 {
		cmd := exec.Command(path, "-q", "-D", "1", "-t", "2", "-i", "1000", "-p", "80")
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		checkCyclictestLines(t, path, splitLines(b))
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("CI: the real cyclictest must run here (rt-tests, as root): %v", err)
	}
}

// jsonKeys lists the keys of a JSON object, sorted.
func jsonKeys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// --format cyclictest-json writes the keys cyclictest --json writes, at
// the top and per thread, with numbers where it has numbers; when
// SCHEDPLAY_RT_TESTS_PARSER names Linaro test-definitions'
// automated/lib/parse_rt_tests_results.py, that parser reads it.
func TestCyclictestJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/cyclictest/real-cyclictest-2.4.json")
	if err != nil {
		t.Fatal(err)
	}
	var real map[string]any
	if err := json.Unmarshal(data, &real); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "sim.json")
	var out, errb bytes.Buffer
	args := []string{"run", "--preset", "intel-2s-44c-88t", "--era", "6.6", "--workload", "cyclictest:t=3,p=80",
		"--duration", "200ms", "--format", "cyclictest-json", "--out", file}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sim map[string]any
	if err := json.Unmarshal(b, &sim); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if !slices.Equal(jsonKeys(sim), jsonKeys(real)) {
		t.Errorf("top-level keys %v, cyclictest writes %v", jsonKeys(sim), jsonKeys(real))
	}
	if sim["num_threads"] != real["num_threads"] {
		t.Errorf("num_threads %v, want 3", sim["num_threads"])
	}
	rt, st := real["thread"].(map[string]any), sim["thread"].(map[string]any)
	for k := range 3 {
		r0, s0 := rt["0"].(map[string]any), st[strconv.Itoa(k)].(map[string]any)
		if !slices.Equal(jsonKeys(s0), jsonKeys(r0)) {
			t.Errorf("thread %d keys %v, cyclictest writes %v", k, jsonKeys(s0), jsonKeys(r0))
		}
		for _, key := range []string{"cycles", "min", "max", "avg", "cpu", "node"} {
			if _, ok := s0[key].(float64); !ok {
				t.Errorf("thread %d: %s is %T, want a number", k, key, s0[key])
			}
		}
	}
	if parser := os.Getenv("SCHEDPLAY_RT_TESTS_PARSER"); parser != "" {
		b, err := exec.Command("python3", parser, "cyclictest", file).CombinedOutput()
		if err != nil || !strings.Contains(string(b), "cyclictest pass") || !strings.Contains(string(b), "t2-max-latency pass") {
			t.Fatalf("%s on our JSON: %v\n%s", parser, err, b)
		}
		t.Logf("%s:\n%s", parser, b)
	}
}
