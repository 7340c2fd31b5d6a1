//go:build !js

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// floorLoads measures the floor under the page's time to interactive
// (SCHEDPLAY_PAGE_BENCH=floor): how long the Go runtime alone, and ebiten
// with it, take on this machine's headless Chromium from navigation to
// their first frame, with nothing of schedplay in the module
// (e2e/testdata/floor). Each load is a first visit: a fresh tab and a
// response the browser may not cache (no-store), so V8 compiles the
// module anew as it does for the page's first visit.
func floorLoads(t *testing.T, b *chromium, record func(string, ...any)) {
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goBin := goCommand()
	for _, prog := range []string{"plain", "ebiten"} {
		cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, prog+".wasm"), "./e2e/testdata/floor/"+prog)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the %s floor: %v\n%s", prog, err, out)
		}
	}
	if err := copyWasmExec(goBin, dir); err != nil {
		t.Fatal(err)
	}
	if err := copyFileErr(filepath.Join(root, "e2e", "testdata", "floor", "index.html"), filepath.Join(dir, "index.html")); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(dir))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	}))
	defer ts.Close()

	type stamps struct {
		Compiled, Instantiated, GoMain, FirstFrame float64
		Error                                      string
	}
	for _, prog := range []string{"plain", "ebiten"} {
		st, err := os.Stat(filepath.Join(dir, prog+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			// Its own tab, closed before the next load: a drawn ebiten
			// tab keeps drawing, and would slow the next load down.
			tctx, closeTab := chromedp.NewContext(b.ctx)
			ctx, cancel := context.WithTimeout(tctx, 2*time.Minute)
			con := &console{}
			con.watch(ctx)
			p := &page{t: t, ctx: ctx, con: con}
			p.do("open the "+prog+" floor", chromedp.EmulateViewport(viewportW, viewportH),
				chromedp.Navigate(fmt.Sprintf("%s/index.html?wasm=%s.wasm", ts.URL, prog)))
			p.waitFor("the "+prog+" floor's first frame", `window.floor && (window.floor.firstFrame > 0 || !!window.floor.error)`, 90*time.Second)
			s := eval[stamps](p, `({Compiled: floor.compiled || 0, Instantiated: floor.instantiated || 0, GoMain: floor.goMain || 0, FirstFrame: floor.firstFrame || 0, Error: floor.error || ""})`)
			if s.Error != "" {
				t.Fatalf("the %s floor: %s", prog, s.Error)
			}
			record("floor, %s Go (%.1f MB module), first visit %d: compiled %.0f ms, instantiated %.0f ms, Go main %.0f ms, first frame %.0f ms",
				prog, float64(st.Size())/1e6, i+1, s.Compiled, s.Instantiated, s.GoMain, s.FirstFrame)
			cancel()
			closeTab()
		}
	}
}
