// Package json is schedplay's one JSON library: github.com/goccy/go-json in
// native builds (the CLI's presets, results and traces) and the standard
// library's encoding/json in the browser build.
//
// Why two: go-json is fast, but it is also 3.3 MB of the browser wasm's
// 12.3 MB of code (its encoder and decoder virtual machines, one per
// option set, all reachable), and the wasm is downloaded, compiled and
// instantiated on every first visit. encoding/json is linked into the wasm
// anyway (by syscall/js users and the standard library), so in the
// browser the cost of go-json is pure: without it the wasm is 13.9 MB
// instead of 19.0 MB raw and 2.40 MB instead of 3.11 MB brotli (issue 10,
// BENCHMARKS.md). The browser's JSON is small (panel state, results, the
// decision log a few times a second); snapshots go as typed arrays.
//
// The two libraries agree on everything schedplay relies on: the same
// struct tags, field order, number and string formatting, HTML escaping,
// json.Number and the token API. Machine and experiment presets are vetted
// by presets' own strict token walk, whose messages are its own, so a bad
// preset gets the same error in the page as on the command line
// (`make wasm-test` runs the presets tests in the browser build).
// TestSameBytesBothWays checks the encoding side: what the page marshals —
// presets inside share links, results, the decision log — comes out byte
// for byte as the CLI writes it.
package json
