package workload

import (
	"fmt"

	"schedplay/engine"
)

// A Channel is a bounded byte stream between tasks — a pipe, an AF_UNIX
// stream socket or a loopback TCP connection — with the kernel's wait
// queues and wake rules (workloads.md §1). It never talks to the engine:
// Write and Read change its state at one simulated instant and report
// which tasks the caller must wake (with WF_SYNC: pipes and sockets both
// wake with wake_up_interruptible_sync_poll), so a program written as a
// state machine uses it like this:
//
//	done, block := ch.Write(&me, n, &wakes) // at one instant
//	if block { return engine.Block() }      // me is queued as a waiting writer
//	// issue engine.Wake(id, true) for every id in wakes, one action each
//
// A task is put on a wait list only by the call that returns block=true,
// and taken off only by the call that names it in wakes, so a waker never
// aims a Wake at a task that is not blocked and no wakeup is lost; a task
// woken this way simply calls Write/Read again. chanIO (below) wraps this
// protocol and the syscall costs into a sub-state-machine.
//
// Wake rules:
//   - pipe: a write wakes one waiting reader (readers only wait on an
//     empty pipe, so this is "the write made an empty pipe non-empty");
//     a read that releases a page buffer of a full pipe (16 buffers in
//     use) wakes one waiting writer; waits are exclusive (5.5+), and a
//     woken writer (reader) that leaves room (data) behind wakes the next.
//   - AF_UNIX stream: a write wakes every waiting reader (sock_def_readable;
//     a sleeping reader implies an empty queue); a writer may queue another
//     skb while the charge is below sk_sndbuf and otherwise waits; freeing
//     an skb that leaves the charge at ≤ sk_sndbuf/4 wakes every waiting
//     writer (unix_write_space; non-exclusive waits).
//   - loopback TCP: as AF_UNIX, with buffers a single request never fills.
type Channel struct {
	kind ChanKind
	name string

	// Pipe: a ring of page-sized buffers (struct pipe_buffer).
	bufs []pipeBuf
	head int // index of the oldest buffer in bufs

	// Sockets: the queued skbs and the sender's memory charge.
	skbs    []skb
	skbHead int
	charge  int64 // sk_wmem_alloc of the sending socket (truesize sum)
	sndbuf  int64
	maxSkb  int64 // largest payload one skb carries

	queued int64 // readable bytes
	// ctlCPU is 1 + the CPU that last wrote the channel's shared control
	// lines (0: none yet); see "Cache lines of a channel" below.
	ctlCPU  int32
	readers waitQueue
	writers waitQueue

	// Totals, for tests and conservation checks.
	BytesIn, BytesOut int64
	ReaderWakes       int64
	WriterWakes       int64
}

// ChanKind selects the kernel object a Channel models.
type ChanKind uint8

const (
	// PipeChan is an anonymous pipe (fs/pipe.c, 5.5+ wait semantics).
	PipeChan ChanKind = iota
	// UnixChan is one direction of an AF_UNIX SOCK_STREAM socketpair.
	UnixChan
	// TCPChan is one direction of a loopback TCP connection.
	TCPChan
)

func (k ChanKind) String() string { return [...]string{"pipe", "unix", "tcp"}[k] }

// Kernel sizes (x86-64).
const (
	pageSize = 4096
	// pipeSlots is PIPE_DEF_BUFFERS: a pipe holds 16 page buffers (64 KiB).
	// Small writes merge into the last page while they fit, so 40 messages
	// of 100 B share a page and 640 fit before a writer blocks.
	pipeSlots = 16
	// unixSndbuf is net.core.wmem_default, the sk_sndbuf every AF_UNIX
	// socket starts with (hackbench never changes it).
	unixSndbuf = 212992
	// skbHeadOverhead is SKB_DATA_ALIGN(sizeof(struct skb_shared_info)),
	// 320 B, stored behind every skb's linear data.
	skbHeadOverhead = 320
	// skbStructSize is SKB_DATA_ALIGN(sizeof(struct sk_buff)) (232 → 256 B),
	// also charged in truesize.
	skbStructSize = 256
	// tcpSndbuf stands for loopback TCP's autotuned buffers (tcp_wmem and
	// tcp_rmem grow to MiBs); a request/response exchange keeps one message
	// in flight, so the limit is never reached.
	tcpSndbuf = 4 << 20
)

