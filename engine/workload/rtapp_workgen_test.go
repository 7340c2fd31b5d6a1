package workload

import (
	"strings"
	"testing"
)

// TestRTAppWorkgenSuspend: a bare "suspend" key (rt-app's video-*.json
// write it so; workgen gives it a value) loads as a suspend event, before
// a comma or the closing brace; a string elsewhere is left alone.
func TestRTAppWorkgenSuspend(t *testing.T) {
	src := `{
	"tasks" : {
		"a" : { "loop" : 2, "suspend", "run" : 10 },
		"b" : { "loop" : 2, "run" : 10, "resume" : "a", "suspend2" },
		"c" : { "loop" : 1, "run" : 5, "resume" : "b" }
	}
}`
	app, err := ParseRTApp([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "suspend,run", "b": "run,resume,suspend", "c": "run,resume"}
	for _, task := range app.Tasks {
		var kinds []string
		for _, e := range task.Phases[0].Events {
			kinds = append(kinds, e.Kind)
		}
		if got := strings.Join(kinds, ","); got != want[task.Name] {
			t.Errorf("task %s: events %s, want %s", task.Name, got, want[task.Name])
		}
	}
	// Values, array elements and keys with a value are left alone.
	for _, in := range []string{`{"x": "suspend", "y": ["suspend", "suspend"], "suspend": 1}`, `["suspend"]`} {
		if out, ins := workgenFill([]byte(in)); string(out) != in || ins != nil {
			t.Errorf("%s: filled to %s", in, out)
		}
	}
	// The spec carries it compacted (strict JSON), and builds.
	if sp := RTAppSpec([]byte(src)); len(sp) > 600 {
		t.Errorf("the spec was not compacted: %d bytes", len(sp))
	}
	if err := Check(RTAppSpec([]byte(src)), 4); err != nil {
		t.Fatal(err)
	}
}

// TestRTAppWorkgenPositions: an error after an inserted value still gives
// the file's line and column.
func TestRTAppWorkgenPositions(t *testing.T) {
	src := "{\"tasks\": {\"t\": {\"suspend\", \"suspend\", \"run\": x}}}"
	_, err := ParseRTApp([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "line 1, column 47") {
		t.Fatalf("got %v, want the error at line 1, column 47 (the x)", err)
	}
	src = "{\"tasks\": {\"t\": {\"suspend\",\n  \"run\": 1, \"bogus\": 2}}}"
	_, err = ParseRTApp([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "line 2, column 13") {
		t.Fatalf("got %v, want the error at line 2, column 13", err)
	}
}

// TestRTAppWorkgenUnique: a task or phase given twice is two, renamed as
// workgen renames (the object's counter, from 1, to the first key not yet
// used).
func TestRTAppWorkgenUnique(t *testing.T) {
	got := func(fields []jField) string {
		var keys []string
		for _, f := range workgenUnique(fields) {
			keys = append(keys, f.key)
		}
		return strings.Join(keys, ",")
	}
	fs := func(keys ...string) []jField {
		var out []jField
		for _, k := range keys {
			out = append(out, jField{key: k})
		}
		return out
	}
	for _, c := range []struct{ in, want string }{
		{"run,sleep,run,sleep,run", "run,sleep,run1,sleep1,run2"},
		{"run,run,run1", "run,run1,run11"},
		{"heavy1,light,heavy1", "heavy1,light,heavy11"},
		{"a,b", "a,b"},
	} {
		if g := got(fs(strings.Split(c.in, ",")...)); g != c.want {
			t.Errorf("%s: got %s, want %s", c.in, g, c.want)
		}
	}
	app, err := ParseRTApp([]byte(`{"tasks": {
		"t": {"phases": {"p": {"run": 1}, "q": {"run": 2}, "p": {"run": 3}}},
		"t": {"run": 4}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Tasks) != 2 || app.Tasks[1].Name != "t1" {
		t.Fatalf("tasks %+v, want t and t1", app.Tasks)
	}
	var phases []string
	for _, p := range app.Tasks[0].Phases {
		phases = append(phases, p.Name)
	}
	if strings.Join(phases, ",") != "p,q,p1" {
		t.Errorf("phases %v, want p,q,p1", phases)
	}
}
