// Package field parses and checks the text value of a named field — a
// knob, a workload key, a share-link key — in one way for every front
// end (command line, presets, links): empty values, NaN, infinities,
// overflow and values out of range are refused with an error that names
// the field, the value and what is allowed. It also suggests the closest
// valid name for a misspelt one.
package field

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Error is a bad value of a named field.
type Error struct {
	Field   string // "workload uperf: key size", "knob probe_ns", "link key speed"
	Value   string
	Allowed string
	Reason  string // what is wrong ("empty value", "not an integer", ...)
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s %q (allowed: %s)", e.Field, e.Reason, e.Value, e.Allowed)
}

// Int parses s as a decimal integer in [min, max].
func Int(name, s string, min, max int64) (int64, error) {
	allowed := fmt.Sprintf("an integer %d..%d", min, max)
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, &Error{name, s, allowed, "empty value"}
	}
	x, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		reason := "not an integer"
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			reason = "integer overflow"
		}
		return 0, &Error{name, s, allowed, reason}
	}
	if x < min || x > max {
		return 0, &Error{name, s, allowed, "out of range"}
	}
	return x, nil
}

// Uint parses s as a non-negative decimal integer (a seed).
func Uint(name, s string) (uint64, error) {
	const allowed = "an integer 0..18446744073709551615"
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, &Error{name, s, allowed, "empty value"}
	}
	x, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		reason := "not a non-negative integer"
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			reason = "integer overflow"
		}
		return 0, &Error{name, s, allowed, reason}
	}
	return x, nil
}

// Float parses s as a finite number in [min, max]: NaN and the
// infinities are refused, whatever the range says.
func Float(name, s string, min, max float64) (float64, error) {
	allowed := fmt.Sprintf("a number %g..%g", min, max)
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, &Error{name, s, allowed, "empty value"}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil && !isRangeErr(err) {
		return 0, &Error{name, s, allowed, "not a number"}
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, &Error{name, s, allowed, "not a finite number"}
	}
	if x < min || x > max {
		return 0, &Error{name, s, allowed, "out of range"}
	}
	return x, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// Suggest returns ` (did you mean "x"?)` for the valid name closest to
// word, or "" when none is close: an edit distance of at most a third of
// the word (at least 1), compared without case.
func Suggest(word string, valid []string) string {
	w := strings.ToLower(word)
	best, bestD := "", -1
	for _, v := range valid {
		d := distance(w, strings.ToLower(v))
		if bestD < 0 || d < bestD {
			best, bestD = v, d
		}
	}
	limit := max(1, len([]rune(word))/3)
	if best == "" || bestD > limit || best == word {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours each cost
// one (so "SIS_PORP" is one step from "SIS_PROP").
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
