//go:build !js

// Package e2e runs the playground page in a real browser: Debian's Chromium,
// headless, driven by chromedp, serving the page with the dev server's own
// handler (schedplay/serve/site) and a wasm the test builds itself.
//
// The browser needs WebGL2 for ebiten, which headless Chromium provides
// through SwiftShader (browser.md §2). Without a chromium binary the test
// skips, except under CI=true, where it fails.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	_ "image/png" // screenshots
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds a Chromium-like browser on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// allocatorOptions are the flags that make ebiten render in headless
// Chromium on a box without a GPU, as root, with nothing phoning home.
func allocatorOptions(execPath, userDataDir string, output *lockedBuffer) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox, // root in CI containers
		chromedp.DisableGPU,
		// WebGL2 through SwiftShader, without the deprecated automatic
		// fallback (browser.md §2).
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(viewportW, viewportH),
		chromedp.CombinedOutput(output),
	)
}

// console collects the page's console messages and remembers the first
// fatal one: an uncaught exception or the Go program exiting.
type console struct {
	mu    sync.Mutex
	lines []string
	fatal string
}

// watch ranges over the page's console until ctx ends. Call it before the
// page loads so nothing is lost.
func (c *console) watch(ctx context.Context) {
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			c.add(m)
		}
	}()
}

func (c *console) add(m chromedp.ConsoleMessage) {
	line := m.String()
	if m.Exception != nil && m.Exception.Exception != nil && m.Exception.Exception.Description != "" {
		line += " — " + m.Exception.Exception.Description
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
	if c.fatal != "" {
		return
	}
	switch {
	case m.IsException():
		c.fatal = line
	case strings.Contains(m.Text, "Go program has already exited"), strings.HasPrefix(m.Text, "exit code:"):
		c.fatal = line
	case strings.Contains(m.Text, "getContext for webgl2 failed"):
		c.fatal = line
	}
}

// failure is the first fatal console message, or "".
func (c *console) failure() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// dump is every message seen so far, for a failing test's log.
func (c *console) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	const keep = 60
	lines := c.lines
	if len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	return strings.Join(lines, "\n")
}

// lockedBuffer collects the browser process's output (mostly dbus noise),
// shown only when the test fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// page is one browser tab on the playground, with helpers that fail the
// test with the page's console attached.
type page struct {
	t   *testing.T
	ctx context.Context
	con *console
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](p *page, expr string, opts ...chromedp.EvaluateOption) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		p.fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// do runs chromedp actions.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.fatalf("%s: %v", what, err)
	}
}

func (p *page) fatalf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("%s\npage console (last lines):\n%s", fmt.Sprintf(format, args...), p.con.dump())
}

// waitFor polls a JavaScript condition (exceptions count as false) until
// it holds, failing at once if the page threw or Go exited.
func (p *page) waitFor(what, cond string, timeout time.Duration) {
	p.t.Helper()
	expr := fmt.Sprintf(`(() => { try { return !!(%s); } catch (e) { return false; } })()`, cond)
	deadline := time.Now().Add(timeout)
	for {
		if f := p.con.failure(); f != "" {
			p.fatalf("waiting for %s: the page failed: %s", what, f)
		}
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			p.fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			errText := eval[string](p, `(document.getElementById("error-text") || {}).textContent || ""`)
			p.fatalf("timed out after %v waiting for %s (%s); #error: %q", timeout, what, cond, errText)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// state is window.sim.state().
func (p *page) state() simState {
	p.t.Helper()
	return eval[simState](p, `sim.state()`)
}

// setHash opens a share link in the running page (a hashchange, as when a
// user pastes a link into the address bar of an open tab).
func (p *page) setHash(h string) {
	p.t.Helper()
	p.do("set location.hash", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, h)))
}

// screenshot captures the viewport as a decoded image.
func (p *page) screenshot() (image.Image, []byte) {
	p.t.Helper()
	b, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.fatalf("screenshot: %v", err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		p.fatalf("decode screenshot: %v", err)
	}
	return img, b
}

// saveScreenshot writes a PNG to the temp directory, and to SCREENSHOT_DIR
// when that is set, and logs where.
func (p *page) saveScreenshot(name string, png []byte) {
	p.t.Helper()
	dirs := []string{os.TempDir()}
	if d := os.Getenv("SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			p.t.Errorf("SCREENSHOT_DIR: %v", err)
		} else {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			p.t.Errorf("save screenshot: %v", err)
			continue
		}
		abs, _ := filepath.Abs(path)
		p.t.Logf("screenshot: %s", abs)
	}
}

// rect is a DOMRect in CSS pixels.
type rect struct {
	X, Y, Width, Height float64
}

// drawnPixels counts the pixels inside r that differ clearly from the most
// common colour there (the background).
func drawnPixels(img image.Image, r rect) (drawn, total int, bg color.RGBA) {
	b := image.Rect(int(r.X), int(r.Y), int(r.X+r.Width), int(r.Y+r.Height)).Intersect(img.Bounds())
	counts := map[color.RGBA]int{}
	rgba := func(x, y int) color.RGBA {
		c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
		return c
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[rgba(x, y)]++
		}
	}
	best := -1
	for c, n := range counts {
		if n > best {
			best, bg = n, c
		}
	}
	abs := func(a, b uint8) int {
		if a > b {
			return int(a - b)
		}
		return int(b - a)
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgba(x, y)
			if abs(c.R, bg.R)+abs(c.G, bg.G)+abs(c.B, bg.B) > 48 {
				drawn++
			}
		}
	}
	return drawn, b.Dx() * b.Dy(), bg
}
