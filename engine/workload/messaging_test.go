package workload

import (
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// msgSim builds a simulation of tp with default knobs.
func msgSim(t testing.TB, tp *machine.Topology, seed uint64, debug bool) *engine.Sim {
	s, err := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: seed, Debug: debug})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// msgBuilder does what AddSpec does up to the kind's build function, so a
// test can call addHackbench & co. and keep their internal state.
func msgBuilder(t testing.TB, s *engine.Sim, text string) *Builder {
	t.Helper()
	sp, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBuilder(sp, s.Topology().NCPU)
	if err != nil {
		t.Fatal(err)
	}
	b.Sim = s
	b.ID = s.AddWorkload(sp.Kind, sp.Kind)
	return b
}

// msgRunToFinish steps s until every finite workload has finished, then a
// little longer so the last tasks' exits complete.
func msgRunToFinish(t testing.TB, s *engine.Sim, limit int64) {
	t.Helper()
	for !s.AllFinished() && s.Now() < limit && s.Step() {
	}
	if !s.AllFinished() {
		t.Fatalf("not finished after %.3f s", float64(s.Now())/1e9)
	}
	s.RunUntil(s.Now() + engine.Millisecond)
}

func TestMessagingThreadCounts(t *testing.T) {
	tp := small(t, 1, 4, 2, 4, machine.Interleaved)
	cases := []struct {
		spec  string
		tasks int
	}{
		{"hackbench", 2*10*20 + 1},
		{"hackbench:g=3,f=5,T=1", 2*3*5 + 1},
		{"hackbench:g=2,f=7,p=1", 2*2*7 + 1},
		{"pipe", 2},
		{"pipe:T=1", 2},
		{"netperf", 2},
		{"netperf:n=5", 10},
		{"uperf:n=4", 8},
		{"tbench:n=3", 6},
	}
	for _, c := range cases {
		s := msgSim(t, tp, 1, false)
		if _, err := Add(s, c.spec, ""); err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		// hackbench's parent forks its children itself: let it.
		s.RunUntil(100 * engine.Millisecond)
		if got := s.Workloads()[0].Tasks; got != c.tasks {
			t.Errorf("%s: %d tasks, want %d", c.spec, got, c.tasks)
		}
	}
}

