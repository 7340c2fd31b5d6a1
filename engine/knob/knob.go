// Package knob is the single table of every scheduler feature, tunable and
// cost parameter of the simulator, in the spirit of the kernel's
// kernel/sched/features.h: one row per knob (name, type, default, range,
// doc). The command line, share links, the page's control panel and the
// README's knob list are all generated from this table; adding a knob is
// adding a row.
package knob

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"schedplay/engine/field"
)

// Kind is a knob's value type.
type Kind int

const (
	// Bool knobs are kernel-style features, on or off.
	Bool Kind = iota
	// Int knobs are numbers within [Min, Max].
	Int
	// Enum knobs take one of Values; the stored number is the index.
	Enum
)

func (k Kind) String() string { return [...]string{"bool", "int", "enum"}[k] }

// Group says what a knob is for; the page groups its controls by it.
type Group string

const (
	Feature Group = "feature" // a scheduler feature (sched_feat or a proposal)
	Tunable Group = "tunable" // a sysctl / scheduler constant
	Cost    Group = "cost"    // a machine cost parameter
	Model   Group = "model"   // a switch of the simulation model itself
)

// Def is one row of the knob table.
type Def struct {
	ID      ID
	Name    string
	Kind    Kind
	Group   Group
	Default int64
	Min     int64
	Max     int64
	Values  []string // Enum only
	Unit    string   // "ns", "us", "%", "" ...
	Doc     string   // one line: what it does and where it comes from
}

// Values holds one value per knob. The zero value is not meaningful; start
// from Defaults().
type Values struct {
	v [numKnobs]int64
}

// Defaults returns every knob at its default in the default era, 5.2: the
// table default, or what a knob 5.2 lacks reads as.
func Defaults() Values { return DefaultsFor(Era52) }

// Get returns the raw value of id.
func (v *Values) Get(id ID) int64 { return v.v[id] }

// On reports whether a Bool knob is on.
func (v *Values) On(id ID) bool { return v.v[id] != 0 }

// SetValue sets id to x after a range check.
func (v *Values) SetValue(id ID, x int64) error {
	d := &table[id]
	if x < d.Min || x > d.Max {
		return fmt.Errorf("knob %s: value %d out of range (allowed: %s)", d.Name, x, d.Allowed())
	}
	return v.assign(id, x)
}

// assign stores a range-checked value: the era knob switches eras, and a
// knob the current era does not have may only keep the value it reads as.
func (v *Values) assign(id ID, x int64) error {
	if id == EraKnob {
		return v.setEra(Era(x))
	}
	e := v.Era()
	if ok, why := Exists(id, e); !ok && x != DefaultIn(id, e) {
		return notInEraError(id, e, why)
	}
	v.v[id] = x
	return nil
}

// Set parses s for the named knob. Bool knobs accept true/false/1/0/on/off,
// enums their value names (or index), ints a decimal number.
func (v *Values) Set(name, s string) error {
	id, ok := Lookup(name)
	if !ok {
		return UnknownError(name)
	}
	x, err := table[id].Parse(s)
	if err != nil {
		return err
	}
	return v.assign(id, x)
}

// Parse turns text into a value for this knob, checking its range.
func (d *Def) Parse(s string) (int64, error) {
	s = strings.TrimSpace(s)
	switch d.Kind {
	case Bool:
		switch strings.ToLower(s) {
		case "1", "true", "on", "yes":
			return 1, nil
		case "0", "false", "off", "no":
			return 0, nil
		}
		return 0, fmt.Errorf("knob %s: bad value %q (allowed: true/false/1/0/on/off)", d.Name, s)
	case Enum:
		for i, name := range d.Values {
			if strings.EqualFold(name, s) {
				return int64(i), nil
			}
		}
		if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(d.Values) {
			return int64(i), nil
		}
		return 0, fmt.Errorf("knob %s: bad value %q (allowed: %s)", d.Name, s, strings.Join(d.Values, "|"))
	}
	return field.Int("knob "+d.Name, s, d.Min, d.Max)
}

// Format renders a value of this knob the way Parse reads it.
func (d *Def) Format(x int64) string {
	switch d.Kind {
	case Bool:
		if x != 0 {
			return "true"
		}
		return "false"
	case Enum:
		if x >= 0 && int(x) < len(d.Values) {
			return d.Values[x]
		}
	}
	return strconv.FormatInt(x, 10)
}

// Allowed describes the accepted values.
func (d *Def) Allowed() string {
	switch d.Kind {
	case Bool:
		return "true|false"
	case Enum:
		return strings.Join(d.Values, "|")
	}
	u := ""
	if d.Unit != "" {
		u = " " + d.Unit
	}
	return fmt.Sprintf("%d..%d%s", d.Min, d.Max, u)
}

// Table returns every knob definition in table order.
func Table() []Def { return table[:] }

// ByID returns the definition of id.
func ByID(id ID) *Def { return &table[id] }

// Lookup finds a knob by name (exact, then case-insensitive).
func Lookup(name string) (ID, bool) {
	for i := range table {
		if table[i].Name == name {
			return ID(i), true
		}
	}
	for i := range table {
		if strings.EqualFold(table[i].Name, name) {
			return ID(i), true
		}
	}
	return 0, false
}

// Names lists every knob name, sorted.
func Names() []string {
	out := make([]string, len(table))
	for i := range table {
		out[i] = table[i].Name
	}
	sort.Strings(out)
	return out
}

// UnknownError is the error for a knob name not in the table; it lists the
// valid names.
func UnknownError(name string) error {
	return fmt.Errorf("unknown knob %q%s (valid knobs: %s)", name, field.Suggest(name, Names()), strings.Join(Names(), ", "))
}

// Map returns every knob's value keyed by name, formatted for JSON: bools as
// bool, enums as their name, ints as int64.
func (v *Values) Map() map[string]any {
	m := make(map[string]any, len(table))
	for i := range table {
		d := &table[i]
		switch d.Kind {
		case Bool:
			m[d.Name] = v.v[i] != 0
		case Enum:
			m[d.Name] = d.Format(v.v[i])
		default:
			m[d.Name] = v.v[i]
		}
	}
	return m
}

// Diff lists the knobs whose value differs from base, in table order, as
// name=value strings.
//
// The era comes first, so that applying the list in order to base
// switches era before setting knobs only that era has.
func (v *Values) Diff(base *Values) []string {
	var out []string
	if v.v[EraKnob] != base.v[EraKnob] {
		out = append(out, table[EraKnob].Name+"="+table[EraKnob].Format(v.v[EraKnob]))
	}
	for i := range table {
		if ID(i) != EraKnob && v.v[i] != base.v[i] {
			out = append(out, table[i].Name+"="+table[i].Format(v.v[i]))
		}
	}
	return out
}
