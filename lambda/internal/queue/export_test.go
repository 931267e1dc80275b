package queue

import "time"

// SetClock sets the transport's clock of h (Handler.now), for a test that
// drives receives on a clock of its own.
func SetClock[T any](h *Handler[T], now func() time.Time) { h.now = now }
