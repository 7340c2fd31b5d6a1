package engine

import (
	"testing"

	"schedplay/engine/knob"
)

// A sleep timer is a range timer: soft expiry at the requested time, hard
// expiry timer_slack_ns (50 µs) later. The clock event is programmed for
// the hard expiry, so the timer fires there unless a timer interrupt on
// its CPU (here the kept tick at a jiffy boundary) comes between the two,
// which runs the queue and fires it early (__hrtimer_run_queues tests the
// soft expiry). Deterministic: no random slack.
func TestSleepTimerSlack(t *testing.T) {
	for _, c := range []struct {
		name    string
		soft    int64 // the sleep ends here
		viaTick bool
	}{
		{"no interrupt in the slack window: hard expiry", 900 * Microsecond, false},
		{"the tick falls in the slack window", 980 * Microsecond, true},
	} {
		s := newSim(t, withStates(smallSpec(1, 4, 1, 4, "interleaved")), 1)
		w := s.AddWorkload("sleeper", "test")
		step := 0
		tk := spawnOn(t, s, w, "sleeper", 1, 0, ProgramFunc(func(*Ctx) Action {
			step++
			switch step {
			case 1:
				return Run(600 * Microsecond)
			case 2:
				return Sleep(c.soft - s.now)
			}
			return Block()
		}))
		for s.now < 1100*Microsecond && !tk.sleepTimer {
			s.RunUntil(s.now + Microsecond)
		}
		if !tk.sleepTimer {
			t.Fatalf("%s: the task never slept", c.name)
		}
		soft := tk.softExpiry
		hard := soft + s.k.Get(knob.TimerSlackNS)
		tick := (soft/s.tickNS + 1) * s.tickNS
		if (tick <= hard) != c.viaTick {
			t.Fatalf("%s: setup: soft %d hard %d, next tick %d", c.name, soft, hard, tick)
		}
		want := hard
		if c.viaTick {
			want = tick
		}
		s.RunUntil(want - 1)
		if !tk.sleepTimer {
			t.Fatalf("%s: timer fired before %d (soft %d, hard %d)", c.name, want, soft, hard)
		}
		s.RunUntil(want + 1)
		if tk.sleepTimer {
			t.Fatalf("%s: timer still pending at %d (soft %d, hard %d)", c.name, want+1, soft, hard)
		}
	}
}
