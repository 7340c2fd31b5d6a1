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

func TestDisplayBarsCoverEveryValueOnce(t *testing.T) {
	l := New()
	vals := []int64{0, 1, 2, 3, 4, 5, 7, 8, 100, 1000, 1023, 1024, 99999, 1 << 40}
	for _, v := range vals {
		l.Record(v)
		if from, to := displayRange(displayBin(v)); v < from || v > to {
			t.Fatalf("value %d lands in bucket [%d,%d]", v, from, to)
		}
	}
	var total int64
	prevTo := int64(-1)
	bars := l.AppendBars(make([]Bar, 0, 64))
	for _, b := range bars {
		if b.From <= prevTo || b.To < b.From {
			t.Fatalf("buckets overlap or are empty: %+v", bars)
		}
		prevTo = b.To
		total += b.Count
	}
	if total != int64(len(vals)) {
		t.Fatalf("bars hold %d values, want %d", total, len(vals))
	}
	buf := make([]Bar, 0, 64)
	if n := testing.AllocsPerRun(50, func() { buf = l.AppendBars(buf) }); n != 0 {
		t.Fatalf("AppendBars allocates %.0f times", n)
	}
}
