package core_test

import (
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// TestWarningIDsAreStable: users acknowledge warnings by id
// (Annotations.AcknowledgeWarning); a renamed id brings an acknowledged
// warning back.
func TestWarningIDsAreStable(t *testing.T) {
	for got, want := range map[string]string{
		core.WarnTableImported: "idempotent-consumer:tableImported", core.WarnTableTTL: "idempotent-consumer:tableTTL",
		core.WarnTablePartitionScope: "idempotent-consumer:tablePartitionScope", core.WarnLayerUnreadable: "idempotent-consumer:layerArchitectureUnknown",
		core.WarnTransactionalTableImported: "idempotent-consumer:transactionalTableImported",
		core.WarnQueueUnreadable:            "idempotent-consumer:queueUnreadable", core.WarnQueueSizeUnset: "idempotent-consumer:queueSizeUnset",
		core.WarnWindowShorterThanRetention: "idempotent-consumer:windowShorterThanRetention",
		core.WarnSourcePolicyUnwritable:     "idempotent-consumer:sourcePolicyUnwritable",
	} {
		if got != want {
			t.Errorf("warning id %q changed to %q", want, got)
		}
	}
}
