package core

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// The defaults of Props, in one place: every construct of the family reads
// them from here (the runtime settings' own defaults are package
// contract's).
const (
	// DefaultMemorySize is the function's memory, in MiB.
	DefaultMemorySize = 256
	// DefaultTimeout is the function's timeout, for a queue or stream
	// consumer.
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
	// PartitionKey is the string partition key of the table the construct
	// creates, and of a given Table unless it (or TablePartitionKey) says
	// otherwise.
	PartitionKey = schema.Key
	// TTLAttribute is the attribute DynamoDB TTL is enabled on, in the
	// table the construct creates, and in a given Table unless it (or
	// TableTTLAttribute) says otherwise.
	TTLAttribute = schema.TTL
)

// Construct ids of what every construct of the family creates, relative to
// it: a public contract (renaming one replaces the resource, and for the
// table its records, in every deployed stack). What a construct's source
// adds has its ids in the construct's package.
const (
	// IDTable is the table the construct creates when none is given.
	IDTable = "Table"
	// IDLogGroup is the function's log group.
	IDLogGroup = "LogGroup"
	// IDRole is the function's execution role (unless Role is given).
	IDRole = "Role"
	// IDKeySecret is the secret under which keys are hashed (HashKeys).
	IDKeySecret = "KeySecret"
	// IDErrorsAlarm is the alarm on the function's errors.
	IDErrorsAlarm = "ErrorsAlarm"
	// IDThrottlesAlarm is the alarm on the function's throttles.
	IDThrottlesAlarm = "ThrottlesAlarm"
	// IDPayloadMismatchAlarm is the alarm on payload mismatches (the
	// consumers').
	IDPayloadMismatchAlarm = "PayloadMismatchAlarm"
	// IDLeaseLostAlarm is the alarm on lost leases (the consumers').
	IDLeaseLostAlarm = "LeaseLostAlarm"
	// IDBadInputAlarm is the alarm on bad input (the consumers').
	IDBadInputAlarm = "BadInputAlarm"
	// IDExpiredAlarm is the alarm on records as old as the window (the
	// consumers').
	IDExpiredAlarm = "ExpiredAlarm"
	// IDDashboard is the construct's dashboard (Dashboard).
	IDDashboard = "Dashboard"
)

// Ids of the synth warnings of the shared props, for
// awscdk.Annotations_Of(scope).AcknowledgeWarning. A construct's own
// warnings have their ids in its package.
const (
	// WarnTableImported: an imported Table, whose key schema the
	// construct cannot read at synth; the warning names the schema it
	// assumes (the props' declarations, or the construct's design).
	WarnTableImported = "idempotent-consumer:tableImported"
	// WarnTableTTL: a shared Table without TTL, or an imported one whose
	// TTL the construct cannot check at synth.
	WarnTableTTL = "idempotent-consumer:tableTTL"
	// WarnTablePartitionScope: the record key is in the sort key
	// (TableKeyInSortKey), so IAM scopes the construct to its partition
	// value, not to its namespace.
	WarnTablePartitionScope = "idempotent-consumer:tablePartitionScope"
	// WarnLayerUnreadable: an imported layer, whose architectures the
	// construct cannot check at synth.
	WarnLayerUnreadable = "idempotent-consumer:layerArchitectureUnknown"
	// WarnTransactionalTableImported: an imported table declared for
	// transactional writes beside an idempotency table of the app, whose
	// grant cannot exclude the records of the app's other namespaces.
	WarnTransactionalTableImported = "idempotent-consumer:transactionalTableImported"
)
