package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cooperative is set while the running verb stops by itself when its
// context ends (run and compare: they stop the simulation between two
// events and write what they have, or nothing). For the other verbs the
// first signal removes the temporary files and exits at once.
var cooperative atomic.Bool

// temps are the temporary output files not yet renamed into place, so a
// signal that exits at once can remove them.
var temps struct {
	sync.Mutex
	paths map[string]bool
}

func registerTemp(path string) {
	temps.Lock()
	defer temps.Unlock()
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	temps.paths[path] = true
}

func unregisterTemp(path string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.paths, path)
}

func removeTemps() {
	temps.Lock()
	defer temps.Unlock()
	for p := range temps.paths {
		os.Remove(p)
		delete(temps.paths, p)
	}
}

// signalBurst is how long after a first signal more signals count as the
// same interrupt. GNU timeout -s INT signals the child and then its whole
// group, a shell's Ctrl-C reaches every process of the foreground group,
// and a wrapper may forward it again: those copies come microseconds
// apart, and none of them is the user's "stop now" — read as a second
// signal, they aborted the write of the part done (exit 130, no --out)
// in 1 of 6 tries. A person's second Ctrl-C comes later.
const signalBurst = time.Second

// watchSignals turns SIGINT and SIGTERM into cancel: a cooperative verb
// then finishes early by itself; otherwise, or on a second signal more
// than signalBurst after the first, the process removes its temporary
// files and exits with status 130.
func watchSignals(cancel context.CancelFunc) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		first := time.Now()
		cancel()
		if cooperative.Load() {
			waitSecondSignal(ch, first)
		}
		removeTemps()
		fmt.Fprintln(os.Stderr, "schedsim: interrupted")
		os.Exit(exitInterrupted)
	}()
}

// waitSecondSignal returns at the first signal on ch that comes more than
// signalBurst after first (the ones before are the same interrupt).
func waitSecondSignal(ch <-chan os.Signal, first time.Time) {
	for range ch {
		if time.Since(first) > signalBurst {
			return
		}
	}
}
