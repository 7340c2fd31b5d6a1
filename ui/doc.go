// Package ui is the playground's canvas: an ebiten game that draws the
// simulated machine (sockets → LLCs → cores → hardware threads), flashes
// wakeup decisions on it, and charts wakeup latency, search cost,
// throughput and work conservation, for one simulation or an A/B pair.
//
// Update advances the simulations (through playground.App, within a wall
// budget) and copies what the frame shows into preallocated buffers;
// Draw only turns that snapshot into pixels and never touches the
// engines. The canvas code allocates nothing per frame in the steady
// state; a few times a second the histogram bars and the App's state copy
// are refreshed, which allocate.
//
// Files without a build tag (layout, colours, rings, flashes, number
// formatting, the bitmap font) are plain Go and tested natively; the
// ebiten game itself is built only for js/wasm.
package ui
