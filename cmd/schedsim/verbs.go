package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/presets"
)

func cmdPresets(args []string, w io.Writer) error {
	if err := parseFlags(newFlagSet("presets"), args, w, false); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range presets.List() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Kind, p.Title)
	}
	return tw.Flush()
}

func knobsFlagSet(format *string) *flag.FlagSet {
	fs := newFlagSet("knobs")
	fs.StringVar(format, "format", "text", "output `FORMAT`: text, or markdown (the README's knob table)")
	return fs
}

func cmdKnobs(args []string, w io.Writer) error {
	var format string
	if err := parseFlags(knobsFlagSet(&format), args, w, false); err != nil {
		return err
	}
	switch format {
	case "markdown":
		_, err := fmt.Fprint(w, knobMarkdown())
		return err
	case "text":
	default:
		return usagef("--format %q not allowed (allowed: text, markdown)", format)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tGROUP\tDEFAULT\tRANGE\tDOC")
	for _, d := range knob.Table() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Kind, d.Group, d.Format(d.Default), d.Allowed(), d.Doc)
	}
	return tw.Flush()
}

// knobMarkdown renders the knob table for the README.
func knobMarkdown() string {
	var b strings.Builder
	b.WriteString("| knob | type | group | default | range | what it does |\n|---|---|---|---|---|---|\n")
	for _, d := range knob.Table() {
		esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", d.Name, d.Kind, d.Group, esc(d.Format(d.Default)), esc(d.Allowed()), esc(d.Doc))
	}
	return b.String()
}

func cmdWorkloads(args []string, stdout io.Writer) error {
	if err := parseFlags(newFlagSet("workloads"), args, stdout, false); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, name := range workload.Kinds() {
		k, _ := workload.Lookup(name)
		fmt.Fprintf(w, "%s — %s\n", name, k.Doc)
		if name == "rtapp" {
			fmt.Fprintf(w, "  %-13s default %-8s %s\n", "file", "(none)", "command line only: path of an rt-app JSON file, read and carried as b64=; other keys may follow (rtapp:file=x.json,nice=5,cpus=0-3)")
		}
		for _, key := range k.AllKeys() {
			def := key.Default
			if def == "" {
				def = "(none)"
			}
			fmt.Fprintf(w, "  %-13s default %-8s %s\n", key.Name, def, key.Doc)
		}
	}
	return w.Flush()
}
