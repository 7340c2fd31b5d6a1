package playground

import (
	"reflect"
	"strings"
	"testing"

	"schedplay/engine"
)

// everyPeriod runs for run at offset into every period, on an absolute
// timer aligned to time 0 (tasks of different offsets wake one after
// the other), ending a job each time, forever.
func everyPeriod(run, period, offset int64) engine.Program {
	next := offset
	step := 0
	return engine.ProgramFunc(func(c *engine.Ctx) engine.Action {
		step++
		if step%2 == 1 {
			next += period
			return engine.Run(run)
		}
		c.EndJob()
		if d := next - c.Now(); d > 0 {
			return engine.Sleep(d)
		}
		step++
		next += period
		return engine.Run(run)
	})
}

// dlSim is a fair schbench on a 2-CPU machine beside a workload of n
// deadline tasks: task i runs run every period, i·100 µs into it, in a
// runtime/period reservation; with fair, the deadline workload also has
// one fair task. (A deadline task's affinity must span the machine.)
func dlSim(t *testing.T, era string, n int, run, runtime, period int64, fair bool) *engine.Sim {
	t.Helper()
	sim := buildLink(t, "preset=p4-ht-1c-2t&era="+era+"&w=schbench:m=1,t=4")
	w := sim.AddWorkload("dl", "dl")
	for i := 0; i < n; i++ {
		_, err := sim.Spawn(w, engine.TaskSpec{Name: "dl", ParentCPU: i % 2, Program: everyPeriod(run, period, int64(i)*100*engine.Microsecond),
			MeasureWakeups: true, Policy: engine.PolicyDeadline, DL: engine.DLParams{Runtime: runtime, Period: period}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if fair {
		if _, err := sim.Spawn(w, engine.TaskSpec{Name: "dl-fair", Program: everyPeriod(run, period, 0), MeasureWakeups: true}); err != nil {
			t.Fatal(err)
		}
	}
	return sim
}

// spin runs forever; nap runs run and sleeps sleep, forever.
func spin() engine.Program {
	return engine.ProgramFunc(func(*engine.Ctx) engine.Action { return engine.Run(engine.Second) })
}
func nap(run, sleep int64) engine.Program {
	step := 0
	return engine.ProgramFunc(func(*engine.Ctx) engine.Action {
		step++
		if step%2 == 1 {
			return engine.Run(run)
		}
		return engine.Sleep(sleep)
	})
}

// dlMeet is a fair schbench on a 2-CPU machine beside three deadline
// hogs in 4 ms / 10 ms reservations and three deadline nappers (50 µs
// runs every 250 µs, 1 ms / 20 ms) that wake on a CPU a hog holds, with
// an earlier deadline, and go through find_later_rq.
func dlMeet(t *testing.T, era string) *engine.Sim {
	t.Helper()
	sim := buildLink(t, "preset=p4-ht-1c-2t&era="+era+"&w=schbench:m=1,t=4")
	w := sim.AddWorkload("dl", "dl")
	spawn := func(i int, p engine.Program, dl engine.DLParams) {
		if _, err := sim.Spawn(w, engine.TaskSpec{Name: "dl", ParentCPU: i % 2, Program: p,
			MeasureWakeups: true, Policy: engine.PolicyDeadline, DL: dl}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		spawn(i, spin(), engine.DLParams{Runtime: 4 * engine.Millisecond, Period: 10 * engine.Millisecond})
	}
	for i := 0; i < 3; i++ {
		spawn(i, nap(50*engine.Microsecond, 200*engine.Microsecond), engine.DLParams{Runtime: engine.Millisecond, Period: 20 * engine.Millisecond})
	}
	return sim
}

// The decision panel explains a deadline wakeup by select_task_rq_dl:
// kept on prev (dl_prev) or moved by find_later_rq (dl_find_later_rq),
// with the wakee's reservation and what prev and the chosen CPU ran.
func TestDecisionLogDLPlacement(t *testing.T) {
	sim := dlMeet(t, "6.6")
	log := Attach(sim)
	var later, kept, fair int
	for step := 1; step <= 100 && (later == 0 || kept == 0 || fair == 0); step++ {
		sim.RunUntil(int64(step) * 5 * engine.Millisecond)
		for _, d := range log.Last(LogSize) {
			r := d.DL
			switch d.Stage {
			case "dl_find_later_rq":
				if r == nil || r.Policy != "deadline" || !r.Later || r.RuntimeNS != engine.Millisecond || r.PeriodNS != 20*engine.Millisecond || r.PrevDL == "" || d.RT != nil {
					t.Fatalf("dl_find_later_rq decision: %+v", r)
				}
				if len(d.Stages) != 2 || d.Stages[0].Stage != "dl_prev" || d.Stages[1].Stage != "dl_find_later_rq" ||
					!strings.Contains(d.Stages[1].Result, "chosen") || d.Affine != "skipped" || d.Chosen == d.Prev {
					t.Fatalf("dl_find_later_rq stages: %+v (%s)", d.Stages, d.Affine)
				}
				later++
			case "dl_prev":
				// kept: at once, or after find_later_rq found nothing better
				last := d.Stages[len(d.Stages)-1]
				if r == nil || r.Later || d.Chosen != d.Prev || len(d.Stages) > 2 || !strings.Contains(last.Result, "chosen") ||
					(len(d.Stages) == 2 && (last.Stage != "dl_find_later_rq" || !strings.Contains(last.Result, "stays"))) {
					t.Fatalf("dl_prev decision: chosen %d prev %d %+v %+v", d.Chosen, d.Prev, r, d.Stages)
				}
				kept++
			default:
				if r != nil && d.Stage != "pinned" && d.Stage != "fallback" {
					t.Fatalf("%s decision of %s has a DL part %+v", d.Stage, d.Wakee, r)
				}
				if strings.HasPrefix(d.Wakee, "schbench") {
					if r != nil || d.RT != nil || (len(d.Stages) > 0 && strings.HasPrefix(d.Stages[0].Stage, "dl_")) {
						t.Fatalf("fair decision %+v", d)
					}
					fair++
				}
			}
		}
	}
	if later == 0 || kept == 0 || fair == 0 {
		t.Fatalf("dl_find_later_rq %d, dl_prev %d, fair %d decisions seen", later, kept, fair)
	}
}

// A snapshot says which CPUs run a deadline task (not RT) and tags the
// deadline workload DL, carries the class's stats, and all of it
// survives the encoding.
func TestSnapshotDLFlagsClassesAndStats(t *testing.T) {
	sim := dlSim(t, "6.6", 6, 3*engine.Millisecond, 2*engine.Millisecond, 10*engine.Millisecond, false)
	dl := 0
	var s Snapshot
	for step := 1; step <= 50 && dl == 0; step++ {
		sim.RunUntil(int64(step) * engine.Millisecond)
		s.Fill(sim, 0, true, -1)
		for c, v := range s.Views {
			want := v.Curr >= 0 && sim.Task(v.Curr).Policy() == engine.PolicyDeadline
			if s.DL[c] != want || (s.DL[c] && s.RT[c]) {
				t.Fatalf("CPU %d: DL %v RT %v, running %d", c, s.DL[c], s.RT[c], v.Curr)
			}
			if s.DL[c] {
				dl++
			}
		}
	}
	if dl == 0 {
		t.Fatal("no CPU ran a deadline task")
	}
	sim.RunUntil(300 * engine.Millisecond)
	s.Fill(sim, 0, true, -1)
	if got := []WorkloadClass{s.Hists[0].Class, s.Hists[1].Class}; !reflect.DeepEqual(got, []WorkloadClass{ClassFair, ClassDL}) {
		t.Errorf("workload classes %v", got)
	}
	if !s.HasDL || len(s.DLStats.Tasks) != 6 {
		t.Fatalf("DL stats %v %+v", s.HasDL, s.DLStats)
	}
	for _, ts := range s.DLStats.Tasks {
		// 3 ms of work in a 2 ms reservation: every job is throttled.
		if ts.Reserved < 0.199 || ts.Reserved > 0.201 || ts.Jobs == 0 || ts.Throttles == 0 || ts.Share > 0.21 {
			t.Errorf("task %+v", ts)
		}
	}
	var got Snapshot
	if err := got.Decode(s.Encode(nil)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.DL, s.DL) || !reflect.DeepEqual(got.DLStats, s.DLStats) || !got.HasDL || got.Hists[1].Class != ClassDL {
		t.Error("DL flags, stats or classes differ after the round trip")
	}
	// Without deadline tasks there are no stats (era 6.12 has its fair
	// servers, which are not tasks).
	for _, era := range []string{"6.6", "6.12"} {
		plain := buildLink(t, "era="+era+"&w=schbench:m=1,t=4")
		plain.RunUntil(20 * engine.Millisecond)
		var p Snapshot
		p.Fill(plain, 0, false, -1)
		if p.HasDL {
			t.Errorf("era %s: DL stats without deadline tasks: %+v", era, p.DLStats)
		}
	}
}

// The tags of every class, and a deadline workload with a fair task.
func TestDLClassTags(t *testing.T) {
	tags := map[WorkloadClass]string{ClassFair: "", ClassRT: "RT", ClassMixed: "RT+fair", ClassDL: "DL",
		ClassDLFair: "DL+fair", ClassDLRT: "DL+RT", ClassDLRTFair: "DL+RT+fair"}
	for c, want := range tags {
		if c.Tag() != want {
			t.Errorf("class %d tag %q, want %q", c, c.Tag(), want)
		}
		if c.HasRT() != strings.Contains(want, "RT") || c.HasDL() != strings.Contains(want, "DL") {
			t.Errorf("class %q: HasRT %v HasDL %v", want, c.HasRT(), c.HasDL())
		}
	}
	sim := dlSim(t, "6.12", 2, engine.Millisecond, 2*engine.Millisecond, 10*engine.Millisecond, true)
	sim.RunUntil(10 * engine.Millisecond)
	var s Snapshot
	s.Fill(sim, 0, false, -1)
	if s.Hists[1].Class != ClassDLFair {
		t.Errorf("class %v, want DL+fair", s.Hists[1].Class)
	}
}
