package doccheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the tables of contents of README.md and DESIGN.md")

// tocFiles are the long documents that open with a table of contents.
var tocFiles = []string{"README.md", "DESIGN.md"}

// The table of contents sits between these two lines, after the document's
// opening paragraphs.
const (
	tocBegin = "<!-- contents: go test ./internal/doccheck -run TableOfContents -update -->"
	tocEnd   = "<!-- end of contents -->"
)

// TestTableOfContents: README.md and DESIGN.md each list their sections
// (## and ###) in order, each linked to its GitHub anchor, so that the list
// can never name a section that moved or leave one out.
func TestTableOfContents(t *testing.T) {
	root := repoRoot(t)
	for _, name := range tocFiles {
		path := filepath.Join(root, name)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := withContents(string(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got == string(text) {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: its table of contents does not list its sections; run go test ./internal/doccheck -run TableOfContents -update", name)
	}
}

// TestTableOfContentsSeesAChange: a heading added after the contents were
// written makes the document differ from its rewritten self.
func TestTableOfContentsSeesAChange(t *testing.T) {
	doc := "# T\n\n" + tocBegin + "\n" + tocEnd + "\n\n## One\n"
	fresh, err := withContents(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fresh, "- [One](#one)") {
		t.Fatalf("contents of %q: %q", doc, fresh)
	}
	changed := fresh + "\n## Two, and `three`\n"
	again, err := withContents(changed)
	if err != nil {
		t.Fatal(err)
	}
	if again == changed || !strings.Contains(again, "- [Two, and `three`](#two-and-three)") {
		t.Errorf("a new heading was not seen: %q", again)
	}
	if _, err := withContents("# T\n\n## One\n"); err == nil {
		t.Error("a document without the markers was accepted")
	}
}

// withContents returns text with the list between tocBegin and tocEnd
// rewritten from its ## and ### headings (outside code fences).
func withContents(text string) (string, error) {
	begin, end := strings.Index(text, tocBegin), strings.Index(text, tocEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("no table of contents between %q and %q", tocBegin, tocEnd)
	}
	var list strings.Builder
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text[end:], "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		level := strings.Index(line, " ")
		if fenced || (!strings.HasPrefix(line, "## ") && !strings.HasPrefix(line, "### ")) {
			continue
		}
		title := line[level+1:]
		anchor := slug(title)
		if n := seen[anchor]; n > 0 {
			seen[anchor] = n + 1
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		fmt.Fprintf(&list, "%s- [%s](#%s)\n", strings.Repeat("  ", level-2), title, anchor)
	}
	return text[:begin] + tocBegin + "\n\n" + list.String() + "\n" + text[end:], nil
}

var notInAnchor = regexp.MustCompile(`[^\p{L}\p{N} _-]`)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(title string) string {
	return strings.ReplaceAll(notInAnchor.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
}
