package main

// A sweep's --out is a journal, not an output written whole: each run's
// line is appended the moment the run finishes, so a killed shard (even
// SIGKILL, or an OOM kill) loses only the runs that were running, and
// --resume runs only the ones missing.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	json "github.com/goccy/go-json"

	"schedplay/scenario"
)

// sweepOut is the --out file of a sweep, open for appending.
type sweepOut struct {
	path string
	fh   *os.File

	mu      sync.Mutex
	size    int64 // the bytes of whole lines in the file
	written int   // lines appended by this process
	err     error // the first write error; later lines are not written
}

// sweepResume is what --resume found in the file: the runs done (by
// index) and how many of them failed.
type sweepResume struct {
	done   map[int]bool
	failed int
}

// openSweepOut opens --out for appending. Without --resume an existing
// file is refused (with --force it is emptied); with --resume its lines
// are checked against the plan (every line must be this sweep's run of
// its index, in this shard) and a partial last line, the trace of a
// process killed mid-write, is cut off with a message on stderr. A file
// that does not exist is created, with or without --resume.
func (f *sweepFlags) openSweepOut(p *sweepPlan, base scenario.Config, shardI, shardN int, stderr io.Writer) (*sweepOut, *sweepResume, error) {
	o := &output{flag: "--out", path: f.out}
	if err := o.check(f.force || f.resume, f.inputs); err != nil {
		return nil, nil, err
	}
	res := &sweepResume{done: map[int]bool{}}
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	switch {
	case f.force:
		flags |= os.O_TRUNC
	case !f.resume:
		flags |= os.O_EXCL
	}
	var size int64
	if f.resume {
		var err error
		size, err = f.readJournal(p, base, shardI, shardN, res, stderr)
		if err != nil {
			return nil, nil, err
		}
	}
	fh, err := os.OpenFile(f.out, flags, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, usagef("--out %s: the file appeared meanwhile; refusing to overwrite it (add --resume to continue it, --force to replace it)", f.out)
	}
	if err != nil {
		return nil, nil, usagef("--out %s: %v", f.out, cause(err))
	}
	if f.resume {
		// Drop a partial last line (readJournal said so on stderr).
		if st, err := fh.Stat(); err == nil && st.Size() > size {
			if err := fh.Truncate(size); err != nil {
				fh.Close()
				return nil, nil, fmt.Errorf("--out %s: cutting off the partial last line: %v", f.out, cause(err))
			}
		}
	}
	return &sweepOut{path: f.out, fh: fh, size: size}, res, nil
}

// readJournal reads the lines of an existing --out for --resume and
// returns the length of its whole lines (a last line without its newline
// is a write cut short and is not counted).
func (f *sweepFlags) readJournal(p *sweepPlan, base scenario.Config, shardI, shardN int, res *sweepResume, stderr io.Writer) (int64, error) {
	fh, err := os.Open(f.out)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, usagef("--out %s: %v", f.out, cause(err))
	}
	defer fh.Close()
	refuse := func(ln int, format string, a ...any) error {
		return usagef("--resume: %s line %d: %s; refusing to resume it (give another --out, or --force to start it over)", f.out, ln, fmt.Sprintf(format, a...))
	}
	r := bufio.NewReaderSize(fh, 1<<20)
	lineOf := map[int]int{} // run index → line number
	var off int64
	for ln := 1; ; ln++ {
		b, err := readLine(r)
		if err == io.EOF && len(b) > 0 {
			fmt.Fprintf(stderr, "sweep: --resume: %s ends in a partial line (%d bytes without a newline: a run cut off while it was written); dropped it, that run runs again\n", f.out, len(b))
			return off, nil
		}
		if err == io.EOF {
			return off, nil
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return 0, refuse(ln, "longer than %d MB: not a sweep result file", maxSweepLine>>20)
		}
		if err != nil {
			return 0, usagef("--out %s: %v", f.out, cause(err))
		}
		off += int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l sweepLine
		if err := json.Unmarshal(b, &l); err != nil {
			return 0, refuse(ln, "not a sweep result line: %v", err)
		}
		k := l.Index
		if k < 0 || k >= p.runs {
			return 0, refuse(ln, "run %d, but this sweep has runs 0..%d: the file is of a different sweep plan (other --vary values or --seeds)", k, p.runs-1)
		}
		if k%shardN != shardI-1 {
			return 0, refuse(ln, "run %d belongs to shard %d/%d, not to this --shard %d/%d", k, k%shardN+1, shardN, shardI, shardN)
		}
		if prev, dup := lineOf[k]; dup {
			return 0, refuse(ln, "run %d is also line %d", k, prev)
		}
		want, err := f.runLine(p, base, k)
		if err != nil {
			return 0, err
		}
		if what := lineMismatch(&l, want); what != "" {
			return 0, refuse(ln, "run %d is not this sweep's run %d: %s; the file is of a different sweep plan", k, k, what)
		}
		lineOf[k] = ln
		res.done[k] = true
		if l.Error != "" {
			res.failed++
		}
	}
}

