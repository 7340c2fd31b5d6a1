//go:build !js

package e2e

import (
	"testing"
	"time"
)

// TestCanvasFrameCap checks the page's ?fps= (README, "The canvas draws
// only what changed"): a valid cap applies at every speed and
// sim.perf() says so; a bad one is refused with a banner that names what
// is allowed, and the page runs with its own policy.
func TestCanvasFrameCap(t *testing.T) {
	requireChromium(t)
	baseURL, _ := servePage(t)
	b := newBrowser(t)

	p := openPage(t, b, baseURL+"/?fps=2#seed=5")
	p.waitFor("the cap applied", `sim.perf().canvas.maxFps === 2 && sim.perf().canvas.why === "?fps=2"`, 20*time.Second)
	// Two frames a second at most: the frames drawn over a window of at
	// least 3 s stay under the cap (plus one already scheduled). The
	// window is timed in the page (performance.now() beside each count):
	// on a loaded machine the two evaluations reach the page later than
	// the test asks, and a window timed by the test's clock would count
	// the frames of a longer one.
	eval[any](p, `sim.pause(false)`)
	type drawnAt struct {
		Drawn float64
		At    float64 // ms
	}
	const read = `({drawn: sim.frameStats().drawn, at: performance.now()})`
	w0 := eval[drawnAt](p, read)
	time.Sleep(3 * time.Second)
	w1 := eval[drawnAt](p, read)
	n, secs := w1.Drawn-w0.Drawn, (w1.At-w0.At)/1000
	t.Logf("?fps=2: %v frames drawn in %.2f s", n, secs)
	if n < 1 || n > 2*secs+1 {
		t.Errorf("?fps=2: %v frames drawn in %.2f s, want 1..%.0f", n, secs, 2*secs+1)
	}
	p.noFailures()

	q := openPage(t, b, baseURL+"/?fps=fast#seed=5")
	q.waitFor("a banner naming ?fps", `!document.getElementById("error").hidden && document.getElementById("error-text").textContent.includes("?fps=fast ignored: want an integer 0..60")`, 20*time.Second)
	if got := eval[float64](q, `sim.perf().canvas.maxFps`); got != 0 {
		t.Errorf("a refused ?fps= still set a cap of %v at the default speed", got)
	}
}