// pipeBuf and skb remember the CPU that last wrote their data (the
// reader fetches those lines from it).
type pipeBuf struct {
	off, len int64
	cpu      int32
}

type skb struct {
	len, truesize int64
	cpu           int32
}

// unixTruesize is the skb->truesize charged to the sender for an skb
// carrying n bytes: SKB_DATA_ALIGN(n) + the shared info is served by the
// next kmalloc size class and the sk_buff itself is added, so 100 B →
// kmalloc-512 → 512 + 256 = 768 B, and 278 such messages (charge <
// 212992 admits one more) are outstanding before a sender blocks; it is
// woken again at ≤ 69. Payloads beyond a page-sized head go to page
// fragments, charged by the page.
func unixTruesize(n int64) int64 {
	const maxHead = pageSize - skbHeadOverhead // SKB_MAX_HEAD(0), roughly
	head := min(n, maxHead)
	sz := (head+63)&^63 + skbHeadOverhead
	class := int64(32)
	for class < sz {
		class *= 2
	}
	t := class + skbStructSize
	if n > maxHead {
		t += (n - maxHead + pageSize - 1) / pageSize * pageSize
	}
	return t
}

// NewChannel returns an empty channel of kind k; name labels it in errors.
func NewChannel(k ChanKind, name string) *Channel {
	c := &Channel{kind: k, name: name}
	switch k {
	case UnixChan:
		c.sndbuf = unixSndbuf
		// unix_stream_sendmsg: "keep two messages in the pipe": at most
		// sk_sndbuf/2 - 64 bytes per skb.
		c.maxSkb = unixSndbuf/2 - 64
	case TCPChan:
		c.sndbuf = tcpSndbuf
		c.maxSkb = 64 << 10 // loopback MTU-sized segments
	}
	return c
}

// Kind is the kernel object the channel models.
func (c *Channel) Kind() ChanKind { return c.kind }

// Name labels the channel.
func (c *Channel) Name() string { return c.name }

// Queued is the number of readable bytes.
func (c *Channel) Queued() int64 { return c.queued }

// WaitingReaders is the number of blocked readers.
func (c *Channel) WaitingReaders() int { return c.readers.len() }

// WaitingWriters is the number of blocked writers.
func (c *Channel) WaitingWriters() int { return c.writers.len() }

// Charge is the sender-side memory charge (sockets) in bytes.
func (c *Channel) Charge() int64 { return c.charge }

// Slots is the number of pipe buffers in use (pipes).
func (c *Channel) Slots() int { return len(c.bufs) - c.head }

// Waiter is one task's identity on channel wait lists. A task uses one
// Waiter for every channel it touches (it is in at most one syscall at a
// time).
type Waiter struct {
	ID engine.TaskID
	// inOp: a Write of this syscall has already been attempted (a retry
	// after a partial transfer or a wakeup continues the syscall).
	inOp bool
	// slept: the syscall has waited at least once (pipe_write's
	// wake_next_writer, pipe_read's wake_next_reader).
	slept bool
	// queued: on some channel's wait list right now.
	queued bool
	// cpu is the CPU the task runs its current Write/Read on (set by
	// chanIO); fetched lists the cache lines that Read found last written
	// on other CPUs, for chanIO to price.
	cpu     int32
	fetched []lineFetch
}

// lineFetch is n dependent rounds of cache misses served by CPU from.
type lineFetch struct{ from, n int32 }

// Queued reports whether w is on a wait list (blocked in a channel).
func (w *Waiter) Queued() bool { return w.queued }

