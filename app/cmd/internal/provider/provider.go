// Package provider is the example handlers' client for an external API that
// honours idempotency keys, as payment and e-mail APIs do: the same key
// always yields the same answer, so a call repeated after a crash has no
// second effect.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client calls one API at BaseURL.
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// New returns a Client for baseURL with a bounded timeout.
func New(baseURL string) *Client {
	return &Client{BaseURL: baseURL, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Post sends body as JSON to path with the Idempotency-Key header and decodes
// the JSON answer into out. A non-2xx status is an error with the answer's
// text.
func (c *Client) Post(ctx context.Context, path, idempotencyKey string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(answer))
	}
	return json.Unmarshal(answer, out)
}
