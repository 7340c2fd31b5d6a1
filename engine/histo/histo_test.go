package histo

import "testing"

func TestSummaryPercentilesAndExactExtremes(t *testing.T) {
	l := New()
	for v := int64(1); v <= 1000; v++ {
		l.Record(v)
	}
	l.Record(0)
	l.Record(HighestUS * 10)
	s := l.Summarize()
	if s.Count != 1002 || s.Min != 0 || s.Max != HighestUS*10 {
		t.Fatalf("count/min/max: %+v", s)
	}
	if s.P50 < 499 || s.P50 > 502 || s.P99 < 988 || s.P99 > 992 {
		t.Fatalf("percentiles off: %+v", s)
	}
	if !(s.P50 <= s.P75 && s.P75 <= s.P90 && s.P90 <= s.P95 && s.P95 <= s.P99 && s.P99 <= s.P995 && s.P995 <= s.P999) {
		t.Fatalf("percentiles not monotone: %+v", s)
	}
	o := New()
	o.Record(5000)
	l.Merge(o)
	if l.Count() != 1003 {
		t.Fatal("merge lost a value")
	}
	l.Reset()
	if l.Summarize() != (Summary{}) {
		t.Fatal("reset")
	}
}
