//go:build !js

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"schedplay/playground"
	"schedplay/presets"
)

// TestTeachingPage walks the page as a new visitor would, on one tab:
// the fresh page is the V1 story as A/B (both arms reach
// select_idle_cpu, and their p99 differ), "Step one wakeup" fills the
// decision panel (stages tried, CPUs probed with their states) and
// highlights the decision's probe path for the map, switching the
// machine brings a workload sized to it, every experiment opens with its
// arms, seed table and checks (v6's reproduction runs to its verdicts),
// "Open in Perfetto" posts the trace to a stubbed Perfetto tab, and at
// 1024×768 and 1920×1080 the control panel (and its run controls) is
// inside the viewport.
// With UPDATE_SCREENSHOTS=1 it writes the README's screenshots into
// docs/.
func TestTeachingPage(t *testing.T) {
	requireChromium(t)
	baseURL, _ := servePage(t)
	b := newBrowser(t)
	start := time.Now()
	defer func() { t.Logf("TestTeachingPage: %v in the browser", time.Since(start).Round(time.Second)) }()
	ctx, con := b.tab(t, 5*time.Minute)
	p := &page{t: t, ctx: ctx, con: con}
	p.do("open the page at 1024x768", chromedp.EmulateViewport(1024, 768), chromedp.Navigate(baseURL+"/"))
	p.waitFor("the first frame", `window.simReady === true && typeof sim.state === "function"`, 120*time.Second)

	// (1) The fresh page: A/B, the story told, both arms searching.
	st := p.state()
	if !st.AB || st.Story == "" || st.Knobs["SIS_BOUND"] != "true" || st.KnobsB["SIS_CORE"] != "false" {
		p.fatalf("the fresh page is not the V1 story: ab=%v story=%q A=%v B=%v", st.AB, st.Story, st.Knobs, st.KnobsB)
	}
	if eval[bool](p, `document.getElementById("story").hidden`) {
		t.Error("the story is not shown in the panel")
	}
	// Simulated time, not wall time: run both arms to 3 s with the
	// panel's Run-to (the page has been playing since it loaded, so it
	// may be past 3 s already: the workers then replay to 3 s). The
	// numbers are read at that instant — sim.results() asks the paused
	// workers — never from whichever snapshot the page holds.
	p.do("run to 3 s", chromedp.Evaluate[chromedp.Void](`document.getElementById("run-to").value = "3"; document.getElementById("run-to-go").click()`))
	p.waitFor("the run-to to finish", `document.getElementById("run-to-go").disabled === false && sim.state().paused`, 3*time.Minute)
	res := eval[string](p, `sim.results()`, chromedp.EvalAwaitPromise)
	var arms map[string]struct {
		DurationS float64 `json:"duration_s"`
		Search    struct {
			Calls int64 `json:"select_idle_cpu_calls"`
		} `json:"search"`
		Workloads []struct {
			Lat struct {
				Count int64 `json:"count"`
				P99   int64 `json:"p99"`
			} `json:"wakeup_latency_us"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(res), &arms); err != nil {
		p.fatalf("sim.results(): %v\n%s", err, res)
	}
	a, bb := arms["A"], arms["B"]
	if a.DurationS != 3 || bb.DurationS != 3 || len(a.Workloads) == 0 || len(bb.Workloads) == 0 {
		p.fatalf("after Run to 3 s the results are at A %v s, B %v s: %s", a.DurationS, bb.DurationS, shorten(res, 300))
	}
	pa, pb := a.Workloads[0].Lat.P99, bb.Workloads[0].Lat.P99
	t.Logf("t=3 s: A p99 %d µs (%d select_idle_cpu calls), B p99 %d µs (%d calls)", pa, a.Search.Calls, pb, bb.Search.Calls)
	if pa == pb || pb < 2*pa {
		t.Errorf("the arms' p99 do not tell the story: A %d µs, B %d µs", pa, pb)
	}
	// The panel shows those numbers once the workers' snapshots at
	// 3 s have arrived.
	p.waitFor("the page to show the arms at 3 s", fmt.Sprintf(`sim.state().arms.length === 2 && Math.abs(sim.state().simTime - 3) < 1e-9 &&
		sim.state().arms[0].p99 === %d && sim.state().arms[1].p99 === %d &&
		sim.state().arms[0].count === %d && sim.state().arms[1].count === %d`, pa, pb, a.Workloads[0].Lat.Count, bb.Workloads[0].Lat.Count), 30*time.Second)
	p.waitFor("the control panel laid out", `document.getElementById("panel").getBoundingClientRect().width > 0`, 10*time.Second)
	p.checkPanelVisible("1024x768")
	_, png := p.screenshot()
	p.saveScreenshot("schedplay-e2e-1024x768.png", png)
	writeDocShot(t, "page-1024x768.png", png)
	// The same page on a big screen.
	p.do("resize to 1920x1080", chromedp.EmulateViewport(1920, 1080))
	p.waitFor("the canvas to follow", `document.querySelector("canvas").getBoundingClientRect().width > 1500`, 10*time.Second)
	p.waitFor("a frame at the new size", fmt.Sprintf(`sim.state().frames > %d`, p.state().Frames+3), 20*time.Second)
	p.checkPanelVisible("1920x1080")
	_, png = p.screenshot()
	p.saveScreenshot("schedplay-e2e-1920x1080.png", png)
	writeDocShot(t, "page-1920x1080.png", png)
	p.do("back to 1024x768", chromedp.EmulateViewport(1024, 768))

	// (1b) A paused run does not redraw the canvas (ui/frames.go: each
	// presented frame costs a software renderer tens of ms of CPU); its
	// loop still runs (frames: heartbeats, the panel's calls).
	// The last changes a pause brings are the workers' rate readings
	// going to zero (the snapshot after the pause, and the header's
	// achieved speed): wait for them, not for a guessed wall time (on a
	// loaded machine their messages come late), then nothing may draw.
	eval[any](p, `sim.pause(true)`)
	p.waitFor("the workers' rates at zero", `sim.perf().workers.every(w => w.simRate === 0 && w.eventsPerSec === 0) && sim.state().achievedSpeed === 0`, 30*time.Second)
	time.Sleep(500 * time.Millisecond) // a frame asked for by the last snapshot may still be on its way
	type statsAt struct {
		Stats frameStatsView
		At    float64 // ms, the page's clock
	}
	const read = `({stats: sim.frameStats(), at: performance.now()})`
	s0 := eval[statsAt](p, read)
	time.Sleep(2 * time.Second)
	s1 := eval[statsAt](p, read)
	fs0, fs1 := s0.Stats, s1.Stats
	t.Logf("paused, %.2f s: %d canvas frames, %d drawn", (s1.At-s0.At)/1000, fs1.Frames-fs0.Frames, fs1.Drawn-fs0.Drawn)
	if fs1.Drawn != fs0.Drawn {
		t.Errorf("the paused page redrew the canvas %d times in %.2f s", fs1.Drawn-fs0.Drawn, (s1.At-s0.At)/1000)
	}
	if fs1.Frames == fs0.Frames {
		t.Error("the paused page's canvas loop stopped")
	}
	// Back from a hidden tab, the canvas draws its picture again.
	eval[any](p, `document.dispatchEvent(new Event("visibilitychange"))`)
	p.waitFor("a redraw after visibilitychange", fmt.Sprintf(`sim.frameStats().drawn > %d`, fs1.Drawn), 10*time.Second)
	fs1 = eval[frameStatsView](p, `sim.frameStats()`)

	// (2) Step one wakeup: the panel says what happened.
	n0 := eval[float64](p, `sim.decisions().highlight.n`)
	p.do("click Step one wakeup", chromedp.Click(chromedp.ID("step")))
	p.waitFor("the stepped decision", fmt.Sprintf(`sim.decisions().highlight.n > %v && document.querySelector("#decision .dec-head") !== null &&
		document.querySelector("#decision .dec-head").textContent.includes("#" + sim.decisions().highlight.n)`, n0), 30*time.Second)
	p.waitFor("the canvas to draw the step", fmt.Sprintf(`sim.frameStats().drawn > %d`, fs1.Drawn), 10*time.Second)
	text := eval[string](p, `document.getElementById("decision").textContent`)
	for _, want := range []string{"stages tried", "target", "CPUs probed", "wake_affine", "prev / target / recent_used_cpu", "search cost", "wakeup latency"} {
		if !strings.Contains(text, want) {
			t.Errorf("the decision panel lacks %q: %s", want, text)
		}
	}
	chips := eval[int](p, `document.querySelectorAll("#decision .probes .chip").length`)
	probes := eval[int](p, `(() => { const d = sim.decisions(); const h = d.highlight; return d.arms[h.arm].log.find(x => x.n === h.n).probes.length; })()`)
	if chips == 0 || chips != probes {
		t.Errorf("the panel shows %d probed CPUs, the decision has %d", chips, probes)
	}
	states := eval[string](p, `[...document.querySelectorAll("#decision .probes .chip")].map(c => c.textContent).join(" | ")`)
	t.Logf("stepped decision: %d probes: %s", chips, states)
	if !eval[bool](p, `document.getElementById("legend-list").textContent.includes("select_idle_core")`) {
		t.Error("the legend does not explain the stages")
	}
	if bad := eval[[]string](p, `[...document.querySelectorAll("#knobs tr[data-knob]")].filter(r => !/\S.* Source: \S/.test(r.querySelector(".knob-doc").textContent)).map(r => r.dataset.knob)`); len(bad) > 0 {
		t.Errorf("knobs without an explanation and a source in the panel: %v", bad)
	}

	// (2b) Traces: the last 50 ms of arm B as JSON; "Open in Perfetto"
	// up to the postMessage, with the Perfetto tab stubbed (no network).
	n := eval[int](p, `sim.exportTrace(50, "json", 1).then(t => JSON.parse(t).traceEvents.filter(e => e.ph === "X").length)`, chromedp.EvalAwaitPromise)
	if n == 0 {
		t.Error("the exported trace has no slices")
	}
	p.do("stub the Perfetto tab", chromedp.Evaluate[chromedp.Void](`(() => {
		const rec = window.perfettoStub = { url: "", msgs: [] };
		window.open = (url) => { rec.url = url; return { closed: false, postMessage(data, origin) {
			if (data === "PING") {
				rec.msgs.push({ ping: true, origin });
				setTimeout(() => window.dispatchEvent(new MessageEvent("message", { data: "PONG", origin: "https://ui.perfetto.dev" })), 0);
			} else {
				const p = data.perfetto;
				rec.msgs.push({ origin, keys: Object.keys(p).sort().join(","), bytes: p.buffer.byteLength, url: p.url, title: p.title,
					json: new TextDecoder().decode(p.buffer).startsWith('{"traceEvents":[') });
			}
		} }; };
	})()`))
	p.do("set the trace length", chromedp.Evaluate[chromedp.Void](`document.getElementById("trace-ms").value = "30"`))
	p.do("click Open in Perfetto", chromedp.Click(chromedp.ID("trace-perfetto")))
	p.waitFor("the trace posted to Perfetto", `window.perfettoStub.msgs.some(m => m.keys)`, 60*time.Second)
	type posted struct {
		URL  string
		Msgs []struct {
			Ping   bool
			Origin string
			Keys   string
			Bytes  int
			URL    string
			Title  string
			JSON   bool
		}
	}
	got := eval[posted](p, `window.perfettoStub`)
	last := got.Msgs[len(got.Msgs)-1]
	href := eval[string](p, `location.href`)
	if got.URL != "https://ui.perfetto.dev" || !got.Msgs[0].Ping || last.Origin != "https://ui.perfetto.dev" ||
		last.Keys != "buffer,fileName,title,url" || last.URL != href || !last.JSON || last.Bytes == 0 {
		t.Errorf("Open in Perfetto posted %+v", got)
	}
	t.Logf("Perfetto: %d PINGs, then %d bytes titled %q", len(got.Msgs)-1, last.Bytes, last.Title)

	// (2c) The other run controls: step one event, the debug overlay,
	// as fast as possible.
	ev := p.state().Arms[0].Events
	p.do("click Step one event", chromedp.Click(chromedp.ID("step-event")))
	p.waitFor("one more event", fmt.Sprintf(`sim.state().paused && sim.state().arms[0].events === %d`, ev+1), 20*time.Second)
	p.do("show the debug overlay", chromedp.Click(chromedp.ID("overlay-on")))
	p.waitFor("the overlay's figures", `!document.getElementById("overlay").hidden && /frame p50/.test(document.getElementById("overlay").textContent) &&
		/worker A: .*events\/s/.test(document.getElementById("overlay").textContent) && /worker B: /.test(document.getElementById("overlay").textContent)`, 10*time.Second)
	p.do("click As fast as possible", chromedp.Click(chromedp.ID("fast")))
	p.waitFor("speed max, running", `sim.state().speed === 0 && !sim.state().paused && /speed=max/.test(location.hash)`, 10*time.Second)

	// (3) Switching the machine switches the (default) workload.
	p.do("pick the P4", chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.getElementById("preset"); s.value = "p4-up-1c-1t"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	p.waitFor("the P4 with its own workload", `sim.state().cpus === 1 && sim.state().building === null && sim.state().workloads.join() === "schbench:m=1,t=1"`, 60*time.Second)
	p.waitFor("the workload editor to show it", `[...document.querySelectorAll("#workloads .workload input")].map(i => i.value).join() === "schbench:m=1,t=1"`, 10*time.Second)

	// (4) Every experiment opens as a guided run: all its live arms, its
	// arms listed, its seed table and its checks; v6 (the quickest)
	// is reproduced to the end and its checks get verdicts.
	for _, e := range presets.Experiments() {
		live := len(playground.LiveArms(e))
		p.do("pick "+e.Name, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.getElementById("preset"); s.value = "exp:%s"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, e.Name)))
		p.waitFor(e.Name+": its arms running", fmt.Sprintf(`sim.state().experiment === %q && sim.state().building === null && sim.state().arms.length === %d`, e.Name, live), 90*time.Second)
		p.waitFor(e.Name+": the experiment panel", fmt.Sprintf(`!document.getElementById("experiment").hidden && window.schedplayExperiment && window.schedplayExperiment.name === %q &&
			document.querySelectorAll("#exp-arms tbody tr").length === %d && document.querySelectorAll("#exp-checks li .badge").length === %d &&
			document.querySelectorAll("#exp-rows tbody tr").length === %d`, e.Name, len(e.Arms), 2*len(e.Checks), len(e.Rows)), 30*time.Second)
		if live > 1 {
			p.waitFor(e.Name+": live verdicts", `window.schedplayExperiment.live && window.schedplayExperiment.live.outcome &&
				window.schedplayExperiment.live.outcome.checks.some(c => !c.pending)`, 60*time.Second)
		}
		if e.Name == "v6-pipe-pingpong" {
			p.waitFor(e.Name+": reproduced at the quick size", `window.schedplayExperiment.quick.done === window.schedplayExperiment.quick.total &&
				document.querySelector("#exp-checks li:nth-child(2) .badge").textContent.match(/PASS|FAIL/)`, 3*time.Minute)
		}
		if e.Name == "era-6.6-vs-6.12" {
			// Three live arms: 6.6 without delayed dequeue, 6.12 requeuing
			// delayed wakees in place, 6.12 NO_DELAY_DEQUEUE with none.
			p.waitFor(e.Name+": delayed requeues in arm B only", `(() => { const a = sim.state().arms; return a.length === 3 && a[0].delayed === null &&
				a[1].delayed !== null && a[1].delayed.requeued > 0 && a[2].delayed !== null && a[2].delayed.requeued === 0 && a[2].wakeups > 0; })()`, 90*time.Second)
		}
		if e.Name == "v2-hackbench-scaling" {
			p.waitFor(e.Name+": the time-to-completion chart", `document.querySelectorAll("#exp-chart svg rect.seed").length > 0`, 10*time.Second)
		}
		t.Logf("%v %s: %d arms, %d live, %d checks: %s", time.Since(start).Round(time.Second), e.Name, len(e.Arms), live, len(e.Checks),
			shorten(eval[string](p, `document.getElementById("exp-status").textContent`), 200))
	}
	_, png = p.screenshot()
	p.saveScreenshot("schedplay-e2e-experiment.png", png)

}

// checkPanelVisible checks that the control panel and its run controls
// lie inside the viewport (no scrolling needed to reach them).
func (p *page) checkPanelVisible(what string) {
	p.t.Helper()
	// The panel scrolls inside itself; the check is about its layout, so
	// it starts from the top (where a fresh page shows it).
	p.do("scroll the panel to the top", chromedp.Evaluate[chromedp.Void](`document.getElementById("panel").scrollTop = 0`))
	type box struct{ X, Y, W, H, VW, VH float64 }
	for _, id := range []string{"panel", "run", "decisions"} {
		r := eval[box](p, fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height, VW: innerWidth, VH: innerHeight}; })()`, id))
		bottom := r.Y + r.H
		switch id {
		case "panel":
			bottom = r.Y + 1 // the panel scrolls inside; its top and sides must show
		case "decisions":
			bottom = r.Y + 20 // its heading; the list scrolls with the panel
		}
		if r.W == 0 || r.X < 0 || r.Y < 0 || r.X+r.W > r.VW+0.5 || bottom > r.VH+0.5 {
			p.t.Errorf("%s: #%s at (%g,%g) %gx%g is not inside the %gx%g viewport", what, id, r.X, r.Y, r.W, r.H, r.VW, r.VH)
		}
	}
}

// writeDocShot writes a README screenshot into docs/ when
// UPDATE_SCREENSHOTS is set.
func writeDocShot(t *testing.T, name string, png []byte) {
	if os.Getenv("UPDATE_SCREENSHOTS") == "" {
		return
	}
	dir := filepath.Join(moduleRoot(t), "docs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/%s", name)
}
