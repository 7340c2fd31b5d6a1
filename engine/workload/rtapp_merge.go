package workload

// Several rt-app files merged into one, as rt-app's doc/merge.py merges
// them (one file holding "global", others "tasks" or "resources"): the
// top-level keys of every file, in order; a key in several files has the
// members of each, a member named again in a later file replacing the
// earlier one in its place (merge.py's dict.update). merge.py also sorts
// the keys as it writes the merged file; that is not done, since it would
// reorder a task's events and phases. Each file is read in the workgen
// dialect (rtapp_workgen.go) and an error names the file with its line
// and column.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// rtappFileScale tags the positions of the merged files' nodes with the
// file's number (1-based): pos = file*rtappFileScale + line*posScale + col
// (lines of a file of at most RTAppMaxBytes are below 1<<21).
const rtappFileScale = posScale << 21

// rtappFileMark prefixes a file's number in a position's text, replaced by
// the file's name (ParseRTAppFiles).
const rtappFileMark = "file #"

// RTAppFile is one file of several to merge.
type RTAppFile struct {
	Name string // as errors name it
	Data []byte
}

// ParseRTAppFiles merges files as rt-app's merge.py does and parses the
// result; it returns the merged file's JSON too (strict, compact).
func ParseRTAppFiles(files []RTAppFile) (*RTApp, []byte, error) {
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("rtapp: no files to merge")
	}
	total := 0
	root := &jNode{kind: jObject}
	for i, f := range files {
		total += len(f.Data)
		if total > RTAppMaxBytes {
			return nil, nil, fmt.Errorf("rtapp: the files are more than %d bytes together", RTAppMaxBytes)
		}
		n, err := parseOrderedJSON(f.Data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if n.kind != jObject {
			return nil, nil, fmt.Errorf("%s: rtapp: top level (line %d): the file must be a JSON object, got %s", f.Name, n.line/posScale, n.kindName())
		}
		tagFile(n, i+1)
		mergeMembers(root, n)
	}
	rtappParsed.Add(1)
	app, err := parseRTAppRoot(root)
	if err != nil {
		return nil, nil, nameFiles(err, files)
	}
	var buf bytes.Buffer
	writeJSON(&buf, root)
	return app, buf.Bytes(), nil
}

// RTAppFilesSpec is RTAppFileSpec of files merged (ParseRTAppFiles).
func RTAppFilesSpec(files []RTAppFile) (string, error) {
	app, merged, err := ParseRTAppFiles(files)
	if err != nil {
		return "", err
	}
	spec := RTAppSpec(merged)
	rememberRTApp(strings.TrimPrefix(spec, "rtapp:b64="), app, nil)
	return spec, nil
}

// mergeMembers adds the top-level members of n to root: a key new to
// root is appended; a key root has, both objects, has n's members added
// to it (a member of the same name replacing root's in its place);
// otherwise n's value replaces root's.
func mergeMembers(root, n *jNode) {
	for _, f := range n.fields {
		i := fieldIndex(root.fields, f.key)
		if i < 0 {
			root.fields = append(root.fields, jField{key: f.key, line: f.line, val: cloneObject(f.val)})
			continue
		}
		dst := root.fields[i].val
		if dst.kind != jObject || f.val.kind != jObject {
			root.fields[i].val = f.val
			continue
		}
		before := len(dst.fields) // the earlier files' members: a name repeated within this file stays two (workgen)
		for _, m := range f.val.fields {
			if j := fieldIndex(dst.fields[:before], m.key); j >= 0 {
				dst.fields[j].val = m.val
			} else {
				dst.fields = append(dst.fields, m)
			}
		}
	}
}

// cloneObject copies an object's member list (so merging into it leaves
// the file's tree alone); other values are shared.
func cloneObject(n *jNode) *jNode {
	if n.kind != jObject {
		return n
	}
	c := *n
	c.fields = append([]jField(nil), n.fields...)
	return &c
}

func fieldIndex(fields []jField, key string) int {
	for i, f := range fields {
		if f.key == key {
			return i
		}
	}
	return -1
}

// tagFile adds file number k to every position of the tree.
func tagFile(n *jNode, k int) {
	if n.line > 0 {
		n.line += k * rtappFileScale
	}
	for i := range n.fields {
		if n.fields[i].line > 0 {
			n.fields[i].line += k * rtappFileScale
		}
		tagFile(n.fields[i].val, k)
	}
	for _, e := range n.elems {
		tagFile(e, k)
	}
}

// nameFiles replaces the file numbers of an error's positions with the
// files' names.
func nameFiles(err error, files []RTAppFile) error {
	msg := err.Error()
	if !strings.Contains(msg, rtappFileMark) {
		return err
	}
	for k := len(files); k >= 1; k-- { // #12 before #1
		msg = strings.ReplaceAll(msg, fmt.Sprintf("%s%d, ", rtappFileMark, k), files[k-1].Name+", ")
	}
	return fmt.Errorf("%s", msg)
}

// writeJSON writes n as compact strict JSON, members in order, duplicates
// included.
func writeJSON(b *bytes.Buffer, n *jNode) {
	switch n.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		fmt.Fprint(b, n.b)
	case jNumber:
		b.WriteString(n.str)
	case jString:
		q, _ := json.Marshal(n.str)
		b.Write(q)
	case jArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i, f := range n.fields {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(f.key)
			b.Write(q)
			b.WriteByte(':')
			writeJSON(b, f.val)
		}
		b.WriteByte('}')
	}
}
