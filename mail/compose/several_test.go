package compose_test

import (
	"slices"
	"testing"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/story"
)

// TestN8_StoryOfANightWithTwoDoctors: the end mail's story tells each
// Doctor's protection by name when there are several, and the saves as the
// Doctors' (N8); with one Doctor it reads as it always did.
func TestN8_StoryOfANightWithTwoDoctors(t *testing.T) {
	t.Parallel()
	en := lang.Get(lang.Default)
	n := story.Night{Number: 1, Kill: "Alice", Saved: 2,
		Protections: []story.Protection{{By: "Bob", Target: "Alice"}, {By: "Dave", Target: "Alice"}},
		Shots:       []story.Shot{{By: "Carol", Target: "Alice"}, {By: "Erin", Target: ""}}}
	got := compose.NightLines(en, n, true, 2)
	want := []string{
		"The Mafia chose to kill Alice.",
		"Bob, the Doctor, protected Alice.",
		"Dave, the Doctor, protected Alice.",
		"Carol, the Vigilante, shot Alice.",
		"Erin, the Vigilante, held fire.",
		"The Doctors' protections blocked 2 attacks.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("two Doctors:\n%q\nwant\n%q", got, want)
	}
	// Before the end, only what the dawn told.
	if got := compose.NightLines(en, story.Night{Saved: 1}, false, 2); !slices.Equal(got, []string{"A Doctor's protection saved a life."}) {
		t.Errorf("in progress: %q", got)
	}
	one := story.Night{Kill: "Alice", Saved: 1, Protections: []story.Protection{{By: "Bob", Target: "Alice"}}}
	if got := compose.NightLines(en, one, true, 1); !slices.Contains(got, "The Doctor protected Alice.") || !slices.Contains(got, "The Doctor's protection saved a life.") {
		t.Errorf("one Doctor: %q", got)
	}
}
