//go:build !js

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"schedplay/serve/site"
)

// What the tests of this package share, set up once and torn down once
// (TestMain): the page (the wasm build and the static files) served by
// the dev server's own handler, and one chromedp allocator. Every test
// starts its own Chromium from that allocator, with its own user-data-dir
// (t.TempDir), so no two browsers ever meet over a profile directory and
// its SingletonLock; a launch that fails is retried once, with the reason
// logged; a browser is closed exactly once.

func TestMain(m *testing.M) {
	code := m.Run()
	teardown()
	os.Exit(code)
}

// ---- the page -------------------------------------------------------------

var served struct {
	once  sync.Once
	dir   string // the page's files
	url   string // the server's base URL
	build time.Duration
	err   error
	close func()
}

// servePage builds the page once per package run and serves it.
func servePage(t *testing.T) (url, dir string) {
	t.Helper()
	served.once.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			served.err = err
			return
		}
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
			served.err = fmt.Errorf("module root: %v", err)
			return
		}
		dir, err := os.MkdirTemp("", "schedplay-e2e-page-")
		if err != nil {
			served.err = err
			return
		}
		served.dir = dir
		start := time.Now()
		if err := buildPage(root, goCommand(), dir); err != nil {
			served.err = err
			return
		}
		served.build = time.Since(start)
		h, err := site.Handler(dir)
		if err != nil {
			served.err = err
			return
		}
		ts := httptest.NewServer(h)
		served.url = ts.URL
		served.close = func() {
			ts.Close()
			h.Close()
		}
	})
	if served.err != nil {
		t.Fatalf("the page: %v", served.err)
	}
	return served.url, served.dir
}

// ---- browsers ---------------------------------------------------------------

// requireChromium returns the browser to run, skipping the test without
// one (failing under CI=true) and in -short mode.
func requireChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: not in -short mode")
	}
	chrome := chromiumPath()
	if chrome == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found on PATH, and CI is set: the browser test must run in CI (apt-get install -y chromium)")
		}
		t.Skip("chromium not found on PATH: skipping the browser test (apt-get install -y chromium; under CI=true this fails)")
	}
	return chrome
}

// The package's one allocator.
var alloc struct {
	once   sync.Once
	a      *dirAllocator
	ctx    context.Context
	cancel context.CancelFunc
}

func allocator(chrome string) context.Context {
	alloc.once.Do(func() {
		alloc.a = &dirAllocator{execPath: chrome}
		alloc.ctx, alloc.cancel = chromedp.NewAllocatorContext(context.Background(), alloc.a)
	})
	return alloc.ctx
}

// launchKey carries a test's launch settings to dirAllocator.Allocate.
type launchKey struct{}

type launch struct {
	dir string        // the user-data-dir
	out *lockedBuffer // the browser's output
}

// dirAllocator is the package's chromedp allocator: it starts every
// browser with the package's flags (allocatorOptions) and the user-data-dir
// and output buffer of the test that asks (from the context).
type dirAllocator struct {
	execPath string
	mu       sync.Mutex
	started  []func() // waits for a browser's allocator
}

func (d *dirAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	l, _ := ctx.Value(launchKey{}).(*launch)
	if l == nil {
		return nil, errors.New("e2e: no launch settings in the context (use newBrowser)")
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), allocatorOptions(d.execPath, l.dir, l.out)...)
	d.mu.Lock()
	d.started = append(d.started, cancel) // cancel also waits for the browser to exit
	d.mu.Unlock()
	return chromedp.FromContext(actx).Allocator.Allocate(ctx, opts...)
}

func (d *dirAllocator) Wait() {
	d.mu.Lock()
	started := d.started
	d.started = nil
	d.mu.Unlock()
	for _, wait := range started {
		wait()
	}
}

// chromium is one test's Chromium: ctx is its first tab.
type chromium struct {
	t       *testing.T
	ctx     context.Context
	cancel  context.CancelFunc
	dir     string
	out     *lockedBuffer
	closing sync.Once
}

