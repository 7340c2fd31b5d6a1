package playground

import (
	"reflect"
	"testing"

	"schedplay/engine"
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
