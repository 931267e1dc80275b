package sqsbatch

import (
	"errors"
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// misconfigured returns a function error for the first record that met an
// error wrapping outcome.ErrMisconfigured, or nil.
func misconfigured(reports []report) error {
	for i, r := range reports {
		if errors.Is(r.err, outcome.ErrMisconfigured) {
			return fmt.Errorf("record %d of the batch: %w", i, r.err)
		}
		for j, rr := range r.records {
			if errors.Is(rr.err, outcome.ErrMisconfigured) {
				return fmt.Errorf("record %d of the batch (S3 record %d): %w", i, j, rr.err)
			}
		}
	}
	return nil
}
