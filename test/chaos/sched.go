package chaos

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// epoch is where virtual time starts: far from the real clock, so that the
// real-time timers the library derives from virtual deadlines (the effect's
// context) never fire during a run.
var epoch = time.Date(2100, time.January, 1, 0, 0, 0, 0, time.UTC)

// clock is the virtual clock: the guard's Config.Now, the queues' visibility
// timeouts and the invocations' deadlines all read it. Only the scheduler
// moves it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// task is a simulated actor (the producer, one Lambda worker). All its code
// runs on one goroutine, the adapter's included (the harness drives the
// adapter with a Concurrency of 1, which runs a batch's records in the
// calling goroutine), and it acts only while it holds the scheduler's turn.
type task struct {
	id     int
	name   string
	resume chan struct{}
	// queued: a wake of the task is in the scheduler's queue. A task is
	// queued at most once: a second wake means two goroutines act for it.
	queued bool
	// doing and since say what the task did last (a store call or an
	// effect, with its key) and at what virtual time: what a deadlock
	// report names. Guarded by the scheduler's mu.
	doing string
	since time.Time
}

type wake struct {
	at  time.Time
	seq uint64
	t   *task
}

type wakes []wake

func (w wakes) Len() int { return len(w) }
func (w wakes) Less(i, j int) bool {
	if !w[i].at.Equal(w[j].at) {
		return w[i].at.Before(w[j].at)
	}
	return w[i].seq < w[j].seq
}
func (w wakes) Swap(i, j int) { w[i], w[j] = w[j], w[i] }
func (w *wakes) Push(x any)   { *w = append(*w, x.(wake)) }
func (w *wakes) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

// ErrDeadlock is the error of a run that cannot go on: a task blocked outside
// the scheduler (for Config.Stall of real time), no task left to run while
// some have not finished, or a task acting from two goroutines at once.
var ErrDeadlock = errors.New("chaos: deadlock")

// defaultStall is Config.Stall's default.
const defaultStall = time.Minute

// scheduler is a cooperative, discrete-event scheduler: exactly one task
// runs at a time; a running task parks itself until a virtual time, and the
// scheduler resumes the task with the earliest wake time (ties in the order
// they were parked), moving the clock there. Every source of randomness is
// drawn by the running task from one seeded generator, so a seed fixes the
// whole interleaving.
//
// A task may wait only here (park): anything else it waits for must answer
// at once. The scheduler tells a deadlock from a slow step by real time
// only: a task that holds its turn for stall is reported blocked outside the
// scheduler, with what it was doing.
type scheduler struct {
	clock *clock
	queue wakes
	seq   uint64
	back  chan struct{} // the running task parked or finished
	// stop is closed when the run ends: goroutines still waiting for a
	// turn (after a failed run) exit instead of leaking.
	stop  chan struct{}
	tasks int
	live  map[*task]bool // spawned and not finished
	steps int
	trace uint64
	// stall bounds the real time a step may take before the run fails
	// as deadlocked (Config.Stall).
	stall time.Duration
	cur   *task

	mu     sync.Mutex
	failed error // set by a task that found the run broken
}

func newScheduler(c *clock, stall time.Duration) *scheduler {
	return &scheduler{clock: c, back: make(chan struct{}), stop: make(chan struct{}), live: make(map[*task]bool), stall: stall}
}

// spawn creates a task that first runs at the virtual time at.
func (s *scheduler) spawn(name string, at time.Time, fn func(t *task)) *task {
	s.tasks++
	t := &task{id: s.tasks, name: name, resume: make(chan struct{})}
	s.live[t] = true
	s.push(t, at)
	go func() {
		if !s.await(t) {
			return
		}
		finished := false
		defer func() {
			if !finished {
				s.fail(fmt.Errorf("%w: task %s ended without finishing (runtime.Goexit) while it held its turn (%s)", ErrDeadlock, t.name, s.describe(t)))
			}
		}()
		fn(t)
		finished = true
		s.note(t, "finished")
		s.giveBack()
	}()
	return t
}

