// Package storespy counts the requests that reach an idempotency store and
// can make them fail: a test double of this repository's own tests, which
// prove a path costs no store request, or how many, and test store outages.
package storespy

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Op names a store request, for Counter.Calls.
type Op int

// The requests of an idempotency.TxStore.
const (
	OpReserve Op = iota
	OpGet
	OpComplete
	OpRelease
	OpCommit
	numOps
)

// Counter is an idempotency.TxStore that counts the requests reaching the
// store it wraps, and can make them fail: for tests that prove a path costs
// no store request (bad input is refused before the store) or how many it
// costs, and for tests of a store outage.
type Counter struct {
	store idempotency.TxStore
	calls [numOps]atomic.Int64
	fail  atomic.Pointer[error]
}

// NewCounter returns a Counter over store.
func NewCounter(store idempotency.TxStore) *Counter { return &Counter{store: store} }

// Requests returns how many requests reached the Counter so far, failed
// ones included.
func (c *Counter) Requests() int {
	n := int64(0)
	for i := range c.calls {
		n += c.calls[i].Load()
	}
	return int(n)
}

// Calls returns how many requests of op reached the Counter so far.
func (c *Counter) Calls(op Op) int { return int(c.calls[op].Load()) }

// Fail makes every later request fail with err, without reaching the
// wrapped store, like a throttled table; Fail(nil) lets them through again.
// Failed requests are counted.
func (c *Counter) Fail(err error) {
	if err == nil {
		c.fail.Store(nil)
		return
	}
	c.fail.Store(&err)
}

// count counts a request of op and returns the error it must fail with, if
// any.
func (c *Counter) count(op Op) error {
	c.calls[op].Add(1)
	if err := c.fail.Load(); err != nil {
		return *err
	}
	return nil
}

// Reserve implements idempotency.Store.
func (c *Counter) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	if err := c.count(OpReserve); err != nil {
		return err
	}
	return c.store.Reserve(ctx, rec, now)
}

// Get implements idempotency.Store.
func (c *Counter) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if err := c.count(OpGet); err != nil {
		return nil, err
	}
	return c.store.Get(ctx, key)
}

// Complete implements idempotency.Store.
func (c *Counter) Complete(ctx context.Context, rec idempotency.Record) error {
	if err := c.count(OpComplete); err != nil {
		return err
	}
	return c.store.Complete(ctx, rec)
}

// Release implements idempotency.Store.
func (c *Counter) Release(ctx context.Context, key, owner string) error {
	if err := c.count(OpRelease); err != nil {
		return err
	}
	return c.store.Release(ctx, key, owner)
}

// AcceptsWrites implements idempotency.TxStore; it makes no request.
func (c *Counter) AcceptsWrites(writes any) error { return c.store.AcceptsWrites(writes) }

// Commit implements idempotency.TxStore.
func (c *Counter) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	if err := c.count(OpCommit); err != nil {
		return err
	}
	return c.store.Commit(ctx, rec, now, writes)
}
