package workload

// The workgen dialect: what rt-app's doc/workgen script accepts and
// rewrites into strict JSON before it runs rt-app. Two rules, both
// reimplemented here (not its code):
//
//  1. A bare "suspend" key with no value ("suspend", or "suspend" before
//     the closing brace) gets one. workgen filled in the task's name; rt-app
//     since commit 32fcddf ("Obsolete parameter of suspend event") ignores
//     the value, as suspend always addresses the caller, so "" is written.
//  2. A key repeated in one object is made unique by appending an index:
//     a per-object counter starting at 1, raised until key+counter is not
//     yet taken ("run", "run" → "run", "run1"; a third "run" → "run2").
//     Events already keep their duplicates in file order (eventKind accepts
//     the digits), so the renaming matters for tasks and phases: a task or
//     phase given twice is two tasks or phases, as under workgen, not one.
//     (workgen works line by line and so sees one key per line; the rules
//     are applied to the JSON structure here, which is what it means.)
//
// Rule 1 inserts text, so the parser maps offsets of the rewritten text
// back to the file's (workgenInsert), and errors keep the file's line and
// column.

import (
	"bytes"
	"strconv"
)

// workgenInsert is text inserted at offset at of the text before it.
type workgenInsert struct {
	at   int // offset in the input
	text string
}

// workgenFill applies rule 1 to src (comments already blanked): after
// each string in key position of an object — just after "{" or "," —
// followed by "," or "}" rather than ":", naming a suspend event,
// it inserts `:""`.
func workgenFill(src []byte) ([]byte, []workgenInsert) {
	var ins []workgenInsert
	var stack []byte // open containers, '{' or '['
	prev := byte(0)  // the last code byte that is not white space
	strStart := -1   // offset of the current string's opening quote
	keyPos := false  // the current string is in key position
	inStr := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
				prev = '"'
				if !keyPos {
					continue
				}
				j := i + 1
				for j < len(src) && isJSONSpace(src[j]) {
					j++
				}
				if j < len(src) && (src[j] == ',' || src[j] == '}') {
					name, _ := strconv.Unquote(string(src[strStart : i+1]))
					if kind, _, ok := eventKind(name); ok && kind == "suspend" {
						ins = append(ins, workgenInsert{at: i + 1, text: `:""`})
					}
				}
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inStr, strStart = true, i
			keyPos = len(stack) > 0 && stack[len(stack)-1] == '{' && (prev == '{' || prev == ',')
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		prev = c
	}
	if len(ins) == 0 {
		return src, nil
	}
	var out bytes.Buffer
	out.Grow(len(src) + 3*len(ins))
	last := 0
	for _, in := range ins {
		out.Write(src[last:in.at])
		out.WriteString(in.text)
		last = in.at
	}
	out.Write(src[last:])
	return out.Bytes(), ins
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// workgenOrig maps an offset of workgenFill's output back to the input's:
// an offset inside inserted text maps to where it was inserted.
func workgenOrig(ins []workgenInsert, off int64) int64 {
	shift := int64(0)
	for _, in := range ins {
		start := int64(in.at) + shift // where the insertion begins in the output
		if off < start {
			break
		}
		if off < start+int64(len(in.text)) {
			return int64(in.at)
		}
		shift += int64(len(in.text))
	}
	return off - shift
}

// workgenUnique applies rule 2 to the members of one object: a key
// repeated gets the first key+counter not yet among the keys before it (the counter is the object's,
// starting at 1, and is not reset between keys, as in workgen).
func workgenUnique(fields []jField) []jField {
	seen := make(map[string]bool, len(fields)) // the keys so far, as renamed
	out := make([]jField, len(fields))
	counter := 1
	for i, f := range fields {
		if seen[f.key] {
			key := f.key + strconv.Itoa(counter)
			for seen[key] {
				counter++
				key = f.key + strconv.Itoa(counter)
			}
			f.key = key
		}
		seen[f.key] = true
		out[i] = f
	}
	return out
}
