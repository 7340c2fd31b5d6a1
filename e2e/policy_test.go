//go:build !js

package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"schedplay/playground"
)

// policyStep is issue 29's page: pick "Policy: rotating window
// (example)" for arm B, edit one line, apply, and see arm B's numbers
// change while arm A's stay; the share link reopens the edited policy
// with the same numbers; a syntax error is shown with line:col and does
// not run; a run-time error stops arm B with a banner while A runs.
func policyStep(t *testing.T, p *page) {
	const base = "#w=schbench:m=4,t=20&SIS_CORE=false&ab=1&b.SIS_CORE=false"
	runTo := func(sec float64) map[string]result {
		js, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`sim.runTo(%g)`, sec), chromedp.EvalAwaitPromise))
		if err != nil {
			p.fatalf("sim.runTo(%g): %v", sec, err)
		}
		var arms map[string]result
		if err := json.Unmarshal([]byte(js), &arms); err != nil {
			p.fatalf("sim.runTo result: %v\n%s", err, js)
		}
		return arms
	}
	p.setHash(base)
	p.waitFor("the A/B link", `sim.state().ab && sim.state().arms.length === 2 && !sim.state().building && sim.state().policies.length === 2`, 20*time.Second)
	p.waitFor("the editor", `!!document.getElementById("policy-select-1")`, 5*time.Second)
	p.do("pick the rotating window for arm B", chromedp.Evaluate[chromedp.Void](`(() => {
		const s = document.getElementById("policy-select-1");
		s.value = "rotating-window.star";
		s.dispatchEvent(new Event("change"));
	})()`))
	p.waitFor("arm B's policy", `sim.state().policies[1].name === "rotating-window.star" && !sim.state().building`, 20*time.Second)
	p.waitFor("the step it replaces, named", `document.getElementById("policy-name-1").textContent.includes("in place of select_idle_sibling")`, 5*time.Second)
	before := runTo(1)
	p.do("edit the window: two cores → eight", chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("policy-text-1");
		ta.value = ta.value.replace("limit = 2 * floor", "limit = 8 * floor");
		ta.dispatchEvent(new Event("input"));
		document.getElementById("policy-apply-1").click();
	})()`))
	p.waitFor("the build", `!sim.state().building && sim.policy(1).src.includes("limit = 8 * floor")`, 20*time.Second)
	after := runTo(1)
	if !reflect.DeepEqual(before["A"], after["A"]) {
		t.Errorf("arm A changed with arm B's policy:\n%s\n%s", jsonString(before["A"]), jsonString(after["A"]))
	}
	if reflect.DeepEqual(before["B"].Search, after["B"].Search) {
		t.Errorf("arm B's search did not change with its window: %s", jsonString(after["B"].Search))
	}
	t.Logf("(policy) arm B select_idle_cpu before/after the edit: %s / %s", jsonString(before["B"].Search), jsonString(after["B"].Search))

	// The share link reopens the edited policy.
	link := eval[string](p, `sim.state().link`)
	if !strings.Contains(link, "b.policy=rotating-window.star:") {
		t.Fatalf("link has no policy: %s", link)
	}
	p.setHash(base)
	p.waitFor("the link without a policy", `sim.state().policies[1].name === "" && !sim.state().building`, 20*time.Second)
	p.setHash(link)
	p.waitFor("the policy link", `sim.state().policies[1].name === "rotating-window.star" && !sim.state().building`, 20*time.Second)
	p.waitFor("the editor to show the edited policy", `document.getElementById("policy-text-1").value.includes("limit = 8 * floor")`, 5*time.Second)
	again := runTo(1)
	if !reflect.DeepEqual(again, after) {
		t.Errorf("the share link's numbers differ:\n%s\n%s", jsonString(again), jsonString(after))
	}

	// A syntax error: line:col inline, nothing applied.
	sum := eval[string](p, `sim.state().policies[1].sum`)
	p.do("a syntax error", chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("policy-text-1");
		ta.value = "def select_idle_sibling(p, prev, target):\n    return target +\n";
		document.getElementById("policy-apply-1").click();
	})()`))
	p.waitFor("the inline error", `document.getElementById("policy-error-1").textContent.includes("rotating-window.star:2:")`, 5*time.Second)
	if got := eval[string](p, `sim.state().policies[1].sum`); got != sum {
		t.Error("a policy that does not compile was applied")
	}
	// A link whose policy does not compile opens, says so, and B does not run.
	st, _ := playground.Parse(strings.TrimPrefix(base, "#"))
	st.Policies[1] = playground.Policy{Name: "bad.star", Src: "def select_idle_sibling(p, prev, target):\n    return target +\n"}
	p.setHash("#" + st.Encode())
	p.waitFor("the compile banner", `sim.state().policies[1].error.startsWith("bad.star:2:") && !document.getElementById("policy-banner-1").hidden`, 20*time.Second)
	res := runTo(0.2)
	if a, b := res["A"].Events, res["B"].Events; fmt.Sprint(a) == "0" || fmt.Sprint(b) != "0" {
		t.Errorf("events with B's policy not compiling: A %v, B %v", a, b)
	}

	// A run-time error stops arm B with a banner; arm A runs on.
	p.do("a policy that reads idle() without probe", chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("policy-text-1");
		ta.value = "def select_idle_sibling(p, prev, target):\n    if idle(target):\n        return target\n    return prev\n";
		ta.dataset.name = "peek.star";
		document.getElementById("policy-apply-1").click();
	})()`))
	p.waitFor("peek.star to build", `sim.state().policies[1].name === "peek.star" && !sim.state().building`, 20*time.Second)
	res = runTo(0.5)
	p.waitFor("arm B's banner", `document.getElementById("policy-banner-1").textContent.includes("peek.star:2:")`, 10*time.Second)
	st2 := p.state()
	if len(st2.Arms) != 2 || st2.SimTime < 0.5 {
		t.Errorf("arm A did not run to 0.5 s with B stopped: simTime %v", st2.SimTime)
	}
	t.Logf("(policy) banner: %s", eval[string](p, `document.getElementById("policy-banner-1").textContent`))
	if fmt.Sprint(res["A"].Events) == fmt.Sprint(res["B"].Events) {
		t.Errorf("arm B ran as far as A: %v events", res["B"].Events)
	}
}