// waitQueue is a FIFO wait list (prepare_to_wait[_exclusive] appends).
type waitQueue struct {
	w    []*Waiter
	head int
}

func (q *waitQueue) len() int { return len(q.w) - q.head }

func (q *waitQueue) push(w *Waiter) {
	if w.queued {
		panic(fmt.Sprintf("workload: task %d is already on a wait list", w.ID))
	}
	w.queued = true
	if q.head > 0 && q.head == len(q.w) {
		q.w, q.head = q.w[:0], 0
	}
	q.w = append(q.w, w)
}

// wakeOne dequeues the first waiter (an exclusive wakeup) into wakes.
func (q *waitQueue) wakeOne(wakes *[]engine.TaskID) bool {
	if q.len() == 0 {
		return false
	}
	w := q.w[q.head]
	q.w[q.head] = nil
	q.head++
	w.queued = false
	w.slept = true
	*wakes = append(*wakes, w.ID)
	return true
}

// wakeAll dequeues every waiter (non-exclusive waits) into wakes.
func (q *waitQueue) wakeAll(wakes *[]engine.TaskID) int {
	n := 0
	for q.wakeOne(wakes) {
		n++
	}
	return n
}

// Write offers n bytes (n > 0) from w. It returns how many bytes went in.
// When none fit, w is queued as a waiting writer and block is true: the
// caller must return engine.Block() now and call Write again with the
// same count once woken. A partial transfer (0 < done < n) leaves w off
// the lists: the caller issues the wakes and calls Write again for the
// rest. Tasks to wake (sync) are appended to wakes.
func (c *Channel) Write(w *Waiter, n int64, wakes *[]engine.TaskID) (done int64, block bool) {
	if n <= 0 {
		panic("workload: Channel.Write of no bytes")
	}
	first := !w.inOp
	w.inOp = true
	switch c.kind {
	case PipeChan:
		done = c.pipeWrite(n, first, w.cpu)
	default:
		done = c.sockWrite(n, w.cpu)
	}
	c.ctlCPU = w.cpu + 1
	c.queued += done
	c.BytesIn += done
	if done > 0 {
		if c.kind == PipeChan {
			if c.readers.wakeOne(wakes) {
				c.ReaderWakes++
			}
		} else {
			c.ReaderWakes += int64(c.readers.wakeAll(wakes))
		}
	}
	switch {
	case done == n:
		// pipe_write's wake_next_writer: a writer that had to wait and
		// leaves room behind passes the wakeup on.
		if c.kind == PipeChan && w.slept && c.Slots() < pipeSlots {
			if c.writers.wakeOne(wakes) {
				c.WriterWakes++
			}
		}
		w.inOp, w.slept = false, false
	case done == 0:
		c.writers.push(w)
		return 0, true
	}
	return done, false
}

// pipeWrite is pipe_write's buffer handling: a small write first tries to
// merge into the last page (only at the start of the syscall, and only
// into a non-empty pipe), then fills fresh page buffers while slots last.
// A write of at most one page is therefore atomic.
func (c *Channel) pipeWrite(n int64, first bool, cpu int32) int64 {
	left := n
	if chars := n % pageSize; chars != 0 && first && c.Slots() > 0 {
		last := &c.bufs[len(c.bufs)-1]
		if last.off+last.len+chars <= pageSize {
			last.len += chars
			last.cpu = cpu
			left -= chars
		}
	}
	for left > 0 && c.Slots() < pipeSlots {
		take := min(left, pageSize)
		if c.head > 0 && c.head == len(c.bufs) {
			c.bufs, c.head = c.bufs[:0], 0
		}
		c.bufs = append(c.bufs, pipeBuf{0, take, cpu})
		left -= take
	}
	return n - left
}

