package templates

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

func key(t *testing.T, v any) []byte {
	t.Helper()
	k, err := appendKey(nil, reflect.ValueOf(v))
	if err != nil {
		t.Fatalf("appendKey(%#v): %v", v, err)
	}
	return k
}

// TestKeyTellsValuesApart: values that read differently never share a
// key, however their bytes line up.
func TestKeyTellsValuesApart(t *testing.T) {
	nyc := zone(t)
	at := time.Date(2026, 12, 3, 13, 40, 0, 0, time.UTC)
	pairs := [][2]any{
		{[]string{"ab", "c"}, []string{"a", "bc"}},
		{[]string{"a"}, []string{"a", ""}},
		{Section{Kind: "post", Name: "Al", Text: "ice"}, Section{Kind: "post", Name: "Alice"}},
		{Section{Kind: "post", Self: true}, Section{Kind: "post"}},
		{&Tally{}, (*Tally)(nil)},
		{Moment{T: at}, Moment{T: at.Add(time.Second)}},
		{Moment{T: at}, Moment{T: at.In(nyc)}},
		{Moment{T: at, Own: nyc}, Moment{T: at}},
		{Moment{T: at, Lang: "de"}, Moment{T: at}},
		{Section{Deaths: []Death{{Name: "a"}}}, Section{Deaths: []Death{{Cause: "a"}}}},
	}
	for _, p := range pairs {
		if bytes.Equal(key(t, p[0]), key(t, p[1])) {
			t.Errorf("%#v and %#v share a key", p[0], p[1])
		}
	}
	if !bytes.Equal(key(t, Section{Kind: "post", Name: "Bob"}), key(t, Section{Kind: "post", Name: "Bob"})) {
		t.Error("equal sections have different keys")
	}
}

// TestKeyRefusesWhatItCannotWriteWhole: a value that holds something the
// key cannot say (a map, an interface, a hidden field, the view itself)
// is refused, so that the part holding it is laid out for its reader.
func TestKeyRefusesWhatItCannotWriteWhole(t *testing.T) {
	type hidden struct{ s string }
	type withView struct{ V *View }
	for _, v := range []any{map[string]int{"a": 1}, []any{1}, hidden{"x"}, withView{&View{}}, func() {}} {
		if _, err := appendKey(nil, reflect.ValueOf(v)); err == nil {
			t.Errorf("appendKey(%T) keyed it", v)
		}
	}
	// A section's link to its message is left to the caller: the news
	// key holds the message itself.
	a := key(t, Section{Kind: "vote", Msg: &View{Reader: Reader{Name: "Alice"}}})
	b := key(t, Section{Kind: "vote", Msg: &View{Reader: Reader{Name: "Bob"}}})
	if !bytes.Equal(a, b) {
		t.Error("Section.Msg went into the key")
	}
}

// TestEveryViewFieldIsSortedForTheNews: each field of View is either in
// the news view (the same for every reader given the same news) or the
// reader's own. A field added to View fails here until it is placed: in
// newsView, if it is the same for every reader, or among the reader's.
func TestEveryViewFieldIsSortedForTheNews(t *testing.T) {
	inNews := []string{"Kind", "Game", "Lang", "Channel", "Now", "Headline", "Sections", "main", "headlineSet"}
	readers := []string{"Reader", "Receipt", "Self", "Tally", "Footer", "cache", "keys"}
	var fields []string
	vt := reflect.TypeFor[View]()
	for i := range vt.NumField() {
		fields = append(fields, vt.Field(i).Name)
	}
	for _, f := range fields {
		if !slices.Contains(inNews, f) && !slices.Contains(readers, f) {
			t.Errorf("View.%s is neither in the news view nor the reader's own: place it", f)
		}
	}
	full := message(t, &Section{Kind: "vote", Name: "Alice", Target: "Bob"})
	full.Self, full.Tally, full.Headline, full.Kind, full.Lang = &Self{Alive: true}, &Tally{Day: 1}, "News", "vote", "de"
	full.main, full.headlineSet, full.cache = full.Sections[0], true, NewCache()
	news, shared, restore := newsView(full, func(string) bool { return false })
	defer restore()
	if !shared {
		t.Fatal("a vote's news is not shared")
	}
	nv, fv := reflect.ValueOf(news).Elem(), reflect.ValueOf(full).Elem()
	for i, f := range fields {
		same := reflect.DeepEqual(nv.Field(i).String(), fv.Field(i).String()) &&
			reflect.DeepEqual(nv.Field(i).IsZero(), fv.Field(i).IsZero())
		if slices.Contains(inNews, f) && !same {
			t.Errorf("View.%s is not in the news view", f)
		}
		if slices.Contains(readers, f) && !nv.Field(i).IsZero() {
			t.Errorf("the news view holds the reader's View.%s", f)
		}
	}
	if full.Sections[0].Msg != news {
		t.Error("the sections are not attached to the news view while it is laid out")
	}
	restore()
	if full.Sections[0].Msg != full {
		t.Error("the sections are not attached to their message again")
	}
}

