package trace

import (
	"compress/gzip"
	"fmt"
	"io"

	"schedplay/engine"
)

// Open starts a trace of sim in format f on w, bounded by opt; the page
// and the command line both call it. For FormatJSONGz the cap counts the
// uncompressed JSON. Close the returned Writer after the run.
func Open(sim *engine.Sim, w io.Writer, f Format, opt Options) (Writer, error) {
	switch f {
	case FormatJSON:
		return AttachOptions(sim, w, opt), nil
	case FormatJSONGz:
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		return &gzipped{Chrome: AttachOptions(sim, zw, opt), zw: zw}, nil
	case FormatFtrace:
		return AttachFtrace(sim, w, opt), nil
	}
	return nil, fmt.Errorf("unknown trace format %q (allowed: json, json.gz, ftrace)", f)
}

// gzipped closes the gzip stream after the Chrome trace.
type gzipped struct {
	*Chrome
	zw *gzip.Writer
}

func (g *gzipped) Close() error            { return g.close(g.Chrome.Close()) }
func (g *gzipped) CloseInterrupted() error { return g.close(g.Chrome.CloseInterrupted()) }
func (g *gzipped) close(err error) error {
	if cerr := g.zw.Close(); err == nil {
		err = cerr
	}
	return err
}
