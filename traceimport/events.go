package traceimport

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
)

// What the import holds while it reads: the events, which must be merged
// by time before they are built (a trace's per-CPU buffers need not come
// in time order), at 64 bytes each whatever the line's length, their
// strings (comms, states) kept once in a table.

// strID names a string of a strTable; 0 is "".
type strID uint32

// strTable keeps each distinct string once: a trace names the same few
// comms and states on every line.
type strTable struct {
	ids  map[string]strID
	strs []string
}

// newStrTable returns a table whose id 0, an event's zero value, is "".
func newStrTable() *strTable {
	t := &strTable{ids: map[string]strID{}}
	t.id("")
	return t
}

// id returns s's id, adding s when new.
func (t *strTable) id(s string) strID {
	if id, ok := t.ids[s]; ok {
		return id
	}
	// s is often a piece of the line it came from: keep only the piece.
	s = strings.Clone(s)
	id := strID(len(t.strs))
	t.ids[s] = id
	t.strs = append(t.strs, s)
	return id
}

func (t *strTable) str(id strID) string { return t.strs[id] }

// eventChunk is how many events an eventLog chunk holds (256 KB): a
// growing log allocates chunk by chunk and never copies what it holds.
const eventChunk = 1 << 12

// eventLog holds events in the order added, in fixed-size chunks.
type eventLog struct {
	chunks [][]event
	n      int
}

func (l *eventLog) add(ev *event) {
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == eventChunk {
		l.chunks = append(l.chunks, make([]event, 0, eventChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, *ev)
	l.n++
}

// byTime orders events by time, then by order (Chrome only: switches
// before wakeups at the same time).
func byTime(a, b *event) int {
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c
	}
	return cmp.Compare(a.order, b.order)
}

// eachByTime calls fn for every event in time order, keeping the order
// added on ties (a stable sort): each chunk is sorted stably, then the
// chunks are merged, the earlier chunk first on ties. It stops when fn
// returns false. The log is reordered in place; nothing is copied.
func (l *eventLog) eachByTime(fn func(*event) bool) {
	for _, c := range l.chunks {
		slices.SortStableFunc(c, func(a, b event) int { return byTime(&a, &b) })
	}
	m := &chunkMerge{}
	for i, c := range l.chunks {
		if len(c) > 0 {
			m.heads = append(m.heads, chunkHead{chunk: c, idx: i})
		}
	}
	heap.Init(m)
	for len(m.heads) > 0 {
		h := &m.heads[0]
		if !fn(&h.chunk[h.pos]) {
			return
		}
		if h.pos++; h.pos == len(h.chunk) {
			heap.Pop(m)
		} else {
			heap.Fix(m, 0)
		}
	}
}

// chunkMerge is a heap of the chunks' next events.
type chunkMerge struct{ heads []chunkHead }

type chunkHead struct {
	chunk []event
	pos   int
	idx   int // the chunk's place in the log: breaks ties
}

func (m *chunkMerge) Len() int { return len(m.heads) }
func (m *chunkMerge) Less(i, j int) bool {
	a, b := &m.heads[i], &m.heads[j]
	if c := byTime(&a.chunk[a.pos], &b.chunk[b.pos]); c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}
func (m *chunkMerge) Swap(i, j int) { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *chunkMerge) Push(x any)    { m.heads = append(m.heads, x.(chunkHead)) }
func (m *chunkMerge) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}
