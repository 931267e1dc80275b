package dynamostore

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/replay"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// numberSizeByDefinition is DynamoDB's size of a number, as the Developer
// Guide's "Item sizes" puts it, written plainly: the significant digits
// (leading and trailing zeros dropped, the exponent ignored), one byte per
// two, plus one, plus one for a negative number.
func numberSizeByDefinition(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	digits := strings.Trim(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s), "0")
	if digits == "" {
		return 1
	}
	size := 1 + (len(digits)+1)/2
	if strings.HasPrefix(s, "-") {
		size++
	}
	return size
}

func TestNumberSize(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "10", "100", "1234", "12345", "-5", "0.001200", "-0.00120", "1e10", "1.5E-3",
		"1764590400", "1764590400123", "12345678901234567890123456789012345678", "007", "+12"} {
		if got, want := numberSize(s), numberSizeByDefinition(s); got != want {
			t.Errorf("numberSize(%q) = %d, want %d", s, got, want)
		}
		if got, want := numberSize([]byte(s)), numberSizeByDefinition(s); got != want {
			t.Errorf("numberSize([]byte(%q)) = %d, want %d", s, got, want)
		}
	}
}

func FuzzNumberSize(f *testing.F) {
	for _, s := range []string{"0", "-0.00120", "1e10", "12345"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := numberSize(s), numberSizeByDefinition(s); got != want {
			t.Errorf("numberSize(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestRecordSizeIsTheItemsSize: recordSize, which the store sums without
// building the item, is the size of the item marshal builds, for each
// status, with and without a result, in each of the table's key designs.
func TestRecordSizeIsTheItemsSize(t *testing.T) {
	fixed := func(ns string) string { return "fixed#" + ns }
	stores := map[string]*Store{
		"partition key":          New(nil, "t"),
		"partition and sort key": New(nil, "t", WithPartitionKey("PK"), WithSortKey("SK", fixed), WithTTLAttribute("expires")),
		"key in the sort key":    New(nil, "t", WithPartitionKey("PK"), WithKeyInSortKey("SK", fixed)),
	}
	now := time.Unix(1764590400, 123e6)
	for name, s := range stores {
		for _, rec := range []idempotency.Record{
			{Key: "charge#o-1", Owner: "owner-1", Status: idempotency.StatusInProgress, PayloadHash: hashSizeExample, LeaseUntil: now, ExpiresAt: now.Add(time.Hour), TTL: now.Add(8 * 24 * time.Hour)},
			{Key: "charge#o-2", Owner: "owner-2", Status: idempotency.StatusCompleted, PayloadHash: hashSizeExample, ExpiresAt: now, TTL: now},
			{Key: "c#" + strings.Repeat("k", 300), Owner: "o", Status: idempotency.StatusCompleted, PayloadHash: "k2:x", Result: "ch_1", ExpiresAt: time.Unix(0, 0), TTL: time.Unix(-10, 0)},
			reservationOf("charge#o-3", "owner-3"),
		} {
			if got, want := s.recordSize(rec), itemSize(s.marshal(rec)); got != want {
				t.Errorf("%s, %s record %q: recordSize %d, the item's size %d", name, rec.Status, rec.Key, got, want)
			}
		}
	}
}

// TestTheLargestRecordFitsAnItem: the largest record the store writes fits
// DynamoDB's item (limits.MaxItemBytes, 400 KB): in each key design, with
// attribute names of DynamoDB's longest (255 bytes), the longest record key
// and fixed key value the contract accepts, a result of
// limits.LargestResultBytes (the guard's bound), the longest replay audit
// (replay.MaxBytes) and a lease.
func TestTheLargestRecordFitsAnItem(t *testing.T) {
	name := func(c string) string { return strings.Repeat(c, 255) }
	fixed := func(n int) func(string) string { return func(string) string { return strings.Repeat("f", n) } }
	stores := map[string]*Store{
		"partition key":          New(nil, "t", WithPartitionKey(name("p")), WithTTLAttribute(name("t"))),
		"partition and sort key": New(nil, "t", WithPartitionKey(name("p")), WithSortKey(name("s"), fixed(limits.MaxSortKeyBytes)), WithTTLAttribute(name("t"))),
		"key in the sort key":    New(nil, "t", WithPartitionKey(name("p")), WithKeyInSortKey(name("s"), fixed(limits.MaxKeyBytes)), WithTTLAttribute(name("t"))),
	}
	now := time.Unix(1764590400, 0)
	for design, s := range stores {
		keyBytes := limits.MaxKeyBytes
		if design == "key in the sort key" {
			keyBytes = limits.MaxSortKeyBytes
		}
		rec := idempotency.Record{
			Key: "n#" + strings.Repeat("k", keyBytes-2), Owner: strings.Repeat("o", 32), Status: idempotency.StatusInProgress,
			PayloadHash: hashSizeExample, LeaseUntil: now, ExpiresAt: now, TTL: now,
			Result: strings.Repeat("r", limits.LargestResultBytes), Replay: strings.Repeat("a", replay.MaxBytes),
		}
		if n := s.recordSize(rec); n > limits.MaxItemBytes {
			t.Errorf("%s: the largest record is %d bytes, more than DynamoDB's item of %d", design, n, limits.MaxItemBytes)
		} else {
			t.Logf("%s: %d bytes of %d", design, n, limits.MaxItemBytes)
		}
	}
}