// sockWrite is sock_alloc_send_pskb's admission: another skb may be
// allocated while the sender's charge is below sk_sndbuf (so the last one
// may overshoot it).
func (c *Channel) sockWrite(n int64, cpu int32) int64 {
	left := n
	for left > 0 && c.charge < c.sndbuf {
		chunk := min(left, c.maxSkb)
		ts := unixTruesize(chunk)
		if c.skbHead > 0 && c.skbHead == len(c.skbs) {
			c.skbs, c.skbHead = c.skbs[:0], 0
		}
		c.skbs = append(c.skbs, skb{chunk, ts, cpu})
		c.charge += ts
		left -= chunk
	}
	return n - left
}

// Read takes up to n bytes (n > 0) for r and returns how many it got
// (reads return what is there, like read(2) on a pipe or stream socket).
// When the channel is empty, r is queued as a waiting reader and block is
// true: the caller must return engine.Block() now and call Read again once
// woken. Tasks to wake (sync) are appended to wakes.
func (c *Channel) Read(r *Waiter, n int64, wakes *[]engine.TaskID) (done int64, block bool) {
	if n <= 0 {
		panic("workload: Channel.Read of no bytes")
	}
	if c.queued == 0 {
		c.readers.push(r)
		return 0, true
	}
	r.fetched = r.fetched[:0]
	r.fetch(c.ctlCPU-1, ctlLines)
	c.ctlCPU = r.cpu + 1
	switch c.kind {
	case PipeChan:
		done = c.pipeRead(n, r, wakes)
	default:
		done = c.sockRead(n, r, wakes)
	}
	c.queued -= done
	c.BytesOut += done
	// pipe_read's wake_next_reader: a reader that slept and leaves data
	// behind passes the wakeup on (exclusive reader waits).
	if c.kind == PipeChan && r.slept && c.queued > 0 {
		if c.readers.wakeOne(wakes) {
			c.ReaderWakes++
		}
	}
	r.slept = false
	return done, false
}

// pipeRead consumes from the oldest buffers. A blocked writer is woken
// (one, exclusive) when the read releases a buffer of a full pipe — the
// "was full and no longer is" rule of current kernels (5.5–6.14 woke a
// writer on any read that began on a full pipe, a wakeup that is wasted
// unless a buffer is released).
func (c *Channel) pipeRead(n int64, r *Waiter, wakes *[]engine.TaskID) int64 {
	got := int64(0)
	wake := false
	for got < n && c.Slots() > 0 {
		b := &c.bufs[c.head]
		take := min(n-got, b.len)
		r.fetch(b.cpu, 1+dataRounds(take))
		b.off += take
		b.len -= take
		got += take
		if b.len == 0 {
			wake = wake || c.Slots() == pipeSlots
			c.head++
		}
	}
	if wake && c.writers.wakeOne(wakes) {
		c.WriterWakes++
	}
	return got
}

// sockRead consumes skbs; each fully consumed skb is freed, uncharging the
// sender (sock_wfree), and once the charge is at most a quarter of
// sk_sndbuf (unix_writable) every blocked writer is woken (they wait
// non-exclusively in sock_wait_for_wmem).
func (c *Channel) sockRead(n int64, r *Waiter, wakes *[]engine.TaskID) int64 {
	got := int64(0)
	for got < n && c.skbHead < len(c.skbs) {
		b := &c.skbs[c.skbHead]
		take := min(n-got, b.len)
		b.len -= take
		got += take
		rounds := 1 + dataRounds(take+skbHeadOverhead)
		if b.len == 0 {
			rounds++ // consume_skb: a remote free into the writer's slab page
		}
		r.fetch(b.cpu, rounds)
		if b.len == 0 {
			c.charge -= b.truesize
			c.skbHead++
			if c.charge*4 <= c.sndbuf {
				c.WriterWakes += int64(c.writers.wakeAll(wakes))
			}
		}
	}
	return got
}

