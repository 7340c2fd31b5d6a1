package ui

import (
	"image/color"
	"math"
	"testing"

	"schedplay/engine"
	"schedplay/engine/histo"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{string(AppendUS(nil, 0)), "0us"},
		{string(AppendUS(nil, 850)), "850us"},
		{string(AppendUS(nil, 1250)), "1.25ms"},
		{string(AppendUS(nil, 12500)), "12.5ms"},
		{string(AppendUS(nil, 125000)), "125ms"},
		{string(AppendUS(nil, 1500000)), "1.50s"},
		{string(AppendSeconds(nil, 12345678901)), "12.345s"},
		{string(AppendSeconds(nil, 5007000000)), "5.007s"},
		{string(AppendSeconds(nil, 0)), "0.000s"},
		{string(AppendSI(nil, 950)), "950"},
		{string(AppendSI(nil, 12345)), "12.3k"},
		{string(AppendSI(nil, 4560000)), "4.56M"},
		{string(AppendSI(nil, 0.5)), "0.50"},
		{string(AppendSI(nil, 2.5)), "2.50"},
		{string(AppendSI(nil, math.NaN())), "-"},
		{string(AppendPercent(nil, 0.1234)), "12.3%"},
		{string(AppendChange(nil, 100, 112)), "+12%"},
		{string(AppendChange(nil, 100, 60)), "-40%"},
		{string(AppendChange(nil, 100, 100)), "0%"},
		{string(AppendChange(nil, 0, 5)), "n/a"},
		{string(AppendSpeed(nil, 0)), "max"},
		{string(AppendSpeed(nil, 1)), "1x"},
		{string(AppendSpeed(nil, 2.5)), "2.5x"},
		{string(AppendSpeed(nil, 1.23456)), "1.23x"},
		{string(AppendSpeed(nil, 0.25)), "0.25x"},
		{string(AppendSpeed(nil, 1000)), "1000x"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestFormatDoesNotAllocateIntoRoomyBuffer(t *testing.T) {
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		b = AppendUS(b, 12345)
		b = AppendSI(b, 1.5e6)
		b = AppendSeconds(b, 123456789)
		b = AppendPercent(b, 0.5)
		b = AppendChange(b, 10, 20)
		b = AppendSpeed(b, 1.5)
		_ = b
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

func TestRing(t *testing.T) {
	r := NewRing(3)
	if !math.IsNaN(r.Last()) || r.Max() != 0 {
		t.Error("empty ring")
	}
	for i := 1; i <= 5; i++ {
		r.Push(float64(i))
	}
	if r.Len() != 3 || r.At(0) != 3 || r.At(2) != 5 || r.Last() != 5 || r.Max() != 5 {
		t.Errorf("ring after 5 pushes: len %d, %v %v %v", r.Len(), r.At(0), r.At(1), r.At(2))
	}
	r.Push(math.NaN())
	if r.MeanLast(2) != 5 || r.Max() != 5 {
		t.Errorf("NaN samples are skipped: mean %v max %v", r.MeanLast(2), r.Max())
	}
	r.Reset()
	if r.Len() != 0 {
		t.Error("Reset")
	}
}

func TestFlashRingKeepsNewestAndFades(t *testing.T) {
	var r FlashRing
	probes := make([]int, 40)
	for i := range probes {
		probes[i] = i
	}
	for i := 0; i < flashCap+10; i++ {
		r.Add(&engine.Decision{Target: i, Chosen: i + 1, Probes: probes})
	}
	if r.Len() != flashCap || r.At(0).Target != 10 || r.At(flashCap-1).Target != flashCap+9 {
		t.Errorf("ring holds %d, oldest target %d, newest %d", r.Len(), r.At(0).Target, r.At(flashCap-1).Target)
	}
	if f := r.At(0); f.NProbes != 40 || len(f.Stored()) != MaxFlashProbes || f.Stored()[5] != 5 {
		t.Errorf("probes: %d stored of %d", len(f.Stored()), f.NProbes)
	}
	r.Tick(FlashLife / 2)
	if a := r.At(0).Alpha(); a < 0.49 || a > 0.51 {
		t.Errorf("alpha at half life %v", a)
	}
	r.Tick(FlashLife)
	if r.Len() != 0 {
		t.Errorf("%d flashes left after their life", r.Len())
	}
	var s Staging
	for i := 0; i < 20; i++ {
		s.Add(&engine.Decision{Target: i})
	}
	s.Flush(&r)
	if r.Len() != FlashesPerFrame || r.At(0).Target != 20-FlashesPerFrame || r.At(FlashesPerFrame-1).Target != 19 {
		t.Errorf("staging kept %d, oldest %d", r.Len(), r.At(0).Target)
	}
}

func TestLogBins(t *testing.T) {
	if DecadeCeil(5) != 100 || DecadeCeil(101) != 1000 || DecadeCeil(1000) != 1000 {
		t.Error("DecadeCeil")
	}
	if LogPos(1, 1000) != 0 || LogPos(1000, 1000) != 1 || math.Abs(LogPos(10, 100)-0.5) > 1e-9 {
		t.Error("LogPos")
	}
	h := histo.New()
	for i := 0; i < 100; i++ {
		h.Record(10)
	}
	h.Record(5000)
	var b LogBins
	b.Fill(h.Bars(), DecadeCeil(h.Percentile(100)))
	if b.Total != 101 || b.Peak != 100 || b.MaxUS != 10000 {
		t.Errorf("bins: total %d peak %d max %d", b.Total, b.Peak, b.MaxUS)
	}
	if b.Count[int(0.25*NBins)] != 100 {
		t.Errorf("10us should land a quarter along a 1us..10ms axis")
	}
}

func TestSeriesRates(t *testing.T) {
	a := NewArmSeries()
	a.Sample(engine.Totals{Now: 0}, []int64{0})
	a.Sample(engine.Totals{Now: engine.Second / 2, SISCalls: 10, SISProbes: 40, ConservationNS: engine.Second / 4,
		LLCConservationNS: engine.Second / 10}, []int64{500})
	if a.Probes.Last() != 4 || a.Ops[0].Last() != 1000 || a.Cons.Last() != 0.5 || a.LLCCons.Last() != 0.2 || a.T.Last() != 0.5 {
		t.Errorf("probes %v ops %v cons %v llc %v t %v", a.Probes.Last(), a.Ops[0].Last(), a.Cons.Last(), a.LLCCons.Last(), a.T.Last())
	}
	a.Sample(engine.Totals{Now: engine.Second, SISCalls: 10, SISProbes: 40}, []int64{500})
	if !math.IsNaN(a.Probes.Last()) {
		t.Error("an interval without select_idle_cpu calls has no probe figure")
	}
	if iv := SampleInterval(1); iv != 100*engine.Millisecond {
		t.Errorf("SampleInterval(1) = %d", iv)
	}
	if iv := SampleInterval(0.0007); iv != 100*engine.Microsecond {
		t.Errorf("SampleInterval(0.0007) = %d", iv)
	}
	if iv := SampleInterval(1e-9); iv != 10*engine.Microsecond {
		t.Errorf("SampleInterval(1e-9) = %d", iv)
	}
}

func TestCellColor(t *testing.T) {
	idle := engine.CPUView{Curr: -1, Workload: -1, Idle: true}
	deep := idle
	deep.CState = 3
	if CellColor(&idle, 4) != colIdle || CellColor(&deep, 4) != colIdleDeep {
		t.Error("idle colours: shallow and deepest C-state")
	}
	run := engine.CPUView{Curr: 7, Workload: 1}
	if CellColor(&run, 4) != WorkloadColor(1) {
		t.Error("running colour is the workload's at nice 0")
	}
	lo, hi := run, run
	lo.Nice, hi.Nice = -20, 19
	lum := func(c color.RGBA) int { return int(c.R) + int(c.G) + int(c.B) }
	if !(lum(CellColor(&lo, 4)) > lum(CellColor(&run, 4)) && lum(CellColor(&run, 4)) > lum(CellColor(&hi, 4))) {
		t.Error("negative nice lighter, positive nice darker")
	}
	held := idle
	held.SMTHeld, held.Queued = true, 1
	if CellColor(&held, 4) != colSMTHeld {
		t.Error("SMT-held idle is distinct")
	}
	if QueueFraction(0) != 0 || QueueFraction(2) != 0.5 || QueueFraction(9) != 1 {
		t.Error("QueueFraction")
	}
	if WorkloadColor(0) == WorkloadColor(1) || WorkloadColor(len(workloadPalette)) != WorkloadColor(0) {
		t.Error("palette")
	}
}

func TestGlyphs(t *testing.T) {
	// 'A' has pixels; ' ' has none; out-of-range bytes map to '?'.
	set := 0
	for y := 0; y < GlyphH; y++ {
		for x := 0; x < GlyphW; x++ {
			if GlyphPixel(GlyphIndex('A'), x, y) {
				set++
			}
			if GlyphPixel(GlyphIndex(' '), x, y) {
				t.Fatal("space has a pixel")
			}
		}
	}
	if set < 10 || GlyphIndex(0xb5) != GlyphIndex('?') {
		t.Error("glyph data")
	}
}

func TestNiceCeil(t *testing.T) {
	for _, c := range [][2]float64{{0, 1}, {0.7, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {12, 20}, {0.031, 0.05}, {500, 500}} {
		if got := NiceCeil(c[0]); math.Abs(got-c[1]) > 1e-12 {
			t.Errorf("NiceCeil(%v) = %v, want %v", c[0], got, c[1])
		}
	}
}
