package workload

import (
	"math"
	"strings"
	"testing"

	"schedplay/engine"
)

// The common keys policy=deadline and dl_*: what each refuses, by key.
func TestDeadlineKeyErrors(t *testing.T) {
	const ok = "dl_runtime_us=1000,dl_period_us=10000"
	cases := []struct {
		spec string
		want []string
	}{
		{"hog:policy=deadline", []string{"key dl_runtime_us", "needs a runtime"}},
		{"hog:policy=deadline,dl_runtime_us=1000", []string{"key dl_period_us", "dl_period_us or dl_deadline_us"}},
		{"hog:policy=deadline,dl_runtime_us=1,dl_period_us=1000", []string{"key dl_runtime_us", "1024 ns", "at least 2"}},
		{"hog:policy=deadline,dl_runtime_us=2000,dl_period_us=1000", []string{"key dl_period_us", "1000 µs is shorter than dl_runtime_us 2000 µs"}},
		{"hog:policy=deadline,dl_runtime_us=2000,dl_deadline_us=1000,dl_period_us=5000", []string{"key dl_deadline_us", "shorter than dl_runtime_us"}},
		{"hog:policy=deadline,dl_runtime_us=100,dl_deadline_us=2000,dl_period_us=1000", []string{"key dl_deadline_us", "2000 µs is longer than dl_period_us 1000 µs"}},
		{"hog:policy=deadline,rtprio=5," + ok, []string{"key rtprio", "must be 0 with policy=deadline"}},
		{"hog:policy=deadline,slice_us=3000," + ok, []string{"key slice_us", "policy deadline has none"}},
		{"hog:dl_runtime_us=100", []string{"key dl_runtime_us", "needs policy=deadline", "policy is normal"}},
		{"hog:policy=fifo,rtprio=5,dl_reclaim=1", []string{"key dl_reclaim", "needs policy=deadline", "policy is fifo"}},
		{"hog:policy=rr,rtprio=5,dl_period_us=1000", []string{"key dl_period_us", "needs policy=deadline"}},
		{"hog:policy=deadline,dl_reclaim=2," + ok, []string{"key dl_reclaim", "0..1"}},
		{"hog:policy=deadline,dl_period_us=-1,dl_runtime_us=10", []string{"key dl_period_us"}},
		{"hog:policy=edf," + ok, []string{"key policy", "normal|fifo|rr|deadline"}},
		{"hackbench:policy=deadline," + ok, []string{"key policy", "hackbench", "forks the senders", "EAGAIN"}},
		{"compile:policy=deadline," + ok, []string{"key policy", "compile", "make forks"}},
	}
	for _, c := range cases {
		err := Check(c.spec, 8)
		if err == nil {
			t.Errorf("%s: accepted", c.spec)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.spec, err, w)
			}
		}
	}
}

// Every thread of a policy=deadline workload gets the reservation: zeros
// as the spec left them (the engine fills deadline and period in), the
// reclaim flag, and no rt priority or slice.
func TestDeadlineKeysTaskSpec(t *testing.T) {
	for _, c := range []struct {
		spec string
		want engine.DLParams
	}{
		{"hog:n=3,policy=deadline,dl_runtime_us=10000,dl_period_us=100000",
			engine.DLParams{Runtime: 10 * engine.Millisecond, Period: 100 * engine.Millisecond}},
		{"hog:policy=deadline,dl_runtime_us=2,dl_deadline_us=500,dl_reclaim=1",
			engine.DLParams{Runtime: 2 * engine.Microsecond, Deadline: 500 * engine.Microsecond, Reclaim: true}},
		{"pipe:policy=deadline,dl_runtime_us=300,dl_deadline_us=800,dl_period_us=1000",
			engine.DLParams{Runtime: 300 * engine.Microsecond, Deadline: 800 * engine.Microsecond, Period: engine.Millisecond}},
	} {
		sp, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		b, err := newBuilder(sp, 8)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		ts := b.TaskSpec("x", nil)
		if ts.Policy != engine.PolicyDeadline || ts.DL != c.want || ts.RTPrio != 0 || ts.Slice != 0 {
			t.Errorf("%s: policy %v DL %+v rtprio %d slice %d, want deadline %+v 0 0", c.spec, ts.Policy, ts.DL, ts.RTPrio, ts.Slice, c.want)
		}
	}
	// Without policy=deadline there is no reservation.
	sp, _ := Parse("hog:policy=fifo,rtprio=3")
	b, err := newBuilder(sp, 8)
	if err != nil {
		t.Fatal(err)
	}
	if ts := b.TaskSpec("x", nil); ts.DL != (engine.DLParams{}) {
		t.Errorf("fifo hog: DL %+v, want none", ts.DL)
	}
}

// A policy=deadline hog runs as the engine's deadline tasks: each admitted
// with the spec's reservation, each held to about its bandwidth.
func TestDeadlineKeysRun(t *testing.T) {
	s := simAtEra(t, "6.6")
	if _, err := Add(s, "hog:n=2,policy=deadline,dl_runtime_us=10000,dl_period_us=100000", ""); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(engine.Second)
	dl := s.DL()
	if dl == nil || len(dl.Tasks) != 2 {
		t.Fatalf("DL stats %+v: want 2 deadline tasks", dl)
	}
	for _, ts := range dl.Tasks {
		if ts.RuntimeNS != 10*engine.Millisecond || ts.DeadlineNS != 100*engine.Millisecond || ts.PeriodNS != 100*engine.Millisecond || ts.Reclaim {
			t.Errorf("task %s: reservation %d/%d/%d reclaim %v, want 10/100/100 ms, no reclaim", ts.Name, ts.RuntimeNS, ts.DeadlineNS, ts.PeriodNS, ts.Reclaim)
		}
		if math.Abs(ts.Share-0.1) > 0.01 {
			t.Errorf("task %s: CPU share %.3f, want its 0.10 reservation (a hog throttled every period)", ts.Name, ts.Share)
		}
		if ts.Throttles < 5 {
			t.Errorf("task %s: %d throttles in 1 s, want one per period", ts.Name, ts.Throttles)
		}
	}
	if w := s.Workloads(); w[0].DLTasks != 2 {
		t.Errorf("workload counts %d deadline tasks, want 2", w[0].DLTasks)
	}
	// Admission control refuses what the CPUs cannot hold.
	s = simAtEra(t, "6.6")
	n := s.Topology().NCPU
	_, err := Add(s, "hog:n="+itoa(n)+",policy=deadline,dl_runtime_us=1000,dl_period_us=1000", "")
	if err == nil || !strings.Contains(err.Error(), "admission") {
		t.Errorf("%d hogs of a whole CPU on %d CPUs: %v, want the admission refusal (95%% each)", n, n, err)
	}
}

// A deadline workload's affinity is the whole machine: the kernel's
// sched_setattr refuses a restricted one (EPERM), named by key.
func TestDeadlineKeysAffinity(t *testing.T) {
	const dl = "hog:policy=deadline,dl_runtime_us=1000,dl_period_us=10000"
	if err := Check(dl+",cpus=0-3", 8); err == nil || !strings.Contains(err.Error(), "key cpus") || !strings.Contains(err.Error(), "EPERM") {
		t.Errorf("cpus=0-3 of 8: %v", err)
	}
	if err := Check(dl+",cpus=0-7", 8); err != nil {
		t.Errorf("cpus=0-7 of 8: %v", err)
	}
}