// ---- Cache lines of a channel ----
//
// Sender and receiver usually run on different CPUs, and every message
// moves cache lines between them: what one side wrote last sits Modified
// in its cache, and the other side's access is a core-to-core transfer
// priced by their distance (engine Ctx.LineXferNS; nothing on one CPU).
// Per syscall:
//   - the shared control lines (ctlLines): for a socket the peer's
//     sk_receive_queue (its lock and list head) and the sending socket's
//     sk_wmem_alloc, which the sender charges and the reader's sock_wfree
//     uncharges; for a pipe its mutex and the head/tail and wait-queue
//     words of pipe_inode_info. Both sides write them on every message,
//     so each syscall fetches them from the side that wrote them last.
//   - the data, for the reader: per skb the struct sk_buff (one round:
//     reached from the queue head), then its payload and skb_shared_info
//     (lines overlapping MissesInFlight at a time), and consume_skb's free
//     of both slab objects into the writer's slab page, a third round. A
//     pipe buffer is the struct pipe_buffer and the page's bytes.
// The syscall costs below are the work with these lines in the cache (one
// CPU), so a pinned ping-pong pays nothing extra.

// ctlLines is the number of shared control lines each syscall fetches.
const ctlLines = 2

// dataRounds is the rounds of overlapping misses that reading n bytes of
// data written on another CPU takes.
func dataRounds(n int64) int32 {
	lines := (n + 63) / 64
	return int32((lines + engine.MissesInFlight - 1) / engine.MissesInFlight)
}

// fetch notes n rounds of misses on lines last written by CPU from (a CPU
// below 0 means nobody yet; the reader's own CPU costs nothing).
func (w *Waiter) fetch(from, n int32) {
	if from < 0 || from == w.cpu || n == 0 {
		return
	}
	if k := len(w.fetched); k > 0 && w.fetched[k-1].from == from {
		w.fetched[k-1].n += n
		return
	}
	w.fetched = append(w.fetched, lineFetch{from, n})
}

// ctlFetchNS is what fetching the channel's control lines costs the
// calling task (a writer, before its Write).
func (c *Channel) ctlFetchNS(ctx *engine.Ctx) int64 {
	if c.ctlCPU == 0 {
		return 0
	}
	return ctlLines * ctx.LineXferNS(int(c.ctlCPU-1))
}

// fetchedNS prices what the last Read fetched, on the reader's CPU.
func (w *Waiter) fetchedNS(ctx *engine.Ctx) int64 {
	ns := int64(0)
	for _, f := range w.fetched {
		ns += int64(f.n) * ctx.LineXferNS(int(f.from))
	}
	w.fetched = w.fetched[:0]
	return ns
}

// ---- CPU costs of the channel syscalls ----
//
// Nominal work at full single-thread speed on the 2016–2019 Xeons the
// seeds were measured on (2.2–2.5 GHz Broadwell/Skylake, kernels with the
// 2018 Spectre/Meltdown mitigations). The wakeup itself (try_to_wake_up,
// enqueue, IPI) is not in here: the engine charges wake_ns and the idle
// search to the waker, ipi_ns to the wakee, ctx_switch_ns to the switch.
const (
	// syscallEntryNS + syscallExitNS: one syscall round trip ≈ 0.2 µs with
	// KPTI's CR3 switches and retpolines (≈ 0.07 µs unmitigated).
	syscallEntryNS = 100
	syscallExitNS  = 100
	// userOpNS: the user side of one read()/write() loop iteration — the
	// loop, libc's syscall wrapper — a few dozen instructions ≈ 50 ns. It
	// is the task's preemptible user work, where a migrated task pays its
	// cache refill.
	userOpNS = 50
	// pipeWriteNS: pipe_write of one small message: pipe mutex, merge into
	// the last page or take a new one (page allocation amortised over ~40
	// messages), copy_from_user, file_update_time, fsnotify ≈ 0.25 µs.
	pipeWriteNS = 250
	// pipeReadNS: pipe_read: mutex, copy_to_user, release of an emptied
	// page (amortised), touch_atime (relatime: no write), fsnotify ≈ 0.2 µs.
	pipeReadNS = 200
	// unixSendNS: unix_stream_sendmsg of one skb: scm_send (pid and cred
	// references), skb allocation (skbuff_head_cache + kmalloc-512), copy,
	// the peer's state lock and queue append, sk_data_ready ≈ 0.7 µs — slab
	// work dominates hackbench's socket profile.
	unixSendNS = 700
	// unixRecvNS: unix_stream_read_generic: iolock, skb peek and unlink,
	// copy_to_user, scm_recv, consume_skb (two slab frees) and sock_wfree's
	// atomic on the sender's wmem cache line ≈ 0.6 µs.
	unixRecvNS = 600
	// tcpSendNS: tcp_sendmsg of one segment on loopback including the
	// whole receive path, which runs in softirq on the sender's CPU
	// (loopback_xmit, netif_rx, ip_rcv, tcp_v4_rcv, queueing to the
	// receiver, sk_data_ready) ≈ 2.5 µs, most of a TCP_RR side's
	// kernel time.
	tcpSendNS = 2500
	// tcpRecvNS: tcp_recvmsg: socket lock, copy, skb free, tcp_cleanup_rbuf
	// (its ACK rides on the response) ≈ 0.8 µs.
	tcpRecvNS = 800
)

