package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// Precompressed siblings (name.br, name.gz, written by make wasm) are
// sent by Accept-Encoding, brotli first, with the original's Content-Type
// and Vary: Accept-Encoding; a stale one (older than the file) is not.
func TestPrecompressed(t *testing.T) {
	ts, dir := newServer(t)
	raw, err := os.ReadFile(filepath.Join(dir, "schedplay.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var br, gz bytes.Buffer
	bw := brotli.NewWriterLevel(&br, 11)
	bw.Write(raw)
	bw.Close()
	gw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	gw.Write(raw)
	gw.Close()
	if err := os.WriteFile(filepath.Join(dir, "schedplay.wasm.br"), br.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schedplay.wasm.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	decode := map[string]func([]byte) ([]byte, error){
		"br": func(b []byte) ([]byte, error) { return io.ReadAll(brotli.NewReader(bytes.NewReader(b))) },
		"gzip": func(b []byte) ([]byte, error) {
			r, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(r)
		},
		"": func(b []byte) ([]byte, error) { return b, nil },
	}
	for _, tc := range []struct{ ae, want string }{
		{"gzip, deflate, br, zstd", "br"},
		{"br;q=0, gzip", "gzip"},
		{"gzip", "gzip"},
		{"br", "br"},
		{"identity", ""},
		{"", ""},
	} {
		resp, body := get(t, ts, "GET", "/schedplay.wasm", tc.ae)
		if resp.StatusCode != 200 {
			t.Fatalf("Accept-Encoding %q: status %d", tc.ae, resp.StatusCode)
		}
		if ce := resp.Header.Get("Content-Encoding"); ce != tc.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.ae, ce, tc.want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/wasm" {
			t.Errorf("Accept-Encoding %q: Content-Type %q", tc.ae, ct)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: no Vary", tc.ae)
		}
		got, err := decode[tc.want](body)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("Accept-Encoding %q: the body does not decode to the file (%v)", tc.ae, err)
		}
		if tc.want == "br" && len(body) != br.Len() {
			t.Errorf("brotli body %d bytes, want the precompressed %d", len(body), br.Len())
		}
	}
	// A rebuilt file makes its precompressed forms stale: not sent.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "schedplay.wasm"), future, future); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, ts, "GET", "/schedplay.wasm", "br, gzip")
	if ce := resp.Header.Get("Content-Encoding"); ce == "br" {
		t.Errorf("a stale .br was sent")
	} else if got, err := decode[ce](body); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("after the rebuild (%q) the body does not decode to the file (%v)", ce, err)
	}
}
