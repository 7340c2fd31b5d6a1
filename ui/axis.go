package ui

import (
	"math"
	"strconv"
)

// Chart axes: tick positions and labels for the latency axis (decades of
// µs), the log count axis (decades), simulated time (1, 2 or 5 × a power
// of ten, with units) and linear values, and a greedy pass that drops
// labels which would overlap their neighbours. Pure arithmetic, tested
// natively.

// Tick is one axis tick: its position in pixels along the axis and its
// label (empty: a tick without a label).
type Tick struct {
	Pos   int
	Label string
}

// LatencyTicks are the decade ticks of the latency axis 1 µs .. maxUS
// over length pixels starting at 0.
func LatencyTicks(maxUS int64, length int) []Tick {
	d := decadesOf(maxUS)
	out := make([]Tick, 0, d+1)
	for k := 0; k <= d; k++ {
		out = append(out, Tick{Pos: int(math.Round(float64(length-1) * float64(k) / float64(d))), Label: usLabel(pow10(k))})
	}
	return out
}

// usLabel names a power-of-ten duration: "1us", "10us", "100us", "1ms" …
func usLabel(us int64) string {
	switch {
	case us >= 1e6:
		return strconv.FormatInt(us/1e6, 10) + "s"
	case us >= 1e3:
		return strconv.FormatInt(us/1e3, 10) + "ms"
	}
	return strconv.FormatInt(us, 10) + "us"
}

// CountTicks are the decade ticks of the log count axis countFloor ..
// top over length pixels, position 0 being the bottom: "1", "10", "100",
// "1k" …
func CountTicks(top float64, length int) []Tick {
	var out []Tick
	for c := 1.0; c <= top*(1+1e-9); c *= 10 {
		out = append(out, Tick{Pos: int(math.Round(CountPos(c, top) * float64(length-1))), Label: decadeCount(c)})
	}
	return out
}

// decadeCount names a power of ten: "1", "10", "100", "1k" … "100M".
func decadeCount(c float64) string {
	for _, u := range [...]struct {
		v float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if c >= u.v {
			return strconv.FormatFloat(math.Round(c/u.v), 'f', 0, 64) + u.s
		}
	}
	return strconv.FormatFloat(math.Round(c), 'f', 0, 64)
}

// NiceStep is the smallest 1, 2 or 5 × 10^k >= v (v > 0).
func NiceStep(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range [3]float64{1, 2, 5} {
		if m*e >= v*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}

// TimeTicks are the ticks of a simulated-time axis from t0 to t1 seconds
// over length pixels: a step of 1, 2 or 5 × 10^k seconds giving at most
// maxTicks ticks, labelled in seconds with as many decimals as the step
// needs ("12.5s", "0.0350s").
func TimeTicks(t0, t1 float64, length, maxTicks int) []Tick {
	if !(t1 > t0) || length < 2 || maxTicks < 1 {
		return nil
	}
	step := NiceStep((t1 - t0) / float64(maxTicks))
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var out []Tick
	first := math.Ceil(t0/step-1e-9) * step
	for k := 0; ; k++ {
		t := first + float64(k)*step
		if t > t1+step*1e-9 {
			break
		}
		pos := int(math.Round((t - t0) / (t1 - t0) * float64(length-1)))
		out = append(out, Tick{Pos: pos, Label: strconv.FormatFloat(t, 'f', dec, 64) + "s"})
	}
	return out
}

// ValueTicks are ticks at 0, top/2 and top of a linear axis over length
// pixels (position 0 the bottom), labelled by format.
func ValueTicks(top float64, length int, format func([]byte, float64) []byte) []Tick {
	out := make([]Tick, 0, 3)
	for k := 0; k <= 2; k++ {
		v := top * float64(k) / 2
		out = append(out, Tick{Pos: int(math.Round(float64(length-1) * float64(k) / 2)), Label: string(format(nil, v))})
	}
	return out
}

// SpaceLabels clears the labels of ticks that would overlap a kept
// neighbour, when each label of n characters is centred on its tick
// (kept inside 0..length) and needs gap pixels of clearance. The first
// and last ticks are kept first, then the rest from left to right.
// Ticks along a vertical axis use height (GlyphH) instead of the text
// width: pass vertical.
func SpaceLabels(ticks []Tick, length, gap int, vertical bool) []Tick {
	span := func(t Tick) (int, int) {
		w := TextWidth(len(t.Label))
		if vertical {
			w = GlyphH
		}
		a := min(max(t.Pos-w/2, 0), max(length-w, 0))
		return a, a + w
	}
	keep := make([]bool, len(ticks))
	fits := func(i int) bool {
		a, b := span(ticks[i])
		for j := range ticks {
			if !keep[j] || j == i {
				continue
			}
			c, d := span(ticks[j])
			if a < d+gap && c < b+gap {
				return false
			}
		}
		return true
	}
	order := make([]int, 0, len(ticks))
	if len(ticks) > 0 {
		order = append(order, 0)
	}
	if len(ticks) > 1 {
		order = append(order, len(ticks)-1)
	}
	for i := 1; i < len(ticks)-1; i++ {
		order = append(order, i)
	}
	for _, i := range order {
		if ticks[i].Label != "" && fits(i) {
			keep[i] = true
		}
	}
	for i := range ticks {
		if !keep[i] {
			ticks[i].Label = ""
		}
	}
	return ticks
}

// LabelSpan is where SpaceLabels puts tick t's label along the axis.
func LabelSpan(t Tick, length int) (int, int) {
	w := TextWidth(len(t.Label))
	a := min(max(t.Pos-w/2, 0), max(length-w, 0))
	return a, a + w
}

// TickCache keeps an axis's spaced ticks until its inputs change, so a
// frame that draws the same axis again allocates nothing.
type TickCache struct {
	key   [4]float64
	ticks []Tick
	ok    bool
}

// Get returns the cached ticks for key, or nil when they must be made.
func (c *TickCache) Get(key [4]float64) []Tick {
	if c.ok && c.key == key {
		return c.ticks
	}
	return nil
}

// Set caches ticks for key and returns them.
func (c *TickCache) Set(key [4]float64, ticks []Tick) []Tick {
	c.key, c.ticks, c.ok = key, ticks, true
	return ticks
}

// StaggerLabels splits labelled ticks into two rows so that no two labels
// of a row overlap (gap pixels apart): each label goes in the first row
// where it fits; a label that fits in neither is dropped. The result
// holds copies.
func StaggerLabels(ticks []Tick, length, gap int) [2][3]Tick {
	var rows [2][3]Tick
	var used [2][3][2]int
	var nused [2]int
	for _, t := range ticks {
		if t.Label == "" {
			continue
		}
		a, b := LabelSpan(t, length)
		for r := range rows {
			ok := true
			for _, s := range used[r][:nused[r]] {
				if a < s[1]+gap && s[0] < b+gap {
					ok = false
					break
				}
			}
			if ok && nused[r] < len(rows[r]) {
				rows[r][nused[r]] = t
				used[r][nused[r]] = [2]int{a, b}
				nused[r]++
				break
			}
		}
	}
	return rows
}
