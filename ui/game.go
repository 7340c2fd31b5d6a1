//go:build js && wasm

package ui

import (
	"math"
	"schedplay/engine"
	"sync/atomic"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"

	"schedplay/engine/machine"
	"schedplay/playground"
)

// Source is where the canvas gets the simulation from: the page's
// client of the engine workers. Views are read under Lock.
type Source interface {
	Lock()
	Unlock()
	Generation() int
	Views() []*playground.ArmView
	Paused() bool
	Finished() bool
	AchievedSpeed() float64
	Speed() float64
	SetPaused(bool)
	StepWakeup()
	// Show names the CPU the info box describes (arm, cpu; -1: none).
	Show(arm, cpu int)
}

// Options configure the canvas.
type Options struct {
	// OnFirstDraw runs once, after the first frame that shows the
	// simulation (its first snapshot) has been drawn.
	OnFirstDraw func()
}

// Frame timing.
const (
	// maxFrame caps the frame interval handed to the simulation (after a
	// hidden tab or a stall the clock does not try to catch up).
	maxFrame = 250 * time.Millisecond
	// slowEvery is how often the costlier readings (histogram bars,
	// header numbers, the App's state) are refreshed.
	slowEvery = 250 * time.Millisecond
)

// Game is the ebiten game of the playground.
type Game struct {
	app       Source
	shownLast target // the CPU last passed to Show
	opts      Options
	p         *painter

	// Canvas size (CSS pixels) from Layout, and the layout built for it.
	w, h          int
	page          *PageLayout
	pageW, pageH  int
	gen           int // the App generation the snapshot belongs to
	haveGen       bool
	topo          *machine.Topology
	firstPhys     int // index of the first non-polling idle state
	legend        []legendItem
	arms          [MaxArms]*armState
	narms         int
	nhist         int
	sampleNS      int64 // simulated time between chart samples
	lastSample    int64 // simulated time of the last sample
	sampled       bool
	lastUpdate    time.Time
	lastSlow      time.Time
	dt            float64 // wall seconds since the previous Update
	paused        bool
	finished      bool
	achieved      float64
	speed         float64
	now           int64
	hover         target // CPU under the cursor
	pin           target // CPU pinned by a click
	info          infoBox
	header        []byte
	scratch       []byte
	tx            chartTexts
	ticks         chartTicks
	firstDrawDone bool

	// key is what this frame shows, drawnKey what the canvas shows (see
	// frames.go); drew: this frame's Draw drew.
	key, drawnKey frameKey
	haveDrawn     bool
	drew          bool

	// What the shell set (SetHighlight, SetBaseline), copied each frame.
	shell    *shellSettings
	shellGen int
	// viewHL is the panel's highlighted decision last handed to the
	// shell settings (ArmView.Highlight; nil: none).
	viewHL   *engine.Decision
	hl       Highlight
	baseline int

	// Frame cost: work time and frames in the current one-second window.
	workNS      int64
	frames      int
	windowStart time.Time
	frameMs     atomic.Uint64            // float64 bits
	legendPub   atomic.Pointer[[]string] // the legend's labels, for the page's state
	shownT      atomic.Uint64            // float64 bits: ShownTime
}

// target names a CPU of an arm (cpu -1: none).
type target struct{ arm, cpu int }

// New returns the canvas for app. It sets ebiten to one Update per drawn
// frame, since each Update advances the simulation by the real interval.
func New(app Source, opts Options) *Game {
	ebiten.SetTPS(ebiten.SyncWithFPS)
	startFrameClock()
	g := &Game{
		app: app, opts: opts, p: newPainter(), shell: newShellSettings(),
		hl:    Highlight{Arm: -1, Target: -1, Chosen: -1},
		hover: target{-1, -1}, pin: target{-1, -1}, shownLast: target{-2, -2},
		header:  make([]byte, 0, 256),
		scratch: make([]byte, 0, 64),
	}
	for i := range g.arms {
		g.arms[i] = newArmState()
	}
	g.info.init()
	return g
}

// SetHighlight highlights a wakeup decision's probe path on arm A's map:
// the CPUs in the order they were probed, joined by a line and numbered.
// An empty path clears the highlight. Safe to call from any goroutine.
func (g *Game) SetHighlight(path []int) {
	arm := 0
	if len(path) == 0 {
		arm = -1
	}
	g.shell.setHighlight(Highlight{Arm: arm, Target: -1, Path: path, Chosen: -1})
}