// copyNS is the copy_{to,from}_user cost of n bytes (memcpyNSPerKB, the
// ≈ 10 GB/s cache-resident copy also used by schbench's pipe mode).
func copyNS(n int64) int64 { return n * memcpyNSPerKB / 1024 }

// writeCostNS is the whole write syscall of n bytes on a channel of kind k.
func writeCostNS(k ChanKind, n int64) int64 {
	c := int64(syscallEntryNS + syscallExitNS)
	switch k {
	case PipeChan:
		c += pipeWriteNS
	case UnixChan:
		c += unixSendNS
	case TCPChan:
		c += tcpSendNS
	}
	return c + copyNS(n)
}

// readCostNS is the work of a read syscall after it found n bytes.
func readCostNS(k ChanKind, n int64) int64 {
	c := int64(syscallExitNS)
	switch k {
	case PipeChan:
		c += pipeReadNS
	case UnixChan:
		c += unixRecvNS
	case TCPChan:
		c += tcpRecvNS
	}
	return c + copyNS(n)
}

// chanIO drives one transfer of exactly n bytes through a channel as a
// sequence of engine actions, the way the benchmarks loop on write(2) /
// read(2) until the whole message has moved:
//
//	write: user work → syscall (copy, queue) → [block until room, retry]
//	       → wake the tasks the write released (sync, one action each)
//	read:  user work → syscall entry → [block until data, retry] → wake the
//	       writers the read released (sync) → rest of the syscall (copy,
//	       free) → another read() if the message is not complete yet
//
// The channel state changes and the wakeups it implies are decided at one
// instant, immediately followed by the wake actions, so no wakeup is lost.
type chanIO struct {
	W     Waiter
	ch    *Channel
	write bool
	left  int64 // bytes of the message still to move
	got   int64 // bytes the last read found
	phase uint8
	wakes []engine.TaskID
	wi    int
}

const (
	ioIdle = iota
	ioUser
	ioEntry
	ioTry
	ioWake
	ioPost
)

// start begins moving n bytes through ch.
func (o *chanIO) start(ch *Channel, write bool, n int64) {
	if o.phase != ioIdle {
		panic("workload: chanIO started while busy")
	}
	o.ch, o.write, o.left, o.phase = ch, write, n, ioUser
}

// busy reports whether a transfer is in progress.
func (o *chanIO) busy() bool { return o.phase != ioIdle }

// step returns the transfer's next action, or ok=false once it is done;
// ctx is the calling task's.
func (o *chanIO) step(ctx *engine.Ctx) (engine.Action, bool) {
	var a engine.Action
	ok := o.next(ctx, &a)
	return a, ok
}

