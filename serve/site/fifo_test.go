//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package site

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNonRegularFilesRefusedQuickly puts a FIFO, a symlink to it and a
// Unix socket in the served directory. Each must be a prompt 404: opening
// the FIFO for reading would block until a writer came, and the request
// with it (the server before this test hung there until the client gave
// up). A symlink to a regular file inside the directory is served.
func TestNonRegularFilesRefusedQuickly(t *testing.T) {
	ts, dir := newServer(t)
	fifo := filepath.Join(dir, "pipe.js")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Should a handler be stuck in open(2) on the FIFO, a writer releases
	// it, so a failing test ends instead of hanging in ts.Close. (Cleanups
	// run last-registered first: this one before newServer's.)
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(50 * time.Millisecond)
			f.Close()
		}
	})
	if err := os.Symlink("pipe.js", filepath.Join(dir, "pipe-link.js")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app.js", filepath.Join(dir, "alias.js")); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/pipe.js", "/pipe-link.js"}
	if ln, err := net.Listen("unix", filepath.Join(dir, "sock")); err == nil {
		defer ln.Close()
		paths = append(paths, "/sock")
	} else {
		t.Logf("no Unix socket (%v): not checked", err)
	}

	c := &http.Client{Timeout: 3 * time.Second}
	for _, p := range paths {
		for _, method := range []string{"GET", "HEAD"} {
			req, err := http.NewRequest(method, ts.URL+p, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := c.Do(req)
			d := time.Since(start)
			if err != nil {
				t.Errorf("%s %s: %v after %v (the handler blocked)", method, p, err, d.Round(time.Millisecond))
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: status %d, want 404", method, p, resp.StatusCode)
			}
			if d > time.Second {
				t.Errorf("%s %s: took %v", method, p, d)
			}
			t.Logf("%s %s: %d in %v", method, p, resp.StatusCode, d.Round(time.Microsecond))
		}
	}

	// The second line of defence, for a FIFO swapped in after the stat:
	// the handler's open does not wait for a writer either.
	h, err := Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	opened := make(chan error, 1)
	go func() {
		f, err := h.root.OpenFile("pipe.js", openFlags, 0)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Errorf("open of the FIFO with openFlags: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("open of the FIFO with openFlags blocked")
	}

	// A symlink to a regular file inside the directory is followed.
	resp, body := get(t, ts, "GET", "/alias.js", "")
	want, _ := os.ReadFile(filepath.Join(dir, "app.js"))
	if resp.StatusCode != 200 || string(body) != string(want) {
		t.Errorf("GET /alias.js (symlink to app.js): status %d, %d bytes", resp.StatusCode, len(body))
	}
}
