package consumer_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// TestBootstrapIsAStaticELFOfItsArchitectureAloneInItsDirectory: arm64
// builds an AArch64 binary, x86_64 (GOARCH amd64) an x86-64 one, each in a
// directory of its own.
func TestBootstrapIsAStaticELFOfItsArchitectureAloneInItsDirectory(t *testing.T) {
	dirs := map[string]bool{}
	for goarch, machine := range map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64} {
		t.Run(goarch, func(t *testing.T) {
			dir := bootstrapIsStaticELF(t, goarch, machine)
			if dirs[dir] {
				t.Errorf("two architectures share the directory %s", dir)
			}
			dirs[dir] = true
		})
	}
}

func bootstrapIsStaticELF(t *testing.T, goarch string, machine elf.Machine) string {
	dir, err := consumer.BuildBootstrap(handlerDir, goarch)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "bootstrap" {
		t.Fatalf("asset directory %s holds %v, want only bootstrap", dir, entries)
	}
	path := filepath.Join(dir, "bootstrap")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o111 == 0 {
		t.Errorf("bootstrap mode %v is not executable", info.Mode())
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 {
		t.Errorf("bootstrap is %v %v, want %v ELFCLASS64", f.Machine, f.Class, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("bootstrap has an ELF interpreter: it is not statically linked (CGO_ENABLED=0)")
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("bootstrap has a symbol table: it was not linked with -s")
	}
	t.Logf("bootstrap: %d bytes", info.Size())
	return dir
}

// TestTwoBuildsGiveTheSameAssetHash builds the handler twice, outside the
// per-process memo, and synthesizes a stack after each build: the bytes,
// the fingerprint and the template's S3 key must not change.
func TestTwoBuildsGiveTheSameAssetHash(t *testing.T) {
	var keys, prints []string
	var binaries [][]byte
	for i := range 2 {
		consumer.ForgetBuilds()
		dir, err := consumer.BuildBootstrap(handlerDir, "arm64")
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		binaries = append(binaries, b)
		cdktest.Must(t, func() {
			prints = append(prints, *awscdk.FileSystem_Fingerprint(jsii.String(dir), nil))
			app, err := cdktest.NewApp(filepath.Join(outRoot, "hash", string(rune('a'+i))))
			if err != nil {
				t.Fatal(err)
			}
			stack := awscdk.NewStack(app, jsii.String("Hash"), nil)
			consumer.NewIdempotentConsumer(stack, jsii.String("C"), &consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(handlerDir)}})
			fns := assertions.Template_FromStack(stack, nil).FindResources(jsii.String("AWS::Lambda::Function"), nil)
			for _, fn := range *fns {
				code := (*fn)["Properties"].(map[string]any)["Code"].(map[string]any)
				keys = append(keys, code["S3Key"].(string))
			}
		})
	}
	if !bytes.Equal(binaries[0], binaries[1]) {
		t.Error("two builds of the same source gave different binaries")
	}
	if prints[0] != prints[1] {
		t.Errorf("fingerprints differ: %s, %s", prints[0], prints[1])
	}
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Errorf("S3 keys differ: %v", keys)
	}
	if keys[0] != prints[0]+".zip" {
		t.Errorf("S3 key %s is not the directory fingerprint %s", keys[0], prints[0])
	}
}

// construct builds a consumer of entry in a new app and returns the panic's
// message, if any.
func construct(t *testing.T, name, entry string) (msg string, panicked bool) {
	t.Helper()
	return cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, name))
		if err != nil {
			panic(err)
		}
		consumer.NewIdempotentConsumer(awscdk.NewStack(app, jsii.String("S"), nil), jsii.String("C"),
			&consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(entry)}})
	})
}

