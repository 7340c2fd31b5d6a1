package cpuidle

import "testing"

// bdw is intel_idle's Broadwell table (v5.2 bdw_cstates, used for
// BROADWELL_X) behind the POLL state cpuidle_poll_state_init adds.
var bdw = []State{
	{Name: "POLL", Polling: true},
	{Name: "C1", ExitLatencyUS: 2, TargetResidencyUS: 2},
	{Name: "C1E", ExitLatencyUS: 10, TargetResidencyUS: 20},
	{Name: "C3", ExitLatencyUS: 40, TargetResidencyUS: 100},
	{Name: "C6", ExitLatencyUS: 133, TargetResidencyUS: 400},
}

// zen is acpi_idle on an EPYC whose _CST declares C2 at 400 µs.
var zen = []State{
	{Name: "POLL", Polling: true},
	{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 2},
	{Name: "C2", ExitLatencyUS: 400, TargetResidencyUS: 800},
}

const quietUS = 4 * 1000 * 1000

func in(sleepUS int64) Input {
	// Tick running at HZ=1000: the next tick is within a millisecond.
	return Input{SleepLengthNS: sleepUS * 1000, DeltaNextNS: min(sleepUS, 1000) * 1000,
		LatencyReqUS: NoLatencyLimit, TickUS: 1000}
}

// A CPU of a machine that has been quiet for long goes to the deepest
// state and stops the tick when nothing is due for seconds.
func TestMenuQuietGoesDeep(t *testing.T) {
	m := NewMenu(quietUS)
	idx, stop := m.Select(bdw, in(quietUS))
	if idx != 4 || !stop {
		t.Fatalf("quiet CPU chose %s (stop tick %v), want C6 with the tick stopped", bdw[idx].Name, stop)
	}
}

// Short idle periods bring the prediction down through the typical-interval
// detection: menu then predicts their mean and picks C1.
func TestMenuLearnsShortIntervals(t *testing.T) {
	m := NewMenu(quietUS)
	var chosen []string
	for i := 0; i < 8; i++ {
		idx, _ := m.Select(bdw, in(quietUS))
		chosen = append(chosen, bdw[idx].Name)
		// Woken 6 µs after entering, plus the hardware exit (C6: ~100 µs
		// on the box; C1: 1 µs), as the engine reports it.
		exit := int64(1)
		if idx == 4 {
			exit = 100
		}
		m.Reflect(idx, Outcome{ResidencyNS: (6 + exit) * 1000})
	}
	if chosen[0] != "C6" || chosen[7] != "C1" {
		t.Fatalf("choices %v: want C6 at first and C1 once the pattern is learnt", chosen)
	}
	n := 0
	for _, c := range chosen {
		if c == "C6" {
			n++
		}
	}
	if n > 6 {
		t.Fatalf("choices %v: the typical interval should win after at most six short periods", chosen)
	}
}

// menu_update deducts the declared exit latency from a residency longer
// than twice that latency, and halves a shorter one ("the state was
// probably never reached").
func TestMenuMeasuredExcludesExit(t *testing.T) {
	m := NewMenu(quietUS)
	idx, _ := m.Select(bdw, in(quietUS)) // C6, declared exit 133
	m.Reflect(idx, Outcome{ResidencyNS: 500 * 1000})
	m.Select(bdw, in(quietUS))
	if _, iv := m.Predicted(); iv[0] != 500-133 {
		t.Fatalf("measured %d µs, want 500-133", iv[0])
	}
	// One short period after a quiet spell is already "typical": the
	// seven equal long ones are discarded together as outliers
	// (thresh = max-1), so menu now predicts 367 µs and picks C3.
	if idx, _ = m.Select(bdw, in(quietUS)); bdw[idx].Name != "C3" {
		t.Fatalf("after one 367-µs period menu chose %s, want C3", bdw[idx].Name)
	}
	m = NewMenu(quietUS)
	idx, _ = m.Select(bdw, in(quietUS))
	m.Reflect(idx, Outcome{ResidencyNS: 200 * 1000}) // < 2·133
	m.Select(bdw, in(quietUS))
	if _, iv := m.Predicted(); iv[0] != 100 {
		t.Fatalf("measured %v µs, want 200/2 first", iv)
	}
}

