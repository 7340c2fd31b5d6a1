//go:build js && wasm

package benchrun

import "syscall/js"

// CPUSeconds is the CPU time of the Node process running the test (user +
// system, from process.cpuUsage), or -1 outside Node.
func CPUSeconds() float64 {
	p := js.Global().Get("process")
	if p.IsUndefined() || p.Get("cpuUsage").IsUndefined() {
		return -1
	}
	u := p.Call("cpuUsage")
	return (u.Get("user").Float() + u.Get("system").Float()) / 1e6
}
