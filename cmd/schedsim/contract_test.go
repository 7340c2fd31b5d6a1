package main

// Tests of the command line's contract: exit statuses, help, flag
// placeholders, errors that name their flag, the machine-file syntax error
// offset, safe output files, interruption, and JSON escaping (issue 9).

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"schedplay/experiment"
	"schedplay/presets"
)

const smallRun = "--preset=p4-ht-1c-2t"

// small returns a short run's arguments with extra ones appended.
// small is a short run with extra flags; an extra --duration replaces
// its 20 ms (a flag given twice is refused).
func small(extra ...string) []string {
	args := []string{"run", smallRun, "--workload", "schbench:m=1,t=2"}
	if !slices.Contains(extra, "--duration") {
		args = append(args, "--duration", "20ms")
	}
	return append(args, extra...)
}

func TestExitStatusContract(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"presets", []string{"presets"}, 0},
		{"knobs", []string{"knobs"}, 0},
		{"workloads", []string{"workloads"}, 0},
		{"small run", small(), 0},
		{"no verb", nil, 2},
		{"unknown verb", []string{"frobnicate"}, 2},
		{"flag before verb", []string{"--preset", "x"}, 2},
		{"unknown flag", small("--bogus"), 2},
		{"flag without value", []string{"run", "--preset"}, 2},
		{"bad flag value", small("--seed", "x"), 2},
		{"unknown preset", []string{"run", "--preset", "no-such-box"}, 2},
		{"missing preset", []string{"run", "--workload", "hog:n=1"}, 2},
		{"unknown knob", small("--set", "SIS_FOO=1"), 2},
		{"bad knob value", small("--set", "SIS_CORE=maybe"), 2},
		{"unknown workload key", small("--workload", "hog:zz=1"), 2},
		{"unknown workload kind", small("--workload", "bogus:n=1"), 2},
		{"bad duration", small("--duration", "0s"), 2},
		{"bad runs", small("--runs", "1000"), 2},
		{"bad format", small("--format", "xml"), 2},
		{"trace with runs", small("--runs", "2", "--trace", filepath.Join(t.TempDir(), "t.json")), 2},
		{"limit found while building: one workload", small("--workload", "hackbench:g=1000,f=40"), 2},
		{"limit found while building: workloads together", append(small(), strings.Fields(strings.Repeat("--workload hog:n=8192 ", 9))...), 2},
		{"positional argument", []string{"presets", "extra"}, 2},
		{"unknown reproduce target", []string{"reproduce", "V99"}, 2},
		{"compare: unknown knob in an arm", []string{"compare", smallRun, "--workload", "hog:n=1", "--b", "NOPE=1"}, 2},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, c.args...)
		if code != c.code {
			t.Errorf("%s: %v: exit %d, want %d (stderr %q)", c.name, c.args, code, c.code, errOut)
		}
		if c.code != 0 && !strings.HasPrefix(errOut, "schedsim") && !strings.HasPrefix(errOut, "usage") {
			t.Errorf("%s: stderr does not start with schedsim: %q", c.name, errOut)
		}
	}
}

