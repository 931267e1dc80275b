package family

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
)

// The defaults of core.Props, in one place: every construct of the family
// reads them from here, and core.Props's doc comments state each value
// (the runtime settings' own defaults are package contract's; a construct's
// own props have their defaults in its package).
const (
	// DefaultMemorySize is the function's memory, in MiB.
	DefaultMemorySize = 256
	// DefaultTimeout is the function's timeout, for a queue or stream
	// consumer and a step.
	DefaultTimeout = 30 * time.Second
	// DefaultEndpointTimeout is an IdempotentEndpoint's: a caller waits.
	DefaultEndpointTimeout = 10 * time.Second
	// DefaultEndpointReservedConcurrency bounds an IdempotentEndpoint, and
	// so its URL (a function URL has no other throttle); the consumers
	// reserve none by default.
	DefaultEndpointReservedConcurrency = 10
	// DefaultLogRetention is the function's log group's.
	DefaultLogRetention = awslogs.RetentionDays_ONE_MONTH
	// DefaultRemovalPolicy is the table's (and the stream consumer's
	// failure bucket's) the construct creates: its records outlive the
	// stack.
	DefaultRemovalPolicy = awscdk.RemovalPolicy_RETAIN
	// DefaultLogLevel is the function's application log level.
	DefaultLogLevel = awslambda.ApplicationLogLevel_INFO
	// DefaultTracing is the function's tracing mode.
	DefaultTracing = awslambda.Tracing_ACTIVE
	// DefaultPartitionValuePrefix prefixes the Namespace in the default
	// TableFixedKeyValue of a construct whose record key is in the sort
	// key (TableKeyInSortKey): "idempotency#<Namespace>", a partition per
	// construct.
	DefaultPartitionValuePrefix = "idempotency#"
)
