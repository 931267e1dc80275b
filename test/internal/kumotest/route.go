package kumotest

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// DefaultAddress is where kumo's services call kumo itself (EventBridge
// delivering to SQS, Step Functions invoking Lambda): localhost:4566, fixed
// when its package is initialised, whatever port the server listens on.
const DefaultAddress = "localhost:4566"

// RouteDefaultAddress routes the connections http.DefaultTransport makes to
// DefaultAddress to the server at serverURL instead, for t's duration:
// kumo's services make those calls with clients on http.DefaultTransport.
// Tests that call it must not run in parallel.
func RouteDefaultAddress(t testing.TB, serverURL string) {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		t.Fatalf("http.DefaultTransport is a %T", http.DefaultTransport)
	}
	routed := base.Clone()
	var d net.Dialer
	routed.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == DefaultAddress {
			addr = u.Host
		}
		return d.DialContext(ctx, network, addr)
	}
	http.DefaultTransport = routed
	t.Cleanup(func() { http.DefaultTransport = base })
}
