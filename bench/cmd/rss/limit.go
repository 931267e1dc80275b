package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memCgroup is a memory cgroup of its own for one run's bootstrap, its
// limit the function's memory: what Lambda enforces, so that a bootstrap
// that outgrows it is killed by the kernel's OOM killer, as on Lambda. The
// emulator stays outside it (a wrapper script moves the bootstrap in before
// it execs it).
type memCgroup struct {
	dir  string
	v2   bool
	kind string // how the limit is enforced, for the report
}

// newMemCgroup makes a child of this process's memory cgroup (v2, else v1)
// limited to mb MiB; the error says why neither could be made.
func newMemCgroup(name string, mb int) (*memCgroup, error) {
	parents, err := memoryCgroups()
	if err != nil {
		return nil, err
	}
	var why []string
	for _, p := range parents {
		cg := &memCgroup{dir: filepath.Join(p.dir, name), v2: p.v2}
		if err := cg.create(mb); err != nil {
			why = append(why, err.Error())
			continue
		}
		return cg, nil
	}
	return nil, fmt.Errorf("no writable memory cgroup: %s", strings.Join(why, "; "))
}

func (cg *memCgroup) create(mb int) error {
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return err
	}
	file, kind := "memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes"
	if cg.v2 {
		file, kind = "memory.max", "cgroup v2 memory.max"
	}
	cg.kind = fmt.Sprintf("%s set to the function's memory, the bootstrap alone in the cgroup (a child of %s)", kind, filepath.Dir(cg.dir))
	if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(strconv.Itoa(mb<<20)), 0o644); err != nil {
		_ = os.Remove(cg.dir)
		return fmt.Errorf("%s: %w", filepath.Join(cg.dir, file), err)
	}
	return nil
}

// wrap writes a script that moves itself into the cgroup and execs
// bootstrap (keeping its pid), and returns its path.
func (cg *memCgroup) wrap(dir, bootstrap string) (string, error) {
	script := filepath.Join(dir, "bootstrap-in-cgroup")
	body := fmt.Sprintf("#!/bin/sh\necho $$ > '%s' || exit 1\nexec '%s'\n", filepath.Join(cg.dir, "cgroup.procs"), bootstrap)
	return script, os.WriteFile(script, []byte(body), 0o755)
}

// peak is the cgroup's peak memory use in bytes (the kernel's count: the
// process's pages, its page cache and kernel memory), 0 if unknown.
func (cg *memCgroup) peak() int64 {
	file := "memory.max_usage_in_bytes"
	if cg.v2 {
		file = "memory.peak"
	}
	b, _ := os.ReadFile(filepath.Join(cg.dir, file))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// oomKills is how many processes the cgroup's OOM killer killed.
func (cg *memCgroup) oomKills() int {
	file := "memory.oom_control"
	if cg.v2 {
		file = "memory.events"
	}
	b, _ := os.ReadFile(filepath.Join(cg.dir, file))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "oom_kill" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// remove deletes the cgroup, once its processes are gone.
func (cg *memCgroup) remove() error { return os.Remove(cg.dir) }

type cgroupParent struct {
	dir string
	v2  bool
}

// memoryCgroups are the directories of this process's memory cgroups: the
// v2 one first, when the unified hierarchy has the memory controller.
func memoryCgroups() ([]cgroupParent, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cgroupParent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "" && mounts.v2 != "":
			dir := filepath.Join(mounts.v2, parts[2])
			if ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); strings.Contains(string(ctl), "memory") {
				out = append([]cgroupParent{{dir: dir, v2: true}}, out...)
			}
		case hasField(parts[1], "memory") && mounts.v1 != "":
			out = append(out, cgroupParent{dir: filepath.Join(mounts.v1, parts[2])})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("this process is in no memory cgroup (neither a v2 hierarchy with the memory controller nor a v1 memory hierarchy is mounted)")
	}
	return out, sc.Err()
}

// cgroupMounts are the mount points of the unified (v2) hierarchy and of
// the v1 memory hierarchy, from /proc/self/mounts.
func cgroupMounts() (struct{ v1, v2 string }, error) {
	var m struct{ v1, v2 string }
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return m, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) < 4:
		case f[2] == "cgroup2" && m.v2 == "":
			m.v2 = f[1]
		case f[2] == "cgroup" && hasField(f[3], "memory"):
			m.v1 = f[1]
		}
	}
	return m, nil
}

func hasField(list, name string) bool {
	for _, f := range strings.Split(list, ",") {
		if f == name {
			return true
		}
	}
	return false
}
