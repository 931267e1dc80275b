// Command sweeper is the sweeper function's bootstrap: it deletes the
// expired idempotency records of a table that has no TTL (a multi-Region
// strongly consistent global table), one bounded run per invocation
// (package sweep).
package main

import "github.com/idempotent-consumer/idempotent-consumer/lambda/sweep"

func main() { sweep.Start() }
