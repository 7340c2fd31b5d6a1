package oracle

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sort"
)

// The guest's initramfs is a gzip-compressed cpio archive in the "newc"
// format the kernel unpacks at boot (Documentation/driver-api/
// early-userspace/buffer-format.rst): per entry a 110-byte ASCII header of
// hex fields, the name, the data, each padded to 4 bytes, and a last entry
// "TRAILER!!!". Every timestamp is 0 and the entries are sorted, so the
// same inputs give the same bytes.

// archive is an initramfs being assembled: path → entry.
type archive struct {
	entries map[string]cpioEntry
}

type cpioEntry struct {
	mode uint32 // type and permission bits
	data []byte // file contents, or a symlink's target
}

const (
	modeDir     = 0o040000
	modeFile    = 0o100000
	modeSymlink = 0o120000
)

func newArchive() *archive { return &archive{entries: map[string]cpioEntry{}} }

// dir adds a directory (and its parents).
func (a *archive) dir(path string) {
	for p := path; p != "" && p != "."; p = parent(p) {
		if _, ok := a.entries[p]; !ok {
			a.entries[p] = cpioEntry{mode: modeDir | 0o755}
		}
	}
}

// file adds a file with permission bits perm, creating its directories.
func (a *archive) file(path string, perm uint32, data []byte) {
	a.dir(parent(path))
	a.entries[path] = cpioEntry{mode: modeFile | perm, data: data}
}

// symlink adds path → target.
func (a *archive) symlink(path, target string) {
	a.dir(parent(path))
	a.entries[path] = cpioEntry{mode: modeSymlink | 0o777, data: []byte(target)}
}

func parent(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}

// write writes the archive, gzip-compressed, to w.
func (a *archive) write(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(a.entries))
	for n := range a.entries {
		names = append(names, n)
	}
	sort.Strings(names) // parents before their children
	var buf bytes.Buffer
	ino := uint32(1)
	for _, n := range names {
		e := a.entries[n]
		writeCPIOEntry(&buf, ino, n, e.mode, e.data)
		ino++
		if buf.Len() > 1<<20 {
			if _, err := zw.Write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	writeCPIOEntry(&buf, 0, "TRAILER!!!", 0, nil)
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return err
	}
	return zw.Close()
}

// writeCPIOEntry writes one newc entry: magic 070701, then ino, mode,
// uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor,
// rdevminor, namesize (with its NUL) and check, 8 hex digits each.
func writeCPIOEntry(b *bytes.Buffer, ino uint32, name string, mode uint32, data []byte) {
	nlink := uint32(1)
	if mode&0o170000 == modeDir {
		nlink = 2
	}
	fmt.Fprintf(b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	b.WriteString(name)
	b.WriteByte(0)
	pad4(b)
	b.Write(data)
	pad4(b)
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}
