package ui

import (
	"math"
	"testing"

	"schedplay/engine"
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
		{string(AppendSeconds(nil, 12345678901)), "12.346s"},
		{string(AppendSeconds(nil, 12345499999)), "12.345s"},
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
