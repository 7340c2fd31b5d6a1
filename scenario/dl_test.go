package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"schedplay/engine"
)

// A run with deadline tasks carries the deadline class ("dl": each task's
// reservation and share) and each workload's dl_tasks; a run without
// has neither key.
func TestResultJSONDeadline(t *testing.T) {
	c := Config{Preset: "p4-ht-1c-2t", Seed: 1, Duration: 100 * engine.Millisecond,
		Workloads: []string{"hog:n=1,policy=deadline,dl_runtime_us=3000,dl_deadline_us=10000,dl_period_us=30000,dl_reclaim=1", "hog:n=1"}}
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		DL *struct {
			TotalBW float64 `json:"total_bw"`
			Tasks   []struct {
				Name       string  `json:"name"`
				RuntimeNS  int64   `json:"runtime_ns"`
				DeadlineNS int64   `json:"deadline_ns"`
				PeriodNS   int64   `json:"period_ns"`
				Reclaim    bool    `json:"reclaim"`
				Reserved   float64 `json:"reserved"`
				Share      float64 `json:"share"`
			} `json:"tasks"`
		} `json:"dl"`
		Workloads []struct {
			DLTasks *int `json:"dl_tasks"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.DL == nil || len(back.DL.Tasks) != 1 {
		t.Fatalf("dl: %s", js)
	}
	task := back.DL.Tasks[0]
	if task.Name != "hog/0" || task.RuntimeNS != 3e6 || task.DeadlineNS != 10e6 || task.PeriodNS != 30e6 || !task.Reclaim || task.Reserved != 0.1 || task.Share <= 0 {
		t.Errorf("dl task %+v", task)
	}
	if back.DL.TotalBW != 0.1 {
		t.Errorf("dl total_bw %v, want 0.1 (rounded)", back.DL.TotalBW)
	}
	if len(back.Workloads) != 2 || back.Workloads[0].DLTasks == nil || *back.Workloads[0].DLTasks != 1 || back.Workloads[1].DLTasks != nil {
		t.Errorf("workloads' dl_tasks: %s", js)
	}
	c.Workloads = []string{"hog:n=1"}
	if r, err = Run(c); err != nil {
		t.Fatal(err)
	}
	js, _ = json.Marshal(r)
	if strings.Contains(string(js), `"dl"`) || strings.Contains(string(js), `"dl_tasks"`) {
		t.Errorf("a run without deadline tasks: %s", js)
	}
}
