package engine

import "math/bits"

// The event queue is an indexed 4-ary min-heap of "slots". Every source of
// future events owns one slot — each CPU has three (phase end, tick, kick)
// and each task one (timer) — so rescheduling an event moves its slot in
// place instead of leaving stale entries behind, and the queue never
// allocates per event. Ties at the same nanosecond are broken by the order
// in which the events were scheduled, which keeps runs deterministic.
// Entries carry their keys inline (a heap of structs, 4 children per node)
// because comparisons dominate the engine's time on big machines.

// slotBits is how many low bits of a heap entry's key hold its slot:
// enough for 3 slots per CPU and one per task at the largest machine and
// task count (3×2048 + 65,536 < 2^17). The other 47 bits hold the
// schedule order, which lasts 1.4×10^14 schedule calls — days of wall
// time at any speed the engine reaches, and more than an hour of
// simulated 2048-CPU machine can ask for.
const (
	slotBits = 17
	slotMask = 1<<slotBits - 1
	maxSeq   = 1<<(64-slotBits) - 1
)

// heapEntry is 16 bytes, so a node's four children fill one 64-byte cache
// line. key = seq<<slotBits | slot: seqs are unique, so comparing keys
// compares schedule order and never reaches the slot bits.
type heapEntry struct {
	when int64
	key  uint64
}

func (e *heapEntry) slot() int { return int(e.key & slotMask) }

type eventQueue struct {
	heap []heapEntry
	// pos is per slot: its index in heap (≥ 0), -2-i when it waits at
	// ring position i of the tick FIFO, -1 when not queued.
	pos  []int32
	next uint64
	// The tick FIFO: busy CPUs' ticks all fall on the jiffy grid and
	// each is rescheduled one jiffy after it fires, later than (or at the
	// same time as, but scheduled after) every tick already waiting, so
	// they arrive in (time, schedule order) order. scheduleTick appends
	// such an entry to this ring instead of sifting it through the heap;
	// the queue's earliest event is the earlier of the heap's root and
	// the ring's head. An entry that would not keep the ring sorted goes
	// to the heap, so the order of events is the heap's order whatever
	// is scheduled where. A cancelled or rescheduled ring entry becomes
	// a tombstone (slot bits tombSlot) until it reaches the head.
	fifo  []heapEntry // a power of two long (or empty)
	fhead int         // ring position of the first entry
	flen  int         // entries in the ring, tombstones included
	flive int         // live entries in the ring
	// fspare is the previous ring, reused when a ring full of
	// tombstones is compacted: CPUs going idle and back many times a
	// jiffy leave a tombstone each time, so the ring is compacted rather
	// than grown, and stays at most twice the live ticks long.
	fspare []heapEntry
	// firing is the slot being dispatched plus one (0: none) and
	// firingKey its entry's key. The entry stays at the root (or the
	// ring's head) while it fires, so the common "fire, then schedule the
	// same slot again" costs one sift instead of a pop and a push; finish
	// removes it if nobody rescheduled it.
	firing    int
	firingKey uint64
}

// tombSlot marks a dead entry of the tick FIFO; no real slot has it.
const tombSlot = slotMask

func (q *eventQueue) grow(nSlots int) {
	if nSlots > tombSlot {
		panic("engine: more event slots than slotBits can name")
	}
	for len(q.pos) < nSlots {
		q.pos = append(q.pos, -1)
	}
}

// less is 1 when a comes before b — earlier, or at the same time and
// scheduled first — else 0. It is computed without branches (the borrow
// of a 128-bit subtraction) and returned as a number so that down can
// pick the smallest of four children by arithmetic: which child that is
// is a coin toss the branch predictor loses, and the compiler does not
// turn those selects into conditional moves by itself.
func less(a, b *heapEntry) uint64 {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(uint64(a.when)^1<<63, uint64(b.when)^1<<63, borrow)
	return borrow
}

// before is less as a bool, written as plain comparisons: through less it
// costs just over the inliner's budget under WebAssembly (where bits.Sub64
// is not an intrinsic), and the heap calls it on every step.
func before(a, b *heapEntry) bool {
	return a.when < b.when || a.when == b.when && a.key < b.key
}

func (q *eventQueue) up(i int) {
	h := q.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		q.pos[h[i].slot()] = int32(i)
		i = p
	}
	h[i] = e
	q.pos[e.slot()] = int32(i)
}

func (q *eventQueue) down(i int) {
	h := q.heap
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		var m int
		if c+4 <= n {
			// A full node: a tournament of two pairs, by arithmetic
			// (indices masked to the node: no bounds checks).
			g := (*[4]heapEntry)(h[c : c+4])
			a := less(&g[1], &g[0])
			b := 2 + less(&g[3], &g[2])
			a += (b - a) * less(&g[b&3], &g[a&3])
			m = c + int(a)
		} else {
			m = c
			for k := c + 1; k < n; k++ {
				if before(&h[k], &h[m]) {
					m = k
				}
			}
		}
		if !before(&h[m], &e) {
			break
		}
		h[i] = h[m]
		q.pos[h[i].slot()] = int32(i)
		i = m
	}
	h[i] = e
	q.pos[e.slot()] = int32(i)
}

