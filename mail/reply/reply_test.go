package reply

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name, text     string
		wantNew, cut   string
		quotedHas, sig string
	}{
		{
			name:    "gmail en, attribution wrapped over two lines",
			text:    "VOTE Bob\n\nHe never answered.\n\nOn Mon, Mar 3, 2025 at 10:15 AM Mafia Host <\nhost+oak-t-abcdefghij@example.org> wrote:\n\n> Day 1 has begun.\n> VOTE Carol\n>\n",
			wantNew: "VOTE Bob\n\nHe never answered.", cut: "attribution", quotedHas: "> VOTE Carol",
		},
		{
			name:    "gmail de",
			text:    "VOTE Bob\n\nAm Mo., 3. März 2025 um 10:15 Uhr schrieb Mafia Host <host+oak-t-abcdefghij@example.org>:\n\n> Tag 1 beginnt.\n",
			wantNew: "VOTE Bob", cut: "attribution", quotedHas: "Tag 1",
		},
		{
			name:    "gmail fr, no-break space before the colon",
			text:    "VOTE Bob\n\nLe lun. 3 mars 2025 à 10:15, Mafia Host <host+oak-t-abcdefghij@example.org> a\u00a0écrit\u202f:\n\n> Jour 1.\n",
			wantNew: "VOTE Bob", cut: "attribution", quotedHas: "Jour 1",
		},
		{
			name:    "gmail es",
			text:    "VOTE Bob\n\nEl lun, 3 mar 2025 a las 10:15, Mafia Host (<host+oak-t-abcdefghij@example.org>) escribió:\n\n> Día 1.\n",
			wantNew: "VOTE Bob", cut: "attribution", quotedHas: "Día 1",
		},
		{
			name:    "thunderbird de, bottom-posted with inline answers",
			text:    "Am 03.03.25 um 10:15 schrieb Mafia Host:\n> Wer ist verdächtig?\n\nBob, ganz klar.\n\n> Abstimmung bis Mittwoch.\nVOTE Bob\n\n-- \nBernd\nPosteo-Nutzer\n",
			wantNew: "Bob, ganz klar.\n\nVOTE Bob", cut: "attribution", quotedHas: "Wer ist", sig: "--\nBernd\nPosteo-Nutzer",
		},
		{
			name:    "outlook en, From/Sent block under underscores, unquoted original",
			text:    "VOTE Carol\r\n\r\nCarol is scum.\r\n\r\n________________________________\r\nFrom: Mafia Host <host+oak-t-abcdefghij@example.org>\r\nSent: Monday, March 3, 2025 10:15 AM\r\nTo: Dana <dana@outlook.com>\r\nSubject: [oak] Day 1\r\n\r\nVOTE Bob\r\n",
			wantNew: "VOTE Carol\n\nCarol is scum.", cut: "header", quotedHas: "VOTE Bob",
		},
		{
			name:    "outlook de",
			text:    "VOTE Carol\n\nVon: Mafia Host <host+oak-t-abcdefghij@example.org>\nGesendet: Montag, 3. März 2025 10:15\nAn: Dana\nBetreff: Tag 1\n\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "header", quotedHas: "VOTE Bob",
		},
		{
			name:    "outlook fr, spaces before colons",
			text:    "VOTE Carol\n\nDe : Mafia Host <host+oak-t-abcdefghij@example.org>\nEnvoyé : lundi 3 mars 2025 10:15\nÀ : Dana\nObjet : Jour 1\n\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "header", quotedHas: "VOTE Bob",
		},
		{
			name:    "outlook es, bold labels from Gmail's rendering",
			text:    "VOTE Carol\n\n*De:* Mafia Host <host+oak-t-abcdefghij@example.org>\n*Enviado:* lunes, 3 de marzo de 2025 10:15\n*Para:* Dana\n*Asunto:* Día 1\n\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "header", quotedHas: "VOTE Bob",
		},
		{
			name:    "outlook original message line",
			text:    "VOTE Carol\n\n-----Original Message-----\nFrom: Mafia Host\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "original", quotedHas: "VOTE Bob",
		},
		{
			name:    "original message, german",
			text:    "VOTE Carol\n\n-----Ursprüngliche Nachricht-----\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "original", quotedHas: "VOTE Bob",
		},
		{
			name:    "samsung mail spanish",
			text:    "VOTE Carol\n\n-------- Mensaje original --------\nDe: Mafia Host\nVOTE Bob\n",
			wantNew: "VOTE Carol", cut: "original", quotedHas: "VOTE Bob",
		},
		{
			name:    "gmail forward",
			text:    "Look what I got last night.\n\n---------- Forwarded message ---------\nFrom: Mafia Host <host@example.org>\nDate: Mon, Mar 3, 2025 at 10:15 AM\n\nKILL Bob\n",
			wantNew: "Look what I got last night.", cut: "forward", quotedHas: "KILL Bob",
		},
		{
			name:    "apple forward, french",
			text:    "Regardez.\n\nDébut du message réexpédié :\n\nDe: Mafia Host\nKILL Bob\n",
			wantNew: "Regardez.", cut: "forward", quotedHas: "KILL Bob",
		},
		{
			name:    "ios mail: signature line, attribution inside the quote",
			text:    "VOTE Bob\n\nSent from my iPhone\n\n> On 3 Mar 2025, at 10:15, Mafia Host <host+oak-t-abcdefghij@example.org> wrote:\n> \n> VOTE Carol\n",
			wantNew: "VOTE Bob", cut: "signature", quotedHas: "VOTE Carol", sig: "Sent from my iPhone",
		},
		{
			name:    "mobile signatures in other languages",
			text:    "VOTE Bob\n\nVon meinem iPhone gesendet",
			wantNew: "VOTE Bob", cut: "signature", sig: "Von meinem iPhone gesendet",
		},
		{
			name:    "outlook mobile",
			text:    "VOTE Bob\n\nGet Outlook for Android<https://aka.ms/AAb9ysg>\n________________________________\nFrom: Mafia Host <host+oak-t-abcdefghij@example.org>\nSent: Monday, March 3, 2025 10:15:00 AM\nTo: x\nSubject: y\n\nVOTE Carol\n",
			wantNew: "VOTE Bob", cut: "signature", quotedHas: "VOTE Carol", sig: "Get Outlook for Android<https://aka.ms/AAb9ysg>",
		},
		{
			name:    "signature then quote",
			text:    "VOTE Bob\n-- \nAnn\n\nOn 3/3/25 10:15, Mafia Host wrote:\n> VOTE Carol\n",
			wantNew: "VOTE Bob", cut: "signature", quotedHas: "VOTE Carol", sig: "--\nAnn",
		},
		{
			name:    "bare attribution needs quote lines below it",
			text:    "Carol wrote:\n> I am the doctor\n\nNo you are not.\n",
			wantNew: "No you are not.", cut: "attribution", quotedHas: "doctor",
		},
		{
			name:    "prose that merely mentions writing is kept",
			text:    "On Monday I wrote:\nBob is scum.\nVOTE Bob\n",
			wantNew: "On Monday I wrote:\nBob is scum.\nVOTE Bob",
		},
		{
			name:    "the author's last line before an attribution is kept",
			text:    "Thanks!\nOn 3/3/25 10:15, Mafia Host wrote:\n> x\n",
			wantNew: "Thanks!", cut: "attribution", quotedHas: "> x",
		},
		{
			name:    "nested quotes and arrows inside lines",
			text:    ">> old\n> older\nAlice >> Bob\n",
			wantNew: "Alice >> Bob", cut: "quote", quotedHas: ">> old",
		},
		{
			name:    "no quote at all",
			text:    "\n\nVOTE Bob\n\n",
			wantNew: "VOTE Bob",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Split(tt.text)
			if p.New != tt.wantNew {
				t.Errorf("New = %q, want %q", p.New, tt.wantNew)
			}
			if p.Cut != tt.cut {
				t.Errorf("Cut = %q, want %q", p.Cut, tt.cut)
			}
			if tt.quotedHas != "" && !strings.Contains(p.Quoted, tt.quotedHas) {
				t.Errorf("Quoted = %q, want it to hold %q", p.Quoted, tt.quotedHas)
			}
			if tt.quotedHas == "" && p.Quoted != "" {
				t.Errorf("Quoted = %q, want none", p.Quoted)
			}
			if strings.TrimRight(p.Signature, " ") != tt.sig && strings.ReplaceAll(p.Signature, "-- ", "--") != tt.sig {
				t.Errorf("Signature = %q, want %q", p.Signature, tt.sig)
			}
		})
	}
}

// Nothing of the input may get lost: every non-blank line lands in exactly
// one of the parts.
func TestSplitLosesNothing(t *testing.T) {
	text := "a\n> b\nOn 3/3/25 10:15, X wrote:\n> c\nd\n-- \ne\n\nOn 3/3/25 10:15, Y wrote:\n> f\n"
	p := Split(text)
	all := p.New + "\n" + p.Quoted + "\n" + p.Signature
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(all, l) {
			t.Errorf("line %q is in no part: %+v", l, p)
		}
	}
}
