package templates

import (
	htmltemplate "html/template"
	texttemplate "text/template"
	tparse "text/template/parse"
)

// sharedViewFields are the parts of a View a section's templates may read
// through .Msg and still be laid out once for many readers: what newsView
// keeps. Any other (the reader, their own line, their tally, their footer,
// or the whole view handed on) makes the section personal.
var sharedViewFields = map[string]bool{
	"Kind": true, "Game": true, "Lang": true, "Channel": true, "Now": true, "Headline": true,
	"Sections": true, "Ended": true, "Main": true, "Lead": true, "SelfFirst": true, "PostLeads": true,
}

// personalKinds returns the section kinds whose templates, or the
// templates they call, read a part of the message that is the reader's
// own. Their news is laid out for each copy.
func personalKinds(ts *texttemplate.Template, hs *htmltemplate.Template, kinds []string) map[string]bool {
	trees := map[string]*tparse.Tree{}
	for _, t := range ts.Templates() {
		if t.Tree != nil {
			trees["t/"+t.Name()] = t.Tree
		}
	}
	for _, t := range hs.Templates() {
		if t.Tree != nil {
			trees["h/"+t.Name()] = t.Tree
		}
	}
	memo := map[string]bool{}
	var reads func(name string) bool
	reads = func(name string) bool {
		if r, ok := memo[name]; ok {
			return r
		}
		memo[name] = false // a template that calls itself adds nothing
		tree := trees[name]
		if tree == nil {
			return false
		}
		prefix := name[:2]
		r := false
		walkNodes(tree.Root, func(n tparse.Node) {
			if r {
				return
			}
			switch n := n.(type) {
			case *tparse.FieldNode:
				r = readsPersonal(n.Ident)
			case *tparse.VariableNode:
				r = readsPersonal(n.Ident)
			case *tparse.ChainNode:
				r = readsPersonal(n.Field)
			case *tparse.TemplateNode:
				r = reads(prefix + n.Name)
			case *tparse.CommandNode:
				// fixed runs the template it names: a name that is not
				// written out cannot be followed, and counts as personal.
				if id, ok := n.Args[0].(*tparse.IdentifierNode); ok && id.Ident == "fixed" {
					if len(n.Args) < 2 {
						r = true
					} else if s, ok := n.Args[1].(*tparse.StringNode); !ok {
						r = true
					} else {
						r = reads(prefix + s.Text)
					}
				}
			}
		})
		memo[name] = r
		return r
	}
	out := map[string]bool{}
	for _, k := range kinds {
		for _, name := range []string{k, k + ".subject"} {
			if reads("t/"+name) || reads("h/"+name) {
				out[k] = true
			}
		}
	}
	return out
}

// readsPersonal reports whether a field chain reads .Msg other than for
// one of sharedViewFields.
func readsPersonal(ident []string) bool {
	for i, id := range ident {
		if id != "Msg" {
			continue
		}
		if i+1 == len(ident) || !sharedViewFields[ident[i+1]] {
			return true
		}
	}
	return false
}

// walkNodes calls visit on n and every node below it.
func walkNodes(n tparse.Node, visit func(tparse.Node)) {
	if n == nil {
		return
	}
	visit(n)
	switch n := n.(type) {
	case *tparse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkNodes(c, visit)
		}
	case *tparse.ActionNode:
		walkNodes(n.Pipe, visit)
	case *tparse.PipeNode:
		if n == nil {
			return
		}
		for _, d := range n.Decl {
			walkNodes(d, visit)
		}
		for _, c := range n.Cmds {
			walkNodes(c, visit)
		}
	case *tparse.CommandNode:
		for _, a := range n.Args {
			walkNodes(a, visit)
		}
	case *tparse.ChainNode:
		walkNodes(n.Node, visit)
	case *tparse.IfNode:
		walkBranch(&n.BranchNode, visit)
	case *tparse.RangeNode:
		walkBranch(&n.BranchNode, visit)
	case *tparse.WithNode:
		walkBranch(&n.BranchNode, visit)
	case *tparse.TemplateNode:
		walkNodes(n.Pipe, visit)
	}
}

func walkBranch(b *tparse.BranchNode, visit func(tparse.Node)) {
	walkNodes(b.Pipe, visit)
	walkNodes(b.List, visit)
	walkNodes(b.ElseList, visit)
}
