// Command poll is the least a Go bootstrap does before its first event: one
// GET of the Runtime API's next invocation (net/http, as aws-lambda-go
// polls), nothing else. It is not a handler: `make bench` starts it beside
// the bootstraps (bench/cmd/coldstart) as the floor of a Go process's cold
// init on the machine that measures, the part of every figure that no
// handler's code can remove.
package main

import (
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get("http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/invocation/next")
	if err != nil {
		os.Exit(1)
	}
	_ = resp.Body.Close()
}
