package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"

	"schedplay/internal/json"
)

// RunMany runs the config with seeds Seed, Seed+1, … Seed+runs-1 and
// returns the individual results in seed order.
func RunMany(c Config, runs int) ([]*Result, error) {
	return RunManyContext(context.Background(), c, runs)
}

// RunPanic is a panic raised inside one of RunManyContext's runs. The runs
// execute on their own goroutines, where a panic would end the process
// before any caller could recover it, so it is caught there and raised
// again, as a *RunPanic, on the caller's goroutine.
type RunPanic struct {
	Seed  uint64 // the seed of the run that panicked
	Value any    // what it panicked with
	Stack []byte // the stack of the goroutine that panicked
}

func (p *RunPanic) Error() string {
	return fmt.Sprintf("panic in the run with seed %d: %v", p.Seed, p.Value)
}

// MemoryBudget bounds the memory the parallel runs of RunMany may hold at
// once, in bytes (a big machine with tens of thousands of tasks takes a few
// hundred MB per run; GOMAXPROCS of them could exhaust a laptop).
var MemoryBudget int64 = 2 << 30

// parallelRuns is how many of runs to run at once: GOMAXPROCS, fewer when
// one run would not fit MemoryBudget that many times. One run's footprint
// is measured by building it once (the heap it adds, ×3 for what running
// adds: queued events, histograms, the decision ring).
func parallelRuns(c Config, runs int) int {
	n := min(runs, runtime.GOMAXPROCS(0))
	if n <= 1 {
		return 1
	}
	perRun := RunFootprint(c)
	if perRun <= 0 {
		return n
	}
	return int(max(1, min(int64(n), MemoryBudget/perRun)))
}

// RunFootprint estimates the memory one run of c holds, in bytes (0 when
// it cannot be built).
func RunFootprint(c Config) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sim, err := c.Build()
	if err != nil {
		return 0
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(sim)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	return max(grown*3, 1<<20)
}

// runOne runs one seed of RunManyContext (tests replace it).
var runOne = RunContext

// RunManyContext is RunMany that stops every run, and starts no more,
// once ctx is done; it then returns ErrInterrupted and no results.
func RunManyContext(ctx context.Context, c Config, runs int) ([]*Result, error) {
	if runs < 1 || runs > MaxRuns {
		return nil, fmt.Errorf("runs %d out of range (allowed: 1..%d)", runs, MaxRuns)
	}
	results := make([]*Result, runs)
	errs := make([]error, runs)
	panics := make([]*RunPanic, runs)
	// Runs are independent simulations: run them on all cores, but no
	// more at once than fit in MemoryBudget. Each is deterministic, so the
	// order of completion does not matter.
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelRuns(c, runs))
	interrupted := false
launch:
	for i := 0; i < runs; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			interrupted = true
			break launch
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			ci := c
			ci.Seed = c.Seed + uint64(i)
			defer func() {
				if p := recover(); p != nil {
					panics[i] = &RunPanic{Seed: ci.Seed, Value: p, Stack: debug.Stack()}
				}
			}()
			results[i], errs[i] = runOne(ctx, ci)
		}(i)
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	for _, err := range errs {
		if errors.Is(err, ErrInterrupted) {
			interrupted = true
		} else if err != nil {
			return nil, err
		}
	}
	if interrupted {
		return nil, ErrInterrupted
	}
	for _, r := range results {
		r.Runs = runs
	}
	return results, nil
}

// Aggregate returns the JSON of several runs of one config: the shape of a
// single result, except that every measured number becomes
// {"mean":…,"stdev":…} (sample standard deviation) and "seed" becomes
// "seeds", the list used.
func Aggregate(results []*Result) ([]byte, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("no results to aggregate")
	}
	var trees []*node
	var warnings *node
	for _, r := range results {
		// Warnings are per run: kept, each with its run's seed, not
		// aggregated (and present when any run has one, not only the first).
		for _, w := range r.Warnings {
			if warnings == nil {
				warnings = &node{kind: nArray}
			}
			q, _ := json.Marshal(fmt.Sprintf("seed %d: %s", r.Seed, w))
			warnings.elems = append(warnings.elems, &node{kind: nString, raw: string(q)})
		}
		rr := *r
		rr.Warnings = nil
		b, err := json.Marshal(&rr)
		if err != nil {
			return nil, err
		}
		t, err := parseOrdered(b)
		if err != nil {
			return nil, err
		}
		trees = append(trees, t)
	}
	agg := aggregate(trees, "")
	for i, k := range agg.keys {
		if k == "seed" {
			seeds := &node{kind: nArray}
			for _, r := range results {
				seeds.elems = append(seeds.elems, &node{kind: nNumber, raw: strconv.FormatUint(r.Seed, 10)})
			}
			agg.keys[i], agg.vals[i] = "seeds", seeds
		}
	}
	if warnings != nil {
		agg.keys = append(agg.keys, "warnings")
		agg.vals = append(agg.vals, warnings)
	}
	var buf bytes.Buffer
	agg.write(&buf, "")
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Fields that describe the run rather than measure it stay as they are.
var configFields = map[string]bool{
	"preset": true, "machine": true, "runs": true, "duration_s": true, "knobs": true,
	"name": true, "kind": true, "tasks": true,
}

