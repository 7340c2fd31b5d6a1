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
	// Two frames a second at most: the drawn frames over 3 s stay
	// under the cap (plus one already scheduled).
	eval[any](p, `sim.pause(false)`)
	d0 := eval[float64](p, `sim.frameStats().drawn`)
	time.Sleep(3 * time.Second)
	d1 := eval[float64](p, `sim.frameStats().drawn`)
	if n := d1 - d0; n < 1 || n > 2*3+1 {
		t.Errorf("?fps=2: %v frames drawn in 3 s, want 1..7", n)
	}
	p.noFailures()

	q := openPage(t, b, baseURL+"/?fps=fast#seed=5")
	q.waitFor("a banner naming ?fps", `!document.getElementById("error").hidden && document.getElementById("error-text").textContent.includes("?fps=fast ignored: want an integer 0..60")`, 20*time.Second)
	if got := eval[float64](q, `sim.perf().canvas.maxFps`); got != 0 {
		t.Errorf("a refused ?fps= still set a cap of %v at the default speed", got)
	}
}
