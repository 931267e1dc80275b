package kinesis_test

import (
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
)

// The entry points' tests' contract (contracttest).
var (
	settings = contracttest.Settings
	getenv   = contracttest.Getenv
)