// A failed run — here writing the result fails — exits 1.
func TestFailedRunExitsOne(t *testing.T) {
	var errb bytes.Buffer
	code := run(small(), failWriter{}, &errb)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1 (stderr %q)", code, errb.String())
	}
	if !strings.Contains(errb.String(), "stdout") {
		t.Errorf("stderr %q does not say what failed", errb.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// reproduce exits 1 for a failing check and 0 for a known_fail one.
func TestReproduceExitStatus(t *testing.T) {
	defer func(f func(*presets.Experiment, presets.Size, func(string)) (*experiment.Outcome, error)) {
		runExperiment = f
	}(runExperiment)
	for _, c := range []struct {
		pass      bool
		knownFail string
		code      int
	}{{true, "", 0}, {false, "", 1}, {false, "diagnosed elsewhere", 0}} {
		runExperiment = func(e *presets.Experiment, _ presets.Size, _ func(string)) (*experiment.Outcome, error) {
			o := &experiment.Outcome{Name: e.Name, Target: e.Target, Title: e.Title, Pass: c.pass, KnownFail: c.knownFail,
				Checks: []experiment.CheckOut{{Rule: "a rule", Pass: c.pass}}}
			return o, nil
		}
		out, errOut, code := runCLI(t, "reproduce", "V1")
		if code != c.code {
			t.Errorf("pass=%v known_fail=%q: exit %d, want %d (stderr %q)", c.pass, c.knownFail, code, c.code, errOut)
		}
		if !strings.Contains(out, "V1") {
			t.Errorf("reproduce printed no outcome: %q", out)
		}
	}
}

// A panic is an internal error: exit 3, with the command line that
// reproduces it, quoted for a shell.
func TestPanicExitsThreeWithReproducingCommandLine(t *testing.T) {
	defer func() { testHook = nil }()
	testHook = func(verb string) {
		if verb == "run" {
			panic("boom")
		}
	}
	_, errOut, code := runCLI(t, "run", "--preset", "p4-ht-1c-2t", "--workload", "hog:n=1,cpus=0", "--set", "SIS_CORE=false", "--out", "my file.json")
	if code != exitInternal {
		t.Fatalf("exit %d, want 3 (stderr %q)", code, errOut)
	}
	want := "schedsim: internal error: boom; reproduce with: schedsim run --preset p4-ht-1c-2t --workload hog:n=1,cpus=0 --set SIS_CORE=false --out 'my file.json'\n"
	if !strings.HasPrefix(errOut, want) {
		t.Fatalf("stderr:\n%s\nwant it to start with:\n%s", errOut, want)
	}
	if !strings.Contains(errOut, "goroutine") {
		t.Errorf("no stack in %q", errOut)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"": "''", "plain-1.json": "plain-1.json", "a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// -h and --help print usage on stdout and exit 0, globally and per verb
// (before the fix: "flag: help requested", exit 1).
func TestHelpGoesToStdoutAndExitsZero(t *testing.T) {
	var cases [][]string
	for _, h := range []string{"-h", "--help", "-help", "help"} {
		cases = append(cases, []string{h})
	}
	for _, v := range verbNames {
		cases = append(cases, []string{v, "-h"}, []string{v, "--help"}, []string{"help", v})
	}
	cases = append(cases, []string{"run", "--preset", "x", "-h"})
	for _, args := range cases {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: schedsim") {
			t.Errorf("%v: exit %d, stderr %q, stdout %.60q", args, code, errOut, out)
		}
		if strings.Contains(out+errOut, "help requested") {
			t.Errorf("%v: prints the flag package's error: %q", args, out+errOut)
		}
	}
	out, _, _ := runCLI(t, "run", "-h")
	for _, want := range []string{"--out FILE", "--force", "--trace FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("run -h lacks %q", want)
		}
	}
}

// Every flag's placeholder is a deliberate upper-case word (Go's flag
// package takes the first back-quoted word of a usage string; the old
// "(see `schedsim presets`)" made the help read "-preset schedsim presets").
func TestFlagPlaceholders(t *testing.T) {
	var rf runFlags
	var a, b, format string
	var pf reproduceFlags
	sets := []*flag.FlagSet{runFlagSet(&rf), compareFlagSet(&runFlags{}, &a, &b), knobsFlagSet(&format, new(string)), reproduceFlagSet(&pf), sweepFlagSet(&sweepFlags{})}
	placeholder := regexp.MustCompile(`^[A-Z]([A-Z_=,]*[A-Z])?$`)
	for _, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			if strings.Contains(usage, "`") {
				t.Errorf("%s --%s: usage keeps a back-quote: %q", fs.Name(), f.Name, usage)
			}
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				if name != "" {
					t.Errorf("%s --%s: boolean flag with placeholder %q", fs.Name(), f.Name, name)
				}
				return
			}
			if !placeholder.MatchString(name) {
				t.Errorf("%s --%s: placeholder %q is not an upper-case word", fs.Name(), f.Name, name)
			}
		})
	}
	out, _, _ := runCLI(t, "run", "-h")
	for _, want := range []string{"  --preset NAME\n", "  --machine-file FILE\n", "  --workload SPEC\n", "  --set KNOB=VALUE\n", "  --duration TIME\n", "  --format FORMAT\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("run -h lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--preset schedsim") || strings.Contains(out, "-preset schedsim") {
		t.Errorf("glitched placeholder still there:\n%s", out)
	}
}

