// Command serve is the playground's local dev server: it serves static/
// (the page, wasm_exec.js and the wasm that `make wasm` builds) on
// 127.0.0.1:8080, opens the browser, and stops cleanly on Ctrl-C.
//
//	go run ./serve [-addr 127.0.0.1:8080] [-dir static] [-no-browser]
//
// The browser is not opened with -no-browser, with NO_BROWSER=1, or when CI
// is set. `make serve` builds the wasm first.
//
// The handler (serve/site) serves regular files only and answers only
// requests whose Host header names localhost, 127.0.0.1, [::1], the address
// the connection arrived on or the -addr host name (a DNS-rebinding guard);
// the server bounds how long a client may take (see timeouts).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/browser"

	"schedplay/serve/site"
)

// shutdownTimeout bounds how long in-flight requests may take after Ctrl-C.
const shutdownTimeout = 5 * time.Second

// timeouts are the http.Server's time limits. The server is for a browser
// on the same machine (or, with -addr 0.0.0.0:port, on the LAN); its
// largest response is schedplay.wasm, about 17 MB raw and 5 MB gzipped,
// which takes tens of milliseconds over loopback plus about 0.3 s to gzip
// the first time. Each limit bounds what a stuck or hostile client holds
// (a goroutine and a socket) without cutting off a slow real one.
type timeouts struct {
	// readHeader: a browser sends its request headers at once; 10 s is
	// ages on loopback and still cuts off a slowloris-style trickle.
	readHeader time.Duration
	// read: the whole request, headers and body. Only GET and HEAD are
	// served, which have no body, so a little more than readHeader.
	read time.Duration
	// write: from the end of the request headers to the end of the
	// response. 2 minutes lets the raw 17 MB wasm through a link as slow
	// as ~150 KB/s (a poor Wi-Fi when serving the LAN) and the first
	// gzip on a slow machine; on loopback it never comes near.
	write time.Duration
	// idle: how long a keep-alive connection may wait for its next
	// request. The page loads its five files in a burst and then makes no
	// requests, so a minute keeps the connections for a quick reload and
	// then frees them; a later reload opens new ones (cheap on loopback).
	idle time.Duration
}

// defaultTimeouts are the limits the server runs with.
var defaultTimeouts = timeouts{
	readHeader: 10 * time.Second,
	read:       30 * time.Second,
	write:      2 * time.Minute,
	idle:       60 * time.Second,
}

// orDefault fills the zero limits from defaultTimeouts (tests set only the
// ones they shorten).
func (t timeouts) orDefault() timeouts {
	d := defaultTimeouts
	if t.readHeader > 0 {
		d.readHeader = t.readHeader
	}
	if t.read > 0 {
		d.read = t.read
	}
	if t.write > 0 {
		d.write = t.write
	}
	if t.idle > 0 {
		d.idle = t.idle
	}
	return d
}

// config is what the flags and the environment ask for.
type config struct {
	addr     string
	dir      string
	open     bool
	timeouts timeouts // zero fields: defaultTimeouts
}

func main() {
	logger := log.New(os.Stderr, "serve: ", 0)
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, cfg, logger, func(url string) {
		fmt.Printf("schedplay: serving %s at %s (Ctrl-C to stop)\n", cfg.dir, url)
		if !cfg.open {
			return
		}
		if why := noDisplay(runtime.GOOS, os.Getenv); why != "" {
			logger.Printf("not opening a browser (%s); open %s yourself", why, url)
			return
		}
		// In the background: an opener may wait for the browser to exit,
		// and Ctrl-C must still work.
		go openBrowser(url, logger)
	})
	if err != nil {
		logger.Print(err)
		os.Exit(1)
	}
	fmt.Println("schedplay: stopped")
}

// parseConfig reads the flags and the environment (NO_BROWSER, CI).
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	dir := fs.String("dir", "static", "directory to serve (the page and the built wasm)")
	noBrowser := fs.Bool("no-browser", false, "do not open the browser (also NO_BROWSER=1; never opened when CI is set)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fs.Arg(0))
		fmt.Fprintln(stderr, "serve:", err)
		fs.Usage()
		return config{}, err
	}
	cfg := config{addr: *addr, dir: *dir, open: !*noBrowser}
	if v := getenv("NO_BROWSER"); v != "" && v != "0" && !strings.EqualFold(v, "false") {
		cfg.open = false
	}
	if getenv("CI") != "" {
		cfg.open = false
	}
	return cfg, nil
}

// run serves cfg.dir on cfg.addr until ctx ends, then shuts the server
// down, letting requests in flight finish for up to shutdownTimeout.
// started is called with the URL once the port is listening.
func run(ctx context.Context, cfg config, logger *log.Logger, started func(url string)) error {
	h, err := site.Handler(cfg.dir, listenHostName(cfg.addr)...)
	if err != nil {
		return fmt.Errorf("cannot serve %s: %v", cfg.dir, err)
	}
	defer h.Close()
	for _, f := range []string{"index.html", "wasm_exec.js", "schedplay.wasm"} {
		if _, err := os.Stat(filepath.Join(cfg.dir, f)); err != nil {
			logger.Printf("warning: %s is missing; run `make wasm` (make serve does it)", filepath.Join(cfg.dir, f))
		}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := newServer(h, cfg.timeouts, logger)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if started != nil {
		started(urlFor(ln.Addr()))
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %v", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer is the http.Server that run serves h with.
func newServer(h http.Handler, t timeouts, logger *log.Logger) *http.Server {
	t = t.orDefault()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		ErrorLog:          logger,
	}
}

// listenHostName is the host name of a listen address, for the handler to
// accept in Host headers: -addr mybox.lan:8080 makes http://mybox.lan:8080/
// work. IP addresses need no entry (the handler accepts the address a
// connection arrives on), nor does an empty or wildcard host.
func listenHostName(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" || net.ParseIP(host) != nil {
		return nil
	}
	return []string{host}
}

// urlFor is the URL to print and open for a listening address: a wildcard
// host becomes 127.0.0.1 (the browser cannot open 0.0.0.0 everywhere).
func urlFor(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// noDisplay says why a browser cannot be shown on a Unix desktop-less box
// (no X11 or Wayland display: a headless server or a container), or "".
// Opening there would only run a text-mode browser or fail.
func noDisplay(goos string, getenv func(string) string) string {
	switch goos {
	case "darwin", "windows", "android", "ios", "js", "wasip1", "plan9":
		return ""
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return "no DISPLAY or WAYLAND_DISPLAY"
	}
	return ""
}

// openBrowser opens url; failing is normal on a headless box (xdg-open
// exits 3) and is only logged.
func openBrowser(url string, logger *log.Logger) {
	browser.Stdout, browser.Stderr = io.Discard, io.Discard
	if err := browser.OpenURL(url); err != nil {
		logger.Printf("could not open a browser (%v); open %s yourself", err, url)
	}
}
