package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
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

// watchSignals turns SIGINT and SIGTERM into cancel: a cooperative verb
// then finishes early by itself; otherwise, or on a second signal, the
// process removes its temporary files and exits with status 130.
func watchSignals(cancel context.CancelFunc) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		cancel()
		if cooperative.Load() {
			<-ch
		}
		removeTemps()
		fmt.Fprintln(os.Stderr, "schedsim: interrupted")
		os.Exit(exitInterrupted)
	}()
}
