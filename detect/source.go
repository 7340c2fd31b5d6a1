package detect

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing/fstest"
)

// Open returns the file system Detect reads, rooted like "/": it holds
// sys/devices/system/... and, when known, proc/cpuinfo and
// proc/sys/kernel/osrelease.
//
// root may be:
//   - "" or "/": this machine;
//   - a directory laid out like / (it has sys/devices/system/cpu);
//   - a directory laid out like /sys (it has devices/system/cpu): /proc is
//     then unknown;
//   - a .txtar file: a txtar archive of such a tree (every "-- name --"
//     line starts a file, its lines up to the next header are the file's
//     content), as in detect/testdata.
func Open(root string) (fs.FS, error) {
	if root == "" || root == "/" {
		return os.DirFS("/"), nil
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !strings.HasSuffix(root, ".txtar") {
			return nil, fmt.Errorf("%s is neither a directory nor a .txtar archive", root)
		}
		data, err := os.ReadFile(root)
		if err != nil {
			return nil, err
		}
		return ParseArchive(data)
	}
	if isDir(filepath.Join(root, "sys", "devices", "system", "cpu")) {
		return os.DirFS(root), nil
	}
	if isDir(filepath.Join(root, "devices", "system", "cpu")) {
		return sysOnlyFS{os.DirFS(root)}, nil
	}
	return nil, fmt.Errorf("%s holds neither sys/devices/system/cpu (a tree laid out like /) nor devices/system/cpu (one laid out like /sys)", root)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// sysOnlyFS serves a /sys tree under "sys/"; everything else is missing.
type sysOnlyFS struct{ sys fs.FS }

func (s sysOnlyFS) Open(name string) (fs.File, error) {
	if name == "." {
		return fstest.MapFS{"sys": &fstest.MapFile{Mode: fs.ModeDir | 0o555}}.Open(".")
	}
	if name == "sys" {
		return s.sys.Open(".")
	}
	if rest, ok := strings.CutPrefix(name, "sys/"); ok {
		return s.sys.Open(rest)
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// maxArchiveBytes bounds an archive read by ParseArchive.
const maxArchiveBytes = 16 << 20

// ParseArchive reads a txtar archive ("-- path --" header lines, each
// followed by the file's content) into a file system. Text before the
// first header is a comment. Paths are slash-separated and relative.
func ParseArchive(data []byte) (fs.FS, error) {
	if len(data) > maxArchiveBytes {
		return nil, fmt.Errorf("archive of %d bytes is larger than %d", len(data), maxArchiveBytes)
	}
	m := fstest.MapFS{}
	var name string
	var body bytes.Buffer
	flush := func() {
		if name != "" {
			m[name] = &fstest.MapFile{Data: append([]byte(nil), body.Bytes()...), Mode: 0o444}
		}
		body.Reset()
	}
	for n, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(trimmed, []byte("-- ")) && bytes.HasSuffix(trimmed, []byte(" --")) && len(trimmed) >= 6 {
			flush()
			name = strings.TrimSpace(string(trimmed[3 : len(trimmed)-3]))
			if !fs.ValidPath(name) || name == "." {
				return nil, fmt.Errorf("archive line %d: %q is not a relative slash-separated path", n+1, name)
			}
			if _, dup := m[name]; dup {
				return nil, fmt.Errorf("archive line %d: %s given twice", n+1, name)
			}
			continue
		}
		if name != "" {
			body.Write(line)
		}
	}
	flush()
	if len(m) == 0 {
		return nil, errors.New("archive holds no files (no \"-- path --\" header)")
	}
	return m, nil
}

// readString reads a small text file of fsys, trimmed; ok is false when
// it does not exist or cannot be read.
func readString(fsys fs.FS, name string) (string, bool) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n := 0
	for n < len(buf) {
		k, err := f.Read(buf[n:])
		n += k
		if err != nil {
			break
		}
	}
	return strings.TrimSpace(string(buf[:n])), true
}

// readDirNames lists the entries of dir whose names start with prefix and
// continue with a decimal number, sorted by that number.
func readNumbered(fsys fs.FS, dir, prefix string) []int {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" {
			continue
		}
		n := 0
		okNum := true
		for _, r := range rest {
			if r < '0' || r > '9' || n > maxCPUID {
				okNum = false
				break
			}
			n = n*10 + int(r-'0')
		}
		if okNum {
			out = append(out, n)
		}
	}
	sortInts(out)
	return out
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

func join(elem ...string) string { return path.Join(elem...) }
