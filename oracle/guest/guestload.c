// guestload: the simulator's workloads on a real Linux kernel, for the
// kernel oracle (schedsim kernel). It is C, compiled static by the host's
// gcc when the initramfs is built, because the Go runtime gets between a
// wakeup and its thread: a Go version, measured in the guest, had 65 of
// its 187 workload wakeups made by the runtime's own threads (sysmon
// polling every 20 µs while a thread spins, a thread parked and handed
// back on leaving a system call), which the real tools do not have. Here
// a task is a thread (pthread) or a process (fork), as in the real tool.
//
// The host resolves each spec with the simulator's parser (the same keys
// and defaults) and passes every value explicitly:
//
//   guestload DURATION_NS KIND key=value ... [-- KIND key=value ...]
//
// Kinds: schbench (m t c s p), hackbench (g f l s p T), pipe (l T), hog
// (n place), cyclictest (t i d p a l latency); every kind takes nice,
// cpus (a cpulist, "" = all), slice_us (sched_setattr's sched_runtime,
// 0 = the base slice), policy (normal, fifo, rr or deadline), rtprio (the
// rt_priority sched_setscheduler gets with fifo or rr; cyclictest takes
// its own p instead, as cyclictest's -p) and, with deadline, dl_runtime_us,
// dl_deadline_us, dl_period_us and dl_reclaim (sched_setattr's
// SCHED_DEADLINE reservation, SCHED_FLAG_RECLAIM). A task the runner starts sets
// its policy itself when it first runs (as cyclictest's timer threads
// do): it is forked SCHED_OTHER and turns SCHED_FIFO or SCHED_RR on its
// own CPU. A task a workload's own task forks inherits the policy, as
// under chrt: schbench's message thread sets it before it creates its
// workers, pipe's first process before it forks the second. At the end
// it prints one line per workload, "guestload: {json}", on stdout.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stopping;

// The start time: a workload's first tasks (schbench's message threads,
// pipe's first process) sleep, unnamed, until it, so that the runner has
// started every workload and blocked before they fork. The runner is not
// one of the real tool's tasks: running beside their first forks it made
// the kernel's fork balance count one more busy CPU than the simulation
// has (pipe's child stayed in its parent's LLC on the 2-CCX shape: 6.12's
// sched_balance_find_dst_group keeps the local group when it has as many
// idle CPUs as the idlest). A timed sleep, not a gate the runner opens:
// the timer fires on the sleeper's own CPU, so its wakeup leaves it where
// fork balancing put it (select_task_rq_fair with this CPU = prev), where
// a wakeup by the runner could pull it next to the runner.
#define START_DELAY_NS 10000000
static int64_t go_ns;

static void wait_go(void) {
	struct timespec ts = {go_ns / 1000000000, go_ns % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
	fprintf(stderr, "guestload: %s: %s\n", what, strerror(errno));
	exit(1);
}

// ---- the keys of one workload ------------------------------------------

#define MAXKEYS 32
struct spec {
	const char *kind;
	int n;
	const char *key[MAXKEYS], *val[MAXKEYS];
};

static const char *get(struct spec *s, const char *k) {
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->key[i], k))
			return s->val[i];
	fprintf(stderr, "guestload: %s: no key %s\n", s->kind, k);
	exit(2);
}

static long num(struct spec *s, const char *k) { return atol(get(s, k)); }

// A task's setup: its name (the comm the trace shows), nice, slice and
// CPUs.
struct common {
	int nice;
	long slice_us;
	int policy, rtprio; // SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE
	long dl_runtime_us, dl_deadline_us, dl_period_us, dl_reclaim;
	cpu_set_t cpus;
	int has_cpus;
};

static void parse_cpus(const char *list, struct common *c) {
	CPU_ZERO(&c->cpus);
	c->has_cpus = 0;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		int a, b;
		if (sscanf(tok, "%d-%d", &a, &b) == 2) {
			for (int i = a; i <= b; i++)
				CPU_SET(i, &c->cpus);
		} else if (sscanf(tok, "%d", &a) == 1) {
			CPU_SET(a, &c->cpus);
		}
		c->has_cpus = 1;
	}
}

// struct sched_attr of include/uapi/linux/sched/types.h (SCHED_ATTR_SIZE_VER1).
struct slice_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define GUEST_SCHED_FLAG_RECLAIM 0x02 // include/uapi/linux/sched.h

