package workload

// The ordered JSON reader of rt-app files: fields in file order, with the line of each value.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	// encoding/json, not goccy: its Decoder.InputOffset is exact after each
	// Token, which the line numbers of errors come from.
	"encoding/json"
)

// ---- ordered JSON ----

type jKind uint8

const (
	jNull jKind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

// jNode is a JSON value that keeps object members in file order,
// duplicates included.
type jNode struct {
	kind   jKind
	fields []jField
	elems  []*jNode
	str    string // string, or number text
	b      bool
	line   int
}

type jField struct {
	key  string
	line int
	val  *jNode
}

func (n *jNode) kindName() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[n.kind]
}

func (n *jNode) text() string {
	switch n.kind {
	case jNumber:
		return n.str
	case jString:
		return strconv.Quote(n.str)
	}
	return n.kindName()
}

func (n *jNode) integer() (int64, error) {
	if n.kind != jNumber {
		return 0, fmt.Errorf("expected an integer, got %s", n.kindName())
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("expected an integer, got %s", n.str)
	}
	return v, nil
}

type jParser struct {
	d     *json.Decoder
	src   []byte // the text decoded: the file cleaned and filled (workgenFill)
	lines lineTable
	ins   []workgenInsert // what workgenFill inserted, to map offsets back to the file
}

// posScale packs a line and a column into the one int the parse tree
// keeps per node and field: line*posScale + column (columns of a file of
// at most RTAppMaxBytes fit).
const posScale = 1 << 21

// lineTable maps a byte offset of a text to its line and column. The
// parser asks for a position at every value and key; finding the line's
// start by scanning back from the offset costs the line's length, which
// for a spec's JSON (compacted onto one line) is the whole text so far:
// quadratic in the file's size (issue 22: a 1 MB file took minutes). The
// table of line starts, built once, answers with a binary search.
type lineTable struct {
	starts []int // starts[i] is the offset of line i+1's first byte
	size   int   // the text's length
}

func newLineTable(src []byte) lineTable {
	starts := make([]int, 1, 1+bytes.Count(src, []byte{'\n'}))
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineTable{starts: starts, size: len(src)}
}

// lineCol is the 1-based line and column of byte offset off (clamped to
// the text).
func (t lineTable) lineCol(off int64) (line, col int) {
	o := int(min(max(off, 0), int64(t.size)))
	// The last line starting at or before o.
	i := sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > o }) - 1
	return i + 1, o - t.starts[i] + 1
}

// posAt is the 1-based line and column of byte offset off, packed.
func (p *jParser) posAt(off int64) int {
	line, col := p.lines.lineCol(workgenOrig(p.ins, off))
	return line*posScale + col
}

// lineAt is the 1-based line of byte offset off.
func (p *jParser) lineAt(off int64) int {
	line, _ := p.lines.lineCol(workgenOrig(p.ins, off))
	return line
}

func (p *jParser) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("rtapp: bad JSON: unexpected end of input at line %d", p.lineAt(int64(len(p.src))))
	}
	line, col := p.lines.lineCol(workgenOrig(p.ins, p.d.InputOffset()))
	return fmt.Errorf("rtapp: bad JSON at line %d, column %d: %v", line, col, err)
}

// parseOrderedJSON reads data as json-c does (comments and trailing
// commas allowed), in the workgen dialect (a bare "suspend" key: see
// rtapp_workgen.go), into a jNode tree.
func parseOrderedJSON(data []byte) (*jNode, error) {
	clean, err := jsoncClean(data)
	if err != nil {
		return nil, err
	}
	lines := newLineTable(clean) // clean has the file's offsets
	clean, ins := workgenFill(clean)
	if len(bytes.TrimSpace(clean)) == 0 {
		return nil, fmt.Errorf("rtapp: bad JSON: the file is empty")
	}
	d := json.NewDecoder(bytes.NewReader(clean))
	d.UseNumber()
	p := &jParser{d: d, src: clean, lines: lines, ins: ins}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if tok, err := d.Token(); err == nil {
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %v after the top-level value", p.lineAt(d.InputOffset()), tok)
	} else if !errors.Is(err, io.EOF) {
		return nil, p.fail(err)
	}
	return root, nil
}

func (p *jParser) value(depth int) (*jNode, error) {
	if depth > rtappMaxDepth {
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: nested more than %d levels deep", p.lineAt(p.d.InputOffset()), rtappMaxDepth)
	}
	tok, err := p.d.Token()
	if err != nil {
		return nil, p.fail(err)
	}
	n := &jNode{line: p.posAt(p.d.InputOffset() - 1)}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n.kind = jObject
			for p.d.More() {
				kt, err := p.d.Token()
				if err != nil {
					return nil, p.fail(err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("rtapp: bad JSON at line %d: object key %v is not a string", p.lineAt(p.d.InputOffset()), kt)
				}
				// The key's opening quote: the offset is just past
				// its closing one.
				end := p.d.InputOffset()
				open := bytes.LastIndexByte(p.src[:max(end-1, 0)], '"')
				line := p.posAt(int64(max(open, 0)))
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.fields = append(n.fields, jField{key: key, line: line, val: val})
			}
		case '[':
			n.kind = jArray
			for p.d.More() {
				val, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, val)
			}
		default:
			return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %q", n.line/posScale, string(v))
		}
		end, err := p.d.Token()
		if err != nil {
			return nil, p.fail(err)
		}
		if d, ok := end.(json.Delim); !ok || (v == '{' && d != '}') || (v == '[' && d != ']') {
			return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected %v", p.lineAt(p.d.InputOffset()), end)
		}
	case string:
		n.kind, n.str = jString, v
	case json.Number:
		n.kind, n.str = jNumber, string(v)
	case float64: // not produced with UseNumber; kept for safety
		n.kind, n.str = jNumber, strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		n.kind, n.b = jBool, v
	case nil:
		n.kind = jNull
	default:
		return nil, fmt.Errorf("rtapp: bad JSON at line %d: unexpected token %v", n.line/posScale, tok)
	}
	return n, nil
}

// jsoncClean blanks out what json-c tolerates and strict JSON does not —
// /* */ and // comments, trailing commas before } or ], a UTF-8 byte order
// mark — keeping every newline so line numbers still match the file.
func jsoncClean(src []byte) ([]byte, error) {
	out := bytes.Clone(src)
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		copy(out, "   ")
	}
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	var err error
	eachCodeByte(out, func(i int) int {
		if out[i] != '/' || i+1 >= len(out) {
			return 0
		}
		switch out[i+1] {
		case '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				err = fmt.Errorf("rtapp: bad JSON at line %d: unterminated /* comment", 1+bytes.Count(src[:i], []byte{'\n'}))
				return len(out)
			}
			blank(i, i+2+end+2)
			return 2 + end + 1
		case '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			return end
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	eachCodeByte(out, func(i int) int {
		if out[i] != ',' {
			return 0
		}
		j := i + 1
		for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
			j++
		}
		if j < len(out) && (out[j] == '}' || out[j] == ']') {
			out[i] = ' '
		}
		return 0
	})
	return out, nil
}

// eachCodeByte calls f for each byte of b outside JSON strings, in order;
// f returns how many of the following bytes to skip.
func eachCodeByte(b []byte, f func(i int) int) {
	inStr := false
	for i := 0; i < len(b); i++ {
		switch {
		case inStr && b[i] == '\\':
			i++
		case inStr:
			inStr = b[i] != '"'
		case b[i] == '"':
			inStr = true
		default:
			i += f(i)
		}
	}
}
