package consumertest

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
)

// Synthesized is a fixture of Builds, synthesized: its resources, its
// template and its stack's annotations.
type Synthesized struct {
	Fixture
	Template    assertions.Template
	Annotations assertions.Annotations
}

// Loader synthesizes each fixture of Builds once per test binary (every
// synth costs seconds of jsii time), for the tests that read it. Not safe
// for concurrent use: jsii is not either.
type Loader struct {
	// OutRoot is the folder of the fixtures' cloud assemblies, one each.
	OutRoot string
	// Entry is the handler's main package that the consumers bundle.
	Entry string
	// Prepare, when set, is called on each fixture's app before its stack
	// is synthesized (cdk-nag's packs, in internal/testkit/apptest).
	Prepare func(app awscdk.App)

	done map[string]*Synthesized
	errs map[string]string
}

// Load returns the named fixture, synthesized on first use; a fixture that
// failed to build fails every test that loads it, with its message.
func (l *Loader) Load(t testing.TB, name string) *Synthesized {
	t.Helper()
	if msg, failed := l.errs[name]; failed {
		t.Fatalf("fixture %s: %s", name, msg)
	}
	if f, ok := l.done[name]; ok {
		return f
	}
	build, ok := Builds[name]
	if !ok {
		t.Fatalf("no fixture %s", name)
	}
	f := &Synthesized{}
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(l.OutRoot, name))
		if err != nil {
			panic(err)
		}
		f.Stack = awscdk.NewStack(app, jsii.String(name), nil)
		build(&f.Fixture, l.Entry)
		if l.Prepare != nil {
			l.Prepare(app)
		}
		f.Template = assertions.Template_FromStack(f.Stack, nil)
		f.Annotations = assertions.Annotations_FromStack(f.Stack)
	})
	if l.done == nil {
		l.done, l.errs = map[string]*Synthesized{}, map[string]string{}
	}
	if panicked {
		l.errs[name] = msg
		t.Fatalf("fixture %s: %s", name, msg)
	}
	l.done[name] = f
	return f
}
