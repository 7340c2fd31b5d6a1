package engine

import (
	"reflect"
	"testing"
)

// The per-group load cache makes exactly the choices of the kernel's full
// pass over every CPU: the same forks, run with the cache and with the
// full pass, put every child on the same CPU — forks at one instant (a
// builder's t = 0), forks spread over time while the parents' earlier
// children run, block and decay, on two machine shapes.
func TestGroupLoadCacheMatchesFullPass(t *testing.T) {
	run := func(full bool, spec func() *Sim) [][]int {
		s := spec()
		s.fullForkPass = full
		w := s.AddWorkload("fork", "test")
		var placed [][]int
		// 40 tasks created at t = 0, half spinning, half blocking at once.
		var first []int
		for i := 0; i < 40; i++ {
			p := hog()
			if i%2 == 1 {
				p = ProgramFunc(func(*Ctx) Action { return Block() })
			}
			id, err := s.Spawn(w, TaskSpec{Name: "t0", ParentCPU: i % 3, Program: p})
			if err != nil {
				t.Fatal(err)
			}
			first = append(first, s.tasks[id].cpu)
		}
		placed = append(placed, first)
		// Three forkers forking 60 children each, 7-23 µs apart.
		var fs []*forker
		for i, cost := range []int64{7000, 13000, 23000} {
			f := &forker{n: 60, cost: cost}
			fs = append(fs, f)
			if _, err := s.Spawn(w, TaskSpec{Name: "forker", ParentCPU: i, Program: f}); err != nil {
				t.Fatal(err)
			}
		}
		s.RunUntil(20 * Millisecond)
		for _, f := range fs {
			placed = append(placed, f.cpus)
		}
		return placed
	}
	for name, spec := range map[string]func() *Sim{
		"intel": func() *Sim { return newSim(t, intelSpec(), 1) },
		"small": func() *Sim { return newSim(t, smallSpec(2, 8, 2, 4, "interleaved"), 1) },
	} {
		a, b := run(false, spec), run(true, spec)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: cached placements %v differ from the full pass %v", name, a, b)
		}
		if len(a[1]) != 60 {
			t.Fatalf("%s: forker made %d children", name, len(a[1]))
		}
	}
}
