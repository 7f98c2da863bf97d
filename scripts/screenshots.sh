#!/bin/sh
# screenshots.sh renders golden HTML mail (mail/compose/testdata) with headless
# Chromium at the widths of a phone (390 px) and of a desktop mail pane
# (600 px), to look at by eye. It is a tool for the tests, not part of the
# product: nothing in the binary uses it.
#
#   scripts/screenshots.sh OUTDIR [GOLDEN.html.golden ...]
#
# Without golden files it renders the role, thread, digest, tally, dawn and
# end mails of both built-in setups. Needs /usr/bin/chromium (Debian's
# chromium package).
set -eu
out=${1:?usage: scripts/screenshots.sh OUTDIR [GOLDEN.html.golden ...]}
shift
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	set -- \
		mail/compose/testdata/classic/role-inspector.html.golden \
		mail/compose/testdata/classic/post.html.golden \
		mail/compose/testdata/classic/digest.html.golden \
		mail/compose/testdata/classic/tally.html.golden \
		mail/compose/testdata/classic/dawn.html.golden \
		mail/compose/testdata/classic/end-town.html.golden \
		mail/compose/testdata/classic/close-eliminated-zone.html.golden \
		mail/compose/testdata/mafia150/role-vigilante.html.golden \
		mail/compose/testdata/mafia150/digest.html.golden \
		mail/compose/testdata/mafia150/reply-help-rules.html.golden
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
	name=$(basename "$(dirname "$f")")-$(basename "$f" .html.golden)
	# Chromium reads a page by its extension.
	cp "$f" "$tmp/$name.html"
	for w in 390 600; do
		/usr/bin/chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--user-data-dir="$tmp/profile" \
			--screenshot="$out/$name-$w.png" --window-size="$w,2000" \
			"file://$tmp/$name.html" >/dev/null 2>&1
	done
	echo "$out/$name-390.png $out/$name-600.png"
done
