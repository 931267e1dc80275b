package storetest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Counter is an idempotency.TxStore that counts the requests reaching the
// store it wraps: for tests that prove a path costs no store request (bad
// input is refused before the store).
type Counter struct {
	store    idempotency.TxStore
	requests atomic.Int64
}

// NewCounter returns a Counter over store.
func NewCounter(store idempotency.TxStore) *Counter { return &Counter{store: store} }

// Requests returns how many requests reached the store so far.
func (c *Counter) Requests() int { return int(c.requests.Load()) }

// Reserve implements idempotency.Store.
func (c *Counter) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	c.requests.Add(1)
	return c.store.Reserve(ctx, rec, now)
}

// Get implements idempotency.Store.
func (c *Counter) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	c.requests.Add(1)
	return c.store.Get(ctx, key)
}

// Complete implements idempotency.Store.
func (c *Counter) Complete(ctx context.Context, rec idempotency.Record) error {
	c.requests.Add(1)
	return c.store.Complete(ctx, rec)
}

// Release implements idempotency.Store.
func (c *Counter) Release(ctx context.Context, key, owner string) error {
	c.requests.Add(1)
	return c.store.Release(ctx, key, owner)
}

// AcceptsWrites implements idempotency.TxStore; it makes no request.
func (c *Counter) AcceptsWrites(writes any) error { return c.store.AcceptsWrites(writes) }

// Commit implements idempotency.TxStore.
func (c *Counter) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	c.requests.Add(1)
	return c.store.Commit(ctx, rec, now, writes)
}