// schedule sets slot to fire at when, replacing any earlier setting.
func (q *eventQueue) schedule(slot int, when int64) {
	if q.next > maxSeq {
		panic("engine: event sequence numbers exhausted")
	}
	e := heapEntry{when: when, key: q.next<<slotBits | uint64(slot)}
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
	} else if p < -1 {
		q.fifoKill(slot, p)
	}
	q.heap = append(q.heap, e)
	q.up(len(q.heap) - 1)
}

// scheduleTick is schedule for a tick on the jiffy grid: the entry goes
// to the tick FIFO when that keeps the FIFO sorted, else to the heap.
// Either way the slot fires at the same place in the order of events.
func (q *eventQueue) scheduleTick(slot int, when int64) {
	if q.flen > 0 && when < q.fifo[(q.fhead+q.flen-1)&(len(q.fifo)-1)].when {
		q.schedule(slot, when)
		return
	}
	if q.next > maxSeq {
		panic("engine: event sequence numbers exhausted")
	}
	if p := q.pos[slot]; p >= 0 {
		q.cancel(slot)
	} else if p < -1 {
		q.fifoKill(slot, p)
	}
	e := heapEntry{when: when, key: q.next<<slotBits | uint64(slot)}
	q.next++
	if q.flen == len(q.fifo) {
		q.fifoRebuild()
	}
	i := (q.fhead + q.flen) & (len(q.fifo) - 1)
	q.fifo[i] = e
	q.flen++
	q.flive++
	q.pos[slot] = int32(-2 - i)
}

// fifoKill turns slot's FIFO entry (pos p) into a tombstone.
func (q *eventQueue) fifoKill(slot int, p int32) {
	q.fifo[-2-p].key |= tombSlot
	q.pos[slot] = -1
	q.flive--
}

// fifoRebuild copies the full ring without its tombstones (which keeps it
// sorted) into a ring of the same length when at most half of it is live,
// else into one twice as long.
func (q *eventQueue) fifoRebuild() {
	size := max(16, 2*len(q.fifo))
	if len(q.fifo) > 0 && q.flive <= len(q.fifo)/2 {
		size = len(q.fifo)
	}
	nf := q.fspare
	if len(nf) != size {
		nf = make([]heapEntry, size)
	}
	n := 0
	for k := 0; k < q.flen; k++ {
		e := q.fifo[(q.fhead+k)&(len(q.fifo)-1)]
		if e.key&slotMask == tombSlot {
			continue
		}
		nf[n] = e
		q.pos[e.slot()] = int32(-2 - n)
		n++
	}
	q.fifo, q.fspare, q.fhead, q.flen = nf, q.fifo, 0, n
}

// fifoHead drops the tombstones at the head of the FIFO and returns its
// first live entry, or nil.
func (q *eventQueue) fifoHead() *heapEntry {
	for q.flen > 0 {
		e := &q.fifo[q.fhead]
		if e.key&slotMask != tombSlot {
			return e
		}
		q.fhead = (q.fhead + 1) & (len(q.fifo) - 1)
		q.flen--
	}
	return nil
}

// top returns the earliest entry (the heap's root or the FIFO's head), or
// nil when nothing is queued.
func (q *eventQueue) top() *heapEntry {
	f := q.fifoHead()
	if len(q.heap) == 0 {
		return f
	}
	if f != nil && before(f, &q.heap[0]) {
		return f
	}
	return &q.heap[0]
}

// cancel removes slot from the queue if it is queued.
func (q *eventQueue) cancel(slot int) {
	p := int(q.pos[slot])
	if p < 0 {
		if p < -1 {
			q.fifoKill(slot, int32(p))
		}
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
	q.pos[moved.slot()] = int32(p)
	q.up(p)
	q.down(int(q.pos[moved.slot()]))
}

// entry returns slot's queued entry, or nil.
func (q *eventQueue) entry(slot int) *heapEntry {
	switch p := q.pos[slot]; {
	case p >= 0:
		return &q.heap[p]
	case p < -1:
		return &q.fifo[-2-p]
	}
	return nil
}

func (q *eventQueue) queued(slot int) bool {
	e := q.entry(slot)
	return e != nil && !(slot+1 == q.firing && e.key == q.firingKey)
}

// whenOf returns the time slot is queued for (meaningful when queued).
func (q *eventQueue) whenOf(slot int) int64 { return q.entry(slot).when }

// peek returns the earliest slot and its time, or -1.
func (q *eventQueue) peek() (int, int64) {
	e := q.top()
	if e == nil {
		return -1, 0
	}
	return e.slot(), e.when
}

// fire starts dispatching the earliest slot: to everything but the queue
// it is no longer queued. finish must follow.
func (q *eventQueue) fire() int { return q.fireEntry(q.top()) }

// fireEntry is fire for e, the entry top has just returned.
func (q *eventQueue) fireEntry(e *heapEntry) int {
	q.firing, q.firingKey = e.slot()+1, e.key
	return e.slot()
}

// finish ends the dispatch begun by fire, dropping the fired entry unless
// the slot was scheduled again meanwhile.
func (q *eventQueue) finish() {
	s := q.firing - 1
	q.firing = 0
	if e := q.entry(s); e != nil && e.key == q.firingKey {
		q.cancel(s)
	}
}
