package templates

import (
	"bytes"
	"encoding/base32"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tparse "text/template/parse"

	"github.com/mafiamail/mafiamail/lang"
)

// freshFooters gives the test a cache of its own for the footers, holding
// at most max bytes, and puts the package's back when it ends.
func freshFooters(t *testing.T, max int) *footerCache {
	t.Helper()
	saved := footers
	footers = newFooterCache(max)
	t.Cleanup(func() { footers = saved })
	return footers
}

// footerKey is the key footer gives v's footer in English text.
func footerKey(t *testing.T, v footerView) []byte {
	t.Helper()
	k, err := v.key("en", 't', false)
	if err != nil {
		t.Fatalf("the footer of %#v cannot be keyed: %v", v, err)
	}
	return k
}

// TestFooterKeptForItsReaderAlone: a reader's footer laid out for one mail
// is handed to their next mail that shows the same footer, and never to
// another reader, whose addresses differ.
func TestFooterKeptForItsReaderAlone(t *testing.T) {
	c := freshFooters(t, footerCacheBytes)
	alice := message(t, &Section{Kind: "vote", Name: "Alice", Target: "Bob"})
	if _, err := Render("vote", alice); err != nil {
		t.Fatal(err)
	}
	if c.hits != 0 || c.misses != 2 {
		t.Fatalf("first mail: %d hits, %d misses; want 0 and 2 (text and HTML laid out)", c.hits, c.misses)
	}
	again := message(t, &Section{Kind: "post", Name: "Carol", Text: "Bob is quiet."})
	r, err := Render("post", again)
	if err != nil {
		t.Fatal(err)
	}
	if c.hits != 2 {
		t.Errorf("Alice's next mail found %d footers kept, want 2", c.hits)
	}
	if !strings.Contains(r.Text, alice.Footer.Private) {
		t.Errorf("Alice's next mail lacks her private address:\n%s", r.Text)
	}
	bob := message(t, &Section{Kind: "post", Name: "Carol", Text: "Bob is quiet."})
	bob.Reader = Reader{Name: "Bob", Slot: 2}
	bob.Footer.Thread = "host+dec26-t-bobbobbobb@example.org"
	bob.Footer.Private = "host+dec26-p-bobbobbobb@example.org"
	r, err = Render("post", bob)
	if err != nil {
		t.Fatal(err)
	}
	if c.hits != 2 || c.misses != 4 {
		t.Errorf("Bob's mail: %d hits, %d misses in all; want 2 and 4", c.hits, c.misses)
	}
	for _, part := range []string{r.Text, r.HTML} {
		if strings.Contains(part, "abcdefghij") {
			t.Errorf("Bob's mail holds Alice's address:\n%s", part)
		}
		if !strings.Contains(part, "bobbobbobb") {
			t.Errorf("Bob's mail lacks his address:\n%s", part)
		}
	}
}

// TestFooterSharedByReadersWhoStandAlike: the players of a game who stand
// alike share one footer, laid out once, and each copy reads exactly as a
// footer laid out for its reader alone, with their own addresses and no
// one else's; a game whose footer the placeholder cannot stand in (its
// name reads as the placeholder) keeps its footers reader by reader.
func TestFooterSharedByReadersWhoStandAlike(t *testing.T) {
	encoding := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	for _, game := range []string{"dec26", "0000000000000000"} {
		t.Run(game, func(t *testing.T) {
			var views []*View
			var tokens []string
			for i := range 25 {
				token := encoding.EncodeToString([]byte(fmt.Sprintf("reader%04d", i)))
				m := message(t, &Section{Kind: "post", Name: "Carol", Text: "Bob is quiet."})
				m.Game, m.Reader = game, Reader{Name: fmt.Sprintf("Player %d", i), Slot: i + 1}
				m.Footer.Thread = "host+" + game + "-t-" + token + "@example.org"
				m.Footer.Private = "host+" + game + "-p-" + token + "@example.org"
				views, tokens = append(views, m), append(tokens, token)
			}
			// Laid out for each reader alone: no token to share by, and
			// a cache that keeps nothing.
			want := layOutAlone(t, "post", views)
			c := freshFooters(t, footerCacheBytes)
			for i, m := range views {
				m.Footer.Token = tokens[i]
				r, err := Render("post", m)
				if err != nil {
					t.Fatal(err)
				}
				if r != want[i] {
					t.Errorf("reader %d's copy:\n%s\nlaid out for them alone:\n%s", i, r.Text+r.HTML, want[i].Text+want[i].HTML)
				}
				for j, other := range tokens {
					if in := strings.Contains(r.Text+r.HTML, other); in != (i == j) {
						t.Errorf("reader %d's copy holds reader %d's token: %t", i, j, in)
					}
				}
			}
			shared := game == "dec26"
			if wantHits := 2 * (len(views) - 1); shared && c.hits != wantHits {
				t.Errorf("%d footers found kept, want %d (text and HTML laid out once)", c.hits, wantHits)
			}
			if !shared && c.misses != 2*len(views) {
				t.Errorf("%d footers laid out reader by reader, want %d", c.misses, 2*len(views))
			}
		})
	}
}

