//go:build !js

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"schedplay/playground"
	"schedplay/serve/site"
)

// The page survives whatever a link or the engine does (issue 9): a link
// the parser refuses opens the defaults with a banner; a panic in the Go
// program is recovered and shown with the link that reproduces it and a
// reset button, and the canvas keeps drawing; a huge valid run is built a
// slice at a time without freezing the tab, and a new link cancels it.
func TestPageSurvives(t *testing.T) {
	requireChromium(t)
	baseURL, _ := servePage(t)
	b := newBrowser(t)

	t.Run("empty_value", func(t *testing.T) {
		// An empty integer in a workload spec. Either the link parser
		// refuses it (a banner naming the key, the defaults run) or it
		// reaches the engine, which panics: the recovery banner, with the
		// link and a reset button that works.
		p := openPage(t, b, baseURL+"/#w=uperf:size=")
		if eval[bool](p, `typeof sim.debugPanic !== "undefined"`) {
			t.Error("sim.debugPanic exists without ?debug=1")
		}
		p.waitFor("a banner", `!document.getElementById("error").hidden || !document.getElementById("crash").hidden`, 60*time.Second)
		if eval[bool](p, `!document.getElementById("crash").hidden`) {
			c := p.state().Crash
			if c == nil || !strings.Contains(c.Link, "uperf:size=") {
				p.fatalf("crash banner without the link: %+v", c)
			}
			link := eval[string](p, `document.getElementById("crash-link").getAttribute("href")`)
			if !strings.HasSuffix(link, "#"+c.Link) {
				t.Errorf("the banner's link %q does not reproduce %q", link, c.Link)
			}
			t.Logf("recovered: panic while %s: %s (link #%s)", c.Where, c.Message, c.Link)
			p.keepsRunning(false)
			p.resetToDefault()
		} else {
			text := eval[string](p, `document.getElementById("error-text").textContent`)
			if !strings.Contains(text, "size") {
				t.Errorf("the banner does not name the bad key: %q", text)
			}
			t.Logf("refused: %s", text)
			p.keepsRunning(true)
		}
		p.noFailures()
	})

	t.Run("nan_speed", func(t *testing.T) {
		// speed=NaN once left the page on "Loading" for good.
		p := openPage(t, b, baseURL+"/#speed=NaN")
		p.waitFor("the loading overlay to go", `document.getElementById("loading").hidden`, 20*time.Second)
		p.waitFor("a banner naming speed", `(!document.getElementById("error").hidden && /speed/i.test(document.getElementById("error-text").textContent)) ||
			!document.getElementById("crash").hidden`, 20*time.Second)
		t.Logf("banner: %s%s", eval[string](p, `document.getElementById("error").hidden ? "" : document.getElementById("error-text").textContent`),
			eval[string](p, `document.getElementById("crash").hidden ? "" : document.getElementById("crash").textContent`))
		if st := p.state(); st.Crash == nil && st.Speed != playground.DefaultSpeed {
			t.Errorf("speed %v after a NaN link, want the default %v", st.Speed, playground.DefaultSpeed)
		}
		if h := eval[string](p, `location.hash`); strings.Contains(h, "NaN") {
			t.Errorf("the URL still says NaN: %s", h)
		}
		p.keepsRunning(true)
		p.noFailures()
	})

	t.Run("hostile_build", func(t *testing.T) {
		// A valid but huge run: 2048 CPUs in one LLC, 16384 netperf
		// pairs (32768 tasks) per arm, A/B. The page builds it a slice
		// at a time: frames keep coming, the panel answers, and a new
		// link cancels the build.
		link := hostileBuildLink(t)
		p := openPage(t, b, baseURL+"/"+link)
		p.waitFor("the build to show", `!document.getElementById("building").hidden && sim.state().building !== null`, 20*time.Second)
		text := eval[string](p, `document.getElementById("building-text").textContent`)
		if !strings.Contains(text, "2,048 CPUs") {
			t.Errorf("the build strip says %q, want it to name 2,048 CPUs", text)
		}
		// Measure a window of the build: requestAnimationFrame timestamps
		// in the page, and the page's own record of how long its Go code
		// held the tab.
		measure := func(n int) buildWindow {
			p.do("start the frame monitor", chromedp.Evaluate[chromedp.Void](rafMonitor))
			eval[any](p, `sim.frameStats(true)`)
			st0 := p.state()
			if st0.Building == nil {
				p.fatalf("the build ended before it could be watched")
			}
			// Watch for 6 s, or until the build ends (a faster engine).
			const watch = 6 * time.Second
			w := buildWindow{bp: *st0.Building, text: st0.BuildingText}
			start := time.Now()
			for time.Since(start) < watch {
				st := p.state() // the panel's own call, answered while building
				w.answers++
				if st.Building == nil {
					if st.CPUs != 2048 || len(st.Arms) != 2 || st.Error != "" || st.Crash != nil {
						p.fatalf("the build stopped without its run: %+v", st)
					}
					w.finished = true
					break
				}
				w.bp, w.text = *st.Building, st.BuildingText
				time.Sleep(250 * time.Millisecond)
			}
			w.watched = time.Since(start).Round(time.Millisecond)
			w.raf = eval[rafStats](p, `window.__raf.stop()`)
			w.fs = eval[frameStatsView](p, `sim.frameStats()`)
			st1 := p.state()
			t.Logf("window %d, %v of building (finished: %v): the page held the tab for at most: %.1f ms a frame while building (Update+Draw), %.1f ms a callback (%s), %.1f ms a build slice (%d slices), %.1f ms an indivisible engine step; build: %s, steps so far %v; frames: %d canvas frames, longest gap %.1f ms, worst frame %.1f ms (update %.1f, draw %.1f, took new arms in: %v), the frame taking the built arms in %.1f ms; requestAnimationFrame: %d frames, longest gap %.0f ms (gaps over 50 ms: %v)",
				n, w.watched, w.finished, w.fs.MaxBuildingWorkMs, w.fs.MaxCallbackMs, w.fs.MaxCallback, w.fs.MaxBuildSliceMs, w.fs.BuildSlices, w.fs.MaxBuildStepMs,
				w.text, w.bp.Steps, w.fs.Frames, w.fs.MaxGapMs, w.fs.MaxWorkMs, w.fs.WorstUpdateMs, w.fs.WorstDrawMs, w.fs.WorstRebuilt, w.fs.MaxRebuildWorkMs, w.raf.N, w.raf.Max, w.raf.Gaps)
			// Taking the finished 2048-CPU arms in (the canvas rebuilds
			// its per-CPU state and layout for 4096 CPUs) is one frame
			// after the build, not part of it; it is bounded on its own.
			if w.fs.MaxRebuildWorkMs > 3000 {
				t.Errorf("the frame taking the built 2048-CPU arms in held the tab %.0f ms", w.fs.MaxRebuildWorkMs)
			}
			if !w.finished && (w.raf.N < 5 || st1.Frames < st0.Frames+5) {
				t.Errorf("the canvas stalled while building: %d animation frames, canvas frames %d -> %d", w.raf.N, st0.Frames, st1.Frames)
			}
			if !w.finished && w.bp.Tasks <= st0.Building.Tasks && w.bp.Arm == st0.Building.Arm {
				t.Errorf("the build made no progress: %+v -> %+v", st0.Building, w.bp)
			}
			if !w.finished && w.answers < 3 {
				t.Errorf("sim.state() answered only %d times in %v", w.answers, w.watched)
			}
			// The engine's indivisible steps (laying out 2048 CPUs,
			// setting up an engine for them) take tens of ms; a step of
			// seconds is a regression.
			for _, s := range append(w.bp.Steps, playground.BuildStep{Name: "a step in this window", Ms: w.fs.MaxBuildStepMs}) {
				if s.Ms > 3000 {
					t.Errorf("build step %q took %.0f ms", s.Name, s.Ms)
				}
			}
			return w
		}
		// What the page's Go code holds the tab for — a frame's Update
		// and Draw, a callback from the panel, a slice of the build — must
		// stay under 100 ms while the workers build. These are wall-clock
		// times: on a loaded 2-core machine the OS stretches any of them
		// now and then, build or no build. So a window over the limit is
		// measured once more, and if that one is over too, the same page
		// is measured without a build (below): the build fails the test
		// only when it holds the tab clearly longer than the idle page
		// does on the same machine at the same time (a block built into
		// the page shows as seconds, as it did before the workers). The
		// gaps between animation frames are logged only: headless
		// Chromium's software WebGL alone leaves gaps of several hundred
		// ms there.
		const limit = 100.0 // ms
		worst := func(w buildWindow) float64 {
			return max(w.fs.MaxBuildingWorkMs, w.fs.MaxCallbackMs, w.fs.MaxBuildSliceMs)
		}
		w := measure(1)
		if worst(w) > limit && !w.finished {
			t.Logf("window 1: the page held the tab for %.1f ms (frame %.1f, callback %.1f (%s), build slice %.1f); measuring a second window",
				worst(w), w.fs.MaxBuildingWorkMs, w.fs.MaxCallbackMs, w.fs.MaxCallback, w.fs.MaxBuildSliceMs)
			w = measure(2)
		}
		buildWorst := worst(w)

		// A new link cancels the build at once.
		start := time.Now()
		p.setHash("#seed=5")
		p.waitFor("the new link to replace the build", `sim.state().building === null && sim.state().seed === 5 && sim.state().cpus === 88`, 20*time.Second)
		t.Logf("the new link replaced the build in %v", time.Since(start).Round(time.Millisecond))
		p.waitFor("the strip to go", `document.getElementById("building").hidden`, 5*time.Second)
		p.keepsRunning(true)
		if buildWorst > limit {
			// The same page, running the default, no build.
			p.do("start the frame monitor", chromedp.Evaluate[chromedp.Void](rafMonitor))
			eval[any](p, `sim.frameStats(true)`)
			for start := time.Now(); time.Since(start) < 6*time.Second; {
				p.state()
				time.Sleep(250 * time.Millisecond)
			}
			eval[rafStats](p, `window.__raf.stop()`)
			fs := eval[frameStatsView](p, `sim.frameStats()`)
			idleWorst := max(fs.MaxWorkMs, fs.MaxCallbackMs)
			t.Logf("without a build the page held the tab for at most %.1f ms (frame %.1f, callback %.1f (%s)); while building %.1f ms",
				idleWorst, fs.MaxWorkMs, fs.MaxCallbackMs, fs.MaxCallback, buildWorst)
			if buildWorst > max(limit, 2*idleWorst) {
				t.Errorf("the page held the tab for %.1f ms while building (frame %.1f, callback %.1f (%s), build slice %.1f), over %v ms and over twice the %.1f ms it holds it without a build",
					buildWorst, w.fs.MaxBuildingWorkMs, w.fs.MaxCallbackMs, w.fs.MaxCallback, w.fs.MaxBuildSliceMs, limit, idleWorst)
			}
		}

		// The strip's Cancel button keeps the run on show.
		p.setHash(link)
		p.waitFor("the build to start again", `sim.state().building !== null`, 20*time.Second)
		p.do("click Cancel", chromedp.Click(chromedp.ID("building-cancel")))
		p.waitFor("Cancel to stop the build", `sim.state().building === null && sim.state().seed === 5 && location.hash.includes("seed=5")`, 10*time.Second)
		p.noFailures()
	})

	t.Run("slow_load", func(t *testing.T) {
		// Never just "Loading": a page whose wasm comes in slowly says
		// what it is waiting for after a few seconds.
		_, dir := servePage(t)
		h, err := site.Handler(dir)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ".wasm") {
				w = &slowWriter{ResponseWriter: w, ctx: r.Context()}
			}
			h.ServeHTTP(w, r)
		}))
		defer func() {
			ts.CloseClientConnections()
			ts.Close()
			h.Close()
		}()
		ctx, con := b.tab(t, time.Minute)
		p := &page{t: t, ctx: ctx, con: con}
		p.do("open the slow page", chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate(ts.URL+"/"))
		p.waitFor("the loading message to say what it waits for", `/Still downloading schedplay\.wasm: [0-9.]+ MB so far/.test(document.getElementById("loading-text").textContent)`, 20*time.Second)
		t.Logf("loading message: %s", eval[string](p, `document.getElementById("loading-text").textContent`))
		p.noFailures()
	})

	t.Run("forced_panics", func(t *testing.T) {
		// ?debug=1 adds sim.debugPanic, which forces a Go panic in the
		// canvas's Update, its Draw, a build, or a callback.
		p := openPage(t, b, baseURL+"/?debug=1#seed=4")
		for _, tc := range []struct {
			where, shown string
			halts        bool
			trigger      string
		}{
			{"update", "running the simulation", true, `sim.debugPanic("update")`},
			{"draw", "drawing the canvas", false, `sim.debugPanic("draw")`},
			{"build", "building the run", false, `(sim.debugPanic("build"), location.hash = "#seed=6")`},
			{"callback", "answering sim.debugPanic()", false, `sim.debugPanic("callback")`},
		} {
			p.waitFor("a running simulation", `sim.state().crash === null && sim.state().building === null`, 20*time.Second)
			p.do("force a panic in "+tc.where, chromedp.Evaluate[chromedp.Void](tc.trigger))
			p.waitFor(tc.where+": the recovery banner", fmt.Sprintf(`!document.getElementById("crash").hidden && document.getElementById("crash-where").textContent === %q`, tc.shown), 20*time.Second)
			st := p.state()
			if st.Halted != tc.halts {
				t.Errorf("%s: halted=%v, want %v", tc.where, st.Halted, tc.halts)
			}
			if tc.where == "build" {
				if !strings.Contains(st.Crash.Link, "seed=6") || st.Seed != 4 || !strings.Contains(eval[string](p, `location.hash`), "seed=4") {
					t.Errorf("build: crash link %q, seed %d, URL %s (want the failed link, and the running seed=4 run kept)", st.Crash.Link, st.Seed, eval[string](p, `location.hash`))
				}
			}
			if !eval[bool](p, `!!document.getElementById("crash-reset") && !document.getElementById("crash-reset").hidden`) {
				t.Errorf("%s: no reset button", tc.where)
			}
			p.keepsRunning(!tc.halts)
			p.resetToDefault()
			p.setHash("#seed=4")
		}
		p.noFailures()
	})
}