// set_policy makes the calling thread SCHED_FIFO, SCHED_RR or
// SCHED_DEADLINE as c says (sched_setscheduler(0, ...) and
// sched_setattr(0, ...) are the calling thread's: the kernel's pid is the
// thread id); nothing for SCHED_OTHER. A zero deadline is the period and
// a zero period the deadline, as the simulator reads them.
static void set_policy(struct common *c) {
	if (c->policy == SCHED_OTHER)
		return;
	if (c->policy == SCHED_DEADLINE) {
		long d = c->dl_deadline_us ? c->dl_deadline_us : c->dl_period_us;
		long p = c->dl_period_us ? c->dl_period_us : d;
		struct slice_attr a = {.size = sizeof a, .sched_policy = SCHED_DEADLINE,
				       .sched_flags = c->dl_reclaim ? GUEST_SCHED_FLAG_RECLAIM : 0,
				       .sched_runtime = (uint64_t)c->dl_runtime_us * 1000,
				       .sched_deadline = (uint64_t)d * 1000, .sched_period = (uint64_t)p * 1000};
		if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
			fprintf(stderr, "guestload: sched_setattr SCHED_DEADLINE %ld/%ld/%ld us: %s\n", c->dl_runtime_us, d, p,
				strerror(errno));
			exit(1);
		}
		return;
	}
	struct sched_param sp = {.sched_priority = c->rtprio};
	if (sched_setscheduler(0, c->policy, &sp) != 0) {
		fprintf(stderr, "guestload: sched_setscheduler %s %d: %s\n", c->policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR", c->rtprio,
			strerror(errno));
		exit(1);
	}
}

static void setup(const char *name, struct common *c, int pin) {
	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (c->nice)
		setpriority(PRIO_PROCESS, syscall(SYS_gettid), c->nice);
	if (c->slice_us) {
		// A fair task's own slice (6.12: __setscheduler_params sets
		// se->custom_slice from sched_runtime); SCHED_OTHER, same nice.
		struct slice_attr a = {.size = sizeof a, .sched_policy = SCHED_OTHER, .sched_nice = c->nice,
				       .sched_runtime = (uint64_t)c->slice_us * 1000};
		if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
			fprintf(stderr, "guestload: sched_setattr slice %ld us: %s\n", c->slice_us, strerror(errno));
			exit(1);
		}
	}
	set_policy(c);
	if (pin >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(pin, &one);
		sched_setaffinity(0, sizeof one, &one);
	} else if (c->has_cpus) {
		sched_setaffinity(0, sizeof c->cpus, &c->cpus);
	}
}

// ---- futexes, as schbench's fwait/fpost ---------------------------------

#define FUTEX_BLOCKED 0
#define FUTEX_RUNNING 1

static long futex(atomic_int *uaddr, int op, int val) { return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0); }

// fpost hands the word to its waiter and wakes it.
static void fpost(atomic_int *f) {
	int expect = FUTEX_BLOCKED;
	if (atomic_compare_exchange_strong(f, &expect, FUTEX_RUNNING))
		futex(f, FUTEX_WAKE_PRIVATE, 1);
}

// fwait takes a post, sleeping in the kernel until there is one.
static void fwait(atomic_int *f) {
	for (;;) {
		int expect = FUTEX_RUNNING;
		if (atomic_compare_exchange_strong(f, &expect, FUTEX_BLOCKED))
			return;
		futex(f, FUTEX_WAIT_PRIVATE, FUTEX_BLOCKED);
	}
}

