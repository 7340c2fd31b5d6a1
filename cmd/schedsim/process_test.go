package main

// Tests on a real schedsim process: its exit statuses as the shell sees
// them, and what Ctrl-C (SIGINT) leaves behind.

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The binaries, built once per test run: plain is schedsim as shipped;
// crash is the same with -X main.crashOnVerb=run, so that run panics.
var bins struct {
	once         sync.Once
	dir          string
	plain, crash string
	err          error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

func binaries(t *testing.T) (plain, crash string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs POSIX processes and signals")
	}
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "schedsim-test-")
		if bins.err != nil {
			return
		}
		bins.plain = filepath.Join(bins.dir, "schedsim")
		bins.crash = filepath.Join(bins.dir, "schedsim-crash")
		for _, b := range []struct{ out, ldflags string }{{bins.plain, ""}, {bins.crash, "-X main.crashOnVerb=run"}} {
			out, err := exec.Command("go", "build", "-ldflags="+b.ldflags, "-o", b.out, ".").CombinedOutput()
			if err != nil {
				bins.err = errors.New("go build: " + err.Error() + "\n" + string(out))
				return
			}
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.plain, bins.crash
}

// exitCode runs cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return 0
}

func TestProcessExitStatus(t *testing.T) {
	plain, crash := binaries(t)
	cases := []struct {
		name       string
		bin        string
		args       []string
		stdoutFile string // instead of a buffer
		code       int
		stdout     string // a substring of stdout
		stderr     string // a substring of stderr
	}{
		{"ok", plain, []string{"presets"}, "", 0, "intel-2s-44c-88t", ""},
		{"-h", plain, []string{"-h"}, "", 0, "usage: schedsim", ""},
		{"run --help", plain, []string{"run", "--help"}, "", 0, "--preset NAME", ""},
		{"a run failed (stdout is a full disk)", plain, small(), "/dev/full", 1, "", "stdout"},
		{"unknown verb", plain, []string{"frobnicate"}, "", 2, "", `unknown verb "frobnicate"`},
		{"unknown flag", plain, small("--bogus"), "", 2, "", "-bogus"},
		{"unknown knob", plain, small("--set", "SIS_FOO=1"), "", 2, "", "--set"},
		{"limit found while building", plain, small("--workload", "hackbench:g=1000,f=40"), "", 2, "", "--workload"},
		{"internal error", crash, []string{"run", "--preset", "p4-ht-1c-2t", "--workload", "hog:n=1"}, "", 3, "",
			"schedsim: internal error: crash requested by the test build (-X main.crashOnVerb); reproduce with: schedsim run --preset p4-ht-1c-2t --workload hog:n=1\n"},
		{"the crash build is otherwise schedsim", crash, []string{"presets"}, "", 0, "p4-ht-1c-2t", ""},
	}
	for _, c := range cases {
		cmd := exec.Command(c.bin, c.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if c.stdoutFile != "" {
			fh, err := os.OpenFile(c.stdoutFile, os.O_WRONLY, 0)
			if err != nil {
				t.Logf("%s: skipped: %v", c.name, err)
				continue
			}
			cmd.Stdout = fh
			defer fh.Close()
		}
		code := exitCode(t, cmd)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%s: %v: exit %d (want %d)\nstdout %.200q (want %q)\nstderr %.300q (want %q)",
				c.name, c.args, code, c.code, stdout.String(), c.stdout, stderr.String(), c.stderr)
		}
	}
}

// interrupt starts schedsim in dir, waits until it has begun writing an
// output (a temporary file shows up), sends SIGINT and returns the exit
// status and stderr.
func interrupt(t *testing.T, bin, dir string, args ...string) (int, string) {
	t.Helper()
	return interruptWhen(t, bin, dir, 1, 0, func() bool {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		if len(tmps) == 0 {
			return false
		}
		time.Sleep(300 * time.Millisecond) // let it simulate a little
		return true
	}, args...)
}

// interruptWhen starts schedsim in dir, waits until ready() (polled; 20 s
// at most), sends it n SIGINTs gap apart and returns the exit status and
// stderr.
func interruptWhen(t *testing.T, bin, dir string, n int, gap time.Duration, ready func() bool, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%v: not ready to be interrupted after 20 s; stderr %q", args, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range n {
		if i > 0 {
			time.Sleep(gap)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v: still running 20 s after SIGINT", args)
	}
	return 0, ""
}

