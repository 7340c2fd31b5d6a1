package engine

// The event queue is an indexed 4-ary min-heap of "slots". Every source of
// future events owns one slot — each CPU has three (phase end, tick, kick)
// and each task one (timer) — so rescheduling an event moves its slot in
// place instead of leaving stale entries behind, and the queue never
// allocates per event. Ties at the same nanosecond are broken by the order
// in which the events were scheduled, which keeps runs deterministic.
// Entries carry their keys inline (a heap of structs, 4 children per node)
// because comparisons dominate the engine's time on big machines.

type heapEntry struct {
	when int64
	seq  uint64
	slot int32
}

type eventQueue struct {
	heap []heapEntry
	pos  []int32 // per slot: index in heap, -1 when not queued
	next uint64
	// firing is the slot being dispatched plus one (0: none) and
	// firingSeq its entry's seq. The entry stays at the root while it
	// fires, so the common "fire, then schedule the same slot again"
	// costs one sift instead of a pop and a push; finish removes it if
	// nobody rescheduled it.
	firing    int
	firingSeq uint64
}

func (q *eventQueue) grow(nSlots int) {
	for len(q.pos) < nSlots {
		q.pos = append(q.pos, -1)
	}
}

func before(a, b *heapEntry) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (q *eventQueue) up(i int) {
	e := q.heap[i]
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &q.heap[p]) {
			break
		}
		q.heap[i] = q.heap[p]
		q.pos[q.heap[i].slot] = int32(i)
		i = p
	}
	q.heap[i] = e
	q.pos[e.slot] = int32(i)
}

func (q *eventQueue) down(i int) {
	n := len(q.heap)
	e := q.heap[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if before(&q.heap[k], &q.heap[m]) {
				m = k
			}
		}
		if !before(&q.heap[m], &e) {
			break
		}
		q.heap[i] = q.heap[m]
		q.pos[q.heap[i].slot] = int32(i)
		i = m
	}
	q.heap[i] = e
	q.pos[e.slot] = int32(i)
}

// schedule sets slot to fire at when, replacing any earlier setting.
func (q *eventQueue) schedule(slot int, when int64) {
	e := heapEntry{when: when, seq: q.next, slot: int32(slot)}
	q.next++
	if p := q.pos[slot]; p >= 0 {
		old := q.heap[p]
		q.heap[p] = e
		if before(&e, &old) {
			q.up(int(p))
		} else {
			q.down(int(p))
		}
		return
	}
	q.heap = append(q.heap, e)
	q.up(len(q.heap) - 1)
}

// cancel removes slot from the queue if it is queued.
func (q *eventQueue) cancel(slot int) {
	p := int(q.pos[slot])
	if p < 0 {
		return
	}
	q.pos[slot] = -1
	last := len(q.heap) - 1
	if p == last {
		q.heap = q.heap[:last]
		return
	}
	moved := q.heap[last]
	q.heap = q.heap[:last]
	q.heap[p] = moved
	q.pos[moved.slot] = int32(p)
	q.up(p)
	q.down(int(q.pos[moved.slot]))
}

func (q *eventQueue) queued(slot int) bool {
	p := q.pos[slot]
	return p >= 0 && !(slot+1 == q.firing && q.heap[p].seq == q.firingSeq)
}

// whenOf returns the time slot is queued for (meaningful when queued).
func (q *eventQueue) whenOf(slot int) int64 { return q.heap[q.pos[slot]].when }

// peek returns the earliest slot and its time, or -1.
func (q *eventQueue) peek() (int, int64) {
	if len(q.heap) == 0 {
		return -1, 0
	}
	return int(q.heap[0].slot), q.heap[0].when
}

// fire starts dispatching the earliest slot: to everything but the heap it
// is no longer queued. finish must follow.
func (q *eventQueue) fire() int {
	e := &q.heap[0]
	q.firing, q.firingSeq = int(e.slot)+1, e.seq
	return int(e.slot)
}

// finish ends the dispatch begun by fire, dropping the fired entry unless
// the slot was scheduled again meanwhile.
func (q *eventQueue) finish() {
	s := q.firing - 1
	q.firing = 0
	if p := q.pos[s]; p >= 0 && q.heap[p].seq == q.firingSeq {
		q.cancel(s)
	}
}
