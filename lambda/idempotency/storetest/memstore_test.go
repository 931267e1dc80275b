package storetest_test

import (
	"sync"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// memoryHarness runs the conformance suite on MemoryStore; wallets live in a
// map changed only by MemoryWrites, under the store's lock.
func memoryHarness(omitOld bool) storetest.Harness {
	var mu sync.Mutex // guards wallets against Balance, which reads outside the store
	wallets := map[string]int{}
	return storetest.Harness{
		NewStore: func(*testing.T) idempotency.Store {
			s := storetest.NewMemoryStore()
			s.OmitOld = omitOld
			return s
		},
		Credit: func(wallet string, amount int) any {
			return storetest.MemoryWrites(func() error {
				mu.Lock()
				defer mu.Unlock()
				wallets[wallet] += amount
				return nil
			})
		},
		Balance: func(_ *testing.T, wallet string) int {
			mu.Lock()
			defer mu.Unlock()
			return wallets[wallet]
		},
	}
}

func TestMemoryStore(t *testing.T) {
	t.Run("OldItemReturned", func(t *testing.T) { storetest.Run(t, memoryHarness(false)) })
	t.Run("GetFallback", func(t *testing.T) { storetest.Run(t, memoryHarness(true)) })
}
