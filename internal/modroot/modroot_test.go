package modroot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := modroot.Find(deep); err == nil || !strings.Contains(err.Error(), "no go.mod at or above "+deep) {
		t.Errorf("Find(%s) in a tree without go.mod = %q, %v; want an error that names the directory", deep, got, err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "go.mod"), []byte("module a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{deep, filepath.Join(root, "a")} {
		if got, err := modroot.Find(dir); err != nil || got != filepath.Join(root, "a") {
			t.Errorf("Find(%s) = %q, %v; want %s", dir, got, err, filepath.Join(root, "a"))
		}
	}
}

func TestOfWorkingDirectory(t *testing.T) {
	got, err := modroot.OfWorkingDirectory()
	if err != nil {
		t.Fatal(err)
	}
	// This package's directory is internal/modroot of the library's module.
	if wd, _ := os.Getwd(); filepath.Join(got, "internal", "modroot") != wd {
		t.Errorf("OfWorkingDirectory() = %s from %s", got, wd)
	}
}
