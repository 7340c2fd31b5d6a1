package workload

import (
	"strings"
	"testing"
)

// TestRTAppMerge: a global file and task files merge as rt-app's
// merge.py merges them; a task named again in a later file replaces the
// earlier; errors name the file, line and column.
func TestRTAppMerge(t *testing.T) {
	global := RTAppFile{"global.json", []byte(`{"global": {"duration": 2, "default_policy": "SCHED_OTHER"}}`)}
	a := RTAppFile{"a.json", []byte("{\"tasks\": {\n \"a\": {\"run\": 10, \"sleep\": 10},\n \"b\": {\"run\": 1}}}")}
	b := RTAppFile{"b.json", []byte(`{"resources": {"m": {"type": "mutex"}}, "tasks": {"b": {"run": 5, "suspend",}, "c": {"run": 3, "resume": "b"}}}`)}
	app, merged, err := ParseRTAppFiles([]RTAppFile{global, a, b})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, task := range app.Tasks {
		names = append(names, task.Name)
	}
	if strings.Join(names, ",") != "a,b,c" || app.Duration == 0 {
		t.Fatalf("tasks %v, duration %d; want a,b,c and the global file's duration", names, app.Duration)
	}
	if ev := app.Tasks[1].Phases[0].Events; len(ev) != 2 || ev[1].Kind != "suspend" {
		t.Errorf("task b is not b.json's: %+v", ev)
	}
	// The merged JSON is strict and parses to the same.
	again, err := ParseRTApp(merged)
	if err != nil || len(again.Tasks) != 3 {
		t.Fatalf("the merged JSON: %v (%s)", err, merged)
	}
	spec, err := RTAppFilesSpec([]RTAppFile{global, a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(spec, 4); err != nil {
		t.Fatal(err)
	}
	// Errors: a bad file's JSON, and a bad task, each at its file's line.
	bad := RTAppFile{"bad.json", []byte("{\"tasks\": {\n \"d\": {\"run\": x}}}")}
	if _, _, err := ParseRTAppFiles([]RTAppFile{global, bad}); err == nil || !strings.Contains(err.Error(), "bad.json: rtapp: bad JSON at line 2, column 15") {
		t.Errorf("got %v", err)
	}
	bad = RTAppFile{"bad.json", []byte("{\"tasks\": {\n \"d\": {\"run\": 1, \"bogus\": 2}}}")}
	if _, _, err := ParseRTAppFiles([]RTAppFile{global, a, bad}); err == nil || !strings.Contains(err.Error(), `task "d" (bad.json, line 2, column 18)`) {
		t.Errorf("got %v", err)
	}
	if _, _, err := ParseRTAppFiles([]RTAppFile{global}); err == nil || !strings.Contains(err.Error(), `no "tasks"`) {
		t.Errorf("got %v", err)
	}
}
