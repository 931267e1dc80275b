package propdoc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/propdoc"
)

func TestField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.go")
	src := "package p\n\n// P are props.\ntype P struct {\n\t// Size of it.\n\t//\n\t// Default: 256\n\t// MiB.\n\tSize, Other *float64\n\tBare int\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"Size", "Other"} {
		if got, err := propdoc.Field(path, "P", field); err != nil || got != "Size of it. Default: 256 MiB." {
			t.Errorf("Field(%s) = %q, %v; want the doc comment as one line", field, got, err)
		}
	}
	for _, tc := range [][2]string{{"P", "Missing"}, {"Q", "Size"}, {"P", "Bare"}} {
		if got, err := propdoc.Field(path, tc[0], tc[1]); err == nil {
			t.Errorf("Field(%s.%s) = %q, want an error", tc[0], tc[1], got)
		}
	}
	if _, err := propdoc.Field(filepath.Join(t.TempDir(), "none.go"), "P", "Size"); err == nil {
		t.Error("Field of a missing file: want an error")
	}
}