// AMD firmware that declares C2 at 400 µs: short periods woken from C2
// (hardware exit ~20 µs) are halved, not reduced by 400, so the governor
// still learns them and leaves C2.
func TestMenuZenDeclaredC2(t *testing.T) {
	m := NewMenu(quietUS)
	last := ""
	for i := 0; i < 10; i++ {
		idx, _ := m.Select(zen, in(quietUS))
		last = zen[idx].Name
		exit := int64(1)
		if idx == 2 {
			exit = 20
		}
		m.Reflect(idx, Outcome{ResidencyNS: (5 + exit) * 1000})
	}
	if last != "C1" {
		t.Fatalf("after ten 5-µs periods menu chose %s, want C1", last)
	}
}

// A timer due sooner than C1's target residency makes menu return POLL at
// once and keep the tick; so does a latency limit below C1's exit.
func TestMenuPollShortcut(t *testing.T) {
	m := NewMenu(quietUS)
	if idx, stop := m.Select(bdw, in(1)); idx != 0 || stop {
		t.Fatalf("timer in 1 µs: chose %s stop=%v, want POLL keeping the tick", bdw[idx].Name, stop)
	}
	m = NewMenu(quietUS)
	i := in(quietUS)
	i.LatencyReqUS = 1
	if idx, _ := m.Select(bdw, i); idx != 0 {
		t.Fatalf("PM QoS 1 µs: chose %s, want POLL", bdw[idx].Name)
	}
	m = NewMenu(quietUS)
	i.LatencyReqUS = 50
	if idx, _ := m.Select(bdw, i); idx != 3 {
		t.Fatalf("PM QoS 50 µs: chose %s, want C3 (C6's 133 µs exit is over the limit)", bdw[idx].Name)
	}
}

// Disabled states are skipped but still registered.
func TestMenuDisabledState(t *testing.T) {
	st := append([]State(nil), bdw...)
	st[4].Disabled = true
	m := NewMenu(quietUS)
	if idx, _ := m.Select(st, in(quietUS)); idx != 3 {
		t.Fatalf("C6 disabled: chose %s, want C3", st[idx].Name)
	}
}

// With the tick kept, a state whose residency the next tick would cut
// short is replaced by a shallower one.
func TestMenuTickKeptCapsState(t *testing.T) {
	m := NewMenu(quietUS)
	for i := 0; i < 8; i++ {
		m.intervals[i] = 300 // a regular 300 µs pattern
	}
	i := in(quietUS)
	i.DeltaNextNS = 150 * 1000 // the tick comes in 150 µs
	idx, stop := m.Select(bdw, i)
	if stop || idx != 3 {
		t.Fatalf("chose %s stop=%v, want C3 (predicted 300 < tick) with the tick kept", bdw[idx].Name, stop)
	}
	i.DeltaNextNS = 50 * 1000
	idx, _ = m.Select(bdw, i)
	if idx != 2 {
		t.Fatalf("tick in 50 µs: chose %s, want C1E (C3's 100 µs does not fit)", bdw[idx].Name)
	}
}

// A tick wakeup of a CPU that expected a long sleep is recorded as a long
// period, which pushes the prediction back up.
func TestMenuTickWakeupRecordsLong(t *testing.T) {
	m := NewMenu(quietUS)
	idx, _ := m.Select(bdw, in(quietUS))
	m.Reflect(idx, Outcome{ResidencyNS: 1000 * 1000, GotTick: true})
	m.Select(bdw, in(quietUS))
	if _, iv := m.Predicted(); iv[0] != 45000 {
		t.Fatalf("tick wakeup measured %d, want 9·MAX_INTERESTING/10 = 45000", iv[0])
	}
}

func TestTEO(t *testing.T) {
	g := NewTEO()
	if idx, stop := g.Select(bdw, in(quietUS)); idx != 4 || !stop {
		t.Fatalf("quiet: chose %s stop=%v, want C6 with the tick stopped", bdw[idx].Name, stop)
	}
	last := ""
	for i := 0; i < 12; i++ {
		g.Reflect(4, Outcome{ResidencyNS: 8 * 1000})
		idx, _ := g.Select(bdw, in(quietUS))
		last = bdw[idx].Name
	}
	if last != "C1" {
		t.Fatalf("after early wakeups teo chose %s, want C1", last)
	}
}