// Ctrl-C during a run with --trace and --out leaves both files complete,
// valid JSON, holding the part done and marked truncated; during --runs N,
// compare or reproduce it leaves no file; never a temporary file.
func TestSIGINTLeavesValidTruncatedFilesOrNone(t *testing.T) {
	plain, _ := binaries(t)

	dir := t.TempDir()
	code, stderr := interrupt(t, plain, dir, "run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22",
		"--duration", "1h", "--trace", "t.json", "--out", "o.json", "--format", "json")
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted at") {
		t.Fatalf("run: exit %d, stderr %q", code, stderr)
	}
	checkTruncated(t, filepath.Join(dir, "t.json"), filepath.Join(dir, "o.json"))
	assertOnly(t, dir, "t.json", "o.json")

	for _, args := range [][]string{
		{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22", "--duration", "1h", "--runs", "2", "--out", "o.json"},
		{"compare", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22", "--duration", "1h", "--runs", "2", "--out", "o.json"},
		{"reproduce", "--out", "o.txt", "V1"},
	} {
		dir := t.TempDir()
		code, stderr := interrupt(t, plain, dir, args...)
		if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		assertOnly(t, dir)
	}
}

// Two SIGINTs a moment apart (GNU timeout -s INT signals the child, then
// its group) are one interrupt: the run still writes the part done. The
// second was read as "Ctrl-C again" and the process exited 130 with no
// --out (1 of 6 tries in the audit, when the first signal had been
// delivered before the second was sent; two signals sent before the
// first is delivered merge into one). 2 ms apart: the first has been
// delivered, and stopping the run and writing the part done takes
// longer.
func TestTwoSignalsTogetherStillWriteTheOutput(t *testing.T) {
	plain, _ := binaries(t)
	dir := t.TempDir()
	code, stderr := interruptWhen(t, plain, dir, 2, 2*time.Millisecond, func() bool {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		if len(tmps) != 2 {
			return false
		}
		time.Sleep(500 * time.Millisecond) // a trace worth writing
		return true
	}, "run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=22",
		"--duration", "1h", "--trace", "t.json", "--out", "o.json", "--format", "json")
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted at") {
		t.Fatalf("run: exit %d, stderr %q", code, stderr)
	}
	checkTruncated(t, filepath.Join(dir, "t.json"), filepath.Join(dir, "o.json"))
	assertOnly(t, dir, "t.json", "o.json")
}

// An interrupted sweep (Ctrl-C, or SIGTERM from a preempted Slurm or
// Kubernetes job) keeps the runs it finished: --out holds their lines
// (with --parallel 1 in run order), and merge reads them. It wrote
// nothing before.
func TestInterruptedSweepKeepsFinishedRuns(t *testing.T) {
	plain, _ := binaries(t)
	dir := t.TempDir()
	lines := func() int { // --out is appended to as the runs finish
		b, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
		return bytes.Count(b, []byte("\n"))
	}
	code, stderr := interruptWhen(t, plain, dir, 1, 0, func() bool { return lines() >= 2 },
		"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8", "--vary", "SIS_CORE=true,false",
		"--seeds", "50", "--duration", "100ms", "--parallel", "1", "--out", "r.jsonl")
	if code != exitInterrupted || !strings.Contains(stderr, "finished runs are in --out r.jsonl") {
		t.Fatalf("sweep: exit %d, stderr %q", code, stderr)
	}
	assertOnly(t, dir, "r.jsonl")
	b, err := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) < 2 || len(got) >= 100 {
		t.Fatalf("%d lines kept of 100 runs", len(got))
	}
	for i, l := range got {
		var ln sweepLine
		if err := stdjson.Unmarshal([]byte(l), &ln); err != nil || ln.Index != i || len(ln.Metrics) == 0 {
			t.Errorf("line %d: index %d, %d metrics, err %v", i+1, ln.Index, len(ln.Metrics), err)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"merge", filepath.Join(dir, "r.jsonl")}, &out, &bytes.Buffer{}); code != 0 || !strings.Contains(out.String(), "SIS_CORE=true") {
		t.Errorf("merge of the kept lines: exit %d\n%s", code, out.String())
	}
}

// A sweep killed outright (SIGKILL, an OOM kill: no handler runs) keeps
// the lines it wrote, each whole, and --resume completes the file to the
// uninterrupted sweep's.
func TestKilledSweepResumes(t *testing.T) {
	plain, _ := binaries(t)
	dir := t.TempDir()
	args := []string{"sweep", "--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8", "--vary", "SIS_CORE=true,false",
		"--seeds", "100", "--duration", "100ms", "--parallel", "2"}
	cmd := exec.Command(plain, append(args, "--out", "r.jsonl")...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
		if bytes.Count(b, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no 3 lines after 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	kept := bytes.Count(b, []byte("\n"))
	if len(b) == 0 || b[len(b)-1] != '\n' || kept >= 200 {
		t.Fatalf("after SIGKILL: %d lines, ends %q", kept, b[max(0, len(b)-20):])
	}
	res := exec.Command(plain, append(args, "--out", "r.jsonl", "--resume")...)
	res.Dir = dir
	if out, err := res.CombinedOutput(); err != nil || !strings.Contains(string(out), "running the other") {
		t.Fatalf("--resume: %v\n%s", err, out)
	}
	whole := exec.Command(plain, append(args, "--out", "whole.jsonl")...)
	whole.Dir = dir
	if out, err := whole.CombinedOutput(); err != nil {
		t.Fatalf("whole sweep: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	want, _ := os.ReadFile(filepath.Join(dir, "whole.jsonl"))
	if !bytes.Equal(got, want) {
		t.Errorf("killed and resumed sweep differs from the whole sweep (%d and %d bytes)", len(got), len(want))
	}
	assertOnly(t, dir, "r.jsonl", "whole.jsonl")
}
