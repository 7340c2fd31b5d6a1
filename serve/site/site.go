// Package site is the dev server's HTTP handler for the playground's static
// directory (index.html, app.js, style.css, wasm_exec.js, schedplay.wasm).
// It lives apart from the server's main so the browser end-to-end test
// serves the page with exactly this code.
//
// What it does, and why:
//   - only requests that name this server: the Host header must be
//     localhost, 127.0.0.1, [::1], the IP address the connection arrived on,
//     or a name passed to [Handler], with the port the connection arrived on.
//     Anything else is a 421 with a one-line reason. This is the guard
//     against DNS rebinding: a page on evil.example whose name is made to
//     resolve to 127.0.0.1 reaches this server with "Host: evil.example",
//     and must not be able to read it (an IP-literal Host cannot be
//     rebound: its origin is the address itself);
//   - only regular files: a directory is served through its index.html and
//     is a 404 without one (no listing); FIFOs, sockets and devices are a
//     404 and are never opened (opening a FIFO for reading blocks until a
//     writer comes, which hung the request; opening a device can have
//     effects). The type is checked with a stat before opening, and again on
//     the opened file, which is opened non-blocking where the platform
//     allows so that a FIFO swapped in between cannot block either;
//   - symlinks are followed only inside the directory, to a regular file or
//     a directory there: ".." segments are refused and files are opened
//     through an [os.Root], which refuses symlinks that lead out (absolute
//     ones included);
//   - security headers on every response, errors included: a
//     Content-Security-Policy that allows only the page's own files (plus
//     'wasm-unsafe-eval', which WebAssembly compilation needs, and data:
//     images for the empty favicon), no framing, nosniff, no referrer, and
//     Cross-Origin-Resource-Policy so other sites cannot embed the files;
//   - the Content-Type comes from the extension, with .wasm forced to
//     application/wasm (WebAssembly.instantiateStreaming rejects any other);
//   - "Cache-Control: no-cache", so a rebuilt wasm is picked up on reload
//     (the browser revalidates with If-Modified-Since);
//   - gzip when the client accepts it, compressed once per file version
//     (modification time and size) and kept in memory: the wasm is about
//     20 MB raw and 5 MB gzipped.
package site

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxGzipBytes is the largest file the handler compresses in memory; larger
// files are sent as they are.
const MaxGzipBytes = 256 << 20

// minGzipBytes: smaller files are not worth a Content-Encoding.
const minGzipBytes = 512

// ContentSecurityPolicy is sent with every response. The page is
// index.html with its stylesheet and two scripts, the wasm it fetches and
// compiles ('wasm-unsafe-eval'), the canvas ebiten appends (styled through
// the CSSOM, which style-src does not restrict) and a data: favicon; the
// results download is a blob: navigation, which the policy does not cover.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; " +
	"style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the files under dir. It opens dir now, so a missing
// directory is an error here rather than a 404 for every request.
//
// Requests are answered only when their Host header names localhost,
// 127.0.0.1, [::1] or the IP address the connection arrived on, or one of
// extraHosts (host names without a port, such as the name the server was
// told to listen on), with the port the connection arrived on.
func Handler(dir string, extraHosts ...string) (*Site, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	hosts := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, h := range extraHosts {
		if h = canonicalHost(h); h != "" {
			hosts[h] = true
		}
	}
	return &Site{dir: dir, root: root, hosts: hosts, gz: map[string]*gzEntry{}}, nil
}

// Site is the handler returned by [Handler].
type Site struct {
	dir   string
	root  *os.Root
	hosts map[string]bool // allowed Host names, canonical; read-only after Handler

	mu sync.Mutex
	gz map[string]*gzEntry
}

// gzEntry is the gzipped body of one file version.
type gzEntry struct {
	mu      sync.Mutex // held while compressing, so one request does it
	modTime time.Time
	size    int64
	body    []byte
}

// Close releases the directory.
func (s *Site) Close() error { return s.root.Close() }