func TestNone(t *testing.T) {
	var g None
	if idx, _ := g.Select(bdw, in(quietUS)); idx != 0 {
		t.Fatalf("none chose %s, want the shallowest", bdw[idx].Name)
	}
	st := append([]State(nil), bdw...)
	st[0].Disabled = true
	if idx, _ := g.Select(st, in(quietUS)); idx != 1 {
		t.Fatalf("none with POLL disabled chose %s, want C1", st[idx].Name)
	}
	if l := PollLimitNS(bdw, 0, 1000000); l != 2000 {
		t.Fatalf("POLL limit %d ns, want C1's 2 µs residency", l)
	}
}

// shortHistory is a menu whose last eight idle periods were 5 µs each.
func shortHistory(v MenuVersion) *Menu {
	m := NewMenuVersion(v, quietUS)
	for i := range m.intervals {
		m.intervals[i] = 5
	}
	return m
}

// With the tick already stopped (a second selection in one idle period)
// and a timer 300 µs away, v5.2 and 6.1 replace the short typical interval
// by the time to that timer and pick C3; 6.6 does not look at the timer
// when the typical interval is at most RESIDENCY_THRESHOLD_NS (15 µs), so
// its "time to the closest timer" is KTIME_MAX and it picks C6.
func TestMenu66SkipsTimerBelowResidencyThreshold(t *testing.T) {
	stopped := in(300)
	stopped.DeltaNextNS, stopped.TickStopped = stopped.SleepLengthNS, true
	want := map[MenuVersion]string{Menu52: "C3", Menu61: "C3", Menu66: "C6"}
	for v, name := range want {
		idx, _ := shortHistory(v).Select(bdw, stopped)
		if bdw[idx].Name != name {
			t.Errorf("menu %d: tick stopped, timer in 300 µs, 5 µs history: chose %s, want %s", v, bdw[idx].Name, name)
		}
	}
	// With the tick running and a timer 1 µs away (before C1 pays off),
	// v5.2 and 6.1 take the state-0 shortcut (POLL); 6.6 never saw the
	// timer and prefers C1 to polling.
	want = map[MenuVersion]string{Menu52: "POLL", Menu61: "POLL", Menu66: "C1"}
	for v, name := range want {
		idx, stop := shortHistory(v).Select(bdw, in(1))
		if bdw[idx].Name != name || stop {
			t.Errorf("menu %d: timer in 1 µs: chose %s (stop tick %v), want %s with the tick kept", v, bdw[idx].Name, stop, name)
		}
	}
}

// The state-0 shortcut: with no POLL state, a timer before state 1 pays
// off means state 0; v5.2 keeps the tick, 6.x lets it stop (state 0 does
// not poll).
func TestMenu6xShortcutStopsTick(t *testing.T) {
	noPoll := bdw[1:]
	for v, wantStop := range map[MenuVersion]bool{Menu52: false, Menu61: true, Menu66: true} {
		idx, stop := NewMenuVersion(v, quietUS).Select(noPoll, in(10))
		if idx != 0 || stop != wantStop {
			t.Errorf("menu %d: timer in 10 µs: chose %s (stop tick %v), want C1, stop %v", v, noPoll[idx].Name, stop, wantStop)
		}
	}
}

// 6.x keeps the prediction when the latency limit ends the state loop:
// with a 50 µs PM QoS limit and 5 ms to the next timer, C3 is the deepest
// allowed; v5.2 then predicts C3's 100 µs residency and keeps the tick,
// 6.x keeps its 5 ms prediction and stops it.
func TestMenu6xLatencyBreakKeepsPrediction(t *testing.T) {
	lim := in(5000)
	lim.LatencyReqUS = 50
	for v, wantStop := range map[MenuVersion]bool{Menu52: false, Menu61: true, Menu66: true} {
		idx, stop := NewMenuVersion(v, quietUS).Select(bdw, lim)
		if bdw[idx].Name != "C3" || stop != wantStop {
			t.Errorf("menu %d: 50 µs limit: chose %s (stop tick %v), want C3, stop %v", v, bdw[idx].Name, stop, wantStop)
		}
	}
}
