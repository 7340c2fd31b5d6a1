package twin

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"
)

func positiveFinite(d time.Duration) bool {
	s := d.Seconds()
	return s > 0 && !math.IsInf(s, 0) && !math.IsNaN(s)
}

func TestBuiltinPipe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the built-in benchmarks run on Linux only")
	}
	loops := int64(2000)
	if testing.Short() {
		loops = 200
	}
	wall, err := BuiltinPipe(context.Background(), loops, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !positiveFinite(wall) {
		t.Fatalf("wall %v", wall)
	}
	t.Logf("%d round trips in %v: %.2f µs each", loops, wall, wall.Seconds()*1e6/float64(loops))
}

func TestBuiltinPipeTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the built-in benchmarks run on Linux only")
	}
	// A billion round trips stop at the timeout, with an error saying so.
	start := time.Now()
	_, err := BuiltinPipe(context.Background(), 1e9, 100*time.Millisecond)
	if err == nil {
		t.Fatal("no error after the timeout")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("stopped after %v", el)
	}
	t.Log(err)
}

func TestBuiltinMessaging(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the built-in benchmarks run on Linux only")
	}
	loops := 50
	if testing.Short() {
		loops = 5
	}
	wall, err := BuiltinMessaging(context.Background(), 1, loops, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !positiveFinite(wall) {
		t.Fatalf("wall %v", wall)
	}
	t.Logf("1 group, %d loops: %v", loops, wall)
}

func TestBuiltinMessagingTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the built-in benchmarks run on Linux only")
	}
	start := time.Now()
	_, err := BuiltinMessaging(context.Background(), 1, 1e7, 200*time.Millisecond)
	if err == nil {
		t.Fatal("no error after the timeout")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("stopped after %v", el)
	}
	t.Log(err)
}
