package core

// Ids of the synth warnings of the family's constructs, for
// awscdk.Annotations_Of(scope).AcknowledgeWarning, in one place: those of
// the shared props, then those of a construct's own source.
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

	// WarnQueueUnreadable: an IdempotentConsumer's imported Queue or
	// DeadLetterQueue, whose size and retention the construct cannot check
	// at synth.
	WarnQueueUnreadable = "idempotent-consumer:queueUnreadable"
	// WarnQueueSizeUnset: an IdempotentConsumer's Queue of the app that
	// sets no MaximumMessageSize.
	WarnQueueSizeUnset = "idempotent-consumer:queueSizeUnset"
	// WarnWindowShorterThanRetention: an IdempotentConsumer's Window
	// shorter than its queue's retention period, so that a backlog older
	// than Window is dead-lettered as expired instead of run.
	WarnWindowShorterThanRetention = "idempotent-consumer:windowShorterThanRetention"
	// WarnSourcePolicyUnwritable: an IdempotentConsumer's EventBridge or
	// S3 source whose queue or key the construct cannot change (an imported
	// Queue, an imported EncryptionKey): their policies must already let
	// the service send, from the rule or the bucket only.
	WarnSourcePolicyUnwritable = "idempotent-consumer:sourcePolicyUnwritable"
)