// Every error message names the flag (or key) at fault.
func TestErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want []string
	}{
		{small("--bogus"), []string{"-bogus"}},
		{small("--seed", "x"), []string{"-seed", `"x"`}},
		{[]string{"run", "--preset"}, []string{"-preset"}},
		{small("--duration", "0s"), []string{"--duration", "0s"}},
		{small("--runs", "0"), []string{"--runs", "0"}},
		{small("--format", "xml"), []string{"--format", "xml"}},
		{[]string{"knobs", "--format", "x"}, []string{"--format"}},
		{[]string{"run", "--preset", "no-such-box"}, []string{"--preset", "no-such-box"}},
		{[]string{"run", "--workload", "hog:n=1"}, []string{"--preset"}},
		{small("--set", "SIS_FOO=1"), []string{"--set", "SIS_FOO"}},
		{small("--set", "SIS_CORE"), []string{"--set", "SIS_CORE"}},
		{small("--set", "probe_ns=-5"), []string{"--set", "probe_ns", "-5"}},
		{small("--workload", "hog:zz=1"), []string{"--workload", `"zz"`}},
		{small("--workload", "hog:n=zero"), []string{"--workload", "n", "zero"}},
		{small("--workload", "hog:cpus=0-9"), []string{"--workload", "cpus"}},
		{small("--workload", "hackbench:g=1000,f=40"), []string{"--workload", "hackbench:g=1000,f=40", "limit"}},
		{append(small(), strings.Fields(strings.Repeat("--workload hog:n=8192 ", 9))...), []string{"--workload", "too many tasks"}},
		{append(small(), strings.Fields(strings.Repeat("--workload hog:n=1 ", 17))...), []string{"--workload", "18", "16"}},
		{small("--workload", "rtapp:file="+filepath.Join(dir, "none.json")), []string{"--workload", "none.json"}},
		{[]string{"run", "--machine-file", filepath.Join(dir, "none.json")}, []string{"--machine-file", "none.json"}},
		{small("--runs", "2", "--trace", "x.json"), []string{"--trace", "--runs"}},
		{[]string{"compare", smallRun, "--workload", "hog:n=1", "--a", "NOPE=1"}, []string{"--a", "NOPE"}},
		{[]string{"compare", smallRun, "--workload", "hog:n=1", "--b", "SIS_CORE=2"}, []string{"--b", "SIS_CORE"}},
		{[]string{"reproduce", "V99"}, []string{"TARGET", "V99"}},
		{[]string{"presets", "extra"}, []string{"extra"}},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not name %q", c.args, errOut, w)
			}
		}
	}
}

// The byte offset of a --machine-file syntax error points at the byte at
// fault, counted in the file as given (a BOM included).
func TestMachineFileSyntaxErrorOffset(t *testing.T) {
	dir := t.TempDir()
	intel, err := os.ReadFile("../../presets/machines/intel-2s-44c-88t.json")
	if err != nil {
		t.Fatal(err)
	}
	good := string(intel)
	byteAt := regexp.MustCompile(`near byte (\d+)`)
	cases := []struct {
		name string
		text string
		bad  string // the text at the reported offset
	}{
		{"double comma", strings.Replace(good, `"sockets": 2,`, `"sockets": 2,,`, 1), ","},
		{"missing comma", strings.Replace(good, `"sockets": 2,`, `"sockets": 2 `, 1), `"`},
		{"bad literal", strings.Replace(good, `"sockets": 2,`, `"sockets": tru,`, 1), ","},
		{"stray character", strings.Replace(good, `"sockets": 2,`, `"sockets": @,`, 1), "@"},
		{"control character in a string", strings.Replace(good, `"name": "intel-2s-44c-88t"`, "\"name\": \"intel\x01\"", 1), "\x01"},
		{"unclosed object at the end", strings.TrimRight(good, "}\n \t"), "<end>"},
		{"trailing comma in an array", strings.Replace(good, "1.15\n  ],", "1.15,\n  ],", 1), "]"},
		{"with a BOM", "\xef\xbb\xbf" + strings.Replace(good, `"sockets": 2,`, `"sockets": 2,,`, 1), ","},
	}
	for _, c := range cases {
		if c.text == good || (strings.HasPrefix(c.text, "\xef") && c.text[3:] == good) {
			t.Fatalf("%s: the mutation did not apply; update the test", c.name)
		}
		path := filepath.Join(dir, "m.json")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCLI(t, "run", "--machine-file", path, "--workload", "hog:n=1", "--duration", "1ms")
		if code != exitUsage || !strings.Contains(errOut, "--machine-file") {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, errOut)
			continue
		}
		m := byteAt.FindStringSubmatch(errOut)
		if m == nil {
			t.Errorf("%s: no byte offset in %q", c.name, errOut)
			continue
		}
		off, _ := strconv.Atoi(m[1])
		if c.bad == "<end>" {
			if off != len(c.text) {
				t.Errorf("%s: offset %d, want the end of the file %d (stderr %q)", c.name, off, len(c.text), errOut)
			}
			continue
		}
		if off >= len(c.text) || !strings.HasPrefix(c.text[off:], c.bad) {
			t.Errorf("%s: offset %d points at %q, want %q (stderr %q)", c.name, off, c.text[off:min(off+10, len(c.text))], c.bad, errOut)
		}
	}
}