// push schedules t to run at the virtual time at. Only the running task (or
// the scheduler before the run) calls it.
func (s *scheduler) push(t *task, at time.Time) {
	if t.queued {
		s.fail(fmt.Errorf("%w: task %s was scheduled while a wake of it was queued: two goroutines act for it at once (does the adapter run a batch's records concurrently with a Concurrency of 1?)", ErrDeadlock, t.name))
		runtime.Goexit()
	}
	t.queued = true
	s.seq++
	heap.Push(&s.queue, wake{at: at, seq: s.seq, t: t})
}

// park gives up the turn of t, the running task, until d of virtual time has
// passed, and returns when t runs again.
func (s *scheduler) park(t *task, d time.Duration) {
	s.push(t, s.clock.Now().Add(d))
	s.giveBack()
	if !s.await(t) {
		runtime.Goexit() // the run ended without t
	}
}

// giveBack hands the turn back to the scheduler.
func (s *scheduler) giveBack() {
	select {
	case s.back <- struct{}{}:
	case <-s.stop:
		runtime.Goexit()
	}
}

// await waits for t's turn; false if the run ended first.
func (s *scheduler) await(t *task) bool {
	select {
	case <-t.resume:
		return true
	case <-s.stop:
		return false
	}
}

// fail ends the run with err, from a task's goroutine.
func (s *scheduler) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	select {
	case s.back <- struct{}{}:
	case <-s.stop:
	}
}

func (s *scheduler) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// run runs the tasks until none is left, until limit of virtual time, or
// until ctx ends. It fails fast on a deadlock: a task that holds its turn
// longer than stall of real time (blocked outside the scheduler), no task to
// run while some have not finished, or a task acting from two goroutines.
func (s *scheduler) run(ctx context.Context, limit time.Time) error {
	defer close(s.stop)
	timer := time.NewTimer(s.stall)
	defer timer.Stop()
	h := fnv.New64a()
	var buf [16]byte
	for s.queue.Len() > 0 {
		w := heap.Pop(&s.queue).(wake)
		if w.at.After(limit) {
			return fmt.Errorf("virtual time limit %v reached with %d tasks pending", limit.Sub(epoch), s.queue.Len()+1)
		}
		w.t.queued = false
		s.clock.advanceTo(w.at)
		s.steps++
		s.cur = w.t
		putUint64(buf[:8], uint64(w.t.id))
		putUint64(buf[8:], uint64(w.at.UnixNano()))
		h.Write(buf[:])
		w.t.resume <- struct{}{}
		timer.Reset(s.stall)
		select {
		case <-s.back:
		case <-timer.C:
			return fmt.Errorf("%w: step %d: task %s has held its turn for %v of real time without giving it back: it is blocked outside the scheduler (%s)",
				ErrDeadlock, s.steps, w.t.name, s.stall, s.describe(w.t))
		case <-ctx.Done():
			return fmt.Errorf("step %d: task %s held its turn (%s) when the run was stopped: %w", s.steps, w.t.name, s.describe(w.t), context.Cause(ctx))
		}
		if err := s.failure(); err != nil {
			return err
		}
		if s.finished(w.t) {
			delete(s.live, w.t)
		}
	}
	if len(s.live) > 0 {
		var waiting []string
		for t := range s.live {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", t.name, s.describe(t)))
		}
		slices.Sort(waiting)
		return fmt.Errorf("%w: no task left to run while %d have not finished: %s", ErrDeadlock, len(waiting), strings.Join(waiting, "; "))
	}
	s.trace = h.Sum64()
	return nil
}

// note records what t, the running task, is doing: read by a deadlock
// report, from the scheduler's goroutine, while t may still run.
func (s *scheduler) note(t *task, doing string) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.doing, t.since = doing, now
}

func (s *scheduler) finished(t *task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.doing == "finished"
}

// describe says what t did last.
func (s *scheduler) describe(t *task) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.doing == "" {
		return "no store call or effect yet"
	}
	return fmt.Sprintf("last: %s, at virtual time %v", t.doing, t.since.Sub(epoch))
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}
