// Package ui is the playground's canvas: an ebiten game that draws the
// simulated machine (sockets → LLCs → cores → hardware threads, each box
// labelled where it has room), flashes wakeup decisions on it,
// highlights a decision's probe path when the page asks (SetHighlight,
// SetHighlightDecision), and charts wakeup latency (log-spaced bins, log
// count axis, p50/p99/p99.9), search cost, throughput and work
// conservation against simulated time, for one simulation or up to four
// arms that share every scale, compared with a chosen baseline arm
// (SetBaseline).
//
// Colours follow one rule: each means one thing (palette.go). Running
// CPUs take their workload's Okabe–Ito hue; idle CPUs are greys by
// C-state depth; polling, waking and waiting work have their own marks;
// A/B arms differ by line style, not colour.
//
// Update advances the simulations (through playground.App, within a wall
// budget) and copies what the frame shows into preallocated buffers;
// Draw only turns that snapshot into pixels and never touches the
// engines. The canvas code allocates nothing per frame in the steady
// state; a few times a second the histogram bars, the chart texts and
// the App's state copy are refreshed, which allocate.
//
// Files without a build tag (layout, axes, bins, colours, the
// work-conservation count, rings, flashes, number formatting, the bitmap
// font) are plain Go and tested natively; the ebiten game itself is
// built only for js/wasm.
package ui
