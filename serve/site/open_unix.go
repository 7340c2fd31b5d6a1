//go:build unix

package site

import (
	"os"
	"syscall"
)

// openFlags opens files non-blocking: a FIFO opens at once instead of
// waiting for a writer (the handler then refuses it by its type). Regular
// files and directories ignore O_NONBLOCK.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
