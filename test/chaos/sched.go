package chaos

import (
	"container/heap"
	"fmt"
	"hash/fnv"
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

// task is a simulated actor (the producer, one Lambda worker). Its code may
// run on several goroutines over time (a worker's batch runs on the adapter's
// goroutines), but only the goroutine holding the task's turn acts.
type task struct {
	id     int
	name   string
	resume chan struct{}
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

// scheduler is a cooperative, discrete-event scheduler: exactly one task
// runs at a time; a running task parks itself until a virtual time, and the
// scheduler resumes the task with the earliest wake time (ties in the order
// they were parked), moving the clock there. Every source of randomness is
// drawn by the running task from one seeded generator, so a seed fixes the
// whole interleaving.
type scheduler struct {
	clock *clock
	queue wakes
	seq   uint64
	back  chan struct{} // the running task parked, crashed or finished
	tasks int
	steps int
	trace uint64
	// stall bounds the real time a step may take before the run is
	// declared stuck (a harness bug: a goroutine waiting for a turn that
	// never comes).
	stall time.Duration
	cur   *task
}

func newScheduler(c *clock) *scheduler {
	return &scheduler{clock: c, back: make(chan struct{}), stall: 2 * time.Minute}
}

// spawn creates a task that first runs at the virtual time at.
func (s *scheduler) spawn(name string, at time.Time, fn func(t *task)) *task {
	s.tasks++
	t := &task{id: s.tasks, name: name, resume: make(chan struct{})}
	s.push(t, at)
	go func() {
		<-t.resume
		fn(t)
		s.back <- struct{}{}
	}()
	return t
}

// push schedules t to run at the virtual time at. Only the running task (or
// the scheduler before the run) calls it.
func (s *scheduler) push(t *task, at time.Time) {
	s.seq++
	heap.Push(&s.queue, wake{at: at, seq: s.seq, t: t})
}

// park gives up the turn of t, the running task, until d of virtual time has
// passed, and returns when t runs again.
func (s *scheduler) park(t *task, d time.Duration) {
	s.push(t, s.clock.Now().Add(d))
	s.back <- struct{}{}
	<-t.resume
}

// yield gives up the turn of the running task without parking it: the task
// crashed, and its next run was pushed already.
func (s *scheduler) yield() { s.back <- struct{}{} }

// run runs the tasks until none is left, or until limit of virtual time.
func (s *scheduler) run(limit time.Time) error {
	timer := time.NewTimer(s.stall)
	defer timer.Stop()
	h := fnv.New64a()
	var buf [16]byte
	for s.queue.Len() > 0 {
		w := heap.Pop(&s.queue).(wake)
		if w.at.After(limit) {
			return fmt.Errorf("virtual time limit %v reached with %d tasks pending", limit.Sub(epoch), s.queue.Len()+1)
		}
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
			return fmt.Errorf("step %d: task %s did not give up its turn within %v of real time (a harness bug)", s.steps, w.t.name, s.stall)
		}
	}
	s.trace = h.Sum64()
	return nil
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}
