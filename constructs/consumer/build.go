package consumer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// builds memoizes the bootstrap directory of each entry for the life of the
// process, so that an app with several consumers of one handler, or a test
// binary that synthesizes many stacks, runs `go build` once per entry.
var builds = struct {
	sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// bootstrapDir returns the directory holding the `bootstrap` built from the
// main package in entry, building it on first use in this process.
func bootstrapDir(entry string) (string, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return "", fmt.Errorf("entry %q: %w", entry, err)
	}
	builds.Lock()
	defer builds.Unlock()
	if dir, ok := builds.dirs[abs]; ok {
		return dir, nil
	}
	dir, err := buildBootstrap(abs)
	if err != nil {
		return "", err
	}
	builds.dirs[abs] = dir
	return dir, nil
}

// buildRoot is where bootstraps are built: one directory per entry, in the
// user's cache directory (or the temporary directory).
func buildRoot() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "idempotent-consumer", "bootstrap")
	}
	return filepath.Join(os.TempDir(), "idempotent-consumer", "bootstrap")
}

// buildBootstrap builds the main package in the absolute directory entry
// for provided.al2023 on arm64, reproducibly, and returns a directory that
// holds only the resulting `bootstrap`: the directory is keyed by entry, so
// the asset hash CDK computes over it is the hash of the binary. The binary
// is written next to its final place and renamed over it, so concurrent
// builds of one entry (two test binaries, say) never expose a partial file.
func buildBootstrap(entry string) (string, error) {
	info, err := os.Stat(entry)
	if err != nil {
		return "", fmt.Errorf("entry %s: %w; Entry must be the directory of the handler's main package", entry, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("entry %s is not a directory; Entry must be the directory of the handler's main package", entry)
	}
	sum := sha256.Sum256([]byte(entry))
	dir := filepath.Join(buildRoot(), filepath.Base(entry)+"-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	defer os.RemoveAll(tmp)

	out := filepath.Join(tmp, "bootstrap")
	cmd := exec.Command("go", "build",
		"-tags", "lambda.norpc",
		"-trimpath",
		"-buildvcs=false",
		"-ldflags", "-s -w",
		"-o", out,
		".")
	cmd.Dir = entry
	// Later entries win over the inherited ones.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build of %s for linux/arm64 failed (%v):\n%s", entry, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(out, filepath.Join(dir, "bootstrap")); err != nil {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	return dir, nil
}
