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

// ContractVariables returns the environment variables the construct owns.
func ContractVariables() []string {
	var names []string
	for k := range contractProps {
		names = append(names, k)
	}
	return names
}
