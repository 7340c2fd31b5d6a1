package main

import (
	"bytes"
	"context"
	"io"
	"log"
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
