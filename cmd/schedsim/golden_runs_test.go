package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateGoldens = flag.Bool("update-goldens", false, "rewrite testdata/runs/*.json from the current engine")

// goldenRun is one line of testdata/runs/cases.txt.
type goldenRun struct {
	name string
	args []string
}

func readGoldenRuns(t *testing.T) []goldenRun {
	t.Helper()
	f, err := os.Open("testdata/runs/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []goldenRun
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if seen[fields[0]] {
			t.Fatalf("cases.txt: %s twice", fields[0])
		}
		seen[fields[0]] = true
		runs = append(runs, goldenRun{fields[0], fields[1:]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestRunGoldens runs every golden case and compares its JSON with the
// checked-in output byte for byte: the engine is deterministic, so any
// difference is a change in what it simulates, intended or not. An
// intended one is committed with its golden diff (make goldens).
func TestRunGoldens(t *testing.T) {
	runs := readGoldenRuns(t)
	if len(runs) < 30 {
		t.Fatalf("%d golden runs, want at least 30", len(runs))
	}
	for _, g := range runs {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run"}, g.args...)
			args = append(args, "--format", "json", "--no-wall-time")
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			path := filepath.Join("testdata", "runs", g.name+".json")
			if *updateGoldens {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (make goldens writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s differs from %s: the simulation changed; if that is intended, run make goldens and commit the diff\n%s",
					g.name, path, firstDiff(want, out.Bytes()))
			}
		})
	}
}

// firstDiff names the first line where two outputs differ.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  golden: " + a + "\n  now:    " + b
		}
	}
	return "(same lines, different bytes)"
}
