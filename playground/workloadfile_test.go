package playground

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file picked in the page becomes the spec the CLI's file= makes, and
// that spec runs; a bad file is refused naming it.
func TestWorkloadFromFile(t *testing.T) {
	traces, _ := filepath.Glob("../engine/workload/testdata/rtapp/*.json")
	var trace, rtapp []byte
	for _, f := range traces {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "schedplay-trace-workload") && trace == nil {
			trace = b
		}
		if strings.Contains(string(b), `"tasks"`) && !strings.Contains(string(b), "schedplay-trace-workload") && rtapp == nil {
			rtapp = b
		}
	}
	if trace == nil {
		trace = []byte(`{"format": "schedplay-trace-workload", "version": 1, "tasks": [{"name": "a", "ops": [["run", 1000], ["sleep", 1000], ["run", 1000]]}]}`)
	}
	for _, c := range []struct {
		data   []byte
		prefix string
	}{{trace, "trace:b64="}, {rtapp, "rtapp:b64="}} {
		if c.data == nil {
			t.Fatalf("no %s test file found", c.prefix)
		}
		spec, err := WorkloadFromFile("w.json", c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.prefix, err)
		}
		if !strings.HasPrefix(spec, c.prefix) {
			t.Fatalf("spec %.40q, want prefix %s", spec, c.prefix)
		}
		st := Base()
		st.Workloads = []string{spec}
		if err := st.Validate(); err != nil {
			t.Fatalf("%s spec does not validate: %v", c.prefix, err)
		}
	}
	if _, err := WorkloadFromFile("bad.json", []byte(`{"tasks": 3}`)); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("bad file: %v", err)
	}
}
