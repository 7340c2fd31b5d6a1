package ui

import (
	"math"
	"strings"
	"testing"

	"schedplay/engine/histo"
)

func TestLogBinsSpreadAndKeepTotal(t *testing.T) {
	h := histo.New()
	for i := 0; i < 100; i++ {
		h.Record(10)
	}
	for v := int64(1); v <= 9; v++ {
		h.Record(v)
	}
	h.Record(5000)
	var b LogBins
	b.Fill(h.Bars(), DecadeCeil(h.Percentile(100)))
	if b.MaxUS != 10000 || b.Decades != 4 || b.N != 4*BinsPerDecade || b.Total != 110 {
		t.Fatalf("bins: max %d decades %d n %d total %d", b.MaxUS, b.Decades, b.N, b.Total)
	}
	sum := 0.0
	for i := 0; i < b.N; i++ {
		sum += b.Count[i]
	}
	if math.Abs(sum-110) > 1e-6 {
		t.Errorf("bins hold %v wakeups, want 110", sum)
	}
	// 10 µs is one decade along: bin BinsPerDecade holds the 100.
	if c := b.Count[BinsPerDecade]; c < 99 || c > 101 {
		t.Errorf("bin at 10us holds %v, want about 100", c)
	}
	// No comb: every bin from 1 µs to 10 µs holds something.
	for i := 0; i < BinsPerDecade; i++ {
		if b.Count[i] <= 0 {
			t.Errorf("bin %d (%.2f..%.2f us) empty between recorded values", i, BinEdge(i), BinEdge(i+1))
		}
	}
	// Bins are log-spaced: equal ratios.
	if r1, r2 := BinEdge(1)/BinEdge(0), BinEdge(21)/BinEdge(20); math.Abs(r1-r2) > 1e-9 {
		t.Errorf("bin ratios %v and %v differ", r1, r2)
	}
	// Values past the axis end land in the last bin.
	var c LogBins
	c.Fill(h.Bars(), 100)
	tot := 0.0
	for i := 0; i < c.N; i++ {
		tot += c.Count[i]
	}
	if math.Abs(tot-110) > 1e-6 || c.Count[c.N-1] < 1 {
		t.Errorf("clipped axis: %v wakeups, last bin %v", tot, c.Count[c.N-1])
	}
	if DecadeCeil(5) != 100 || DecadeCeil(101) != 1000 || DecadeCeil(1000) != 1000 || DecadeCeil(math.MaxInt64) != pow10(MaxDecades) {
		t.Error("DecadeCeil")
	}
	if LogPos(1, 1000) != 0 || LogPos(1000, 1000) != 1 || math.Abs(LogPos(10, 100)-0.5) > 1e-9 {
		t.Error("LogPos")
	}
}

func TestLogCountAxis(t *testing.T) {
	if CountTop(3) != 10 || CountTop(10) != 10 || CountTop(11) != 100 || CountTop(54321) != 1e5 {
		t.Error("CountTop")
	}
	// A bin with one wakeup shows; the axis is logarithmic: each decade
	// takes the same height.
	if CountPos(0, 100) != 0 || CountPos(1, 100) <= 0 || CountPos(100, 100) != 1 {
		t.Error("CountPos ends")
	}
	d1 := CountPos(10, 1000) - CountPos(1, 1000)
	d2 := CountPos(1000, 1000) - CountPos(100, 1000)
	if math.Abs(d1-d2) > 1e-9 {
		t.Errorf("decades take %v and %v of the axis", d1, d2)
	}
	ticks := CountTicks(1e4, 200)
	want := []string{"1", "10", "100", "1k", "10k"}
	if len(ticks) != len(want) {
		t.Fatalf("count ticks %+v", ticks)
	}
	for i, tk := range ticks {
		if tk.Label != want[i] || tk.Pos < 0 || tk.Pos > 199 || (i > 0 && tk.Pos <= ticks[i-1].Pos) {
			t.Errorf("tick %d: %+v", i, tk)
		}
	}
	if ticks[len(ticks)-1].Pos != 199 {
		t.Errorf("top tick at %d", ticks[len(ticks)-1].Pos)
	}
}

// labelsApart checks that the labels left are inside 0..length and do
// not overlap (gap pixels apart).
func labelsApart(t *testing.T, name string, ticks []Tick, length, gap int) int {
	t.Helper()
	kept := 0
	var spans [][2]int
	for _, tk := range ticks {
		if tk.Label == "" {
			continue
		}
		kept++
		a, b := LabelSpan(tk, length)
		if a < 0 || b > length {
			t.Errorf("%s: label %q at %d..%d outside 0..%d", name, tk.Label, a, b, length)
		}
		for _, s := range spans {
			if a < s[1]+gap && s[0] < b+gap {
				t.Errorf("%s: label %q at %d..%d overlaps %d..%d", name, tk.Label, a, b, s[0], s[1])
			}
		}
		spans = append(spans, [2]int{a, b})
	}
	return kept
}

