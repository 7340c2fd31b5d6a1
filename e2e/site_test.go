//go:build !js

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// `make site` writes a directory that a plain static file server serves
// correctly, with none of the project server's headers: the page starts,
// a share link opens its run and the engine workers start.
// (python3 -m http.server: no CSP header, no compression, its own MIME
// table.)
func TestStaticSite(t *testing.T) {
	requireChromium(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set and python3 is missing: it serves the static site")
		}
		t.Skip("no python3 to serve the static site")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk := exec.Command("make", "site", "SITE="+dir, "GO="+goCommand())
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make site: %v\n%s", err, out)
	}
	for _, f := range []string{"index.html", "app.js", "worker.js", "style.css", "wasm_exec.js", "schedplay.wasm", ".nojekyll"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("make site: %v", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(python, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, fmt.Sprint(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("python3 -m http.server did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}

	b := newBrowser(t)
	p := openPage(t, b, base+"/#preset=p4-ht-1c-2t&w=pipe&seed=7")
	p.waitFor("the link's run in a worker", `sim.state().preset === "p4-ht-1c-2t" && sim.state().seed === 7 && sim.state().arms.length > 0 && sim.perf().workers.length > 0 && sim.perf().workers.every(w => w.simTime > 0)`, 90*time.Second)
	if link := eval[string](p, `sim.state().link`); link == "" {
		t.Error("no share link")
	}
	p.noFailures()
}
