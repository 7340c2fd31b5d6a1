package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goldenCase is a testdata/golden file: the arguments of a run, then the
// real tool's output (cited in the file's comment), per stream.
type goldenCase struct {
	args           []string
	stderr, stdout []string
	// empty names a block the simulated tool has no samples for: its
	// header and percentile lines are dropped from the real output
	// (schbench prints such a block as its min/max line alone).
	empty string
}

func readGolden(t *testing.T, path string) goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenCase
	var cur *[]string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "empty: "):
			g.empty = strings.TrimPrefix(line, "empty: ")
		case strings.HasPrefix(line, "args: "):
			g.args = strings.Fields(strings.TrimPrefix(line, "args: "))
		case line == "---- stderr":
			cur = &g.stderr
		case line == "---- stdout":
			cur = &g.stdout
		case cur != nil:
			*cur = append(*cur, line)
		}
	}
	if g.empty != "" {
		var kept []string
		in := false
		for _, l := range g.stderr {
			if strings.HasPrefix(l, g.empty+" percentiles") {
				in = true
				continue
			}
			if in && strings.Contains(l, "th: ") {
				continue
			}
			if in && strings.Contains(l, "min=") {
				l, in = "\t  min=0, max=0", false
			}
			kept = append(kept, l)
		}
		g.stderr = kept
	}
	if !strings.Contains(string(data), "Source:") {
		t.Errorf("%s does not cite its source", path)
	}
	return g
}

var (
	numRE   = regexp.MustCompile(`-?\d+(\.\d+)?`)
	padRE   = regexp.MustCompile(`th: (\S+)( +)\(`)
	unitRE  = regexp.MustCompile(`[KMGTPE]?B/s`)
	spaceRE = regexp.MustCompile(`N +\(`)
)

// shape is a line with its numbers replaced by N (keeping the number of
// decimals: "50.0000th" is N.ddddth, "50.0th" N.dth), the unit of a
// transfer rate by U, and the padding before a "(N samples)" collapsed
// (checked separately by padOK).
func shape(line string) string {
	s := numRE.ReplaceAllStringFunc(line, func(n string) string {
		if i := strings.IndexByte(n, '.'); i >= 0 {
			return "N." + strings.Repeat("d", len(n)-i-1)
		}
		return "N"
	})
	s = unitRE.ReplaceAllString(s, "U/s")
	return spaceRE.ReplaceAllString(s, "N (")
}

// padOK checks schbench's "%-10u (" column: value and padding fill 10,
// then one space.
func padOK(line string) bool {
	m := padRE.FindStringSubmatch(line)
	return m == nil || len(m[1]) >= 10 || len(m[1])+len(m[2]) == 11
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestBenchFormatsGolden runs each golden case and compares its output,
// stream by stream and line by line, with the real tool's output in the
// golden file: same lines, same text, numbers where the tool has numbers
// with as many decimals, same column padding.
func TestBenchFormatsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	if len(files) < 7 {
		t.Fatalf("found %d golden files, want 7", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := readGolden(t, f)
			args := append([]string{"run", "--preset", "intel-2s-44c-88t", "--no-wall-time"}, g.args...)
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			for _, st := range []struct {
				name      string
				got, want []string
			}{{"stderr", splitLines(errb.Bytes()), g.stderr}, {"stdout", splitLines(out.Bytes()), g.stdout}} {
				if len(st.got) != len(st.want) {
					t.Fatalf("%s: %d lines, the real tool prints %d\ngot:\n%s\nreal:\n%s", st.name, len(st.got), len(st.want),
						strings.Join(st.got, "\n"), strings.Join(st.want, "\n"))
				}
				for i := range st.got {
					if shape(st.got[i]) != shape(st.want[i]) {
						t.Errorf("%s line %d:\n got %q\nreal %q", st.name, i+1, st.got[i], st.want[i])
					}
					if !padOK(st.got[i]) || !padOK(st.want[i]) {
						t.Errorf("%s line %d: the value column is not 10 wide: %q / %q", st.name, i+1, st.got[i], st.want[i])
					}
				}
			}
		})
	}
}

// parseSchbench is a harness parser written from schbench's documented
// output (README "Latency percentiles", show_latencies): it reads every
// "NN.Nth: V" line, starred or not, with either decimal count, into a
// map from percentile to value, per block. It knows nothing of schedplay.
func parseSchbench(text string) []map[float64]int64 {
	line := regexp.MustCompile(`^\s*\*?\s*(\d+\.\d+)th:\s+(\d+)`)
	var blocks []map[float64]int64
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "percentiles (") {
			blocks = append(blocks, map[float64]int64{})
			continue
		}
		if m := line.FindStringSubmatch(l); m != nil && len(blocks) > 0 {
			p, _ := strconv.ParseFloat(m[1], 64)
			v, _ := strconv.ParseInt(m[2], 10, 64)
			blocks[len(blocks)-1][p] = v
		}
	}
	return blocks
}

// TestSchbenchHarnessParses: the parser reads the real tool's output and
// schedplay's alike, and finds the p99 schedplay reports in its JSON.
func TestSchbenchHarnessParses(t *testing.T) {
	for _, layout := range []string{"2016", "2019", "2023"} {
		var out, errb bytes.Buffer
		args := []string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=8", "--duration", "500ms",
			"--format", "schbench", "--schbench-layout", layout}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("layout %s: schbench prints its percentiles on stderr; stdout got %q", layout, out.String())
		}
		blocks := parseSchbench(errb.String())
		var js bytes.Buffer
		run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=8", "--duration", "500ms", "--format", "json"}, &js, &bytes.Buffer{})
		m := regexp.MustCompile(`"p99": (\d+)`).FindStringSubmatch(js.String())
		if len(blocks) == 0 || m == nil || strconv.FormatInt(blocks[0][99], 10) != m[1] {
			t.Errorf("layout %s: parsed %v, JSON p99 %v", layout, blocks, m)
		}
	}
}

// TestBenchFormatRefused: a format that does not fit the workloads is a
// usage error that says what it needs.
func TestBenchFormatRefused(t *testing.T) {
	for _, c := range []struct{ wl, format, want string }{
		{"hackbench", "schbench", "needs a schbench workload"},
		{"schbench", "hackbench", "needs a hackbench workload"},
		{"hog", "perf-bench", "hackbench (sched messaging) or pipe (sched pipe)"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", c.wl, "--duration", "10ms", "--format", c.format}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s with %s: exit %d, %q", c.format, c.wl, code, errb.String())
		}
	}
	var errb bytes.Buffer
	if code := run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench", "--schbench-layout", "2020", "--duration", "10ms", "--format", "schbench"}, &bytes.Buffer{}, &errb); code != exitUsage {
		t.Errorf("--schbench-layout 2020: exit %d %s", code, errb.String())
	}
}

// TestSchbenchRunsLabelled: --runs N prints N labelled blocks.
func TestSchbenchRunsLabelled(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=1,t=4", "--duration", "200ms", "--runs", "3", "--seed", "5", "--format", "schbench"}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	for i, seed := range []string{"5", "6", "7"} {
		want := "# run " + strconv.Itoa(i+1) + "/3 seed " + seed + "\nLatency percentiles (usec)\n"
		if !strings.Contains(errb.String(), want) {
			t.Errorf("missing %q in\n%s", want, errb.String())
		}
	}
}
