package playground

import (
	"fmt"
	"os"
	"path/filepath"
	"schedplay/engine/workload"
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

// Several files given at once: the rt-app ones are merged into one
// workload in name order (the later file's task replaces the earlier's),
// a trace stays its own workload, and an error names the merged files.
func TestWorkloadsFromFiles(t *testing.T) {
	trace := []byte(`{"format": "schedplay-trace-workload", "version": 1, "tasks": [{"name": "a", "ops": [["run", 1000], ["sleep", 1000], ["run", 1000]]}]}`)
	files := []NamedFile{
		{"thread1.json", []byte(`{"tasks": {"t1": {"run": 500, "sleep": 500}, "t0": {"run": 7, "sleep": 7}}}`)},
		{"trace.json", trace},
		{"global.json", []byte(`{"global": {"duration": 1}}`)},
		{"thread0.json", []byte(`{"tasks": {"t0": {"run": 1000, "sleep": 1000},}}`)},
	}
	specs, err := WorkloadsFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || !strings.HasPrefix(specs[0], "trace:b64=") || !strings.HasPrefix(specs[1], "rtapp:b64=") {
		t.Fatalf("specs %.60q, want a trace and one merged rt-app workload", specs)
	}
	app, err := workload.ParseRTAppSpec(specs[1])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range app.Tasks {
		got = append(got, fmt.Sprintf("%s:%d", task.Name, task.Phases[0].Events[0].NS/1000))
	}
	// thread0.json (t0) comes before thread1.json, whose t0 replaces it
	// in place.
	if strings.Join(got, " ") != "t0:7 t1:500" {
		t.Errorf("merged tasks %v, want t0 (thread1.json's) then t1", got)
	}
	st := Base()
	st.Workloads = specs
	if err := st.Validate(); err != nil {
		t.Fatalf("the specs do not validate: %v", err)
	}
	files[0].Data = []byte(`{"tasks": {"t1": {"run": }}}`)
	if _, err := WorkloadsFromFiles(files); err == nil || !strings.Contains(err.Error(), "thread1.json") || !strings.Contains(err.Error(), "global.json, thread0.json, thread1.json") {
		t.Errorf("a bad file among several: %v", err)
	}
}