// readLine reads up to and including the next newline, at most
// maxSweepLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		b, err := r.ReadSlice('\n')
		line = append(line, b...)
		if len(line) > maxSweepLine {
			return nil, bufio.ErrTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// lineMismatch names the first field in which a line from the file
// differs from this sweep's run of the same index ("" when none does):
// the run's identity is its point, seed, preset, knobs, workloads and
// duration.
func lineMismatch(got, want *sweepLine) string {
	diff := func(name, a, b string) string {
		verb := "is"
		if strings.HasSuffix(name, "s") {
			verb = "are"
		}
		return fmt.Sprintf("its %s %s %s, this sweep's %s %s", name, verb, a, verb, b)
	}
	list := func(xs []string) string { return "[" + strings.Join(xs, " ") + "]" }
	switch {
	case pointString(got.Point) != pointString(want.Point):
		return diff("point", pointString(got.Point), pointString(want.Point))
	case got.Seed != want.Seed:
		return diff("seed", fmt.Sprint(got.Seed), fmt.Sprint(want.Seed))
	case got.Preset != want.Preset:
		return diff("preset", got.Preset, want.Preset)
	case list(got.Knobs) != list(want.Knobs):
		return diff("knobs", list(got.Knobs), list(want.Knobs))
	case list(got.Specs) != list(want.Specs):
		return diff("workloads", list(got.Specs), list(want.Specs))
	case got.DurS != want.DurS:
		return diff("duration", fmt.Sprintf("%gs", got.DurS), fmt.Sprintf("%gs", want.DurS))
	case got.PolicySum != want.PolicySum:
		what := diff("policy", policyName(got.Policy, got.PolicySum), policyName(want.Policy, want.PolicySum))
		if got.PolicySum != "" && want.PolicySum != "" {
			what += " (the policy file was edited since those runs)"
		}
		return what
	}
	return ""
}

// add appends one run's line with a single write of the whole line and
// its newline, at once (no buffer in this process): a killed process
// leaves whole lines, and at most a partial last one, which --resume
// cuts off. After a failed write (disk full) the partial line is cut off
// and nothing more is written; finish reports the error.
func (o *sweepOut) add(ln *sweepLine) error {
	b, err := json.Marshal(ln)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return nil
	}
	n, err := o.fh.Write(b)
	if err != nil || n != len(b) {
		if err == nil {
			err = io.ErrShortWrite
		}
		o.err = fmt.Errorf("--out %s: writing run %d: %v", o.path, ln.Index, cause(err))
		o.fh.Truncate(o.size)
		return nil
	}
	o.size += int64(n)
	o.written++
	if sweepLineHook != nil {
		sweepLineHook(o.written)
	}
	return nil
}

// sweepLineHook, when set (by tests), is called after each line written,
// with the count, under the file's lock.
var sweepLineHook func(written int)

// close syncs and closes the file; it returns the first error of the
// sweep's writes.
func (o *sweepOut) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fh == nil {
		return o.err
	}
	err := o.fh.Sync()
	if cerr := o.fh.Close(); err == nil {
		err = cerr
	}
	o.fh = nil
	if o.err != nil {
		return o.err
	}
	if err != nil {
		return fmt.Errorf("--out %s: %v", o.path, cause(err))
	}
	return nil
}

// sortRuns rewrites a complete sweep's file in run order (the lines are
// appended in the order the runs finish): the same file an uninterrupted
// --parallel 1 sweep writes. The sorted copy is written to a temporary
// file and renamed into place, so a kill meanwhile leaves the file as it
// was. Only the lines' offsets are held in memory.
func sortRuns(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--out %s: %v", path, cause(err))
	}
	defer fh.Close()
	type span struct {
		index    int
		off, len int64
	}
	var spans []span
	r := bufio.NewReaderSize(fh, 1<<20)
	var off int64
	for {
		b, err := readLine(r)
		if len(b) > 0 {
			var x struct {
				Index int `json:"index"`
			}
			if len(bytes.TrimSpace(b)) > 0 {
				if jerr := json.Unmarshal(b, &x); jerr != nil {
					return fmt.Errorf("--out %s: sorting the lines: %v", path, jerr)
				}
				spans = append(spans, span{x.Index, off, int64(len(b))})
			}
			off += int64(len(b))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("--out %s: sorting the lines: %v", path, cause(err))
		}
	}
	if sort.SliceIsSorted(spans, func(i, j int) bool { return spans[i].index < spans[j].index }) {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].index < spans[j].index })
	o := &output{flag: "--out", path: path}
	if err := o.create(); err != nil {
		return err
	}
	defer o.abort()
	bw := bufio.NewWriterSize(o, 1<<20)
	for _, s := range spans {
		if _, err := io.Copy(bw, io.NewSectionReader(fh, s.off, s.len)); err != nil {
			return fmt.Errorf("--out %s: sorting the lines: %v", path, cause(err))
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("--out %s: sorting the lines: %v", path, cause(err))
	}
	return o.commit(true)
}
