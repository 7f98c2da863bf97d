package reply

import (
	"reflect"
	"strings"
	"testing"
)

func TestAnswersKeepWhatTheyAnswer(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []InlinePart
	}{{
		name: "mutt, inline under a post",
		text: `On Tue, Dec 01, 2026 at 10:00:00AM -0500, Erin (dec26) wrote:
> Erin writes
> > I agree with Bob.
> > Alice jumped on Erin with no reason.

No reason? Alice gave one.

> You have not voted yet. Voting closes Wed 2 Dec 2026 22:00 EST.
>
> -- 
> This is the town thread of game dec26: a plain Reply posts in it.
`,
		want: []InlinePart{{Context: []string{"Erin writes", "I agree with Bob.", "Alice jumped on Erin with no reason."},
			Text: "No reason? Alice gave one."}},
	}, {
		name: "Thunderbird, two answers in a digest",
		text: `On 12/1/26 16:00, Mafia dec26 wrote:
> Digest: 2 posts and 3 votes in the town thread
>
> ▸ Alice writes
> > Day 2. Bob pushed hard on me yesterday.

He did, and he was right to.

> ▸ Bob writes
> > That is a stretch.

Is it?
VOTE Bob

> ▸ Dave votes Bob
`,
		want: []InlinePart{
			{Context: []string{"▸ Alice writes", "Day 2. Bob pushed hard on me yesterday."},
				Text: "He did, and he was right to."},
			{Context: []string{"▸ Bob writes", "That is a stretch."}, Text: "Is it?\nVOTE Bob"},
		},
	}, {
		name: "top-posting is no inline reply",
		text: "VOTE Bob\nHe dodges.\n\nOn Tue, 1 Dec 2026 at 10:00, Mafia <m@x.org> wrote:\n> Day 1 begins\n> VOTE Name\n",
	}, {
		name: "bottom-posting is no inline reply",
		text: "On Tue, 1 Dec 2026 at 10:00, Mafia <m@x.org> wrote:\n> Day 1 begins\n> -- \n> footer\n\nHe dodges.\nSent from my iPhone\n",
	}, {
		name: "an answer below a quote trimmed to what it answers",
		text: "On Tue, 1 Dec 2026 at 10:00, Mafia <m@x.org> wrote:\n> ▸ Dave writes\n> > No reason? Alice gave one.\n>\n\nShe gave one, and it was thin.\nVOTE Alice\n",
		want: []InlinePart{{Context: []string{"▸ Dave writes", "No reason? Alice gave one."}, Text: "She gave one, and it was thin.\nVOTE Alice"}},
	}, {
		name: "bottom-posting below a whole message without its footer",
		text: "On 12/1/26 10:00, Mafia wrote:\n> Digest: 2 posts\n>\n> ▸ Alice writes\n> > Hi.\n>\n> Official tally, Day 1\n> Votes on players:\n> - Alice: 1 (Bob)\n> Who votes whom (1 of 5 have voted):\n> - Bob: Alice\n> Not voted (4): Alice, Carol, Dave, Erin\n\nWhat a quiet day.\n",
	}, {
		name: "a long quoted line is cut to a reminder",
		text: "> " + strings.Repeat("word ", 60) + "\n\nYes.\n\n> more\n",
		want: []InlinePart{{Context: []string{strings.TrimSpace(strings.Repeat("word ", 32)) + " …"}, Text: "Yes."}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := InlineParts(c.text)
			// Quoted is Context in full: the lines as the reply has them,
			// to be checked against the mail answered.
			for i := range got {
				if len(got[i].Quoted) != len(got[i].Context) {
					t.Errorf("part %d: quoted %q, context %q", i, got[i].Quoted, got[i].Context)
				}
				for k, q := range got[i].Quoted {
					if k < len(got[i].Context) && shorten(q) != got[i].Context[k] {
						t.Errorf("part %d: quoted line %q is not context %q in full", i, q, got[i].Context[k])
					}
				}
				got[i].Quoted = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("InlineParts:\n got  %q\n want %q", got, c.want)
			}
			// The author's own text is Split's, line for line.
			var own []string
			for _, a := range got {
				own = append(own, a.Text)
			}
			if got != nil && strings.Join(strings.Fields(strings.Join(own, " ")), " ") != strings.Join(strings.Fields(Split(c.text).New), " ") {
				t.Errorf("the answers' own lines %q are not the author's text %q", own, Split(c.text).New)
			}
		})
	}
}