// Every message a hackbench sender writes is read by its receiver — g·f²·l
// in all — in every mode; every task (receivers, senders, the parent)
// exits; no channel keeps data or a waiter; the makespan sample is the
// completion minus the start barrier. The 1-CPU and 2-CPU runs overflow
// the channels, so blocked writers are woken through both wake rules.
func TestHackbenchConservation(t *testing.T) {
	machines := []*machine.Topology{
		small(t, 1, 1, 1, 1, machine.Interleaved),
		small(t, 1, 1, 2, 1, machine.Interleaved),
		small(t, 2, 2, 2, 2, machine.Interleaved),
	}
	for mi, tp := range machines {
		for _, mode := range []string{"p=0,T=0", "p=1,T=0", "p=0,T=1", "p=1,T=1"} {
			const g, f, l, sz = 2, 4, 400, 100
			s := msgSim(t, tp, uint64(mi+1), mi == 2)
			hb, err := addHackbench(msgBuilder(t, s, "hackbench:g=2,f=4,l=400,"+mode))
			if err != nil {
				t.Fatal(err)
			}
			msgRunToFinish(t, s, 60*engine.Second)
			want := int64(g * f * f * l)
			if hb.Sent != want || hb.Received != want {
				t.Errorf("machine %d %s: sent %d received %d, want %d", mi, mode, hb.Sent, hb.Received, want)
			}
			var writerWakes int64
			for gi, row := range hb.chans {
				for j, ch := range row {
					if ch.BytesIn != f*l*sz || ch.BytesOut != f*l*sz || ch.Queued() != 0 {
						t.Errorf("machine %d %s: channel %d.%d in %d out %d queued %d, want %d through", mi, mode, gi, j, ch.BytesIn, ch.BytesOut, ch.Queued(), f*l*sz)
					}
					if ch.WaitingReaders()+ch.WaitingWriters() != 0 || ch.Charge() != 0 || ch.Slots() != 0 {
						t.Errorf("machine %d %s: channel %d.%d left readers %d writers %d charge %d slots %d", mi, mode, gi, j,
							ch.WaitingReaders(), ch.WaitingWriters(), ch.Charge(), ch.Slots())
					}
					writerWakes += ch.WriterWakes
				}
			}
			if mi == 0 && writerWakes == 0 {
				t.Errorf("machine %d %s: no writer ever blocked on a full channel (l=%d should overflow it)", mi, mode, l)
			}
			for id := 0; id < s.NumTasks(); id++ {
				if st := s.Task(engine.TaskID(id)).State(); st != engine.TaskExited {
					t.Errorf("machine %d %s: task %s left %v", mi, mode, s.Task(engine.TaskID(id)).Name, st)
				}
			}
			r := s.Workloads()[0]
			if r.Ops != want {
				t.Errorf("machine %d %s: %d ops counted, want %d messages", mi, mode, r.Ops, want)
			}
			if r.RequestLatency.Count != 1 || hb.startAt <= 0 || r.DoneAt != hb.doneAt ||
				r.RequestLatency.Max != (hb.doneAt-hb.startAt)/engine.Microsecond {
				t.Errorf("machine %d %s: makespan sample %+v, start %d done %d (workload done %d)", mi, mode, r.RequestLatency, hb.startAt, hb.doneAt, r.DoneAt)
			}
			t.Logf("machine %d %s: makespan %.3f ms (setup %.1f µs), writer wakes %d", mi, mode,
				float64(hb.doneAt-hb.startAt)/1e6, float64(hb.startAt)/1e3, writerWakes)
		}
	}
}

// A small hackbench on a small machine, with the engine's invariants
// checked after every event, finishes and the simulation says so.
func TestSmallHackbenchFinishesUnderInvariants(t *testing.T) {
	s := msgSim(t, small(t, 1, 2, 2, 2, machine.Contiguous), 3, true)
	if _, err := Add(s, "hackbench:g=1,l=10", ""); err != nil {
		t.Fatal(err)
	}
	for !s.AllFinished() && s.Now() < 10*engine.Second && s.Step() {
	}
	if !s.AllFinished() {
		t.Fatalf("hackbench g=1 l=10 did not finish by %.3f s", float64(s.Now())/1e9)
	}
	r := s.Workloads()[0]
	if r.Ops != 1*20*20*10 || r.DoneAt <= 0 {
		t.Fatalf("ops %d done %d", r.Ops, r.DoneAt)
	}
}

// Pipe capacity: 100-byte writes merge 40 to a page, so 640 fit in the
// 16 buffers; the 641st writer waits until a read releases a page (the
// 40th read), and a reader waits on an empty pipe until the next write.
func TestChannelPipeRules(t *testing.T) {
	ch := NewChannel(PipeChan, "p")
	var wakes []engine.TaskID
	reader, w1, w2 := &Waiter{ID: 1}, &Waiter{ID: 2}, &Waiter{ID: 3}
	if _, block := ch.Read(reader, 100, &wakes); !block || ch.WaitingReaders() != 1 {
		t.Fatalf("read of an empty pipe did not block")
	}
	n := 0
	for {
		done, block := ch.Write(w1, 100, &wakes)
		if block {
			break
		}
		if done != 100 {
			t.Fatalf("partial small write %d", done)
		}
		n++
		if n == 1 && (len(wakes) != 1 || wakes[0] != 1) {
			t.Fatalf("first write into the empty pipe woke %v, want the reader", wakes)
		}
		if n > 1 && len(wakes) != 1 {
			t.Fatalf("write %d woke %v, want no one new", n, wakes)
		}
	}
	if n != 640 || ch.Slots() != 16 || ch.WaitingWriters() != 1 {
		t.Fatalf("%d messages fit (%d slots, %d waiting writers), want 640, 16, 1", n, ch.Slots(), ch.WaitingWriters())
	}
	if _, block := ch.Write(w2, 100, &wakes); !block {
		t.Fatalf("second writer did not block")
	}
	wakes = wakes[:0]
	for i := 1; i <= 40; i++ {
		if done, block := ch.Read(reader, 100, &wakes); block || done != 100 {
			t.Fatalf("read %d: %d %v", i, done, block)
		}
		if i < 40 && len(wakes) != 0 {
			t.Fatalf("read %d woke %v before a page was released", i, wakes)
		}
	}
	if len(wakes) != 1 || wakes[0] != 2 {
		t.Fatalf("releasing a page of the full pipe woke %v, want the first writer (exclusive)", wakes)
	}
	// The woken writer fills the new slot and, having slept, passes the
	// wakeup on only if room is left: it is not.
	wakes = wakes[:0]
	if done, block := ch.Write(w1, 100, &wakes); block || done != 100 || len(wakes) != 0 {
		t.Fatalf("woken writer: %d %v wakes %v", done, block, wakes)
	}
}

