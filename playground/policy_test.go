package playground

import (
	"strings"
	"testing"
	"time"

	"schedplay/examples"
	"schedplay/internal/json"
	"schedplay/scenario"
)

func examplePolicy(t *testing.T, file string) Policy {
	t.Helper()
	for _, p := range examples.Policies() {
		if p.File == file {
			return Policy{Name: p.File, Src: p.Src}
		}
	}
	t.Fatalf("no example %s", file)
	return Policy{}
}

// A policy travels in the link, compressed, and comes back byte for
// byte; the link without it is the link of before.
func TestPolicyLinkRoundTrip(t *testing.T) {
	st := Default()
	before := st.Encode()
	st.Policies[1] = examplePolicy(t, "rotating-window.star")
	link := st.Encode()
	if !strings.Contains(link, "&b.policy=rotating-window.star:") || !strings.HasPrefix(link, before) {
		t.Fatalf("link %q does not add b.policy to %q", link, before)
	}
	if n := len(link) - len(before); n > len(st.Policies[1].Src) {
		t.Errorf("the policy takes %d bytes in the link, more than its %d-byte source", n, len(st.Policies[1].Src))
	}
	got, err := Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if got.Policies[1] != st.Policies[1] || got.Policies[0].IsSet() {
		t.Fatalf("policies after the round trip: %+v", got.Policies)
	}
	if got.Encode() != link {
		t.Errorf("re-encoded link differs")
	}
	if c := got.Config(1); c.WakePolicy == nil || c.WakePolicy.Name() != "rotating-window.star" {
		t.Errorf("arm B's config has no wake policy")
	}
	if c := got.Config(0); c.WakePolicy != nil {
		t.Errorf("arm A's config has a wake policy")
	}
	// ab=0 drops arm B, and its policy with it.
	if one, err := Parse(link + "&ab=0"); err != nil || one.Policies[1].IsSet() {
		t.Errorf("ab=0: %v, %+v", err, one.Policies[1])
	}
}

// A link's policy past the limits is refused naming the limit.
func TestPolicyLinkLimits(t *testing.T) {
	for _, tc := range []struct{ frag, want string }{
		{"policy=x.star:" + strings.Repeat("A", MaxPolicyLinkBytes+1), "at most 49152"},
		{"policy=x.star:" + encodePolicySrc(strings.Repeat("#", MaxPolicyBytes+1)), "64 KiB"},
		{"policy=x.star:!!", "not base64url"},
		{"policy=a%20b:" + encodePolicySrc("x"), "only letters"},
		{"policy=x.star:", "empty policy"},
	} {
		if _, err := Parse(tc.frag); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: %v, want %q", tc.frag, err, tc.want)
		}
	}
	if err := CheckPolicy(Policy{Name: "big.star", Src: strings.Repeat("#", MaxPolicyBytes+1)}); err == nil || !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("CheckPolicy of a big policy: %v", err)
	}
}

func buildArm(t *testing.T, st State, arm int) *Runner {
	t.Helper()
	a, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewRunner(a, 1, 0, true)
}

