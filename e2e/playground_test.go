//go:build !js

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"schedplay/playground"
	"schedplay/serve/site"
)

// A small viewport keeps SwiftShader's frame time down (browser.md §2).
const (
	viewportW = 1200
	viewportH = 700
	panelW    = 320 // style.css --panel-w
)

// The link of check (d) and the native command it must agree with.
const (
	detPreset   = "intel-2s-44c-88t"
	detWorkload = "schbench:m=2,t=22"
	detSeed     = 3
	detSeconds  = 2
)

// simState is window.sim.state().
type simState = playground.PageState

// result is the part of `schedsim run --format json` the test compares
// (decoded into plain values, so layout and indentation do not matter).
type result struct {
	Preset    string `json:"preset"`
	Seed      uint64 `json:"seed"`
	Workloads []struct {
		Name            string         `json:"name"`
		WakeupLatencyUS map[string]any `json:"wakeup_latency_us"`
		ThroughputOpsS  any            `json:"throughput_ops_s"`
	} `json:"workloads"`
	Search     map[string]any `json:"search"`
	Migrations map[string]any `json:"migrations"`
	Events     any            `json:"events"`
	CPUBusyPct any            `json:"cpu_busy_pct"`
}

func TestPlayground(t *testing.T) {
	requireChromium(t)
	start := time.Now()
	root := moduleRoot(t)
	goBin := goCommand()

	// Build the page (wasm + static files, once per package run) and get
	// the native reference numbers at the same time.
	nativeCh := make(chan nativeRun, 1)
	go func() { nativeCh <- runNative(root, goBin) }()
	baseURL, dir := servePage(t)
	t.Logf("wasm build: %v (%s)", served.build.Round(10*time.Millisecond), fileSize(filepath.Join(dir, "schedplay.wasm")))
	ts := struct{ URL string }{baseURL}

	b := newBrowser(t)
	ctx, cancel := context.WithTimeout(b.ctx, 4*time.Minute)
	defer cancel()

	con := &console{}
	con.watch(ctx) // before the page loads: nothing is lost
	p := &page{t: t, ctx: ctx, con: con}

	ok := t.Run("a_ready", func(t *testing.T) {
		p := p.with(t)
		loadStart := time.Now()
		p.do("open the page",
			chromedp.EmulateViewport(viewportW, viewportH),
			chromedp.Navigate(ts.URL+"/"))
		p.waitFor("window.simReady", `window.simReady === true`, 90*time.Second)
		p.waitFor("the loading overlay to go", `document.getElementById("loading").hidden`, 10*time.Second)
		st := p.state()
		if !st.Ready || st.Error != "" || st.Preset != playground.DefaultPreset || st.CPUs != 88 {
			p.fatalf("state after load: ready=%v error=%q preset=%q cpus=%d", st.Ready, st.Error, st.Preset, st.CPUs)
		}
		t.Logf("page ready in %v", time.Since(loadStart).Round(10*time.Millisecond))
	})
	if !ok {
		return
	}

	t.Run("b_canvas_drawn", func(t *testing.T) {
		p := p.with(t)
		// Let a few frames draw.
		p.waitFor("simulated time to advance", `sim.state().simTime > 0.01`, 30*time.Second)
		var c rect
		c = eval[rect](p, `(() => { const r = document.querySelector("canvas").getBoundingClientRect(); return {X: r.x, Y: r.y, Width: r.width, Height: r.height}; })()`)
		// The layout of browser.md §4: canvas top-left, panel on the right.
		if c.X != 0 || c.Y != 0 || c.Width != viewportW-panelW || c.Height != viewportH {
			t.Errorf("canvas at %+v, want (0,0) %dx%d", c, viewportW-panelW, viewportH)
		}
		panel := eval[rect](p, `(() => { const r = document.getElementById("panel").getBoundingClientRect(); return {X: r.x, Y: r.y, Width: r.width, Height: r.height}; })()`)
		if panel.X != viewportW-panelW || panel.Width != panelW {
			t.Errorf("panel at %+v, want x=%d width %d", panel, viewportW-panelW, panelW)
		}
		// Poll: a frame or two may still be on its way.
		deadline := time.Now().Add(15 * time.Second)
		for {
			img, png := p.screenshot()
			drawn, total, bg := drawnPixels(img, c)
			if drawn >= total/200 {
				t.Logf("canvas %gx%g: %d of %d pixels differ from the background %v (%.1f%%)", c.Width, c.Height, drawn, total, bg, 100*float64(drawn)/float64(total))
				p.saveScreenshot("schedplay-e2e.png", png)
				break
			}
			if time.Now().After(deadline) {
				p.saveScreenshot("schedplay-e2e-blank.png", png)
				p.fatalf("the canvas looks blank: %d of %d pixels differ from %v", drawn, total, bg)
			}
			time.Sleep(250 * time.Millisecond)
		}
	})

	t.Run("c_panel_drives_sim", func(t *testing.T) {
		p := p.with(t)
		sel := chromedp.CSS(`#knobs input[data-knob="SIS_CORE"][data-arm="a"]`)
		if eval[bool](p, `document.querySelector('#knobs input[data-knob="SIS_CORE"][data-arm="a"]').checked`) != true {
			t.Fatal("SIS_CORE checkbox is not checked by default")
		}
		p.do("click SIS_CORE", chromedp.Click(sel))
		p.waitFor("SIS_CORE=false in the URL, and its run built", `/[#&]SIS_CORE=(false|0)(&|$)/.test(location.hash) && sim.state().building === null`, 10*time.Second)
		if st := p.state(); st.Knobs["SIS_CORE"] != "false" {
			t.Errorf("state knobs after the click: %v", st.Knobs)
		}
		p.waitFor("the canvas to get the focus back", `document.activeElement === document.querySelector("canvas")`, 5*time.Second)

		// Keyboard shortcuts on the document: space pauses, "." steps.
		paused := p.state().Paused
		p.do("press space", chromedp.KeyEvent(" "))
		p.waitFor("space to toggle pause", fmt.Sprintf(`sim.state().paused === %v`, !paused), 5*time.Second)
		if !paused { // now paused: step one wakeup with "."
			// The count to beat is the paused arm's: its worker's
			// snapshot after the pause says so (rates at zero).
			p.waitFor("the worker to pause", `sim.perf().workers.length > 0 && sim.perf().workers.every(w => w.simRate === 0)`, 30*time.Second)
			before := p.state().Arms[0].Wakeups
			p.do("press .", chromedp.KeyEvent("."))
			// 15 s: the step crosses the engine worker and back, each
			// waiting for a core on a loaded 2-core machine (5 s timed
			// out once in a loop of runs at load 7).
			p.waitFor("'.' to step a wakeup", fmt.Sprintf(`sim.state().arms[0].wakeups > %d`, before), 15*time.Second)
			p.do("press space", chromedp.KeyEvent(" "))
			p.waitFor("space to resume", `sim.state().paused === false`, 5*time.Second)
		}
		// With the focus off the canvas (on the page), the document's
		// shortcut handler takes the key instead.
		p.do("blur the canvas", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		paused = p.state().Paused
		p.do("press space on the page", chromedp.KeyEvent(" "))
		p.waitFor("space on the page to toggle pause", fmt.Sprintf(`sim.state().paused === %v`, !paused), 5*time.Second)
		p.do("press space on the page", chromedp.KeyEvent(" "))
		p.waitFor("space on the page to toggle pause back", fmt.Sprintf(`sim.state().paused === %v`, paused), 5*time.Second)
		if paused {
			p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		}
		// Typing in a field: the panel's resync (every 250 ms) leaves the
		// text alone, keys typed there are not shortcuts, Enter commits.
		p.do("type a seed", chromedp.Focus(chromedp.ID("seed")),
			chromedp.Evaluate[chromedp.Void](`document.getElementById("seed").select()`),
			chromedp.KeyEvent("42 "))
		time.Sleep(800 * time.Millisecond) // a few resyncs
		if v := eval[string](p, `document.getElementById("seed").value`); v != "42" {
			t.Errorf("the seed field holds %q while being typed in, want 42", v)
		}
		if st := p.state(); st.Paused || st.Seed != 1 {
			t.Errorf("typing in the seed field: paused=%v seed=%d (want running, seed 1 until Enter)", st.Paused, st.Seed)
		}
		p.do("press Enter", chromedp.KeyEvent("\r"))
		p.waitFor("Enter to set the seed", `sim.state().seed === 42 && location.hash.includes("seed=42")`, 5*time.Second)
		p.waitFor("the canvas to get the focus back after Enter", `document.activeElement === document.querySelector("canvas")`, 5*time.Second)

		// The experiment picker opens the A/B view with a B column.
		p.do("pick an experiment", chromedp.Evaluate[chromedp.Void](
			`(() => { const s = document.getElementById("preset"); s.value = "exp:v1-sis-schbench"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
		p.waitFor("the experiment's four arms", `sim.state().experiment === "v1-sis-schbench" && sim.state().building === null && sim.state().ab === true &&
			sim.state().arms.length === 4 && document.querySelector('#knobs [data-knob="SIS_BOUND"][data-arm="b"]') !== null`, 30*time.Second)
		if !eval[bool](p, `document.querySelector('#knobs [data-knob="SIS_BOUND"][data-arm="b"]').checked`) {
			t.Error("arm B's SIS_BOUND checkbox is not checked in v1-sis-schbench")
		}
		if !strings.Contains(eval[string](p, `location.hash`), "exp=v1-sis-schbench") && !strings.Contains(eval[string](p, `location.hash`), "ab=1") {
			t.Errorf("URL after picking the experiment: %s", eval[string](p, `location.hash`))
		}
		p.waitFor("both arms to run", `sim.state().arms[1].wakeups > 0`, 20*time.Second)
		_, png := p.screenshot()
		p.saveScreenshot("schedplay-e2e-ab.png", png)

		// The experiment pauses its live arms at its duration (5 s for
		// v1-sis-schbench): get there first (runTo pauses as the user
		// would; resuming past the duration lets the experiment pause
		// them), so that the change below starts from an
		// experiment-paused page.
		if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`sim.runTo(5.05).then(() => "")`, chromedp.EvalAwaitPromise)); err != nil {
			p.fatalf("sim.runTo(5.05): %v", err)
		}
		p.do("resume past the experiment's duration", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		p.waitFor("the experiment to pause its live arms at 5 s", `sim.state().paused === true`, 30*time.Second)

		// Eras per arm: arm B on 6.6 (EEVDF). The knobs 6.6 lacks go
		// from B's settings and are greyed out in B's column only.
		p.do("pick era 6.6 for arm B", chromedp.Evaluate[chromedp.Void](
			`(() => { const s = document.querySelector('#knobs select[data-knob="era"][data-arm="b"]'); s.value = "6.6"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
		p.waitFor("b.era=6.6 in the link", `/[#&]b\.era=6\.6(&|$)/.test(location.hash) && sim.state().error === ""`, 10*time.Second)
		// Running, even if the experiment had paused its live arms at
		// its duration: a change the user makes starts a run that runs.
		p.waitFor("the arms with B on 6.6 built and running", `sim.state().building === null && sim.state().arms.length >= 2 && !sim.state().paused`, 60*time.Second)
		p.waitFor("arm B (6.6) to wake tasks", `sim.state().arms[1].wakeups > 0`, 30*time.Second)
		p.waitFor("GENTLE_FAIR_SLEEPERS greyed out for arm B only", `document.querySelector('#knobs input[data-knob="GENTLE_FAIR_SLEEPERS"][data-arm="b"]').disabled &&
			!document.querySelector('#knobs input[data-knob="GENTLE_FAIR_SLEEPERS"][data-arm="a"]').disabled`, 5*time.Second)
		if st := p.state(); st.KnobsB["SIS_BOUND"] != "" {
			t.Errorf("arm B kept SIS_BOUND=%s, which era 6.6 does not have", st.KnobsB["SIS_BOUND"])
		}
		// Era 6.12 is on the selector and runs: its 6.12-only knobs are
		// live in B's column and greyed out in A's (5.2), and the arms
		// table shows B's delayed requeues, A's as absent.
		p.waitFor("6.12 among the era selector's options", `[...document.querySelector('#knobs select[data-knob="era"][data-arm="b"]').options].some((o) => o.value === "6.12")`, 5*time.Second)
		p.do("pick era 6.12 for arm B", chromedp.Evaluate[chromedp.Void](
			`(() => { const s = document.querySelector('#knobs select[data-knob="era"][data-arm="b"]'); s.value = "6.12"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
		p.waitFor("b.era=6.12 in the link", `/[#&]b\.era=6\.12(&|$)/.test(location.hash) && sim.state().error === ""`, 10*time.Second)
		p.waitFor("the arms with B on 6.12 built and running", `sim.state().building === null && sim.state().arms.length >= 2 && !sim.state().paused`, 60*time.Second)
		p.waitFor("arm B (6.12) to wake tasks, with delayed-dequeue counters", `sim.state().arms[1].wakeups > 0 && sim.state().arms[1].delayed !== null && sim.state().arms[0].delayed === null`, 30*time.Second)
		p.waitFor("DELAY_DEQUEUE live for arm B only", `!document.querySelector('#knobs input[data-knob="DELAY_DEQUEUE"][data-arm="b"]').disabled &&
			document.querySelector('#knobs input[data-knob="DELAY_DEQUEUE"][data-arm="a"]').disabled`, 5*time.Second)
		p.waitFor("the arms table's requeued column", `(() => { const r = document.querySelectorAll("#arms tbody tr"); return r.length >= 2 &&
			r[0].cells[6].textContent === "—" && /^[0-9,]+$/.test(r[1].cells[6].textContent); })()`, 10*time.Second)

		// A workload file (here an rt-app file) loaded with the picker
		// becomes a self-contained rtapp:b64= row and runs.
		rtapp, err := filepath.Abs(filepath.Join("..", "engine", "workload", "testdata", "rtapp", "periodic_hog.json"))
		if err != nil {
			t.Fatal(err)
		}
		p.do("load a workload file", chromedp.SetUploadFiles(chromedp.ID("workload-file-input"), []string{rtapp}, chromedp.NodeReady))
		p.waitFor("the file's workload to run", `(sim.state().workloads || []).some((w) => w.startsWith("rtapp:b64=")) && sim.state().building === null && sim.state().error === ""`, 30*time.Second)
		p.do("remove the file's workload row", chromedp.Evaluate[chromedp.Void](
			`[...document.querySelectorAll("#workloads .workload")].find((r) => r.querySelector("input").value.startsWith("rtapp:b64=")).querySelector("button").click()`))
		p.waitFor("the file's workload removed", `!(sim.state().workloads || []).some((w) => w.startsWith("rtapp:b64=")) && sim.state().building === null`, 30*time.Second)

		// Several rt-app files picked at once (a global file and a tasks
		// file, as rt-app's doc/examples/merge splits them) become one
		// merged rtapp:b64= row, which runs.
		dir := t.TempDir()
		var parts []string
		for name, body := range map[string]string{
			"global.json":  `{"global": {"duration": 1}}`,
			"thread0.json": `{"tasks": {"t0": {"instance": 2, "run": 1000, "sleep": 1000},}}`,
		} {
			f := filepath.Join(dir, name)
			if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, f)
		}
		p.do("load two rt-app files at once", chromedp.SetUploadFiles(chromedp.ID("workload-file-input"), parts, chromedp.NodeReady))
		p.waitFor("one merged workload to run", `(sim.state().workloads || []).filter((w) => w.startsWith("rtapp:b64=")).length === 1 && sim.state().building === null && sim.state().error === ""`, 30*time.Second)
		p.do("remove the merged workload row", chromedp.Evaluate[chromedp.Void](
			`[...document.querySelectorAll("#workloads .workload")].find((r) => r.querySelector("input").value.startsWith("rtapp:b64=")).querySelector("button").click()`))
		p.waitFor("the merged workload removed", `!(sim.state().workloads || []).some((w) => w.startsWith("rtapp:b64=")) && sim.state().building === null`, 30*time.Second)

		// The workload editor reports a bad spec next to itself.
		p.do("type a bad workload", chromedp.Evaluate[chromedp.Void](
			`(() => { const i = document.querySelector("#workloads .workload input"); i.value = "schbench:zz=1"; i.dispatchEvent(new Event("input")); i.dispatchEvent(new Event("change")); })()`))
		p.waitFor("the workload error", `!document.getElementById("workload-error").hidden && document.getElementById("workload-error").textContent.includes("zz")`, 5*time.Second)
		if w := p.state().Workloads; len(w) != 1 || w[0] != detWorkload {
			t.Errorf("a bad workload changed the running ones: %v", w)
		}
	})

	var native nativeRun
	select {
	case native = <-nativeCh:
	case <-time.After(3 * time.Minute):
		t.Fatal("the native schedsim run did not finish")
	}
	t.Run("d_share_link_matches_native", func(t *testing.T) {
		p := p.with(t)
		if native.err != nil {
			t.Fatalf("native %s: %v", native.cmd, native.err)
		}
		link := fmt.Sprintf("#preset=%s&w=%s&seed=%d", detPreset, detWorkload, detSeed)
		p.setHash(link)
		p.waitFor("the link to apply", fmt.Sprintf(`sim.state().seed === %d && sim.state().preset === %q && !sim.state().ab`, detSeed, detPreset), 10*time.Second)
		runStart := time.Now()
		js, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`sim.runTo(%d)`, detSeconds), chromedp.EvalAwaitPromise))
		if err != nil {
			p.fatalf("sim.runTo(%d): %v", detSeconds, err)
		}
		wall := time.Since(runStart)
		var arms map[string]result
		if err := json.Unmarshal([]byte(js), &arms); err != nil {
			p.fatalf("sim.runTo result: %v\n%s", err, js)
		}
		got, ok := arms["A"]
		if !ok || len(got.Workloads) == 0 {
			p.fatalf("sim.runTo result has no arm A workload: %s", js)
		}
		want := native.res
		gw, ww := got.Workloads[0].WakeupLatencyUS, want.Workloads[0].WakeupLatencyUS
		t.Logf("native %s", native.cmd)
		t.Logf("(d) arm A after runTo(%d) in %v wall: wakeup count %v p99 %v µs; native: count %v p99 %v µs",
			detSeconds, wall.Round(time.Millisecond), gw["count"], gw["p99"], ww["count"], ww["p99"])
		for _, k := range []string{"count", "p99"} {
			if gw[k] == nil || gw[k] != ww[k] {
				t.Errorf("wakeup_latency_us.%s: browser %v, native %v", k, gw[k], ww[k])
			}
		}
		// The rest of the result should agree too: one engine, one seed.
		same := func(what string, a, b any) {
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s differs: browser %v, native %v", what, jsonString(a), jsonString(b))
			}
		}
		same("wakeup_latency_us", gw, ww)
		same("search", got.Search, want.Search)
		same("migrations", got.Migrations, want.Migrations)
		same("events", got.Events, want.Events)
		same("throughput_ops_s", got.Workloads[0].ThroughputOpsS, want.Workloads[0].ThroughputOpsS)
		same("cpu_busy_pct", got.CPUBusyPct, want.CPUBusyPct)
		if !p.state().Paused {
			t.Error("the page is not paused after runTo")
		}
		// The state shows runTo's numbers once the worker's snapshot at
		// t has arrived (it follows runTo's reply): wait for it, never
		// read whichever snapshot is there.
		p.waitFor("the state to show runTo's numbers", fmt.Sprintf(`sim.state().arms.length === 1 && sim.state().arms[0].count === %v && sim.state().simTime === %d`,
			gw["count"], detSeconds), 30*time.Second)

		// "Download results JSON" saves the same numbers.
		dl := t.TempDir()
		if _, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl}); err != nil {
			p.fatalf("allow downloads: %v", err)
		}
		p.do("click download", chromedp.Click(chromedp.ID("download")))
		var saved map[string]result
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, err := os.ReadFile(filepath.Join(dl, "schedplay-results.json"))
			if err == nil && json.Unmarshal(b, &saved) == nil {
				break
			}
			if time.Now().After(deadline) {
				entries, _ := os.ReadDir(dl)
				p.fatalf("no schedplay-results.json downloaded (download dir: %v; status %q)", entries,
					eval[string](p, `document.getElementById("share-status").textContent`))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if a, ok := saved["A"]; !ok || len(a.Workloads) == 0 || a.Workloads[0].WakeupLatencyUS["count"] != gw["count"] {
			t.Errorf("downloaded results differ from runTo's: %s", jsonString(saved))
		}

		// "Copy share link": the clipboard, or a field with the link.
		p.do("click copy share link", chromedp.Click(chromedp.ID("share")))
		p.waitFor("the share link", `document.getElementById("share-status").textContent.includes("copied") ||
			(!document.getElementById("share-url").hidden && document.getElementById("share-url").value === location.href)`, 5*time.Second)
		if h := eval[string](p, `location.hash`); !strings.Contains(h, "seed=3") {
			t.Errorf("share link %q lost the seed", h)
		}
		// "Copy as command": schedsim run --link with this link, one
		// line per arm, to the simulated time shown.
		p.do("click copy as command", chromedp.Click(chromedp.ID("share-cmd")))
		p.waitFor("the command", `document.getElementById("share-url").value.startsWith("schedsim run --link '" + location.href + "' --arm A --duration ")`, 5*time.Second)
		if cmd := eval[string](p, `document.getElementById("share-url").value`); !strings.HasSuffix(strings.Fields(cmd)[len(strings.Fields(cmd))-1], "ms") {
			t.Errorf("command %q: no --duration in ms", cmd)
		}
	})

	t.Run("e_hostile_links", func(t *testing.T) {
		p := p.with(t)
		for _, tc := range hostileLinks(t, root) {
			t.Logf("hostile link %s: %.80s…", tc.name, tc.hash)
			_, perr := playground.Parse(tc.hash)
			if perr == nil {
				t.Fatalf("%s: the native parser accepts %s", tc.name, tc.hash)
			}
			p.setHash(tc.hash)
			cond := fmt.Sprintf(`!document.getElementById("error").hidden && document.getElementById("error-text").textContent.includes(%q)`, perr.Error())
			p.waitFor(tc.name+": the error in the page", cond, 10*time.Second)
			text := eval[string](p, `document.getElementById("error-text").textContent`)
			for _, want := range tc.mentions {
				if !strings.Contains(text, want) {
					t.Errorf("%s: #error %q does not mention %q", tc.name, text, want)
				}
			}
			if tc.name == "1M CPUs" {
				_, png := p.screenshot()
				p.saveScreenshot("schedplay-e2e-error.png", png)
			}
			st := p.state()
			def := playground.Default()
			if !st.Ready || st.Preset != def.Preset || st.CPUs != 88 || !reflect.DeepEqual(st.Workloads, def.Workloads) || st.Seed != def.Seed || !reflect.DeepEqual(st.Knobs, def.Knobs) {
				t.Errorf("%s: not the defaults after the error: %+v", tc.name, st)
			}
			if h := eval[string](p, `location.hash`); h != "#"+def.Encode() {
				t.Errorf("%s: URL after the error %q, want the defaults' #%s", tc.name, h, def.Encode())
			}
			// The page keeps working: the simulation runs and setters answer.
			p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
			before := p.state().SimTime
			p.waitFor(tc.name+": the simulation to run on", fmt.Sprintf(`sim.state().simTime > %g`, before), 20*time.Second)
		}
		// A good link afterwards clears the message.
		p.setHash("#seed=9")
		p.waitFor("a good link to clear the error", `document.getElementById("error").hidden && sim.state().seed === 9`, 10*time.Second)
	})

	t.Run("f_big_machine_speed", func(t *testing.T) {
		p := p.with(t)
		const link = "#preset=amd-zen4-2s-256c-512t&w=netperf:n=256&speed=max"
		p.setHash(link)
		p.waitFor("the 512-CPU machine", `sim.state().cpus === 512 && sim.state().speed === 0 && sim.state().error === ""`, 20*time.Second)
		p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		p.waitFor("it to run", `sim.state().simTime > 0`, 30*time.Second)
		time.Sleep(2 * time.Second) // let the smoothed numbers settle (logged only)
		// Frames per second over 3 s of requestAnimationFrame, and the
		// simulated time covered meanwhile.
		s0 := p.state()
		w0 := time.Now()
		fps, err := chromedp.Run(p.ctx, chromedp.Evaluate[float64](`new Promise(res => {
			let n = 0; const t0 = performance.now();
			const tick = (t) => { n++; if (t - t0 < 3000) requestAnimationFrame(tick); else res(n * 1000 / (t - t0)); };
			requestAnimationFrame(tick); })`, chromedp.EvalAwaitPromise))
		if err != nil {
			p.fatalf("fps: %v", err)
		}
		s1 := p.state()
		wall := time.Since(w0).Seconds()
		rate := (s1.SimTime - s0.SimTime) / wall
		t.Logf("(f) amd-zen4-2s-256c-512t netperf:n=256 speed=max: frameMs %.1f (state), %.1f FPS, achievedSpeed %.4g (state), %.4g simulated s per wall s measured, wakeups %d, %d CPUs, canvas %dx%d",
			s1.FrameMs, fps, s1.AchievedSpeed, rate, s1.Arms[0].Wakeups, s1.CPUs, viewportW-panelW, viewportH)
		// Simulated time moves on at speed=max (waited for: a 512-CPU
		// arm covers a few ms a second, and on a loaded machine its
		// snapshots may come later than the 3 s above).
		p.waitFor("simulated time to advance at speed=max", fmt.Sprintf(`sim.state().simTime > %g`, s0.SimTime), 60*time.Second)
		_, png := p.screenshot()
		p.saveScreenshot("schedplay-e2e-zen4.png", png)
	})

	t.Run("g_rt_workload", func(t *testing.T) {
		p := p.with(t)
		// RT cyclictest threads (SCHED_FIFO 80) beside SCHED_FIFO 90 hogs
		// on half the CPUs: the legend tags the RT workloads and has the
		// RT frame, the decision panel explains the wakeups by cpupri.
		p.setHash("#preset=amd-7950x-16c-32t&era=6.6&w=cyclictest:t=32,p=80&w=hog:n=16,policy=fifo,rtprio=90")
		p.waitFor("the RT link to build", `sim.state().cpus === 32 && sim.state().building === null && sim.state().error === "" &&
			(sim.state().workloads || []).length === 2`, 30*time.Second)
		p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		p.waitFor("the legend's RT entries", `(() => { const l = sim.state().legend || []; return l.includes("framed: RT task (FIFO/RR)") &&
			l.some((x) => x.startsWith("cyclictest") && x.endsWith("[RT]")) && l.some((x) => x.startsWith("hog") && x.endsWith("[RT]")); })()`, 30*time.Second)
		p.do("open the decision panel", chromedp.Evaluate[chromedp.Void](`document.getElementById("decisions-box").open = true`))
		p.waitFor("an RT decision explained by cpupri", `(() => { const d = document.getElementById("decision").textContent;
			return d.includes("cpupri") && d.includes("SCHED_FIFO, rt_priority 80") && d.includes("lowest mask") && d.includes("rt_prev"); })()`, 30*time.Second)
		if !eval[bool](p, `[...document.querySelectorAll("#legend-list code")].some((c) => c.textContent === "rt_find_lowest_rq")`) {
			t.Error("the panel's legend has no rt_find_lowest_rq row")
		}
		t.Logf("(g) decision panel: %s", shorten(eval[string](p, `document.getElementById("decision").textContent`), 300))
		_, png := p.screenshot()
		p.saveScreenshot("schedplay-e2e-rt.png", png)

		// Era 6.12 runs RT tasks (its fair class under the fair server):
		// the link builds without a banner and its results come.
		p.setHash("#era=6.12&w=hog:n=2,policy=fifo,rtprio=50&w=schbench:m=1,t=2")
		p.waitFor("6.12 with an RT workload to build", `sim.state().building === null && sim.state().error === "" &&
			(sim.state().workloads || []).length === 2 && document.getElementById("error").hidden`, 30*time.Second)
		p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		before := p.state().SimTime
		p.waitFor("6.12's RT run to go on with results", fmt.Sprintf(`sim.state().simTime > %g && (sim.state().arms || []).length > 0 &&
			sim.state().arms[0].wakeups > 0 && (sim.state().legend || []).some((x) => x.startsWith("hog") && x.endsWith("[RT]"))`, before), 30*time.Second)
		if st := p.state(); !st.Ready || st.Crash != nil || st.Error != "" {
			t.Errorf("6.12 with RT: ready=%v crash=%v error=%q", st.Ready, st.Crash, st.Error)
		}
	})

	t.Run("g2_dl_workload", func(t *testing.T) {
		p := p.with(t)
		// A SCHED_DEADLINE pipe (200 µs every 1 ms per process) beside a
		// fair schbench: the legend tags the deadline workload and has
		// the deadline mark, the decision panel explains the wakeups by
		// select_task_rq_dl, the results list the deadline tasks.
		p.setHash("#era=6.6&w=pipe:l=100000,policy=deadline,dl_runtime_us=200,dl_period_us=1000&w=schbench:m=1,t=2")
		p.waitFor("the deadline link to build or be refused", `sim.state().building === null &&
			(sim.state().error !== "" || (sim.state().workloads || []).length === 2)`, 30*time.Second)
		if e := p.state().Error; e != "" {
			t.Fatalf("the deadline link: %s", e)
		}
		p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		p.waitFor("the legend's deadline entries", `(() => { const l = sim.state().legend || []; return l.includes("framed, corner: deadline task") &&
			l.some((x) => x.startsWith("pipe") && x.endsWith("[DL]")) && !l.includes("framed: RT task (FIFO/RR)"); })()`, 30*time.Second)
		p.do("open the decision panel", chromedp.Evaluate[chromedp.Void](`document.getElementById("decisions-box").open = true`))
		p.waitFor("a deadline decision explained by select_task_rq_dl", `(() => { const d = document.getElementById("decision").textContent;
			return d.includes("cpudl") && d.includes("SCHED_DEADLINE, runtime 0.2 ms") && (d.includes("dl_prev") || d.includes("dl_find_later_rq")); })()`, 30*time.Second)
		for _, stage := range []string{"dl_prev", "dl_find_later_rq"} {
			if !eval[bool](p, fmt.Sprintf(`[...document.querySelectorAll("#legend-list code")].some((c) => c.textContent === %q)`, stage)) {
				t.Errorf("the panel's legend has no %s row", stage)
			}
		}
		p.waitFor("the deadline tasks' table", `!document.getElementById("dl-tasks").hidden &&
			document.querySelectorAll("#dl-tasks tbody tr").length === 2 && document.getElementById("dl-tasks").textContent.includes("0.2 / 1 / 1 ms")`, 30*time.Second)
		t.Logf("(g2) decision panel: %s", shorten(eval[string](p, `document.getElementById("decision").textContent`), 300))
		t.Logf("(g2) deadline tasks: %s", shorten(eval[string](p, `document.querySelector("#dl-tasks tbody").textContent`), 300))
	})

	t.Run("g3_wake_policy", func(t *testing.T) {
		policyStep(t, p.with(t))
	})

	if f := con.failure(); f != "" {
		t.Errorf("the page failed: %s\n%s", f, con.dump())
	}

	t.Run("h_missing_wasm_says_so", func(t *testing.T) {
		// A page whose wasm was never built: a message, not a blank tab.
		bare := t.TempDir()
		for _, f := range []string{"index.html", "app.js", "style.css", "wasm_exec.js"} {
			copyFile(t, filepath.Join(dir, f), filepath.Join(bare, f))
		}
		h2, err := site.Handler(bare)
		if err != nil {
			t.Fatal(err)
		}
		defer h2.Close()
		ts2 := httptest.NewServer(h2)
		defer ts2.Close()
		tctx, con2 := b.tab(t, time.Minute)
		p2 := &page{t: t, ctx: tctx, con: con2}
		p2.do("open the page without its wasm", chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate(ts2.URL+"/"))
		p2.waitFor("the load error", `!document.getElementById("error").hidden && document.getElementById("error-text").textContent.includes("make wasm")`, 30*time.Second)
		if txt := eval[string](p2, `document.getElementById("loading-text").textContent`); !strings.Contains(txt, "schedplay.wasm") {
			t.Errorf("the canvas area says %q", txt)
		}
	})
	t.Logf("whole browser test: %v", time.Since(start).Round(100*time.Millisecond))
}

// with returns the page helper bound to a subtest.
func (p *page) with(t *testing.T) *page {
	return &page{t: t, ctx: p.ctx, con: p.con}
}

type hostile struct {
	name     string
	hash     string
	mentions []string
}

// hostileLinks are share links the page must refuse with a message: a
// machine of 2^20 (about a million) CPUs, garbage base64, an unknown knob.
func hostileLinks(t *testing.T, root string) []hostile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "presets", "machines", "intel-2s-44c-88t.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "a-million-cpus"
	topo := m["topology"].(map[string]any)
	// Every field at its own maximum: 64 × 2048 × 8 = 1,048,576 CPUs.
	topo["sockets"], topo["cores_per_socket"], topo["threads_per_core"], topo["cores_per_llc"] = 64, 2048, 8, 2048
	m["smt_throughput"] = []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7}
	big, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return []hostile{
		{"1M CPUs", "#machine=" + base64.RawURLEncoding.EncodeToString(big), []string{"2048", "CPUs"}},
		{"garbage base64", "#machine=@@not*base64!!", []string{"machine", "base64"}},
		{"unknown knob", "#SIS_FOO=1", []string{"SIS_FOO"}},
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// moduleRoot is the directory of go.mod (the test runs in e2e/).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// goCommand is the go command that runs the tests.
func goCommand() string {
	if gr := runtime.GOROOT(); gr != "" {
		if p := filepath.Join(gr, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// copyWasmExec copies the Go toolchain's wasm_exec.js into dir.
func copyWasmExec(goBin, dir string) error {
	out, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %v", err)
	}
	return copyFileErr(filepath.Join(strings.TrimSpace(string(out)), "lib", "wasm", "wasm_exec.js"), filepath.Join(dir, "wasm_exec.js"))
}

// buildPage builds the wasm and puts it in dir with the hand-written page
// files and wasm_exec.js, as `make wasm` does for static/.
func buildPage(root, goBin, dir string) error {
	ldflags := "-ldflags=-s -w"
	if strings.HasPrefix(os.Getenv("SCHEDPLAY_PAGE_BENCH"), "profile") {
		ldflags = "-ldflags=-w" // keep the function names for the profile
	}
	cmd := exec.Command(goBin, "build", "-trimpath", ldflags, "-o", filepath.Join(dir, "schedplay.wasm"), "./wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOOS=js GOARCH=wasm go build ./wasm: %v\n%s", err, out)
	}
	if err := copyWasmExec(goBin, dir); err != nil {
		return err
	}
	for _, f := range []string{"index.html", "app.js", "worker.js", "style.css"} {
		if err := copyFileErr(filepath.Join(root, "static", f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	// Precompressed as make wasm does, at a quicker brotli quality (make
	// wasm's 11 takes minutes here; 5 takes seconds, ~25% bigger).
	pc := exec.Command(goBin, "run", "./serve/precompress", "-q", "5", dir)
	pc.Dir = root
	if out, err := pc.CombinedOutput(); err != nil {
		return fmt.Errorf("go run ./serve/precompress: %v\n%s", err, out)
	}
	return nil
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := copyFileErr(from, to); err != nil {
		t.Fatal(err)
	}
}

func copyFileErr(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func fileSize(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
}

type nativeRun struct {
	cmd string
	res result
	err error
}

// runNative runs the command-line simulator on the link's settings.
func runNative(root, goBin string) nativeRun {
	args := []string{"run", "./cmd/schedsim", "run", "--preset", detPreset, "--workload", detWorkload,
		"--seed", fmt.Sprint(detSeed), "--duration", fmt.Sprintf("%ds", detSeconds), "--format", "json", "--no-wall-time"}
	r := nativeRun{cmd: "go " + strings.Join(args, " ")}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.err = fmt.Errorf("%v\n%s", err, stderr.String())
		return r
	}
	if err := json.Unmarshal(out, &r.res); err != nil {
		r.err = fmt.Errorf("parse: %v\n%s", err, out)
		return r
	}
	if len(r.res.Workloads) == 0 {
		r.err = fmt.Errorf("no workloads in %s", out)
	}
	return r
}