// SetHighlightDecision highlights a decision on arm arm's map (0 = A):
// its target (wake_affine's pick; -1: none), the CPUs probed in order,
// and the CPU chosen (-1: none). arm -1 clears the highlight. Safe to
// call from any goroutine.
func (g *Game) SetHighlightDecision(arm, target int, path []int, chosen int) {
	g.shell.setHighlight(Highlight{Arm: arm, Target: target, Path: path, Chosen: chosen})
}

// SetBaseline makes arm the one the charts compare the others with (its
// histogram is filled, the "vs" figures are relative to it); 0 = A.
// Safe to call from any goroutine.
func (g *Game) SetBaseline(arm int) { g.shell.setBaseline(arm) }

// ShownTime is the simulated time of the snapshot the canvas shows (arm
// A's), in seconds: the t of its status line, for a panel that wants to
// show the same figure.
func (g *Game) ShownTime() float64 { return math.Float64frombits(g.shownT.Load()) }

// LegendLabels are the labels of the canvas's legend (the workloads,
// tagged [RT] when theirs are RT tasks, then what the colours mean), as
// of the last rebuild. Safe to call from any goroutine.
func (g *Game) LegendLabels() []string {
	if p := g.legendPub.Load(); p != nil {
		return *p
	}
	return nil
}

// FrameMs is the average CPU time of Update plus Draw per frame over the
// last complete second, in milliseconds.
func (g *Game) FrameMs() float64 { return math.Float64frombits(g.frameMs.Load()) }

// Layout uses the page's size in CSS pixels as the canvas size.
func (g *Game) Layout(outsideW, outsideH int) (int, int) {
	g.w, g.h = outsideW, outsideH
	return outsideW, outsideH
}

// Update handles input, advances the simulations by the real frame
// interval and takes the snapshot Draw will show.
func (g *Game) Update() error {
	start := time.Now()
	frame := 16 * time.Millisecond
	if !g.lastUpdate.IsZero() {
		frame = min(start.Sub(g.lastUpdate), maxFrame)
	}
	g.lastUpdate = start
	g.dt = frame.Seconds()

	stepped := g.keys()
	g.paused, g.finished = g.app.Paused(), g.app.Finished()
	slow := start.Sub(g.lastSlow) >= slowEvery
	if slow {
		g.lastSlow = start
		g.achieved = g.app.AchievedSpeed()
		g.speed = g.app.Speed()
	}

	g.shellGen = g.shell.copyTo(g.shellGen, &g.hl, &g.baseline)
	slow = g.read(stepped, slow)
	g.buildHeader()
	g.shownT.Store(math.Float64bits(float64(g.now) / 1e9))

	if !g.paused {
		for i := 0; i < g.narms; i++ {
			g.arms[i].flashes.Tick(g.dt)
		}
	}
	if slow {
		g.buildTexts()
	}
	g.key.w, g.key.h, g.key.gen = g.w, g.h, g.gen
	g.key.hover, g.key.pin = g.hover, g.pin
	g.key.shellGen, g.key.viewHL = g.shellGen, g.viewHL
	g.key.paused, g.key.finished = g.paused, g.finished
	g.key.speed, g.key.achieved = g.speed, g.achieved
	g.key.flashing = false
	for i := 0; i < g.narms && !g.paused; i++ {
		g.key.flashing = g.key.flashing || g.arms[i].flashes.Live()
	}
	g.account(start)
	return nil
}

// read takes the frame's snapshot of the simulations under the App's
// lock (released even if the engine panics: the page recovers and goes
// on). It reports whether the slow readings are due.
func (g *Game) read(stepped, slow bool) bool {
	g.app.Lock()
	defer g.app.Unlock()
	arms := g.app.Views()
	for i := range g.key.takes {
		g.key.takes[i] = 0
		if i < len(arms) {
			g.key.takes[i] = arms[i].Takes
		}
	}
	if len(arms) == 0 || !arms[0].Have {
		return slow
	}
	if !g.haveGen || g.app.Generation() != g.gen {
		g.rebuild(arms)
		slow = true
	}
	if g.page == nil || g.pageW != g.w || g.pageH != g.h {
		g.relayout()
	}
	g.snapshot(arms, stepped || g.paused)
	g.followPanelHighlight(arms)
	g.sample(arms)
	if slow {
		g.refreshHistograms(arms)
	}
	g.mouse()
	if sh := g.shown(); sh != g.shownLast {
		g.shownLast = sh
		g.app.Unlock()
		g.app.Show(sh.arm, sh.cpu)
		g.app.Lock()
	}
	g.info.build(g, arms)
	return slow
}

