//go:build js && wasm

// The floor of any ebiten page's time to first frame (SCHEDPLAY_PAGE_BENCH
// =floor): ebiten and the Go runtime, nothing of schedplay, drawing an
// 88-cell grid once and telling the page when that frame was drawn.
package main

import (
	"image/color"
	"syscall/js"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/vector"
)

type grid struct{ told bool }

func (g *grid) Update() error { return nil }

func (g *grid) Draw(screen *ebiten.Image) {
	for i := 0; i < 88; i++ {
		x, y := float32(10+(i%22)*20), float32(10+(i/22)*20)
		vector.DrawFilledRect(screen, x, y, 16, 16, color.RGBA{0, 160, uint8(i), 255}, false)
	}
	if !g.told {
		g.told = true
		js.Global().Call("floorFirstFrame")
	}
}

func (g *grid) Layout(w, h int) (int, int) { return w, h }

func main() {
	js.Global().Call("floorGoMain")
	if err := ebiten.RunGame(&grid{}); err != nil {
		panic(err)
	}
}
