package storetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// MemoryStore is an idempotency.TxStore in process memory, with the same
// semantics as the DynamoDB store: for unit tests, simulations and local runs. Its zero value
// is not usable; call NewMemoryStore.
type MemoryStore struct {
	// OmitOld makes failed conditions return no record, like a DynamoDB
	// server that ignores ReturnValuesOnConditionCheckFailure; the guard
	// then falls back to Get.
	OmitOld bool

	mu      sync.Mutex
	records map[string]idempotency.Record
}

// MemoryWrites is the writes type of MemoryStore.Commit: a function applied
// under the store's lock, atomically with the COMPLETED record. Returning an
// error rejects the transaction (like a failed condition in DynamoDB); it
// must then have changed nothing.
type MemoryWrites func() error

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{records: make(map[string]idempotency.Record)}
}

// Records returns a copy of every record the store holds, in no order:
// what a reader of the table would see.
func (m *MemoryStore) Records() []idempotency.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]idempotency.Record, 0, len(m.records))
	for _, rec := range m.records {
		out = append(out, rec)
	}
	return out
}

// Reserve implements idempotency.Store.
func (m *MemoryStore) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.free(rec, now); err != nil {
		return err
	}
	if old, ok := m.records[rec.Key]; ok {
		idempotency.ReportReplaced(ctx, &old)
	}
	m.records[rec.Key] = rec
	return nil
}

// free returns a *idempotency.ConditionFailedError if a record holds rec's key.
func (m *MemoryStore) free(rec idempotency.Record, now time.Time) error {
	old, ok := m.records[rec.Key]
	if !ok || !old.Holds(rec.PayloadHash, now) {
		return nil
	}
	if m.OmitOld {
		return &idempotency.ConditionFailedError{}
	}
	return &idempotency.ConditionFailedError{Old: &old}
}

// Delete removes the record of key, whatever its state: what an operator's
// forget does to a table (idemctl forget, dynamostore's Store.Forget), for
// tests of what follows it.
func (m *MemoryStore) Delete(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.records, key)
}

// Get implements idempotency.Store.
func (m *MemoryStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	if !ok {
		return nil, nil
	}
	return &rec, nil
}

// Complete implements idempotency.Store.
func (m *MemoryStore) Complete(ctx context.Context, rec idempotency.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.records[rec.Key]
	if !ok || old.Owner != rec.Owner {
		return idempotency.ErrLeaseLost
	}
	old.Status, old.Result, old.LeaseUntil = idempotency.StatusCompleted, rec.Result, time.Time{}
	old.ExpiresAt, old.TTL = rec.ExpiresAt, rec.TTL
	m.records[rec.Key] = old
	return nil
}

// Release implements idempotency.Store.
func (m *MemoryStore) Release(ctx context.Context, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.records[key]
	if !ok {
		return nil
	}
	if old.Owner != owner || old.Status != idempotency.StatusInProgress {
		return idempotency.ErrLeaseLost
	}
	delete(m.records, key)
	return nil
}

// AcceptsWrites implements idempotency.TxStore: writes must be a
// MemoryWrites.
func (m *MemoryStore) AcceptsWrites(writes any) error {
	if _, ok := writes.(MemoryWrites); !ok {
		return fmt.Errorf("%w: memory store: writes are %T, want storetest.MemoryWrites", idempotency.ErrTxInvalid, writes)
	}
	return nil
}

// Commit implements idempotency.TxStore; writes must be a MemoryWrites (or nil).
func (m *MemoryStore) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	apply, ok := writes.(MemoryWrites)
	if !ok && writes != nil {
		return fmt.Errorf("%w: memory store: writes are %T, want MemoryWrites", idempotency.ErrTxInvalid, writes)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.free(rec, now); err != nil {
		return err
	}
	if apply != nil {
		if err := apply(); err != nil {
			return fmt.Errorf("%w: %v", idempotency.ErrTxRejected, err)
		}
	}
	m.records[rec.Key] = rec
	return nil
}
