package sqsbatch

import (
	"errors"
	"fmt"
)

// ErrMisconfigured marks an error of a record that no retry of the record
// can fix and that is not the message's fault: the deployment is wrong (for
// example a transactional write to a table the consumer does not declare,
// handler.ErrUndeclaredTable). A batch in which any record met one fails as
// a whole, with a function error that the errors alarm sees, instead of a
// partial failure of that record alone.
var ErrMisconfigured = errors.New("misconfigured")

// misconfigured returns a function error for the first record that met an
// error wrapping ErrMisconfigured, or nil.
func misconfigured(reports []report) error {
	for i, r := range reports {
		if errors.Is(r.err, ErrMisconfigured) {
			return fmt.Errorf("record %d of the batch: %w", i, r.err)
		}
		for j, rr := range r.records {
			if errors.Is(rr.err, ErrMisconfigured) {
				return fmt.Errorf("record %d of the batch (S3 record %d): %w", i, j, rr.err)
			}
		}
	}
	return nil
}
