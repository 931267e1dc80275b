package build

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// writeCounter counts the writes on the connections it dials.
type writeCounter struct {
	net.Conn
	n *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// opaque is a body net/http cannot see into, as the SDK's is.
type opaque struct{ io.Reader }

func (opaque) Close() error { return nil }

// TestOneWriteSendsHeadersAndBodyTogether: a request whose body net/http
// cannot see into takes two writes, and one through oneWrite; the server
// receives the same body.
func TestOneWriteSendsHeadersAndBodyTogether(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
	}))
	defer srv.Close()
	var writes atomic.Int64
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return writeCounter{c, &writes}, err
	}}}
	const body = `{"TableName":"idempotency","Item":{"pk":{"S":"charge#o-1"}}}`
	for _, tc := range []struct {
		name   string
		client interface {
			Do(*http.Request) (*http.Response, error)
		}
		writes int64
	}{{"net/http alone", client, 2}, {"oneWrite", oneWrite{client}, 1}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		req.Body, req.ContentLength = opaque{strings.NewReader(body)}, int64(len(body))
		writes.Store(0)
		resp, err := tc.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if w := writes.Load(); w != tc.writes || got.Load() != body {
			t.Errorf("%s: %d writes, body %q; want %d writes and the body", tc.name, w, got.Load(), tc.writes)
		}
	}
}
