package dynamostore

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Capacity: every request asks for ReturnConsumedCapacity=TOTAL and adds
// what DynamoDB reports to the request's context (idempotency.AddCapacity).
// DynamoDB reports nothing for a write whose condition failed (a duplicate's
// reserve, a stale worker's complete or release) or for a cancelled
// transaction, yet bills them; the store then computes the units from the
// item sizes by the rules of the DynamoDB Developer Guide:
//
//   - an item's size is the sum of its attribute names' and values' sizes:
//     a string is its UTF-8 bytes, a number about one byte per two
//     significant digits plus one, a binary its bytes, a boolean or null one
//     byte, a list or map 3 bytes plus its elements;
//   - a write consumes one unit per KB (1,024 bytes) of the larger of the
//     item before and after it, rounded up, at least one; a write whose
//     condition failed consumes the same, by the larger of the item in the
//     table and the one written ("Capacity unit consumption for write
//     operations": a failed conditional write still consumes write units);
//   - a strongly consistent read consumes one unit per 4 KB, rounded up, at
//     least one, also when no item is found;
//   - a transaction performs two underlying writes of every item (prepare
//     and commit), so each action costs twice its write units ("Capacity
//     management for transactions"). The guide does not say what a cancelled
//     transaction consumes; the store counts it as if it had committed, an
//     assumption, the upper bound.
//
// The same rules compute a successful request's units when the server
// reports none (the emulators); a test checks them against a server that
// reports them.

// observeCapacity, for tests, sees what the server reported (nil: nothing)
// beside what the store computed, for every request.
var observeCapacity func(reported *idempotency.Capacity, computed idempotency.Capacity)

// reported adds what the server reported, or computed when it reported
// reportedWrite reports the capacity of a conditional write that returned
// err: DynamoDB's figure (consumed, read only when the write succeeded) or
// the computed one when it reported none, and the computed one when the
// condition failed; nothing for another error, which may have written
// nothing.
func reportedWrite(ctx context.Context, err error, consumed func() *types.ConsumedCapacity, computed idempotency.Capacity) {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		reported(ctx, false, one(consumed()), computed)
	case errors.As(err, &ccf):
		reported(ctx, false, nil, computed)
	}
}

// nothing.
func reported(ctx context.Context, read bool, cc []types.ConsumedCapacity, computed idempotency.Capacity) {
	var got idempotency.Capacity
	seen := false
	for _, c := range cc {
		switch {
		case c.ReadCapacityUnits != nil || c.WriteCapacityUnits != nil:
			seen = true
			got.Add(idempotency.Capacity{Read: deref(c.ReadCapacityUnits), Write: deref(c.WriteCapacityUnits)})
		case c.CapacityUnits != nil && read:
			seen = true
			got.Read += *c.CapacityUnits
		case c.CapacityUnits != nil:
			seen = true
			got.Write += *c.CapacityUnits
		}
	}
	if observeCapacity != nil {
		if seen {
			observeCapacity(&got, computed)
		} else {
			observeCapacity(nil, computed)
		}
	}
	if !seen {
		got = computed
	}
	idempotency.AddCapacity(ctx, got)
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// writeUnits is what a write of items of these sizes consumes: the larger,
// per KB rounded up, at least one.
func writeUnits(sizes ...int) float64 {
	return units(max(0, maxOf(sizes)), 1024)
}

// readUnits is what a strongly consistent read of an item of this size (0:
// none found) consumes.
func readUnits(size int) float64 {
	return units(size, 4096)
}

func units(size, per int) float64 {
	return float64(max(1, (size+per-1)/per))
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// itemSize is an item's size by DynamoDB's rules.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sizeOfAll(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sizeOfAll(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sizeOfAll(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + len(v.Value) + itemSize(v.Value)
	}
	return 0
}

// numberSize is about one byte per two significant digits, plus one (and
// one for a negative number); leading and trailing zeros do not count, nor
// an exponent. It reads the number in place (a request's numbers are sized
// for every record, twice for a completed one).
func numberSize[T string | []byte](s T) int {
	first, last := -1, -1 // the first and last non-zero digits, counted among the digits
	digits := 0
	for i := 0; i < len(s) && s[i] != 'e' && s[i] != 'E'; i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			if c != '0' {
				if first < 0 {
					first = digits
				}
				last = digits
			}
			digits++
		}
	}
	if first < 0 {
		return 1
	}
	size := 1 + (last-first+2)/2
	if len(s) > 0 && s[0] == '-' {
		size++
	}
	return size
}

// intSize is numberSize of n written in decimal.
func intSize(n int64) int {
	var buf [20]byte
	return numberSize(strconv.AppendInt(buf[:0], n, 10))
}

// sizeOfAll is the sum of size over a set's members.
func sizeOfAll[T any](members []T, size func(T) int) int {
	n := 0
	for _, m := range members {
		n += size(m)
	}
	return n
}