// TestKeptFootersReadAsLaidOut: every kind of footer, in every language,
// reads the same whether it was laid out for the mail or kept from an
// earlier one, kept for its reader or shared.
func TestKeptFootersReadAsLaidOut(t *testing.T) {
	zurich, err := time.LoadLocation("Europe/Zurich")
	if err != nil {
		t.Fatal(err)
	}
	until := Moment{T: time.Date(2026, 12, 9, 18, 0, 0, 0, time.UTC), Zone: zurich}
	var views []*View
	for _, tag := range lang.Tags() {
		for _, ch := range []Channel{Thread, Private, Mafia, Host} {
			for _, reader := range []Reader{{Name: "Alice", Slot: 1}, {Name: "Ref", Referee: true}, {Name: "Olga", Observer: true}} {
				for _, f := range []Footer{
					{},
					{Dead: true},
					{Over: true},
					{Over: true, Talk: true, TalkUntil: until},
					{ReplyThread: true},
					{RepliesTo: "the town thread", ReplyAddress: "host+dec26-t-abcdefghij@example.org"},
					{Mafia: "host+dec26-m-abcdefghij@example.org", Commands: Suggest(Situation{Channel: ch, Phase: "night", Alive: true, Role: "Mafioso"})},
				} {
					m := message(t, &Section{Kind: "vote", Name: "Alice", Target: "Bob"})
					m.Lang, m.Channel, m.Reader = tag, ch, reader
					f.Channel, f.Thread, f.Private = ch, m.Footer.Thread, m.Footer.Private
					if f.Commands == nil && ch == Thread {
						f.Commands = ThreadCommands
					}
					m.Footer = f
					// And its twin that names the token its addresses
					// carry: kept shared (see footer).
					twin := *m
					twin.Footer.Token = "abcdefghij"
					views = append(views, m, &twin)
				}
			}
		}
	}
	want := layOutAlone(t, "vote", views)
	c := freshFooters(t, footerCacheBytes)
	for round := range 2 {
		for i, m := range views {
			r, err := Render("vote", m)
			if err != nil {
				t.Fatal(err)
			}
			if r != want[i] {
				t.Errorf("round %d, %s %s footer %+v for %+v:\nkept:\n%s\nlaid out:\n%s", round, m.Lang, m.Channel, m.Footer, m.Reader, r.Text+r.HTML, want[i].Text+want[i].HTML)
			}
		}
	}
	if c.hits != 2*len(views) {
		t.Errorf("the second round found %d footers kept, want %d", c.hits, 2*len(views))
	}
}

// TestFooterKeyHoldsEveryField: a footer view that differs in any field,
// however deep, has a key of its own. A field added to Footer or Reader is
// keyed without more ado, or, if appendKey cannot write it, makes every
// footer be laid out for its mail (which TestFooterKeptForItsReaderAlone
// would show).
func TestFooterKeyHoldsEveryField(t *testing.T) {
	base := footerView{Game: "dec26", Reader: footerReader{Player: true},
		Footer: Footer{Channel: Thread, Thread: "t@example.org", Private: "p@example.org", Commands: ThreadCommands}}
	baseKey := footerKey(t, base)
	var visit func(path string, v reflect.Value)
	visit = func(path string, v reflect.Value) {
		if v.Kind() == reflect.Struct && v.Type() != timeType {
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					visit(path+"."+v.Type().Field(i).Name, v.Field(i))
				}
			}
			return
		}
		saved := reflect.New(v.Type()).Elem()
		saved.Set(v)
		change(t, path, v)
		if bytes.Equal(footerKey(t, base), baseKey) {
			t.Errorf("changing %s leaves the footer's key as it was", path)
		}
		v.Set(saved)
	}
	visit("footerView", reflect.ValueOf(&base).Elem())
	if !bytes.Equal(footerKey(t, base), baseKey) {
		t.Fatal("the view was not restored")
	}
}

