package engine

// The event queue is an indexed binary heap of "slots". Every source of
// future events owns one slot — each CPU has three (phase end, tick, kick)
// and each task one (timer or pending activation) — so rescheduling an event
// moves its slot in place instead of leaving stale entries behind, and the
// queue never allocates per event. Ties at the same nanosecond are broken
// by the order in which the events were scheduled, which keeps runs
// deterministic.

type slotKind uint8

const (
	slotNone slotKind = iota
	slotCPUPhase
	slotCPUTick
	slotCPUKick
	slotTaskTimer
)

type eventQueue struct {
	when []int64
	seq  []uint64
	pos  []int32 // index in heap, -1 when not queued
	heap []int32
	next uint64
}

func (q *eventQueue) grow(nSlots int) {
	for len(q.when) < nSlots {
		q.when = append(q.when, 0)
		q.seq = append(q.seq, 0)
		q.pos = append(q.pos, -1)
	}
}

func (q *eventQueue) less(i, j int) bool {
	a, b := q.heap[i], q.heap[j]
	if q.when[a] != q.when[b] {
		return q.when[a] < q.when[b]
	}
	return q.seq[a] < q.seq[b]
}

func (q *eventQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]] = int32(i)
	q.pos[q.heap[j]] = int32(j)
}

func (q *eventQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *eventQueue) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.swap(i, m)
		i = m
	}
}

// schedule sets slot to fire at when, replacing any earlier setting.
func (q *eventQueue) schedule(slot int, when int64) {
	q.when[slot] = when
	q.seq[slot] = q.next
	q.next++
	if p := q.pos[slot]; p >= 0 {
		q.up(int(p))
		q.down(int(q.pos[slot]))
		return
	}
	q.pos[slot] = int32(len(q.heap))
	q.heap = append(q.heap, int32(slot))
	q.up(len(q.heap) - 1)
}

// cancel removes slot from the queue if it is queued.
func (q *eventQueue) cancel(slot int) {
	p := int(q.pos[slot])
	if p < 0 {
		return
	}
	last := len(q.heap) - 1
	if p != last {
		q.swap(p, last)
	}
	q.heap = q.heap[:last]
	q.pos[slot] = -1
	if p != last {
		moved := q.heap[p]
		q.up(p)
		q.down(int(q.pos[moved]))
	}
}

func (q *eventQueue) queued(slot int) bool { return q.pos[slot] >= 0 }

// peek returns the earliest slot and its time, or -1.
func (q *eventQueue) peek() (int, int64) {
	if len(q.heap) == 0 {
		return -1, 0
	}
	s := q.heap[0]
	return int(s), q.when[s]
}

// pop removes and returns the earliest slot.
func (q *eventQueue) pop() int {
	s := int(q.heap[0])
	q.cancel(s)
	return s
}
