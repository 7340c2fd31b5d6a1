package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name string
		args []string
		env  func(string) string
		want config
	}{
		{"defaults", nil, env(), config{addr: "127.0.0.1:8080", dir: "static", open: true}},
		{"flags", []string{"-addr", ":9000", "-dir", "web", "-no-browser"}, env(), config{addr: ":9000", dir: "web", open: false}},
		{"NO_BROWSER=1", nil, env("NO_BROWSER", "1"), config{addr: "127.0.0.1:8080", dir: "static", open: false}},
		{"NO_BROWSER=0", nil, env("NO_BROWSER", "0"), config{addr: "127.0.0.1:8080", dir: "static", open: true}},
		{"CI never opens", nil, env("CI", "true"), config{addr: "127.0.0.1:8080", dir: "static", open: false}},
	} {
		got, err := parseConfig(tc.args, tc.env, io.Discard)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if _, err := parseConfig([]string{"-bogus"}, env(), io.Discard); err == nil {
		t.Error("unknown flag: no error")
	}
	if _, err := parseConfig([]string{"extra"}, env(), io.Discard); err == nil {
		t.Error("extra argument: no error")
	}
}

func TestNoDisplay(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if why := noDisplay("linux", env(nil)); why == "" {
		t.Error("linux without a display: would open a browser")
	}
	if why := noDisplay("linux", env(map[string]string{"DISPLAY": ":0"})); why != "" {
		t.Errorf("linux with DISPLAY: %q", why)
	}
	if why := noDisplay("linux", env(map[string]string{"WAYLAND_DISPLAY": "wayland-0"})); why != "" {
		t.Errorf("linux with WAYLAND_DISPLAY: %q", why)
	}
	if why := noDisplay("darwin", env(nil)); why != "" {
		t.Errorf("darwin: %q", why)
	}
}

// TestServeAndShutdown runs the real server on a free port, fetches the
// page, then cancels the context (what Ctrl-C does) and checks that run
// returns cleanly and promptly and the port is closed.
func TestServeAndShutdown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><p>hello</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", dir: dir}, log.New(&logs, "", 0), func(u string) { urls <- u })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("url %q", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello") {
		t.Fatalf("GET %s: %d %q", url, resp.StatusCode, body)
	}
	// The missing build outputs were reported.
	if !strings.Contains(logs.String(), "schedplay.wasm is missing") {
		t.Errorf("no warning about the missing wasm in %q", logs.String())
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatal("run did not return after cancel")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := c.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("server still answers after shutdown: %d", resp.StatusCode)
	}
}

func TestRunErrors(t *testing.T) {
	lg := log.New(io.Discard, "", 0)
	if err := run(context.Background(), config{addr: "127.0.0.1:0", dir: filepath.Join(t.TempDir(), "nope")}, lg, nil); err == nil {
		t.Error("missing directory: no error")
	}
	if err := run(context.Background(), config{addr: "256.0.0.1:bad", dir: t.TempDir()}, lg, nil); err == nil {
		t.Error("bad address: no error")
	}
}

// startRun runs the server like main does, on a free port, until the test
// ends, and returns its URL.
func startRun(t *testing.T, cfg config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, log.New(io.Discard, "", 0), func(u string) { urls <- u }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(shutdownTimeout + 5*time.Second):
			t.Error("run did not return after cancel")
		}
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

func pageDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><p>hello</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServerTimeouts: the server run builds has every limit set, to the
// documented defaults; a test can shorten one without losing the others.
func TestServerTimeouts(t *testing.T) {
	srv := newServer(http.NotFoundHandler(), timeouts{}, log.New(io.Discard, "", 0))
	d := defaultTimeouts
	if srv.ReadHeaderTimeout != d.readHeader || srv.ReadTimeout != d.read || srv.WriteTimeout != d.write || srv.IdleTimeout != d.idle {
		t.Errorf("server timeouts: header %v read %v write %v idle %v; want %+v",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, d)
	}
	for name, v := range map[string]time.Duration{"readHeader": d.readHeader, "read": d.read, "write": d.write, "idle": d.idle} {
		if v <= 0 {
			t.Errorf("default %s timeout %v: unbounded", name, v)
		}
	}
	if !(d.readHeader <= d.read && d.read <= d.write) {
		t.Errorf("defaults out of order: %+v", d)
	}
	// The 17 MB wasm, uncompressed, at 200 KB/s must fit in the write limit.
	if need := time.Duration(17<<20/(200<<10)) * time.Second; d.write < need {
		t.Errorf("write timeout %v < %v for the wasm on a slow link", d.write, need)
	}
	srv = newServer(http.NotFoundHandler(), timeouts{idle: time.Second}, nil)
	if srv.IdleTimeout != time.Second || srv.ReadHeaderTimeout != d.readHeader || srv.WriteTimeout != d.write {
		t.Errorf("idle only: header %v write %v idle %v", srv.ReadHeaderTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
}

// TestIdleConnectionClosed: a keep-alive connection left idle after a
// response is closed by the server after the idle timeout (without one it
// stayed open for good).
func TestIdleConnectionClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	u := startRun(t, config{addr: "127.0.0.1:0", dir: pageDir(t), timeouts: timeouts{idle: idle}})
	hostport := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")
	conn, err := net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", hostport); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello") || resp.Close {
		t.Fatalf("GET /: %d close=%v %q", resp.StatusCode, resp.Close, body)
	}
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := br.Read(make([]byte, 1))
	d := time.Since(start)
	if err == nil {
		t.Fatalf("read %d bytes from an idle connection", n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("idle connection still open after %v", d)
	}
	if d < idle/2 || d > idle+3*time.Second {
		t.Errorf("idle connection closed after %v, idle timeout %v", d, idle)
	}
	t.Logf("idle keep-alive connection closed after %v (%v)", d.Round(time.Millisecond), err)
}

// TestRunChecksHost: the server run starts refuses a foreign Host (DNS
// rebinding) and serves localhost and 127.0.0.1, with its security headers.
func TestRunChecksHost(t *testing.T) {
	u := startRun(t, config{addr: "127.0.0.1:0", dir: pageDir(t)})
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	for host, want := range map[string]int{
		"127.0.0.1:" + port:    200,
		"localhost:" + port:    200,
		"evil.example:8080":    http.StatusMisdirectedRequest,
		"evil.example:" + port: http.StatusMisdirectedRequest,
	} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Host = host
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d (%q)", host, resp.StatusCode, want, body)
		}
		if want != 200 && strings.Contains(string(body), "hello") {
			t.Errorf("Host %s: got the page", host)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("Host %s: Content-Security-Policy %q", host, csp)
		}
	}
}

func TestListenHostName(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "", ":8080": "", "0.0.0.0:9000": "", "[::1]:8080": "",
		"localhost:8080": "localhost", "mybox.lan:9000": "mybox.lan", "bad": "",
	} {
		got := strings.Join(listenHostName(addr), ",")
		if got != want {
			t.Errorf("listenHostName(%q) = %q, want %q", addr, got, want)
		}
	}
}
