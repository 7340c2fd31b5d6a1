package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testDir builds a static directory like the real one, plus a secret file
// next to it, a hidden file and a directory without index.html.
func testDir(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "static")
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", []byte("<!doctype html><title>t</title>"+strings.Repeat("<p>page</p>", 100)))
	write("app.js", []byte(strings.Repeat("console.log('app');\n", 100)))
	write("style.css", []byte(strings.Repeat("body{margin:0}\n", 100)))
	// A fake wasm: the magic number and enough bytes to be worth gzip.
	write("schedplay.wasm", append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte{1, 2, 3, 4}, 4096)...))
	write("img/logo.png", []byte("\x89PNG\r\n\x1a\n"+strings.Repeat("x", 1000)))
	write("empty/readme.txt", []byte("no index here"))
	write("sub/index.html", []byte("<p>sub</p>"))
	write(".hidden", []byte("secret"))
	secret = filepath.Join(base, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, secret
}

func newServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	dir, _ := testDir(t)
	h, err := Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close() })
	return ts, dir
}

// get requests path with the given Accept-Encoding ("" sends none; the
// transport's automatic gzip is off so the test sees the raw response).
func get(t *testing.T, ts *httptest.Server, method, path, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestContentTypes(t *testing.T) {
	ts, _ := newServer(t)
	for path, want := range map[string]string{
		"/":               "text/html; charset=utf-8",
		"/index.html":     "text/html; charset=utf-8",
		"/app.js":         "text/javascript; charset=utf-8",
		"/style.css":      "text/css; charset=utf-8",
		"/schedplay.wasm": "application/wasm",
		"/img/logo.png":   "image/png",
		"/sub/":           "text/html; charset=utf-8",
	} {
		resp, _ := get(t, ts, "GET", path, "")
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: status %d, want 200", path, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", path, got, want)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", path, got)
		}
	}
}

