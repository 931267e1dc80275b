package idempotency

import "context"

// Capacity is the DynamoDB capacity that a record's store requests
// consumed: read and write request units on an on-demand table (capacity
// units on a provisioned one), the units DynamoDB bills. A store adds what
// each request consumed to the Capacity of the request's context (see
// WithCapacity), as DynamoDB reported it or, where DynamoDB reports nothing
// (a failed condition, a cancelled transaction), as its documented rules
// compute it from the item sizes.
type Capacity struct {
	Read, Write float64
}

// Add adds o to c.
func (c *Capacity) Add(o Capacity) {
	c.Read += o.Read
	c.Write += o.Write
}

type capacityKey struct{}

// WithCapacity returns a context whose store requests add the capacity they
// consume to c. The requests of one record run one at a time; c is not
// safe for concurrent use, so give each record its own.
func WithCapacity(ctx context.Context, c *Capacity) context.Context {
	return context.WithValue(ctx, capacityKey{}, c)
}

// AddCapacity adds the capacity a store request consumed to the Capacity
// of ctx (see WithCapacity), if it has one.
func AddCapacity(ctx context.Context, consumed Capacity) {
	if c, ok := ctx.Value(capacityKey{}).(*Capacity); ok {
		c.Add(consumed)
	}
}