// launchTimeout bounds a browser start (it takes 1-3 s; much longer on a
// loaded machine).
const launchTimeout = 90 * time.Second

// newBrowser starts a Chromium for t, retrying once (with the reason
// logged) when the start fails. It is closed when t ends, or earlier by
// close; either way exactly once.
func newBrowser(t *testing.T) *chromium {
	t.Helper()
	chrome := requireChromium(t)
	var lastErr error
	for attempt := 1; attempt <= 2; attempt++ {
		b := &chromium{t: t, dir: t.TempDir(), out: &lockedBuffer{}}
		lctx := context.WithValue(allocator(chrome), launchKey{}, &launch{dir: b.dir, out: b.out})
		b.ctx, b.cancel = chromedp.NewContext(lctx)
		t.Cleanup(b.close)
		start := time.Now()
		err := b.start()
		if err == nil {
			t.Logf("chromium started in %v (user-data-dir %s)", time.Since(start).Round(10*time.Millisecond), b.dir)
			return b
		}
		lastErr = err
		t.Logf("chromium launch %d of 2 failed after %v: %v\nchromium output (tail):\n%s",
			attempt, time.Since(start).Round(10*time.Millisecond), err, b.out.tail(2000))
		b.close()
	}
	t.Fatalf("chromium did not start twice; last error: %v", lastErr)
	return nil
}

// start launches the browser and opens its first tab, within
// launchTimeout. The launch runs on the browser's own context (a
// shorter-lived one would take the browser down with it).
func (b *chromium) start() error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(b.ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(launchTimeout):
		b.cancel()
		<-done
		return fmt.Errorf("no browser after %v", launchTimeout)
	}
}

// close shuts the browser down once: gracefully, or killed after a
// while; then it makes sure no process of it is left writing in its
// user-data-dir before t.TempDir removes the directory.
func (b *chromium) close() {
	b.closing.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := chromedp.Cancel(b.ctx); err != nil && !errors.Is(err, context.Canceled) {
				b.t.Logf("closing chromium: %v", err)
			}
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			b.t.Logf("chromium did not close within 20 s; killing it")
		}
		b.cancel() // kills it if still there, and waits for the process
		<-done
		killLeftovers(b.dir)
		if b.t.Failed() {
			b.t.Logf("chromium output (tail):\n%s", b.out.tail(3000))
		}
	})
}

// tab opens a new tab in the browser, closed when t ends.
func (b *chromium) tab(t *testing.T, timeout time.Duration) (context.Context, *console) {
	t.Helper()
	tctx, cancelTab := chromedp.NewContext(b.ctx)
	ctx, cancel := context.WithTimeout(tctx, timeout)
	t.Cleanup(func() {
		cancel()
		cancelTab()
	})
	con := &console{}
	if err := chromedp.Do(tctx); err != nil { // create the tab
		t.Fatalf("new tab: %v", err)
	}
	con.watch(ctx)
	return ctx, con
}

// killLeftovers kills any process still running with dir as its
// user-data-dir (Chromium's helpers can outlive the browser), until none
// shows up for a few passes.
func killLeftovers(dir string) {
	want := []byte("--user-data-dir=" + dir)
	deadline := time.Now().Add(5 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			for _, a := range bytes.Split(cmd, []byte{0}) {
				if bytes.Equal(a, want) {
					syscall.Kill(pid, syscall.SIGKILL)
					found++
					break
				}
			}
		}
		if found == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// teardown releases what the package shared, once.
var teardownOnce sync.Once

func teardown() {
	teardownOnce.Do(func() {
		if alloc.cancel != nil {
			alloc.cancel()
			alloc.a.Wait()
		}
		if served.close != nil {
			served.close()
		}
		if served.dir != "" {
			os.RemoveAll(served.dir)
		}
	})
}
