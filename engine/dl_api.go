package engine

// DLParams is a SCHED_DEADLINE reservation as sched_setattr takes it
// (include/uapi/linux/sched/types.h, struct sched_attr): the task may run
// Runtime in every Period, within Deadline of the period's start.
type DLParams struct {
	// Runtime, Deadline and Period are nanoseconds. Deadline 0 means
	// Period (an implicit deadline); Period 0 means Deadline, as
	// __checkparam_dl reads sched_period 0.
	Runtime, Deadline, Period int64
	// Reclaim is SCHED_FLAG_RECLAIM: the task's budget runs down at the
	// GRUB rate (grub_reclaim), so it may use bandwidth that no
	// deadline task is using.
	Reclaim bool
}

// DLStats are the deadline class's counts over a run.
type DLStats struct {
	// CPUPct is the deadline tasks' share of all CPU time.
	CPUPct float64 `json:"cpu_pct"`
	// TotalBW is the admitted bandwidth (the sum of runtime/period), in
	// CPUs; LimitBW what admission control allows (sched_rt_runtime_us /
	// sched_rt_period_us × CPUs).
	TotalBW   float64 `json:"total_bw"`
	LimitBW   float64 `json:"limit_bw"`
	Pushes    int64   `json:"pushes"`
	Pulls     int64   `json:"pulls"`
	Throttles int64   `json:"throttles"`
	// Tasks are the deadline tasks, in creation order.
	Tasks []DLTaskStats `json:"tasks"`
}

// DLTaskStats is one deadline task's reservation and what it got.
type DLTaskStats struct {
	Task     TaskID `json:"task"`
	Name     string `json:"name"`
	Workload int    `json:"workload"`
	// RuntimeNS, DeadlineNS and PeriodNS are the reservation (deadline
	// and period filled in as the kernel reads zeros).
	RuntimeNS  int64 `json:"runtime_ns"`
	DeadlineNS int64 `json:"deadline_ns"`
	PeriodNS   int64 `json:"period_ns"`
	Reclaim    bool  `json:"reclaim"`
	// Reserved is runtime/period; Share the fraction of one CPU the
	// task ran from its start to the end of the run.
	Reserved float64 `json:"reserved"`
	Share    float64 `json:"share"`
	// Jobs are the activations that ended (the task blocked), Misses
	// those that ended after the absolute deadline they woke with.
	Jobs   int64 `json:"jobs"`
	Misses int64 `json:"misses"`
	// Throttles counts the times the task ran out of runtime.
	Throttles int64 `json:"throttles"`
}
