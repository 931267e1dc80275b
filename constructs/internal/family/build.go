package family

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
)

// The builders read the settings alone. They panic, as CDK constructs do,
// with the construct's name and id.

// Bundle builds the handler's entry for the function's architecture and
// returns the asset's directory.
func (s *Settings) Bundle() string {
	entry, err := bundle.ResolveEntry(s.Entry, s.EntryRoot)
	if err != nil {
		panic(fmt.Errorf("%s %q: %w", s.Kind.Name, s.ID, err))
	}
	dir, err := bundle.Dir(entry, s.Goarch)
	if err != nil {
		panic(fmt.Errorf("%s %q: %w", s.Kind.Name, s.ID, err))
	}
	return dir
}

// NewTable returns the given table, or creates one in scope (ids.Table),
// and claims the construct's namespace on it: a namespace taken on the
// table in the app is refused, and a transactional grant on it to another
// grantee keeps off this construct's records. Call it once the construct
// exists (its path is the runtime's Consumer).
func (s *Settings) NewTable(scope constructs.Construct) awsdynamodb.ITable {
	t := s.Table
	if t == nil {
		t = table.New(scope, ids.Table, s.Removal)
	}
	if err := table.ClaimNamespace(scope, t, s.Runtime); err != nil {
		panic(fmt.Errorf("%s %q: %w", s.Kind.Name, s.ID, err))
	}
	return t
}

// Warn adds the warnings to scope's annotations.
func Warn(scope constructs.IConstruct, warnings []Warning) {
	for _, w := range warnings {
		awscdk.Annotations_Of(scope).AddWarningV2(jsii.String(w.ID), jsii.String(w.Message), nil)
	}
}
