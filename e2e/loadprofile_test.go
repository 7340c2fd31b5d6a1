//go:build !js

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// profileLoad records a V8 CPU profile of the page's main thread from
// navigation to interactive (the first frame with the map and the panel
// built) and prints where the time went: the "profile that stops" the
// time-to-interactive target, if it is not met (issue 10). The wasm is
// built with its function names for this (SCHEDPLAY_PAGE_BENCH=profile).
func profileLoad(t *testing.T, b *chromium, url string) {
	ctx, con := b.tab(t, 4*time.Minute)
	p := &page{t: t, ctx: ctx, con: con}
	startProfile(p)
	p.do("open the page", chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate(url))
	p.waitFor("interactive", `window.simReady === true && window.schedplayLoad && window.schedplayLoad.firstMap > 0 && window.schedplayLoad.panel > 0`, 120*time.Second)
	prof := stopProfile(p, "load.cpuprofile")
	t.Logf("schedplayLoad %s", eval[string](p, `JSON.stringify(window.schedplayLoad)`))
	for _, line := range summarizeProfile(prof, 40) {
		t.Log(line)
	}
}

// profileHostileTakeIn records the main thread's profile from setting
// the hostile 2048-CPU A/B link on a loaded page until two seconds after
// its arms are built and running (SCHEDPLAY_PAGE_BENCH=profile-hostile):
// where the first frames of the two 2048-CPU maps go.
func profileHostileTakeIn(t *testing.T, b *chromium, url string) {
	p := openPage(t, b, url)
	eval[any](p, `sim.frameStats(true)`)
	startProfile(p)
	p.setHash(hostileBuildLink(t))
	p.waitFor("the 2048-CPU arms running", `sim.state().building === null && sim.state().arms.length === 2 && sim.state().cpus === 2048`, 3*time.Minute)
	time.Sleep(2 * time.Second)
	prof := stopProfile(p, "hostile.cpuprofile")
	t.Logf("frameStats %s", eval[string](p, `JSON.stringify(sim.frameStats())`))
	for _, line := range summarizeProfile(prof, 30) {
		t.Log(line)
	}
}

// startProfile starts V8's sampling profiler (200 µs) on the page's tab.
func startProfile(p *page) {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, profiler.Enable, cdp.Empty{}); err != nil {
		p.fatalf("profiler: %v", err)
	}
	if _, err := chromedp.Call(p.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
		p.fatalf("profiler: %v", err)
	}
	if _, err := chromedp.Call(p.ctx, profiler.Start, cdp.Empty{}); err != nil {
		p.fatalf("profiler: %v", err)
	}
}

// stopProfile stops the profiler and writes the profile as name (Chrome
// DevTools, Performance → Load profile) in $SCHEDPLAY_BENCH_OUT's
// directory, or the test's temp directory.
func stopProfile(p *page, name string) *profiler.Profile {
	p.t.Helper()
	res, err := chromedp.Call(p.ctx, profiler.Stop, cdp.Empty{})
	if err != nil {
		p.fatalf("profiler: %v", err)
	}
	out := benchArtifact(p.t, name)
	if data, err := json.Marshal(res.Profile); err == nil && os.WriteFile(out, data, 0o644) == nil {
		p.t.Logf("profile written to %s", out)
	}
	return res.Profile
}

// benchArtifact is where a page benchmark writes a file it records (a
// profile, a trace): beside $SCHEDPLAY_BENCH_OUT, else in the test's temp
// directory.
func benchArtifact(t *testing.T, name string) string {
	dir := t.TempDir()
	if o := os.Getenv("SCHEDPLAY_BENCH_OUT"); o != "" {
		dir = filepath.Dir(o)
	}
	return filepath.Join(dir, name)
}

// summarizeProfile sums self time per function (and per Go package, for
// wasm functions named pkg.Func) and returns the top n lines of each.
func summarizeProfile(prof *profiler.Profile, n int) []string {
	nodes := map[int64]*profiler.ProfileNode{}
	for _, nd := range prof.Nodes {
		nodes[nd.ID] = nd
	}
	self := map[string]int64{}
	pkgs := map[string]int64{}
	var total int64
	for i, id := range prof.Samples {
		if i >= len(prof.TimeDeltas) {
			break
		}
		d := prof.TimeDeltas[i]
		nd := nodes[id]
		if nd == nil || nd.CallFrame == nil {
			continue
		}
		name := nd.CallFrame.FunctionName
		if name == "" {
			name = "(anonymous) " + filepath.Base(nd.CallFrame.URL)
		}
		self[name] += d
		pkgs[goPackage(name, nd.CallFrame.URL)] += d
		total += d
	}
	top := func(m map[string]int64, title string) []string {
		type kv struct {
			k string
			v int64
		}
		var s []kv
		for k, v := range m {
			s = append(s, kv{k, v})
		}
		sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v })
		lines := []string{fmt.Sprintf("%s (self time, %.0f ms sampled in all):", title, float64(total)/1e3)}
		for i := 0; i < len(s) && i < n; i++ {
			lines = append(lines, fmt.Sprintf("  %7.1f ms %5.1f%%  %s", float64(s[i].v)/1e3, 100*float64(s[i].v)/float64(max(total, 1)), s[i].k))
		}
		return lines
	}
	return append(top(pkgs, "by package"), top(self, "by function")...)
}

// goPackage is the Go package of a wasm function name as V8 shows it
// ("schedplay_engine.__Sim_.step", "github.com_goccy_…"), or the kind of
// entry for V8's own ("(program)", "(garbage collector)") and JavaScript.
func goPackage(fn, url string) string {
	if strings.HasPrefix(fn, "(") {
		return fn
	}
	if !strings.Contains(url, ".wasm") && !strings.HasPrefix(url, "wasm://") {
		return "JavaScript " + filepath.Base(url)
	}
	if i := strings.Index(fn, "."); i > 0 {
		return fn[:i]
	}
	return fn
}
