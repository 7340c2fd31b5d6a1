package traceimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The input is read as a stream, never whole: gzip is recognised by its
// first two bytes and decompressed on the fly, the bytes are counted
// against the import's limit as they come, and the parsers take lines
// (text) or tokens (JSON) one at a time.

// inputError is a failure of the input itself rather than of its
// content: bad gzip data, a read error, the size limit. The parsers
// report it at the line they were reading.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// asInputError returns err's inputError, if it is one.
func asInputError(err error) *inputError {
	var ie *inputError
	if errors.As(err, &ie) {
		return ie
	}
	return nil
}

// sizeLimited passes on the first limit bytes of r, then fails if r has
// more: the parser reading the byte past the limit reports its line.
type sizeLimited struct {
	r     io.Reader
	n     int64
	limit int64
	what  string // "bytes" or "bytes uncompressed", for the message
}

func (s *sizeLimited) Read(p []byte) (int, error) {
	if s.n >= s.limit {
		var one [1]byte
		if n, err := io.ReadFull(s.r, one[:]); n == 0 {
			return 0, err // the input ends at the limit: allowed
		}
		return 0, &inputError{fmt.Sprintf("the trace is larger than %d %s (the import's limit)", s.limit, s.what)}
	}
	if int64(len(p)) > s.limit-s.n {
		p = p[:s.limit-s.n]
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	return n, err
}

// gunzipping names gzip's errors as such.
type gunzipping struct{ zr *gzip.Reader }

func (g gunzipping) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		err = &inputError{fmt.Sprintf("bad gzip data: %v", err)}
	}
	return n, err
}

// reading names the source's own read errors as such.
type reading struct{ r io.Reader }

func (r reading) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && asInputError(err) == nil {
		err = &inputError{fmt.Sprintf("reading the trace: %v", err)}
	}
	return n, err
}

// openInput returns the trace's bytes, gunzipped when they are gzip,
// failing past limit bytes (uncompressed).
func openInput(r io.Reader, limit int64) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(reading{r}, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("line 1: bad gzip data: %v", err)
		}
		return bufio.NewReaderSize(&sizeLimited{r: gunzipping{zr}, limit: limit, what: "bytes uncompressed"}, 1<<16), nil
	}
	return bufio.NewReaderSize(&sizeLimited{r: br, limit: limit, what: "bytes"}, 1<<16), nil
}

// opensJSON reads the white space and byte order marks that may open the
// input and reports whether the first other byte opens JSON ('{' or
// '['). It returns the input with what it read put back in front.
func opensJSON(br *bufio.Reader) (io.Reader, bool, error) {
	var blank []byte
	for {
		c, size, err := br.ReadRune()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("line %d: %v", 1+bytes.Count(blank, []byte{'\n'}), err)
		}
		if size > 1 || c != utf8.RuneError {
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\ufeff' {
				blank = utf8.AppendRune(blank, c)
				continue
			}
		}
		br.UnreadRune()
		if len(blank) == 0 {
			return br, c == '{' || c == '[', nil
		}
		return io.MultiReader(bytes.NewReader(blank), br), c == '{' || c == '[', nil
	}
	return bytes.NewReader(blank), false, nil
}

// lineReader reads text line by line.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, put together
}

func newLineReader(r io.Reader) *lineReader {
	if br, ok := r.(*bufio.Reader); ok {
		return &lineReader{r: br}
	}
	return &lineReader{r: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next line without its "\n", valid until the next
// call, or io.EOF after the last one (a last line without "\n" is a
// line).
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	if line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// lineCounter passes the input on to a JSON decoder, which reads ahead
// of the values it returns, and says on which line an offset of the
// decoder's is. It keeps only the bytes between the last offset asked
// about and the end of what the decoder read, and counts each newline
// once: linear in the input, where counting from the start of the input
// for every event was quadratic.
type lineCounter struct {
	r    io.Reader
	kept []byte // the input from offset base to what was read
	base int64  // the input offset of kept[0]
	line int    // the line of offset base
	// examined counts the bytes looked at to find lines: about the
	// input's size, where counting from the start for every event made
	// it quadratic (the import's tests check it).
	examined int64
}

func newLineCounter(r io.Reader) *lineCounter { return &lineCounter{r: r, line: 1} }

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.kept = append(c.kept, p[:n]...)
	return n, err
}

// advance moves base to off, counting the newlines it passes. Offsets
// must not go back (the decoder's do not); one that does is taken as
// base.
func (c *lineCounter) advance(off int64) {
	k := min(max(off-c.base, 0), int64(len(c.kept)))
	c.line += bytes.Count(c.kept[:k], []byte{'\n'})
	c.examined += k
	c.kept = c.kept[k:]
	c.base += k
}

// lineAt returns the line of offset off.
func (c *lineCounter) lineAt(off int64) int {
	c.advance(off)
	return c.line
}

// valueLineAt returns the line where the value after offset off starts:
// past the white space and the comma that separate it from the one
// before.
func (c *lineCounter) valueLineAt(off int64) int {
	c.advance(off)
	i := 0
	for i < len(c.kept) && isSeparator(c.kept[i]) {
		i++
	}
	c.examined += int64(i)
	return c.line + bytes.Count(c.kept[:i], []byte{'\n'})
}

func isSeparator(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == ',' }