// followPanelHighlight draws the decision the panel selected ("Step one
// wakeup", a click in the decisions list): its target, its probe path in
// order and its chosen CPU, on its arm's map.
func (g *Game) followPanelHighlight(arms []*playground.ArmView) {
	arm, d := panelSelection(arms)
	if d == g.viewHL {
		return
	}
	g.viewHL = d
	g.shell.setHighlight(decisionHighlight(arm, d))
}

// keys handles the canvas shortcuts: space pauses or resumes, '.' runs to
// the next wakeup (pausing), Escape unpins the info box. It reports
// whether a step ran.
func (g *Game) keys() bool {
	if inpututil.IsKeyJustPressed(ebiten.KeySpace) {
		g.app.SetPaused(!g.app.Paused())
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyEscape) {
		g.pin = target{-1, -1}
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyPeriod) || inpututil.IsKeyJustPressed(ebiten.KeyNumpadDecimal) {
		g.app.SetPaused(true)
		g.app.StepWakeup()
		return true
	}
	return false
}

// mouse finds the CPU under the cursor; a click pins it (or unpins).
func (g *Game) mouse() {
	x, y := ebiten.CursorPosition()
	g.hover = target{-1, -1}
	if g.page != nil {
		for i, ml := range g.page.Maps {
			if c := ml.CPUAt(x, y); c >= 0 {
				g.hover = target{i, c}
				break
			}
		}
	}
	if inpututil.IsMouseButtonJustPressed(ebiten.MouseButtonLeft) {
		switch {
		case g.hover.cpu < 0:
			if g.page != nil && y < g.page.Hists[0].Y {
				g.pin = target{-1, -1} // a click on the map's background
			}
		case g.hover == g.pin:
			g.pin = target{-1, -1}
		default:
			g.pin = g.hover
		}
	}
}

// shown is the CPU the info box describes: the pinned one, else the
// hovered one.
func (g *Game) shown() target {
	if g.pin.cpu >= 0 {
		return g.pin
	}
	return g.hover
}

// Draw paints the snapshot, unless the canvas already shows what this
// frame would (frames.go): then it leaves the canvas alone.
func (g *Game) Draw(screen *ebiten.Image) {
	g.drew = false
	if !redrawAll.Swap(false) && g.haveDrawn && g.key == g.drawnKey {
		return
	}
	g.drew, g.haveDrawn, g.drawnKey = true, true, g.key
	start := time.Now()
	p := g.p
	p.begin(screen)
	p.fill(0, 0, float32(g.w), float32(g.h), colBackground)
	if g.page != nil && g.topo != nil {
		g.drawHeader()
		for i := 0; i < g.narms && i < len(g.page.Maps); i++ {
			g.drawMap(i)
		}
		for i := 0; i < g.narms && i < len(g.page.Maps); i++ {
			g.drawFlashes(i)
		}
		g.drawHighlight()
		g.drawSelection()
		g.drawHistograms()
		g.drawSeries()
		g.drawInfo()
	}
	p.flush()
	// The page is ready once a frame shows the map (the first snapshot).
	if !g.firstDrawDone && g.page != nil && g.topo != nil {
		g.firstDrawDone = true
		if g.opts.OnFirstDraw != nil {
			g.opts.OnFirstDraw()
		}
	}
	g.account(start)
	g.frames++
}

// Drew reports whether the last Draw drew (false: the canvas already
// showed the frame).
func (g *Game) Drew() bool { return g.drew }

// account adds the time since start to the frame-cost window and
// publishes the average once a second.
func (g *Game) account(start time.Time) {
	now := time.Now()
	g.workNS += now.Sub(start).Nanoseconds()
	if g.windowStart.IsZero() {
		g.windowStart = now
		return
	}
	if now.Sub(g.windowStart) >= time.Second && g.frames > 0 {
		ms := float64(g.workNS) / float64(g.frames) / 1e6
		g.frameMs.Store(math.Float64bits(ms))
		g.workNS, g.frames, g.windowStart = 0, 0, now
	}
}