// ServeHTTP serves GET and HEAD requests for files under the directory.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !s.hostAllowed(r) {
		http.Error(w, fmt.Sprintf("421 misdirected request: Host %q is not this server; "+
			"open it as localhost, 127.0.0.1 or [::1] with its port (DNS-rebinding guard)", r.Host),
			http.StatusMisdirectedRequest)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, status := cleanPath(r.URL.Path)
	switch status {
	case http.StatusOK:
	case http.StatusNotFound:
		http.NotFound(w, r)
		return
	default:
		http.Error(w, "bad path", status)
		return
	}
	f, info, err := s.open(name)
	if err != nil {
		s.notFound(w, name)
		return
	}
	defer f.Close()
	if info.IsDir() {
		// A directory is served through its index.html (a 404 without
		// one: no listing), and only with a trailing slash, so relative
		// links in the page resolve.
		f.Close()
		name = path.Join(name, "index.html")
		if f, info, err = s.open(name); err != nil || info.IsDir() {
			if err == nil {
				f.Close()
			}
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, path.Base(r.URL.Path)+"/", http.StatusMovedPermanently)
			return
		}
	}

	h.Set("Content-Type", contentType(name))
	h.Set("Cache-Control", "no-cache")
	if compressible(name, info.Size()) {
		h.Add("Vary", "Accept-Encoding")
		// Precompressed siblings (make wasm writes name.br and name.gz)
		// first, brotli before gzip, when not older than the file.
		ae := r.Header.Get("Accept-Encoding")
		for _, pc := range precompressions {
			if !accepts(ae, pc.coding) {
				continue
			}
			if cf, ok := s.precompressed(name+pc.ext, info); ok {
				defer cf.Close()
				h.Set("Content-Encoding", pc.coding)
				http.ServeContent(w, r, "", info.ModTime(), cf)
				return
			}
		}
		if acceptsGzip(ae) {
			body, err := s.gzipped(name, f, info)
			if err == nil {
				h.Set("Content-Encoding", "gzip")
				http.ServeContent(w, r, "", info.ModTime(), bytes.NewReader(body))
				return
			}
			// Fall back to the plain file if compression failed.
			if _, serr := f.Seek(0, io.SeekStart); serr != nil {
				http.Error(w, "read error", http.StatusInternalServerError)
				return
			}
		}
	}
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// open opens name (relative to the directory, "." for the directory) if it
// is a regular file or a directory, following symlinks only inside the
// directory. Anything else does not exist as far as the server is
// concerned, and is not opened: the type is checked by a stat first. The
// open itself is non-blocking where the platform has O_NONBLOCK (see
// openFlags), and the opened file's type is checked again, so a FIFO put
// in place between the stat and the open cannot block the request either.
func (s *Site) open(name string) (*os.File, fs.FileInfo, error) {
	pre, err := s.root.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !servable(pre.Mode()) {
		return nil, nil, fs.ErrNotExist
	}
	f, err := s.root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !servable(info.Mode()) {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, info, nil
}

// servable: regular files and directories (served through index.html).
func servable(m fs.FileMode) bool { return m.IsRegular() || m.IsDir() }

// hostAllowed reports whether the request's Host header names this server
// (see [Handler]): an allowed name or IP address, and the port of the
// connection (80 when the header has none). Without a TCP local address in
// the request's context (a handler called directly, not through a server)
// the port is not checked.
func (s *Site) hostAllowed(r *http.Request) bool {
	host, port, ok := splitHostPort(r.Host)
	if !ok {
		return false
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local != nil && port != local.Port {
		return false
	}
	if s.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && local != nil && ip.Equal(local.IP)
}

// splitHostPort splits a Host header ("localhost:8080", "[::1]:8080",
// "example.com") into a canonical host (see canonicalHost) and a port, 80
// when absent or empty. ok is false for an empty or malformed header.
func splitHostPort(hostport string) (host string, port int, ok bool) {
	host, portStr := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		host, portStr = hostport[:i], hostport[i+1:]
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, false
		}
		host = host[1 : len(host)-1]
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil {
			return "", 0, false // brackets hold an IPv6 address
		}
	} else if strings.Contains(host, ":") {
		return "", 0, false // an IPv6 address without brackets
	}
	port = 80
	if portStr != "" {
		p, err := strconv.Atoi(portStr)
		if err != nil || p < 1 || p > 65535 || portStr[0] == '+' {
			return "", 0, false
		}
		port = p
	}
	host = canonicalHost(host)
	return host, port, host != ""
}