// AF_UNIX: a 100-byte skb costs 768 bytes of sndbuf, so 278 messages are
// admitted (the charge must be below 212992 for another); every blocked
// writer is woken once reads bring the charge to a quarter of sndbuf.
func TestChannelUnixRules(t *testing.T) {
	if ts := unixTruesize(100); ts != 768 {
		t.Fatalf("truesize of a 100-byte skb %d, want 768", ts)
	}
	ch := NewChannel(UnixChan, "u")
	var wakes []engine.TaskID
	w := []*Waiter{{ID: 1}, {ID: 2}, {ID: 3}}
	reader := &Waiter{ID: 9}
	n := 0
	for {
		_, block := ch.Write(w[0], 100, &wakes)
		if block {
			break
		}
		n++
	}
	if n != 278 {
		t.Fatalf("%d messages admitted, want 278", n)
	}
	for _, x := range w[1:] {
		if _, block := ch.Write(x, 100, &wakes); !block {
			t.Fatalf("writer %d not blocked", x.ID)
		}
	}
	reads := 0
	for len(wakes) == 0 {
		if _, block := ch.Read(reader, 100, &wakes); block {
			t.Fatalf("reader blocked with data queued")
		}
		reads++
	}
	if left := n - reads; left != 69 || len(wakes) != 3 {
		t.Fatalf("writers woken with %d messages left (want 69), woke %v (want all three)", left, wakes)
	}
	// A sleeping reader is woken by the next write.
	for ch.Queued() > 0 {
		ch.Read(reader, 100, &wakes)
	}
	wakes = wakes[:0]
	if _, block := ch.Read(reader, 100, &wakes); !block {
		t.Fatalf("reader of an empty socket not blocked")
	}
	if _, block := ch.Write(w[0], 100, &wakes); block || len(wakes) != 1 || wakes[0] != 9 {
		t.Fatalf("write to a socket with a sleeping reader woke %v", wakes)
	}
}

