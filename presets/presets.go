// Package presets holds the machine presets of machines.md as JSON files
// embedded in the binary, and parses machine descriptions a user brings
// (a file, a pasted blob, a share link) with the same strict checks.
//
// Every error names its source (file name or "<paste>"), the field as a
// JSON path, the bad value and what is allowed, e.g.
//
//	intel-2s-44c-88t.json: field topology.cores_per_llc: bad value 5 (allowed: a divisor of cores_per_socket (22))
//
// Field errors wrap *machine.FieldError, so callers can errors.As them to
// point at the field.
package presets

import (
	"bytes"
	"embed"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"schedplay/internal/json"

	"schedplay/engine/field"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Kinds of preset.
const (
	KindMachine = "machine"
	// KindExperiment is a validation experiment (presets/experiments/*.json).
	KindExperiment = "experiment"
)

// MaxInputBytes bounds one preset document, embedded or user-supplied, so a
// hostile paste or share link cannot make the parser allocate without bound.
const MaxInputBytes = 1 << 20

// PasteSource is the source name to pass to ParseMachine for text that did
// not come from a file.
const PasteSource = "<paste>"

//go:embed machines/*.json experiments/*.json
var embedded embed.FS

// machineDir is the directory of embedded machine presets. Experiment
// presets will live in experiments/ and get their own row in load.
const machineDir = "machines"

// Info is one line of `schedsim presets`.
type Info struct{ Name, Kind, Title string }

// Error is an error in one preset document: Source is the file name (or
// "<paste>"), Err says what is wrong (usually a *machine.FieldError).
type Error struct {
	Source string
	Err    error
}

func (e *Error) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the underlying error (a *machine.FieldError for field
// errors).
func (e *Error) Unwrap() error { return e.Err }

// List returns every embedded preset, sorted by name. Presets that failed to
// parse are left out (CheckEmbedded reports them).
//
// Until something needs every preset parsed, List reads only each file's
// name, kind and title: the page lists the presets before its first frame,
// and the full strict parse of all of them took a few hundred ms of the
// browser's main thread there (issue 10). A file that does not give the
// three is left out; a broken embedded preset is refused when used (and
// CheckEmbedded, which the tests run, fails on it).
func List() []Info {
	if !loaded.done.Load() {
		return listHeaders(embedded)
	}
	return listRegistry(load())
}

// listRegistry is List from a parsed registry.
func listRegistry(r *registry) []Info {
	out := make([]Info, 0, len(r.machines)+len(r.experiments))
	for _, name := range r.machineNames {
		s := r.machines[name]
		out = append(out, Info{Name: s.Name, Kind: s.Kind, Title: s.Title})
	}
	for _, name := range r.experimentNames {
		e := r.experiments[name]
		out = append(out, Info{Name: e.Name, Kind: e.Kind, Title: e.Title})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Machines returns a copy of every embedded machine spec, sorted by name.
func Machines() []*machine.Spec {
	r := load()
	out := make([]*machine.Spec, 0, len(r.machineNames))
	for _, name := range r.machineNames {
		out = append(out, cloneSpec(r.machines[name]))
	}
	return out
}

// Machine returns a fresh copy of the embedded machine preset name. An
// unknown name gives an error listing the valid names. Before every
// preset is parsed, only name's own file is (see lazyMachine).
func Machine(name string) (*machine.Spec, error) {
	if !loaded.done.Load() {
		if s := lazyMachine(name); s != nil {
			return cloneSpec(s), nil
		}
	}
	r := load()
	if s, ok := r.machines[name]; ok {
		return cloneSpec(s), nil
	}
	if err, ok := r.broken[name]; ok {
		return nil, err
	}
	return nil, fmt.Errorf("unknown machine preset %q%s (valid: %s)", name, field.Suggest(name, r.machineNames), strings.Join(r.machineNames, ", "))
}

// CheckEmbedded returns the errors of every embedded preset that does not
// parse, or nil. The package's tests fail on it; the command line and the
// page can report it instead of crashing.
func CheckEmbedded() error {
	return load().err
}

// registry is the parsed embedded presets.
type registry struct {
	machines        map[string]*machine.Spec
	machineNames    []string // sorted
	experiments     map[string]*Experiment
	experimentNames []string         // sorted
	broken          map[string]error // preset name (from the file name) -> error
	err             error            // every load error joined, or nil
}

// loaded is the registry of every embedded preset, parsed on first need;
// lazy holds the presets parsed one file at a time before that.
var (
	loaded struct {
		once sync.Once
		done atomic.Bool
		r    *registry
	}
	lazy struct {
		mu          sync.Mutex
		machines    map[string]*machine.Spec
		experiments map[string]*Experiment
	}
)

func load() *registry {
	loaded.once.Do(func() {
		loaded.r = loadFS(embedded)
		loaded.done.Store(true)
	})
	return loaded.r
}

// lazyMachine parses the one embedded file of machine preset name, or
// returns nil when there is none or it does not parse as that preset —
// the caller then loads every preset, for the error the registry gives.
func lazyMachine(name string) *machine.Spec {
	return lazyParse(&lazy.machines, machineDir, name, parseEmbeddedMachine, func(s *machine.Spec) string { return s.Name })
}

// lazyParse parses dir/name.json of the embedded presets with parse and
// keeps it in *cache, or returns nil as lazyMachine does. It parses
// outside lazy.mu: checking an experiment parses the machines it names.
func lazyParse[T any](cache *map[string]*T, dir, name string, parse func([]byte, string) (*T, error), nameOf func(*T) string) *T {
	lazy.mu.Lock()
	v, ok := (*cache)[name]
	lazy.mu.Unlock()
	if ok {
		return v
	}
	if strings.Contains(name, "/") {
		return nil
	}
	data, err := fs.ReadFile(embedded, path.Join(dir, name+".json"))
	if err != nil {
		return nil
	}
	v, err = parse(data, name+".json")
	if err != nil || nameOf(v) != name {
		return nil
	}
	lazy.mu.Lock()
	defer lazy.mu.Unlock()
	if prev, ok := (*cache)[name]; ok {
		return prev // another caller parsed it meanwhile: share one
	}
	if *cache == nil {
		*cache = map[string]*T{}
	}
	(*cache)[name] = v
	return v
}

// listHeaders is List from each embedded file's name, kind and title.
func listHeaders(fsys fs.FS) []Info {
	var out []Info
	for _, dir := range []string{machineDir, experimentDir} {
		entries, _ := fs.ReadDir(fsys, dir)
		for _, e := range entries {
			file := e.Name()
			if e.IsDir() || path.Ext(file) != ".json" {
				continue
			}
			data, err := fs.ReadFile(fsys, path.Join(dir, file))
			if err != nil {
				continue
			}
			var h Info
			hdr := struct {
				Name  *string `json:"name"`
				Kind  *string `json:"kind"`
				Title *string `json:"title"`
			}{&h.Name, &h.Kind, &h.Title}
			if json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &hdr) != nil || h.Name != strings.TrimSuffix(file, ".json") {
				continue
			}
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// loadFS parses every machines/*.json of fsys. A file whose preset name
// differs from its file name is an error.
func loadFS(fsys fs.FS) *registry {
	r := &registry{machines: map[string]*machine.Spec{}, experiments: map[string]*Experiment{}, broken: map[string]error{}}
	var errs []error
	entries, err := fs.ReadDir(fsys, machineDir)
	if err != nil {
		errs = append(errs, fmt.Errorf("presets: reading %s/: %w", machineDir, err))
	}
	for _, e := range entries {
		file := e.Name()
		if e.IsDir() || path.Ext(file) != ".json" {
			continue
		}
		want := strings.TrimSuffix(file, ".json")
		data, err := fs.ReadFile(fsys, path.Join(machineDir, file))
		if err != nil {
			r.broken[want] = &Error{file, err}
			errs = append(errs, r.broken[want])
			continue
		}
		s, err := parseEmbeddedMachine(data, file)
		if err == nil && s.Name != want {
			err = &Error{file, &machine.FieldError{Field: "name", Value: fmt.Sprintf("%q", s.Name),
				Allowed: fmt.Sprintf("%q (an embedded preset is named like its file)", want)}}
		}
		if err != nil {
			r.broken[want] = err
			errs = append(errs, err)
			continue
		}
		r.machines[s.Name] = s
		r.machineNames = append(r.machineNames, s.Name)
	}
	sort.Strings(r.machineNames)
	errs = append(errs, r.loadExperiments(fsys)...)
	r.err = errors.Join(errs...)
	return r
}

// ParseMachine reads one machine preset from data. source names the input in
// errors: a file name, or PasteSource for text without one. It rejects
// unknown fields, wrong types, trailing data, a kind other than "machine",
// anything machine.Spec.Validate rejects, cost keys that are not cost knobs
// or are out of the knob's range, and cost values without a cost note.
//
// A document may name a machine preset in "base"; every field it does not
// give is then taken from that preset (see applyBase). Without a base,
// fields with an obvious default get it and the others are required (see
// applyDefaults).
func ParseMachine(data []byte, source string) (*machine.Spec, error) {
	return parseMachine(data, source, true)
}

// parseEmbeddedMachine parses an embedded preset, which may not have a
// base: resolving one would load the registry being loaded.
func parseEmbeddedMachine(data []byte, source string) (*machine.Spec, error) {
	return parseMachine(data, source, false)
}

func parseMachine(data []byte, source string, allowBase bool) (*machine.Spec, error) {
	if source == "" {
		source = PasteSource
	}
	fail := func(err error) (*machine.Spec, error) { return nil, &Error{source, err} }

	tree, err := decodeDocument(data)
	if err != nil {
		return fail(err)
	}
	if err := checkShape(tree, specShape, ""); err != nil {
		return fail(err)
	}
	obj, _ := tree.(map[string]any) // checkShape has made it an object
	var (
		full map[string]any
		base *machine.Spec
	)
	if b, ok := obj["base"]; ok && b != "" {
		if !allowBase {
			return fail(&machine.FieldError{Field: "base", Value: describeJSON(b), Allowed: `"" (an embedded preset gives every field itself)`})
		}
		full, base, err = applyBase(obj, b.(string))
	} else {
		full, err = applyDefaults(obj)
	}
	if err != nil {
		return fail(err)
	}
	doc, err := stdjson.Marshal(full)
	if err == nil {
		data = doc
	}
	var s machine.Spec
	if err == nil {
		err = json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &s)
	}
	if err != nil {
		// checkShape has vetted every field, so this is not expected.
		return fail(&machine.FieldError{Field: "(document)", Value: "a machine preset", Allowed: "a document json can decode: " + err.Error()})
	}
	if err := checkSpec(&s); err != nil {
		return fail(inherited(err, obj, base))
	}
	return &s, nil
}

// checkSpec applies the semantic checks to a decoded spec.
func checkSpec(s *machine.Spec) error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	if s.Kind != KindMachine {
		return &machine.FieldError{Field: "kind", Value: fmt.Sprintf("%q", s.Kind), Allowed: fmt.Sprintf("%q", KindMachine)}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	for i, st := range s.IdleStates {
		if strings.TrimSpace(st.Name) == "" {
			return &machine.FieldError{Field: fmt.Sprintf("idle_states[%d].name", i), Value: fmt.Sprintf("%q", st.Name), Allowed: "a non-empty state name such as \"C1\""}
		}
	}
	if err := checkNUMANotes(s); err != nil {
		return err
	}
	return checkCosts(s)
}

// checkNUMANotes requires a source note with a node-distance table and
// with a reclaim distance, as checkCosts does for costs, and no note
// without its value.
func checkNUMANotes(s *machine.Spec) error {
	for _, c := range []struct {
		field, note string
		set         bool
	}{
		{"numa_distance_note", s.NUMADistanceNote, s.NUMADistance != nil},
		{"reclaim_distance_note", s.ReclaimDistanceNote, s.ReclaimDistance != 0 || s.NodeReclaimDistance != 0},
	} {
		value := strings.TrimSuffix(c.field, "_note")
		if c.field == "reclaim_distance_note" {
			value = "reclaim_distance or node_reclaim_distance"
		}
		switch {
		case c.set && c.note == "":
			return &machine.FieldError{Field: c.field, Value: "(missing)",
				Allowed: fmt.Sprintf("a one-line note saying where %s comes from (doc: or assumed: with a reason)", value)}
		case c.set && (strings.TrimSpace(c.note) == "" || strings.ContainsAny(c.note, "\r\n")):
			return &machine.FieldError{Field: c.field, Value: fmt.Sprintf("%q", truncate(c.note, 40)),
				Allowed: fmt.Sprintf("a non-empty single line saying where %s comes from", value)}
		case !c.set && c.note != "":
			return &machine.FieldError{Field: c.field, Value: fmt.Sprintf("%q (no %s given)", truncate(c.note, 40), value),
				Allowed: fmt.Sprintf("a note only beside %s", value)}
		}
	}
	return nil
}

// checkName keeps preset names usable on a command line and in a URL.
func checkName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			ok = false
		}
	}
	if !ok {
		return &machine.FieldError{Field: "name", Value: fmt.Sprintf("%q", truncate(name, 40)),
			Allowed: "1..64 characters from a-z A-Z 0-9 - _ ."}
	}
	return nil
}

// costKnobs lists the names of the knobs of group Cost, in table order.
func costKnobs() []string {
	var out []string
	for _, d := range knob.Table() {
		if d.Group == knob.Cost {
			out = append(out, d.Name)
		}
	}
	return out
}

// checkCosts checks every costs entry against the knob table and requires a
// one-line cost note per entry (and no note without an entry).
func checkCosts(s *machine.Spec) error {
	valid := "one of the cost knobs " + strings.Join(costKnobs(), ", ")
	for _, k := range sortedKeys(s.Costs) {
		v := s.Costs[k]
		f := "costs." + k
		id, ok := knob.Lookup(k)
		if !ok {
			return &machine.FieldError{Field: f, Value: fmt.Sprintf("%d (unknown knob %q)", v, k), Allowed: valid}
		}
		d := knob.ByID(id)
		if d.Name != k {
			return &machine.FieldError{Field: f, Value: fmt.Sprintf("%d (knob names are case-sensitive)", v), Allowed: fmt.Sprintf("the exact name %q; %s", d.Name, valid)}
		}
		if d.Group != knob.Cost {
			return &machine.FieldError{Field: f, Value: fmt.Sprintf("%d (%s is a %s knob, not a cost)", v, k, d.Group), Allowed: valid}
		}
		if v < d.Min || v > d.Max {
			return &machine.FieldError{Field: f, Value: v, Allowed: d.Allowed()}
		}
		note, ok := s.CostNotes[k]
		if !ok {
			return &machine.FieldError{Field: "cost_notes." + k, Value: "(missing)",
				Allowed: fmt.Sprintf("a one-line note saying where costs.%s comes from (doc: or assumed: with a reason)", k)}
		}
		if strings.TrimSpace(note) == "" || strings.ContainsAny(note, "\r\n") {
			return &machine.FieldError{Field: "cost_notes." + k, Value: fmt.Sprintf("%q", truncate(note, 40)),
				Allowed: fmt.Sprintf("a non-empty single line saying where costs.%s comes from", k)}
		}
	}
	for _, k := range sortedKeys(s.CostNotes) {
		if _, ok := s.Costs[k]; !ok {
			return &machine.FieldError{Field: "cost_notes." + k, Value: "(no costs entry for it)",
				Allowed: "a key of costs: " + strings.Join(sortedKeys(s.Costs), ", ")}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cloneSpec deep-copies s so callers may change the result freely.
func cloneSpec(s *machine.Spec) *machine.Spec {
	c := *s
	c.Notes = append([]string(nil), s.Notes...)
	c.SMTThroughput = append([]float64(nil), s.SMTThroughput...)
	c.IdleStates = append([]machine.IdleState(nil), s.IdleStates...)
	if s.NUMADistance != nil {
		c.NUMADistance = make([][]int, len(s.NUMADistance))
		for i, row := range s.NUMADistance {
			c.NUMADistance[i] = append([]int(nil), row...)
		}
	}
	if s.Costs != nil {
		c.Costs = make(map[string]int64, len(s.Costs))
		for k, v := range s.Costs {
			c.Costs[k] = v
		}
	}
	if s.CostNotes != nil {
		c.CostNotes = make(map[string]string, len(s.CostNotes))
		for k, v := range s.CostNotes {
			c.CostNotes[k] = v
		}
	}
	return &c
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// ---- strict decoding ----

var utf8BOM = []byte("\xef\xbb\xbf")

// maxDepth bounds nesting; a machine preset is three levels deep.
const maxDepth = 32

// decodeDocument reads data as exactly one JSON value into a tree of
// map[string]any, []any, string, json.Number, bool and nil, rejecting
// oversized input, syntax errors, duplicate keys, deep nesting and anything
// after the value.
func decodeDocument(data []byte) (any, error) {
	if len(data) > MaxInputBytes {
		return nil, &machine.FieldError{Field: "(document)", Value: fmt.Sprintf("%d bytes", len(data)),
			Allowed: fmt.Sprintf("at most %d bytes", MaxInputBytes)}
	}
	if bytes.HasPrefix(data, utf8BOM) {
		// White space in place of the BOM keeps every byte offset in
		// errors an offset into the file as given.
		data = append([]byte("   "), data[len(utf8BOM):]...)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &machine.FieldError{Field: "(document)", Value: "empty input", Allowed: "one JSON object, a machine preset"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec, data, "", 0)
	if err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
		off++
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &machine.FieldError{Field: "(document)",
			Value:   fmt.Sprintf("trailing data %s at byte %d", snippet(data, off), off),
			Allowed: "one JSON object and nothing after it but white space"}
	}
	return v, nil
}

// readValue reads one value with dec's Token API; p is its JSON path.
func readValue(dec *json.Decoder, data []byte, p string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &machine.FieldError{Field: pathOrDoc(p), Value: fmt.Sprintf("nesting deeper than %d levels", maxDepth),
			Allowed: "a machine preset (objects and arrays three levels deep)"}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(dec, data, p, err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch delim {
	case '{':
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, syntaxError(dec, data, p, err)
			}
			key, ok := kt.(string)
			if !ok {
				return nil, syntaxError(dec, data, p, fmt.Errorf("object key %v is not a string", kt))
			}
			kp := joinPath(p, key)
			if _, dup := obj[key]; dup {
				return nil, &machine.FieldError{Field: kp, Value: "(given twice)", Allowed: "each key once per object"}
			}
			v, err := readValue(dec, data, kp, depth+1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, syntaxError(dec, data, p, err)
		}
		return obj, nil
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readValue(dec, data, fmt.Sprintf("%s[%d]", p, len(arr)), depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, syntaxError(dec, data, p, err)
		}
		return arr, nil
	}
	return nil, syntaxError(dec, data, p, fmt.Errorf("unexpected %v", delim))
}

// syntaxError turns a decoder error into a FieldError on the value being
// read, quoting the input around the offending byte.
func syntaxError(dec *json.Decoder, data []byte, p string, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 {
		off = se.Offset - 1
	}
	msg := err.Error()
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		msg = "unexpected end of input"
		off = int64(len(data))
	}
	// The token decoder's offsets point before or after the offending
	// byte depending on the error; the standard library's scanner stops
	// on it (its Offset counts that byte), so take the position and the
	// message from there.
	var std *stdjson.SyntaxError
	if e := stdjson.Unmarshal(data, new(stdjson.RawMessage)); errors.As(e, &std) {
		off, msg = std.Offset-1, std.Error()
		if off >= int64(len(data))-1 && strings.HasPrefix(msg, "unexpected end") {
			off, msg = int64(len(data)), "unexpected end of input"
		}
	}
	return &machine.FieldError{Field: pathOrDoc(p),
		Value:   fmt.Sprintf("%s (not valid JSON: %s near byte %d)", snippet(data, off), msg, off),
		Allowed: "one JSON object, a machine preset"}
}

// snippet quotes up to 24 bytes of data from off.
func snippet(data []byte, off int64) string {
	if off < 0 {
		off = 0
	}
	if off >= int64(len(data)) {
		return "<end of input>"
	}
	end := off + 24
	if end > int64(len(data)) {
		end = int64(len(data))
	}
	return fmt.Sprintf("%q", data[off:end])
}

func pathOrDoc(p string) string {
	if p == "" {
		return "(document)"
	}
	return p
}

// joinPath appends key to a JSON path, quoting keys that are not plain names.
func joinPath(p, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			plain = false
		}
	}
	if !plain {
		return fmt.Sprintf("%s[%q]", p, truncate(key, 40))
	}
	if p == "" {
		return key
	}
	return p + "." + key
}

// specShape is the Go type a machine preset decodes into; checkShape walks
// it by reflection so new Spec fields are accepted without editing a list.
var specShape = reflect.TypeOf(machine.Spec{})

// checkShape checks that the decoded tree v fits type t exactly: only the
// fields t's json tags name (case-sensitive), values of the right JSON type,
// integers that are whole numbers within range. null is accepted for arrays
// and objects (a marshalled nil slice or map).
func checkShape(v any, t reflect.Type, p string) error {
	bad := func() error {
		return &machine.FieldError{Field: pathOrDoc(p), Value: describeJSON(v), Allowed: describeType(t)}
	}
	if v == nil {
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Pointer {
			return nil
		}
		return bad()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(v, t.Elem(), p)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		fields, names := jsonFields(t)
		keys := sortedKeys(obj)
		for _, k := range keys {
			if _, ok := fields[k]; !ok {
				val := "(unknown field)"
				for _, n := range names {
					if strings.EqualFold(n, k) {
						val = fmt.Sprintf("(unknown field; did you mean %q?)", n)
					}
				}
				where := "the preset"
				if p != "" {
					where = p
				}
				return &machine.FieldError{Field: joinPath(p, k), Value: val,
					Allowed: fmt.Sprintf("the fields of %s: %s", where, strings.Join(names, ", "))}
			}
		}
		for _, k := range keys {
			if err := checkShape(obj[k], fields[k], joinPath(p, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, k := range sortedKeys(obj) {
			if err := checkShape(obj[k], t.Elem(), joinPath(p, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, e := range arr {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", p, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			return bad()
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return bad()
		}
	default:
		return fmt.Errorf("presets: field %s has unsupported Go type %s", pathOrDoc(p), t)
	}
	return nil
}

// jsonFields maps the json names of struct t's fields to their types, and
// lists the names in declaration order.
func jsonFields(t reflect.Type) (map[string]reflect.Type, []string) {
	fields := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	return fields, names
}

// describeType says in words what JSON value fits t.
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		_, names := jsonFields(t)
		return "an object with the fields " + strings.Join(names, ", ")
	case reflect.Map:
		return "an object whose values are " + describeType(t.Elem())
	case reflect.Slice:
		return "an array of " + describeType(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number (no fraction or exponent)"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// describeJSON renders a decoded JSON value briefly for an error message.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", truncate(x, 40))
	case json.Number:
		return truncate(string(x), 40)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%v", v)
}
