package cli

import "runtime/debug"

// ServerGCPercent is the garbage collector's target for a command that
// serves for long (serve, and the bench's host and relay): the heap may
// grow to five times what is live before a collection, where Go's default
// lets it double. A host keeps little live (some megabytes for ten games)
// and allocates much per message it handles, so by default it collected
// every few dozen messages through a backlog, and the collector took more
// of its CPU than SQLite; at five times the peak heap is still some tens
// of megabytes.
const ServerGCPercent = 400

// TuneServerGC sets the collector's target to ServerGCPercent unless the
// GOGC environment variable (read through getenv) sets one, and reports
// whether it did: whoever runs the host on a machine short of memory
// keeps the last word, with GOGC or GOMEMLIMIT, which the runtime reads
// itself.
func TuneServerGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(ServerGCPercent)
	return true
}
