//go:build !js

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceLoad records a Chrome trace of the page's first load, navigation to
// interactive (SCHEDPLAY_PAGE_BENCH=trace): every thread of the renderer —
// the main thread, the engine workers — and the GPU process, with V8's
// wasm compilation events. It writes load.trace.json (Perfetto or
// chrome://tracing open it) beside $SCHEDPLAY_BENCH_OUT, or in the test's
// temp directory, and logs each renderer thread's busiest event names per
// half second. It found the module reaching the workers 3 s late.
func traceLoad(t *testing.T, b *chromium, url string) {
	ctx, con := b.tab(t, 4*time.Minute)
	p := &page{t: t, ctx: ctx, con: con}
	var mu sync.Mutex
	var events []traceEvent
	done := make(chan struct{})
	chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			defer mu.Unlock()
			for _, v := range e.Value {
				var te traceEvent
				if data, err := json.Marshal(v); err == nil && json.Unmarshal(data, &te) == nil {
					events = append(events, te)
				}
			}
		case *tracing.EventTracingComplete:
			close(done)
		}
	})
	cats := []string{"toplevel", "devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "loading", "v8", "v8.execute", "v8.wasm", "disabled-by-default-v8.compile", "gpu"}
	if _, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{IncludedCategories: cats}}); err != nil {
		t.Fatalf("tracing: %v", err)
	}
	p.do("open the page", chromedp.EmulateViewport(viewportW, viewportH), chromedp.Navigate(url))
	p.waitFor("interactive", `window.simReady === true && window.schedplayLoad && window.schedplayLoad.firstMap > 0 && window.schedplayLoad.panel > 0`, 120*time.Second)
	t.Logf("schedplayLoad %s", eval[string](p, `JSON.stringify(window.schedplayLoad)`))
	if _, err := chromedp.Call(ctx, tracing.End, struct{}{}); err != nil {
		t.Fatalf("tracing: %v", err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("tracing: no tracingComplete within a minute")
	}
	mu.Lock()
	defer mu.Unlock()
	out := benchArtifact(t, "load.trace.json")
	if data, err := json.Marshal(map[string]any{"traceEvents": events}); err == nil && os.WriteFile(out, data, 0o644) == nil {
		t.Logf("trace written to %s (%d events)", out, len(events))
	}
	for _, line := range summarizeTrace(events, 500*time.Millisecond) {
		t.Log(line)
	}
}

// traceEvent is the part of a Chrome trace event the summary reads (the
// file keeps every field).
type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

// summarizeTrace lists, for the renderer's main thread and its dedicated
// workers, the three event names with the most self time in each window
// from the first event on.
func summarizeTrace(events []traceEvent, window time.Duration) []string {
	threads := map[[2]int64]string{}
	t0 := 0.0
	for _, e := range events {
		if e.Ph == "M" && e.Name == "thread_name" {
			if n, _ := e.Args["name"].(string); n == "CrRendererMain" || n == "DedicatedWorker thread" {
				threads[[2]int64{e.Pid, e.Tid}] = n
			}
		}
		if e.Ts > 0 && (t0 == 0 || e.Ts < t0) {
			t0 = e.Ts
		}
	}
	var lines []string
	keys := make([][2]int64, 0, len(threads))
	for k := range threads {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	w := float64(window.Microseconds())
	for _, k := range keys {
		var xs []traceEvent
		for _, e := range events {
			if e.Pid == k[0] && e.Tid == k[1] && e.Ph == "X" && e.Dur > 0 {
				xs = append(xs, e)
			}
		}
		if len(xs) == 0 {
			continue
		}
		sort.Slice(xs, func(i, j int) bool { return xs[i].Ts < xs[j].Ts || xs[i].Ts == xs[j].Ts && xs[i].Dur > xs[j].Dur })
		// Self time: an event's duration less its children's.
		self := make([]float64, len(xs))
		var stack []int
		for i, e := range xs {
			self[i] = e.Dur
			for len(stack) > 0 && xs[stack[len(stack)-1]].Ts+xs[stack[len(stack)-1]].Dur <= e.Ts {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				self[stack[len(stack)-1]] -= e.Dur
			}
			stack = append(stack, i)
		}
		bins := map[int]map[string]float64{}
		for i, e := range xs {
			if self[i] <= 0 {
				continue
			}
			b := int((e.Ts - t0) / w)
			if bins[b] == nil {
				bins[b] = map[string]float64{}
			}
			bins[b][e.Name] += self[i]
		}
		lines = append(lines, fmt.Sprintf("%s (pid %d tid %d): busiest events per %v, ms of self time", threads[k], k[0], k[1], window))
		var bs []int
		for b := range bins {
			bs = append(bs, b)
		}
		sort.Ints(bs)
		for _, b := range bs {
			type kv struct {
				k string
				v float64
			}
			var s []kv
			for n, v := range bins[b] {
				s = append(s, kv{n, v})
			}
			sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
			line := fmt.Sprintf("  %5.2f s", float64(b)*window.Seconds())
			for i := 0; i < len(s) && i < 3; i++ {
				line += fmt.Sprintf("  %4.0f %s", s[i].v/1e3, s[i].k)
			}
			lines = append(lines, line)
		}
	}
	return lines
}
