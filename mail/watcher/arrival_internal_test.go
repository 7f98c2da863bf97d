package watcher

import (
	"testing"
	"time"
)

// A message's arrival is its INTERNALDATE, narrowed within that whole
// second by the previous search that did not find it, and never later
// than the moment it was read.
func TestArrival(t *testing.T) {
	sec := time.Date(2026, 12, 1, 17, 59, 58, 0, time.UTC)
	read := sec.Add(10 * time.Second)
	for _, tc := range []struct {
		name                  string
		internal, after, want time.Time
		read                  time.Time
	}{
		{"no earlier search", sec, time.Time{}, sec, read},
		{"an earlier search in an earlier second", sec, sec.Add(-3 * time.Second), sec, read},
		{"an earlier search within the second", sec, sec.Add(400 * time.Millisecond), sec.Add(400 * time.Millisecond), read},
		{"an earlier search in a later second", sec, sec.Add(2 * time.Second), sec, read},
		{"a server clock ahead of the host's", sec.Add(time.Hour), time.Time{}, read, read},
		{"no INTERNALDATE", time.Time{}, time.Time{}, read, read},
	} {
		if got := arrival(tc.internal, tc.after, tc.read); !got.Equal(tc.want) {
			t.Errorf("%s: arrival(%v, %v, %v) = %v, want %v", tc.name, tc.internal, tc.after, tc.read, got, tc.want)
		}
	}
}
