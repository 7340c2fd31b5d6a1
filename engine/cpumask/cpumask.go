// Package cpumask is a fixed-size CPU bitset with the iteration orders the
// kernel's wakeup path depends on, notably for_each_cpu_wrap: visit every set
// bit once, starting at a given CPU and wrapping around.
package cpumask

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Mask is a set of CPU ids in [0, Len). The zero value is an empty mask of
// length 0; use New for a mask that can hold n CPUs.
type Mask struct {
	n     int
	words []uint64
}

// New returns an empty mask for CPUs 0..n-1.
func New(n int) Mask {
	return Mask{n: n, words: make([]uint64, (n+63)/64)}
}

// Of returns a mask of length n holding the given CPUs.
func Of(n int, cpus ...int) Mask {
	m := New(n)
	for _, c := range cpus {
		m.Set(c)
	}
	return m
}

// Range returns a mask of length n holding CPUs lo..hi inclusive.
func Range(n, lo, hi int) Mask {
	m := New(n)
	for c := lo; c <= hi; c++ {
		m.Set(c)
	}
	return m
}

// Len is the number of CPUs the mask can hold.
func (m Mask) Len() int { return m.n }

// Set adds cpu to the mask.
func (m Mask) Set(cpu int) { m.words[cpu>>6] |= 1 << uint(cpu&63) }

// Clear removes cpu from the mask.
func (m Mask) Clear(cpu int) { m.words[cpu>>6] &^= 1 << uint(cpu&63) }

// Test reports whether cpu is in the mask.
func (m Mask) Test(cpu int) bool {
	if cpu < 0 || cpu >= m.n {
		return false
	}
	return m.words[cpu>>6]&(1<<uint(cpu&63)) != 0
}

// Weight is the number of CPUs in the mask (cpumask_weight).
func (m Mask) Weight() int {
	w := 0
	for _, x := range m.words {
		w += bits.OnesCount64(x)
	}
	return w
}

// Empty reports whether no CPU is set.
func (m Mask) Empty() bool {
	for _, x := range m.words {
		if x != 0 {
			return false
		}
	}
	return true
}

// Clone returns an independent copy.
func (m Mask) Clone() Mask {
	c := Mask{n: m.n, words: make([]uint64, len(m.words))}
	copy(c.words, m.words)
	return c
}

// CopyFrom overwrites m with o; both must have the same length.
func (m Mask) CopyFrom(o Mask) { copy(m.words, o.words) }

// And sets m = a ∩ b (all three the same length).
func (m Mask) And(a, b Mask) {
	for i := range m.words {
		m.words[i] = a.words[i] & b.words[i]
	}
}

// AndNot removes every CPU of o from m.
func (m Mask) AndNot(o Mask) {
	for i := range m.words {
		m.words[i] &^= o.words[i]
	}
}

// Or adds every CPU of o to m.
func (m Mask) Or(o Mask) {
	for i := range m.words {
		m.words[i] |= o.words[i]
	}
}

// Intersects reports whether m and o share a CPU.
func (m Mask) Intersects(o Mask) bool {
	for i := range m.words {
		if m.words[i]&o.words[i] != 0 {
			return true
		}
	}
	return false
}

// SubsetOf reports whether every CPU of m is in o.
func (m Mask) SubsetOf(o Mask) bool {
	for i := range m.words {
		if m.words[i]&^o.words[i] != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether m and o hold the same CPUs.
func (m Mask) Equal(o Mask) bool {
	if m.n != o.n {
		return false
	}
	for i := range m.words {
		if m.words[i] != o.words[i] {
			return false
		}
	}
	return true
}

// Next returns the first CPU >= from in the mask, or -1.
func (m Mask) Next(from int) int {
	if from < 0 {
		from = 0
	}
	if from >= m.n {
		return -1
	}
	wi := from >> 6
	w := m.words[wi] & (^uint64(0) << uint(from&63))
	for {
		if w != 0 {
			c := wi<<6 + bits.TrailingZeros64(w)
			if c >= m.n {
				return -1
			}
			return c
		}
		wi++
		if wi >= len(m.words) {
			return -1
		}
		w = m.words[wi]
	}
}

// First returns the lowest CPU in the mask, or -1.
func (m Mask) First() int { return m.Next(0) }

// NextWrap returns the first CPU at or after from, wrapping to the start of
// the mask, or -1 when the mask is empty.
func (m Mask) NextWrap(from int) int {
	if c := m.Next(from); c >= 0 {
		return c
	}
	return m.Next(0)
}

// Wrap is an iterator implementing the kernel's for_each_cpu_wrap(cpu, mask,
// start): every CPU of the mask exactly once, in increasing order starting at
// start (or the next set CPU after it) and wrapping around. It allocates
// nothing.
type Wrap struct {
	m       Mask
	start   int
	cur     int
	wrapped bool
	done    bool
}

// IterWrap starts a wrap-around iteration over m at start.
func (m Mask) IterWrap(start int) Wrap {
	if start < 0 || start >= m.n {
		start = 0
	}
	return Wrap{m: m, start: start, cur: start - 1}
}

// Next returns the next CPU and true, or -1 and false at the end. Like the
// kernel's iterator, it visits the CPUs present in the mask at each step, so
// clearing CPUs of the mask during iteration skips them.
func (w *Wrap) Next() (int, bool) {
	if w.done {
		return -1, false
	}
	if !w.wrapped {
		c := w.m.Next(w.cur + 1)
		if c >= 0 {
			w.cur = c
			return c, true
		}
		w.wrapped = true
		w.cur = -1
	}
	c := w.m.Next(w.cur + 1)
	if c < 0 || c >= w.start {
		w.done = true
		return -1, false
	}
	w.cur = c
	return c, true
}

// String renders the mask in the kernel's cpulist format, e.g. "0-3,44-47".
func (m Mask) String() string {
	var b strings.Builder
	c := m.First()
	for c >= 0 {
		end := c
		for m.Test(end + 1) {
			end++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c))
		if end > c {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(end))
		}
		c = m.Next(end + 1)
	}
	return b.String()
}

// Parse reads a cpulist ("0-3,8,10-11") into a mask of length n. An empty
// string is an error: callers decide what "no list" means.
func Parse(s string, n int) (Mask, error) {
	m := New(n)
	if strings.TrimSpace(s) == "" {
		return m, fmt.Errorf("empty CPU list")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi := part, part
		if i := strings.IndexByte(part, '-'); i >= 0 {
			lo, hi = part[:i], part[i+1:]
		}
		a, err := strconv.Atoi(lo)
		if err != nil {
			return m, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		b, err := strconv.Atoi(hi)
		if err != nil {
			return m, fmt.Errorf("CPU list %q: %q is not a CPU number", s, hi)
		}
		if a > b {
			return m, fmt.Errorf("CPU list %q: range %d-%d is backwards", s, a, b)
		}
		if a < 0 || b >= n {
			return m, fmt.Errorf("CPU list %q: CPU %d out of range 0-%d", s, max(b, a), n-1)
		}
		for c := a; c <= b; c++ {
			m.Set(c)
		}
	}
	return m, nil
}
