package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import writes the workload (whole, refusing to overwrite without
// --force), prints what it kept, and run replays it with trace:file=.
func TestImportAndReplay(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "traceimport", "testdata", "ftrace-6x-odd.txt")
	out := filepath.Join(dir, "w.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"import", src, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"kept 4 tasks", "3 wakeups by a traced task", "sleep ended by an interrupt", "wrote " + out} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("import's summary lacks %q:\n%s", w, stderr.String())
		}
	}
	stderr.Reset()
	if code := run([]string{"import", "--format", "ftrace", src, "-o", out}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "add --force") {
		t.Errorf("import over an existing file: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"import", src, "-o", out, "--force", "--keep-kthreads"}, &stdout, &stderr); code != 0 {
		t.Errorf("import --force: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "trace:file=" + out, "--format", "json", "--no-wall-time"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run trace:file=: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"kind": "trace"`) && !strings.Contains(stdout.String(), `"kind":"trace"`) {
		t.Errorf("run's result has no trace workload:\n%s", stdout.String())
	}
	// A bad line is refused with its number and text, exit 2.
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("# tracer: nop\nnot a trace line\n"), 0o644)
	stderr.Reset()
	if code := run([]string{"import", bad}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), `line 2: not an event line`) {
		t.Errorf("bad trace: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"import"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no TRACE given") {
		t.Errorf("no TRACE: exit %d, %s", code, stderr.String())
	}
}

// run refuses, exit 2, a trace workload whose tasks can never all run,
// naming them; it used to simulate nothing (a fork cycle: 0 events) or a
// deadlock (6 events) and exit 0 (issue 22).
func TestRunRefusesTraceThatNeverFinishes(t *testing.T) {
	dir := t.TempDir()
	head := `{"format": "schedplay-trace-workload", "version": 1, "duration_ns": 1000000, "tasks": `
	for _, c := range []struct{ name, tasks, want string }{
		{"cycle.json", `[{"name": "foo", "parent": 1, "ops": [["run", 1000], ["fork", 1], ["exit"]]},
			{"name": "bar", "parent": 0, "ops": [["run", 1000], ["fork", 0], ["exit"]]}]}`,
			`tasks 0 ("foo") and 1 ("bar") form a fork cycle`},
		{"deadlock.json", `[{"name": "foo", "ops": [["run", 1000], ["wait", 1], ["run", 1000], ["wake", 1], ["exit"]]},
			{"name": "bar", "ops": [["run", 1000], ["wait", 0], ["run", 1000], ["wake", 0], ["exit"]]}]}`,
			`tasks 0 ("foo") and 1 ("bar") deadlock: 0 waits at op 1 for a wake from 1, 1 waits at op 1 for a wake from 0`},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(head+c.tasks), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "trace:file=" + path, "--duration", "10ms"}, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %s; want exit %d and %q", c.name, code, stderr.String(), exitUsage, c.want)
		}
	}
}

// import - reads the trace from stdin, as a stream, gzip or not: the
// same workload as from the file.
func TestImportFromStdin(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "traceimport", "testdata", "ftrace-6x-odd.txt")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	fromFile := filepath.Join(dir, "file.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"import", src, "-o", fromFile}, &stdout, &stderr); code != 0 {
		t.Fatalf("import FILE: exit %d: %s", code, stderr.String())
	}
	want, _ := os.ReadFile(fromFile)
	for name, in := range map[string][]byte{"plain": data, "gzip": z.Bytes()} {
		stdin := filepath.Join(dir, name+".in")
		os.WriteFile(stdin, in, 0o644)
		fh, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		saved := os.Stdin
		os.Stdin = fh
		stdout.Reset()
		stderr.Reset()
		code := run([]string{"import", "-"}, &stdout, &stderr)
		os.Stdin = saved
		fh.Close()
		// The file's "source" names the file; stdin's names "-".
		got := strings.Replace(stdout.String(), `"file": "-"`, `"file": "`+src+`"`, 1)
		if code != 0 || got != string(want) {
			t.Errorf("import - (%s): exit %d, %s\n got %s\nwant %s", name, code, stderr.String(), got, want)
		}
	}
}