// change sets v, a leaf of a footer view, to another value.
func change(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)))
	case v.Type() == locationType:
		v.Set(reflect.ValueOf(time.FixedZone("X", 3600)))
	case v.Kind() == reflect.String:
		v.SetString(v.String() + "x")
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	case v.Kind() == reflect.Int:
		v.SetInt(v.Int() + 1)
	case v.Kind() == reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	default:
		t.Fatalf("%s: the test cannot change a %s", path, v.Type())
	}
}

// TestFooterTemplatesReadOnlyTheirView: the footer of every language, in
// both formats, reads nothing of the message but the game, the reader and
// their footer (what footerView holds and the key covers), and hands the
// whole message to nothing. A translation that reads more would fail to
// lay out in the branch that does, so it fails here first.
func TestFooterTemplatesReadOnlyTheirView(t *testing.T) {
	allowed := map[string]bool{}
	for i := range reflect.TypeFor[footerView]().NumField() {
		allowed[reflect.TypeFor[footerView]().Field(i).Name] = true
	}
	for _, tag := range lang.Tags() {
		s := setFor(tag)
		for format, tree := range map[string]*tparse.Tree{"text": s.text.Lookup("footer").Tree, "html": s.html.Lookup("footer").Tree} {
			footerReads(tree.Root, true, func(what string) {
				if !allowed[what] {
					t.Errorf("%s %s footer reads %q of the message", tag, format, what)
				}
			})
		}
	}
}

// footerReads reports what n reads of the view at the template's root:
// fields of the root dot while top holds (outside a with or range), fields
// of $ anywhere, and the root itself handed on whole ("." or "$"), or a
// template called ("template NAME"), which this test does not follow.
func footerReads(n tparse.Node, top bool, report func(string)) {
	switch n := n.(type) {
	case *tparse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			footerReads(c, top, report)
		}
	case *tparse.ActionNode:
		footerReads(n.Pipe, top, report)
	case *tparse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			footerReads(c, top, report)
		}
	case *tparse.CommandNode:
		for _, a := range n.Args {
			footerReads(a, top, report)
		}
	case *tparse.IfNode:
		footerReads(n.Pipe, top, report)
		footerReads(n.List, top, report)
		footerReads(n.ElseList, top, report)
	case *tparse.WithNode:
		footerReads(n.Pipe, top, report)
		footerReads(n.List, false, report)
		footerReads(n.ElseList, top, report)
	case *tparse.RangeNode:
		footerReads(n.Pipe, top, report)
		footerReads(n.List, false, report)
		footerReads(n.ElseList, top, report)
	case *tparse.TemplateNode:
		report("template " + n.Name)
	case *tparse.ChainNode:
		footerReads(n.Node, top, report)
	case *tparse.FieldNode:
		if top {
			report(n.Ident[0])
		}
	case *tparse.DotNode:
		if top {
			report(".")
		}
	case *tparse.VariableNode:
		if n.Ident[0] == "$" {
			if len(n.Ident) == 1 {
				report("$")
			} else {
				report(n.Ident[1])
			}
		}
	}
}

// TestFootersForgetTheLeastRecentlyUsed: the cache holds no more than its
// bound, and what it forgets first is what was used longest ago.
func TestFootersForgetTheLeastRecentlyUsed(t *testing.T) {
	text := strings.Repeat("f", 90)
	c := newFooterCache(3 * 100) // three footers of 100 bytes with their keys
	for _, k := range []string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"} {
		c.put(k, text)
	}
	if _, ok := c.get([]byte("aaaaaaaaaa")); !ok {
		t.Fatal("a footer was forgotten before the cache was full")
	}
	c.put("dddddddddd", text) // forgets b, the least recently used
	for k, want := range map[string]bool{"aaaaaaaaaa": true, "bbbbbbbbbb": false, "cccccccccc": true, "dddddddddd": true} {
		if _, ok := c.get([]byte(k)); ok != want {
			t.Errorf("%s kept: %v, want %v", k, ok, want)
		}
	}
	if c.size > c.max || c.size != 300 || len(c.entries) != 3 || c.order.Len() != 3 {
		t.Errorf("size %d of %d, %d entries, %d in order; want 300, 3, 3", c.size, c.max, len(c.entries), c.order.Len())
	}
	c = newFooterCache(0)
	c.put("a", text)
	if _, ok := c.get([]byte("a")); ok || c.size != 0 {
		t.Errorf("a cache of no bytes kept a footer (size %d)", c.size)
	}
}

// layOutAlone renders each view with a footer cache that keeps nothing, so
// that every footer is laid out for its own mail: what a kept footer must
// read as.
func layOutAlone(t *testing.T, kind string, views []*View) []Rendered {
	t.Helper()
	freshFooters(t, 0)
	var out []Rendered
	for _, m := range views {
		r, err := Render(kind, m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
