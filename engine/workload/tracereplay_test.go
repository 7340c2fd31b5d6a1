package workload

import (
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
)

const traceHead = `{"format": "schedplay-trace-workload", "version": 1, "duration_ns": 1000000, "tasks": `

func TestTraceFileRefusals(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"format": "x", "version": 1, "tasks": []}`, `"format" is "x"`},
		{`{"format": "schedplay-trace-workload", "version": 2, "tasks": []}`, `version 2 is not supported`},
		{traceHead + `[]}`, `no tasks`},
		{traceHead + `[{"name": "a", "ops": [["jump", 1]]}]}`, `unknown op "jump"`},
		{traceHead + `[{"name": "a", "ops": [["run", -5]]}]}`, `-5 ns out of range`},
		{traceHead + `[{"name": "a", "ops": [["run"]]}]}`, `op run takes 2 element(s), got 1`},
		{traceHead + `[{"name": "a", "ops": [["wake", 0]]}]}`, `task 0 ("a"), op 0: wake names the task itself`},
		{traceHead + `[{"name": "a", "ops": [["wake", 3]]}]}`, `wake names task 3, but there are 1 tasks`},
		{traceHead + `[{"name": "a", "ops": [["wake", 1, "async"]]}, {"name": "b", "ops": []}]}`, `may only be "sync"`},
		{traceHead + `[{"name": "a", "ops": [["wait", 1]]}, {"name": "b", "ops": []}]}`, `waits 1 times for task 1 ("b"), which wakes it only 0 times`},
		{traceHead + `[{"name": "a", "ops": []}, {"name": "b", "parent": 0, "ops": []}]}`, `has parent 0, but no op of task 0 forks it`},
		{traceHead + `[{"name": "a", "ops": [["fork", 1]]}, {"name": "b", "ops": []}]}`, `fork of task 1, whose "parent" is not 0`},
		{traceHead + `[{"name": "a", "ops": [["exit"], ["run", 5]]}]}`, `exit must be the task's last op`},
		{traceHead + `[{"name": "a", "nice": 30, "ops": []}]}`, `nice 30 out of range`},
		{traceHead + `[{"name": "a", "colour": 3, "ops": []}]}`, `unknown field "colour"`},
		{traceHead + "[\n{\"name\": \"a\",\n \"ops\": 7}]}", `line 3`},
	} {
		_, err := ParseTraceFile([]byte(c.js))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n error %v\n want %q", c.js, err, c.want)
		}
	}
}

// A replay: a wakes b (b waits for it), b forks c, c wakes a; a wake that
// comes before its wait is kept, so the wait returns at once.
func TestTraceReplayWakesAndForks(t *testing.T) {
	js := traceHead + `[
	 {"name": "a", "ops": [["run", 100000], ["wake", 1, "sync"], ["wait", 2], ["run", 5000]]},
	 {"name": "b", "ops": [["wait", 0], ["run", 20000], ["fork", 2], ["run", 300000], ["wait", 2], ["exit"]]},
	 {"name": "c", "parent": 1, "ops": [["run", 10000], ["wake", 0], ["sleep", 50000], ["wake", 1]]}]}`
	s, err := engine.New(engine.Config{Machine: small(t, 1, 4, 1, 4, "contiguous"), Knobs: knob.Defaults(), Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	var woken [][2]string
	s.SetHooks(engine.Hooks{OnWakeup: func(d *engine.Decision) {
		if d.Waker >= 0 {
			woken = append(woken, [2]string{s.Task(d.Waker).Name, s.Task(d.Task).Name})
		}
	}})
	if _, err := Add(s, TraceSpec([]byte(js)), ""); err != nil {
		t.Fatal(err)
	}
	rtRunToFinish(t, s, engine.Second)
	want := [][2]string{{"a", "b"}, {"c", "a"}}
	if len(woken) != len(want) || woken[0] != want[0] || woken[1] != want[1] {
		t.Errorf("wakeups %v, want %v (c's wake of b comes before b waits: kept, no wakeup)", woken, want)
	}
	for i := 0; i < 3; i++ {
		if st := s.Task(engine.TaskID(i)).State(); st != engine.TaskExited {
			t.Errorf("task %d is %v at the end, want exited", i, st)
		}
	}
}

func TestTraceSpecCarriesTheFile(t *testing.T) {
	js := traceHead + `[{"name": "a", "ops": [["run", 1000]]}]}`
	spec := TraceSpec([]byte(js))
	f, err := ParseTraceSpec(spec)
	if err != nil || len(f.Tasks) != 1 || f.Tasks[0].Ops[0].NS != 1000 {
		t.Fatalf("ParseTraceSpec: %v %+v", err, f)
	}
	if err := Check(spec+",nice=3", 4); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := Check("trace:b64=!!!", 4); err == nil || !strings.Contains(err.Error(), "not valid base64url") {
		t.Errorf("bad base64: %v", err)
	}
}
