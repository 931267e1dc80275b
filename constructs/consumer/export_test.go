package consumer

// BuildBootstrap builds entry without the per-process memo, so that a test
// can build twice.
var BuildBootstrap = buildBootstrap

// ForgetBuilds empties the per-process memo of built entries.
func ForgetBuilds() {
	builds.Lock()
	defer builds.Unlock()
	clear(builds.dirs)
}