func TestLatencyTicksDoNotOverlap(t *testing.T) {
	for _, w := range []int{60, 120, 200, 400, 1600} {
		for _, maxUS := range []int64{100, 10000, 1e7, 1e8} {
			ticks := SpaceLabels(LatencyTicks(maxUS, w), w, GlyphAdvance, false)
			n := labelsApart(t, "latency", ticks, w, GlyphAdvance)
			if ticks[0].Label != "1us" || ticks[0].Pos != 0 || ticks[len(ticks)-1].Pos != w-1 {
				t.Errorf("w=%d max=%d: ends %+v %+v", w, maxUS, ticks[0], ticks[len(ticks)-1])
			}
			if w >= 400 && n != len(ticks) {
				t.Errorf("w=%d max=%d: only %d of %d labels kept", w, maxUS, n, len(ticks))
			}
		}
	}
	if l := LatencyTicks(1e7, 100); l[3].Label != "1ms" || l[6].Label != "1s" {
		t.Errorf("labels %+v", l)
	}
}

func TestTimeTicksHaveUnitsAndSpacing(t *testing.T) {
	cases := []struct {
		t0, t1 float64
		want   string // one label that must appear
	}{
		{0, 12, "10s"},
		{3.2, 15.1, "10s"},
		{12.0, 12.012, "12.010s"},
		{0.00012, 0.0009, "0.0005s"},
	}
	for _, c := range cases {
		for _, w := range []int{120, 300, 900} {
			ticks := TimeTicks(c.t0, c.t1, w, max(w/90, 2))
			if len(ticks) == 0 {
				t.Fatalf("%v..%v: no ticks", c.t0, c.t1)
			}
			found := false
			for _, tk := range ticks {
				if !strings.HasSuffix(tk.Label, "s") || tk.Pos < 0 || tk.Pos >= w {
					t.Errorf("%v..%v w=%d: tick %+v", c.t0, c.t1, w, tk)
				}
				if tk.Label == c.want {
					found = true
				}
			}
			if !found && w == 900 {
				t.Errorf("%v..%v: no %q among %+v", c.t0, c.t1, c.want, ticks)
			}
			labelsApart(t, "time", SpaceLabels(ticks, w, GlyphAdvance, false), w, GlyphAdvance)
		}
	}
	if TimeTicks(1, 1, 100, 3) != nil {
		t.Error("an empty span has no ticks")
	}
}

func TestValueTicksAndVerticalSpacing(t *testing.T) {
	ticks := ValueTicks(20, 100, AppendSI)
	if ticks[0].Label != "0" || ticks[1].Label != "10" || ticks[2].Label != "20" || ticks[2].Pos != 99 {
		t.Errorf("value ticks %+v", ticks)
	}
	// Vertical labels are a glyph tall: on a short axis some go.
	short := SpaceLabels(CountTicks(1e6, 40), 40, 1, true)
	kept := 0
	last := -100
	for _, tk := range short {
		if tk.Label != "" {
			kept++
			if tk.Pos-last < GlyphH+1 {
				t.Errorf("vertical labels %d and %d overlap", last, tk.Pos)
			}
			last = tk.Pos
		}
	}
	if kept < 2 || kept == len(short) {
		t.Errorf("kept %d of %d labels on a 40 px axis", kept, len(short))
	}
}

func TestPathOrderAndShellSettings(t *testing.T) {
	o := PathOrder([]int{5, 2, 9, 2, 99, -1}, 10, nil)
	if o[5] != 1 || o[2] != 2 || o[9] != 3 || o[0] != 0 {
		t.Errorf("path order %v", o)
	}
	s := newShellSettings()
	var h Highlight
	base := 0
	gen := s.copyTo(0, &h, &base)
	path := []int{3, 4}
	s.setHighlight(Highlight{Arm: 1, Target: 2, Path: path, Chosen: 4})
	path[0] = 7 // the caller's slice is not kept
	s.setBaseline(1)
	gen2 := s.copyTo(gen, &h, &base)
	if gen2 == gen || h.Arm != 1 || h.Target != 2 || h.Chosen != 4 || len(h.Path) != 2 || h.Path[0] != 3 || base != 1 || !h.Active() {
		t.Errorf("copied %+v baseline %d", h, base)
	}
	if s.copyTo(gen2, &h, &base) != gen2 {
		t.Error("no change, same generation")
	}
	s.setHighlight(Highlight{Arm: -1, Target: -1, Chosen: -1})
	s.copyTo(gen2, &h, &base)
	if h.Active() {
		t.Error("cleared highlight still active")
	}
}

// Percentile labels that would overlap go to a second row, not away.
func TestStaggerLabels(t *testing.T) {
	ticks := []Tick{{Pos: 100, Label: "p50"}, {Pos: 180, Label: "p99"}, {Pos: 190, Label: "p99.9"}}
	rows := StaggerLabels(ticks, 300, 2)
	if rows[0][0].Label != "p50" || rows[0][1].Label != "p99" || rows[1][0].Label != "p99.9" {
		t.Errorf("rows %+v", rows)
	}
	for r := range rows {
		labelsApart(t, "stagger", rows[r][:], 300, 2)
	}
	if n := testing.AllocsPerRun(20, func() { _ = StaggerLabels(ticks, 300, 2) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