// slowWriter trickles a response out (a slow network).
type slowWriter struct {
	http.ResponseWriter
	ctx context.Context
}

func (w *slowWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), 16<<10)
		m, err := w.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		b = b[k:]
		select {
		case <-w.ctx.Done():
			return n, w.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return n, nil
}

// openPage opens url in a new tab of b and waits for the first frame.
func openPage(t *testing.T, b *chromium, url string) *page {
	t.Helper()
	ctx, con := b.tab(t, 4*time.Minute)
	p := &page{t: t, ctx: ctx, con: con}
	p.do("open "+shorten(url, 100), chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate(url))
	p.waitFor("the first frame", `window.simReady === true && typeof sim.state === "function"`, 120*time.Second)
	return p
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// keepsRunning checks that the page is alive: the canvas draws frames,
// sim.state() answers, the canvas is not blank, and (advancing) simulated
// time moves on.
func (p *page) keepsRunning(advancing bool) {
	p.t.Helper()
	st := p.state()
	p.waitFor("canvas frames", fmt.Sprintf(`sim.state().frames >= %d`, st.Frames+5), 20*time.Second)
	if advancing {
		p.do("resume", chromedp.Evaluate[chromedp.Void](`sim.pause(false)`))
		before := p.state().SimTime
		p.waitFor("simulated time to advance", fmt.Sprintf(`sim.state().simTime > %g`, before), 20*time.Second)
	}
	c := eval[rect](p, `(() => { const r = document.querySelector("canvas").getBoundingClientRect(); return {X: r.x, Y: r.y, Width: r.width, Height: r.height}; })()`)
	img, png := p.screenshot()
	if drawn, total, _ := drawnPixels(img, c); drawn < total/200 {
		p.saveScreenshot("schedplay-e2e-survive-blank.png", png)
		p.t.Errorf("the canvas looks blank: %d of %d pixels drawn", drawn, total)
	}
}

// resetToDefault clicks the recovery banner's reset button and checks the
// defaults run again.
func (p *page) resetToDefault() {
	p.t.Helper()
	p.do("click Reset to default", chromedp.Click(chromedp.ID("crash-reset")))
	p.waitFor("the defaults after reset", fmt.Sprintf(`document.getElementById("crash").hidden && sim.state().crash === null && !sim.state().halted &&
		sim.state().cpus === 88 && location.hash === %q`, "#"+playground.Default().Encode()), 20*time.Second)
	p.keepsRunning(true)
}

// noFailures fails the test on an uncaught exception or a Go exit.
func (p *page) noFailures() {
	p.t.Helper()
	if f := p.con.failure(); f != "" {
		p.fatalf("the page failed: %s", f)
	}
}

// rafMonitor records the gaps between animation frames until stop().
const rafMonitor = `window.__raf = (() => {
	const m = {n: 0, max: 0, gaps: [], last: 0, on: true};
	const tick = (t) => {
		if (m.last) {
			const d = t - m.last;
			m.n++;
			m.max = Math.max(m.max, d);
			if (d > 50) m.gaps.push(Math.round(d));
		}
		m.last = t;
		if (m.on) requestAnimationFrame(tick);
	};
	requestAnimationFrame(tick);
	m.stop = () => { m.on = false; return {N: m.n, Max: m.max, Gaps: m.gaps}; };
	return m;
})(), undefined`

type rafStats struct {
	N    int
	Max  float64
	Gaps []int
}

type frameStatsView struct {
	Frames          int64   `json:"frames"`
	Drawn           int64   `json:"drawn"`
	MaxGapMs        float64 `json:"maxGapMs"`
	MaxWorkMs       float64 `json:"maxWorkMs"`
	LastWorkMs      float64 `json:"lastWorkMs"`
	MaxCallbackMs   float64 `json:"maxCallbackMs"`
	MaxCallback     string  `json:"maxCallback"`
	BuildSlices     int64   `json:"buildSlices"`
	MaxBuildSliceMs float64 `json:"maxBuildSliceMs"`
	MaxBuildStepMs  float64 `json:"maxBuildStepMs"`
	// The worst frame's Update/Draw split and whether it took new arms
	// in; the worst frame while a build was in progress; the worst frame
	// that took new arms in (the canvas rebuilding for them).
	WorstUpdateMs     float64 `json:"worstUpdateMs"`
	WorstDrawMs       float64 `json:"worstDrawMs"`
	WorstRebuilt      bool    `json:"worstRebuilt"`
	MaxBuildingWorkMs float64 `json:"maxBuildingWorkMs"`
	MaxRebuildWorkMs  float64 `json:"maxRebuildWorkMs"`
}

// buildWindow is what the hostile build test saw in one window.
type buildWindow struct {
	fs       frameStatsView
	raf      rafStats
	bp       playground.BuildProgress
	text     string
	watched  time.Duration
	finished bool
	answers  int
}

// hostileBuildLink is a valid link to a run that takes long to build: a
// custom machine of 2048 CPUs in one LLC (1 socket × 1024 cores × 2
// threads) with netperf:n=16384 in A/B.
func hostileBuildLink(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "presets", "machines", "intel-2s-44c-88t.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "flat-2048"
	topo := m["topology"].(map[string]any)
	topo["sockets"], topo["cores_per_socket"], topo["threads_per_core"], topo["cores_per_llc"] = 1, 1024, 2, 1024
	// One socket: the 2-socket preset's node-distance table goes too.
	delete(m, "numa_distance")
	delete(m, "numa_distance_note")
	spec, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	link := "#machine=" + base64.RawURLEncoding.EncodeToString(spec) + "&w=netperf:n=16384&ab=1&b.SIS_CORE=false"
	if _, err := playground.Parse(link); err != nil {
		t.Fatalf("the hostile build link does not parse: %v", err)
	}
	return link
}
