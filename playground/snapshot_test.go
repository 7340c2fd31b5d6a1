package playground

import (
	"reflect"
	"testing"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// A snapshot of a running simulation survives its byte encoding.
func TestSnapshotRoundTrip(t *testing.T) {
	st := Default()
	cfg := st.Config(0)
	sim, err := cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	sim.RunUntil(300 * engine.Millisecond)
	var s Snapshot
	s.Seq, s.Arm, s.SimRate = 7, 1, 0.5
	cur := s.Fill(sim, 0, true, 3)
	if cur == 0 || len(s.Decisions) == 0 || len(s.Decisions) > MaxSnapDecisions || len(s.Views) != 88 || !s.HasBars || len(s.Hists[0].Bars) == 0 {
		t.Fatalf("snapshot: cursor %d, %d decisions, %d views, bars %v", cur, len(s.Decisions), len(s.Views), s.HasBars)
	}
	b := s.Encode(nil)
	var got Snapshot
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	got.ring, s.ring = [MaxSnapDecisions]engine.Decision{}, [MaxSnapDecisions]engine.Decision{}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got.Totals, s.Totals)
	}
	for n := 0; n < len(b); n += 97 {
		if err := got.Decode(b[:n]); err == nil {
			t.Fatalf("a truncated snapshot (%d of %d bytes) decoded", n, len(b))
		}
	}
}

// Pinned lists exactly the waiting tasks with a restricted affinity, with
// their masks; Polling has one entry per CPU; both survive the encoding.
func TestSnapshotPinnedAndPolling(t *testing.T) {
	st := Default()
	cfg := st.Config(0)
	sim, err := cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	ncpu := sim.Topology().NCPU
	two := cpumask.Of(ncpu, 0, 1)
	for id := 0; id < sim.NumTasks(); id++ {
		if err := sim.SetAffinity(engine.TaskID(id), two); err != nil {
			t.Fatal(err)
		}
	}
	sim.RunUntil(50 * engine.Millisecond)
	var s Snapshot
	s.Fill(sim, 0, false, -1)
	if len(s.Polling) != ncpu {
		t.Fatalf("%d polling flags for %d CPUs", len(s.Polling), ncpu)
	}
	waiting := 0
	for id := 0; id < sim.NumTasks(); id++ {
		if sim.Task(engine.TaskID(id)).State() == engine.TaskRunnable {
			waiting++
		}
	}
	if waiting == 0 || len(s.Pinned) != waiting {
		t.Fatalf("%d runnable tasks, %d pinned entries", waiting, len(s.Pinned))
	}
	for _, p := range s.Pinned {
		if !p.Allows(0) || !p.Allows(1) || p.Allows(2) || p.Allows(ncpu-1) || p.Allows(-1) || p.Allows(ncpu+64) {
			t.Errorf("pinned task on CPU %d: mask %x", p.CPU, p.Allowed)
		}
	}
	var got Snapshot
	if err := got.Decode(s.Encode(nil)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Pinned, s.Pinned) || !reflect.DeepEqual(got.Polling, s.Polling) {
		t.Error("pinned tasks or polling flags differ after the round trip")
	}
}

// An era 6.12 arm's snapshot carries its delayed-dequeue counters (the
// page's arms table shows them) and they survive the encoding; an arm of
// an era without DELAY_DEQUEUE has none.
func TestSnapshotCarriesDelayedStats(t *testing.T) {
	for _, c := range []struct {
		link string
		has  bool
	}{{"era=6.12&w=hackbench:g=10,l=400", true}, {"era=6.6&w=hackbench:g=10,l=400", false}} {
		sim := buildLink(t, c.link)
		sim.RunUntil(20 * engine.Millisecond)
		var s Snapshot
		s.Fill(sim, 0, false, -1)
		want := sim.Delayed()
		if s.HasDelayed != c.has || (want != nil) != c.has {
			t.Fatalf("%s: HasDelayed %v, engine %+v", c.link, s.HasDelayed, want)
		}
		if c.has && (s.Delayed != *want || s.Delayed.Requeued == 0) {
			t.Fatalf("%s: snapshot %+v, engine %+v", c.link, s.Delayed, *want)
		}
		var got Snapshot
		if err := got.Decode(s.Encode(nil)); err != nil {
			t.Fatal(err)
		}
		if got.HasDelayed != s.HasDelayed || got.Delayed != s.Delayed {
			t.Fatalf("%s: after the round trip %v %+v, before %v %+v", c.link, got.HasDelayed, got.Delayed, s.HasDelayed, s.Delayed)
		}
	}
}
