package idempotency

import (
	"container/list"
	"strings"
	"sync"
	"time"
)

// cacheMaxBytes bounds the memory of the completed-key cache, whatever its
// size: an entry can hold a 2 KiB key and a 4 KiB result. The cache owns
// the strings it keeps (copies), so that the bound is one on what it
// retains.
const cacheMaxBytes = 64 << 20

// cacheEntryOverhead approximates what an entry costs besides its strings:
// the list element, the map slot and the entry's own fields.
const cacheEntryOverhead = 160

// completedCache is a bounded LRU of completed keys, so that repeats seen by
// the same execution environment skip the store. It only ever holds
// COMPLETED facts, which cannot change within their business window. It
// grows as it fills, up to size entries and maxBytes bytes.
type completedCache struct {
	mu       sync.Mutex
	size     int
	maxBytes int
	bytes    int        // the accounted size of the entries held
	order    *list.List // front = most recent; values are *cacheEntry
	byKey    map[string]*list.Element
}

type cacheEntry struct {
	key       string
	hash      string
	result    string
	expiresAt time.Time
}

func newCompletedCache(size int) *completedCache {
	if size <= 0 {
		return nil
	}
	return &completedCache{size: size, maxBytes: cacheMaxBytes, order: list.New(), byKey: make(map[string]*list.Element)}
}

// cost is the accounted size of e.
func (e *cacheEntry) cost() int {
	return len(e.key) + len(e.hash) + len(e.result) + cacheEntryOverhead
}

// get returns the entry of key if it is still within its business window.
func (c *completedCache) get(key string, now time.Time) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return cacheEntry{}, false
	}
	e := el.Value.(*cacheEntry)
	if e.expiresAt.Unix() < now.Unix() {
		c.remove(el)
		return cacheEntry{}, false
	}
	c.order.MoveToFront(el)
	return *e, true
}

// put keeps e, a copy of its strings: a key, hash or result that is a
// substring of a larger string (a result cut from an API's response) would
// otherwise keep the whole of it alive, beyond what the bound counts.
func (c *completedCache) put(e cacheEntry) {
	if c == nil {
		return
	}
	e.key, e.hash, e.result = strings.Clone(e.key), strings.Clone(e.hash), strings.Clone(e.result)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.key]; ok {
		c.remove(el)
	}
	c.byKey[e.key] = c.order.PushFront(&e)
	c.bytes += e.cost()
	for c.order.Len() > c.size || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

// remove drops the entry of el.
func (c *completedCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.bytes -= e.cost()
}