// next is step writing the action into *a (the programs on the message
// path return it from there: an Action returned through two calls was
// spilled field by field and copied whole, a store-forwarding stall that
// was 6% of hackbench).
func (o *chanIO) next(ctx *engine.Ctx, a *engine.Action) bool {
	for {
		switch o.phase {
		case ioIdle:
			return false
		case ioUser:
			o.phase = ioEntry
			*a = engine.Run(userOpNS)
			return true
		case ioEntry:
			o.phase = ioTry
			if o.write {
				*a = kernelStep(writeCostNS(o.ch.kind, o.left)+o.ch.ctlFetchNS(ctx), true)
				return true
			}
			*a = kernelStep(syscallEntryNS, true)
			return true
		case ioTry:
			var done int64
			var block bool
			o.W.cpu = int32(ctx.CPU())
			if o.write {
				done, block = o.ch.Write(&o.W, o.left, &o.wakes)
			} else {
				done, block = o.ch.Read(&o.W, o.left, &o.wakes)
			}
			if block {
				*a = engine.Block() // retried here once woken
				return true
			}
			o.left -= done
			o.got = done
			o.phase = ioWake
		case ioWake:
			if o.wi < len(o.wakes) {
				id := o.wakes[o.wi]
				o.wi++
				*a = sectionWake(id, true, o.wi < len(o.wakes) || !o.write)
				return true
			}
			o.wakes, o.wi = o.wakes[:0], 0
			switch {
			case !o.write:
				o.phase = ioPost
			case o.left > 0:
				o.phase = ioTry // partial write: the same syscall goes on
			default:
				o.phase = ioIdle
				return false
			}
		case ioPost:
			if o.left > 0 {
				o.phase = ioUser // short read: read() again for the rest
			} else {
				o.phase = ioIdle
			}
			*a = kernelStep(readCostNS(o.ch.kind, o.got)+o.W.fetchedNS(ctx), false)
			return true
		}
	}
}

// Kernel sections. In the kernel, the steps of one syscall (the copy, the
// wait-queue walk that wakes every waiter, the rest of the syscall) run
// without a preemption point: the wait-queue lock is held during the walk,
// and the PREEMPT_NONE/VOLUNTARY server kernels of the seeds preempt only
// on the return to user space. The engine, however, treats the end of
// every action as a preemption point unless told otherwise: without it,
// when an early wakee preempts its waker, the rest of the section — the
// remaining wakeups — would wait until the waker runs again (up to
// milliseconds for hackbench's herd release).
// engine.Action.Chain makes continueTask skip the preemption point after
// such an action; these two helpers set it when another kernel step of the
// same section follows. Every such step of this file's kinds goes through
// them.

// kernelStep is ns of kernel work inside a syscall; more says another
// step of the same section follows (no preemption point in between).
func kernelStep(ns int64, more bool) engine.Action {
	a := engine.KernelRun(ns)
	a.Chain = more
	return a
}

// sectionWake is one wakeup of a kernel section.
func sectionWake(id engine.TaskID, sync, more bool) engine.Action {
	a := engine.Wake(id, sync)
	a.Chain = more
	return a
}

// wakeList holds wakeups a program has decided on and issues one Wake
// action at a time.
type wakeList struct {
	ids  []engine.TaskID
	i    int
	sync bool
}

func (w *wakeList) add(id engine.TaskID) { w.ids = append(w.ids, id) }

// next returns the next Wake, or ok=false when all have been issued.
func (w *wakeList) next() (engine.Action, bool) {
	if w.i < len(w.ids) {
		id := w.ids[w.i]
		w.i++
		return sectionWake(id, w.sync, w.i < len(w.ids)), true
	}
	w.ids, w.i = w.ids[:0], 0
	return engine.Action{}, false
}

// ---- address spaces ----

// mmTracker hands out engine address-space ids (TaskSpec.MM): the engine
// charges mm_switch_ns when a CPU switches to a task of another address
// space than the one it has loaded.
type mmTracker struct{ sim *engine.Sim }

func newMMTracker(sim *engine.Sim) *mmTracker { return &mmTracker{sim: sim} }

// newMM returns a fresh address-space id.
func (t *mmTracker) newMM() int32 { return int32(t.sim.NewAddressSpace()) }
