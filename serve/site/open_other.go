//go:build !unix

package site

import "os"

// openFlags: no O_NONBLOCK here (js/wasm, Windows, Plan 9 have no FIFOs
// that block an open); the stat before the open refuses non-regular files.
const openFlags = os.O_RDONLY
