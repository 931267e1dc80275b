package main

import (
	"strings"
	"testing"
)

// The HTTP part of the demo runs each fact once through its providers'
// retries and the clients' concurrent requests, and its line says so.
func TestHTTPDemo(t *testing.T) {
	rep := runHTTPDemo(3)
	line := rep.line()
	t.Log(line)
	if !rep.ok() || !strings.HasPrefix(line, "http demo OK") || !strings.Contains(line, "doubles 0") {
		t.Fatal(line)
	}
	for _, rt := range rep.routes {
		if rt.unauthorized.Load() == 0 && rt.name != "clients" {
			t.Errorf("%s: the forged delivery was not refused", rt.name)
		}
		if rt.replays.Load() == 0 {
			t.Errorf("%s: no retry was replayed", rt.name)
		}
	}
	if c := rep.routes[3]; c.c422.Load() != 3 {
		t.Errorf("clients: %d×422, want 3 (one reuse of each key)", c.c422.Load())
	}
}
