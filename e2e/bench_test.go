//go:build !js

package e2e

import (
	"fmt"
	"github.com/chromedp/chromedp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPageBenchmark records the page's performance (issue 10): time to
// first frame and to interactive, bytes on the wire, main-thread frame
// time p50/p99 and the simulated-time rate per worker, for the Intel
// schbench default and the Zen4 1024-pair preset, with and without A/B.
// It logs the figures (and writes them to $SCHEDPLAY_BENCH_OUT when set);
// it does not gate on them — timings on a shared 2-core machine are
// noisy. What it asserts is the worker architecture: the main thread
// keeps drawing while a 2048-CPU A/B build runs in the workers.
//
// It takes a minute or two, so `make test` leaves it out: run it with
// `make bench-page` (SCHEDPLAY_PAGE_BENCH=1). TestPageSurvives checks in
// every run that frames keep coming while the 2048-CPU build runs.
func TestPageBenchmark(t *testing.T) {
	if os.Getenv("SCHEDPLAY_PAGE_BENCH") == "" {
		t.Skip("the page benchmark runs with make bench-page (SCHEDPLAY_PAGE_BENCH=1)")
	}
	requireChromium(t)
	var out strings.Builder
	record := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		out.WriteString(line + "\n")
	}
	if os.Getenv("SCHEDPLAY_PAGE_BENCH") == "floor" {
		floorLoads(t, newBrowser(t), record) // not the page: no need to build it
		return
	}
	baseURL, _ := servePage(t)
	b := newBrowser(t)

	switch os.Getenv("SCHEDPLAY_PAGE_BENCH") {
	case "profile":
		profileLoad(t, b, baseURL+"/")
		return
	case "profile-hostile":
		profileHostileTakeIn(t, b, baseURL+"/")
		return
	case "trace":
		traceLoad(t, b, baseURL+"/")
		return
	}
	// A first visit: a fresh tab, no cache. SCHEDPLAY_PAGE_QUERY adds a
	// query, e.g. "?fps=0" (the canvas at the display's rate whatever the
	// speed) to compare with the frame-rate policy.
	p := openPage(t, b, baseURL+"/"+os.Getenv("SCHEDPLAY_PAGE_QUERY"))
	lt := eval[loadTimes](p, loadTimesJS)
	record("load: wasm compiled %.0f ms, instantiated %.0f ms, Go main %.0f ms, first worker: script %.0f ms, instantiated %.0f ms, Go ready %.0f ms (heard %.0f ms), arms built %.0f ms (sent %.0f ms), first snapshot %.0f ms, first frame with the map (time to first frame) %.0f ms, panel built %.0f ms: time to interactive %.0f ms",
		lt.Compiled, lt.Instantiated, lt.GoMain, lt.WorkerScript, lt.WorkerInstantiated, lt.WorkerReadySent, lt.WorkerReady, lt.Built, lt.BuiltSent, lt.FirstSnap, lt.FirstFrame, lt.Panel, max(lt.FirstFrame, lt.Panel))
	record("load: %.2f MB on the wire (%.2f MB decoded) %v", float64(lt.Wire)/1e6, float64(lt.Raw)/1e6, lt.Files)
	t.Logf("schedplayLoad %s", eval[string](p, `JSON.stringify(window.schedplayLoad)`))
	// A repeat visit: the tab reloads; the assets come back as 304s from
	// the HTTP cache (Cache-Control: no-cache, Last-Modified), and V8 may
	// reuse the wasm code it cached beside the module's response.
	p.do("reload", chromedp.Reload())
	p.waitFor("interactive again", `window.simReady === true && window.schedplayLoad && window.schedplayLoad.firstMap > 0 && window.schedplayLoad.panel > 0`, 120*time.Second)
	rt := eval[loadTimes](p, loadTimesJS)
	record("repeat visit (reload): wasm compiled %.0f ms, Go main %.0f ms, panel built %.0f ms, first frame with the map %.0f ms: time to interactive %.0f ms; %.2f MB on the wire",
		rt.Compiled, rt.GoMain, rt.Panel, rt.FirstFrame, max(rt.FirstFrame, rt.Panel), float64(rt.Wire)/1e6)
	if os.Getenv("SCHEDPLAY_PAGE_BENCH") == "load" {
		return // the load figures only (SCHEDPLAY_PAGE_BENCH=load)
	}

	for _, tc := range []struct{ name, link string }{
		{"intel schbench default", "#speed=max"},
		{"intel schbench default, A/B", "#speed=max&ab=1&b.SIS_CORE=0"},
		{"zen4 1024 pairs", "#preset=amd-zen4-2s-256c-512t&w=netperf:n=1024&speed=max"},
		{"zen4 1024 pairs, A/B", "#preset=amd-zen4-2s-256c-512t&w=netperf:n=1024&speed=max&ab=1&b.SIS_CORE=0"},
	} {
		p.setHash(tc.link)
		p.waitFor(tc.name+": built", `sim.state().building === null && sim.state().error === "" && sim.state().arms.length > 0 && sim.perf().workers.every(w => w.simTime > 0)`, 90*time.Second)
		want := 1
		if strings.Contains(tc.link, "ab=1") {
			want = 2
		}
		time.Sleep(1500 * time.Millisecond) // the rate windows fill
		eval[any](p, `sim.frameStats(true)`)
		p0 := eval[perfView](p, `sim.perf()`)
		c0, cpuOK := chromiumCPUSeconds()
		// Six seconds: the readings come with the snapshots, 4 a second
		// at max speed on a software renderer (the canvas's cap).
		const window = 6.0
		time.Sleep(time.Duration(window * float64(time.Second)))
		p1 := eval[perfView](p, `sim.perf()`)
		c1, _ := chromiumCPUSeconds()
		if len(p1.Workers) != want {
			t.Errorf("%s: %d workers report, want %d", tc.name, len(p1.Workers), want)
			continue
		}
		var rates []string
		for i, w := range p1.Workers {
			simRate := (w.SimTime - p0.Workers[i].SimTime) / window
			evRate := (w.Events - p0.Workers[i].Events) / window
			rates = append(rates, fmt.Sprintf("arm %s %.4g sim s/s, %.3g events/s (worker's own: %.4g, %.3g; started in %.0f ms)",
				w.Arm, simRate, evRate, w.SimRate, w.EventsPerSec, w.WorkerReadyMs))
		}
		cores := ""
		if cpuOK {
			cores = fmt.Sprintf("; Chromium %.2f cores (GPU process %.2f, renderer: main thread and workers %.2f)",
				(c1.total-c0.total)/window, (c1.gpu-c0.gpu)/window, (c1.renderer-c0.renderer)/window)
		}
		record("%s: frame p50 %.1f ms p99 %.1f ms max %.1f ms over %d drawn frames (canvas at most %d fps: %s); %s%s",
			tc.name, p1.Frame.P50Ms, p1.Frame.P99Ms, p1.Frame.MaxMs, p1.Frame.N, p1.Canvas.MaxFps, p1.Canvas.Why, strings.Join(rates, "; "), cores)
	}

	// What the browser spends on the default page (the A/B story at 1×
	// real time, which the engine keeps up with using a sliver of a
	// core) and on a paused run: nothing changing, nothing drawn, and
	// Chromium's processes near idle.
	idle := func(name string) {
		time.Sleep(2 * time.Second)
		d0 := eval[float64](p, `sim.frameStats().drawn`)
		c0, ok := chromiumCPUSeconds()
		time.Sleep(5 * time.Second)
		c1, _ := chromiumCPUSeconds()
		d1 := eval[float64](p, `sim.frameStats().drawn`)
		if ok {
			record("%s: Chromium's processes %.2f cores (GPU process %.2f, renderers %.2f), canvas %.1f frames drawn a second, achieved speed %.3g×",
				name, (c1.total-c0.total)/5, (c1.gpu-c0.gpu)/5, (c1.renderer-c0.renderer)/5, (d1-d0)/5, eval[float64](p, `sim.state().achievedSpeed`))
		}
	}
	p.setHash("")
	p.waitFor("the default page", `sim.state().building === null && sim.state().cpus === 88 && sim.state().arms.length === 2 && sim.state().speed === 1`, 60*time.Second)
	eval[any](p, `sim.pause(false)`)
	idle("default page, 1× real time")
	eval[any](p, `sim.pause(true)`)
	idle("paused page")
	eval[any](p, `sim.pause(false)`)

	// The worker architecture: a 2048-CPU A/B build runs in the workers
	// while the main thread keeps drawing, its frames short.
	link := hostileBuildLink(t)
	p.setHash(link)
	p.waitFor("the 2048-CPU build to start", `sim.state().building !== null`, 20*time.Second)
	eval[any](p, `sim.frameStats(true)`)
	f0 := p.state().Frames
	time.Sleep(4 * time.Second)
	st := p.state()
	pv := eval[perfView](p, `sim.perf()`)
	fs := eval[frameStatsView](p, `sim.frameStats()`)
	record("2048-CPU A/B build in the workers (%s): %d frames in 4 s, drawn frames p50 %.1f ms p99 %.1f ms max %.1f ms; worst frame while building %.1f ms, worst overall %.1f ms (update %.1f, draw %.1f)",
		st.BuildingText, st.Frames-f0, pv.Frame.P50Ms, pv.Frame.P99Ms, pv.Frame.MaxMs, fs.MaxBuildingWorkMs, fs.MaxWorkMs, fs.WorstUpdateMs, fs.WorstDrawMs)
	if st.Building == nil {
		t.Log("the build finished within the window: its arms then ran, and the first frames drawing two 2048-CPU maps are in the figures above")
	}
	if st.Frames-f0 < 5 {
		t.Errorf("the canvas stalled while the workers built: %d frames in 4 s", st.Frames-f0)
	}
	// Bounded, not the 16 ms target: SwiftShader on a loaded machine.
	if fs.MaxBuildingWorkMs > 100 {
		t.Errorf("a main-thread frame took %.1f ms while the workers built (want it bounded by 100 ms)", fs.MaxBuildingWorkMs)
	}
	p.setHash("#seed=5")
	p.waitFor("the default again", `sim.state().building === null && sim.state().cpus === 88`, 30*time.Second)
	p.noFailures()

	if f := os.Getenv("SCHEDPLAY_BENCH_OUT"); f != "" {
		if err := os.WriteFile(filepath.Clean(f), []byte(out.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// loadTimesJS reads window.schedplayLoad and the resource timings.
const loadTimesJS = `(() => {
		const l = window.schedplayLoad || {};
		const nav = performance.getEntriesByType("navigation")[0];
		let wire = nav ? nav.transferSize : 0, raw = nav ? nav.decodedBodySize : 0;
		const files = {};
		for (const r of performance.getEntriesByType("resource")) {
			wire += r.transferSize; raw += r.decodedBodySize;
			files[r.name.split("/").pop()] = r.transferSize;
		}
		return {Compiled: l.compiled || 0, Instantiated: l.instantiated || 0, GoMain: l.goMain || 0,
			WorkerScript: l.workerScript || 0, WorkerInstantiated: l.workerInstantiated || 0, WorkerReady: l.workerReady || 0, WorkerReadySent: l.workerReadySent || 0, Built: l.built || 0, BuiltSent: l.builtSent || 0, FirstSnap: l.firstSnap || 0,
			FirstFrame: l.firstMap || 0, Panel: l.panel || 0, Wire: wire, Raw: raw, Files: files};
	})()`

type loadTimes struct {
	Compiled, Instantiated, GoMain, WorkerScript, WorkerInstantiated, WorkerReady, WorkerReadySent, Built, BuiltSent, FirstSnap, FirstFrame, Panel float64
	Wire, Raw                                                                                                                                      int64
	Files                                                                                                                                          map[string]int64
}

type perfView struct {
	Frame struct {
		N     int     `json:"n"`
		P50Ms float64 `json:"p50Ms"`
		P99Ms float64 `json:"p99Ms"`
		MaxMs float64 `json:"maxMs"`
	} `json:"frame"`
	Workers []struct {
		Arm           string  `json:"arm"`
		SimRate       float64 `json:"simRate"`
		EventsPerSec  float64 `json:"eventsPerSec"`
		SimTime       float64 `json:"simTime"`
		Events        float64 `json:"events"`
		WorkerReadyMs float64 `json:"workerReadyMs"`
	} `json:"workers"`
	Canvas struct {
		MaxFps int    `json:"maxFps"`
		Why    string `json:"why"`
	} `json:"canvas"`
}

// chromiumCPU is the CPU time (seconds) Chromium's processes have used:
// all of them, the GPU process (which rasterises the canvas when WebGL is
// software) and the renderers (the page's main thread and its workers).
type chromiumCPU struct{ total, gpu, renderer float64 }

// chromiumCPUSeconds reads /proc (Linux); ok is false elsewhere.
func chromiumCPUSeconds() (c chromiumCPU, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 > len(s) || !strings.Contains(s[:i], "chrom") {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 13 {
			continue
		}
		var user, sys float64
		fmt.Sscan(f[11], &user)
		fmt.Sscan(f[12], &sys)
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(st), "cmdline"))
		v := (user + sys) / 100 // USER_HZ
		ok = true
		c.total += v
		switch {
		case strings.Contains(string(cmd), "type=gpu-process"):
			c.gpu += v
		case strings.Contains(string(cmd), "type=renderer"):
			c.renderer += v
		}
	}
	return c, ok
}
