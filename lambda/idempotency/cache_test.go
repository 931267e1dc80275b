package idempotency

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCacheGrowsAsItFills: a large cache costs nothing before it holds
// anything (it used to allocate its whole map up front: 53 MiB for a
// million entries).
func TestCacheGrowsAsItFills(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := newCompletedCache(MaxCacheSize)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("an empty cache of %d entries allocated %d bytes", MaxCacheSize, got)
	}
	runtime.KeepAlive(c)
}

// TestCacheIsBoundedByMemory: entries of the largest size are evicted to keep
// the cache within cacheMaxBytes, whatever its size in entries.
func TestCacheIsBoundedByMemory(t *testing.T) {
	c := newCompletedCache(MaxCacheSize)
	key, result := strings.Repeat("k", MaxKeyBytes-8), strings.Repeat("r", MaxResultBytes)
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
