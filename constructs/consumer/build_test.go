package consumer_test

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/internal/cdktest"
)

func TestBootstrapIsAStaticArm64ELFAloneInItsDirectory(t *testing.T) {
	dir, err := consumer.BuildBootstrap(handlerDir)
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
	if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 {
		t.Errorf("bootstrap is %v %v, want EM_AARCH64 ELFCLASS64", f.Machine, f.Class)
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
}

// TestTwoBuildsGiveTheSameAssetHash builds the handler twice, outside the
// per-process memo, and synthesizes a stack after each build: the bytes,
// the fingerprint and the template's S3 key must not change.
func TestTwoBuildsGiveTheSameAssetHash(t *testing.T) {
	var keys, prints []string
	var binaries [][]byte
	for i := range 2 {
		consumer.ForgetBuilds()
		dir, err := consumer.BuildBootstrap(handlerDir)
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
			consumer.NewIdempotentConsumer(stack, jsii.String("C"), &consumer.IdempotentConsumerProps{Entry: jsii.String(handlerDir)})
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