// TestPersonalKinds: a section whose templates read the reader's part of
// the message (their addresses, their tally) is laid out for each copy;
// the common news is not.
func TestPersonalKinds(t *testing.T) {
	for _, l := range lang.All() {
		ls := setFor(l.Tag)
		for _, k := range []string{"role", "digest", "observer"} {
			if !ls.personal[k] {
				t.Errorf("%s: %s reads the reader's footer and is not personal", l.Tag, k)
			}
		}
		for _, k := range []string{"post", "vote", "mafia", "death", "dawn", "close", "zone"} {
			if ls.personal[k] {
				t.Errorf("%s: %s is personal", l.Tag, k)
			}
		}
	}
	for _, c := range []struct {
		ident []string
		want  bool
	}{
		{[]string{"Msg", "Game"}, false},
		{[]string{"$", "Msg", "Main"}, false},
		{[]string{"Msg", "Footer", "Private"}, true},
		{[]string{"$", "Msg", "Reader"}, true},
		{[]string{"Msg"}, true},
		{[]string{"Msg", "Tally"}, true},
		{[]string{"Name"}, false},
	} {
		if got := readsPersonal(c.ident); got != c.want {
			t.Errorf("readsPersonal(%v) = %v, want %v", c.ident, got, c.want)
		}
	}
}

// TestCacheSharesOnlyWhatReadsAlike: copies of one post to its author, to
// two readers, and to a reader with a zone of their own come out as each
// would alone; the news is laid out once for the two readers who read it
// alike, and every copy keeps its own line and footer.
func TestCacheSharesOnlyWhatReadsAlike(t *testing.T) {
	nyc := zone(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 13, 40, 0, 0, time.UTC)
	copyFor := func(name string, slot int, author bool, own *time.Location) *View {
		closes := Moment{T: now.Add(5 * time.Hour), Now: now, Zone: nyc}
		tally := &Tally{Day: 1, Round: "opening", Closes: closes, Living: 4,
			Votes:  []Vote{{Name: "Carol", Target: "Bob"}},
			Counts: []Count{{Name: "Bob", Votes: 1, Voters: []Vote{{Name: "Carol", Target: "Bob"}}}}}
		v := &View{Kind: "post", Game: "dec26", Channel: Thread, Reader: Reader{Name: name, Slot: slot},
			Now:  Moment{T: now, Now: now, Zone: nyc},
			Self: &Self{Phase: "day", Day: 1, Alive: true, Vote: "Bob", Closes: closes},
			Sections: []*Section{
				{Kind: "post", Name: "Alice", Self: author, Text: "Bob has been quiet since the wagon.", At: Moment{T: now, Now: now, Zone: nyc}},
				{Kind: "vote", Name: "Alice", Target: "Bob", Self: author},
			},
			Tally: tally,
			Footer: Footer{Channel: Thread, Thread: "host+dec26-t-" + name + "@example.org",
				Private: "host+dec26-p-" + name + "@example.org", Commands: ThreadCommands},
		}
		if own != nil {
			ShowOwnZone(v, own)
		}
		return v
	}
	readers := []struct {
		name   string
		slot   int
		author bool
		own    *time.Location
	}{{"alice", 1, true, nil}, {"bob", 2, false, nil}, {"carol", 3, false, nil}, {"dave", 4, false, berlin}}
	c := NewCache()
	var got []Rendered
	for _, r := range readers {
		shared, err := c.Render("post", copyFor(r.name, r.slot, r.author, r.own))
		if err != nil {
			t.Fatal(err)
		}
		alone, err := Render("post", copyFor(r.name, r.slot, r.author, r.own))
		if err != nil {
			t.Fatal(err)
		}
		if shared != alone {
			t.Errorf("%s's copy differs when laid out with the others':\n%s\n---\n%s", r.name, shared.Text, alone.Text)
		}
		for _, other := range readers {
			if other.name != r.name && (strings.Contains(shared.Text, "-"+other.name+"@") || strings.Contains(shared.HTML, "-"+other.name+"@")) {
				t.Errorf("%s's copy holds %s's address", r.name, other.name)
			}
		}
		got = append(got, shared)
	}
	if !strings.Contains(got[0].Text, "You write") || strings.Contains(got[1].Text, "You write") {
		t.Errorf("the author's copy and a reader's are not their own:\n%s\n---\n%s", got[0].Text, got[1].Text)
	}
	if !strings.Contains(got[3].Text, "for you") || strings.Contains(got[2].Text, "for you") {
		t.Errorf("the times in the reader's own zone are not theirs alone:\n%s\n---\n%s", got[3].Text, got[2].Text)
	}
	// News: the author's, the readers', dave's (his zone); the tally: the
	// readers' and dave's. Each in text and HTML; carol's copy hits the
	// four parts bob's laid out.
	if c.Misses != 10 || c.Hits != 6 {
		t.Errorf("%d parts laid out, %d shared; want 10 and 6", c.Misses, c.Hits)
	}

	// Under one headline, copies that differ in a section further down
	// (the vote is on the reader) are each their own.
	for _, onReader := range []bool{false, true} {
		v := copyFor("bob", 2, false, nil)
		v.Headline = "News from the thread"
		v.Sections[1].Target, v.Sections[1].Self = "Bob", onReader
		alone := *v
		shared, err := c.Render("post", v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Render("post", &alone)
		if err != nil {
			t.Fatal(err)
		}
		if shared != want {
			t.Errorf("a vote on the reader (%v) is laid out as another copy's:\n%s\n---\n%s", onReader, shared.Text, want.Text)
		}
	}
}