func TestGzip(t *testing.T) {
	ts, dir := newServer(t)
	raw, err := os.ReadFile(filepath.Join(dir, "schedplay.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(ae string, wantGzip bool) {
		t.Helper()
		resp, body := get(t, ts, "GET", "/schedplay.wasm", ae)
		if resp.StatusCode != 200 {
			t.Fatalf("Accept-Encoding %q: status %d", ae, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/wasm" {
			t.Errorf("Accept-Encoding %q: Content-Type %q", ae, ct)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: no Vary: Accept-Encoding", ae)
		}
		gotGzip := resp.Header.Get("Content-Encoding") == "gzip"
		if gotGzip != wantGzip {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want gzip=%v", ae, resp.Header.Get("Content-Encoding"), wantGzip)
		}
		if gotGzip {
			if len(body) >= len(raw) {
				t.Errorf("gzipped body %d bytes, raw %d", len(body), len(raw))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, err = io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(body, raw) {
			t.Errorf("Accept-Encoding %q: body differs from the file", ae)
		}
	}
	check("gzip, deflate, br, zstd", true) // what Chromium sends
	check("gzip", true)                    // again: from the cache
	check("", false)
	check("br", false)
	check("gzip;q=0, br", false)
	check("*", true)
	check("identity", false)

	// A rebuilt file (new mtime and size) is compressed again.
	raw = append(raw, bytes.Repeat([]byte{9}, 1000)...)
	p := filepath.Join(dir, "schedplay.wasm")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	check("gzip", true)

	// Images are not compressed again; tiny files are not worth it.
	resp, _ := get(t, ts, "GET", "/img/logo.png", "gzip")
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("png sent with Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	resp, _ = get(t, ts, "GET", "/sub/", "gzip")
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("tiny html sent with Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

func TestNoDirectoryListing(t *testing.T) {
	ts, _ := newServer(t)
	resp, body := get(t, ts, "GET", "/empty/", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /empty/: status %d, want 404", resp.StatusCode)
	}
	if strings.Contains(string(body), "readme.txt") {
		t.Errorf("GET /empty/ lists the directory: %q", body)
	}
	// Without the slash: also a 404, not a redirect to one.
	resp, _ = get(t, ts, "GET", "/empty", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /empty: status %d, want 404", resp.StatusCode)
	}
	resp, _ = get(t, ts, "GET", "/empty/readme.txt", "")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /empty/readme.txt: status %d, want 200", resp.StatusCode)
	}
	// A directory with index.html: redirected to the slash form, then served.
	resp, _ = get(t, ts, "GET", "/sub", "")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/sub/" {
		t.Errorf("GET /sub: status %d Location %q, want 301 /sub/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = get(t, ts, "GET", "/sub/", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "sub") {
		t.Errorf("GET /sub/: status %d body %q", resp.StatusCode, body)
	}
	resp, _ = get(t, ts, "GET", "/missing.js", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /missing.js: status %d, want 404", resp.StatusCode)
	}
}

func TestMissingBuildOutputSaysHowToBuild(t *testing.T) {
	dir, _ := testDir(t)
	if err := os.Remove(filepath.Join(dir, "schedplay.wasm")); err != nil {
		t.Fatal(err)
	}
	h, err := Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, body := get(t, ts, "GET", "/schedplay.wasm", "")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "make wasm") {
		t.Errorf("missing wasm: status %d body %q", resp.StatusCode, body)
	}
}

func TestPathTraversalRefused(t *testing.T) {
	ts, dir := newServer(t)
	// A symlink inside the directory that points out of it.
	if err := os.Symlink(filepath.Join(filepath.Dir(dir), "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/../secret.txt",
		"/%2e%2e/secret.txt",
		"/sub/../../secret.txt",
		"/..%2fsecret.txt",
		"/%2e%2e%2fsecret.txt",
		"/..\\secret.txt",
		"/link.txt",
		"/.hidden",
		"/sub/%00",
	} {
		// Send the path as is: url.Parse would clean some of them.
		req, err := http.NewRequest("GET", ts.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = p
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "SECRET") || strings.Contains(string(body), "secret") {
			t.Errorf("GET %s: status %d body %q: escaped the directory", p, resp.StatusCode, body)
		}
	}
	// The unit function itself.
	for _, p := range []string{"/../x", "/a/../../x", "/a/..", "/a\\..\\x", "x"} {
		if _, st := cleanPath(p); st != http.StatusBadRequest {
			t.Errorf("cleanPath(%q) = %d, want 400", p, st)
		}
	}
	for p, want := range map[string]string{"/": ".", "/a/b.js": "a/b.js", "//a//b": "a/b", "/./a": "a"} {
		if got, st := cleanPath(p); st != http.StatusOK || got != want {
			t.Errorf("cleanPath(%q) = %q, %d; want %q", p, got, st, want)
		}
	}
}

func TestMethodsAndConditional(t *testing.T) {
	ts, _ := newServer(t)
	resp, body := get(t, ts, "HEAD", "/app.js", "")
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD: status %d, %d body bytes", resp.StatusCode, len(body))
	}
	resp, _ = get(t, ts, "POST", "/app.js", "")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
	// no-cache means "revalidate": a conditional GET of an unchanged file
	// is a 304.
	resp, _ = get(t, ts, "GET", "/app.js", "")
	lm := resp.Header.Get("Last-Modified")
	if lm == "" {
		t.Fatal("no Last-Modified")
	}
	req, _ := http.NewRequest("GET", ts.URL+"/app.js", nil)
	req.Header.Set("If-Modified-Since", lm)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: status %d, want 304", r2.StatusCode)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"GZIP":                    true,
		"deflate, gzip;q=0.5":     true,
		"gzip;q=0":                false,
		"gzip; q=0.0, *":          false,
		"br;q=1, *;q=0.1":         true,
		"*;q=0":                   false,
		"x-gzip":                  true,
		"gzip, deflate, br, zstd": true,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestMissingDirectory(t *testing.T) {
	if _, err := Handler(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("Handler of a missing directory: no error")
	}
}

// hostRequest sends method path to ts with the given Host header and
// returns the response and body.
func hostRequest(t *testing.T, ts *httptest.Server, host, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestHostHeaderChecked: a page on another name that resolves to this
// machine (DNS rebinding) sends its own name as the Host; it is refused
// with a 421 and a one-line reason, and never gets a file. The loopback
// names and the connection's own address, with the right port, are served.
func TestHostHeaderChecked(t *testing.T) {
	dir, _ := testDir(t)
	h, err := Handler(dir, "MyBox.lan")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close() })
	_, port, err := net.SplitHostPort(ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	other := "1"
	if port == "1" {
		other = "2"
	}
	for _, host := range []string{
		"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port,
		"[::1]:" + port, "[0:0::1]:" + port, "mybox.lan:" + port,
	} {
		resp, body := hostRequest(t, ts, host, "/app.js")
		if resp.StatusCode != 200 || !strings.Contains(body, "console.log") {
			t.Errorf("Host %s: status %d body %.60q, want the file", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{
		"evil.example:" + port, "evil.example", "evil.example:8080",
		"localhost", "127.0.0.1", "localhost:" + other, "127.0.0.1:" + other,
		"localhost.:" + port, "127.0.0.1.nip.io:" + port, "sub.localhost.evil.example:" + port,
		"10.0.0.1:" + port, "[::2]:" + port, "::1:" + port, "[127.0.0.1]:" + port,
		"localhost:+" + port, "localhost:0" + port + "x", "[::1:" + port,
	} {
		resp, body := hostRequest(t, ts, host, "/app.js")
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: status %d, want 421", host, resp.StatusCode)
		}
		if strings.Contains(body, "console.log") {
			t.Errorf("Host %s: got the file", host)
		}
		if !strings.Contains(body, "DNS-rebinding") || strings.Count(body, "\n") != 1 {
			t.Errorf("Host %s: body %q, want a one-line reason", host, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Host %s: Content-Type %q", host, ct)
		}
		if resp.Header.Get("Content-Security-Policy") != ContentSecurityPolicy {
			t.Errorf("Host %s: no CSP on the refusal", host)
		}
	}

	// Over IPv6 loopback, where the machine has it.
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Logf("no IPv6 loopback (%v): not checked", err)
		return
	}
	ts6 := httptest.NewUnstartedServer(h)
	ts6.Listener.Close()
	ts6.Listener = ln
	ts6.Start()
	defer ts6.Close()
	_, port6, _ := net.SplitHostPort(ln.Addr().String())
	for host, want := range map[string]int{
		"[::1]:" + port6:        200,
		"localhost:" + port6:    200,
		"evil.example:" + port6: http.StatusMisdirectedRequest,
		"[::1]:" + port:         http.StatusMisdirectedRequest,
	} {
		if resp, _ := hostRequest(t, ts6, host, "/"); resp.StatusCode != want {
			t.Errorf("IPv6, Host %s: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestSplitHostPort checks the Host header parser on its own.
func TestSplitHostPort(t *testing.T) {
	for in, want := range map[string]struct {
		host string
		port int
		ok   bool
	}{
		"localhost:8080":   {"localhost", 8080, true},
		"LocalHost":        {"localhost", 80, true},
		"localhost:":       {"localhost", 80, true},
		"127.0.0.1:9":      {"127.0.0.1", 9, true},
		"[::1]:8080":       {"::1", 8080, true},
		"[0:0:0::1]":       {"::1", 80, true},
		"":                 {"", 0, false},
		":8080":            {"", 0, false},
		"::1":              {"", 0, false},
		"[::1":             {"", 0, false},
		"[127.0.0.1]:80":   {"", 0, false},
		"localhost:99999":  {"", 0, false},
		"localhost:http":   {"", 0, false},
		"localhost:+80":    {"", 0, false},
		"evil.example:443": {"evil.example", 443, true},
	} {
		host, port, ok := splitHostPort(in)
		if ok != want.ok || (ok && (host != want.host || port != want.port)) {
			t.Errorf("splitHostPort(%q) = %q, %d, %v; want %q, %d, %v", in, host, port, ok, want.host, want.port, want.ok)
		}
	}
}

// TestSecurityHeaders: every response, files and errors alike, carries
// the CSP and the other security headers.
func TestSecurityHeaders(t *testing.T) {
	ts, _ := newServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/", 200},
		{"GET", "/schedplay.wasm", 200},
		{"HEAD", "/app.js", 200},
		{"GET", "/missing.js", 404},
		{"GET", "/empty/", 404},
		{"POST", "/", 405},
		{"GET", "/sub", 301},
	} {
		resp, _ := get(t, ts, tc.method, tc.path, "gzip")
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		for k, want := range map[string]string{
			"Content-Security-Policy":      ContentSecurityPolicy,
			"X-Content-Type-Options":       "nosniff",
			"X-Frame-Options":              "DENY",
			"Referrer-Policy":              "no-referrer",
			"Cross-Origin-Resource-Policy": "same-origin",
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("%s %s: %s %q, want %q", tc.method, tc.path, k, got, want)
			}
		}
	}
	// The policy lets the page run (own scripts, wasm compilation, data:
	// favicon) and nothing else in.
	for _, part := range []string{"default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "img-src 'self' data:", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, part) {
			t.Errorf("CSP %q lacks %q", ContentSecurityPolicy, part)
		}
	}
}
