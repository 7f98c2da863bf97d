package mailbox

import "bytes"

// SplitMbox splits an mboxrd file into its messages, unquoting >From lines.
func SplitMbox(data []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("From ")) {
			if cur != nil {
				out = append(out, cur)
			}
			cur = []byte{}
			continue
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
			line = line[1:]
		}
		cur = append(cur, line...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