// A link whose policy does not compile opens: the arm is built, says the
// error with line and column, and does not run; the other arm runs.
func TestPolicyCompileErrorStopsOnlyItsArm(t *testing.T) {
	st := Default()
	st.Policies[1] = Policy{Name: "bad.star", Src: "def select_idle_sibling(p, prev, target):\n    return target +\n"}
	st, err := Parse(st.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b := buildArm(t, st, 1)
	if err := b.Arm.Err(); err == nil || !strings.HasPrefix(err.Error(), "bad.star:2:") {
		t.Fatalf("arm B's error: %v", err)
	}
	b.RunTo(50e6)
	if now := b.Arm.Sim.Now(); now != 0 {
		t.Errorf("arm B ran to %d", now)
	}
	var s Snapshot
	b.Snapshot(&s, false, -1)
	var d Snapshot
	if err := d.Decode(s.Encode(nil)); err != nil || !strings.HasPrefix(d.PolicyErr, "bad.star:2:") {
		t.Errorf("snapshot's policy error: %q (%v)", d.PolicyErr, err)
	}
	a := buildArm(t, st, 0)
	a.RunTo(50e6)
	if a.Arm.Err() != nil || a.Arm.Sim.Now() != 50e6 {
		t.Errorf("arm A: %v at %d", a.Arm.Err(), a.Arm.Sim.Now())
	}
}

// A policy that fails at run time stops its arm with the error naming
// the line; the page's results are the partial ones.
func TestPolicyRuntimeErrorStopsItsArm(t *testing.T) {
	st := Default()
	st.Policies[1] = Policy{Name: "peek.star", Src: "def select_idle_sibling(p, prev, target):\n    if idle(target):\n        return target\n    return prev\n"}
	b := buildArm(t, st, 1)
	if b.Arm.Err() != nil {
		t.Fatal(b.Arm.Err())
	}
	b.RunTo(50e6)
	err := b.Arm.Err()
	if err == nil || !strings.Contains(err.Error(), "peek.star:2:") || !strings.Contains(err.Error(), "probe it first") {
		t.Fatalf("arm B's error: %v", err)
	}
	if b.Active() {
		t.Error("a stopped arm is active")
	}
	if _, err := b.Results(); err != nil {
		t.Error(err)
	}
}

// The page's arm with an example policy gives the numbers scenario.Run
// gives with the same policy (the CLI's).
func TestPolicyArmMatchesScenario(t *testing.T) {
	st := Default()
	st.Policies[1] = examplePolicy(t, "rotating-window.star")
	b := buildArm(t, st, 1)
	b.RunTo(100e6)
	got, err := b.Results()
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.Config(1)
	cfg.Duration = 100e6
	res, err := scenario.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res.SimWallS = 0
	want, _ := json.Marshal(res)
	if string(got) != string(want) {
		t.Errorf("page arm and scenario.Run differ:\n%s\n%s", got, want)
	}
	if !strings.Contains(string(got), `"policy":"rotating-window.star"`) {
		t.Errorf("results do not name the policy: %.300s", got)
	}
}

// The decision panel lists a policy's probes and the CPU it returned.
func TestPolicyDecisions(t *testing.T) {
	st := Default()
	st.Policies[1] = examplePolicy(t, "rotating-window.star")
	b := buildArm(t, st, 1)
	b.RunTo(200e6)
	log := b.Log.Last(LogSize)
	if len(log) == 0 {
		t.Fatal("no decisions")
	}
	x := log[len(log)-1]
	if len(x.Stages) == 0 || x.Stages[0].Stage != "policy" || !strings.Contains(x.Stages[0].Result, "rotating-window.star probed") {
		t.Errorf("stages: %+v", x.Stages)
	}
	for _, p := range x.Probes {
		if p.Stage != "policy" && !strings.HasPrefix(p.Stage, "kernel.select_idle_") {
			t.Errorf("probe %+v: not the policy's nor a kernel stage's", p)
		}
	}
}

// Each probe of a policy's decision names the code that made it: the
// policy's own probe, a kernel stage it called, or, around a
// select_idle_cpu hook, the era's own select_idle_sibling.
func TestPolicyProbeLabels(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"kernel.star", []string{"policy", "kernel.select_idle_cpu"}},
		{"kernel-cpu.star", []string{"kernel", "kernel.select_idle_cpu"}},
	} {
		st := Default()
		st.Policies[1] = examplePolicy(t, c.file)
		b := buildArm(t, st, 1)
		b.RunTo(200e6)
		seen := map[string]int{}
		for _, x := range b.Log.Last(LogSize) {
			for _, p := range x.Probes {
				seen[p.Stage]++
			}
		}
		for _, w := range c.want {
			if seen[w] == 0 {
				t.Errorf("%s: no probe labelled %q in %v", c.file, w, seen)
			}
		}
		for l := range seen {
			if l != "policy" && l != "kernel" && !strings.HasPrefix(l, "kernel.select_idle_") && !strings.HasPrefix(l, "policy select_idle_") {
				t.Errorf("%s: probe label %q", c.file, l)
			}
		}
	}
}

// The page's policy view names the steps each arm's policy replaces.
func TestPolicyViewHooks(t *testing.T) {
	st := Default()
	st.Policies[0] = examplePolicy(t, "rotating-window.star")
	st.Policies[1] = examplePolicy(t, "newidle-llc-only.star")
	pv := st.PolicyViews()
	if got := strings.Join(pv[0].Hooks, ","); got != "select_idle_sibling" {
		t.Errorf("rotating-window.star replaces %q, want select_idle_sibling", got)
	}
	if got := strings.Join(pv[1].Hooks, ","); got != "newidle_balance" {
		t.Errorf("newidle-llc-only.star replaces %q, want newidle_balance", got)
	}
}
