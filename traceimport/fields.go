package traceimport

import (
	"regexp"
	"strings"
)

// The fields of a scheduler event's text, key=value, read whatever their
// spacing (aligned columns), order or company (fields a newer or patched
// kernel adds are skipped), and the trace-cmd sched plugin's own forms.

// field is one key=value of an event's text.
type field struct{ key, val string }

// knownKeys are the fields of the scheduler events the import reads. A
// comm's value runs to the next known key, so that a comm holding " x="
// stays whole; any other value runs to the next key of any name.
var knownKeys = map[string]bool{
	"comm": true, "pid": true, "prio": true, "success": true, "target_cpu": true,
	"prev_comm": true, "prev_pid": true, "prev_prio": true, "prev_state": true,
	"next_comm": true, "next_pid": true, "next_prio": true,
	"child_comm": true, "child_pid": true, "parent_comm": true, "parent_pid": true,
	"orig_cpu": true, "dest_cpu": true, "group_dead": true,
}

func isCommKey(k string) bool { return k == "comm" || strings.HasSuffix(k, "_comm") }

// keyAt is where the keys of args start: at the start, after white
// space or right after sched_switch's "==>" ("prev_state=S ==>next_comm=",
// as some kernels' and tools' sched_switch lines have it), a name and '='
// (start: the name's first byte, end: after '=').
type keyAt struct{ start, nameEnd, end int }

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func isNameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// findKeys appends the keys of args to keys.
func findKeys(args string, keys []keyAt) []keyAt {
	for i := 0; i < len(args); i++ {
		if i > 0 && !isSpace(args[i-1]) && !(i >= 3 && args[i-3:i] == "==>") || !isNameByte(args[i], true) {
			continue
		}
		j := i + 1
		for j < len(args) && isNameByte(args[j], false) {
			j++
		}
		if j < len(args) && args[j] == '=' {
			keys = append(keys, keyAt{i, j, j + 1})
			i = j
		}
	}
	return keys
}

// splitFields reads "k=v k=v ..." into buf (sched_switch's "==>" is a
// separator like white space). It returns nil when the text has no key at
// its start.
func splitFields(args string, buf []field) []field {
	args = strings.TrimSpace(args)
	var keyBuf [16]keyAt
	keys := findKeys(args, keyBuf[:0])
	if len(keys) == 0 || keys[0].start != 0 {
		return nil
	}
	out := buf[:0]
	name := func(k keyAt) string { return args[k.start:k.nameEnd] }
	for i := 0; i < len(keys); {
		key := name(keys[i])
		j := i + 1
		if isCommKey(key) {
			for j < len(keys) && !knownKeys[name(keys[j])] {
				j++
			}
		}
		end := len(args)
		if j < len(keys) {
			end = keys[j].start
		}
		val := strings.TrimSpace(args[keys[i].end:end])
		if !isCommKey(key) {
			// "prev_state=S ==>", "prev_state=R+==>": the arrow is no part
			// of the value; nor is anything after a value's first word.
			if k := strings.Index(val, "==>"); k >= 0 {
				val = strings.TrimSpace(val[:k])
			}
			if k := strings.IndexAny(val, " \t"); k >= 0 {
				val = val[:k]
			}
		} else if strings.HasSuffix(val, "==>") {
			val = strings.TrimSpace(strings.TrimSuffix(val, "==>"))
		}
		out = append(out, field{key, val})
		i = j
	}
	return out
}

// get returns the value of key (the first, if given twice).
func get(fs []field, key string) (string, bool) {
	for _, f := range fs {
		if f.key == key {
			return f.val, true
		}
	}
	return "", false
}

// The trace-cmd sched plugin's forms: "comm:pid [prio] S ==> comm:pid
// [prio]" and "comm:pid [prio] [success=1] CPU:001", whatever the spacing,
// with anything after them skipped.
var (
	switchPluginArgs = regexp.MustCompile(`^(.*):(-?\d+)\s+\[(-?\d+)\]\s+(\S+?)\s*==>\s*(.*):(-?\d+)\s+\[(-?\d+)\](?:\s.*)?$`)
	wakePluginArgs   = regexp.MustCompile(`^(.*):(-?\d+)\s+\[(-?\d+)\](?:\s+success=\d+)?(?:\s+CPU:\s*(\d+))?(?:\s.*)?$`)
)
