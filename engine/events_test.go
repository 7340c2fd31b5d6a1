package engine

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestEventQueueOrdersByTimeThenScheduleOrder(t *testing.T) {
	var q eventQueue
	q.grow(200)
	r := rand.New(rand.NewPCG(1, 2))
	want := map[int]int64{}
	for i := 0; i < 2000; i++ {
		s := r.IntN(200)
		switch r.IntN(3) {
		case 0, 1:
			w := int64(r.IntN(50))
			q.schedule(s, w)
			want[s] = w
		case 2:
			q.cancel(s)
			delete(want, s)
		}
	}
	type ev struct {
		slot int
		when int64
		seq  uint64
	}
	var exp []ev
	for s, w := range want {
		exp = append(exp, ev{s, w, q.heap[q.pos[s]].key})
	}
	sort.Slice(exp, func(i, j int) bool {
		if exp[i].when != exp[j].when {
			return exp[i].when < exp[j].when
		}
		return exp[i].seq < exp[j].seq
	})
	for i, e := range exp {
		s, w := q.peek()
		if s != e.slot || w != e.when {
			t.Fatalf("event %d: got slot %d@%d want %d@%d", i, s, w, e.slot, e.when)
		}
		q.fire()
		q.finish()
	}
	if s, _ := q.peek(); s != -1 {
		t.Fatalf("queue not empty: %d", s)
	}
}

// A fired slot is not queued while it fires; scheduling it again from its
// own handler keeps it, with the new time, and otherwise finish drops it.
func TestEventQueueFireThenReschedule(t *testing.T) {
	var q eventQueue
	q.grow(3)
	q.schedule(0, 10)
	q.schedule(1, 20)
	if s := q.fire(); s != 0 {
		t.Fatalf("fired slot %d, want 0", s)
	}
	if q.queued(0) {
		t.Fatal("slot 0 reports queued while it fires")
	}
	q.schedule(0, 30)
	if !q.queued(0) || q.whenOf(0) != 30 {
		t.Fatal("slot 0 rescheduled from its handler is not queued at 30")
	}
	q.finish()
	if s, w := q.peek(); s != 1 || w != 20 {
		t.Fatalf("next %d@%d, want 1@20", s, w)
	}
	q.fire()
	q.finish()
	if !q.queued(0) || q.queued(1) {
		t.Fatal("after firing slot 1 without rescheduling: want only slot 0 queued")
	}
	if s, w := q.peek(); s != 0 || w != 30 {
		t.Fatalf("next %d@%d, want 0@30", s, w)
	}
}

// Ticks scheduled through the tick FIFO, mixed with heap events, cancels
// and reschedules from the firing handler, fire in exactly the order of
// (time, schedule order), as if everything were in the heap.
func TestEventQueueTickFIFOKeepsTheOrder(t *testing.T) {
	const slots, tickNS = 128, 100
	var q eventQueue
	q.grow(slots)
	r := rand.New(rand.NewPCG(3, 4))
	type ent struct {
		when int64
		seq  uint64
	}
	want := map[int]ent{}
	var seq uint64
	now := int64(0)
	set := func(s int, w int64, tick bool) {
		if tick {
			q.scheduleTick(s, w)
		} else {
			q.schedule(s, w)
		}
		want[s] = ent{w, seq}
		seq++
	}
	for i := 0; i < 200000; i++ {
		if len(want) == 0 || r.IntN(2) == 0 {
			s := r.IntN(slots)
			switch r.IntN(4) {
			case 0:
				q.cancel(s)
				delete(want, s)
			case 1:
				set(s, now+int64(r.IntN(3*tickNS)), false)
			default:
				set(s, (now/tickNS+1+int64(r.IntN(2)))*tickNS, true)
			}
			continue
		}
		best := -1
		for s, e := range want {
			if best < 0 || e.when < want[best].when || e.when == want[best].when && e.seq < want[best].seq {
				best = s
			}
		}
		s, w := q.peek()
		if s != best || w != want[best].when {
			t.Fatalf("step %d: got slot %d@%d want %d@%d", i, s, w, best, want[best].when)
		}
		now = w
		q.fire()
		if q.queued(s) {
			t.Fatalf("slot %d queued while it fires", s)
		}
		delete(want, s)
		switch r.IntN(3) {
		case 0:
			set(s, now+tickNS, true)
		case 1:
			set(s, now+int64(r.IntN(2*tickNS)), false)
		}
		if o := r.IntN(slots); r.IntN(4) == 0 && o != s {
			q.cancel(o)
			delete(want, o)
		}
		q.finish()
		for s, e := range want {
			if !q.queued(s) || q.whenOf(s) != e.when {
				t.Fatalf("step %d: slot %d not queued at %d", i, s, e.when)
			}
		}
	}
}