// writeMachineFile writes a copy of a small preset as a --machine-file.
func writeMachineFile(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile("../../presets/machines/p4-ht-1c-2t.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "box.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const rtappFile = `{"tasks": {"t": {"loop": 3, "run": 100, "sleep": 50}}}`

// No output may overwrite an input of the run, however it is reached,
// even with --force; the input is left as it was.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	machineFile := writeMachineFile(t, dir)
	rt := filepath.Join(dir, "app.json")
	os.WriteFile(rt, []byte(rtappFile), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(machineFile, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(rt, hard); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--machine-file", machineFile, "--workload", "rtapp:file=" + rt, "--duration", "10ms"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--trace", machineFile}, "--machine-file"},
		{[]string{"--out", machineFile, "--force"}, "--machine-file"},
		{[]string{"--trace", link, "--force"}, "--machine-file"},
		{[]string{"--out", filepath.Join(dir, ".", "box.json"), "--force"}, "--machine-file"},
		{[]string{"--out", rt, "--force"}, "--workload"},
		{[]string{"--trace", hard, "--force"}, "--workload"},
	} {
		before := snapshot(t, dir)
		_, errOut, code := runCLI(t, append(append([]string(nil), base...), c.extra...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "input") {
			t.Errorf("%v: exit %d, stderr %q", c.extra, code, errOut)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%v: the directory changed:\n%s\n->\n%s", c.extra, before, after)
		}
	}
	// The preset named as a path (--preset box.json) is an input too.
	_, errOut, code := runCLI(t, "run", "--preset", machineFile, "--workload", "hog:n=1", "--duration", "1ms", "--out", machineFile, "--force")
	if code != exitUsage || !strings.Contains(errOut, "--preset") {
		t.Errorf("--preset FILE as --out: exit %d, stderr %q", code, errOut)
	}
}

// An existing output is refused without --force and replaced with it; a
// symbolic link is refused either way; outputs are renamed into place,
// leaving no temporary files.
func TestExistingOutputsAndForce(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	tr := filepath.Join(dir, "trace.json")
	os.WriteFile(out, []byte("old result\n"), 0o640)

	_, errOut, code := runCLI(t, small("--format", "json", "--out", out)...)
	if code != exitUsage || !strings.Contains(errOut, "--out") || !strings.Contains(errOut, "--force") {
		t.Fatalf("existing --out: exit %d, stderr %q", code, errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "old result\n" {
		t.Fatalf("refused output was changed: %q", b)
	}
	if _, err := os.Stat(tr); err == nil {
		t.Fatalf("the trace was written although --out was refused")
	}

	stdout, errOut, code := runCLI(t, small("--format", "json", "--out", out, "--trace", tr, "--force")...)
	if code != 0 || stdout != "" {
		t.Fatalf("--force: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	for _, p := range []string{out, tr} {
		b, err := os.ReadFile(p)
		if err != nil || !stdjson.Valid(b) {
			t.Fatalf("%s not valid JSON after --force: %v %.80q", p, err, b)
		}
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file's mode %v, want the old 0640", st.Mode().Perm())
	}
	assertOnly(t, dir, "out.json", "trace.json")

	// The same with the trace already there.
	_, errOut, code = runCLI(t, small("--trace", tr)...)
	if code != exitUsage || !strings.Contains(errOut, "--trace") {
		t.Errorf("existing --trace: exit %d, stderr %q", code, errOut)
	}

	// A symbolic link is refused, with --force too (replacing it could
	// clobber a system link such as /dev/stdout); nothing changes.
	target := filepath.Join(dir, "target.txt")
	os.WriteFile(target, []byte("keep me"), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink(target, link)
	for _, extra := range [][]string{{"--out", link}, {"--out", link, "--force"}, {"--trace", link, "--force"}} {
		_, errOut, code = runCLI(t, small(extra...)...)
		if code != exitUsage || !strings.Contains(errOut, "symbolic link") || !strings.Contains(errOut, "target.txt") {
			t.Errorf("symlink %v: exit %d, stderr %q", extra, code, errOut)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", st.Mode())
	}

	// Other refusals: a directory, a missing directory, one file twice.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--out", sub, "--force"}, "directory"},
		{[]string{"--out", os.DevNull, "--force"}, "not a regular file"},
		{[]string{"--trace", filepath.Join(dir, "nope", "t.json")}, "nope"},
		{[]string{"--trace", filepath.Join(dir, "same.json"), "--out", filepath.Join(dir, ".", "same.json")}, "same file"},
	} {
		_, errOut, code := runCLI(t, small(c.extra...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.extra, code, errOut)
		}
	}
	assertOnly(t, dir, "out.json", "trace.json", "target.txt", "link.json", "sub")
}

// --out works for --runs N and for compare, renamed into place.
func TestRunManyAndCompareWriteOutFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "runs.json")
	if _, errOut, code := runCLI(t, small("--runs", "2", "--format", "json", "--out", out)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cmp := filepath.Join(dir, "cmp.json")
	if _, errOut, code := runCLI(t, "compare", smallRun, "--workload", "schbench:m=1,t=2", "--duration", "20ms", "--runs", "2",
		"--b", "SIS_CORE=false", "--format", "json", "--out", cmp); code != 0 {
		t.Fatalf("compare exit %d: %s", code, errOut)
	}
	for _, p := range []string{out, cmp} {
		if b, err := os.ReadFile(p); err != nil || !stdjson.Valid(b) {
			t.Errorf("%s: %v %.80q", p, err, b)
		}
	}
	assertOnly(t, dir, "runs.json", "cmp.json")
}

// An interrupted single run leaves valid files that say they were cut
// short; interrupted multi-runs leave no file at all. (The real signal is
// tested on a process in process_test.go.)
func TestInterruptedRunLeavesValidTruncatedFilesOrNone(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, out := filepath.Join(dir, "t.json"), filepath.Join(dir, "o.json")
	var stdout, stderr bytes.Buffer
	args := []string{"run", smallRun, "--workload", "schbench:m=1,t=2", "--duration", "1h", "--trace", tr, "--out", out, "--format", "json"}
	code := runContext(ctx, args, &stdout, &stderr)
	if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	checkTruncated(t, tr, out)
	assertOnly(t, dir, "t.json", "o.json")

	// Text output says so too.
	stdout.Reset()
	stderr.Reset()
	code = runContext(ctx, small("--duration", "1h"), &stdout, &stderr)
	if code != exitInterrupted || !strings.HasPrefix(stdout.String(), "truncated: interrupted at") {
		t.Errorf("text: exit %d, stdout %.80q", code, stdout.String())
	}

	for _, args := range [][]string{
		small("--runs", "3", "--duration", "1h", "--out", filepath.Join(dir, "runs.json")),
		{"compare", smallRun, "--workload", "hog:n=1", "--duration", "1h", "--runs", "2", "--out", filepath.Join(dir, "cmp.json")},
	} {
		stdout.Reset()
		stderr.Reset()
		code := runContext(ctx, args, &stdout, &stderr)
		if code != exitInterrupted || !strings.Contains(stderr.String(), "no output written") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	assertOnly(t, dir, "t.json", "o.json")
}

// checkTruncated checks an interrupted run's trace and JSON result.
func checkTruncated(t *testing.T, tracePath, outPath string) {
	t.Helper()
	b, err := os.ReadFile(tracePath)
	if err != nil || !stdjson.Valid(b) {
		t.Fatalf("trace: %v, valid JSON %v", err, stdjson.Valid(b))
	}
	var tr struct {
		TraceEvents []any `json:"traceEvents"`
		Metadata    struct {
			Truncated      bool     `json:"truncated"`
			InterruptedAtS *float64 `json:"interrupted_at_s"`
		} `json:"metadata"`
	}
	if err := stdjson.Unmarshal(b, &tr); err != nil || !tr.Metadata.Truncated || tr.Metadata.InterruptedAtS == nil || len(tr.TraceEvents) == 0 {
		t.Fatalf("trace metadata: %v %+v", err, tr.Metadata)
	}
	b, err = os.ReadFile(outPath)
	if err != nil || !stdjson.Valid(b) {
		t.Fatalf("--out: %v, valid JSON %v", err, stdjson.Valid(b))
	}
	var res struct {
		Truncated      bool     `json:"truncated"`
		InterruptedAtS *float64 `json:"interrupted_at_s"`
		DurationS      float64  `json:"duration_s"`
		Workloads      []any    `json:"workloads"`
	}
	if err := stdjson.Unmarshal(b, &res); err != nil || !res.Truncated || res.InterruptedAtS == nil || *res.InterruptedAtS != res.DurationS || len(res.Workloads) == 0 {
		t.Fatalf("--out: %v %+v", err, res)
	}
	if *res.InterruptedAtS >= 3600 {
		t.Fatalf("interrupted at %v s, the full duration", *res.InterruptedAtS)
	}
}

// An uninterrupted run has no truncation fields.
func TestCompleteRunHasNoTruncationFields(t *testing.T) {
	out, _, code := runCLI(t, small("--format", "json")...)
	if code != 0 || strings.Contains(out, "truncated") || strings.Contains(out, "interrupted_at_s") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// Task names with control characters, quotes, backslashes and invalid
// UTF-8 (an rt-app file names its tasks) give valid JSON everywhere
// (before the fix the trace used %q, which is not JSON escaping).
func TestHostileTaskNamesGiveValidJSON(t *testing.T) {
	dir := t.TempDir()
	names := []string{"ctl\x01\x1f\x7f", `quote"back\slash`, "nl\nbell\a", "bad\xff\xfeutf8", "sep\u2028<script>"}
	var app bytes.Buffer
	app.WriteString(`{"tasks": {`)
	for i, n := range names {
		if i > 0 {
			app.WriteString(", ")
		}
		q, _ := stdjson.Marshal(n)
		if !utf8.ValidString(n) {
			q = []byte(`"` + n + `"`) // raw invalid bytes in the file
		}
		fmt.Fprintf(&app, `%s: {"loop": 4, "run": 200, "sleep": 100}`, q)
	}
	app.WriteString(`}}`)
	rt := filepath.Join(dir, "app.json")
	os.WriteFile(rt, app.Bytes(), 0o644)
	tr, out := filepath.Join(dir, "t.json"), filepath.Join(dir, "o.json")
	_, errOut, code := runCLI(t, "run", smallRun, "--workload", "rtapp:file="+rt, "--duration", "20ms", "--trace", tr, "--format", "json", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range []string{tr, out} {
		b, _ := os.ReadFile(p)
		if !stdjson.Valid(b) {
			t.Fatalf("%s is not valid JSON", p)
		}
	}
	b, _ := os.ReadFile(tr)
	var doc struct {
		TraceEvents []struct {
			Ph   string `json:"ph"`
			Name string `json:"name"`
		} `json:"traceEvents"`
	}
	if err := stdjson.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			seen[e.Name] = true
		}
	}
	for _, n := range names {
		if !utf8.ValidString(n) {
			n = strings.ToValidUTF8(n, "\ufffd\ufffd")
		}
		if !seen[n] {
			t.Errorf("no slice named %q (have %v)", n, seen)
		}
	}
}

// snapshot lists a directory's entries with their sizes and link targets.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		info, _ := e.Info()
		fmt.Fprintf(&b, "%s %v %d", e.Name(), info.Mode(), info.Size())
		if info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
			b.WriteString(" -> " + target)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// assertOnly fails unless dir holds exactly the named entries (no
// temporary files left behind).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ok := len(got) == len(names)
	for _, g := range got {
		ok = ok && want[g]
	}
	if !ok {
		t.Errorf("%s holds %q, want exactly %q", dir, got, names)
	}
}
