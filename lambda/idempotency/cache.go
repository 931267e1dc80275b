package idempotency

import (
	"container/list"
	"sync"
	"time"
)

// completedCache is a bounded LRU of completed keys, so that repeats seen by
// the same execution environment skip the store. It only ever holds
// COMPLETED facts, which cannot change within their business window.
type completedCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *cacheEntry
	byKey map[string]*list.Element
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
	return &completedCache{size: size, order: list.New(), byKey: make(map[string]*list.Element, size)}
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
		c.order.Remove(el)
		delete(c.byKey, key)
		return cacheEntry{}, false
	}
	c.order.MoveToFront(el)
	return *e, true
}

func (c *completedCache) put(e cacheEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.key]; ok {
		*el.Value.(*cacheEntry) = e
		c.order.MoveToFront(el)
		return
	}
	c.byKey[e.key] = c.order.PushFront(&e)
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*cacheEntry).key)
	}
}
