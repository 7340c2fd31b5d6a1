package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"schedplay/presets"
)

// tenLineMachine is the README's "Your machine" example.
const tenLineMachine = `{
  "name": "my-box",
  "kind": "machine",
  "base": "amd-zen4-2s-256c-512t",
  "topology": {
    "sockets": 2,
    "cores_per_socket": 128,
    "threads_per_core": 2
  }
}
`

// A ten-line machine with a base runs and simulates the base: the same
// costs in its knobs and the same results as --preset of the base.
func TestRunMachineFileWithBase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my-box.json")
	if err := os.WriteFile(path, []byte(tenLineMachine), 0o644); err != nil {
		t.Fatal(err)
	}
	w := []string{"--workload", "schbench", "--duration", "100ms", "--format", "json"}
	out, stderr, code := runCLI(t, append([]string{"run", "--machine-file", path}, w...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ref, stderr, code := runCLI(t, append([]string{"run", "--preset", "amd-zen4-2s-256c-512t"}, w...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got, want map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(ref), &want); err != nil {
		t.Fatal(err)
	}
	if got["machine"] != "my-box" {
		t.Errorf("machine %v, want my-box", got["machine"])
	}
	base, _ := presets.Machine("amd-zen4-2s-256c-512t")
	knobs, _ := got["knobs"].(map[string]any)
	for k, v := range base.Costs {
		if knobs[k] != float64(v) {
			t.Errorf("knob %s = %v, want the base's %d", k, knobs[k], v)
		}
	}
	for _, k := range []string{"preset", "machine", "sim_wall_s"} {
		delete(got, k)
		delete(want, k)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the machine with base differs from its base's run")
	}
}

func TestRunMachineFileBaseErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		doc  string
		want []string
	}{
		{`{"name": "b", "kind": "machine", "base": "amd-zen5"}`, []string{"field base", `"amd-zen5"`, "amd-zen4-2s-256c-512t", "intel-2s-44c-88t"}},
		{`{"name": "b", "kind": "machine", "topology": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 1}}`,
			[]string{"field idle_states", "(missing)", `"base": "<preset>"`}},
	} {
		path := filepath.Join(dir, "b.json")
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI(t, "run", "--machine-file", path, "--workload", "hog:n=1", "--duration", "1ms")
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d", c.doc, code, exitUsage)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", c.doc, stderr, w)
			}
		}
	}
}

// A workload that recorded no wakeup-latency sample is named on stderr
// and in the JSON's warnings.
func TestRunWarnsOfWorkloadWithoutSamples(t *testing.T) {
	out, stderr, code := runCLI(t, "run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=16", "--duration", "20ms", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "schedsim: warning: workload schbench recorded no wakeup latency samples") {
		t.Errorf("stderr lacks the warning: %q", stderr)
	}
	var r struct{ Warnings []string }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "workload schbench") {
		t.Errorf("warnings %q", r.Warnings)
	}
	_, stderr, _ = runCLI(t, "run", "--preset", "intel-2s-44c-88t", "--workload", "schbench:m=2,t=16", "--duration", "20ms", "--runs", "2")
	if !strings.Contains(stderr, "schedsim: warning: seed 2: workload schbench") {
		t.Errorf("--runs 2 stderr lacks seed 2's warning: %q", stderr)
	}
}
