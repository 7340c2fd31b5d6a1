package playground

import (
	"testing"
	"time"
)

// A runner at a finite speed that has caught up with real time says so
// (the page's worker then sleeps until the next frame instead of running
// again at once, which spun a core at any finite speed); as fast as
// possible, it is always behind.
func TestRunnerBehind(t *testing.T) {
	a, err := BuildArm(Default(), 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1 µs of simulated time per wall second: a few ms of wall time
	// ask for nanoseconds of simulation, done long before the budget.
	r := NewRunner(a, 1, 1e-6, false)
	for i := 0; i < 3; i++ {
		if !r.Run(50 * time.Millisecond) {
			t.Fatal("an active runner did nothing")
		}
		if r.Behind() {
			t.Fatalf("run %d: behind at 1e-6× real time", i)
		}
		time.Sleep(2 * time.Millisecond)
	}
	r.Speed = 0 // as fast as possible
	r.Resync()
	if !r.Run(time.Millisecond) || !r.Behind() {
		t.Error("as fast as possible: not behind after a 1 ms budget")
	}
	r.Paused = true
	if r.Run(time.Millisecond) || r.Behind() {
		t.Error("paused: ran or behind")
	}
}
