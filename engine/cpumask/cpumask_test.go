package cpumask

import (
	"reflect"
	"testing"
)

func collect(m Mask, start int) []int {
	var out []int
	it := m.IterWrap(start)
	for c, ok := it.Next(); ok; c, ok = it.Next() {
		out = append(out, c)
	}
	return out
}

func TestIterWrapVisitsEveryCPUOnceFromStart(t *testing.T) {
	m := Of(130, 1, 5, 64, 100, 129)
	cases := map[int][]int{
		0:   {1, 5, 64, 100, 129},
		5:   {5, 64, 100, 129, 1},
		6:   {64, 100, 129, 1, 5},
		129: {129, 1, 5, 64, 100},
		-3:  {1, 5, 64, 100, 129},
	}
	for start, want := range cases {
		if got := collect(m, start); !reflect.DeepEqual(got, want) {
			t.Errorf("start %d: got %v want %v", start, got, want)
		}
	}
	if got := collect(New(8), 3); got != nil {
		t.Errorf("empty mask visited %v", got)
	}
}

func TestIterWrapSkipsCPUsClearedDuringIteration(t *testing.T) {
	m := Range(8, 0, 7)
	it := m.IterWrap(2)
	var got []int
	for c, ok := it.Next(); ok; c, ok = it.Next() {
		got = append(got, c)
		if c == 2 {
			m.Clear(3) // a core's siblings are removed as select_idle_core does
			m.Clear(0)
		}
	}
	if want := []int{2, 4, 5, 6, 7, 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestParseAndString(t *testing.T) {
	m, err := Parse("0-3, 8,10-11", 16)
	if err != nil {
		t.Fatal(err)
	}
	if m.String() != "0-3,8,10-11" || m.Weight() != 7 {
		t.Fatalf("got %q weight %d", m.String(), m.Weight())
	}
	for _, bad := range []string{"", "x", "3-1", "0-16", "1,,2"} {
		if _, err := Parse(bad, 16); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSetOps(t *testing.T) {
	a := Of(70, 1, 2, 65)
	b := Of(70, 2, 65, 69)
	c := New(70)
	c.And(a, b)
	if c.String() != "2,65" {
		t.Fatalf("and = %s", c)
	}
	c.AndNot(Of(70, 2))
	if c.String() != "65" || !c.SubsetOf(b) || a.SubsetOf(b) || !a.Intersects(b) {
		t.Fatalf("andnot/subset wrong: %s", c)
	}
	if a.NextWrap(66) != 1 || a.Next(66) != -1 {
		t.Fatal("NextWrap")
	}
}
