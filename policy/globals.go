package policy

import (
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The interpreter finds a predeclared or universal name (probe, len,
// None, True, ...) by a map lookup at every use, about 25 ns with the
// string's hash, where a global is a slice index. A policy names them
// tens of times per wakeup, so Compile binds each to a global of the
// file: it puts `probe = $probe` (and so on) before the file's first
// statement, where $probe is the predeclared value under a name no
// source can spell. The file sees the same values under the same names;
// a file that defines its own probe rebinds it, as it would shadow the
// predeclared one (GlobalReassign); errors keep their lines, since the
// statements added have no source of their own.

// hotUniversal are the universal names a policy is likely to use in its
// loops, bound as globals too.
var hotUniversal = []string{"None", "True", "False", "range", "list", "int", "bool", "abs", "enumerate", "reversed", "sorted", "any", "all"}

// globalNames are the names bound as globals, sorted.
var globalNames = func() []string {
	var out []string
	for k := range predeclaredNames {
		out = append(out, k)
	}
	for _, k := range hotUniversal {
		if !predeclaredNames[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}()

const hiddenPrefix = "$"

// isHidden reports whether name is one of the hidden predeclared names
// (the compiler's isPredeclared).
func isHidden(name string) bool {
	return len(name) > 1 && name[0] == '$' && (predeclaredNames[name[1:]] || isHotUniversal(name[1:]))
}

func isHotUniversal(name string) bool {
	for _, k := range hotUniversal {
		if k == name {
			return true
		}
	}
	return false
}

// bindGlobals adds the assignments to f, before its statements.
func bindGlobals(f *syntax.File) {
	pos := syntax.MakePosition(&f.Path, 1, 1)
	if len(f.Stmts) > 0 {
		pos, _ = f.Stmts[0].Span()
	}
	pre := make([]syntax.Stmt, 0, len(globalNames)+len(f.Stmts))
	for _, n := range globalNames {
		pre = append(pre, &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ,
			LHS: &syntax.Ident{NamePos: pos, Name: n},
			RHS: &syntax.Ident{NamePos: pos, Name: hiddenPrefix + n}})
	}
	f.Stmts = append(pre, f.Stmts...)
}

// hiddenPredeclared is d under the hidden names, with the hot universal
// values.
func hiddenPredeclared(d starlark.StringDict) starlark.StringDict {
	out := make(starlark.StringDict, len(d)+len(hotUniversal))
	for k, v := range d {
		out[hiddenPrefix+k] = v
	}
	for _, k := range hotUniversal {
		if _, ok := d[k]; !ok {
			out[hiddenPrefix+k] = starlark.Universe[k]
		}
	}
	return out
}
