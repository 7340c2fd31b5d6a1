package main

// Tests of --workload rtapp:file= (issue 22): a big file loads fast, once,
// and errors name the lines of the file as written.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"schedplay/engine/workload"
)

// bigRTAppFile writes an rt-app file near the 1 MiB limit, one key per
// line as people write them: tasks of 250 run/sleep events (~62,000 in
// all, under the 65,536-event limit).
func bigRTAppFile(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{\n\t\"tasks\": {\n")
	for i := 0; b.Len() < workload.RTAppMaxBytes-20_000; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "\t\t\"task%d\": {\n\t\t\t\"loop\": 1", i)
		for j := 0; j < 125; j++ {
			b.WriteString(",\n\t\t\t\"run\": 1000,\n\t\t\t\"sleep\": 1000")
		}
		b.WriteString("\n\t\t}")
	}
	b.WriteString("\n\t}\n}\n")
	path := filepath.Join(dir, "big.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An error only the build finds (a CPU the machine does not have) names
// the line of the file as written, as parse errors do: the build uses the
// parse of the file, not one of the spec that carries it compacted onto
// one line (which said "line 1, column 26").
func TestRTAppFileBuildErrorGivesTheFilesLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpus.json")
	os.WriteFile(path, []byte("{\n  \"tasks\": {\n    \"a\": {\"run\": 10},\n    \"t\": {\n      \"cpus\": [5],\n      \"run\": 10\n    }\n  }\n}\n"), 0o644)
	for _, verb := range [][]string{
		{"run", smallRun, "--duration", "10ms"},
		{"run", smallRun, "--duration", "10ms", "--runs", "2"},
		{"compare", smallRun, "--duration", "10ms", "--a", "", "--b", "era=6.6"},
	} {
		_, stderr, code := runCLI(t, append(verb, "--workload", "rtapp:file="+path)...)
		if code != exitUsage || !strings.Contains(stderr, `task "t" (line 4, column 5): cpus: CPU 5 does not exist`) {
			t.Errorf("%v: exit %d, stderr %q", verb, code, stderr)
		}
	}
}

// A run of a 1 MB rt-app file starts and finishes (the parse used to be
// quadratic: minutes); SIGINT while it loads ends it at once with status
// 130 (the load used to run to its end first, ignoring the signal).
func TestRTAppBigFileLoadsAndInterrupts(t *testing.T) {
	dir := t.TempDir()
	path := bigRTAppFile(t, dir)
	if out, stderr, code := runCLI(t, "run", smallRun, "--workload", "rtapp:file="+path, "--duration", "10ms", "--format", "json"); code != 0 || !strings.Contains(out, `"rtapp"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}

	plain, _ := binaries(t) // skips when processes cannot be run
	cmd := exec.Command(plain, "run", smallRun, "--workload", "rtapp:file="+path, "--duration", "1h", "--out", "o.txt")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Signal once the process has read the file: it then watches for
	// signals (main does that first) and is inside the load or just past
	// it. A fixed sleep raced with the start on a loaded machine: a
	// SIGINT before signal.Notify kills a Go program the default way.
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	waitRead(t, cmd.Process.Pid, st.Size())
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("exit %v, stderr %q", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running 20 s after SIGINT; stderr %q", stderr.String())
	}
	// Stopped in the load or in the run, the run's output is kept, marked.
	if out, err := os.ReadFile(filepath.Join(dir, "o.txt")); err != nil || !strings.HasPrefix(string(out), "truncated: interrupted at") {
		t.Errorf("o.txt: %v %.100q", err, out)
	}
	assertOnly(t, dir, "big.json", "o.txt")
}

// waitRead waits (20 s at most) until process pid has read n bytes
// (rchar of /proc/PID/io, Linux; elsewhere it waits 200 ms).
func waitRead(t *testing.T, pid int, n int64) {
	t.Helper()
	io := fmt.Sprintf("/proc/%d/io", pid)
	if _, err := os.Stat(io); err != nil {
		time.Sleep(200 * time.Millisecond)
		return
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(io)
		if err != nil {
			return // exited: the caller sees how
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "rchar:"); ok {
				if got, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && got >= n {
					return
				}
			}
		}
	}
	t.Fatalf("process %d did not read %d bytes within 20 s", pid, n)
}

// TestRTAppFileMerge: rtapp:file=a.json+b.json merges the files as
// rt-app's merge.py does; an error names the file, line and column.
func TestRTAppFileMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	g := write("g.json", `{"global": {"duration": 1}}`)
	a := write("a.json", `{"tasks": {"t": {"run": 1000, "sleep": 1000, "suspend",}}}`)
	b := write("b.json", `{"tasks": {"u": {"run": 100, "resume": "t", "sleep": 1000}}}`)
	out, errOut, code := runCLI(t, "run", smallRun, "--workload", "rtapp:file="+g+"+"+a+"+"+b, "--duration", "20ms")
	if code != 0 || !strings.Contains(out, "2 tasks") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	bad := write("bad.json", "{\"tasks\": {\n \"v\": {\"run\": 1, \"bogus\": 1}}}")
	_, errOut, code = runCLI(t, "run", smallRun, "--workload", "rtapp:file="+g+"+"+bad, "--duration", "20ms")
	if code == 0 || !strings.Contains(errOut, bad+", line 2, column 18") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
