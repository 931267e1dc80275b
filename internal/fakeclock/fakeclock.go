// Package fakeclock is a settable clock for the guard, so that leases and
// business windows can end in a test without waiting: the clock of the
// store conformance suite (storetest) and of this repository's own tests.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable clock for the guard, so that leases and business
// windows can end in a test without waiting.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock set to the current time (contexts' deadlines are
// real times, so the two must agree), from which only Advance moves it.
func New() *Clock {
	return &Clock{now: time.Now().Truncate(time.Second)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