// TestSynthRefusesAHandlerWithoutTheLibrary builds a real bootstrap that
// does not import the library: the construct refuses it, naming Entry.
func TestSynthRefusesAHandlerWithoutTheLibrary(t *testing.T) {
	entry := filepath.Join(t.TempDir(), "nolibrary")
	if err := writeModule(entry, "", "package main\n\nfunc main() {}\n"); err != nil {
		t.Fatal(err)
	}
	msg, panicked := construct(t, "nolibrary", entry)
	if !panicked {
		t.Fatal("NewIdempotentConsumer accepted a handler without the library")
	}
	t.Log(msg)
	for _, w := range []string{
		`IdempotentConsumer "C": entry ` + entry + ": ",
		"the handler's bootstrap (its main module example.com/nolibrary) links no package of github.com/idempotent-consumer/idempotent-consumer",
		"rule: a handler must be built on the library",
		"fix: point Entry at the main package of a handler built on",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("message does not contain %q:\n%s", w, msg)
		}
	}
}

// TestSynthAcceptsTheExampleHandler bundles app/cmd/charge, built in the
// library's own module: a working tree, accepted.
func TestSynthAcceptsTheExampleHandler(t *testing.T) {
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if msg, panicked := construct(t, "charge", filepath.Join(root, "app", "cmd", "charge")); panicked {
		t.Fatal(msg)
	}
}

// TestSynthAcceptsAHandlerReplacedByADirectory bundles the tests' stub
// handler, of another module whose go.mod replaces the library by this
// working tree: what a user developing both sides at once does. Accepted: a
// working tree is not compared at synth.
func TestSynthAcceptsAHandlerReplacedByADirectory(t *testing.T) {
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if msg, panicked := construct(t, "replaced", handlerDir); panicked {
		t.Fatal(msg)
	}
	// The case is the one named: the bootstrap records the replace.
	dir, err := consumer.BuildBootstrap(handlerDir, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(filepath.Join(dir, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	const lib = "github.com/idempotent-consumer/idempotent-consumer"
	if !slices.ContainsFunc(bi.Deps, func(m *debug.Module) bool {
		return m.Path == lib && m.Replace != nil && m.Replace.Path == root
	}) {
		t.Errorf("the bootstrap's build info does not replace %s by %s:\n%v", lib, root, bi)
	}
}

// TestTwoCheckoutsGiveTheSameAssetHash: the library's own example handler,
// built from two copies of the module at different paths (two checkouts,
// two machines), is the same binary, so a deploy from either changes
// nothing.
func TestTwoCheckoutsGiveTheSameAssetHash(t *testing.T) {
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var binaries [][]byte
	for _, checkout := range []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "deeper", "b")} {
		// The part of the module the handler builds from: the example
		// handler (app/cmd), the library (lambda), the public contract
		// (contract) and the contract and helpers it shares with the
		// constructs (internal).
		for _, d := range []string{"lambda", "app", "contract", "internal"} {
			if err := os.CopyFS(filepath.Join(checkout, d), os.DirFS(filepath.Join(root, d))); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"go.mod", "go.sum"} {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(checkout, f), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		dir, err := consumer.BuildBootstrap(filepath.Join(checkout, "app", "cmd", "charge"), "arm64")
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		binaries = append(binaries, b)
	}
	if !bytes.Equal(binaries[0], binaries[1]) {
		t.Fatal("the example handler built from two checkouts at different paths differs")
	}
}

// TestBundleRefuses: what package bundle refuses of Entry.
func TestBundleRefuses(t *testing.T) {
	failsWhen(t, []refusal{{
		name: "entry does not exist",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Entry = jsii.String(filepath.Join(outRoot, "no-such-dir"))
		},
		want: []string{"no-such-dir", "no such file or directory", "Entry must be the directory"},
	}, {
		name:   "entry does not build",
		change: func(p *consumer.IdempotentConsumerProps) { p.Entry = jsii.String(brokenDir) },
		want:   []string{"go build of " + brokenDir + " for linux/arm64 failed", "undefined: notDeclaredAnywhere"},
	}, {
		name:   "entry is not a main package",
		change: func(p *consumer.IdempotentConsumerProps) { p.Entry = jsii.String(libraryDir) },
		want:   []string{"entry " + libraryDir + " holds package orders, not a main package", "point Entry at the directory of the handler's package main"},
	}})
}
