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

// fieldKey finds where a key starts: at the start or after white space,
// a name and '='.
var fieldKey = regexp.MustCompile(`(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=`)

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

// splitFields reads "k=v k=v ..." (sched_switch's "==>" is a separator
// like white space). It returns nil when the text has no key at its start.
func splitFields(args string) []field {
	args = strings.TrimSpace(args)
	locs := fieldKey.FindAllStringSubmatchIndex(args, -1)
	if len(locs) == 0 || locs[0][0] != 0 {
		return nil
	}
	var out []field
	for i := 0; i < len(locs); {
		key := args[locs[i][2]:locs[i][3]]
		start := locs[i][1]
		j := i + 1
		if isCommKey(key) {
			for j < len(locs) && !knownKeys[args[locs[j][2]:locs[j][3]]] {
				j++
			}
		}
		end := len(args)
		if j < len(locs) {
			end = locs[j][0]
		}
		val := strings.TrimSpace(args[start:end])
		if !isCommKey(key) {
			// "prev_state=S ==>", "prev_state=R+==>": the arrow is no part
			// of the value; nor is anything after a value's first word.
			val = strings.TrimSpace(strings.SplitN(val, "==>", 2)[0])
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
