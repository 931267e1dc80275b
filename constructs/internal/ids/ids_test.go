package ids_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
)

// pinned is every construct id with the value deployed stacks hold: a
// public contract, since renaming one replaces the resource (the table with
// its records) in every deployed stack.
var pinned = map[string][2]string{
	"Table": {ids.Table, "Table"}, "LogGroup": {ids.LogGroup, "LogGroup"}, "Role": {ids.Role, "Role"},
	"Function": {ids.Function, "Function"}, "KeySecret": {ids.KeySecret, "KeySecret"},
	"ErrorsAlarm": {ids.ErrorsAlarm, "ErrorsAlarm"}, "ThrottlesAlarm": {ids.ThrottlesAlarm, "ThrottlesAlarm"},
	"PayloadMismatchAlarm": {ids.PayloadMismatchAlarm, "PayloadMismatchAlarm"}, "LeaseLostAlarm": {ids.LeaseLostAlarm, "LeaseLostAlarm"},
	"BadInputAlarm": {ids.BadInputAlarm, "BadInputAlarm"}, "ExpiredAlarm": {ids.ExpiredAlarm, "ExpiredAlarm"},
	"Dashboard": {ids.Dashboard, "Dashboard"},

	"Topic": {ids.Topic, "Topic"}, "TopicKey": {ids.TopicKey, "TopicKey"}, "Queue": {ids.Queue, "Queue"},
	"DeadLetterQueue":             {ids.DeadLetterQueue, "DeadLetterQueue"},
	"SubscriptionDeadLetterQueue": {ids.SubscriptionDeadLetterQueue, "SubscriptionDeadLetterQueue"},
	"DeadLetterQueueAlarm":        {ids.DeadLetterQueueAlarm, "DeadLetterQueueAlarm"},
	"SubscriptionDLQAlarm":        {ids.SubscriptionDLQAlarm, "SubscriptionDeadLetterQueueAlarm"},
	"OldestMessageAlarm":          {ids.OldestMessageAlarm, "OldestMessageAlarm"},
	"DeadLetteredUnstartedAlarm":  {ids.DeadLetteredUnstartedAlarm, "DeadLetteredUnstartedAlarm"},
	"Rule":                        {ids.Rule, "Rule"}, "EventDeadLetterQueue": {ids.EventDeadLetterQueue, "EventDeadLetterQueue"},
	"EventFailedInvocationsAlarm":       {ids.EventFailedInvocationsAlarm, "EventFailedInvocationsAlarm"},
	"EventSentToDeadLetterQueueAlarm":   {ids.EventSentToDeadLetterQueueAlarm, "EventSentToDeadLetterQueueAlarm"},
	"EventFailedToDeadLetterQueueAlarm": {ids.EventFailedToDeadLetterQueueAlarm, "EventFailedToDeadLetterQueueAlarm"},
	"EventDeadLetterQueueAlarm":         {ids.EventDeadLetterQueueAlarm, "EventDeadLetterQueueAlarm"},
	"BucketNotifications":               {ids.BucketNotifications, "IdempotentConsumerBucketNotifications"},
	"NotificationsHandlerLogs":          {ids.NotificationsHandlerLogs, "BucketNotificationsHandlerLogs"},

	"EndpointFunction": {ids.EndpointFunction, "Handler"}, "FunctionURL": {ids.FunctionURL, "Url"}, "HTTPAPI": {ids.HTTPAPI, "Api"},
	"Stage": {ids.Stage, "Stage"}, "AccessLogs": {ids.AccessLogs, "AccessLogs"}, "JwtAuthorizer": {ids.JwtAuthorizer, "JwtAuthorizer"},
	"ServerErrorsAlarm": {ids.ServerErrorsAlarm, "ServerErrorsAlarm"}, "SignatureAlarm": {ids.SignatureAlarm, "SignatureFailuresAlarm"},
	"InProgressAlarm": {ids.InProgressAlarm, "InProgressAlarm"},

	"FailureBucket": {ids.FailureBucket, "FailureBucket"}, "FailureAccessLogs": {ids.FailureAccessLogs, "FailureAccessLogs"},
	"IteratorAgeAlarm": {ids.IteratorAgeAlarm, "IteratorAgeAlarm"}, "FailureAlarm": {ids.FailureAlarm, "FailureAlarm"},
	"FailureMetricsFilter": {ids.FailureMetricsFilter, "OnFailure"},

	"OutputNotStoredAlarm": {ids.OutputNotStoredAlarm, "OutputNotStoredAlarm"}, "StoreFailedAlarm": {ids.StoreFailedAlarm, "StoreFailedAlarm"},

	"GlobalTable": {ids.GlobalTable, "GlobalTable"}, "Sweepers": {ids.Sweepers, "IdempotencySweepers"},
	"SweeperPrefix": {ids.SweeperPrefix, "IdempotencySweeper"}, "SweeperFunction": {ids.SweeperFunction, "Function"},
	"SweeperLogGroup": {ids.SweeperLogGroup, "LogGroup"}, "SweeperRole": {ids.SweeperRole, "Role"},
	"SweeperSchedule": {ids.SweeperSchedule, "Schedule"}, "SweeperErrorsAlarm": {ids.SweeperErrorsAlarm, "ErrorsAlarm"},
}

// TestConstructIDsAreStable: every id keeps the value deployed stacks hold.
func TestConstructIDsAreStable(t *testing.T) {
	for name, p := range pinned {
		if got, want := p[0], p[1]; got != want {
			t.Errorf("construct id %s changed from %q to %q: every deployed stack would replace the resource", name, want, got)
		}
	}
}

// TestEveryIDIsPinned: an id added to the package without a pin above
// fails, so that no id escapes TestConstructIDsAreStable.
func TestEveryIDIsPinned(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ids.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				declared++
				if _, ok := pinned[n.Name]; !ok {
					t.Errorf("construct id %s is not pinned: add it, with its value, to pinned", n.Name)
				}
			}
		}
	}
	if declared != len(pinned) {
		t.Errorf("ids.go declares %d ids, pinned has %d: remove the pins of ids that are gone", declared, len(pinned))
	}
}
