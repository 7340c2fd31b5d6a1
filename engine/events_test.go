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
		exp = append(exp, ev{s, w, q.heap[q.pos[s]].seq})
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
		q.pop()
	}
	if s, _ := q.peek(); s != -1 {
		t.Fatalf("queue not empty: %d", s)
	}
}
