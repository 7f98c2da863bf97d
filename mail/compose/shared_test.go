package compose_test

import (
	"sync"
	"testing"
)

// A scenario's whole game is composed once per run of the package, by
// the first test that reads it, and the tests after it read the same
// game: the goldens, the invariants, the public copies, the town's mail
// and the end mail all look at what one play composed. Playing it for
// each of them made the same mail again and again, at the cost of most of
// the package's run. The tests that read the plays run in parallel: a
// test waits for a play another test has begun.

// play is one scenario's game in one language, played at most once.
type play struct {
	once sync.Once
	// by is the test that played it; done tells that the play ran to its
	// end (a play that fails stops its test there).
	by   string
	done bool
	h    *harness
	g    *goldens
}

var plays sync.Map // "scenario/tag" → *play

// shared returns the game that run plays of a scenario in language tag,
// played by the first caller. The harness and the goldens are copies bound
// to t, so that what a test checks with them fails that test; the mail
// they hold is shared and must be read only.
func shared(t *testing.T, scenario, tag string, run func(*testing.T, string) (*harness, *goldens)) (*harness, *goldens) {
	t.Helper()
	v, _ := plays.LoadOrStore(scenario+"/"+tag, new(play))
	p := v.(*play)
	p.once.Do(func() {
		p.by = t.Name()
		p.h, p.g = run(t, tag)
		p.done = true
	})
	if !p.done {
		t.Fatalf("the %s game in %q failed to play in %s", scenario, tag, p.by)
	}
	h, g := *p.h, *p.g
	h.t, g.t = t, t
	return &h, &g
}