static void spin_ns(int64_t ns) {
	int64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

static void sleep_ns(int64_t ns) {
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

// ---- latency samples ----------------------------------------------------

struct hist {
	pthread_mutex_t mu;
	int64_t *v;
	long n, cap;
};

static void hist_add(struct hist *h, int64_t us) {
	pthread_mutex_lock(&h->mu);
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4096;
		h->v = realloc(h->v, h->cap * sizeof *h->v);
	}
	h->v[h->n++] = us;
	pthread_mutex_unlock(&h->mu);
}

static int cmp64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void hist_print(struct hist *h, char *out, size_t len) {
	if (!h->n) {
		snprintf(out, len, "null");
		return;
	}
	qsort(h->v, h->n, sizeof *h->v, cmp64);
	long n = h->n;
	snprintf(out, len, "{\"count\":%ld,\"p50\":%lld,\"p90\":%lld,\"p99\":%lld,\"max\":%lld}", n, (long long)h->v[n / 2],
		 (long long)h->v[n * 9 / 10], (long long)h->v[n * 99 / 100 < n ? n * 99 / 100 : n - 1], (long long)h->v[n - 1]);
}

// ---- a workload ---------------------------------------------------------

struct load {
	struct spec spec;
	struct common com;
	const char *kind;
	int threads;
	atomic_long ops;
	atomic_int done; // finite kinds: every task ended
	int finite;
	struct hist lat;
	pthread_t *tids;
	int ntids;
	pid_t *pids;
	int npids;
	void *state;
	void (*stop)(struct load *);
	int64_t ended; // ns, when done
	int64_t t0;    // ns, when its tasks start (the start time, or at once)
	int joined, reaped; // tasks collected so far (reap)
	int killed;         // a process of it ended by a signal
};

static void add_thread(struct load *l, void *(*fn)(void *), void *arg) {
	l->tids = realloc(l->tids, (l->ntids + 1) * sizeof *l->tids);
	if (pthread_create(&l->tids[l->ntids], NULL, fn, arg))
		die("pthread_create");
	l->ntids++;
}

static void add_pid(struct load *l, pid_t p) {
	l->pids = realloc(l->pids, (l->npids + 1) * sizeof *l->pids);
	l->pids[l->npids++] = p;
}

// ---- schbench (2016-2020 generation; engine/workload/schbench.go) --------
// m message threads of t workers. A worker spins c µs, pushes itself on
// its message thread's list, posts the message thread and waits on its
// own futex; a message thread sets its futex blocked, reads the clock
// once and wakes every listed worker, waits for a post, then sleeps s µs
// plus up to s/4 of jitter (the order of run_msg_thread, which the
// simulator's model follows). Pipe mode (p bytes): each side copies the
// buffer, the wake time is stamped per worker just before its post, and
// there is no sleep.

struct sb_worker;
struct sb_msg {
	atomic_int futex;
	_Atomic(struct sb_worker *) list;
	struct load *l;
	int idx;
	char *buf;
	pthread_t *workers; // its workers: it creates them, it joins them
};
struct sb_worker {
	atomic_int futex;
	struct sb_worker *next;
	_Atomic int64_t wake_time;
	struct sb_msg *msg;
	int idx;
	char *buf;
};
struct sb {
	int m, t, p;
	int64_t c_ns, s_ns;
	struct sb_msg *msgs;
	struct sb_worker *workers;
};

static void *sb_worker_run(void *arg) {
	struct sb_worker *w = arg;
	struct sb_msg *msg = w->msg;
	struct load *l = msg->l;
	struct sb *b = l->state;
	char name[16];
	snprintf(name, sizeof name, "schbench-w%d.%d", msg->idx, w->idx);
	setup(name, &l->com, -1);
	while (!atomic_load(&stopping)) {
		spin_ns(b->c_ns);
		if (b->p)
			memcpy(w->buf, msg->buf, b->p);
		// msg_and_wait: the worker's own word blocked, itself on the
		// list, the message thread posted, then its own wait.
		atomic_store(&w->futex, FUTEX_BLOCKED);
		struct sb_worker *head = atomic_load(&msg->list);
		do
			w->next = head;
		while (!atomic_compare_exchange_weak(&msg->list, &head, w));
		fpost(&msg->futex);
		fwait(&w->futex);
		if (atomic_load(&stopping))
			break;
		int64_t lat = (now_ns() - atomic_load(&w->wake_time)) / 1000;
		hist_add(&l->lat, lat > 0 ? lat : 0);
		atomic_fetch_add(&l->ops, 1);
	}
	return NULL;
}

static void *sb_msg_run(void *arg) {
	struct sb_msg *msg = arg;
	struct load *l = msg->l;
	struct sb *b = l->state;
	char name[16];
	wait_go();
	snprintf(name, sizeof name, "schbench-m%d", msg->idx);
	setup(name, &l->com, -1);
	// schbench's message thread creates its own workers (the fork
	// balance places them from its CPU, as the simulator's ParentCPU).
	msg->workers = calloc(b->t, sizeof *msg->workers);
	for (int j = 0; j < b->t; j++)
		if (pthread_create(&msg->workers[j], NULL, sb_worker_run, &b->workers[msg->idx * b->t + j]))
			die("pthread_create");
	unsigned seed = msg->idx + 1;
	// run_msg_thread: the futex is set blocked before the listed workers
	// are woken (a post that came during the sleep is dropped), then the
	// thread waits for a post, then it sleeps.
	while (!atomic_load(&stopping)) {
		atomic_store(&msg->futex, FUTEX_BLOCKED);
		struct sb_worker *w = atomic_exchange(&msg->list, NULL);
		// xlist_add prepends: the splice wakes the newest first.
		int64_t stamp = now_ns();
		while (w) {
			struct sb_worker *next = w->next; // read before the post
			if (b->p) {
				memcpy(msg->buf, w->buf, b->p);
				stamp = now_ns();
			}
			atomic_store(&w->wake_time, stamp);
			fpost(&w->futex);
			w = next;
		}
		fwait(&msg->futex);
		if (atomic_load(&stopping))
			break;
		if (b->s_ns && !b->p)
			sleep_ns(b->s_ns + (int64_t)(rand_r(&seed) % (b->s_ns / 4 / 1000 + 1)) * 1000);
	}
	for (int j = 0; j < b->t; j++)
		pthread_join(msg->workers[j], NULL);
	return NULL;
}

static void sb_stop(struct load *l) {
	struct sb *b = l->state;
	for (int i = 0; i < b->m; i++)
		fpost(&b->msgs[i].futex);
	for (int i = 0; i < b->m * b->t; i++)
		fpost(&b->workers[i].futex);
}

static void start_schbench(struct load *l) {
	struct sb *b = calloc(1, sizeof *b);
	l->state = b;
	b->m = num(&l->spec, "m");
	b->t = num(&l->spec, "t");
	b->c_ns = num(&l->spec, "c") * 1000;
	b->s_ns = num(&l->spec, "s") * 1000;
	b->p = num(&l->spec, "p");
	if (num(&l->spec, "R")) {
		fprintf(stderr, "guestload: schbench R=%ld: RPS mode has no guest load\n", num(&l->spec, "R"));
		exit(2);
	}
	l->threads = b->m * (b->t + 1);
	l->stop = sb_stop;
	b->msgs = calloc(b->m, sizeof *b->msgs);
	b->workers = calloc(b->m * b->t, sizeof *b->workers);
	for (int i = 0; i < b->m; i++) {
		b->msgs[i] = (struct sb_msg){.l = l, .idx = i, .buf = calloc(1, b->p + 1)};
		for (int j = 0; j < b->t; j++) {
			struct sb_worker *w = &b->workers[i * b->t + j];
			*w = (struct sb_worker){.msg = &b->msgs[i], .idx = j, .buf = calloc(1, b->p + 1)};
		}
		add_thread(l, sb_msg_run, &b->msgs[i]);
	}
}

// ---- hackbench (rt-tests / perf bench sched messaging) -------------------
// g groups of f receivers and f senders; each receiver reads from its own
// socketpair (or pipe, p=1), each sender writes l messages of s bytes to
// every receiver of its group. Processes (fork) unless T=1. Every task
// first waits on a pipe the runner then closes, so the work starts at once.

struct hb_task {
	struct load *l;
	int group, idx, fd, sender;
	int *outs;
};
static int hb_gate[2];
static struct {
	int f, l, s;
} hb;

static int rw_all(int fd, char *buf, int n, int wr) {
	while (n > 0) {
		int k = wr ? write(fd, buf, n) : read(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		buf += k, n -= k;
	}
	return 1;
}

static void hb_body(struct hb_task *t) {
	char name[16];
	snprintf(name, sizeof name, "hackbench-%c%d.%d", t->sender ? 's' : 'r', t->group, t->idx);
	setup(name, &t->l->com, -1);
	char c;
	if (read(hb_gate[0], &c, 1) < 0)
		die("read gate");
	char *buf = calloc(1, hb.s + 1);
	if (t->sender) {
		for (int i = 0; i < hb.l; i++)
			for (int j = 0; j < hb.f; j++)
				if (!rw_all(t->outs[j], buf, hb.s, 1))
					return;
	} else {
		for (int i = 0; i < hb.f * hb.l; i++) {
			if (!rw_all(t->fd, buf, hb.s, 0))
				return;
			atomic_fetch_add(&t->l->ops, 1);
		}
	}
}

static void *hb_thread(void *arg) {
	hb_body(arg);
	return NULL;
}

static void start_hackbench(struct load *l) {
	static int started;
	if (started++) {
		fprintf(stderr, "guestload: one hackbench per run\n");
		exit(2);
	}
	int g = num(&l->spec, "g"), threads = num(&l->spec, "T"), pipes = num(&l->spec, "p");
	hb.f = num(&l->spec, "f");
	hb.l = num(&l->spec, "l");
	hb.s = num(&l->spec, "s");
	l->threads = 2 * g * hb.f;
	l->finite = 1;
	if (pipe(hb_gate))
		die("pipe");
	for (int gi = 0; gi < g; gi++) {
		int *outs = calloc(hb.f, sizeof *outs);
		int *ins = calloc(hb.f, sizeof *ins);
		for (int i = 0; i < hb.f; i++) {
			int fds[2];
			if (pipes ? pipe(fds) : socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
				die("channel");
			ins[i] = fds[0], outs[i] = fds[1];
		}
		for (int k = 0; k < 2 * hb.f; k++) {
			struct hb_task *t = calloc(1, sizeof *t);
			*t = (struct hb_task){.l = l, .group = gi, .idx = k % hb.f, .sender = k >= hb.f, .outs = outs};
			t->fd = ins[t->idx];
			if (threads) {
				add_thread(l, hb_thread, t);
				continue;
			}
			pid_t p = fork();
			if (p < 0)
				die("fork");
			if (p == 0) {
				close(hb_gate[1]); // the gate opens when the runner's copy closes
				hb_body(t);
				// A receiver's count goes back in its exit status: the
				// parent adds it up (processes share no memory).
				_exit(t->sender ? 0 : 1);
			}
			add_pid(l, p);
		}
	}
	close(hb_gate[1]); // every task wakes from its read (EOF) and starts
}

// ---- pipe (perf bench sched pipe) ---------------------------------------
// Two tasks pass a 4-byte token through two pipes, l round trips;
// processes (fork) unless T=1.

struct pipe_task {
	struct load *l;
	int out, in, first;
	long loops;
};

static void pipe_body(struct pipe_task *t) {
	setup(t->first ? "pipe-a" : "pipe-b", &t->l->com, -1);
	char b[4] = {0};
	for (long i = 0; i < t->loops; i++) {
		if (t->first && !rw_all(t->out, b, 4, 1))
			return;
		if (!rw_all(t->in, b, 4, 0))
			return;
		if (!t->first && !rw_all(t->out, b, 4, 1))
			return;
		if (t->first)
			atomic_fetch_add(&t->l->ops, 1);
	}
}

static void *pipe_thread(void *arg) {
	wait_go();
	pipe_body(arg);
	return NULL;
}

static void start_pipe(struct load *l) {
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		die("pipe");
	long loops = num(&l->spec, "l");
	int threads = num(&l->spec, "T");
	l->threads = 2;
	l->finite = 1;
	struct pipe_task *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	*a = (struct pipe_task){.l = l, .out = ab[1], .in = ba[0], .first = 1, .loops = loops};
	*b = (struct pipe_task){.l = l, .out = ba[1], .in = ab[0], .first = 0, .loops = loops};
	if (threads) {
		add_thread(l, pipe_thread, a);
		add_thread(l, pipe_thread, b);
		return;
	}
	// perf bench sched pipe forks once and the two processes are parent
	// and child: the first task forks the second (as the simulator's
	// pipe/0 does pipe/1).
	pid_t p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		wait_go();
		// An RT pipe is the tool run under chrt: the first process is
		// SCHED_FIFO or SCHED_RR when it forks the second, which
		// inherits the policy and is placed by select_task_rq_rt (a
		// child forked fair would be placed by the fair fork balance).
		// A SCHED_DEADLINE task cannot fork (EAGAIN): each process of a
		// deadline pipe sets its own policy in setup.
		if (l->com.policy != SCHED_DEADLINE)
			set_policy(&l->com);
		pid_t c = fork();
		if (c < 0)
			die("fork");
		if (c == 0) {
			pipe_body(b);
			_exit(0);
		}
		pipe_body(a);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	add_pid(l, p);
	// The round trips the first process made are not visible here: the
	// finite pipe counts its loops when both processes end.
}

// ---- hog ----------------------------------------------------------------

struct hog_task {
	struct load *l;
	int idx, pin;
};

static void *hog_run(void *arg) {
	struct hog_task *t = arg;
	char name[16];
	snprintf(name, sizeof name, "hog-%d", t->idx);
	setup(name, &t->l->com, t->pin);
	while (!atomic_load(&stopping))
		for (volatile int k = 0; k < 1 << 16; k++)
			;
	return NULL;
}

// siblings reads a CPU's SMT sibling list from sysfs.
static int siblings(int cpu, char *out, size_t len) {
	char path[128];
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
	FILE *fh = fopen(path, "r");
	if (!fh)
		return 0;
	int ok = fgets(out, len, fh) != NULL;
	fclose(fh);
	return ok;
}

static void start_hog(struct load *l) {
	int n = num(&l->spec, "n");
	const char *place = get(&l->spec, "place");
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int pins[1024], npins = 0;
	for (int cpu = 0; cpu < ncpu && npins < 1024; cpu++) {
		if (l->com.has_cpus && !CPU_ISSET(cpu, &l->com.cpus))
			continue;
		if (!strcmp(place, "core")) {
			// The first allowed thread of each core: a CPU whose SMT
			// siblings (sysfs) are not those of a CPU already taken.
			char sib[64];
			if (!siblings(cpu, sib, sizeof sib))
				continue;
			int dup = 0;
			for (int k = 0; k < npins && !dup; k++) {
				char other[64];
				dup = siblings(pins[k], other, sizeof other) && !strcmp(other, sib);
			}
			if (!dup)
				pins[npins++] = cpu;
		} else if (!strcmp(place, "cpu")) {
			pins[npins++] = cpu;
		}
	}
	l->threads = n;
	for (int i = 0; i < n; i++) {
		struct hog_task *t = calloc(1, sizeof *t);
		*t = (struct hog_task){.l = l, .idx = i, .pin = npins ? pins[i % npins] : -1};
		add_thread(l, hog_run, t);
	}
}

// ---- cyclictest (rt-tests; engine/workload/cyclictest.go) ----------------
// t threads (0: one per allowed CPU); thread k arms an absolute
// CLOCK_MONOTONIC timer every i + k·d µs, records how late it ran and
// skips the periods it overran; p > 0: SCHED_FIFO p (-p); a=1: thread k
// pinned to the k-th allowed CPU; l loops each (0: until the end);
// latency >= 0: the PM QoS request in /dev/cpu_dma_latency, held open.

struct ct_thread {
	struct load *l;
	int idx, pin;
	int64_t interval;
	long loops;
};

static void *ct_run(void *arg) {
	struct ct_thread *t = arg;
	struct load *l = t->l;
	char name[16];
	wait_go();
	snprintf(name, sizeof name, "cyclictest-%d", t->idx);
	setup(name, &l->com, t->pin);
	int64_t next = now_ns() + t->interval;
	for (long n = 0; !t->loops || n < t->loops; n++) {
		struct timespec ts = {next / 1000000000, next % 1000000000};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (atomic_load(&stopping))
			break;
		int64_t now = now_ns();
		hist_add(&l->lat, (now - next) / 1000);
		atomic_fetch_add(&l->ops, 1);
		next += t->interval;
		while (now > next)
			next += t->interval;
	}
	return NULL;
}

static void start_cyclictest(struct load *l) {
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpus[1024], nc = 0;
	for (int cpu = 0; cpu < ncpu && nc < 1024; cpu++)
		if (!l->com.has_cpus || CPU_ISSET(cpu, &l->com.cpus))
			cpus[nc++] = cpu;
	int n = num(&l->spec, "t"), pin = num(&l->spec, "a"), p = num(&l->spec, "p");
	long lat = num(&l->spec, "latency"), loops = num(&l->spec, "l");
	if (!n)
		n = nc;
	if (pin && n > nc) {
		fprintf(stderr, "guestload: cyclictest a=1: %d threads for %d CPUs\n", n, nc);
		exit(2);
	}
	if (p > 0)
		l->com.policy = SCHED_FIFO, l->com.rtprio = p, l->com.nice = 0;
	if (lat >= 0) {
		int fd = open("/dev/cpu_dma_latency", O_RDWR);
		int32_t v = lat;
		if (fd >= 0 && write(fd, &v, sizeof v) != sizeof v)
			close(fd); // kept open on success: the request lasts the run
	}
	l->threads = n;
	l->finite = loops > 0;
	for (int k = 0; k < n; k++) {
		struct ct_thread *t = calloc(1, sizeof *t);
		*t = (struct ct_thread){.l = l, .idx = k, .pin = pin ? cpus[k] : -1, .loops = loops,
					.interval = (num(&l->spec, "i") + (int64_t)k * num(&l->spec, "d")) * 1000};
		add_thread(l, ct_run, t);
	}
}

// ---- the runner ---------------------------------------------------------

// reap collects a load's ended tasks, in order, without a helper thread
// (a joiner thread was a third runnable task at the workload's first
// forks: the kernel's fork balance counted it, the simulator has no such
// task). wait: block until the deadline (CLOCK_MONOTONIC; 0 = try once).
// It returns 1 once every task of the load has ended.
static int reap(struct load *l, int64_t deadline) {
	for (; l->joined < l->ntids; l->joined++) {
		if (!deadline) {
			if (pthread_tryjoin_np(l->tids[l->joined], NULL))
				return 0;
			continue;
		}
		// pthread_timedjoin_np takes CLOCK_REALTIME: move the deadline over.
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		int64_t abs = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec + (deadline - now_ns());
		struct timespec ts = {abs / 1000000000, abs % 1000000000};
		if (pthread_timedjoin_np(l->tids[l->joined], NULL, &ts))
			return 0;
	}
	for (; l->reaped < l->npids; l->reaped++) {
		int st, fd = -1;
		if (deadline) {
			// A pidfd polls with a timeout; waitpid cannot.
			fd = syscall(SYS_pidfd_open, l->pids[l->reaped], 0);
			if (fd < 0)
				die("pidfd_open");
			int64_t left = deadline - now_ns();
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			struct timespec ts = {left > 0 ? left / 1000000000 : 0, left > 0 ? left % 1000000000 : 0};
			int k;
			while ((k = ppoll(&pfd, 1, &ts, NULL)) < 0 && errno == EINTR)
				;
			close(fd);
			if (k == 0)
				return 0;
		}
		pid_t r;
		while ((r = waitpid(l->pids[l->reaped], &st, deadline ? 0 : WNOHANG)) < 0 && errno == EINTR)
			;
		if (r == 0)
			return 0;
		if (!WIFEXITED(st))
			l->killed = 1;
		if (!strcmp(l->kind, "hackbench") && WIFEXITED(st) && WEXITSTATUS(st) == 1)
			atomic_fetch_add(&l->ops, (long)hb.f * hb.l);
	}
	// A pipe's processes count their loops only by ending them all.
	if (!strcmp(l->kind, "pipe") && l->npids && !l->killed)
		atomic_store(&l->ops, num(&l->spec, "l"));
	l->ended = now_ns();
	atomic_store(&l->done, 1);
	return 1;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: guestload DURATION_NS KIND key=value ... [-- KIND ...]\n");
		return 2;
	}
	int64_t dur = atoll(argv[1]);
	struct load loads[16];
	int nl = 0;
	for (int i = 2; i < argc && nl < 16; i++) {
		struct load *l = &loads[nl++];
		memset(l, 0, sizeof *l);
		pthread_mutex_init(&l->lat.mu, NULL);
		l->kind = l->spec.kind = argv[i++];
		for (; i < argc && strcmp(argv[i], "--"); i++) {
			char *eq = strchr(argv[i], '=');
			if (!eq || l->spec.n == MAXKEYS) {
				fprintf(stderr, "guestload: bad key %s\n", argv[i]);
				return 2;
			}
			*eq = 0;
			l->spec.key[l->spec.n] = argv[i];
			l->spec.val[l->spec.n++] = eq + 1;
		}
		l->com.nice = num(&l->spec, "nice");
		l->com.slice_us = num(&l->spec, "slice_us");
		const char *pol = get(&l->spec, "policy");
		l->com.policy = !strcmp(pol, "fifo")	   ? SCHED_FIFO
				: !strcmp(pol, "rr")	   ? SCHED_RR
				: !strcmp(pol, "deadline") ? SCHED_DEADLINE
							   : SCHED_OTHER;
		l->com.rtprio = num(&l->spec, "rtprio");
		if (l->com.policy == SCHED_DEADLINE) { // the host passes dl_* only then
			l->com.dl_runtime_us = num(&l->spec, "dl_runtime_us");
			l->com.dl_deadline_us = num(&l->spec, "dl_deadline_us");
			l->com.dl_period_us = num(&l->spec, "dl_period_us");
			l->com.dl_reclaim = num(&l->spec, "dl_reclaim");
		}
		parse_cpus(get(&l->spec, "cpus"), &l->com);
	}
	// hackbench's parent is the task that forks the children and waits
	// for them, as the simulator's "hackbench/main": this thread, by name.
	for (int i = 0; i < nl; i++)
		if (!strcmp(loads[i].kind, "hackbench"))
			prctl(PR_SET_NAME, "hackbench-main", 0, 0, 0);
	int64_t start = now_ns();
	go_ns = start + START_DELAY_NS;
	for (int i = 0; i < nl; i++) {
		struct load *l = &loads[i];
		// schbench's, pipe's and cyclictest's first tasks wait for the start time;
		// hackbench's parent forks and releases its children at once, as
		// the simulator's hackbench/main does, and hogs just spin.
		l->t0 = strcmp(l->kind, "schbench") && strcmp(l->kind, "pipe") && strcmp(l->kind, "cyclictest") ? now_ns() : go_ns;
		if (!strcmp(l->kind, "schbench"))
			start_schbench(l);
		else if (!strcmp(l->kind, "hackbench"))
			start_hackbench(l);
		else if (!strcmp(l->kind, "pipe"))
			start_pipe(l);
		else if (!strcmp(l->kind, "hog"))
			start_hog(l);
		else if (!strcmp(l->kind, "cyclictest"))
			start_cyclictest(l);
		else {
			fprintf(stderr, "guestload: kind %s has no guest load\n", l->kind);
			return 2;
		}
	}
	// Run until the duration, or until every finite workload ended (the
	// infinite ones only stop at the duration). This thread blocks the
	// whole time (in a join, a poll or one sleep): it wakes nobody and
	// takes no CPU from the workload.
	int64_t deadline = go_ns + dur, infinite = 0;
	for (int i = 0; i < nl; i++) {
		if (!loads[i].finite)
			infinite = 1;
		else if (now_ns() < deadline)
			reap(&loads[i], deadline);
	}
	if (infinite) {
		struct timespec ts = {deadline / 1000000000, deadline % 1000000000};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	atomic_store(&stopping, 1);
	for (int i = 0; i < nl; i++)
		for (int k = loads[i].reaped; k < loads[i].npids; k++)
			if (!atomic_load(&loads[i].done))
				kill(loads[i].pids[k], SIGKILL);
	// Post every futex until every thread has seen stopping: a thread
	// may drop a post (schbench's message thread blocks its word before
	// it waits), so once is not enough. The killed processes are reaped.
	// Threads of a finite load still running (pipe or hackbench with T=1
	// past the duration) have no way to stop early: the exit ends them.
	for (int open = 1; open;) {
		open = 0;
		for (int i = 0; i < nl; i++) {
			struct load *l = &loads[i];
			if (atomic_load(&l->done) || reap(l, 0))
				continue;
			if (l->stop) {
				open = 1;
				l->stop(l);
			} else if (l->reaped < l->npids || (l->joined == l->ntids && l->npids)) {
				open = 1;
			}
		}
		if (open)
			sleep_ns(1000000);
	}
	int64_t wall = now_ns() - start;
	for (int i = 0; i < nl; i++)
		if (!atomic_load(&loads[i].done))
			loads[i].ended = start + wall; // still running at the stop
	for (int i = 0; i < nl; i++) {
		struct load *l = &loads[i];
		char lat[256];
		hist_print(&l->lat, lat, sizeof lat);
		printf("guestload: {\"kind\":\"%s\",\"threads\":%d,\"ops\":%ld,\"finished\":%s,\"completion_s\":%.6f,\"wall_s\":%.6f,\"wakeup_latency_us\":%s}\n",
		       l->kind, l->threads, atomic_load(&l->ops), l->finite && atomic_load(&l->done) && !l->killed && l->ended - l->t0 <= dur ? "true" : "false",
		       (double)(l->ended - l->t0) / 1e9, (double)wall / 1e9, lat);
	}
	return 0;
}
