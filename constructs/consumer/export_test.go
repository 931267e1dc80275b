package consumer

import "github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"

// BuildBootstrap builds entry without the per-process memo, so that a test
// can build twice.
var BuildBootstrap = bundle.Build

// ForgetBuilds empties the per-process memo of built entries.
var ForgetBuilds = bundle.Forget
