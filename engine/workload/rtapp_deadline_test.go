package workload

import (
	"os"
	"strings"
	"testing"

	"schedplay/engine"
)

// Our own rt-app fixtures compile to deadline tasks with rt-app's
// parameters: dl-reclaim, constrained deadlines, and the defaults rt-app
// fills in for a missing dl-period or dl-deadline (the runtime, the
// period) and from the legacy runtime/period/deadline.
func TestRTAppDeadlineFixtures(t *testing.T) {
	ms := engine.Millisecond
	us := engine.Microsecond
	for _, c := range []struct {
		file string
		want map[string]engine.DLParams // by thread; absent: not a deadline task
		fair []string
	}{
		{"testdata/rtapp/deadline_reclaim.json", map[string]engine.DLParams{
			"greedy-0": {Runtime: 4 * ms, Deadline: 40 * ms, Period: 40 * ms, Reclaim: true},
			"greedy-1": {Runtime: 4 * ms, Deadline: 40 * ms, Period: 40 * ms, Reclaim: true},
			"strict":   {Runtime: 5 * ms, Deadline: 10 * ms, Period: 20 * ms},
		}, []string{"fair"}},
		{"testdata/rtapp/deadline_defaults.json", map[string]engine.DLParams{
			"whole":    {Runtime: 2 * ms, Deadline: 2 * ms, Period: 2 * ms},
			"implicit": {Runtime: 2 * ms, Deadline: 10 * ms, Period: 10 * ms},
			"legacy":   {Runtime: 1500 * us, Deadline: 5 * ms, Period: 10 * ms},
		}, nil},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		s := simAtEra(t, "6.6")
		if _, err := Add(s, RTAppSpec(data), ""); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		got := map[string]engine.DLTaskStats{}
		for _, ts := range s.DL().Tasks {
			got[ts.Name] = ts
		}
		for name, w := range c.want {
			g, ok := got[name]
			if !ok {
				t.Errorf("%s: no deadline task %q (got %v)", c.file, name, got)
				continue
			}
			if p := (engine.DLParams{Runtime: g.RuntimeNS, Deadline: g.DeadlineNS, Period: g.PeriodNS, Reclaim: g.Reclaim}); p != w {
				t.Errorf("%s: task %s: %+v, want %+v", c.file, name, p, w)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d deadline tasks, want %d", c.file, len(got), len(c.want))
		}
		for i := 0; i < s.NumTasks(); i++ {
			task := s.Task(engine.TaskID(i))
			_, dl := c.want[task.Name]
			if want := map[bool]engine.Policy{true: engine.PolicyDeadline, false: engine.PolicyNormal}[dl]; task.Policy() != want {
				t.Errorf("%s: task %s policy %v, want %v", c.file, task.Name, task.Policy(), want)
			}
		}
		s.RunUntil(200 * ms)
		for _, ts := range s.DL().Tasks {
			if ts.Jobs == 0 {
				t.Errorf("%s: task %s ended no job in 200 ms", c.file, ts.Name)
			}
		}
	}
}

// The spec's keys and the file's policies together: a task that names no
// policy takes the spec's reservation, one that names its own keeps it,
// and a custom slice on a task the spec makes SCHED_DEADLINE is refused.
func TestRTAppDeadlineSpecPolicy(t *testing.T) {
	file := `{"tasks": {
		"plain": {"run": 1000, "sleep": 9000},
		"own": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 30000, "run": 1000, "sleep": 9000},
		"other": {"policy": "SCHED_OTHER", "run": 1000, "sleep": 9000}
	}}`
	s := simAtEra(t, "6.6")
	if _, err := Add(s, RTAppSpec([]byte(file))+",policy=deadline,dl_runtime_us=1000,dl_period_us=20000,dl_reclaim=1", ""); err != nil {
		t.Fatal(err)
	}
	want := map[string]engine.DLParams{
		"plain": {Runtime: engine.Millisecond, Deadline: 20 * engine.Millisecond, Period: 20 * engine.Millisecond, Reclaim: true},
		"own":   {Runtime: 3 * engine.Millisecond, Deadline: 30 * engine.Millisecond, Period: 30 * engine.Millisecond},
	}
	for _, ts := range s.DL().Tasks {
		if p := (engine.DLParams{Runtime: ts.RuntimeNS, Deadline: ts.DeadlineNS, Period: ts.PeriodNS, Reclaim: ts.Reclaim}); p != want[ts.Name] {
			t.Errorf("task %s: %+v, want %+v", ts.Name, p, want[ts.Name])
		}
		delete(want, ts.Name)
	}
	if len(want) > 0 {
		t.Errorf("not deadline tasks: %v", want)
	}
	sliced := `{"tasks": {"t": {"dl-runtime": 3000, "run": 1000, "sleep": 9000}}}`
	err := Check(RTAppSpec([]byte(sliced))+",policy=deadline,dl_runtime_us=1000,dl_period_us=20000", 8)
	if err == nil || !strings.Contains(err.Error(), `task "t"`) || !strings.Contains(err.Error(), "custom slice") {
		t.Errorf("a custom slice under the spec's policy=deadline: %v", err)
	}
	forks := `{"tasks": {"p": {"loop": 1, "run": 10, "fork": "kid"}, "kid": {"instance": 0, "loop": 1, "run": 10}}}`
	err = Check(RTAppSpec([]byte(forks))+",policy=deadline,dl_runtime_us=1000,dl_period_us=20000", 8)
	if err == nil || !strings.Contains(err.Error(), "key policy") || !strings.Contains(err.Error(), "EAGAIN") {
		t.Errorf("fork events under the spec's policy=deadline: %v", err)
	}
}
