// Command serve is the playground's local dev server: it serves static/
// (the page, wasm_exec.js and the wasm that `make wasm` builds) on
// 127.0.0.1:8080, opens the browser, and stops cleanly on Ctrl-C.
//
//	go run ./serve [-addr 127.0.0.1:8080] [-dir static] [-no-browser]
//
// The browser is not opened with -no-browser, with NO_BROWSER=1, or when CI
// is set. `make serve` builds the wasm first.
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

// config is what the flags and the environment ask for.
type config struct {
	addr string
	dir  string
	open bool
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
	h, err := site.Handler(cfg.dir)
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
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          logger,
	}
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