// Client/server pairs: every request sent is served and answered; the
// client has received every answer but at most the one in flight; each
// completed transaction is counted once (tbench: by its payload) and has
// a latency sample.
func TestPingPongRequestsMatchResponses(t *testing.T) {
	tp := small(t, 1, 4, 2, 4, machine.Interleaved)
	for i, spec := range []string{"netperf:n=3", "netperf:n=2,req=64,resp=8192,think=20", "uperf:n=5", "tbench:n=3"} {
		s := msgSim(t, tp, uint64(i+1), i == 0)
		sp, _ := Parse(spec)
		b := msgBuilder(t, s, spec)
		var pp *pingPong
		var err error
		switch sp.Kind {
		case "netperf":
			pp, err = addPingPong(b, ppConfig{n: b.Int("n"), think: b.Int("think") * engine.Microsecond,
				pick: fixedOp(b.Int("req"), b.Int("resp")), fixedReq: b.Int("req"), processes: true, name: "netperf"})
		case "uperf":
			pp, err = addPingPong(b, ppConfig{n: b.Int("n"), pick: fixedOp(90, 90), fixedReq: 90, name: "uperf"})
		case "tbench":
			pp, err = addPingPong(b, ppConfig{n: b.Int("n"), pick: tbenchPick, processes: true, bytes: true,
				clientNS: tbenchClientNS, serverNS: tbenchServerNS, name: "tbench"})
		}
		if err != nil {
			t.Fatal(err)
		}
		s.RunUntil(50 * engine.Millisecond)
		var completed int64
		for k, p := range pp.pairs {
			if p.Completed < 100 {
				t.Errorf("%s pair %d: only %d transactions in 50 ms", spec, k, p.Completed)
			}
			if d := p.Requests - p.Completed; d < 0 || d > 1 {
				t.Errorf("%s pair %d: %d requests sent, %d responses received", spec, k, p.Requests, p.Completed)
			}
			if p.Served > p.Requests || p.Responses > p.Served || p.Completed > p.Responses || p.Served < p.Completed {
				t.Errorf("%s pair %d: sent %d served %d answered %d received %d", spec, k, p.Requests, p.Served, p.Responses, p.Completed)
			}
			if p.c2s.BytesIn-p.c2s.BytesOut < 0 || p.s2c.BytesIn-p.s2c.BytesOut < 0 {
				t.Errorf("%s pair %d: more bytes read than written", spec, k)
			}
			completed += p.Completed
		}
		r := s.Workloads()[0]
		if r.RequestLatency.Count != completed {
			t.Errorf("%s: %d latency samples for %d transactions", spec, r.RequestLatency.Count, completed)
		}
		if sp.Kind != "tbench" && r.Ops != completed {
			t.Errorf("%s: %d ops for %d transactions", spec, r.Ops, completed)
		}
		if sp.Kind == "tbench" && (r.Ops <= completed || r.Ops > completed*65536) {
			t.Errorf("tbench: %d payload bytes for %d ops", r.Ops, completed)
		}
		t.Logf("%s: %d transactions, latency p50 %d µs p99 %d µs, wake p50 %d µs", spec, completed,
			r.RequestLatency.P50, r.RequestLatency.P99, r.WakeupLatency.P50)
	}
}

// The NetBench mix reproduces client.txt's mean transfer sizes.
func TestTbenchMixMeans(t *testing.T) {
	var rw, rn, ww, wn int64
	for _, o := range tbenchOps {
		switch {
		case strings.HasPrefix(o.name, "ReadX"):
			rw += o.weight * o.payload
			rn += o.weight
		case strings.HasPrefix(o.name, "WriteX"):
			ww += o.weight * o.payload
			wn += o.weight
		}
	}
	if m := float64(rw) / float64(rn); m < 11800 || m > 12000 {
		t.Errorf("mean ReadX %.0f B, want ≈ 11.9 KB", m)
	}
	if m := float64(ww) / float64(wn); m < 25500 || m > 25900 {
		t.Errorf("mean WriteX %.0f B, want ≈ 25.7 KB", m)
	}
	if rn != 124000 || wn != 40000 || tbenchTotal < 450000 || tbenchTotal > 465000 {
		t.Errorf("op counts ReadX %d WriteX %d total %d, want 124 k, 40 k, ≈458 k", rn, wn, tbenchTotal)
	}
}

