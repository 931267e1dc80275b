package core_test

import (
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// TestConstructIDsAreStable: the ids of what every construct creates are a
// public contract; renaming one replaces the resource (the table with its
// records) in every deployed stack.
func TestConstructIDsAreStable(t *testing.T) {
	for got, want := range map[string]string{
		core.IDTable: "Table", core.IDLogGroup: "LogGroup", core.IDRole: "Role", core.IDKeySecret: "KeySecret",
		core.IDErrorsAlarm: "ErrorsAlarm", core.IDThrottlesAlarm: "ThrottlesAlarm", core.IDPayloadMismatchAlarm: "PayloadMismatchAlarm",
		core.IDLeaseLostAlarm: "LeaseLostAlarm", core.IDBadInputAlarm: "BadInputAlarm", core.IDExpiredAlarm: "ExpiredAlarm",
		core.IDDashboard: "Dashboard",
	} {
		if got != want {
			t.Errorf("construct id %q changed to %q", want, got)
		}
	}
}

// TestWarningIDsAreStable: users acknowledge warnings by id
// (Annotations.AcknowledgeWarning); a renamed id brings an acknowledged
// warning back.
func TestWarningIDsAreStable(t *testing.T) {
	for got, want := range map[string]string{
		core.WarnTableImported: "idempotent-consumer:tableImported", core.WarnTableTTL: "idempotent-consumer:tableTTL",
		core.WarnTablePartitionScope: "idempotent-consumer:tablePartitionScope", core.WarnLayerUnreadable: "idempotent-consumer:layerArchitectureUnknown",
		core.WarnTransactionalTableImported: "idempotent-consumer:transactionalTableImported",
	} {
		if got != want {
			t.Errorf("warning id %q changed to %q", want, got)
		}
	}
}
