//go:build js && wasm

package ui

import (
	"image/color"
	"math"

	"github.com/hajimehoshi/ebiten/v2"
)

// painter batches everything the canvas draws — rectangles, lines and
// text — into one vertex buffer over one small texture (the glyphs plus a
// white block), so a frame is a handful of DrawTriangles calls and
// allocates nothing once the buffers have grown.
type painter struct {
	atlas *ebiten.Image
	dst   *ebiten.Image
	verts []ebiten.Vertex
	idx   []uint16
	opts  ebiten.DrawTrianglesOptions
}

// Atlas geometry: glyphs in a 16-column grid of 8×14 slots, the white
// block in the corner.
const (
	atlasW, atlasH = 128, 128
	slotW, slotH   = 8, 14
	whiteX, whiteY = 120, 120
	// maxQuads keeps indices within DrawTriangles' uint16 limit.
	maxQuads = ebiten.MaxIndicesCount / 6
)

func newPainter() *painter {
	pix := make([]byte, atlasW*atlasH*4)
	set := func(x, y int) {
		o := (y*atlasW + x) * 4
		pix[o], pix[o+1], pix[o+2], pix[o+3] = 0xff, 0xff, 0xff, 0xff
	}
	for g := 0; g < 95; g++ {
		ox, oy := (g%16)*slotW, (g/16)*slotH
		for y := 0; y < GlyphH; y++ {
			for x := 0; x < GlyphW; x++ {
				if GlyphPixel(g, x, y) {
					set(ox+x, oy+y)
				}
			}
		}
	}
	for y := whiteY; y < atlasH; y++ {
		for x := whiteX; x < atlasW; x++ {
			set(x, y)
		}
	}
	img := ebiten.NewImage(atlasW, atlasH)
	img.WritePixels(pix)
	return &painter{
		atlas: img,
		verts: make([]ebiten.Vertex, 0, 4*4096),
		idx:   make([]uint16, 0, 6*4096),
	}
}

// begin starts a frame on dst.
func (p *painter) begin(dst *ebiten.Image) {
	p.dst = dst
	p.verts, p.idx = p.verts[:0], p.idx[:0]
}

// flush draws what is batched.
func (p *painter) flush() {
	if len(p.idx) > 0 {
		p.dst.DrawTriangles(p.verts, p.idx, p.atlas, &p.opts)
	}
	p.verts, p.idx = p.verts[:0], p.idx[:0]
}

func colorF(c color.RGBA) (r, g, b, a float32) {
	return float32(c.R) / 255, float32(c.G) / 255, float32(c.B) / 255, float32(c.A) / 255
}

// quad adds a quadrilateral with corners (x0,y0)…(x3,y3) in order,
// textured from the source rectangle (sx0,sy0)-(sx1,sy1).
func (p *painter) quad(x0, y0, x1, y1, x2, y2, x3, y3, sx0, sy0, sx1, sy1 float32, c color.RGBA) {
	if c.A == 0 {
		return
	}
	if len(p.idx)+6 > maxQuads*6 {
		p.flush()
	}
	r, g, b, a := colorF(c)
	base := uint16(len(p.verts))
	p.verts = append(p.verts,
		ebiten.Vertex{DstX: x0, DstY: y0, SrcX: sx0, SrcY: sy0, ColorR: r, ColorG: g, ColorB: b, ColorA: a},
		ebiten.Vertex{DstX: x1, DstY: y1, SrcX: sx1, SrcY: sy0, ColorR: r, ColorG: g, ColorB: b, ColorA: a},
		ebiten.Vertex{DstX: x2, DstY: y2, SrcX: sx1, SrcY: sy1, ColorR: r, ColorG: g, ColorB: b, ColorA: a},
		ebiten.Vertex{DstX: x3, DstY: y3, SrcX: sx0, SrcY: sy1, ColorR: r, ColorG: g, ColorB: b, ColorA: a},
	)
	p.idx = append(p.idx, base, base+1, base+2, base, base+2, base+3)
}

// fill fills the rectangle x, y, w, h.
func (p *painter) fill(x, y, w, h float32, c color.RGBA) {
	if w <= 0 || h <= 0 {
		return
	}
	p.quad(x, y, x+w, y, x+w, y+h, x, y+h, whiteX+2, whiteY+2, whiteX+6, whiteY+6, c)
}

// fillR fills r.
func (p *painter) fillR(r Rect, c color.RGBA) {
	p.fill(float32(r.X), float32(r.Y), float32(r.W), float32(r.H), c)
}

// stroke draws r's outline t pixels thick, inside r.
func (p *painter) stroke(r Rect, t int, c color.RGBA) {
	x, y, w, h, tt := float32(r.X), float32(r.Y), float32(r.W), float32(r.H), float32(t)
	if 2*tt >= w || 2*tt >= h {
		p.fill(x, y, w, h, c)
		return
	}
	p.fill(x, y, w, tt, c)
	p.fill(x, y+h-tt, w, tt, c)
	p.fill(x, y+tt, tt, h-2*tt, c)
	p.fill(x+w-tt, y+tt, tt, h-2*tt, c)
}

// strokeOut draws an outline t pixels thick just outside r.
func (p *painter) strokeOut(r Rect, t int, c color.RGBA) {
	p.stroke(Rect{r.X - t, r.Y - t, r.W + 2*t, r.H + 2*t}, t, c)
}

// line draws a segment of width wd.
func (p *painter) line(x0, y0, x1, y1, wd float32, c color.RGBA) {
	dx, dy := x1-x0, y1-y0
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l < 0.01 {
		return
	}
	nx, ny := -dy/l*wd/2, dx/l*wd/2
	p.quad(x0+nx, y0+ny, x1+nx, y1+ny, x1-nx, y1-ny, x0-nx, y0-ny, whiteX+2, whiteY+2, whiteX+6, whiteY+6, c)
}

// text draws s with its top-left corner at (x, y), cut off at maxW
// pixels (no limit when maxW <= 0), and returns the width drawn.
func (p *painter) text(x, y int, s []byte, maxW int, c color.RGBA) int {
	return drawText(p, x, y, s, maxW, c)
}

// textS is text for a string.
func (p *painter) textS(x, y int, s string, maxW int, c color.RGBA) int {
	return drawText(p, x, y, s, maxW, c)
}

func drawText[T ~string | ~[]byte](p *painter, x, y int, s T, maxW int, c color.RGBA) int {
	n := len(s)
	if maxW > 0 {
		n = min(n, (maxW+GlyphAdvance-GlyphW)/GlyphAdvance)
	}
	for i := 0; i < n; i++ {
		ch := s[i]
		if ch == ' ' {
			continue
		}
		g := GlyphIndex(ch)
		sx, sy := float32((g%16)*slotW), float32((g/16)*slotH)
		dx, dy := float32(x+i*GlyphAdvance), float32(y)
		p.quad(dx, dy, dx+GlyphW, dy, dx+GlyphW, dy+GlyphH, dx, dy+GlyphH, sx, sy, sx+GlyphW, sy+GlyphH, c)
	}
	return TextWidth(n)
}
