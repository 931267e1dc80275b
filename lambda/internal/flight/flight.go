// Package flight runs each fact of a batch once: the first record of a
// batch to carry a fact leads its flight, and later records with the same
// fact (key and payload hash) wait for it and take its answer, without a
// store request. The queue and the stream adapters share it.
package flight

import (
	"errors"
	"sync"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// errUnfinished is the answer of a flight whose leader ended without one (a
// panic in its effect's caller).
var errUnfinished = errors.New("the earlier record did not finish")

// Set is the flights of one batch, by record key. The zero value is ready.
type Set struct {
	mu sync.Mutex
	m  map[string]*Flight
}

// Flight is one fact's run in a batch.
type Flight struct {
	hash string
	done chan struct{}
	res  idempotency.Result
	err  error
}

// Join finds the flight of key. When an earlier record of the batch leads
// it with the same payload hash, prior is that flight, whose answer the
// caller takes (Wait). Otherwise, when the caller may run the fact (lead:
// false for a record that will not run, such as an expired one), it leads a
// new flight (led), which it must Close, and Set with its answer first; a
// key whose flight has another hash gets neither, and runs on its own (the
// guard judges the mismatch).
func (s *Set) Join(key, hash string, lead bool) (prior, led *Flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, seen := s.m[key]
	switch {
	case seen && f.hash == hash:
		return f, nil
	case seen || !lead:
		return nil, nil
	}
	if s.m == nil {
		s.m = make(map[string]*Flight)
	}
	f = &Flight{hash: hash, done: make(chan struct{}), err: errUnfinished}
	s.m[key] = f
	return nil, f
}

// Wait returns the leader's answer once it has one.
func (f *Flight) Wait() (idempotency.Result, error) {
	<-f.done
	return f.res, f.err
}

// Set records the leader's answer, before Close.
func (f *Flight) Set(res idempotency.Result, err error) { f.res, f.err = res, err }

// Close releases the records waiting for the flight: they get what Set
// recorded, or an error that says the earlier record did not finish.
func (f *Flight) Close() { close(f.done) }
