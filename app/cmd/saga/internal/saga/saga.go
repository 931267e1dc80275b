// Package saga is the order saga's steps' common part: the state input
// (an order, and what the earlier steps returned), its key, and the effect
// of a step, a call to the service that the step drives (stock, payments,
// shipping) with the step's record key as the call's Idempotency-Key, as
// such APIs honour it.
//
// Each step of the example's order saga (app/platform's OrderSaga) is a
// main package beside this one that calls step.Start with Key and its
// Effect: reserve-stock, charge, ship, and the compensations refund and
// release-stock, the same fact (the order) under other step names.
package saga

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// Key is the fact of every step: the order's id, never the execution's.
var Key = step.Field("orderId")

// Service is the API a step calls: POST URL+Path with the order, the
// Idempotency-Key header holding the step's record key. A 2xx answer's
// JSON body is the step's output; a 422 whose body is {"error": name}
// with name among Failures is that business failure; any other answer is
// an error the Task's Retry retries (Step.EffectFailed). An empty URL is
// sandbox mode: the call is logged, and its output is {"id": the key}.
type Service struct {
	URL, Path string
	// Failures are the business failures the step may name.
	Failures []string
	HTTP     *http.Client
	Log      *slog.Logger
}

// NewService returns the service at url (sandbox mode when empty).
func NewService(url, path string, failures ...string) *Service {
	return &Service{URL: url, Path: path, Failures: failures, HTTP: &http.Client{Timeout: 10 * time.Second}, Log: slog.Default()}
}

// Effect is the step's effect: one call of the service per fact.
func (s *Service) Effect(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
	if s.URL == "" {
		s.Log.InfoContext(ctx, "sandbox", slog.String("path", s.Path), slog.String("key", r.Key))
		return json.Marshal(map[string]string{"id": r.Key})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+s.Path, bytes.NewReader(input))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", r.Key)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, step.MaxOutputBytes+1))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode/100 == 2:
		return body, nil
	case resp.StatusCode == http.StatusUnprocessableEntity:
		var f struct{ Error, Message string }
		if json.Unmarshal(body, &f) == nil && slices.Contains(s.Failures, f.Error) {
			return nil, step.Fail(f.Error, errors.New(f.Message))
		}
	}
	return nil, fmt.Errorf("POST %s: %s: %s", s.Path, resp.Status, bytes.TrimSpace(body))
}
