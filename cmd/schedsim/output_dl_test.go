package main

import (
	"bytes"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/scenario"
)

// The deadline class's lines from a hand-made DLStats: the class line,
// then each task's reservation, bandwidth, share, jobs, misses and
// throttles; workload names only when there are several workloads.
func TestWriteDL(t *testing.T) {
	dl := &engine.DLStats{CPUPct: 12.345, TotalBW: 0.65, LimitBW: 7.6, Pushes: 3, Pulls: 2, Throttles: 41,
		Tasks: []engine.DLTaskStats{
			{Name: "greedy-0", Workload: 0, RuntimeNS: 4 * engine.Millisecond, DeadlineNS: 40 * engine.Millisecond, PeriodNS: 40 * engine.Millisecond,
				Reclaim: true, Reserved: 0.1, Share: 0.1523, Jobs: 25, Misses: 1, Throttles: 30},
			{Name: "strict", Workload: 1, RuntimeNS: 1500 * engine.Microsecond, DeadlineNS: 12500 * engine.Microsecond, PeriodNS: 20 * engine.Millisecond,
				Reserved: 0.075, Share: 0.07, Jobs: 50, Misses: 0, Throttles: 11},
		}}
	var b bytes.Buffer
	writeDL(&b, dl, []scenario.WorkloadOut{{Name: "rtapp"}, {Name: "hog"}})
	want := "dl class: 12.35% of CPU time in deadline tasks; 0.65 CPUs reserved, limit 7.60; 3 pushes, 2 pulls; throttled 41 times\n" +
		"  greedy-0 (rtapp): runtime/deadline/period 4ms/40ms/40ms, reclaim on; reserved 10.0%, got 15.2% of a CPU; 25 jobs, 1 deadline misses, 30 throttles\n" +
		"  strict (hog): runtime/deadline/period 1500us/12.5ms/20ms, reclaim off; reserved 7.5%, got 7.0% of a CPU; 50 jobs, 0 deadline misses, 11 throttles\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// One workload: no workload names; no admission limit said so.
	dl.LimitBW = -1
	b.Reset()
	writeDL(&b, dl, []scenario.WorkloadOut{{Name: "rtapp"}})
	if got := b.String(); !strings.Contains(got, "0.65 CPUs reserved, no admission limit (sched_rt_runtime_us -1);") || strings.Contains(got, "(rtapp)") {
		t.Errorf("one workload, no limit:\n%s", got)
	}
}

// The run's text shows the dl class and counts a workload's deadline
// tasks, from a real run of policy=deadline hogs.
func TestRunTextDL(t *testing.T) {
	cfg := scenario.Config{Preset: "amd-7950x-16c-32t", Seed: 1, Duration: 200 * engine.Millisecond,
		Workloads: []string{"hog:n=2,policy=deadline,dl_runtime_us=5000,dl_period_us=50000", "hog:n=1"}}
	r, err := scenario.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.DL == nil || len(r.DL.Tasks) != 2 || r.Workloads[0].DLTasks != 2 || r.Workloads[1].DLTasks != 0 {
		t.Fatalf("result DL %+v, workload counts %d %d", r.DL, r.Workloads[0].DLTasks, r.Workloads[1].DLTasks)
	}
	var b bytes.Buffer
	writeText(&b, cfg, r)
	out := b.String()
	for _, w := range []string{
		"workload hog (2 tasks, 2 of them SCHED_DEADLINE)\n",
		"\nworkload hog#2 (1 tasks)\n",
		"\ndl class: ",
		"\n  hog/0 (hog): runtime/deadline/period 5ms/50ms/50ms, reclaim off; reserved 10.0%, got ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("text output lacks %q:\n%s", w, out)
		}
	}
	if i, j := strings.Index(out, "rt class"), strings.Index(out, "dl class"); i >= 0 && j < i {
		t.Errorf("the dl class line is not after the rt class line")
	}
}
