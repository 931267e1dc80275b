package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
)

// Effect is the effect of an example handler on an external API: a POST of
// body to Path, with the reservation's key as the Idempotency-Key, answered
// with {"id": "..."}, the result the idempotency record stores. With no API
// (an empty URL: sandbox mode) it logs what it would send and answers an id
// derived from the key.
type Effect struct {
	API    *Client // nil: sandbox mode
	Path   string
	Logger *slog.Logger
}

// NewEffect is an Effect on the API at url (sandbox mode when empty).
func NewEffect(url, path string, logger *slog.Logger) *Effect {
	e := &Effect{Path: path, Logger: logger}
	if url != "" {
		e.API = New(url)
	}
	return e
}

// Do sends body under key and returns the API's id for it.
func (e *Effect) Do(ctx context.Context, key string, body any) (string, error) {
	if e.API == nil {
		sum := sha256.Sum256([]byte(key))
		id := "sandbox_" + hex.EncodeToString(sum[:8])
		e.Logger.InfoContext(ctx, "sandbox effect", slog.String("path", e.Path), slog.String("key", key), slog.String("id", id))
		return id, nil
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := e.API.Post(ctx, e.Path, key, body, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}
