package workload

import (
	"strings"
	"sync"
)

// One run reads the same rt-app spec many times: the command line reads
// its duration and validates it, the scenario checks it again before
// building, and building it checks (Kind.check) then builds — six parses
// of a file of up to a megabyte, and two more for every other seed of
// --runs N. rtappParses keeps the latest parses, keyed by the spec's b64=
// text, so only the first one does the work.
//
// Parsing is a pure function of the text, so a hit gives what parsing
// again would, except for one thing RTAppFileSpec does on purpose: it
// stores the parse of the file as the user wrote it, whose line numbers
// are the file's, where a parse of the spec (compacted onto one line)
// would say "line 1, column 5234". Errors only the build can find (a CPU
// the machine does not have) then name the user's lines too. Nothing
// parsed here is modified afterwards: the build only reads it, and
// ParseRTAppSpec hands its caller a copy.
//
// The cache holds no simulation state, so results stay deterministic; the
// mutex is for callers building in parallel (scenario.RunMany).

const (
	// rtappCacheEntries covers scenario.MaxWorkloads files in one run.
	rtappCacheEntries = 16
	// rtappCacheBytes bounds the b64= text kept (the parsed files are a
	// few times larger): about three files at the size limit. The page
	// runs this in WebAssembly, where memory is dearer.
	rtappCacheBytes = 4 << 20
)

type rtappParse struct {
	b64 string
	app *RTApp
	err error
}

var rtappParses struct {
	sync.Mutex
	entries []rtappParse // least recently used first
	bytes   int          // sum of len(b64) over entries
}

// parseRTAppB64 parses the b64= value of an rtapp spec, or returns the
// parse kept for it. The result is shared: read it, never change it.
func parseRTAppB64(b64 string) (*RTApp, error) {
	if kept, ok := lookupRTApp(b64); ok {
		return kept.app, kept.err
	}
	data, err := decodeRTAppB64(b64)
	var app *RTApp
	if err == nil {
		app, err = ParseRTApp(data)
	}
	rememberRTApp(b64, app, err)
	return app, err
}

// lookupRTApp returns the parse kept for b64 and marks it recently used.
func lookupRTApp(b64 string) (rtappParse, bool) {
	c := &rtappParses
	c.Lock()
	defer c.Unlock()
	for i, e := range c.entries {
		if e.b64 == b64 {
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			return e, true
		}
	}
	return rtappParse{}, false
}

// rememberRTApp keeps the parse of b64 (replacing one kept before) and
// forgets the least recently used parses beyond the cache's bounds. A
// text larger than the whole budget is not kept.
func rememberRTApp(b64 string, app *RTApp, err error) {
	if len(b64) > rtappCacheBytes {
		return
	}
	c := &rtappParses
	c.Lock()
	defer c.Unlock()
	for i, e := range c.entries {
		if e.b64 == b64 {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			c.bytes -= len(b64)
			break
		}
	}
	c.entries = append(c.entries, rtappParse{b64: b64, app: app, err: err})
	c.bytes += len(b64)
	for len(c.entries) > rtappCacheEntries || c.bytes > rtappCacheBytes {
		c.bytes -= len(c.entries[0].b64)
		c.entries[0] = rtappParse{} // let the collector have it
		c.entries = c.entries[1:]
	}
}

// RTAppFileSpec parses an rt-app file as written — an error gives the
// file's line and column — and returns the spec that carries it
// (RTAppSpec). The parse is kept for the spec, so building the spec in
// this process does not parse it again, and the problems only a build
// finds are reported at the file's lines.
func RTAppFileSpec(data []byte) (string, error) {
	app, err := ParseRTApp(data)
	if err != nil {
		return "", err
	}
	spec := RTAppSpec(data)
	rememberRTApp(strings.TrimPrefix(spec, "rtapp:b64="), app, nil)
	return spec, nil
}

// clone is a copy of a sharing nothing a caller could change.
func (a *RTApp) clone() *RTApp {
	c := &RTApp{Duration: a.Duration, Tasks: make([]RTAppTask, len(a.Tasks))}
	for i, t := range a.Tasks {
		t.CPUs = append([]int(nil), t.CPUs...)
		phases := make([]RTAppPhase, len(t.Phases))
		for j, p := range t.Phases {
			p.Events = append([]RTAppEvent(nil), p.Events...)
			p.CPUs = append([]int(nil), p.CPUs...)
			phases[j] = p
		}
		t.Phases = phases
		c.Tasks[i] = t
	}
	return c
}