type nodeKind int

const (
	nNull nodeKind = iota
	nBool
	nNumber
	nString
	nArray
	nObject
)

// node is a JSON value that keeps object key order.
type node struct {
	kind  nodeKind
	raw   string // number, string (quoted), bool literal
	keys  []string
	vals  []*node
	elems []*node
}

func parseOrdered(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readNode(dec)
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &node{kind: nObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, kt.(string))
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: nArray}
			for dec.More() {
				val, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, val)
			}
			_, err := dec.Token()
			return n, err
		}
	case json.Number:
		return &node{kind: nNumber, raw: v.String()}, nil
	case string:
		q, _ := json.Marshal(v)
		return &node{kind: nString, raw: string(q)}, nil
	case bool:
		return &node{kind: nBool, raw: strconv.FormatBool(v)}, nil
	case nil:
		return &node{kind: nNull}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// aggregate merges same-shaped trees: numbers become mean/stdev objects.
func aggregate(ts []*node, key string) *node {
	first := ts[0]
	if configFields[key] {
		return first
	}
	switch first.kind {
	case nNumber:
		xs := make([]float64, 0, len(ts))
		for _, t := range ts {
			if t.kind != nNumber {
				return &node{kind: nNull}
			}
			x, _ := strconv.ParseFloat(t.raw, 64)
			xs = append(xs, x)
		}
		mean, sd := meanStdev(xs)
		return &node{kind: nObject, keys: []string{"mean", "stdev"},
			vals: []*node{num(mean), num(sd)}}
	case nObject:
		out := &node{kind: nObject}
		for i, k := range first.keys {
			var col []*node
			for _, t := range ts {
				col = append(col, t.get(k, first.vals[i]))
			}
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, aggregate(col, k))
		}
		return out
	case nArray:
		n := 0
		for _, t := range ts {
			n = max(n, len(t.elems))
		}
		out := &node{kind: nArray}
		for i := 0; i < n; i++ {
			var col []*node
			for _, t := range ts {
				if i < len(t.elems) {
					col = append(col, t.elems[i])
				} else {
					col = append(col, &node{kind: nNumber, raw: "0"})
				}
			}
			out.elems = append(out.elems, aggregate(col, ""))
		}
		return out
	case nNull:
		for _, t := range ts {
			if t.kind != nNull {
				return aggregate(nonNull(ts), key)
			}
		}
	}
	return first
}

func nonNull(ts []*node) []*node {
	var out []*node
	for _, t := range ts {
		if t.kind != nNull {
			out = append(out, t)
		}
	}
	return out
}

func (n *node) get(k string, def *node) *node {
	for i, kk := range n.keys {
		if kk == k {
			return n.vals[i]
		}
	}
	return def
}

func num(x float64) *node {
	return &node{kind: nNumber, raw: strconv.FormatFloat(round(x, 3), 'f', -1, 64)}
}

func meanStdev(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// MeanStdev returns the mean and sample standard deviation.
func MeanStdev(xs []float64) (float64, float64) { return meanStdev(xs) }

func (n *node) write(b *bytes.Buffer, indent string) {
	switch n.kind {
	case nNull:
		b.WriteString("null")
	case nBool, nNumber, nString:
		b.WriteString(n.raw)
	case nArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b, indent)
		}
		b.WriteByte(']')
	case nObject:
		b.WriteString("{\n")
		in := indent + "  "
		for i, k := range n.keys {
			q, _ := json.Marshal(k)
			b.WriteString(in)
			b.Write(q)
			b.WriteString(": ")
			n.vals[i].write(b, in)
			if i < len(n.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	}
}
