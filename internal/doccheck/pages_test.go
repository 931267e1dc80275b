package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sizes a newcomer can read: README.md is the landing page, each page
// under docs/ one source or one concern.
const (
	maxREADMELines = 300
	maxPageLines   = 600
)

// pageProblems returns what keeps the pages under root from being
// navigable: README.md or a page under docs/ longer than its bound, or a
// page that README.md does not link to.
func pageProblems(root string) ([]string, error) {
	pages, err := docPages(root)
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	linked := map[string]bool{}
	for _, m := range linkRef.FindAllStringSubmatch(string(readme), -1) {
		linked[filepath.ToSlash(filepath.Clean(m[1]))] = true
	}
	var out []string
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		lines, bound := strings.Count(string(text), "\n"), maxPageLines
		if page == "README.md" {
			bound = maxREADMELines
		} else if !linked[page] {
			out = append(out, fmt.Sprintf("%s: README.md does not link to it", page))
		}
		if lines > bound {
			out = append(out, fmt.Sprintf("%s: %d lines, more than %d: move a part to a page of its own", page, lines, bound))
		}
	}
	return out, nil
}

// TestPagesAreNavigable: README.md is at most 300 lines, each page under
// docs/ at most 600, and README.md links to every page.
func TestPagesAreNavigable(t *testing.T) {
	problems, err := pageProblems(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestPageProblemsFindsThem: a page README does not link to, and pages
// over their bounds, are found.
func TestPageProblemsFindsThem(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"README.md":          "# R\n\n[queues](docs/queues.md)\n" + strings.Repeat("x\n", maxREADMELines),
		"docs/queues.md":     strings.Repeat("q\n", maxPageLines+1),
		"docs/unlinked.md":   "# U\n",
		"docs/sub/ignore.md": "not a page of docs/ itself\n",
	})
	problems, err := pageProblems(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: 303 lines, more than 300: move a part to a page of its own",
		"docs/queues.md: 601 lines, more than 600: move a part to a page of its own",
		"docs/unlinked.md: README.md does not link to it",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
