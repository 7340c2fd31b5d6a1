package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// output is a file a verb writes (--out, --trace). It is written to a
// temporary file in the same directory and renamed into place only when
// complete, so the path never holds a partial file: it holds the old
// content, or the new one, or (when nothing was written) nothing new.
type output struct {
	flag string // the flag that names it, for errors: "--out", "--trace"
	path string // as given

	tmp  *os.File
	done bool // the temporary file is renamed into place or removed
}

// input is a file a run reads (--machine-file, an rt-app file), which no
// output may overwrite.
type input struct {
	flag string // "--machine-file", "--workload"
	path string
}

// openOutputs checks every named output (unnamed ones are skipped) and
// creates its temporary file. It refuses, as a usage error, a path that
// is an input of the run, a directory or other non-regular file, a
// symbolic link (all three even with force), two outputs naming one file,
// a directory that does not exist, and an existing file unless force is
// set. With force an existing regular file is replaced when the output is
// complete.
func openOutputs(force bool, inputs []input, outs ...*output) error {
	var named []*output
	for _, o := range outs {
		if o.path != "" {
			named = append(named, o)
		}
	}
	for i, o := range named {
		if err := o.check(force, inputs); err != nil {
			return err
		}
		for _, prev := range named[:i] {
			if sameDest(prev.path, o.path) {
				return usagef("%s %s and %s %s name the same file", prev.flag, prev.path, o.flag, o.path)
			}
		}
	}
	for _, o := range named {
		if err := o.create(); err != nil {
			for _, p := range named {
				p.abort()
			}
			return err
		}
	}
	return nil
}

func (o *output) check(force bool, inputs []input) error {
	dir := filepath.Dir(o.path)
	if st, err := os.Stat(dir); err != nil {
		return usagef("%s %s: directory %s: %v", o.flag, o.path, dir, cause(err))
	} else if !st.IsDir() {
		return usagef("%s %s: %s is not a directory", o.flag, o.path, dir)
	}
	lst, err := os.Lstat(o.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usagef("%s %s: %v", o.flag, o.path, cause(err))
	}
	// The file the path leads to, symbolic links resolved.
	if st, err := os.Stat(o.path); err == nil {
		for _, in := range inputs {
			ist, err := os.Stat(in.path)
			if err == nil && os.SameFile(st, ist) {
				resolved, _ := filepath.EvalSymlinks(o.path)
				return usagef("%s %s is %s %s (the same file: %s), an input of this run; refusing to overwrite it, even with --force",
					o.flag, o.path, in.flag, in.path, resolved)
			}
		}
		if st.IsDir() {
			return usagef("%s %s is a directory; give a file name", o.flag, o.path)
		}
		if !st.Mode().IsRegular() {
			return usagef("%s %s is %s, not a regular file; refusing to replace it", o.flag, o.path, fileKind(st.Mode()))
		}
	}
	if lst.Mode()&fs.ModeSymlink != 0 {
		// Replacing the link could clobber a system link (/dev/stdout is
		// one); following it writes where the path does not say.
		hint := ""
		if resolved, err := filepath.EvalSymlinks(o.path); err == nil {
			hint = fmt.Sprintf(" to %s (name that file to replace it)", resolved)
		}
		return usagef("%s %s is a symbolic link%s; refusing to replace or follow it, even with --force", o.flag, o.path, hint)
	}
	if !lst.Mode().IsRegular() {
		return usagef("%s %s is %s, not a regular file; refusing to replace it", o.flag, o.path, fileKind(lst.Mode()))
	}
	if !force {
		return usagef("%s %s exists; refusing to overwrite it (add --force to replace it)", o.flag, o.path)
	}
	return nil
}

// sameDest reports whether two output paths name one directory entry.
func sameDest(a, b string) bool {
	abs := func(p string) string {
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			dir = filepath.Dir(p)
		}
		d, err := filepath.Abs(dir)
		if err != nil {
			d = dir
		}
		return filepath.Join(d, filepath.Base(p))
	}
	if abs(a) == abs(b) {
		return true
	}
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(sa, sb)
}

// create opens the temporary file next to the destination.
func (o *output) create() error {
	dir, base := filepath.Dir(o.path), filepath.Base(o.path)
	perm := fs.FileMode(0o666) // less the umask
	if st, err := os.Lstat(o.path); err == nil && st.Mode().IsRegular() {
		perm = st.Mode().Perm()
	}
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%08x.tmp", base, rand.Uint32()))
		fh, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return usagef("%s %s: cannot create a file in %s: %v", o.flag, o.path, dir, cause(err))
		}
		o.tmp = fh
		registerTemp(name)
		return nil
	}
	return usagef("%s %s: cannot find a free temporary name in %s", o.flag, o.path, dir)
}

// Write writes to the temporary file.
func (o *output) Write(p []byte) (int, error) { return o.tmp.Write(p) }

// commit flushes the temporary file to disk and puts it in place. Without
// force it never replaces a file: one that appeared at the path during
// the run is left alone (a usage error).
func (o *output) commit(force bool) error {
	if o.tmp == nil || o.done {
		return nil
	}
	tmp := o.tmp.Name()
	err := o.tmp.Sync()
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		o.abort()
		return fmt.Errorf("%s %s: writing %s: %v", o.flag, o.path, tmp, cause(err))
	}
	if force {
		err = os.Rename(tmp, o.path)
	} else {
		// A hard link does not replace an existing file; fall back to
		// rename on file systems without hard links.
		err = os.Link(tmp, o.path)
		switch {
		case err == nil:
			os.Remove(tmp)
		case errors.Is(err, fs.ErrExist):
			o.abort()
			return usagef("%s %s: the file appeared during the run; refusing to overwrite it (add --force to replace it)", o.flag, o.path)
		default:
			err = os.Rename(tmp, o.path)
		}
	}
	if err != nil {
		o.abort()
		return fmt.Errorf("%s %s: %v", o.flag, o.path, err)
	}
	unregisterTemp(tmp)
	o.done = true
	return nil
}

// abort removes the temporary file unless it was committed; it may be
// called any number of times (verbs defer it).
func (o *output) abort() {
	if o.tmp == nil || o.done {
		return
	}
	o.tmp.Close()
	os.Remove(o.tmp.Name())
	unregisterTemp(o.tmp.Name())
	o.done = true
}

// cause drops the operation and path of a *fs.PathError (the message
// names the path already).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}
