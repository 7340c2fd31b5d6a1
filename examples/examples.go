// Package examples embeds the shipped example files, so that the page
// (playground, wasm) offers them without reading the disk: today the
// wake policies of examples/policies/ (issue 29).
package examples

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed policies/*.star
var policies embed.FS

// Policy is one shipped example policy.
type Policy struct {
	File  string // "rotating-window.star"
	Title string // "rotating window"
	Src   string
}

// Policies are the example policies, by file name.
func Policies() []Policy {
	ents, _ := fs.ReadDir(policies, "policies")
	var out []Policy
	for _, e := range ents {
		b, err := policies.ReadFile("policies/" + e.Name())
		if err != nil {
			continue
		}
		title := strings.ReplaceAll(strings.TrimSuffix(e.Name(), ".star"), "-", " ")
		out = append(out, Policy{File: e.Name(), Title: title, Src: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