// perf bench sched pipe: l round trips, each counted once; the run
// finishes with both tasks gone. On one CPU each round trip takes at
// least two context switches and one wakeup, and process mode pays the
// two address-space switches per round trip that thread mode does not.
func TestPipeRoundTrips(t *testing.T) {
	const l = 2000
	perTrip := map[string]float64{}
	for _, ncpu := range []int{1, 4} {
		for _, mode := range []string{"T=0", "T=1"} {
			tp := small(t, 1, ncpu, 1, ncpu, machine.Interleaved)
			s := msgSim(t, tp, 1, ncpu == 4)
			pb, err := addPipeBench(msgBuilder(t, s, "pipe:l=2000,"+mode))
			if err != nil {
				t.Fatal(err)
			}
			msgRunToFinish(t, s, 10*engine.Second)
			r := s.Workloads()[0]
			if pb.Trips != l || r.Ops != l {
				t.Errorf("%d CPUs %s: %d trips, %d ops, want %d", ncpu, mode, pb.Trips, r.Ops, l)
			}
			for _, tk := range pb.tasks {
				if st := s.Task(tk.id).State(); st != engine.TaskExited {
					t.Errorf("%d CPUs %s: task %d left %v", ncpu, mode, tk.nr, st)
				}
			}
			if r.WakeupLatency.Count < l {
				t.Errorf("%d CPUs %s: %d wakeups measured, want ≥ %d", ncpu, mode, r.WakeupLatency.Count, l)
			}
			us := float64(r.DoneAt) / l / 1e3
			perTrip[itoa(ncpu)+mode] = us
			t.Logf("%d CPUs %s: %.2f µs per round trip, wake p50 %d µs", ncpu, mode, us, r.WakeupLatency.P50)
		}
	}
	k := knob.Defaults()
	floor := float64(2*k.Get(knob.CtxSwitchNS)+k.Get(knob.WakeNS)) / 1e3
	if perTrip["1T=1"] < floor {
		t.Errorf("one-CPU round trip %.2f µs below two switches and a wakeup (%.2f µs)", perTrip["1T=1"], floor)
	}
	mmSwitch := float64(k.Get(knob.MMSwitchNS))
	if d := perTrip["1T=0"] - perTrip["1T=1"]; d < 0.9*2*mmSwitch/1e3 || d > 1.1*2*mmSwitch/1e3+0.1 {
		t.Errorf("process mode costs %.2f µs more per round trip than thread mode, want two mm switches (%.2f µs)", d, 2*mmSwitch/1e3)
	}
}

// Pipes and sockets wake with WF_SYNC: every wakeup of a pipe, an AF_UNIX
// or a TCP run is sync, including hackbench's herd release and process
// exits (__wake_up_parent); only thread exits wake the joiner without it.
func TestMessagingWakeupsAreSync(t *testing.T) {
	tp := small(t, 2, 2, 2, 2, machine.Interleaved)
	for _, spec := range []string{"hackbench:g=2,f=4,l=50", "hackbench:g=2,f=4,l=50,p=1", "hackbench:g=2,f=4,l=50,T=1",
		"pipe:l=500", "pipe:l=500,T=1", "netperf:n=2", "uperf:n=2", "tbench:n=2"} {
		s := msgSim(t, tp, 2, false)
		var sync, plain, plainToParent int64
		s.SetHooks(engine.Hooks{OnWakeup: func(d *engine.Decision) {
			if d.Sync {
				sync++
				return
			}
			plain++
			if n := s.Task(d.Task).Name; n == "hackbench/main" || n == "pipe/1" {
				plainToParent++
			}
		}})
		if _, err := Add(s, spec, ""); err != nil {
			t.Fatal(err)
		}
		for !s.AllFinished() && s.Now() < 20*engine.Millisecond && s.Step() {
		}
		threads := strings.Contains(spec, "T=1")
		// At least the herd release of 16 children, or 100 round trips.
		if sync < 16 {
			t.Errorf("%s: only %d sync wakeups", spec, sync)
		}
		switch {
		case threads && (plain == 0 || plain != plainToParent):
			t.Errorf("%s: %d plain wakeups, %d of them thread exits waking the joiner; want only and at least one such", spec, plain, plainToParent)
		case !threads && plain != 0:
			t.Errorf("%s: %d wakeups without WF_SYNC", spec, plain)
		}
	}
}

