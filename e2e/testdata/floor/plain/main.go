//go:build js && wasm

// The floor of any Go page (SCHEDPLAY_PAGE_BENCH=floor): the Go runtime
// alone, telling the page it started.
package main

import "syscall/js"

func main() {
	js.Global().Call("floorGoMain")
	js.Global().Call("floorFirstFrame")
	select {}
}
