// Command precompress writes, beside each compressible file of the
// directories it is given, its brotli (.br) and gzip -9 (.gz) forms, which
// the dev server (serve/site) sends to browsers that accept them. A
// compressed file that is not smaller than the original is not written.
// `make wasm` runs it on static/ after building the wasm.
//
//	go run ./serve/precompress [-q 11] static
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// exts are the files worth compressing (the ones serve/site compresses).
var exts = map[string]bool{".wasm": true, ".js": true, ".html": true, ".css": true, ".json": true, ".svg": true}

func main() {
	quality := flag.Int("q", 11, "brotli quality (0-11)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: precompress [-q N] DIR…")
		os.Exit(2)
	}
	var files []string
	for _, dir := range flag.Args() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && exts[strings.ToLower(filepath.Ext(e.Name()))] {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(files))
	for _, f := range files {
		for _, enc := range []string{"br", "gz"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := compress(f, enc, *quality); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	failed := false
	for err := range errs {
		fmt.Fprintln(os.Stderr, "precompress:", err)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
}

// compress writes name.enc unless an up-to-date one exists.
func compress(name, enc string, quality int) error {
	src, err := os.Stat(name)
	if err != nil {
		return err
	}
	out := name + "." + enc
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if dst, err := os.Stat(out); err == nil && upToDate(name, raw) {
		// The same bytes as when compressed (go build rewrites an
		// unchanged wasm): only the time needs to follow the file.
		return os.Chtimes(out, dst.ModTime(), maxTime(dst.ModTime(), src.ModTime()))
	}
	start := time.Now()
	var buf bytes.Buffer
	var w io.WriteCloser
	if enc == "br" {
		w = brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: quality, LGWin: 24})
	} else {
		w, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if buf.Len() >= len(raw) {
		os.Remove(out)
		return nil
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Printf("%s: %d -> %d bytes (%.1f%%) in %v\n", out, len(raw), buf.Len(), 100*float64(buf.Len())/float64(len(raw)), time.Since(start).Round(time.Millisecond))
	return nil
}

// upToDate reports whether name.gz holds exactly raw (so name.br, written
// with it, does too).
func upToDate(name string, raw []byte) bool {
	f, err := os.Open(name + ".gz")
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	got, err := io.ReadAll(io.LimitReader(zr, int64(len(raw))+1))
	return err == nil && bytes.Equal(got, raw)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