// Keys are checked: wrong values name the key and what is allowed, and
// unknown keys list the valid ones.
func TestMessagingBadKeys(t *testing.T) {
	cases := []struct {
		spec string
		want []string
	}{
		{"hackbench:p=2", []string{"p", "0..1"}},
		{"hackbench:T=yes", []string{"T", "yes", "0..1"}},
		{"hackbench:g=0", []string{"g", "1..4096"}},
		{"hackbench:fds=20", []string{`"fds"`, "g, f, l, s, p, T"}},
		{"pipe:l=0", []string{"l", "1..1000000000"}},
		{"pipe:T=3", []string{"T", "0..1"}},
		{"netperf:n=0", []string{"n", "1..16384"}},
		{"netperf:req=-1", []string{"req", "1..1048576"}},
		{"netperf:rr=1", []string{`"rr"`, "n, req, resp, think"}},
		{"uperf:size=0", []string{"size", "1..1048576"}},
		{"tbench:clients=4", []string{`"clients"`, "n"}},
	}
	for _, c := range cases {
		err := Check(c.spec, 8)
		if err == nil {
			t.Errorf("%s: accepted", c.spec)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.spec, err, w)
			}
		}
	}
	s := msgSim(t, small(t, 1, 2, 1, 2, machine.Interleaved), 1, false)
	if _, err := Add(s, "hackbench:g=4096,f=1024", ""); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("oversized hackbench: %v", err)
	}
}

// The same seed gives the same completion; the hackbench on a big box
// also spreads over it (more than one CPU busy).
func TestHackbenchDeterministic(t *testing.T) {
	run := func(seed uint64) (int64, int64) {
		s := msgSim(t, intel(t), seed, false)
		if _, err := Add(s, "hackbench:g=2,l=20", ""); err != nil {
			t.Fatal(err)
		}
		msgRunToFinish(t, s, 10*engine.Second)
		busy, _ := s.CPUTimes()
		used := int64(0)
		for _, b := range busy {
			if b > 0 {
				used++
			}
		}
		return s.Workloads()[0].DoneAt, used
	}
	a, used := run(4)
	b, _ := run(4)
	if a != b {
		t.Fatalf("same seed, completion %d vs %d", a, b)
	}
	if used < 40 {
		t.Errorf("hackbench g=2 (80 tasks) ran on only %d of 88 CPUs", used)
	}
}

// A message moves cache lines from the CPU that wrote them to the one
// that reads them: a read notes the control lines (the other side wrote
// them last) and each skb's rounds of misses, and notes nothing when
// writer and reader share a CPU — a pinned ping-pong pays no transfers.
func TestChannelNotesCrossCPULines(t *testing.T) {
	var wakes []engine.TaskID
	for _, kind := range []ChanKind{UnixChan, PipeChan} {
		ch := NewChannel(kind, "c")
		w := &Waiter{ID: 1, cpu: 3}
		r := &Waiter{ID: 2, cpu: 3}
		ch.Write(w, 100, &wakes)
		ch.Read(r, 100, &wakes)
		if len(r.fetched) != 0 {
			t.Errorf("%v: one CPU, read noted %v", kind, r.fetched)
		}
		r.cpu = 7
		ch.Write(w, 100, &wakes)
		ch.Read(r, 100, &wakes)
		// ctl lines, then the buffer: for a socket the sk_buff, payload
		// + shared info (420 B = 7 lines, 2 rounds of 4), the remote
		// free; for a pipe the pipe_buffer and 2 lines of page (1 round).
		want := int32(ctlLines + 1 + 2 + 1)
		if kind == PipeChan {
			want = ctlLines + 1 + 1
		}
		if len(r.fetched) != 1 || r.fetched[0] != (lineFetch{3, want}) {
			t.Errorf("%v: cross-CPU read noted %v, want [{3 %d}]", kind, r.fetched, want)
		}
		// The next write fetches the control lines back from the reader.
		if ch.ctlCPU != 8 {
			t.Errorf("%v: control lines last written by CPU %d, want 7", kind, ch.ctlCPU-1)
		}
	}
}
