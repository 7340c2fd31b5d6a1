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

// runTo(t) on a page already past t (the page plays from load, so a
// "Run to 0.4 s" comes late) answers with the results at t: the worker
// replays the arm (Rewound) and they equal a fresh run to t, the CLI's
// numbers. Before, runTo(t < now) returned the results at now, and the
// teaching test's "t = 0.4 s" p99 were of whatever time the click came.
func TestRunnerRewoundRunsToTheSameResults(t *testing.T) {
	st := Default()
	for arm := 0; arm < 2; arm++ {
		fresh, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := NewRunner(fresh, 1, 0, true)
		want.RunTo(400e6)
		wantRes, err := want.Results()
		if err != nil {
			t.Fatal(err)
		}
		played, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRunner(played, 7, 0, false)
		r.Limit = 5e9
		r.RunTo(1300e6)
		past, _ := r.Results()
		if string(past) == string(wantRes) {
			t.Fatal("the results at 1.3 s equal those at 0.4 s: the test shows nothing")
		}
		back, err := r.Rewound(st, arm)
		if err != nil {
			t.Fatal(err)
		}
		if back.Arm.Sim.Now() != 0 || back.Seq != 7 || back.Limit != 5e9 || !back.Paused {
			t.Errorf("arm %d: rewound at %d, seq %d, limit %d, paused %v", arm, back.Arm.Sim.Now(), back.Seq, back.Limit, back.Paused)
		}
		back.RunTo(400e6)
		got, err := back.Results()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(wantRes) {
			t.Errorf("arm %d: the rewound run's results at 0.4 s differ from a fresh run's:\n%s\n---\n%s", arm, got, wantRes)
		}
	}
}
