// Package bundle builds a handler's Go main package into the `bootstrap` of
// a provided.al2023 function, reproducibly, once per entry and architecture
// in a process, and refuses a bootstrap built on another version of the
// library than the construct's (version.go). Every function of the family
// is bundled by it.
package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

// builds memoizes the bootstrap of each entry and architecture for the life
// of the process,
// with the verdict of its library check, so that an app with several
// consumers of one handler, or a test binary that synthesizes many stacks,
// runs `go build` once per entry and architecture. A failed build is not
// kept: the next consumer of the entry tries again.
var builds = struct {
	sync.Mutex
	dirs map[buildKey]built
}{dirs: map[buildKey]built{}}

// buildKey names one build: the entry's absolute directory and the GOARCH.
type buildKey struct{ entry, goarch string }

// Goarch returns the GOARCH of a Lambda architecture name ("arm64",
// "x86_64"), and whether the construct builds for it.
func Goarch(arch string) (string, bool) {
	switch arch {
	case "arm64":
		return "arm64", true
	case "x86_64":
		return "amd64", true
	}
	return "", false
}

// built is one entry's bootstrap directory and the result of checkBootstrap
// on it.
type built struct {
	dir string
	err error
}

// ResolveEntry returns the absolute directory of entry: entry itself when
// it is absolute; otherwise entry under root, or, when root is empty, under
// the root of the Go module that holds the working directory (the CDK app's
// module, whether `cdk synth` runs at its root or a test runs in one of its
// packages' folders).
func ResolveEntry(entry, root string) (string, error) {
	if filepath.IsAbs(entry) {
		return filepath.Clean(entry), nil
	}
	if root == "" {
		var err error
		if root, err = modroot.OfWorkingDirectory(); err != nil {
			return "", fmt.Errorf("entry %q is relative, and %w; give an absolute Entry, or EntryRoot", entry, err)
		}
	}
	abs, err := filepath.Abs(filepath.Join(root, entry))
	if err != nil {
		return "", fmt.Errorf("entry %q: %w", entry, err)
	}
	return abs, nil
}

// Dir returns the directory holding the `bootstrap` built from the
// main package in the absolute directory entry for linux/goarch, building it
// on first use in this process. It refuses a bootstrap built with a library
// the construct is not compatible with (see checkLibrary).
func Dir(abs, goarch string) (string, error) {
	builds.Lock()
	defer builds.Unlock()
	key := buildKey{abs, goarch}
	b, ok := builds.dirs[key]
	if !ok {
		dir, err := Build(abs, goarch)
		if err != nil {
			return "", err
		}
		b = built{dir: dir, err: checkBootstrap(abs, dir)}
		builds.dirs[key] = b
	}
	if b.err != nil {
		return "", b.err
	}
	return b.dir, nil
}

// buildRoot is where bootstraps are kept: one directory per distinct
// binary, in the user's cache directory (or the temporary directory).
func buildRoot() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "idempotent-consumer", "bootstrap")
	}
	return filepath.Join(os.TempDir(), "idempotent-consumer", "bootstrap")
}

// cacheTTL is how long a bootstrap nobody built again stays in the cache.
const cacheTTL = 7 * 24 * time.Hour

// Build builds the main package in the absolute directory entry
// for provided.al2023 on linux/goarch ("arm64", or "amd64" for x86_64),
// reproducibly, and returns a directory that
// holds only the resulting `bootstrap`, so that the asset hash CDK computes
// over it is the hash of the binary. Directories are named by the binary's
// hash (and the architecture, for a reader of the cache): identical builds
// share one, builds for two architectures never do (their binaries differ,
// and so do their asset hashes), and a build is renamed into place whole,
// so concurrent builds (two test binaries, say) never expose a partial file.
// Directories that no build produced for cacheTTL are removed.
func Build(entry, goarch string) (string, error) {
	info, err := os.Stat(entry)
	if err != nil {
		return "", fmt.Errorf("entry %s: %w; Entry must be the directory of the handler's main package", entry, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("entry %s is not a directory; Entry must be the directory of the handler's main package", entry)
	}
	if err := isMainPackage(entry, goarch); err != nil {
		return "", err
	}
	root := buildRoot()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	tmp, err := os.MkdirTemp(root, ".build-")
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
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build of %s for linux/%s failed (%v):\n%s", entry, goarch, err, strings.TrimSpace(stderr.String()))
	}
	sum, err := fileHash(out)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	dir := filepath.Join(root, filepath.Base(entry)+"-"+goarch+"-"+sum[:16])
	if err := os.Rename(tmp, dir); err != nil && !isExist(err) {
		return "", fmt.Errorf("build %s: %w", entry, err)
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now) // in use: not trimmed
	trim(root, now)
	return dir, nil
}

// isMainPackage returns an error unless the Go package in the directory
// entry is a main package: `go build` of any other writes an archive, not an
// executable, and the function would fail every invocation.
func isMainPackage(entry, goarch string) error {
	cmd := exec.Command("go", "list", "-f", "{{.Name}}", ".")
	cmd.Dir = entry
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list of %s failed (%v):\n%s", entry, err, strings.TrimSpace(stderr.String()))
	}
	if name := strings.TrimSpace(string(out)); name != "main" {
		return fmt.Errorf("entry %s holds package %s, not a main package: its build would be an archive, not an executable, and the function would fail every invocation; point Entry at the directory of the handler's package main (whose main calls sqsbatch.Start)", entry, name)
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isExist reports a rename over a directory another build already made.
func isExist(err error) bool {
	return errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY)
}

// trim removes the cached bootstraps that no build produced for cacheTTL.
// It is best effort: a directory it cannot remove stays.
func trim(root string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > cacheTTL {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// Forget empties the per-process memo of built entries, so that a test can
// build again.
func Forget() {
	builds.Lock()
	defer builds.Unlock()
	clear(builds.dirs)
}

// packageDirs are the directories PackageDir found, by import path.
var packageDirs sync.Map

// PackageDir returns the directory of the Go package importPath as the
// module that holds the working directory resolves it (`go list`): for a
// package of the library, the library's source the app builds with (its
// working tree, or the module cache), so that a function the construct
// adds of its own (the sweeper) is built from the library's version the
// app requires.
func PackageDir(importPath string) (string, error) {
	if dir, ok := packageDirs.Load(importPath); ok {
		return dir.(string), nil
	}
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		return "", fmt.Errorf("find package %s: %w", importPath, err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", importPath)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find package %s from the module at %s (%v): %s; the app's module must require %s", importPath, root, err, strings.TrimSpace(stderr.String()), libraryPath)
	}
	dir := strings.TrimSpace(string(out))
	packageDirs.Store(importPath, dir)
	return dir, nil
}
