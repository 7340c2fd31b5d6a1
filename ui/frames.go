//go:build js && wasm

package ui

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hajimehoshi/ebiten/v2"

	"schedplay/engine"
)

// The canvas draws on demand. Presenting a frame is not free even when
// the picture did not change: ebiten copies its offscreen image to the
// canvas and the browser composites it. With a software WebGL (headless
// Chromium's SwiftShader, a VM without a GPU) that costs 55–80 ms of CPU
// per frame in the GPU process, measured on the 2-core test machine: the
// paused page drew 20 frames a second and kept 1.6 cores busy, taking
// them from the engine workers (BENCHMARKS.md, fifth session). So the
// canvas runs in ebiten's FPSModeVsyncOffMinimum — a frame only on input
// or when asked — and asks for one when something it shows may have
// changed (a snapshot or any message from a worker, a call from the
// panel: Invalidate), at most SetMaxFPS a second, plus a heartbeat that
// keeps the canvas loop (hover, resize, the page's frame counter) alive.
// A frame whose content did not change is not drawn again (frameKey).
//
// FPSModeVsyncOffMinimum is deprecated in ebiten v2.5+ in favour of
// SetScreenClearedEveryFrame(false), which skips the present only after
// four unchanged frames in a row: a frame-rate cap would still present
// most frames. Both are set.

// heartbeat is how often the canvas loop runs when nothing asked for a
// frame: Update reads the cursor and the canvas size; Draw draws only if
// what it shows changed.
const heartbeat = 250 * time.Millisecond

// frameClock schedules frames, no closer together than minGap.
type frameClock struct {
	mu      sync.Mutex
	minGap  time.Duration
	last    time.Time // when the last frame was scheduled
	pending bool      // a timer will schedule one
}

var frames frameClock

func startFrameClock() {
	ebiten.SetFPSMode(ebiten.FPSModeVsyncOffMinimum)
	ebiten.SetScreenClearedEveryFrame(false)
	go func() {
		for range time.Tick(heartbeat) {
			frames.request()
		}
	}()
}

// request schedules a frame now, or when minGap since the last one has
// passed.
func (c *frameClock) request() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending {
		return
	}
	now := time.Now()
	if wait := c.minGap - now.Sub(c.last); wait > 0 {
		c.pending = true
		time.AfterFunc(wait, func() {
			c.mu.Lock()
			c.pending, c.last = false, time.Now()
			c.mu.Unlock()
			ebiten.ScheduleFrame()
		})
		return
	}
	c.last = now
	ebiten.ScheduleFrame()
}

// Invalidate asks for a frame: something the canvas shows may have
// changed. Safe to call from any goroutine, as often as wanted.
func Invalidate() { frames.request() }

// redrawAll makes the next Draw draw whatever its key says.
var redrawAll atomic.Bool

// Redraw asks for a frame drawn in full even if nothing the canvas shows
// changed: after the tab was hidden or the WebGL context was restored,
// when the picture the browser keeps may be gone.
func Redraw() {
	redrawAll.Store(true)
	frames.request()
}

// SetMaxFPS caps how many frames a second Invalidate asks for (0: the
// display's rate). Input (the cursor, keys) still draws at once.
func SetMaxFPS(fps int) {
	frames.mu.Lock()
	defer frames.mu.Unlock()
	frames.minGap = 0
	if fps > 0 {
		frames.minGap = time.Second / time.Duration(fps)
	}
}

// frameKey is what a frame shows, in brief: when it equals the last
// drawn frame's, Draw leaves the canvas as it is. Everything Draw reads
// is derived from these (the snapshots by their take counts).
type frameKey struct {
	w, h, gen        int
	takes            [MaxArms]int64
	hover, pin       target
	shellGen         int
	viewHL           *engine.Decision
	paused, finished bool
	speed, achieved  float64
	flashing         bool
}