// canonicalHost lower-cases a host name and writes an IP address the way
// net.IP does ("::1" for "0:0::1"). A trailing dot is kept, so
// "localhost." is a different name, resolved by DNS: not allowed unless
// named.
func canonicalHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return strings.ToLower(h)
}

func (s *Site) notFound(w http.ResponseWriter, name string) {
	msg := "404 page not found"
	switch path.Base(name) {
	case "schedplay.wasm", "wasm_exec.js":
		// The build outputs: say how to make them.
		msg = "404: " + path.Join(s.dir, name) + " is not built; run `make wasm` (make serve does it)"
	}
	http.Error(w, msg, http.StatusNotFound)
}

// cleanPath turns a URL path into a name for os.Root: "." for the top,
// otherwise slash-separated without a leading slash. Paths with ".."
// segments, backslashes or NUL bytes are refused (400); hidden names
// (".git", ".env") do not exist as far as the server is concerned (404).
func cleanPath(p string) (string, int) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return "", http.StatusBadRequest
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", http.StatusBadRequest
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." {
			return "", http.StatusNotFound
		}
	}
	name := strings.TrimPrefix(path.Clean(p), "/")
	if name == "" {
		name = "."
	}
	return name, http.StatusOK
}

// contentType is the Content-Type for a file name: Go's table for the
// extension, application/wasm for .wasm whatever the system's mime.types
// says, and a sniff-free default.
func contentType(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".wasm":
		return "application/wasm"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// compressible reports whether gzip is worth it for the file: text and wasm
// of a useful size; images and archives are compressed already.
func compressible(name string, size int64) bool {
	if size < minGzipBytes || size > MaxGzipBytes {
		return false
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".wasm", ".js", ".mjs", ".html", ".htm", ".css", ".json", ".svg", ".txt", ".map":
		return true
	}
	return false
}

// acceptsGzip parses Accept-Encoding ("gzip, deflate, br", "gzip;q=0",
// "*;q=0.5") and reports whether gzip is acceptable.
// precompressions are the precompressed forms the server looks for,
// best first.
var precompressions = []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// precompressed opens name (a precompressed sibling of the file whose
// info is orig) if it is a regular file at least as new as the original.
func (s *Site) precompressed(name string, orig fs.FileInfo) (*os.File, bool) {
	f, info, err := s.open(name)
	if err != nil {
		return nil, false
	}
	if !info.Mode().IsRegular() || info.ModTime().Before(orig.ModTime()) {
		f.Close()
		return nil, false
	}
	return f, true
}

func acceptsGzip(header string) bool { return accepts(header, "gzip") }

// accepts reports whether an Accept-Encoding header accepts coding
// ("gzip" also matches x-gzip), by its q-value or that of "*".
func accepts(header, want string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		c := strings.ToLower(strings.TrimSpace(coding))
		if c == "x-gzip" {
			c = "gzip"
		}
		switch c {
		case want:
			gzipQ = q
		case "*":
			starQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// gzipped returns the gzipped content of the file, compressing it once per
// version (modification time and size).
func (s *Site) gzipped(name string, f *os.File, info fs.FileInfo) ([]byte, error) {
	s.mu.Lock()
	e := s.gz[name]
	if e == nil {
		e = &gzEntry{}
		s.gz[name] = e
	}
	s.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body != nil && e.modTime.Equal(info.ModTime()) && e.size == info.Size() {
		return e.body, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size() / 3))
	// BestSpeed: about 0.3 s for the 20 MB wasm and within a few percent
	// of the default level's size (browser.md §2).
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(zw, f)
	if err == nil && n != info.Size() {
		err = errors.New("file changed while compressing")
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		e.body = nil
		return nil, err
	}
	e.modTime, e.size, e.body = info.ModTime(), info.Size(), buf.Bytes()
	return e.body, nil
}
