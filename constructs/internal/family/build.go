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

// NewTable returns the given table, or creates one in scope (ids.Table;
// with GlobalTable, the MRSC table of ids.GlobalTable, created in its first
// Region and imported in the others), and claims the construct's namespace
// on it: a namespace taken on the table in the app is refused (on an MRSC
// table, in the stack's Region: the construct of each Region shares it),
// and a transactional grant on it to another grantee keeps off this
// construct's records. On an MRSC table, the stack's Region must be one of
// its replicas', and the first construct of the app on it in its home
// Region creates its sweeper. Call it once the construct exists (its path
// is the runtime's Consumer).
func (s *Settings) NewTable(scope constructs.Construct) awsdynamodb.ITable {
	t, region := s.Table, ""
	if s.Strong() {
		region = s.localRegion(scope)
	}
	switch {
	case t == nil && s.global.set:
		t = s.globalTable(scope, region)
	case t == nil:
		t = table.New(scope, ids.Table, s.Removal)
	}
	if err := table.ClaimNamespace(scope, t, s.Runtime, region); err != nil {
		panic(fmt.Errorf("%s %q: %w", s.Kind.Name, s.ID, err))
	}
	if s.Strong() && region == s.homeRegion(t) {
		s.sweep(scope, t)
	}
	return t
}

// Warn adds the warnings to scope's annotations.
func Warn(scope constructs.IConstruct, warnings []Warning) {
	for _, w := range warnings {
		awscdk.Annotations_Of(scope).AddWarningV2(jsii.String(w.ID), jsii.String(w.Message), nil)
	}
}
