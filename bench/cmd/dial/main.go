// Command dial is the least any Go process does before a Runtime API
// request: one TCP connection to the Runtime API and one GET written on it,
// without net/http, whose answer it does not parse. It is not a handler:
// `make bench` starts it beside bench/cmd/poll as the floor of the exec and
// the Go runtime's start on the machine that measures; the difference
// between the two is net/http's.
package main

import (
	"net"
	"os"
)

func main() {
	c, err := net.Dial("tcp", os.Getenv("AWS_LAMBDA_RUNTIME_API"))
	if err != nil {
		os.Exit(1)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: runtime\r\n\r\n")); err != nil {
		os.Exit(1)
	}
	if _, err := c.Read(make([]byte, 512)); err != nil {
		os.Exit(1)
	}
}
