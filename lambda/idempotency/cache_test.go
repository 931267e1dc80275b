package idempotency

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// TestCacheGrowsAsItFills: a large cache costs nothing before it holds
// anything (it used to allocate its whole map up front: 53 MiB for a
// million entries).
func TestCacheGrowsAsItFills(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := newCompletedCache(limits.MaxCacheSize)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("an empty cache of %d entries allocated %d bytes", limits.MaxCacheSize, got)
	}
	runtime.KeepAlive(c)
}

// TestCacheIsBoundedByMemory: entries of the largest size are evicted to keep
// the cache within cacheMaxBytes, whatever its size in entries.
func TestCacheIsBoundedByMemory(t *testing.T) {
	c := newCompletedCache(limits.MaxCacheSize)
	key, result := strings.Repeat("k", limits.MaxKeyBytes-8), strings.Repeat("r", limits.DefaultMaxResultBytes)
	expires := time.Now().Add(time.Hour)
	n := 2 * cacheMaxBytes / (len(key) + len(result))
	for i := range n {
		c.put(cacheEntry{key: fmt.Sprintf("%s%08d", key, i), hash: "h", result: result, expiresAt: expires})
		if c.bytes > cacheMaxBytes {
			t.Fatalf("after %d entries the cache holds %d bytes, more than %d", i+1, c.bytes, cacheMaxBytes)
		}
	}
	if held := c.order.Len(); held == 0 || held >= n || held != len(c.byKey) {
		t.Fatalf("held %d entries (map %d) of %d put", held, len(c.byKey), n)
	}
	if _, ok := c.get(fmt.Sprintf("%s%08d", key, 0), time.Now()); ok {
		t.Fatal("the oldest entry was kept")
	}
	if _, ok := c.get(fmt.Sprintf("%s%08d", key, n-1), time.Now()); !ok {
		t.Fatal("the newest entry was evicted")
	}
}

// forgetful is a Store that keeps nothing: every reserve succeeds, so that
// what a guard retains is its cache's alone.
type forgetful struct{}

func (forgetful) Reserve(context.Context, Record, time.Time) error { return nil }
func (forgetful) Get(context.Context, string) (*Record, error)     { return nil, nil }
func (forgetful) Complete(context.Context, Record) error           { return nil }
func (forgetful) Release(context.Context, string, string) error    { return nil }

// TestCacheOwnsWhatItKeeps: the cache copies the key, hash and result it
// keeps, so that a result (or a Fact's key or hash) cut from a large buffer
// does not keep the buffer alive, and the bound counts what it retains. The
// retained heap is measured after a garbage collection: within the 64 MiB
// bound, and near what the cache accounts for.
func TestCacheOwnsWhatItKeeps(t *testing.T) {
	const results, facts = 1500, 200 // 16-byte results, and keys and hashes, cut from 64 KiB buffers
	g, err := NewGuard(forgetful{}, Config{Namespace: "ns", CacheSize: results + facts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range results {
		_, err := g.Do(ctx, strconv.Itoa(i), []byte(`{}`), func(context.Context, Reservation) (string, error) {
			response := strings.Repeat("x", 64<<10) // a downstream API's response
			return response[100:116], nil           // the id it carries
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range facts {
		buf := fmt.Sprintf("%065536d", i)
		f := Fact{Key: "ns#" + strconv.Itoa(results+i), Hash: buf[:46]}
		f.Key = (buf + f.Key)[len(buf):] // a key that is a substring of a large buffer too
		if _, err := g.Run(ctx, f, func(context.Context, Reservation) (string, error) { return "r", nil }); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	g.cache.mu.Lock()
	entries, accounted := g.cache.order.Len(), g.cache.bytes
	g.cache.mu.Unlock()
	t.Logf("%d entries, accounted %d bytes, retained heap %.1f MiB (bound %d MiB)", entries, accounted, float64(retained)/(1<<20), cacheMaxBytes>>20)
	if entries != results+facts {
		t.Fatalf("%d entries cached, want %d", entries, results+facts)
	}
	if retained > cacheMaxBytes || retained > 2*int64(accounted)+4<<20 {
		t.Fatalf("the cache of %d entries accounts for %d bytes but retains %.1f MiB of heap (bound %d MiB)", entries, accounted, float64(retained)/(1<<20), cacheMaxBytes>>20)
	}
	runtime.KeepAlive(g)
}
